// Heartbeat V2 with the real Apache RocketMQ 5.3.3 broker: a rocketwire push consumer with
// useHeartbeatV2 sends its subscriptions once, then heartbeats without them that the broker takes
// (IS_SUPPORT_HEART_BEAT_V2, no IS_SUB_CHANGE); the broker keeps the subscription (mqadmin's
// consumerConnection view), two members split the queues and consume everything, and a new
// subscription goes out in full and shows at the broker.
import t from 'tap';
import { AdminClient } from '../../lib/admin/index.js';
import { PushConsumer, type PushConsumerOptions } from '../../lib/consumer/index.js';
import { pushConsumerImpl } from '../../lib/consumer/push/push-consumer.js';
import { Producer } from '../../lib/producer/index.js';
import { until } from '../consumer/helpers.js';
import { startRealCluster, V5_VERSION } from './harness.js';
import { interopReady } from './skip.js';

t.setTimeout(180_000);

if (await interopReady(t, [V5_VERSION])) {
  const cluster = await startRealCluster({ version: V5_VERSION });
  t.teardown(() => cluster.stop({ graceful: false }));
  const topic = 'HbV2Topic';
  const topic2 = 'HbV2Topic2';
  const group = 'rw_hbv2_cg';
  await cluster.createTopic(topic, { queues: 4 });
  await cluster.createTopic(topic2, { queues: 4 });

  t.test('a V2 consumer keeps its subscription at the broker, rebalances, and re-sends a changed one', async (t) => {
    const admin = new AdminClient({ namesrvAddr: cluster.namesrv, mqClientApiTimeoutMs: 10_000 });
    t.teardown(() => admin.close());
    const subscribed = async () => {
      const c = await admin.consumerConnection(group).catch(() => null);
      return c ? Object.keys(c.subscriptionTable).sort() : [];
    };
    const seen = new Map<string, number>();
    const opts: PushConsumerOptions = {
      consumerGroup: group,
      namesrvAddr: cluster.namesrv,
      consumeFromWhere: 'first',
      useHeartbeatV2: true,
      rebalanceIntervalMs: 1000,
    };
    const members = [new PushConsumer(opts), new PushConsumer({ ...opts, instanceName: 'hbv2-b' })];
    for (const c of members) {
      c.subscribe(topic);
      await c.start((msgs) => {
        for (const m of msgs) seen.set(m.body.toString(), (seen.get(m.body.toString()) ?? 0) + 1);
        return 'CONSUME_SUCCESS';
      });
    }
    t.teardown(() => Promise.all(members.map((c) => c.shutdown())));
    const inst = pushConsumerImpl(members[0]!).instance!;
    await until(
      () => members.every((c) => c.assignment().filter((mq) => mq.topic === topic).length === 2),
      'two queues each',
      60_000,
    );
    const lean = inst.heartbeatStats.withoutSub;
    await inst.sendHeartbeat();
    await inst.sendHeartbeat();
    t.ok(inst.heartbeatStats.withoutSub >= lean + 1, 'the broker took heartbeats without subscriptions');
    t.same(await subscribed(), [`%RETRY%${group}`, topic].sort(), 'and kept the subscription');

    const producer = new Producer({ group: 'rw_hbv2_pg', namesrvAddr: cluster.namesrv });
    await producer.start();
    t.teardown(() => producer.shutdown());
    for (let i = 0; i < 200; i += 50)
      await producer.sendBatch(Array.from({ length: 50 }, (_, k) => ({ topic, body: `a${i + k}` })));
    await until(
      () => seen.size === 200,
      () => `200 consumed (${seen.size})`,
      60_000,
    );
    t.ok(
      [...seen.values()].every((n) => n === 1),
      'each message once',
    );

    const full = inst.heartbeatStats.full;
    for (const c of members) c.subscribe(topic2);
    await until(async () => (await subscribed()).includes(topic2), 'the new subscription at the broker', 60_000);
    t.ok(inst.heartbeatStats.full > full, 'the changed subscription went out in full');
    await until(
      () => members.every((c) => c.assignment().filter((mq) => mq.topic === topic2).length === 2),
      'the new topic split two queues each',
      60_000,
    );
    for (let i = 0; i < 100; i += 50)
      await producer.sendBatch(Array.from({ length: 50 }, (_, k) => ({ topic: topic2, body: `b${i + k}` })));
    await until(
      () => seen.size === 300,
      () => `the new topic's 100 consumed (${seen.size})`,
      60_000,
    );
    const after = inst.heartbeatStats.withoutSub;
    await inst.sendHeartbeat();
    t.equal(inst.heartbeatStats.withoutSub, after + 1, 'and then heartbeats without subscriptions again');
  });
}
