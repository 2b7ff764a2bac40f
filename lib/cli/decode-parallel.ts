import { open } from 'node:fs/promises';
import type { CaptureDecoderOptions } from '../capture/capture-options.js';
import { detectFormat } from '../capture/capture-options.js';
import type { FrameOutputMode } from '../capture/frame-printer.js';
import type { OutputBuffer } from '../capture/output-buffer.js';
import type { CaptureProblem } from '../capture/packet.js';

/** The format of a capture file from its first bytes: workers decode pcap and pcapng only. */
export async function fileFormat(file: string): Promise<'pcap' | 'pcapng' | 'raw'> {
  const fh = await open(file, 'r');
  try {
    const head = Buffer.alloc(4);
    const { bytesRead } = await fh.read(head, 0, 4, 0);
    return detectFormat(head.subarray(0, bytesRead));
  } finally {
    await fh.close();
  }
}

export interface ParallelRun {
  workers: number;
  format: 'pcap' | 'pcapng';
  mode: FrameOutputMode;
  filterTerms: string[];
  decoder: CaptureDecoderOptions;
  out: OutputBuffer;
  problem(p: CaptureProblem): void;
  /** Writes out what `out` holds, waiting when stdout asks to. */
  flushOutput(): Promise<void>;
  /** True once stdout is gone (EPIPE): stop quietly. */
  outputClosed(): boolean;
  /** The progress line, given the input bytes and packets read. */
  progress(bytes: number, packets: number): void;
}

/** Bytes of output held before they are written. */
const OUTPUT_FLUSH_BYTES = 256 * 1024;

/**
 * `rocketwire decode --workers N` of a pcap or pcapng file: the ParallelDecoder's workers own the
 * flows, the output arrives merged in capture order into `run.out`.
 */
export async function decodeParallel(input: AsyncIterable<Buffer | string>, run: ParallelRun): Promise<void> {
  const { ParallelDecoder } = await import('../capture/parallel/parallel-decoder.js');
  const par = new ParallelDecoder({
    workers: run.workers,
    format: run.format,
    mode: run.mode,
    filterTerms: run.filterTerms,
    decoder: run.decoder,
    sink: { bytes: (b) => run.out.append(b), problem: (p) => run.problem(p) },
  });
  try {
    for await (const raw of input) {
      par.push(typeof raw === 'string' ? Buffer.from(raw) : raw);
      if (par.failed || run.outputClosed()) break;
      await par.drain();
      if (run.out.length >= OUTPUT_FLUSH_BYTES) await run.flushOutput();
      run.progress(par.bytes, par.packets);
    }
    if (!run.outputClosed()) await par.end();
  } finally {
    await par.close();
  }
}
