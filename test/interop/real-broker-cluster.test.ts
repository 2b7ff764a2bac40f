// Two real 5.3.3 brokers in one cluster, started with the ROCKETMQ (binary) header encoding: routes
// over both, messages over all 8 queues, a broker stopped and started again on the same store, and
// rocketwire's producer and consumer (ROCKETMQ-encoded requests too) over both brokers.
import t from 'tap';
import { PushConsumer } from '../../lib/consumer/index.js';
import { Producer } from '../../lib/producer/index.js';
import { createRequest, RequestCode, ResponseCode } from '../../protocol/index.js';
import { CLUSTER_NAME, delay, startRealCluster, V5_VERSION } from './harness.js';
import { javaOffsets, javaProduce, startJavaConsumer } from './java-client.js';
import { interopReady } from './skip.js';

t.setTimeout(300_000);

if (await interopReady(t, [V5_VERSION])) {
  const cluster = await startRealCluster({ version: V5_VERSION, brokers: 2, serializeType: 'ROCKETMQ' });
  t.teardown(() => cluster.stop({ graceful: false }));
  t.comment(`brokers ${cluster.brokers.join(', ')} booted in ${cluster.bootMs.brokers.join(', ')} ms`);

  t.test('route and encoding', async (t) => {
    const route = await cluster.createTopic('InteropTwo', { queues: 4 });
    t.same(route.brokerDatas.map((b) => b.brokerName).sort(), ['broker-a', 'broker-b']);
    t.same(
      route.queueDatas.map((q) => q.writeQueueNums),
      [4, 4],
    );
    for (const addr of cluster.brokers) {
      const res = await cluster.invoke(
        addr,
        createRequest(RequestCode.GET_MAX_OFFSET, { extFields: { topic: 'InteropTwo', queueId: '0' } }),
      );
      t.equal(res.code, ResponseCode.SUCCESS);
      t.equal(
        res.serializeType,
        'ROCKETMQ',
        `${addr} answers a JSON request in its configured ROCKETMQ encoding (5.x)`,
      );
      t.equal(res.extFields?.offset, '0');
    }
    const cluserRoute = await cluster.invoke(
      cluster.namesrv,
      createRequest(RequestCode.GET_ROUTEINFO_BY_TOPIC, { extFields: { topic: CLUSTER_NAME } }),
    );
    t.equal(cluserRoute.serializeType, 'JSON', 'the name server keeps JSON (the option applies to brokers)');
  });

  t.test(
    'Java producer and consumer over both brokers; a broker restarted keeps its messages; rocketwire rides it out',
    async (t) => {
      // A rocketwire consumer stays up through the broker's stop and restart and must end with everything.
      const live = new Set<string>();
      const rw = new PushConsumer({
        consumerGroup: 'two_rw_live_cg',
        namesrvAddr: cluster.namesrv,
        subscriptions: { InteropTwo: '*' },
        consumeFromWhere: 'first',
        pollNameServerIntervalMs: 2000,
        rebalanceIntervalMs: 2000,
      });
      t.teardown(() => rw.shutdown());
      await rw.start((msgs) => {
        for (const m of msgs) live.add(m.msgId);
        return 'CONSUME_SUCCESS';
      });
      const first = await startJavaConsumer({
        namesrv: cluster.namesrv,
        topic: 'InteropTwo',
        group: 'two_cg',
        expect: 80,
        timeoutMs: 60_000,
      });
      const { sent } = await javaProduce({ namesrv: cluster.namesrv, topic: 'InteropTwo', count: 80 });
      t.same(
        [...new Set(sent.map((s) => s.brokerName))].sort(),
        ['broker-a', 'broker-b'],
        'sends went to both brokers',
      );
      const got = await first.done;
      t.equal(got.summary.received, 80);
      t.equal(new Set(got.messages.map((m) => m.msgId)).size, 80);

      await cluster.stopBroker(1);
      const without = await cluster.waitForRoute('InteropTwo', {
        brokers: ['broker-a'],
        exact: true,
        timeoutMs: 10_000,
      });
      t.same(
        without.brokerDatas.map((b) => b.brokerName),
        ['broker-a'],
        'a stopped broker unregisters from the name server',
      );
      const during = await javaProduce({ namesrv: cluster.namesrv, topic: 'InteropTwo', count: 10 });
      t.ok(
        during.sent.every((s) => s.brokerName === 'broker-a'),
        'the producer sends to the remaining broker',
      );

      await cluster.startBroker(1);
      await cluster.waitForRoute('InteropTwo');
      const again = await startJavaConsumer({
        namesrv: cluster.namesrv,
        topic: 'InteropTwo',
        group: 'two_cg_replay',
        expect: 90,
        timeoutMs: 60_000,
        from: 'first',
      });
      const replay = await again.done;
      t.equal(replay.summary.received, 90, 'a new group reads all 90 messages, the restarted broker’s included');
      const progress = await javaOffsets({ namesrv: cluster.namesrv, group: 'two_cg', topic: 'InteropTwo' });
      t.equal(progress.queues.length, 8, 'offsets on 2 brokers × 4 queues');
      t.equal(
        progress.queues.reduce((n, q) => n + q.brokerOffset, 0),
        90,
      );

      const after = await javaProduce({ namesrv: cluster.namesrv, topic: 'InteropTwo', count: 20 });
      t.ok(
        after.sent.some((s) => s.brokerName === 'broker-b'),
        'the restarted broker takes sends again',
      );
      const want = [...sent, ...during.sent, ...after.sent].map((s) => s.msgId);
      const deadline = Date.now() + 60_000;
      while (want.some((id) => !live.has(id)) && Date.now() < deadline) await delay(200);
      t.same(
        want.filter((id) => !live.has(id)),
        [],
        'the rocketwire consumer got all 110, across the restart',
      );
    },
  );

  t.test('rocketwire producer and push consumer over both brokers, ROCKETMQ-encoded headers', async (t) => {
    await cluster.createTopic('InteropTwoRw', { queues: 4 });
    const producer = new Producer({ group: 'two_rw_pg', namesrvAddr: cluster.namesrv, serializeType: 'ROCKETMQ' });
    await producer.start();
    t.teardown(() => producer.shutdown());
    const brokersUsed = new Set<string>();
    for (let i = 0; i < 40; i++) {
      const r = await producer.send({ topic: 'InteropTwoRw', body: `m${i}`, keys: `k${i}` });
      brokersUsed.add(r.messageQueue.brokerName);
    }
    t.same([...brokersUsed].sort(), ['broker-a', 'broker-b'], 'sends went to both brokers');
    const got = new Map<string, string>();
    let done!: () => void;
    const all = new Promise<void>((r) => (done = r));
    const consumer = new PushConsumer({
      consumerGroup: 'two_rw_cg',
      namesrvAddr: cluster.namesrv,
      serializeType: 'ROCKETMQ',
      subscriptions: { InteropTwoRw: '*' },
      consumeFromWhere: 'first',
    });
    t.teardown(() => consumer.shutdown());
    const timer = setTimeout(done, 60_000);
    await consumer.start((msgs) => {
      for (const m of msgs) got.set(m.keys.join(' '), m.body.toString());
      if (got.size >= 40) done();
      return 'CONSUME_SUCCESS';
    });
    await all;
    clearTimeout(timer);
    t.equal(got.size, 40, 'every message received once');
    t.ok(
      [...got].every(([k, b]) => b === `m${k.slice(1)}`),
      'bodies match their keys',
    );
    t.equal(
      consumer.assignment().filter((q) => q.topic === 'InteropTwoRw').length,
      8,
      'the consumer holds the 2 × 4 topic queues',
    );
  });
}
