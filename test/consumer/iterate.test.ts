import t from 'tap';
import type { Test } from 'tap';
import { ConsumerStateError, LitePullConsumer, PushConsumer, type MessageExt } from '../../lib/consumer/index.js';
import { litePullConsumerImpl } from '../../lib/consumer/lite-pull/lite-pull-consumer.js';
import { brokerOffsets, produce, uniqueName, withBroker } from './helpers.js';

const broker = await withBroker();
t.teardown(() => broker.close());

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Per queue, the offset after the last message the loop took (what must be committed). */
function nextPerQueue(taken: MessageExt[]): Map<number, number> {
  const m = new Map<number, number>();
  for (const msg of taken) m.set(msg.queueId, Math.max(m.get(msg.queueId) ?? 0, msg.queueOffset + 1));
  return m;
}

/** Messages taken from each queue form a prefix 0..n-1 of it (nothing skipped, nothing twice). */
function assertPrefixes(t: Test, taken: MessageExt[]): void {
  const byQueue = new Map<number, number[]>();
  for (const m of taken) byQueue.set(m.queueId, [...(byQueue.get(m.queueId) ?? []), m.queueOffset]);
  for (const [q, offs] of byQueue)
    t.same(
      offs,
      offs.map((_, i) => i),
      `queue ${q}: offsets 0..${offs.length - 1} in order`,
    );
}

async function assertCommitted(t: Test, topic: string, group: string, taken: MessageExt[]): Promise<void> {
  const want = nextPerQueue(taken);
  for (const r of await brokerOffsets(broker.namesrv, topic, group)) {
    const expected = want.get(r.queueId);
    if (expected === undefined)
      t.ok(r.committed <= 0, `queue ${r.queueId}: nothing taken, nothing committed past 0 (${r.committed})`);
    else
      t.equal(
        r.committed,
        expected,
        `queue ${r.queueId}: committed = the offset after the last message taken (${expected})`,
      );
  }
}

t.test('push consumer: a slow loop body holds the caches at the flow-control limit', async (t) => {
  const topic = uniqueName('T');
  const group = uniqueName('cg');
  await produce(broker.namesrv, topic, 2000);
  const c = new PushConsumer({
    consumerGroup: group,
    namesrvAddr: broker.namesrv,
    consumeFromWhere: 'first',
    pullThresholdForQueue: 100,
  });
  c.subscribe(topic);
  let maxCached = 0;
  let n = 0;
  for await (const msg of c.messages()) {
    void msg;
    await tick(2);
    for (const q of c.stats().queues) maxCached = Math.max(maxCached, q.cachedCount);
    if (++n === 150) break;
  }
  const parked = c.stats();
  t.equal(c.state, 'SHUTDOWN', 'break shut the consumer down');
  t.ok(maxCached > 100, `the cache reached the limit (${maxCached})`);
  t.ok(maxCached <= 100 + 32, `and never went past it by more than one pull (${maxCached} ≤ 100 + pullBatchSize)`);
  t.ok(parked.messagesPulled < 2000, `not everything was pulled (${parked.messagesPulled} of 2000)`);
});

t.test(
  'push consumer: a loop broken after 100 of 1000 messages commits exactly the next message per queue',
  async (t) => {
    const topic = uniqueName('T');
    const group = uniqueName('cg');
    await produce(broker.namesrv, topic, 1000);
    const c = new PushConsumer({ consumerGroup: group, namesrvAddr: broker.namesrv, consumeFromWhere: 'first' });
    c.subscribe(topic);
    const taken: MessageExt[] = [];
    for await (const msg of c.messages()) {
      if (taken.length === 100) break; // this one (the 101st) is not consumed
      taken.push(msg);
    }
    t.equal(taken.length, 100);
    assertPrefixes(t, taken);
    await assertCommitted(t, topic, group, taken);
    t.equal(c.stats().messagesFailed, 0, 'nothing counted as failed (so nothing sent back)');

    // The next member of the group starts exactly there: the 900 others, none of the 100 again.
    const d = new PushConsumer({ consumerGroup: group, namesrvAddr: broker.namesrv, consumeFromWhere: 'first' });
    d.subscribe(topic);
    const rest = new Set<string>();
    const first100 = new Set(taken.map((m) => m.body.toString()));
    let again = 0;
    for await (const msg of d.messages()) {
      if (first100.has(msg.body.toString())) again++;
      rest.add(msg.body.toString());
      if (rest.size === 900) break;
    }
    t.equal(again, 0, 'none of the 100 taken is delivered again');
    t.equal(rest.size, 900, 'the 900 others are');
  },
);

