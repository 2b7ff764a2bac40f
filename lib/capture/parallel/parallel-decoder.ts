import { Worker } from 'node:worker_threads';
import type { CaptureDecoderOptions } from '../capture-options.js';
import {
  DEFAULT_MAX_FLOWS,
  DEFAULT_MAX_TOTAL_BUFFERED_BYTES,
  DEFAULT_MAX_TOTAL_PENDING_REQUESTS,
} from '../capture-options.js';
import { CaptureWorkerError } from '../errors.js';
import type { FrameOutputMode } from '../frame-printer.js';
import type { CaptureProblem, CapturedPacket, RecordReader } from '../packet.js';
import { PcapReader } from '../pcap-reader.js';
import { PcapngReader } from '../pcapng-reader.js';
import { SegmentParser, type TcpSegment } from '../tcp-segment.js';
import {
  ITEM_PROBLEM,
  packetKey,
  PHASE_PARSE,
  PHASE_READER,
  type BatchMessage,
  type OutputMessage,
  type WorkerSetup,
} from './messages.js';
import { OutputMerger, type MergeSink } from './output-merger.js';

/** Batches sent to a worker and not yet answered, at most: what bounds the memory of a decode. */
const MAX_IN_FLIGHT = 4;

export interface ParallelDecoderOptions {
  workers: number;
  format: 'pcap' | 'pcapng';
  mode: FrameOutputMode;
  filterTerms: string[];
  /** The decoder's options; its bounds across flows are shared out among the workers. */
  decoder: CaptureDecoderOptions;
  /** Where the output goes, in the order one decoder prints it. */
  sink: MergeSink;
}

/** The packets of one batch a worker owns, copied out of the input (whose views do not last). */
class BatchBuilder {
  data = Buffer.allocUnsafe(256 * 1024);
  used = 0;
  own: number[] = [];

  add(p: CapturedPacket): void {
    const n = p.data.length;
    if (this.used + n > this.data.length) {
      const bigger = Buffer.allocUnsafe(Math.max(this.data.length * 2, this.used + n));
      this.data.copy(bigger, 0, 0, this.used);
      this.data = bigger;
    }
    p.data.copy(this.data, this.used);
    this.own.push(p.index, this.used, n, p.origLen, p.linkType);
    this.used += n;
  }

  take(): { own: Float64Array; data: Uint8Array } {
    const taken = { own: Float64Array.from(this.own), data: this.data.subarray(0, this.used) };
    this.data = Buffer.allocUnsafe(Math.max(64 * 1024, this.used));
    this.used = 0;
    this.own = [];
    return taken;
  }
}

/** A bound across flows, shared out: each worker holds its part of it. */
function share(value: number | undefined, dflt: number, workers: number, min: number): number {
  return Math.max(min, Math.ceil((value ?? dflt) / workers));
}

/**
 * A pcap or pcapng capture decoded by worker threads. The main thread reads the records and parses
 * their link, IP and TCP headers; each TCP flow belongs to one worker by a hash of its two
 * endpoints, so a flow's packets reach one decoder, in order. Every worker also hears the number
 * and time of every other packet, so that its capture clock (and the idle timeouts on it) moves as
 * one decoder's would. What the workers print is merged by packet number (messages.ts), so the
 * output is byte for byte what one decoder prints. Back-pressure: at most MAX_IN_FLIGHT batches
 * (one input chunk each) wait at any worker; `drain` waits for them.
 */
export class ParallelDecoder {
  private readonly workers: Worker[] = [];
  private readonly builders: BatchBuilder[] = [];
  private readonly inFlight: number[] = [];
  private readonly owned: number[] = [];
  private readonly merger: OutputMerger;
  private readonly reader: RecordReader;
  private readonly parser: SegmentParser;
  /** Hash of each endpoint ("ip:port") seen, by its string (the parser re-uses the string objects). */
  private readonly endpointHash = new Map<string, number>();
  /** Times of the packets read since the last batch, and the number of the last packet read. */
  private ts: number[] = [];
  private last = 0;
  private flushed = 0;
  private mainItems: number[] = [];
  private mainProblems: CaptureProblem[] = [];
  private phase = PHASE_READER;
  private error: Error | null = null;
  private waiter: (() => void) | null = null;
  private ended = 0;
  /** Input bytes and packets read, for a progress line. */
  bytes = 0;

  constructor(opts: ParallelDecoderOptions) {
    const n = opts.workers;
    this.merger = new OutputMerger(
      n,
      (through) => packetKey(through + 1, 0),
      (through) => packetKey(through, PHASE_READER),
      opts.sink,
    );
    const d = opts.decoder;
    const setup: WorkerSetup = {
      mode: opts.mode,
      filterTerms: opts.filterTerms,
      options: {
        ...d,
        maxFlows: share(d.maxFlows, DEFAULT_MAX_FLOWS, n, 1),
        maxTotalBufferedBytes: share(d.maxTotalBufferedBytes, DEFAULT_MAX_TOTAL_BUFFERED_BYTES, n, 0),
        maxTotalPendingRequests: share(d.maxTotalPendingRequests, DEFAULT_MAX_TOTAL_PENDING_REQUESTS, n, 1),
      },
    };
    for (let i = 0; i < n; i++) {
      const w = new Worker(new URL('./decode-worker.js', import.meta.url), { workerData: setup });
      w.on('message', (m: OutputMessage) => {
        this.inFlight[i]!--;
        if (m.through === Number.MAX_SAFE_INTEGER) this.ended++;
        try {
          this.merger.add(i, m);
        } catch (err) {
          this.fail(err as Error);
        }
        this.wake();
      });
      w.on('error', (err) => this.fail(err));
      w.on('exit', (code) => {
        if (this.ended < n && this.error === null) this.fail(new CaptureWorkerError(code));
      });
      this.workers.push(w);
      this.builders.push(new BatchBuilder());
      this.inFlight.push(0);
      this.owned.push(0);
    }
    const onPacket = (p: CapturedPacket): void => this.onPacket(p);
    const onProblem = (p: CaptureProblem): void => this.mainProblem(p);
    this.reader = opts.format === 'pcap' ? new PcapReader(onPacket, onProblem) : new PcapngReader(onPacket, onProblem);
    this.parser = new SegmentParser(onProblem);
  }

