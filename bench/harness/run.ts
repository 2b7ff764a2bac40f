import { PerformanceObserver, constants as perfConstants, type PerformanceEntry } from 'node:perf_hooks';
import { ConsumeConcurrentlyStatus, PushConsumer, type MessageExt } from '../../lib/consumer/index.js';
import { Producer, type Message } from '../../lib/producer/index.js';
import { systemClock, sleep as sleepOn } from '../../lib/clock.js';
import { CliError } from '../../lib/cli/common.js';
import { LatencyHistogram } from './histogram.js';
import { TenthPeaks } from './proc-stats.js';
import type { ProgressBar } from './progress.js';
import { consumeRocketwirePop } from './pop.js';
import { pushConsumerImpl } from '../../lib/consumer/push/push-consumer.js';
import type { TraceDispatcherStats } from '../../lib/trace/index.js';

export interface BenchOptions {
  namesrv: string;
  topic: string;
  messages: number;
  size: number;
  queues: number;
  producers: number;
  /** Messages per SEND_BATCH_MESSAGE; 1 = single sends. */
  batch: number;
  consumeBatch: number;
  handlerMs: number;
  /** Handler calls at once (consumeThreadMin/Max) for rocketwire and the Java peer; default 64 for rocketwire, 20 (its own) for Java. */
  consumeThreads?: number | undefined;
  /** false: bodies are never compressed (--compress off); default: over 4 KiB, as Java's producer does. */
  compress?: boolean | undefined;
  /** Messages sent one by one to a caught-up consumer to measure end-to-end latency. */
  latencyMessages: number;
  /** Abort when consumption makes no progress for this long. */
  stallTimeoutMs: number;
  serializeType: 'JSON' | 'ROCKETMQ';
  /** How rocketwire consumes: push (default) or pop (SimpleConsumer, bench/pop.ts). */
  mode?: 'push' | 'pop';
  /** enableTrace on the push consumer (the `--vs trace` peer): SubBefore/SubAfter records sent to the broker. */
  trace?: boolean;
}

export interface Series {
  name: string;
  points: [number, number][];
}

export interface PhaseResult {
  count: number;
  seconds: number;
  msgsPerSec: number;
  mbPerSec: number;
}

export interface ProduceResult extends PhaseResult {
  failed: number;
  series: Series;
}

export interface ConsumeResult extends PhaseResult {
  /** From start() to the first message handled (routes, rebalance, offset queries). */
  startupMs: number;
  unique: number;
  duplicates: number;
  cpuMs: number;
  peakRssMb: number;
  /** With --handler-ms: the mean time the handler's wait really took (Node timers mostly fire late). */
  handlerMeanMs?: number;
  /** Peak RSS (MB) while each tenth of the messages was handled (rocketwire in the bench process). */
  rssMbByTenth?: number[];
  /** GC pauses in this process while consuming (scavenges, mark-compacts, their total time). */
  gc: { minor: number; major: number; ms: number };
  pulls: number;
  flowControlPauses: Record<string, number>;
  /**
   * With trace: the dispatcher's counters when the last message was handled (`atLast`: what was
   * still queued or in flight then is sent after the measured window, at shutdown) and after shutdown.
   */
  trace?: { atLast: TraceDispatcherStats; final: TraceDispatcherStats };
  series: Series;
}

/**
 * Waits until `n` has counted `expect` distinct messages, or none came for `stallMs`; `tick` runs
 * after each wait of `everyMs` (a progress line).
 */
export async function untilCounted(
  n: UniqueCount,
  expect: number,
  stallMs: number,
  everyMs = 5,
  tick?: () => void,
): Promise<void> {
  let lastUnique = n.unique;
  let lastProgressAt = performance.now();
  while (n.unique < expect) {
    await new Promise((r) => setTimeout(r, everyMs));
    tick?.();
    const now = performance.now();
    if (n.unique !== lastUnique) {
      lastUnique = n.unique;
      lastProgressAt = now;
    } else if (now - lastProgressAt > stallMs) break;
  }
}

/**
 * The bench's messages carry their number in the first 8 bytes of the body (< expect): which were
 * seen, how many twice, and when the first and the latest new one arrived.
 */
export class UniqueCount {
  unique = 0;
  duplicates = 0;
  firstAt = 0;
  lastAt = 0;
  /** One bit per message: a byte each was 10 MB at 10 M messages, and its pages, touched as the
   * run went on, showed as the consumer's RSS growing. */
  private readonly seen: Uint32Array;

