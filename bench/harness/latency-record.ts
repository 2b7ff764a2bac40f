/**
 * What the latency bench's processes share (latency-child.ts): the body layout, per-phase latency
 * histograms, the process's event-loop utilisation and GC pauses, and the floor's record walk.
 */
import * as fs from 'node:fs';
import {
  PerformanceObserver,
  constants as perfConstants,
  performance,
  type EventLoopUtilization,
  type PerformanceEntry,
} from 'node:perf_hooks';
import { MessageSysFlag } from '../../protocol/index.js';
import { LatencyHistogram } from './histogram.js';

/** Wall-clock microseconds, as precise as this process's monotonic clock. */
export function nowUs(): number {
  return (performance.timeOrigin + performance.now()) * 1000;
}

export function print(obj: Record<string, unknown>): void {
  process.stdout.write(JSON.stringify(obj) + '\n');
}

/** Latency figures of one histogram, in ms. */
export interface Percentiles {
  count: number;
  p50: number;
  p99: number;
  p999: number;
  max: number;
  mean: number;
}

export function percentiles(h: LatencyHistogram): Percentiles {
  return {
    count: h.count,
    p50: h.percentile(50),
    p99: h.percentile(99),
    p999: h.percentile(99.9),
    max: h.max,
    mean: h.mean,
  };
}

/** 1000 buckets a decade: a percentile reads at most 0.23 % high. */
export const newHistogram = (): LatencyHistogram => new LatencyHistogram(1000);

/** GC pauses of this process so far (count, total and longest, ms). */
class GcTotals {
  count = 0;
  ms = 0;
  /** Mark-compacts so far. */
  major = 0;
  /** The Resources measuring now, each told its longest pause. */
  readonly open = new Set<Resources>();
  constructor() {
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        this.count++;
        this.ms += e.duration;
        if (
          (e as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind ===
          perfConstants.NODE_PERFORMANCE_GC_MAJOR
        )
          this.major++;
        for (const r of this.open) r.notePause(e.duration);
      }
    }).observe({ entryTypes: ['gc'] });
  }
}
const gcTotals = new GcTotals();

/** Event-loop utilisation and GC pauses (count, mark-compacts, total, longest) between begin() and end(). */
export class Resources {
  private elu: EventLoopUtilization = performance.eventLoopUtilization();
  private gcCount = gcTotals.count;
  private gcMs = gcTotals.ms;
  private gcMajor = gcTotals.major;
  private gcMaxMs = 0;
  constructor() {
    gcTotals.open.add(this);
  }
  notePause(ms: number): void {
    if (ms > this.gcMaxMs) this.gcMaxMs = ms;
  }
  end(): { elu: number; gcCount: number; gcMs: number; gcMajor: number; gcMaxMs: number } {
    gcTotals.open.delete(this);
    return {
      elu: performance.eventLoopUtilization(this.elu).utilization,
      gcCount: gcTotals.count - this.gcCount,
      gcMs: gcTotals.ms - this.gcMs,
      gcMajor: gcTotals.major - this.gcMajor,
      gcMaxMs: this.gcMaxMs,
    };
  }
}

/**
 * Every message of a traced phase, for figures over windows of it (a member joining, a broker
 * restarting: latency-events.ts): due time and handled time in µs, the queue, the sequence. Kept in
 * typed arrays that double when full, so a traced phase allocates a few times, not per message.
 */
export class SampleLog {
  private sent = new Float64Array(4096);
  private handled = new Float64Array(4096);
  private queue = new Uint32Array(4096);
  private seqs = new Uint32Array(4096);
  private n = 0;

  get count(): number {
    return this.n;
  }

  add(sentUs: number, handledUs: number, queueId: number, seq: number): void {
    if (this.n === this.sent.length) {
      const grow = <T extends Float64Array | Uint32Array>(a: T): T => {
        const b = new (a.constructor as new (n: number) => T)(a.length * 2);
        b.set(a);
        return b;
      };
      this.sent = grow(this.sent);
      this.handled = grow(this.handled);
      this.queue = grow(this.queue);
      this.seqs = grow(this.seqs);
    }
    this.sent[this.n] = sentUs;
    this.handled[this.n] = handledUs;
    this.queue[this.n] = queueId >>> 0;
    this.seqs[this.n] = seq >>> 0;
    this.n++;
  }

  /** The samples as SAMPLE_BYTES records (the layout LatencyBench.java writes too). */
  encode(): Buffer {
    const b = Buffer.allocUnsafe(this.n * SAMPLE_BYTES);
    for (let i = 0; i < this.n; i++) {
      const o = i * SAMPLE_BYTES;
      b.writeDoubleBE(this.sent[i]!, o);
      b.writeDoubleBE(this.handled[i]!, o + 8);
      b.writeUInt32BE(this.queue[i]!, o + 16);
      b.writeUInt32BE(this.seqs[i]!, o + 20);
    }
    return b;
  }
}

/** One sample on disk: due µs (f64), handled µs (f64; NaN: a send that failed), queue (u32), sequence (u32), big-endian. */
export const SAMPLE_BYTES = 24;
/** The queue of a send that failed, in a producer's samples. */
export const NO_QUEUE = 0xffff_ffff;

