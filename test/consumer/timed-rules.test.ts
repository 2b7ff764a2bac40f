// The consumer's timed rules on a ManualClock shared by the consumer (and its client instance) and
// the embedded broker: each test moves time to 1 ms before the rule's moment, shows nothing happened,
// moves 1 ms more and waits (on the event, in real time) for what a user would see: requests on the
// wire, messages sent back, pulls resumed. A wrong period fails the "nothing yet" or the "now" half.
import t, { type Test } from 'tap';
import { ManualClock } from '../../lib/clock.js';
import { startBroker } from '../../lib/broker/index.js';
import { PushConsumer, type MessageExt, type PushConsumerOptions } from '../../lib/consumer/index.js';
import { RemotingClient } from '../../lib/remoting/index.js';
import { RequestCode } from '../../protocol/index.js';
import { produce, uniqueName, until } from './helpers.js';
import { quiet, spyOnBroker, type Seen } from './broker-spy.js';

async function setup(
  t: Test,
  opts: Partial<PushConsumerOptions> & { messages?: number },
  handler: (msgs: MessageExt[]) => unknown,
) {
  const clock = new ManualClock();
  const broker = await startBroker({ queues: 4, clock });
  t.teardown(() => broker.close());
  const probe = new RemotingClient();
  t.teardown(() => probe.close());
  const topic = uniqueName('T');
  const group = uniqueName('cg');
  await produce(broker.namesrv, topic, opts.messages ?? 4);
  const seen = spyOnBroker(broker, clock);
  const { messages: _m, ...rest } = opts;
  const consumer = new PushConsumer({
    consumerGroup: group,
    namesrvAddr: broker.namesrv,
    consumeFromWhere: 'first',
    clock,
    ...rest,
  });
  consumer.subscribe(topic);
  await (consumer as PushConsumer<boolean>).start(handler as never);
  t.teardown(() => consumer.shutdown());
  const count = (code: number, where: (s: Seen) => boolean = () => true): number =>
    seen.filter((s) => s.code === code && where(s)).length;
  const ofGroup = (s: Seen) => s.ext.consumerGroup === group || s.ext.group === group;
  await quiet(broker, probe);
  return { clock, broker, probe, topic, group, consumer, seen, count, ofGroup, quiet: () => quiet(broker, probe) };
}

t.test(
  'rebalance every 20 s (one GET_CONSUMER_LIST_BY_GROUP a round for both topics, retry topic included)',
  async (t) => {
    const s = await setup(t, {}, () => 'CONSUME_SUCCESS');
    const list = () => s.count(RequestCode.GET_CONSUMER_LIST_BY_GROUP, s.ofGroup);
    await until(() => s.consumer.stats().messagesConsumed === 4, '4 messages');
    await s.quiet();
    const n0 = list();
    t.ok(n0 >= 1, 'the first rebalance asked for the group');
    s.clock.advance(19_999);
    await s.quiet();
    t.equal(list(), n0, 'nothing at 19.999 s');
    s.clock.advance(1);
    await until(() => list() === n0 + 1, 'the 20 s rebalance');
    await s.quiet();
    s.clock.advance(19_999);
    await s.quiet();
    t.equal(list(), n0 + 1, 'nothing 19.999 s after it');
    s.clock.advance(1);
    await until(() => list() === n0 + 2, 'the next one 20 s later');
  },
);

t.test('client instance: heartbeat 1 s after start, then every 30 s', async (t) => {
  const s = await setup(t, {}, () => 'CONSUME_SUCCESS');
  const beats = () => s.count(RequestCode.HEART_BEAT);
  const h0 = beats();
  s.clock.advance(999);
  await s.quiet();
  t.equal(beats(), h0, 'nothing at 0.999 s');
  s.clock.advance(1);
  await until(() => beats() === h0 + 1, 'the first scheduled heartbeat at 1 s');
  await s.quiet();
  s.clock.advance(29_999);
  await s.quiet();
  t.equal(beats(), h0 + 1, 'nothing 29.999 s later');
  s.clock.advance(1);
  await until(() => beats() === h0 + 2, 'the heartbeat 30 s after the first');
});