t.test(
  'push consumer: a throw ends the iteration, shuts down, and the message it was on is delivered again',
  async (t) => {
    const topic = uniqueName('T');
    const group = uniqueName('cg');
    await produce(broker.namesrv, topic, 50, undefined, { single: true });
    const c = new PushConsumer({ consumerGroup: group, namesrvAddr: broker.namesrv, consumeFromWhere: 'first' });
    c.subscribe(topic);
    const taken: MessageExt[] = [];
    await t.rejects(
      (async () => {
        for await (const msg of c.messages()) {
          if (taken.length === 10) throw new Error('boom');
          taken.push(msg);
        }
      })(),
      /boom/,
    );
    t.equal(c.state, 'SHUTDOWN');
    await assertCommitted(t, topic, group, taken);
    await t.rejects(c.messages().next(), ConsumerStateError, 'a consumer already used cannot be iterated again');
  },
);

t.test("push consumer: batches() yields a handler call's messages", async (t) => {
  const topic = uniqueName('T');
  const group = uniqueName('cg');
  await produce(broker.namesrv, topic, 40);
  const c = new PushConsumer({
    consumerGroup: group,
    namesrvAddr: broker.namesrv,
    consumeFromWhere: 'first',
    consumeMessageBatchMaxSize: 8,
  });
  c.subscribe(topic);
  const seen = new Set<string>();
  const batches: MessageExt[][] = [];
  for await (const batch of c.batches()) {
    batches.push(batch);
    for (const m of batch) seen.add(m.body.toString());
    if (seen.size === 40) break;
  }
  const largest = Math.max(...batches.map((b) => b.length));
  t.equal(seen.size, 40);
  t.ok(largest > 1 && largest <= 8, `batches of up to consumeMessageBatchMaxSize (${largest})`);
  // The loop broke on the last batch without moving past it: every batch but that one is committed.
  await assertCommitted(t, topic, group, batches.slice(0, -1).flat());
});

t.test('lite pull consumer: a slow loop body stops the pull-ahead at its limits', async (t) => {
  const topic = uniqueName('T');
  const group = uniqueName('cg');
  await produce(broker.namesrv, topic, 2000);
  const c = new LitePullConsumer({
    consumerGroup: group,
    namesrvAddr: broker.namesrv,
    consumeFromWhere: 'first',
    pullThresholdForQueue: 100,
  });
  c.subscribe(topic);
  const impl = litePullConsumerImpl(c);
  let maxCached = 0;
  let n = 0;
  for await (const msg of c.messages()) {
    void msg;
    await tick(2);
    for (const q of impl.cacheStats().queues) maxCached = Math.max(maxCached, q.cachedMessages);
    if (++n === 150) break;
  }
  t.equal(c.state, 'SHUTDOWN');
  t.ok(
    maxCached > 100 && maxCached <= 100 + 10,
    `the cache stayed at the limit (${maxCached}: 100 + at most one pullBatchSize)`,
  );
  t.ok(impl.counters.parks.count > 0, 'pulls were parked by flow control');
  t.ok(impl.counters.messagesPulled < 2000, `not everything was pulled (${impl.counters.messagesPulled})`);
});

t.test(
  'lite pull consumer: a loop broken after 100 of 1000 messages commits exactly the next message per queue',
  async (t) => {
    const topic = uniqueName('T');
    const group = uniqueName('cg');
    await produce(broker.namesrv, topic, 1000);
    const c = new LitePullConsumer({ consumerGroup: group, namesrvAddr: broker.namesrv, consumeFromWhere: 'first' });
    c.subscribe(topic);
    const taken: MessageExt[] = [];
    for await (const msg of c.messages()) {
      if (taken.length === 100) break;
      taken.push(msg);
    }
    assertPrefixes(t, taken);
    await assertCommitted(t, topic, group, taken);

    const d = new LitePullConsumer({ consumerGroup: group, namesrvAddr: broker.namesrv, consumeFromWhere: 'first' });
    d.subscribe(topic);
    const first100 = new Set(taken.map((m) => m.body.toString()));
    const rest = new Set<string>();
    let again = 0;
    for await (const batch of d.batches()) {
      for (const m of batch) {
        if (first100.has(m.body.toString())) again++;
        rest.add(m.body.toString());
      }
      if (rest.size === 900) break;
    }
    t.equal(again, 0, 'none of the 100 again');
    t.equal(rest.size, 900, 'the 900 others');
  },
);