  constructor(private readonly expect: number) {
    this.seen = new Uint32Array(Math.ceil(expect / 32));
  }

  add(msgs: readonly MessageExt[]): void {
    for (const m of msgs) {
      const idx = indexOf(m.body);
      if (idx < 0 || idx >= this.expect) continue;
      const word = idx >>> 5;
      const bit = 1 << (idx & 31);
      if ((this.seen[word]! & bit) !== 0) this.duplicates++;
      else {
        this.seen[word]! |= bit;
        this.unique++;
        this.lastAt = performance.now();
        if (this.firstAt === 0) this.firstAt = this.lastAt;
      }
    }
  }
}

/**
 * The measured part of a consume round: the rate runs from the first unique message to the last
 * (so start-up is reported apart, as startupMs), and the CPU, peak RSS and GC of the round.
 */
export function consumeRoundFigures(
  n: UniqueCount,
  r: { start: number; size: number; cpu: NodeJS.CpuUsage; rss: RssSampler; gc: GcWatcher },
): Omit<ConsumeResult, 'pulls' | 'flowControlPauses' | 'series'> {
  const seconds = Math.max(1e-3, ((n.lastAt || performance.now()) - (n.firstAt || r.start)) / 1000);
  return {
    count: n.unique + n.duplicates,
    unique: n.unique,
    duplicates: n.duplicates,
    seconds,
    msgsPerSec: Math.max(0, n.unique - 1) / seconds,
    mbPerSec: (Math.max(0, n.unique - 1) * r.size) / seconds / (1024 * 1024),
    startupMs: (n.firstAt || r.start) - r.start,
    cpuMs: (r.cpu.user + r.cpu.system) / 1000,
    peakRssMb: r.rss.stop(),
    gc: r.gc.stop(),
  };
}

export interface LatencyResult {
  count: number;
  p50: number;
  p99: number;
  max: number;
  mean: number;
}

/** Sequence number stored in the first 8 bytes of each body, so consumption can be checked message by message. */
function bodyFor(index: number, size: number, template: Buffer): Buffer {
  const b = Buffer.allocUnsafe(Math.max(size, 8));
  template.copy(b, 0, 0, b.length);
  b.writeUInt32BE(Math.floor(index / 0x1_0000_0000), 0);
  b.writeUInt32BE(index >>> 0, 4);
  return b;
}
function indexOf(body: Buffer): number {
  if (body.length < 8) return -1;
  return body.readUInt32BE(0) * 0x1_0000_0000 + body.readUInt32BE(4);
}

/** Samples a counter every `ms` into a throughput series (messages per second). */
function sampler(name: string, read: () => number, t0: number, ms = 100): { series: Series; stop(): void } {
  const series: Series = { name, points: [] };
  let last = read();
  let lastT = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    const v = read();
    series.points.push([(now - t0) / 1000, ((v - last) * 1000) / (now - lastT)]);
    last = v;
    lastT = now;
  }, ms);
  timer.unref();
  return { series, stop: () => clearInterval(timer) };
}