  /** True after a fatal problem of the input: nothing more will be read. */
  get failed(): boolean {
    return this.reader.failed;
  }

  get packets(): number {
    return this.last;
  }

  /** Packets sent to each worker as its own: how the flows spread over the workers. */
  get ownedPackets(): number[] {
    return this.owned.slice();
  }

  /** The next bytes of the input; the packets they complete go out to the workers. */
  push(chunk: Buffer): void {
    this.check();
    this.bytes += chunk.length;
    this.reader.push(chunk);
    this.flush();
  }

  /** Resolves when every worker has room for more (at once, mostly). */
  async drain(): Promise<void> {
    while (this.error === null && this.inFlight.some((n) => n >= MAX_IN_FLIGHT)) {
      await new Promise<void>((resolve) => {
        this.waiter = resolve;
      });
    }
    this.check();
  }

  /** The end of the input: the workers finish their flows; resolves when all output is merged. */
  async end(): Promise<void> {
    this.check();
    this.reader.end();
    this.flush();
    const endKey = packetKey(this.last + 1, 0);
    for (let i = 0; i < this.workers.length; i++) {
      this.inFlight[i]!++;
      this.workers[i]!.postMessage({ type: 'end', endKey });
    }
    this.addMain(Number.MAX_SAFE_INTEGER);
    while (this.error === null && this.ended < this.workers.length) {
      await new Promise<void>((resolve) => {
        this.waiter = resolve;
      });
    }
    this.check();
  }

  /** Stops the workers (after end, or to give up). */
  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()));
  }

  private onPacket(p: CapturedPacket): void {
    this.last = p.index;
    this.ts.push(p.ts);
    this.phase = PHASE_PARSE;
    const seg = this.parser.parse(p);
    this.phase = PHASE_READER;
    if (seg === null) return;
    const w = this.workerOf(seg);
    this.owned[w]!++;
    this.builders[w]!.add(p);
  }

  private mainProblem(p: CaptureProblem): void {
    // A header the parser could not read is that packet's; what the reader finds comes after the last packet.
    this.mainItems.push(packetKey(this.last, this.phase), 0, ITEM_PROBLEM, this.mainProblems.length);
    this.mainProblems.push(p);
  }

  /** Both directions of a flow hash alike: the two endpoints' hashes, lower first. */
  private workerOf(seg: TcpSegment): number {
    const a = this.hashOf(seg.src);
    const b = this.hashOf(seg.dst);
    const h = a < b ? Math.imul(a ^ 0x9e3779b9, 0x85ebca6b) ^ b : Math.imul(b ^ 0x9e3779b9, 0x85ebca6b) ^ a;
    return (Math.imul(h ^ (h >>> 15), 0xc2b2ae35) >>> 0) % this.workers.length;
  }

  private hashOf(endpoint: string): number {
    let h = this.endpointHash.get(endpoint);
    if (h === undefined) {
      h = 0x811c9dc5; // FNV-1a
      for (let i = 0; i < endpoint.length; i++) h = Math.imul(h ^ endpoint.charCodeAt(i), 0x01000193);
      h >>>= 0;
      if (this.endpointHash.size >= 65536) this.endpointHash.clear();
      this.endpointHash.set(endpoint, h);
    }
    return h;
  }

  /** Sends each worker the packets read since the last batch; the main thread's problems go to the merger. */
  private flush(): void {
    if (this.ts.length > 0) {
      const ts = Float64Array.from(this.ts);
      const first = this.flushed + 1;
      for (let i = 0; i < this.workers.length; i++) {
        const { own, data } = this.builders[i]!.take();
        const m: BatchMessage = { type: 'batch', first, ts, own, data };
        this.inFlight[i]!++;
        this.workers[i]!.postMessage(m, [own.buffer as ArrayBuffer, data.buffer as ArrayBuffer]);
      }
      this.ts = [];
      this.flushed = this.last;
    }
    this.addMain(this.last);
  }

  private addMain(through: number): void {
    const m: OutputMessage = {
      through,
      pieces: [],
      items: Float64Array.from(this.mainItems),
      problems: this.mainProblems,
    };
    this.mainItems = [];
    this.mainProblems = [];
    this.merger.add(this.workers.length, m);
  }

  private fail(err: Error): void {
    this.error ??= err;
    this.wake();
  }

  private wake(): void {
    const w = this.waiter;
    this.waiter = null;
    w?.();
  }

  private check(): void {
    if (this.error !== null) throw this.error;
  }
}