t.test(
  'offsets are flushed (UPDATE_CONSUMER_OFFSET) 5 s after start and every 5 s, and reach the broker',
  async (t) => {
    const s = await setup(t, {}, () => 'CONSUME_SUCCESS');
    await until(() => s.consumer.stats().messagesConsumed === 4, '4 messages');
    const flushes = () => s.seen.filter((x) => x.code === RequestCode.UPDATE_CONSUMER_OFFSET && s.ofGroup(x));
    t.equal(flushes().length, 0);
    s.clock.advance(4_999);
    await s.quiet();
    t.equal(flushes().length, 0, 'nothing at 4.999 s');
    s.clock.advance(1);
    await until(() => flushes().length > 0, 'the first flush at 5 s');
    await s.quiet();
    const first = flushes();
    t.ok(
      first.every((x) => x.at === first[0]!.at),
      'one flush, all queues at once',
    );
    const ofTopic = first.filter((x) => x.ext.topic === s.topic);
    t.same(new Set(ofTopic.map((x) => x.ext.queueId)).size, ofTopic.length, 'one UPDATE_CONSUMER_OFFSET per queue');
    t.ok(ofTopic.length >= 1 && ofTopic.length <= 4, `for the held queues of the topic (${ofTopic.length})`);
    t.equal(
      ofTopic.reduce((a, x) => a + Number(x.ext.commitOffset), 0),
      4,
      'the committed offsets cover the 4 messages',
    );
    s.clock.advance(4_999);
    await s.quiet();
    t.equal(flushes().length, first.length, 'nothing 4.999 s later');
    s.clock.advance(1);
    await until(() => flushes().length === 2 * first.length, 'the next flush 5 s later');
  },
);

t.test(
  'flow control: a pull over the cache limit is parked 50 ms, and resumed at once when the cache drains',
  async (t) => {
    const release: (() => void)[] = [];
    const s = await setup(
      t,
      { pullThresholdForQueue: 1, messages: 8 },
      () => new Promise((r) => release.push(() => r('CONSUME_SUCCESS'))),
    );
    const pauses = () => s.consumer.stats().flowControlPauses.count;
    const pullsOfTopic = () => s.count(RequestCode.PULL_MESSAGE, (x) => x.ext.topic === s.topic);
    await until(() => pauses() > 0, 'the queues holding more than 1 message parked');
    await s.quiet();
    const parked = pauses();
    t.equal(
      parked,
      s.consumer.stats().queues.filter((q) => q.cachedCount > 1).length,
      'one park per queue over the limit',
    );
    const pulls = pullsOfTopic();
    s.clock.advance(49);
    await s.quiet();
    t.equal(pauses(), parked, 'still parked at 49 ms');
    s.clock.advance(1);
    await until(() => pauses() === 2 * parked, 'each re-checked at 50 ms and parked again');
    await s.quiet();
    t.equal(pullsOfTopic(), pulls, 'no pull was sent while over the limit');
    for (const r of release.splice(0)) r();
    await until(
      () => pullsOfTopic() === pulls + parked,
      'every parked queue pulls again as soon as its cache drained, without the clock moving',
    );
    await until(() => s.consumer.stats().messagesConsumed === 8, '8 messages');
  },
);

t.test(
  'consume timeout: the sweep every 15 min sends back a message whose handler started more than 15 min ago',
  async (t) => {
    const s = await setup(t, { messages: 1 }, () => new Promise(() => undefined));
    await until(() => s.consumer.stats().consumeInFlight === 1, 'the handler is running');
    const sentBack = () =>
      s.seen.filter((x) => x.code === RequestCode.CONSUMER_SEND_MSG_BACK && x.ext.group === s.group);
    // Minutes go by in steps of 30 s, each let run, as real time would: in one jump no heartbeat or
    // long poll would happen in between, the broker would close the consumer's channel as idle, and
    // the heartbeat on its new connection would rebalance away queues whose last pull looks minutes old.
    const pass = async (ms: number): Promise<void> => {
      for (let left = ms; left > 0; left -= 30_000) {
        s.clock.advance(Math.min(30_000, left));
        await s.quiet();
      }
    };
    await pass(15 * 60_000);
    t.equal(sentBack().length, 0, 'the sweep at 15 min finds it started exactly 15 min ago: not expired');
    await pass(15 * 60_000 - 1);
    t.equal(sentBack().length, 0, 'no sweep before 30 min');
    s.clock.advance(1);
    await until(() => sentBack().length === 1, 'the 30 min sweep sends it back');
    t.equal(sentBack()[0]!.ext.delayLevel, '3', 'with delay level 3');
    await until(() => s.consumer.stats().expired === 1, 'counted as expired');
  },
);

