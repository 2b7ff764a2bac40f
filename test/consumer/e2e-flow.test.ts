import t from 'tap';
import { ConsumeConcurrentlyStatus, PushConsumer, type MessageExt } from '../../lib/consumer/index.js';
import { brokerOffsets, produce, uniqueName, until, withBroker } from './helpers.js';

t.test(
  'a blocked handler: span flow control parks pulls (50 ms steps), nothing is skipped, all resumes on release',
  async (t) => {
    const broker = await withBroker({ queues: 1 });
    t.teardown(() => broker.close());
    const topic = uniqueName('T');
    const group = uniqueName('cg');
    const N = 3000;
    await produce(broker.namesrv, topic, N, (i) => ({ body: `m${i}` }));
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const seen = new Set<number>();
    let duplicates = 0;
    const c = new PushConsumer({
      consumerGroup: group,
      namesrvAddr: broker.namesrv,
      consumeFromWhere: 'first',
      persistOffsetIntervalMs: 100,
      // Above the span so that the span limit, not the count limit, is what stops the pulls.
      pullThresholdForQueue: 5000,
    });
    c.subscribe(topic);
    await c.start(async (msgs: MessageExt[]) => {
      const m = msgs[0]!;
      if (seen.has(m.queueOffset)) duplicates++;
      seen.add(m.queueOffset);
      // Offset 5 blocks, and so does everything from 50 on: the cache keeps growing behind the blocked head
      // (Java's picture of a stuck call) until the span limit stops the pulls.
      if (m.queueOffset === 5 || m.queueOffset >= 50) await gate;
      return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
    });
    t.teardown(async () => {
      release();
      await c.shutdown();
    });
    // The span limit (2000) stops pulling a little past offset 2005; the committed offset stays at the
    // blocked message.
    await until(() => c.stats().flowControlPauses.span >= 5, 'span flow control');
    const q = c.stats().queues.find((x) => x.topic === topic)!;
    t.ok(q.span > 2000, `span over the limit (${q.span})`);
    t.ok(
      q.pulledOffset > 2005 && q.pulledOffset <= 2005 + 32 + 1,
      `pulling stopped one batch past the span limit (${q.pulledOffset})`,
    );
    t.equal(q.committedOffset, 5, 'committed offset stays at the blocked message');
    t.ok(q.flowControlPauses.span >= 5, 'pauses counted per queue');
    const pauses = c.stats().flowControlPauses.span;
    const since = Date.now();
    await until(() => c.stats().flowControlPauses.span - pauses >= 3, 'three more re-checks');
    const more = c.stats().flowControlPauses.span - pauses;
    const took = Date.now() - since;
    // Parked on a 50 ms timer, not a busy loop: a handful of re-checks in 300 ms (15 ms or more
    // apart), not thousands.
    t.ok(more >= 1 && took >= 15 * more, `re-checked on a timer (${more} in ${took} ms)`);
    t.equal(
      (await brokerOffsets(broker.namesrv, topic, group))[0]!.committed,
      5,
      'the broker never sees an offset past it',
    );
    release();
    await until(() => seen.size === N, 'everything consumed after release');
    await until(
      async () => (await brokerOffsets(broker.namesrv, topic, group))[0]!.committed === N,
      'committed to the end',
    );
    t.equal(duplicates, 0, 'no message delivered twice');
  },
);

t.test('count threshold parks pulls until the cache drains', async (t) => {
  const broker = await withBroker({ queues: 1 });
  t.teardown(() => broker.close());
  const topic = uniqueName('T');
  await produce(broker.namesrv, topic, 400);
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let n = 0;
  const c = new PushConsumer({
    consumerGroup: uniqueName('cg'),
    namesrvAddr: broker.namesrv,
    consumeFromWhere: 'first',
    pullThresholdForQueue: 50,
    consumeThreadMin: 1,
    consumeThreadMax: 1,
  });
  c.subscribe(topic);
  await c.start(async () => {
    await gate;
    n++;
    return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
  });
  t.teardown(async () => {
    release();
    await c.shutdown();
  });
  await until(() => c.stats().flowControlPauses.count > 0, 'count flow control');
  const q = c.stats().queues.find((x) => x.topic === topic)!;
  t.ok(q.cachedCount > 50 && q.cachedCount <= 50 + 32, `cache stops one pull past the limit (${q.cachedCount})`);
  t.equal(c.stats().consumeInFlight, 1, 'consumeThreadMax 1: one call in flight');
  release();
  await until(() => n === 400, 'all consumed');
});