/** Garbage-collector pauses of this process while it runs: counts of minor and major GCs and their time. */
export class GcWatcher {
  minor = 0;
  major = 0;
  ms = 0;
  private readonly observer = new PerformanceObserver((list) => this.count(list.getEntries()));
  private count(entries: PerformanceEntry[]): void {
    for (const e of entries) {
      const kind = (e as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind;
      if (kind === perfConstants.NODE_PERFORMANCE_GC_MAJOR) this.major++;
      else if (kind === perfConstants.NODE_PERFORMANCE_GC_MINOR) this.minor++;
      this.ms += e.duration;
    }
  }
  start(): this {
    this.observer.observe({ entryTypes: ['gc'] });
    return this;
  }
  stop(): { minor: number; major: number; ms: number } {
    // Entries are delivered asynchronously: take the ones not delivered yet.
    this.count(this.observer.takeRecords());
    this.observer.disconnect();
    return { minor: this.minor, major: this.major, ms: this.ms };
  }
}

/** Peak resident set size of this process while running. */
export class RssSampler {
  peak = 0;
  /** With a progress counter: the peak RSS while each tenth of `total` was handled. */
  readonly byTenth = new TenthPeaks();
  private timer: NodeJS.Timeout | null = null;
  start(progress?: () => number, total = 0): this {
    this.peak = Math.max(this.peak, process.memoryUsage.rss());
    this.timer = setInterval(() => {
      const r = process.memoryUsage.rss();
      if (r > this.peak) this.peak = r;
      if (progress && total > 0) this.byTenth.note(progress(), total, r / (1024 * 1024));
    }, 50);
    this.timer.unref();
    return this;
  }
  stop(): number {
    if (this.timer) clearInterval(this.timer);
    this.peak = Math.max(this.peak, process.memoryUsage.rss());
    return this.peak / (1024 * 1024);
  }
}

/**
 * rocketwire's handler calls at once in the bench unless --consume-threads says otherwise: 64, not
 * the consumer's default of 20 (Java's), so that figures stay comparable with the recorded ones
 * (docs/bench-log/).
 */
export const BENCH_CONSUME_THREADS = 64;

/** compressMsgBodyOverHowmuch that no body reaches (--compress off), on every side. */
export const NEVER_COMPRESS = 2 ** 31 - 1;

/** Produce `count` messages numbered from `first` to `topic`, with `producers` calls in flight. */
export async function produce(
  opts: BenchOptions,
  topic: string,
  first: number,
  count: number,
  producers: number,
  progress: ProgressBar | null,
  t0: number,
): Promise<ProduceResult> {
  const producer = new Producer({
    group: 'rocketwire_bench_producer',
    namesrvAddr: opts.namesrv,
    defaultTopicQueueNums: opts.queues,
    serializeType: opts.serializeType,
    ...(opts.compress === false ? { compressMsgBodyOverHowmuch: NEVER_COMPRESS } : {}),
  });
  await producer.start();
  const template = Buffer.alloc(Math.max(opts.size, 8), 'rocketwire-bench-');
  let next = 0;
  let sent = 0;
  let failed = 0;
  let firstError: Error | null = null;
  const s = sampler('produce', () => sent, t0);
  const start = performance.now();
  const worker = async () => {
    while (next < count) {
      const n = Math.min(opts.batch, count - next);
      const base = next;
      next += n;
      const msgs: Message[] = [];
      for (let i = 0; i < n; i++)
        msgs.push({ topic, body: bodyFor(first + base + i, opts.size, template), tags: 'bench' });
      try {
        if (n === 1) await producer.send(msgs[0]!);
        else await producer.sendBatch(msgs);
        sent += n;
      } catch (err) {
        failed += n;
        firstError ??= err as Error;
        if (failed > Math.max(100, count / 100)) break;
      }
      progress?.update('produce', sent, count);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.max(1, producers) }, worker));
  } finally {
    s.stop();
    await producer.shutdown();
  }
  progress?.clear();
  const err = firstError as Error | null;
  if (sent === 0 && err) throw new CliError(`producing to ${opts.namesrv} failed: ${err.message}`);
  const seconds = (performance.now() - start) / 1000;
  return {
    count: sent,
    failed,
    seconds,
    msgsPerSec: sent / seconds,
    mbPerSec: (sent * opts.size) / seconds / (1024 * 1024),
    series: s.series,
  };
}