t.test('orderly: LOCK_BATCH_MQ 1 s after start and every 20 s', async (t) => {
  const s = await setup(t, { orderly: true }, () => 'SUCCESS');
  const locks = () => s.count(RequestCode.LOCK_BATCH_MQ, (x) => x.ext.consumerGroup === undefined || s.ofGroup(x));
  await until(() => s.consumer.stats().messagesConsumed === 4, '4 messages');
  await s.quiet();
  const l0 = locks();
  s.clock.advance(999);
  await s.quiet();
  t.equal(locks(), l0, 'nothing at 0.999 s');
  s.clock.advance(1);
  await until(() => locks() === l0 + 1, 'the first renewal at 1 s (one request for the broker)');
  await s.quiet();
  s.clock.advance(19_999);
  await s.quiet();
  t.equal(locks(), l0 + 1, 'nothing 19.999 s later');
  s.clock.advance(1);
  await until(() => locks() === l0 + 2, 'the renewal 20 s after the first');
});

t.test('orderly: a queue whose lock was not renewed for 30 s stops consuming until it is locked again', async (t) => {
  const bodies: string[] = [];
  const s = await setup(t, { orderly: true, lockIntervalMs: 3_600_000, messages: 1 }, (msgs) => {
    for (const m of msgs) bodies.push(m.body.toString());
    return 'SUCCESS';
  });
  const locks = () => s.count(RequestCode.LOCK_BATCH_MQ);
  await until(() => bodies.length === 1, 'the message produced before start');
  bodies.length = 0;
  s.clock.advance(1_000);
  await until(() => locks() > 0, 'the renewal 1 s after start');
  await s.quiet();
  const l0 = locks();
  // Locked at 1 s; the next renewal would be an hour later.
  s.clock.advance(29_000);
  await s.quiet();
  await produce(s.broker.namesrv, s.topic, 1, () => ({ body: 'at 29 s' }));
  await until(() => bodies.length === 1, 'consumed with a 29 s old lock');
  s.clock.advance(1_000);
  await s.quiet();
  await produce(s.broker.namesrv, s.topic, 1, () => ({ body: 'at 30 s' }));
  await until(() => bodies.length === 2, 'consumed with a lock exactly 30 s old');
  s.clock.advance(1);
  await s.quiet();
  await produce(s.broker.namesrv, s.topic, 1, () => ({ body: 'at 30.001 s' }));
  await until(
    () => s.consumer.stats().queues.some((q) => q.topic === s.topic && q.cachedCount === 1),
    'the message is pulled',
  );
  await s.quiet();
  t.same(bodies, ['at 29 s', 'at 30 s'], 'not consumed with an expired lock');
  t.equal(locks(), l0, 'and the lock is asked for again only after 10 ms');
  s.clock.advance(10);
  await until(() => locks() === l0 + 1, 'LOCK_BATCH_MQ for the queue');
  await s.quiet();
  t.same(bodies.length, 2, 'still waiting for the 10 ms after the lock was granted');
  s.clock.advance(10);
  await until(() => bodies.length === 3, 'consumed once locked again');
});

t.test(
  'a queue with no pull for more than 120 s is dropped at the next rebalance and pulled again afresh',
  async (t) => {
    // Long polls of 200 s keep every pull in flight, so nothing refreshes lastPullTimestamp.
    const s = await setup(
      t,
      { brokerSuspendMaxTimeMs: 200_000, pullTimeoutMs: 300_000, messages: 1 },
      () => 'CONSUME_SUCCESS',
    );
    await until(() => s.consumer.stats().messagesConsumed === 1, 'the message');
    await s.quiet();
    const pullsOfTopic = () => s.count(RequestCode.PULL_MESSAGE, (x) => x.ext.topic === s.topic);
    const queries = () => s.count(RequestCode.QUERY_CONSUMER_OFFSET, (x) => x.ext.topic === s.topic);
    const p0 = pullsOfTopic();
    const q0 = queries();
    for (let i = 1; i <= 6; i++) {
      const rebalances = s.count(RequestCode.GET_CONSUMER_LIST_BY_GROUP, s.ofGroup);
      s.clock.advance(20_000);
      await until(() => s.count(RequestCode.GET_CONSUMER_LIST_BY_GROUP, s.ofGroup) === rebalances + 1, 'rebalance');
      await s.quiet();
      t.equal(pullsOfTopic(), p0, `rebalance at ${i * 20} s: queues kept (last pull ${i * 20} s ago)`);
    }
    t.equal(queries(), q0, 'no queue was re-created');
    s.clock.advance(20_000);
    await until(() => pullsOfTopic() === p0 + 4, 'the rebalance at 140 s drops the 4 idle queues and pulls them again');
    t.equal(queries(), q0 + 4, 'each re-created from the broker offset (QUERY_CONSUMER_OFFSET)');
  },
);
