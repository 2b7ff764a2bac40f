import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
// The capture modules one by one rather than through lib/capture/index.js, and the filter and
// the statistics only when asked for: every module loaded is part of every start (Node's ESM
// loader takes about half a millisecond a module), and a decode of a small capture is mostly start.
import { CaptureDecoder } from '../capture/capture-decoder.js';
import {
  DEFAULT_FLOW_IDLE_TIMEOUT_MS,
  DEFAULT_MAX_FLOWS,
  DEFAULT_MAX_TOTAL_BUFFERED_BYTES,
  type DecodedFrame,
} from '../capture/capture-options.js';
import { describeCommand, frameContext, type FrameDescription } from '../capture/describe.js';
import type { DecodeStats } from '../capture/stats.js';
import type { FrameFilter } from '../capture/frame-filter.js';
import { escapeControl } from '../capture/format-text.js';
import { FramePrinter, type FrameOutputMode } from '../capture/frame-printer.js';
import { HexInputError } from '../capture/errors.js';
import type { CaptureProblem } from '../capture/packet.js';
import { OutputBuffer } from '../capture/output-buffer.js';
import type { ReportFile } from '../capture/report/index.js';
import type { Finding } from '../capture/doctor/index.js';
import { CliError, intOption, parseOptions, UsageError, type CliCommand, type CliIO } from './common.js';

const usage = `usage: rocketwire decode [options] FILE|-

Decodes RocketMQ remoting frames from a pcap or pcapng capture (detected by its magic number) or
from a file of concatenated frames; "-" reads stdin as it arrives, so
  tcpdump -i any -U -w - port 10911 | rocketwire decode -
shows traffic live. Flows on ports 9876, 10911, 10909, 8080, 8081 are RocketMQ; flows on other
ports are recognised by their frames.

options:
  --json            one JSON object per frame and line (with --stats: the statistics as JSON)
  --msgpack         a msgpack stream of the same objects
  --hex             the input is hex text (whitespace ignored), e.g. from xxd -p
  --stats           print statistics instead of frames: per request code counts, bytes and
                    latency percentiles, pull results, topics, groups, offset commits per queue
  --filter TERM     keep frames matching TERM: code=N|NAME, topic=T, group=G, addr=IP[:PORT]
                    (a bare number, code name or address works too); repeatable, or a comma list
  --port N          treat flows on port N as RocketMQ remoting (repeatable)
  --report FILE     write a self-contained HTML report to FILE (charts per consumer queue, request
                    rates and latency histograms per code; the numbers of --stats --json)
  --doctor          print the problems found in the capture instead of frames (stalled long
                    polls, lag, offsets going back, flow-control stalls, rebalance storms, error
                    responses, requests never answered, slow responses, duplicate deliveries),
                    each with its evidence and what it means; --json for JSON. Exit 3 when any
                    was found (lib/capture/README.md, "Doctor", has the checks and thresholds)
  --max-flows N     TCP flows tracked at once (default 65536); past it the least recently active
                    flow is evicted: a frame it was inside is lost, reported with the reason
  --max-buffered-bytes N
                    bytes held for all flows together: partial frames, out-of-order segments
                    (default 268435456, 256 MiB); past it the flows idle longest drop theirs
  --workers N       decode with N worker threads, each owning the TCP flows of one hash class;
                    the output is the same, byte for byte (default 1 below 4 cores; with more,
                    one per core but one, at most 4, for a file of 16 MiB or more). --stats, --doctor,
                    --report, --hex, stdin and files of raw frames decode in one thread
  --flow-idle-timeout S
                    finish a flow after S seconds of capture time without a packet, as at the
                    end of the capture (default 300; 0: never)

Problems (truncated capture, packets cut by the snaplen, gaps, damaged frames, a flow that ends
inside a frame, its first one included) are reported on stderr, one line each, and decoding goes
on where it can; the exit code is 1 when anything was lost, 2 for bad usage, 3 when --doctor found
problems. An input that is neither a capture nor starts with a frame is one line naming its first
bytes, exit 1. Control characters the capture holds (in topics, groups, keys, remarks...) are
printed as \\xNN in the text outputs (frames, --stats, --doctor); --json keeps them, escaped as
JSON escapes them.`;

/** Problem lines printed before the rest are only counted. */
const MAX_PROBLEM_LINES = 50;
/** Show a progress bar for files at least this large when stderr is a terminal. */
const PROGRESS_MIN_BYTES = 32 * 1024 * 1024;
const OUTPUT_FLUSH_BYTES = 256 * 1024;
/**
 * Files smaller than this decode in one thread unless --workers says otherwise: starting the
 * workers (each loads the decoder's modules) costs more than they save on a small capture.
 */
const PARALLEL_MIN_BYTES = 16 * 1024 * 1024;