/** A fresh group (or topic) name: `prefix_<time>_<random>`, so that no run reuses another's state. */
export function newGroup(prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}_${Math.floor(Math.random() * 1e6).toString(36)}`;
}

/**
 * Consume the first `expect` messages of the topic with a new group from the first offset, until
 * every one of them was seen (or `stopAfter` were seen, for a warm-up), then shut down.
 * Throughput is measured from the first to the last message handled, as the Java reference client
 * measures itself, so that start-up weighs the same on every side.
 */
export async function consumeRocketwire(
  opts: BenchOptions,
  expect: number,
  progress: ProgressBar | null,
  t0: number,
  label = 'consume (rocketwire)',
  stopAfter = expect,
): Promise<ConsumeResult> {
  if (opts.mode === 'pop') return consumeRocketwirePop(opts, expect, progress, t0, label, stopAfter);
  const n = new UniqueCount(expect);
  const onBatch = (msgs: MessageExt[]): void => n.add(msgs);
  const handlerMs = opts.handlerMs;
  let waitedMs = 0;
  let waits = 0;
  const handler =
    handlerMs > 0
      ? async (msgs: MessageExt[]) => {
          onBatch(msgs);
          const t = performance.now();
          await sleepOn(systemClock, handlerMs);
          waitedMs += performance.now() - t;
          waits++;
          return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        }
      : (msgs: MessageExt[]) => {
          onBatch(msgs);
          return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        };
  const consumer = new PushConsumer({
    consumerGroup: newGroup('rocketwire_bench'),
    namesrvAddr: opts.namesrv,
    consumeFromWhere: 'first',
    consumeMessageBatchMaxSize: opts.consumeBatch,
    consumeThreadMin: opts.consumeThreads ?? BENCH_CONSUME_THREADS,
    consumeThreadMax: opts.consumeThreads ?? BENCH_CONSUME_THREADS,
    subscriptions: { [opts.topic]: '*' },
    serializeType: opts.serializeType,
    enableTrace: opts.trace === true,
  });
  const traceStats = (): TraceDispatcherStats | undefined => pushConsumerImpl(consumer).trace?.stats();
  let traceAtLast: TraceDispatcherStats | undefined;
  let result: ConsumeResult;
  if (typeof globalThis.gc === 'function') globalThis.gc();
  const rss = new RssSampler().start(() => n.unique, stopAfter);
  const gc = new GcWatcher().start();
  const cpu0 = process.cpuUsage();
  const c = sampler(label, () => n.unique, t0);
  const consumeStart = performance.now();
  try {
    await consumer.start(handler);
    await untilCounted(n, stopAfter, opts.stallTimeoutMs, 20, () =>
      progress?.update('consume', n.unique, stopAfter, n.duplicates ? `dup ${n.duplicates}` : ''),
    );
    progress?.clear();
    const cpu = process.cpuUsage(cpu0);
    const st = consumer.stats();
    traceAtLast = traceStats();
    result = {
      ...consumeRoundFigures(n, { start: consumeStart, size: opts.size, cpu, rss, gc }),
      ...(waits > 0 ? { handlerMeanMs: waitedMs / waits } : {}),
      rssMbByTenth: rss.byTenth.rounded(),
      pulls: st.pulls,
      flowControlPauses: { ...st.flowControlPauses },
      series: c.series,
    };
  } finally {
    c.stop();
    rss.stop();
    gc.stop();
    await consumer.shutdown();
  }
  const traceFinal = traceStats();
  if (traceAtLast && traceFinal) result.trace = { atLast: traceAtLast, final: traceFinal };
  return result;
}

/**
 * End-to-end latency: a consumer that has caught up with `latencyTopic` receives messages sent one
 * at a time; born timestamp (the producer's clock) to handler call, in milliseconds.
 */
export async function measureLatency(opts: BenchOptions, latencyTopic: string): Promise<LatencyResult> {
  const latency = new LatencyHistogram();
  const first = 1_000_000_000;
  let seen = 0;
  const consumer = new PushConsumer({
    consumerGroup: newGroup('rocketwire_bench_latency'),
    namesrvAddr: opts.namesrv,
    consumeFromWhere: 'last',
    subscriptions: { [latencyTopic]: '*' },
    serializeType: opts.serializeType,
  });
  const producer = new Producer({
    group: 'rocketwire_bench_latency',
    namesrvAddr: opts.namesrv,
    serializeType: opts.serializeType,
  });
  const template = Buffer.alloc(Math.max(opts.size, 8), 'rocketwire-bench-');
  try {
    await producer.start();
    // The topic must exist before the consumer's first rebalance.
    await producer.send({ topic: latencyTopic, body: bodyFor(0, opts.size, template) });
    await consumer.start((msgs: MessageExt[]) => {
      const now = Date.now();
      for (const m of msgs) {
        if (indexOf(m.body) >= first) {
          latency.record(now - m.bornTimestamp);
          seen++;
        }
      }
      return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
    });
    // Wait until the consumer holds every queue of the topic and its first long polls are parked.
    const deadline = performance.now() + 30_000;
    while (consumer.assignment().filter((q) => q.topic === latencyTopic).length === 0 && performance.now() < deadline)
      await sleepOn(systemClock, 20);
    await sleepOn(systemClock, 300);
    for (let i = 0; i < opts.latencyMessages; i++) {
      await producer.send({ topic: latencyTopic, body: bodyFor(first + i, opts.size, template) });
      if (i % 8 === 7) await sleepOn(systemClock, 1);
    }
    while (seen < opts.latencyMessages && performance.now() < deadline + 30_000) await sleepOn(systemClock, 10);
  } finally {
    await producer.shutdown();
    await consumer.shutdown();
  }
  return {
    count: latency.count,
    p50: latency.percentile(50),
    p99: latency.percentile(99),
    max: latency.max,
    mean: latency.mean,
  };
}
