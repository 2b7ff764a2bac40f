// Heartbeat V2 (RocketMQ 5.x, Java's useHeartbeatV2) against the embedded broker: the broker's
// answers as Java's ClientManageProcessor gives them, and a rocketwire consumer that leaves its
// subscriptions out of its heartbeats while they are unchanged, keeps consuming, and sends them
// again when they change, when it rebalances and when the broker comes back from a restart.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { startBroker, type EmbeddedBroker } from '../../lib/broker/index.js';
import { MQClientInstance } from '../../lib/client/index.js';
import { ConsumeConcurrentlyStatus, PushConsumer, type PushConsumerOptions } from '../../lib/consumer/index.js';
import { pushConsumerImpl } from '../../lib/consumer/push/push-consumer.js';
import {
  buildSubscriptionData,
  computeHeartbeatFingerprint,
  Operations,
  type HeartbeatData,
} from '../../protocol/internal.js';
import { createTopic, produce, withBroker } from '../support/embedded-broker.js';
import { uniqueName } from '../support/names.js';
import { until } from '../support/until.js';

const fast: Partial<PushConsumerOptions> = {
  consumeFromWhere: 'first',
  rebalanceIntervalMs: 300,
  persistOffsetIntervalMs: 200,
  pullTimeDelayMillsWhenException: 200,
};

function heartbeat(group: string, topics: string[], v2: { fingerprint?: number; withoutSub?: boolean } = {}) {
  const hb: HeartbeatData = {
    clientID: '127.0.0.1@hbv2-test',
    consumerDataSet: [
      {
        groupName: group,
        consumeType: 'CONSUME_PASSIVELY',
        messageModel: 'CLUSTERING',
        consumeFromWhere: 'CONSUME_FROM_LAST_OFFSET',
        subscriptionDataSet: v2.withoutSub ? [] : topics.map((topic) => buildSubscriptionData(topic, '*', 1)),
        unitMode: false,
      },
    ],
    producerDataSet: [{ groupName: 'CLIENT_INNER_PRODUCER' }],
  };
  if (v2.fingerprint !== undefined) hb.heartbeatFingerprint = v2.fingerprint;
  if (v2.withoutSub !== undefined) hb.withoutSub = v2.withoutSub;
  return hb;
}

function subscribedTopics(broker: EmbeddedBroker, group: string): string[] {
  return [...(broker.instances[0]!.consumers.find(group)?.subscriptions.keys() ?? [])].sort();
}

t.test('the fingerprint ignores the client id and subVersions and follows the subscriptions', async (t) => {
  const a = heartbeat('g', ['T1', 'T2']);
  const b = { ...heartbeat('g', ['T2', 'T1']), clientID: 'other@x' };
  for (const s of b.consumerDataSet[0]!.subscriptionDataSet) s.subVersion = 99;
  t.equal(computeHeartbeatFingerprint(a), computeHeartbeatFingerprint(b), 'same subscriptions, same fingerprint');
  t.not(computeHeartbeatFingerprint(a), computeHeartbeatFingerprint(heartbeat('g', ['T1'])), 'a topic fewer');
  t.not(computeHeartbeatFingerprint(a), 0, 'never the "no V2" value for these');
});