/**
 * `--workers` when not given. On 2 cores two workers and the thread that reads and merges share
 * them, and a 100 MB capture decoded no faster than in one thread, for a quarter more CPU
 * (docs/benchmarks.md, "Capture decoding"): one thread there. With 4 cores or more, one worker per
 * core but the reader's, at most 4 (not measured: the machine the figures come from has 2 cores).
 */
function defaultWorkers(size: number): number {
  const cores = availableParallelism();
  return size >= PARALLEL_MIN_BYTES && cores >= 4 ? Math.min(cores - 1, 4) : 1;
}

type OutputMode = FrameOutputMode;

/** A finding with the capture's strings in it (topic, group, flow) escaped for a terminal. */
function escapedFinding(f: Finding): Finding {
  const e = f.evidence;
  return {
    ...f,
    summary: escapeControl(f.summary),
    meaning: escapeControl(f.meaning),
    evidence: {
      ...e,
      ...(e.flow !== undefined ? { flow: escapeControl(e.flow) } : {}),
      ...(e.queue !== undefined ? { queue: escapeControl(e.queue) } : {}),
      ...(e.group !== undefined ? { group: escapeControl(e.group) } : {}),
    },
  };
}

/** "7b 0a 20 20": the first bytes of an input, to say what it is when it is not a capture. */
function hexBytes(b: Buffer): string {
  return [...b].map((x) => x.toString(16).padStart(2, '0')).join(' ');
}

/** Write, waiting for 'drain' when the stream asks us to (or until it fails: EPIPE ends output). */
function write(stream: NodeJS.WritableStream, data: string | Buffer): Promise<void> {
  if (stream.write(data)) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      stream.off('drain', done);
      stream.off('error', done);
      stream.off('close', done);
      resolve();
    };
    stream.once('drain', done);
    stream.once('error', done);
    stream.once('close', done);
  });
}

