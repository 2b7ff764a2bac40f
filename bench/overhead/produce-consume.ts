/**
 * The round that the feature-overhead benches (trace, metrics) share: produce N messages with C
 * sends in flight, then consume them from the first offset, timing each side from its first to
 * its last message and counting this process's CPU (the broker runs elsewhere). The caller builds
 * the clients with the feature on or off; `afterProduce` runs between the two (shut the producer
 * down there, so that what it still flushes, trace records say, does not fall into the consume
 * window); the consumer is the caller's to shut down (so it can read its counters first).
 */
import type { PushConsumer } from '../../lib/consumer/index.js';
import type { Producer } from '../../lib/producer/index.js';

export interface ProduceConsumeTimes {
  produceMs: number;
  /** CPU of this process (µs, user + system) while producing / consuming. */
  produceCpuUs: number;
  consumeMs: number;
  consumeCpuUs: number;
}

export async function produceThenConsume(
  producer: Producer,
  consumer: PushConsumer,
  o: {
    topic: string;
    messages: number;
    size: number;
    concurrency: number;
    keys?: boolean;
    afterProduce?: () => Promise<void>;
  },
): Promise<ProduceConsumeTimes> {
  const { topic, messages: n } = o;
  const body = Buffer.alloc(o.size, 0x61);
  // Route lookup and auto-creation outside the timed window (the consumer sees this one too).
  await producer.send({ topic, body, tags: 'warm', ...(o.keys ? { keys: 'warm' } : {}) });
  let next = 0;
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: o.concurrency }, async () => {
      while (next < n) {
        const i = next++;
        await producer.send({ topic, body, tags: 'TagA', ...(o.keys ? { keys: `k${i}` } : {}) });
      }
    }),
  );
  const produceMs = performance.now() - t0;
  const pc = process.cpuUsage(c0);
  await o.afterProduce?.();

  let got = 0;
  let first = 0;
  let last = 0;
  let done!: () => void;
  const all = new Promise<void>((r) => (done = r));
  consumer.subscribe(topic);
  const c1 = process.cpuUsage();
  await consumer.start((msgs) => {
    const now = performance.now();
    if (got === 0) first = now;
    got += msgs.length;
    last = now;
    if (got >= n + 1) done();
    return 'CONSUME_SUCCESS';
  });
  await all;
  const cc = process.cpuUsage(c1);
  return {
    produceMs,
    produceCpuUs: pc.user + pc.system,
    consumeMs: Math.max(1, last - first),
    consumeCpuUs: cc.user + cc.system,
  };
}

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/** A/B order of round r: off first on even rounds, on first on odd ones. */
export function abOrder(r: number): [boolean, boolean] {
  return r % 2 === 0 ? [false, true] : [true, false];
}
