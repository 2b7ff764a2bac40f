import t from 'tap';
import { startBroker } from '../../lib/broker/index.js';
import { PushConsumer, type MessageExt } from '../../lib/consumer/index.js';
import { produce, type BenchOptions } from '../../bench/harness/run.js';
import { until } from '../consumer/helpers.js';

// --compress decides what the bench stores: the bodies of 8 KiB (over Java's 4 KiB threshold,
// and the bench's repeated text compresses to almost nothing) are stored compressed by default and
// as they are with --compress off. The stored record size tells which.
t.test('the bench producer compresses 8 KiB bodies by default and not with compress: false', async (t) => {
  const broker = await startBroker({ queues: 2 });
  t.teardown(() => broker.close());
  const opts = (topic: string, compress: boolean | undefined): BenchOptions => ({
    namesrv: broker.namesrv,
    topic,
    messages: 20,
    size: 8192,
    queues: 2,
    producers: 1,
    batch: 1,
    consumeBatch: 1,
    handlerMs: 0,
    latencyMessages: 0,
    stallTimeoutMs: 10_000,
    serializeType: 'JSON',
    compress,
  });
  for (const [topic, compress] of [
    ['bench_compress_default', undefined],
    ['bench_compress_off', false],
  ] as const) {
    const r = await produce(opts(topic, compress), topic, 0, 20, 1, null, 0);
    t.equal(r.count, 20, `${topic}: produced`);
    const seen: MessageExt[] = [];
    const c = new PushConsumer({
      consumerGroup: `${topic}_cg`,
      namesrvAddr: broker.namesrv,
      consumeFromWhere: 'first',
      subscriptions: { [topic]: '*' },
    });
    await c.start((msgs) => {
      seen.push(...msgs);
      return 'CONSUME_SUCCESS';
    });
    await until(() => seen.length === 20, `${topic}: consumed`);
    await c.shutdown();
    t.ok(
      seen.every((m) => m.body.length === 8192),
      `${topic}: the consumer sees the 8 KiB bodies`,
    );
    if (compress === false)
      t.ok(
        seen.every((m) => m.storeSize > 8192),
        'compress off: stored as they are',
      );
    else
      t.ok(
        seen.every((m) => m.storeSize < 1024),
        'default: stored compressed',
      );
  }
});
