import { ConsumeConcurrentlyStatus, PushConsumer, type MessageExt } from '../../consumer/index.js';
import { Producer, type Message } from '../../producer/index.js';
import { CliError } from '../common.js';
import { LatencyHistogram } from './histogram.js';
import type { ProgressBar } from './progress.js';

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
  /** Messages sent one by one to a caught-up consumer to measure end-to-end latency. */
  latencyMessages: number;
  /** Abort when consumption makes no progress for this long. */
  stallTimeoutMs: number;
  serializeType: 'JSON' | 'ROCKETMQ';
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

export interface RocketwireResult {
  produce: PhaseResult & { failed: number };
  consume: PhaseResult & { startupMs: number; unique: number; duplicates: number; cpuMs: number; peakRssMb: number; pulls: number; flowControlPauses: Record<string, number> };
  latency: { count: number; p50: number; p99: number; max: number; mean: number };
  series: Series[];
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

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Samples a counter every `ms` into a throughput series (messages per second). */
function sampler(name: string, read: () => number, t0: number, ms = 500): { series: Series; stop(): void } {
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

/** Peak resident set size of this process while running. */
export class RssSampler {
  peak = 0;
  private timer: NodeJS.Timeout | null = null;
  start(): this {
    this.peak = Math.max(this.peak, process.memoryUsage.rss());
    this.timer = setInterval(() => {
      const r = process.memoryUsage.rss();
      if (r > this.peak) this.peak = r;
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

async function produce(opts: BenchOptions, topic: string, first: number, count: number, producers: number, progress: ProgressBar | null, t0: number, series: Series[]): Promise<{ sent: number; failed: number; seconds: number }> {
  const producer = new Producer({
    group: 'rocketwire_bench_producer',
    namesrvAddr: opts.namesrv,
    defaultTopicQueueNums: opts.queues,
    serializeType: opts.serializeType,
  });
  await producer.start();
  const template = Buffer.alloc(Math.max(opts.size, 8), 'rocketwire-bench-');
  let next = 0;
  let sent = 0;
  let failed = 0;
  let firstError: Error | null = null;
  const s = series ? sampler('produce', () => sent, t0) : null;
  const start = performance.now();
  const worker = async () => {
    while (next < count) {
      const n = Math.min(opts.batch, count - next);
      const base = next;
      next += n;
      const msgs: Message[] = [];
      for (let i = 0; i < n; i++) msgs.push({ topic, body: bodyFor(first + base + i, opts.size, template), tags: 'bench' });
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
    s?.stop();
    if (s) series.push(s.series);
    await producer.shutdown();
  }
  progress?.clear();
  const err = firstError as Error | null;
  if (sent === 0 && err) throw new CliError(`producing to ${opts.namesrv} failed: ${err.message}`);
  return { sent, failed, seconds: (performance.now() - start) / 1000 };
}

export async function runRocketwire(opts: BenchOptions, progress: ProgressBar | null): Promise<RocketwireResult> {
  const t0 = performance.now();
  const series: Series[] = [];
  const latencyTopic = `${opts.topic}_latency`;
  const p = await produce(opts, opts.topic, 0, opts.messages, opts.producers, progress, t0, series);
  // Create the latency topic before the consumer starts, so its route is known from the first rebalance.
  const warm = await produce(opts, latencyTopic, opts.messages, 1, 1, null, t0, []);
  if (warm.sent !== 1) throw new CliError(`could not create topic ${latencyTopic}`);

  const seen = new Uint8Array(opts.messages);
  let unique = 0;
  let duplicates = 0;
  let lastUniqueAt = 0;
  let firstUniqueAt = 0;
  const latency = new LatencyHistogram();
  const latencyFirst = opts.messages + 1;
  let latencySeen = 0;
  const handlerMs = opts.handlerMs;
  const onBatch = (msgs: MessageExt[]) => {
    for (const m of msgs) {
      const idx = indexOf(m.body);
      if (idx >= 0 && idx < opts.messages) {
        if (seen[idx]) duplicates++;
        else {
          seen[idx] = 1;
          unique++;
          lastUniqueAt = performance.now();
          if (firstUniqueAt === 0) firstUniqueAt = lastUniqueAt;
        }
      } else if (idx >= latencyFirst) {
        latency.record(Date.now() - m.bornTimestamp);
        latencySeen++;
      }
    }
  };
  const consumer = new PushConsumer({
    consumerGroup: `rocketwire_bench_${Date.now().toString(36)}`,
    namesrvAddr: opts.namesrv,
    consumeFromWhere: 'first',
    consumeMessageBatchMaxSize: opts.consumeBatch,
    subscriptions: { [opts.topic]: '*', [latencyTopic]: '*' },
    serializeType: opts.serializeType,
  });
  const handler =
    handlerMs > 0
      ? async (msgs: MessageExt[]) => {
          onBatch(msgs);
          await sleep(handlerMs);
          return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        }
      : (msgs: MessageExt[]) => {
          onBatch(msgs);
          return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        };

  if (typeof globalThis.gc === 'function') globalThis.gc();
  const rss = new RssSampler().start();
  const cpu0 = process.cpuUsage();
  const c = sampler('consume (rocketwire)', () => unique, t0);
  const consumeStart = performance.now();
  lastUniqueAt = consumeStart;
  let consumeEnd = consumeStart;
  try {
    await consumer.start(handler);
    while (unique < p.sent) {
      await sleep(20);
      progress?.update('consume', unique, p.sent, duplicates ? `dup ${duplicates}` : '');
      if (performance.now() - lastUniqueAt > opts.stallTimeoutMs) break;
    }
    consumeEnd = unique > 0 ? lastUniqueAt : performance.now();
    progress?.clear();
    const cpu = process.cpuUsage(cpu0);
    c.stop();
    series.push(c.series);
    const peakRssMb = rss.stop();
    const st = consumer.stats();

    // Live phase: the consumer has caught up; send messages one at a time and time born → handler.
    if (unique === p.sent && opts.latencyMessages > 0) {
      const producer = new Producer({ group: 'rocketwire_bench_latency', namesrvAddr: opts.namesrv, serializeType: opts.serializeType });
      await producer.start();
      const template = Buffer.alloc(Math.max(opts.size, 8), 'rocketwire-bench-');
      try {
        for (let i = 0; i < opts.latencyMessages; i++) {
          await producer.send({ topic: latencyTopic, body: bodyFor(latencyFirst + i, opts.size, template) });
          if (i % 8 === 7) await sleep(1);
        }
      } finally {
        await producer.shutdown();
      }
      const deadline = performance.now() + 30_000;
      while (latencySeen < opts.latencyMessages && performance.now() < deadline) await sleep(10);
    }
    // Measured from the first to the last message handled, as the Java reference client measures
    // itself, so that start-up (routes, rebalance, offset queries) weighs the same on both sides.
    const seconds = Math.max(1e-3, (consumeEnd - (firstUniqueAt || consumeStart)) / 1000);
    return {
      produce: {
        count: p.sent,
        failed: p.failed,
        seconds: p.seconds,
        msgsPerSec: p.sent / p.seconds,
        mbPerSec: (p.sent * opts.size) / p.seconds / (1024 * 1024),
      },
      consume: {
        count: unique + duplicates,
        unique,
        duplicates,
        seconds,
        msgsPerSec: Math.max(0, unique - 1) / seconds,
        mbPerSec: (Math.max(0, unique - 1) * opts.size) / seconds / (1024 * 1024),
        startupMs: (firstUniqueAt || consumeStart) - consumeStart,
        cpuMs: (cpu.user + cpu.system) / 1000,
        peakRssMb,
        pulls: st.pulls,
        flowControlPauses: { ...st.flowControlPauses },
      },
      latency: { count: latency.count, p50: latency.percentile(50), p99: latency.percentile(99), max: latency.max, mean: latency.mean },
      series,
    };
  } finally {
    c.stop();
    rss.stop();
    await consumer.shutdown();
  }
}
