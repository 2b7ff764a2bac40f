import t from 'tap';
import { ConsumeConcurrentlyStatus, PushConsumer } from '../../lib/consumer/index.js';
import { ManualClock } from '../../lib/clock.js';
import { RequestCode } from '../../protocol/index.js';
import { drained } from '../support/embedded-broker.js';
import { spyOnBroker } from './broker-spy.js';
import { brokerOffsets, produce, totalLag, uniqueName, until, withBroker } from './helpers.js';

t.test('offsets reach the broker by the pull piggyback alone (commit flag), without any flush', async (t) => {
  const broker = await withBroker();
  t.teardown(() => broker.close());
  const topic = uniqueName('T');
  const group = uniqueName('cg');
  await produce(broker.namesrv, topic, 300);
  // The flush interval is an hour: only FLAG_COMMIT_OFFSET on the next pull can carry the offsets.
  const c = new PushConsumer({
    consumerGroup: group,
    namesrvAddr: broker.namesrv,
    persistOffsetIntervalMs: 3_600_000,
    consumeFromWhere: 'first',
  });
  c.subscribe(topic);
  let n = 0;
  await c.start(() => {
    n++;
    return 'CONSUME_SUCCESS';
  });
  t.teardown(() => c.shutdown());
  await until(() => n === 300, 'all consumed');
  await until(
    async () => totalLag(await brokerOffsets(broker.namesrv, topic, group)) === 0,
    'broker offsets = max via piggyback',
  );
  t.pass('broker has every queue committed to its max');
});

t.test('the periodic flush commits what no pull can carry; without it the broker stays behind', async (t) => {
  const broker = await withBroker();
  t.teardown(() => broker.close());
  const topic = uniqueName('T');
  await produce(broker.namesrv, topic, 64);
  // The spy reads its clock only to stamp what it records.
  const seen = spyOnBroker(broker, new ManualClock(0));
  const pulledPast = (group: string, queueId: number, offset: number): boolean =>
    seen.some(
      (s) =>
        s.code === RequestCode.PULL_MESSAGE &&
        s.ext.consumerGroup === group &&
        s.ext.topic === topic &&
        Number(s.ext.queueId) === queueId &&
        Number(s.ext.queueOffset) > offset,
    );
  const run = async (group: string, persistOffsetIntervalMs: number): Promise<PushConsumer> => {
    const c = new PushConsumer({
      consumerGroup: group,
      namesrvAddr: broker.namesrv,
      persistOffsetIntervalMs,
      consumeFromWhere: 'first',
    });
    c.subscribe(topic);
    let n = 0;
    // The handler finishes after the next pull (a long poll that parks) was sent with the old offset.
    await c.start(async (msgs) => {
      const m = msgs[0]!;
      await until(() => pulledPast(group, m.queueId, m.queueOffset), 'the next pull of its queue at the broker');
      n++;
      return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
    });
    await until(() => n === 64, 'all consumed');
    return c;
  };
  const flushed = uniqueName('cg');
  const c1 = await run(flushed, 150);
  t.teardown(() => c1.shutdown());
  await until(
    async () => totalLag(await brokerOffsets(broker.namesrv, topic, flushed)) === 0,
    'flushed offsets reach the broker',
  );
  const unflushed = uniqueName('cg');
  const c2 = await run(unflushed, 3_600_000);
  t.teardown(() => c2.shutdown());
  // Every handler returned after the pull past its message reached the broker: the last pull is
  // parked there with the offsets of before, and no flush comes within the hour. Once the consumer
  // has taken in the last handler's result, nothing can move the broker's offsets.
  const done = () => c2.stats().queues.filter((q) => q.topic === topic && q.pulledOffset > 0);
  await until(
    () => done().length > 0 && done().every((q) => q.committedOffset === q.pulledOffset),
    'the consumer done with every message',
  );
  t.ok(
    totalLag(await brokerOffsets(broker.namesrv, topic, unflushed)) > 0,
    'without a flush the parked pull carried a stale offset',
  );
  const held = c2.stats().queues.filter((q) => q.topic === topic && q.pulledOffset > 0);
  t.ok(held.length > 0 && held.every((q) => q.committedOffset === q.pulledOffset), 'the consumer itself is done');
  await c2.shutdown();
  t.equal(totalLag(await brokerOffsets(broker.namesrv, topic, unflushed)), 0, 'shutdown persists the offsets');
});

t.test(
  'a restarted group resumes from the committed offsets (QUERY_CONSUMER_OFFSET), not from first/last',
  async (t) => {
    const broker = await withBroker();
    t.teardown(() => broker.close());
    const topic = uniqueName('T');
    const group = uniqueName('cg');
    await produce(broker.namesrv, topic, 100, (i) => ({ body: `a${i}` }));
    const seen1: string[] = [];
    const c1 = new PushConsumer({ consumerGroup: group, namesrvAddr: broker.namesrv, consumeFromWhere: 'first' });
    c1.subscribe(topic);
    await c1.start((msgs) => {
      for (const m of msgs) seen1.push(m.body.toString());
      return 'CONSUME_SUCCESS';
    });
    await until(() => seen1.length === 100, 'first run');
    await c1.shutdown();
    await produce(broker.namesrv, topic, 50, (i) => ({ body: `b${i}` }));
    const seen2: string[] = [];
    const c2 = new PushConsumer({ consumerGroup: group, namesrvAddr: broker.namesrv, consumeFromWhere: 'first' });
    c2.subscribe(topic);
    await c2.start((msgs) => {
      for (const m of msgs) seen2.push(m.body.toString());
      return 'CONSUME_SUCCESS';
    });
    t.teardown(() => c2.shutdown());
    await until(() => seen2.length >= 50, 'second run');
    await until(() => drained(c2, broker.namesrv, group, [topic]), 'every queue pulled to its end and consumed');
    t.equal(seen2.length, 50, 'nothing consumed twice');
    t.ok(
      seen2.every((b) => b.startsWith('b')),
      'only the new messages',
    );
  },
);