/** A dumped phase's samples, column by column. */
export interface Samples {
  sentUs: Float64Array;
  handledUs: Float64Array;
  queueId: Uint32Array;
  seq: Uint32Array;
}

export function decodeSamples(b: Buffer): Samples {
  const n = Math.floor(b.length / SAMPLE_BYTES);
  const s: Samples = {
    sentUs: new Float64Array(n),
    handledUs: new Float64Array(n),
    queueId: new Uint32Array(n),
    seq: new Uint32Array(n),
  };
  for (let i = 0; i < n; i++) {
    const o = i * SAMPLE_BYTES;
    s.sentUs[i] = b.readDoubleBE(o);
    s.handledUs[i] = b.readDoubleBE(o + 8);
    s.queueId[i] = b.readUInt32BE(o + 16);
    s.seq[i] = b.readUInt32BE(o + 20);
  }
  return s;
}

/** Answers `trace N` (keep every sample of phase N) and `dump N FILE` (write them to FILE) for a process. */
export class SampleLogs {
  private readonly logs = new Map<number, SampleLog>();
  /** The log of `phase`, when it is traced. */
  get(phase: number): SampleLog | undefined {
    return this.logs.get(phase);
  }
  /** Handles the line if it is `trace N` or `dump N FILE`; false for any other line. */
  command(line: string): boolean {
    const [cmd, arg, file] = line.trim().split(' ');
    const n = Number(arg);
    if (cmd === 'trace' && Number.isInteger(n)) {
      this.logs.set(n, new SampleLog());
      return true;
    }
    if (cmd === 'dump' && Number.isInteger(n) && file) {
      const log = this.logs.get(n);
      fs.writeFileSync(file, log ? log.encode() : Buffer.alloc(0));
      this.logs.delete(n);
      print({ type: 'dumped', phase: n, count: log?.count ?? 0 });
      return true;
    }
    return false;
  }
}

/** Per-phase histograms of a consumer: scheduled send → handler, broker store time → handler. */
export class PhaseRecorder {
  private readonly phases = new Map<number, { send: LatencyHistogram; store: LatencyHistogram; res: Resources }>();
  readonly samples = new SampleLogs();
  private phase(n: number) {
    let p = this.phases.get(n);
    if (!p) this.phases.set(n, (p = { send: newHistogram(), store: newHistogram(), res: new Resources() }));
    return p;
  }
  /** One message handled at `now` (µs): its body and the broker's store timestamp (ms). */
  record(body: Buffer, storeTimestamp: number, now: number, queueId = 0): void {
    if (body.length < 16) return;
    const n = body.readUInt32BE(0);
    const p = this.phase(n);
    const sentUs = body.readUInt32BE(8) * 0x1_0000_0000 + body.readUInt32BE(12);
    p.send.record((now - sentUs) / 1000);
    p.store.record(now / 1000 - storeTimestamp);
    this.samples.get(n)?.add(sentUs, now, queueId, body.readUInt32BE(4));
  }
  /** Phase `n`'s answer to `end`: percentiles, and the resources since its `begin`. */
  figures(n: number): Record<string, unknown> & { count: number; send: Percentiles; store: Percentiles } {
    const p = this.phase(n);
    return {
      type: 'phase',
      phase: n,
      count: p.send.count,
      send: percentiles(p.send),
      store: percentiles(p.store),
      ...p.res.end(),
    };
  }
  command(line: string): void {
    if (this.samples.command(line)) return;
    const [cmd, arg] = line.trim().split(' ');
    const n = Number(arg);
    if (!Number.isInteger(n)) return;
    const p = this.phase(n);
    if (cmd === 'begin') {
      p.res.end(); // stops it being told of pauses
      p.res = new Resources();
    } else if (cmd === 'count') print({ type: 'count', phase: n, count: p.send.count });
    else if (cmd === 'end') print(this.figures(n));
  }
}

/** The stored-record layout (protocol/message-decoder.ts) read for two fields: store time and body. */
export function walkRecords(b: Buffer, start: number, end: number, rec: PhaseRecorder, now: number): void {
  let p = start;
  while (p + 4 <= end) {
    const size = b.readInt32BE(p);
    if (size <= 0 || p + size > end) break;
    const queueId = b.readInt32BE(p + 12);
    const sysFlag = b.readInt32BE(p + 36);
    let q = p + 48 + ((sysFlag & MessageSysFlag.BORNHOST_V6_FLAG) !== 0 ? 20 : 8); // after born timestamp and born host
    const storeTs = b.readUInt32BE(q) * 0x1_0000_0000 + b.readUInt32BE(q + 4);
    q += 8 + ((sysFlag & MessageSysFlag.STOREHOSTADDRESS_V6_FLAG) !== 0 ? 20 : 8) + 4 + 8; // store host, reconsume times, prepared offset
    const bodyLen = b.readInt32BE(q);
    rec.record(b.subarray(q + 4, q + 4 + bodyLen), storeTs, now, queueId);
    p += size;
  }
}