t.test('the embedded broker answers V1 and V2 heartbeats as Java 5.x does', async (t) => {
  const broker = await withBroker();
  const inst = MQClientInstance.acquire({ namesrvAddr: broker.namesrv, instanceName: uniqueName('raw') });
  t.teardown(async () => {
    await inst.release();
    await broker.close();
  });
  const send = async (hb: HeartbeatData) => (await inst.call(broker.broker, Operations.HEART_BEAT, {}, hb)).header;

  t.same(await send(heartbeat('g1', ['A'])), { isSupportHeartBeatV2: true, isSubChange: true }, 'V1: always a change');

  const g = 'g2';
  t.same(await send(heartbeat(g, ['A'], { fingerprint: 11, withoutSub: false })), {
    isSupportHeartBeatV2: true,
    isSubChange: false,
  });
  t.same(subscribedTopics(broker, g), ['A'], 'the full V2 heartbeat registered the subscription');
  t.same(await send(heartbeat(g, [], { fingerprint: 11, withoutSub: true })), {
    isSupportHeartBeatV2: true,
    isSubChange: false,
  });
  t.same(subscribedTopics(broker, g), ['A'], 'the heartbeat without subscriptions kept them');
  t.same(
    await send(heartbeat(g, [], { fingerprint: 12, withoutSub: true })),
    { isSupportHeartBeatV2: true, isSubChange: true },
    'another fingerprint is a change',
  );
  t.same(await send(heartbeat(g, ['A', 'B'], { fingerprint: 12, withoutSub: false })), {
    isSupportHeartBeatV2: true,
    isSubChange: false,
  });
  t.same(subscribedTopics(broker, g), ['A', 'B'], 'the full heartbeat with the new fingerprint replaced them');
  t.same(
    await send(heartbeat('g3', [], { fingerprint: 11, withoutSub: true })),
    { isSupportHeartBeatV2: true, isSubChange: true },
    'no subscriptions for a group this broker does not know: asks for the full data',
  );
});

t.test(
  'a V2 consumer sends its subscriptions once, keeps consuming, and sends them again when they change',
  async (t) => {
    const broker = await withBroker();
    const topic = uniqueName('T');
    const topic2 = uniqueName('T2');
    const group = uniqueName('cg');
    await createTopic(broker.brokers, topic, 4);
    await createTopic(broker.brokers, topic2, 4);
    const seen = new Set<string>();
    const c = new PushConsumer({ consumerGroup: group, namesrvAddr: broker.namesrv, useHeartbeatV2: true, ...fast });
    c.subscribe(topic);
    await c.start((msgs) => {
      for (const m of msgs) seen.add(m.body.toString());
      return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
    });
    t.teardown(async () => {
      await c.shutdown();
      await broker.close();
    });
    const inst = pushConsumerImpl(c).instance!;
    const stats = inst.heartbeatStats;
    await inst.sendHeartbeat();
    await inst.sendHeartbeat();
    t.ok(stats.withoutSub >= 1, 'unchanged subscriptions: heartbeats without them');
    t.same(subscribedTopics(broker, group), [`%RETRY%${group}`, topic].sort(), 'the broker kept the subscriptions');
    await produce(broker.namesrv, topic, 50, (i) => ({ body: `a${i}` }));
    await until(
      () => seen.size === 50,
      () => `50 messages (${seen.size})`,
    );

    const full = stats.full;
    c.subscribe(topic2, '*');
    // the client counts a heartbeat once its answer is read, a moment after the broker took it
    await until(
      () => subscribedTopics(broker, group).includes(topic2) && stats.full > full,
      'the new subscription at the broker, sent in full',
    );
    t.ok(stats.full > full, 'the changed subscription went out in full');
    await produce(broker.namesrv, topic2, 20, (i) => ({ body: `b${i}` }));
    await until(
      () => seen.size === 70,
      () => `the new topic's 20 messages (${seen.size})`,
    );
    const lean = stats.withoutSub;
    await inst.sendHeartbeat();
    t.equal(stats.withoutSub, lean + 1, 'and then heartbeats without them again');
  },
);