async function run(argv: string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseOptions(
    argv,
    {
      json: { type: 'boolean' },
      msgpack: { type: 'boolean' },
      hex: { type: 'boolean' },
      stats: { type: 'boolean' },
      filter: { type: 'string', multiple: true },
      port: { type: 'string', multiple: true },
      report: { type: 'string' },
      doctor: { type: 'boolean' },
      'max-flows': { type: 'string' },
      'max-buffered-bytes': { type: 'string' },
      'flow-idle-timeout': { type: 'string' },
      workers: { type: 'string' },
    },
    true,
  );
  if (positionals.length !== 1) throw new UsageError('give exactly one FILE (or - for stdin)');
  if (values.json && values.msgpack) throw new UsageError('--json and --msgpack exclude each other');
  const mode: OutputMode = values.msgpack ? 'msgpack' : values.json ? 'json' : 'text';
  const ports = ((values.port as string[] | undefined) ?? [])
    .flatMap((p) => p.split(','))
    .map((p) => intOption('port', p, 0, 1, 65535));
  // The decoder's bounds on a hostile capture (docs/hardening.md), each a CaptureDecoderOptions field.
  const maxFlows = intOption('max-flows', values['max-flows'] as string | undefined, DEFAULT_MAX_FLOWS, 1);
  const maxTotalBufferedBytes = intOption(
    'max-buffered-bytes',
    values['max-buffered-bytes'] as string | undefined,
    DEFAULT_MAX_TOTAL_BUFFERED_BYTES,
    0,
  );
  const flowIdleTimeoutMs =
    intOption(
      'flow-idle-timeout',
      values['flow-idle-timeout'] as string | undefined,
      DEFAULT_FLOW_IDLE_TIMEOUT_MS / 1000,
      0,
      1e9,
    ) * 1000;
  const workersOption = values.workers as string | undefined;
  if (workersOption !== undefined) intOption('workers', workersOption, 1, 1, 64); // a bad value: usage, before anything
  let filter: FrameFilter | null = null;
  const terms = (values.filter as string[] | undefined) ?? [];
  if (terms.length > 0) {
    const [{ FrameFilter }, { FilterSyntaxError }] = await Promise.all([
      import('../capture/frame-filter.js'),
      import('../capture/errors.js'),
    ]);
    try {
      const f = new FrameFilter(terms);
      if (!f.empty) filter = f;
    } catch (err) {
      if (err instanceof FilterSyntaxError) throw new UsageError(err.message);
      throw err;
    }
  }
  const statsOnly = values.stats === true;
  const reportPath = values.report as string | undefined;
  if (reportPath !== undefined && (statsOnly || values.json || values.msgpack))
    throw new UsageError('--report excludes --stats, --json and --msgpack');
  if (reportPath === '') throw new UsageError('--report needs a file name');
  if (values.doctor && (statsOnly || values.msgpack)) throw new UsageError('--doctor excludes --stats and --msgpack');
  if (values.doctor && reportPath !== undefined)
    throw new UsageError('--doctor and --report exclude each other (the report lists the findings)');
  const stats: DecodeStats | null =
    statsOnly || reportPath !== undefined ? new (await import('../capture/stats.js')).DecodeStats() : null;
  // The report and the doctor are loaded only when asked for: some 20 modules, 40 ms of every start.
  const reportModule = reportPath !== undefined ? await import('../capture/report/index.js') : null;
  const doctorModule = values.doctor || reportPath !== undefined ? await import('../capture/doctor/index.js') : null;
  const timelines = reportModule ? new reportModule.TimelineCollector() : null;
  // The report shows the doctor's findings, so it runs the doctor too.
  const doctor = doctorModule ? new doctorModule.CaptureDoctor() : null;

  const file = positionals[0]!;
  let input: NodeJS.ReadableStream;
  let size = 0;
  if (file === '-') {
    input = io.stdin;
  } else {
    try {
      const st = await stat(file);
      if (st.isDirectory()) throw new CliError(`${file} is a directory`);
      size = st.size;
    } catch (err) {
      if (err instanceof CliError) throw err;
      throw new CliError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
    input = createReadStream(file, { highWaterMark: 1024 * 1024 });
  }
  let report: ReportFile | null = null;
  if (reportPath !== undefined) {
    try {
      report = await reportModule!.ReportFile.open(reportPath);
    } catch (err) {
      if ('destroy' in input && input !== io.stdin) (input as { destroy(): void }).destroy();
      throw new CliError(
        `cannot write ${reportPath}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      );
    }
  }

  // Output is gathered and written in large pieces; it is flushed before any problem line so that
  // stdout and stderr read in order on a terminal.
  const out = new OutputBuffer();
  let outputClosed = false;
  io.stdout.on('error', () => {
    outputClosed = true; // e.g. EPIPE when piped into head: stop quietly
  });
  const flushOutput = async (): Promise<void> => {
    const pieces = out.take();
    if (outputClosed) return;
    for (const b of pieces) await write(io.stdout, b);
  };
  const flushSync = (): void => {
    const pieces = out.take();
    if (outputClosed) return;
    for (const b of pieces) io.stdout.write(b);
  };

  let lost = false;
  let problemLines = 0;
  let problemsHidden = 0;
  let progressShown = false;
  /** The input's first 4 bytes (after --hex), to name them when the input is not a capture. */
  let head = Buffer.alloc(0);
  const onProblem = (p: CaptureProblem): void => {
    // Neither pcap nor pcapng magic, and not even the first frame reads: most likely not a capture
    // at all (decode package.json), which "damaged frame at byte 0" did not say.
    if (
      decoder.format === 'raw' &&
      decoder.counters.frames === 0 &&
      p.offset === 0 &&
      p.kind === undefined &&
      p.message.startsWith('damaged frame')
    ) {
      const why = p.message.replace(/^damaged frame at [^:]*: /, '');
      const name = file === '-' ? 'stdin' : file;
      throw new CliError(
        escapeControl(
          `${name} is not a pcap or pcapng file (starts with ${hexBytes(head)}), nor RocketMQ remoting frames (${why})`,
        ),
      );
    }
    if (p.lost) lost = true;
    stats?.addProblem(p);
    doctor?.addProblem(p);
    if (problemLines >= MAX_PROBLEM_LINES) {
      problemsHidden++;
      return;
    }
    problemLines++;
    flushSync();
    if (progressShown) io.stderr.write('\r\x1b[K');
    io.stderr.write(`rocketwire decode: ${escapeControl(p.message)}\n`);
  };

  // msgpack is loaded only when used.
  const msgpackEncode = mode === 'msgpack' ? await msgpackEncoder() : null;
  const printer = new FramePrinter(out, mode, filter, msgpackEncode);
  const onFrame =
    stats || doctor
      ? (f: DecodedFrame): void => {
          if (filter) {
            const d = filter.needsDescription
              ? describeCommand(f.cmd, frameContext(f), { messageBodies: mode !== 'text' })
              : undefined;
            if (!filter.matches(f, d)) return;
          }
          stats?.add(f);
          timelines?.add(f);
          doctor?.add(f);
        }
      : (f: DecodedFrame): void => printer.frame(f);

  const decoder = new CaptureDecoder(
    { frame: onFrame, problem: onProblem },
    { ports, maxFlows, maxTotalBufferedBytes, flowIdleTimeoutMs },
  );
  const hex = values.hex ? new (await import('../capture/hex-decoder.js')).HexDecoder() : null;
  const showProgress = size >= PROGRESS_MIN_BYTES && (io.stderr as { isTTY?: boolean }).isTTY === true;
  let lastProgress = 0;
  let ended = false;
  const endDecoder = (): void => {
    if (ended) return;
    ended = true;
    decoder.end();
  };

  const progress = (done: number, count: string): void => {
    const now = Date.now();
    if (now - lastProgress < 250) return;
    lastProgress = now;
    progressShown = true;
    const pct = Math.min(100, Math.floor((done / size) * 100));
    const bar = '#'.repeat(Math.floor(pct / 4)).padEnd(25, '.');
    io.stderr.write(`\r[${bar}] ${pct}% ${(done / 1048576).toFixed(0)}/${(size / 1048576).toFixed(0)} MiB, ${count}`);
  };
  // Worker threads for the frames of a large pcap or pcapng file; what needs every frame in one
  // place (statistics, doctor, report) and input that arrives as it is captured decode here.
  const workers =
    file === '-' || hex || stats || doctor
      ? 1
      : workersOption !== undefined
        ? intOption('workers', workersOption, 1, 1, 64)
        : defaultWorkers(size);
  const parallel = workers > 1 ? await import('./decode-parallel.js') : null;
  const format = parallel ? await parallel.fileFormat(file) : 'raw';

  try {
    if (parallel && format !== 'raw') {
      await parallel.decodeParallel(input as AsyncIterable<Buffer | string>, {
        workers,
        format,
        mode,
        filterTerms: terms,
        decoder: { ports, maxFlows, maxTotalBufferedBytes, flowIdleTimeoutMs },
        out,
        problem: onProblem,
        flushOutput,
        outputClosed: () => outputClosed,
        progress: (done, packets) => {
          if (showProgress) progress(done, `${packets} packets`);
        },
      });
    } else
      for await (const raw of input as AsyncIterable<Buffer | string>) {
        let chunk = typeof raw === 'string' ? Buffer.from(raw) : raw;
        if (hex) {
          try {
            chunk = hex.push(chunk);
          } catch (err) {
            if (!(err instanceof HexInputError)) throw err;
            decoder.push(err.decoded);
            endDecoder();
            onProblem({ message: err.message, lost: true, offset: err.offset });
            break;
          }
        }
        if (head.length < 4) head = Buffer.concat([head, chunk.subarray(0, 4 - head.length)]);
        decoder.push(chunk);
        if (decoder.failed || outputClosed) break;
        if (out.length >= OUTPUT_FLUSH_BYTES || file === '-') await flushOutput();
        if (showProgress) progress(decoder.counters.bytes, `${decoder.counters.frames} frames`);
      }
    // The reader went away (decode ... | head): nothing more to say to anyone.
    if (outputClosed) {
      await report?.discard();
      return 0;
    }
    if (hex && !lost) {
      try {
        hex.end();
      } catch (err) {
        if (!(err instanceof HexInputError)) throw err;
        endDecoder();
        onProblem({ message: err.message, lost: true, offset: err.offset });
      }
    }
    endDecoder();
  } catch (err) {
    await report?.discard();
    throw err;
  } finally {
    if (progressShown) io.stderr.write('\r\x1b[K');
    if ('destroy' in input && input !== io.stdin) (input as { destroy(): void }).destroy();
  }
  const last = decoder.lastPacketTs;
  const findings = doctor ? doctor.finish(last === null ? undefined : last * 1000) : null;
  if (report && stats && timelines) {
    const html = reportModule!.renderReport({
      stats,
      timelines: timelines.toJSON(),
      findings,
      source: file === '-' ? 'stdin' : file,
    });
    try {
      await report.commit(html);
    } catch (err) {
      throw new CliError(
        `cannot write ${reportPath}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      );
    }
    out.text(`report written to ${reportPath}\n`);
  } else if (stats) {
    if (mode === 'text') out.text(stats.toText());
    else printer.emit(stats.toJSON() as unknown as FrameDescription);
  }
  let found = 0;
  if (doctor && findings && !report) {
    found = findings.length;
    out.text(
      mode === 'json'
        ? JSON.stringify({ frames: doctor.frames, findings }) + '\n'
        : doctorModule!.formatFindings(findings.map(escapedFinding), doctor.frames),
    );
  }
  await flushOutput();
  if (problemsHidden > 0) io.stderr.write(`rocketwire decode: ${problemsHidden} more problems not shown\n`);
  if (found > 0) return 3;
  return lost ? 1 : 0;
}

export const command: CliCommand = {
  summary: 'decode RocketMQ remoting frames from a pcap/pcapng capture or a file of frames',
  usage,
  run,
};

/** `@msgpack/msgpack` is an optional peer dependency: only `--msgpack` needs it. */
async function msgpackEncoder(): Promise<(value: unknown) => Uint8Array> {
  try {
    return (await import('@msgpack/msgpack')).encode;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND') throw err;
    throw new CliError('--msgpack needs the optional peer dependency @msgpack/msgpack: npm install @msgpack/msgpack');
  }
}