t.test('a rebalance sends the full data, so the broker learns the new subVersion', async (t) => {
  const broker = await withBroker();
  const topic = uniqueName('T');
  const group = uniqueName('cg');
  await createTopic(broker.brokers, topic, 4);
  const opts = { consumerGroup: group, namesrvAddr: broker.namesrv, useHeartbeatV2: true, ...fast };
  const a = new PushConsumer(opts);
  a.subscribe(topic);
  await a.start(() => ConsumeConcurrentlyStatus.CONSUME_SUCCESS);
  const b = new PushConsumer({ ...opts, instanceName: uniqueName('b') });
  t.teardown(async () => {
    await a.shutdown();
    await b.shutdown();
    await broker.close();
  });
  const owned = (c: PushConsumer<boolean>) => c.assignment().filter((mq) => mq.topic === topic).length;
  await until(() => owned(a) === 4, 'a owns the four queues');
  const inst = pushConsumerImpl(a).instance!;
  await inst.sendHeartbeat();
  const full = inst.heartbeatStats.full;
  b.subscribe(topic);
  await b.start(() => ConsumeConcurrentlyStatus.CONSUME_SUCCESS);
  await until(() => owned(a) === 2 && owned(b) === 2, 'two queues each');
  await until(() => inst.heartbeatStats.full > full, "a's rebalance sent a full heartbeat");
  const atBroker = () => broker.instances[0]!.consumers.find(group)!.subscriptions.get(topic)!.subVersion;
  const mine = () =>
    pushConsumerImpl(a)
      .subscriptions()
      .find((s) => s.topic === topic)!.subVersion;
  await until(() => atBroker() >= mine(), 'the broker holds the subVersion a pulls with');
  t.pass('the broker holds the subVersion a pulls with');
});

t.test('a broker restart: the new connection gets the full data and consuming goes on', async (t) => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'rw-hbv2-restart-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  let broker = await startBroker({ queues: 4, dataDir });
  const namesrvPort = Number(broker.namesrv.split(':')[1]);
  const brokerPort = Number(broker.broker.split(':')[1]);
  const topic = uniqueName('T');
  const group = uniqueName('cg');
  await createTopic(broker.brokers, topic, 4);
  const seen = new Set<string>();
  // heartbeat rounds every 30 s (the default): only the heartbeat on the new connection can
  // bring the subscription back in time
  const c = new PushConsumer({
    consumerGroup: group,
    namesrvAddr: broker.namesrv,
    useHeartbeatV2: true,
    ...fast,
    pollNameServerIntervalMs: 300,
  });
  c.subscribe(topic);
  await c.start((msgs) => {
    for (const m of msgs) seen.add(m.body.toString());
    return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
  });
  t.teardown(async () => {
    await c.shutdown();
    await broker.close();
  });
  const inst = pushConsumerImpl(c).instance!;
  await inst.sendHeartbeat();
  await inst.sendHeartbeat();
  t.ok(inst.heartbeatStats.withoutSub >= 1, 'heartbeats without subscriptions before the restart');
  await produce(broker.namesrv, topic, 20, (i) => ({ body: `a${i}` }));
  await until(() => seen.size === 20, 'the first 20');
  await broker.close();
  await until(() => c.stats().pullErrors > 0, 'a pull failing while the broker is away');
  broker = await startBroker({ queues: 4, dataDir, namesrvPort, brokerPort });
  await until(() => subscribedTopics(broker, group).includes(topic), 'the subscription at the restarted broker');
  // Java's client would have left them out (and the restarted broker, like Apache's, would then
  // hold no subscription for the group until it answered IS_SUB_CHANGE and the next round came)
  t.equal(
    broker.instances[0]!.consumers.heartbeats.withoutSub,
    0,
    'the first heartbeat on the new connection carried the subscriptions',
  );
  await produce(broker.namesrv, topic, 20, (i) => ({ body: `b${i}` }));
  await until(
    () => seen.size === 40,
    () => `the 20 sent after the restart (${seen.size})`,
    20_000,
  );
});

t.test('a V1 consumer (the default) sends its subscriptions every time', async (t) => {
  const broker = await withBroker();
  const topic = uniqueName('T');
  await createTopic(broker.brokers, topic, 4);
  const c = new PushConsumer({ consumerGroup: uniqueName('cg'), namesrvAddr: broker.namesrv, ...fast });
  c.subscribe(topic);
  await c.start(() => ConsumeConcurrentlyStatus.CONSUME_SUCCESS);
  t.teardown(async () => {
    await c.shutdown();
    await broker.close();
  });
  const inst = pushConsumerImpl(c).instance!;
  await inst.sendHeartbeat();
  await inst.sendHeartbeat();
  t.equal(inst.heartbeatStats.withoutSub, 0);
  t.ok(inst.heartbeatStats.full >= 2);
});
