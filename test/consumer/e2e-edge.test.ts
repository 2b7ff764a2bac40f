import t from 'tap';
import { MQClientInstance } from '../../lib/client/index.js';
import { ConsumeConcurrentlyStatus, messageQueue, PushConsumer } from '../../lib/consumer/index.js';
import { brokerOffsets, produce, uniqueName, until, withBroker } from './helpers.js';

t.test(
  'OFFSET_ILLEGAL: a committed offset past the queue end is corrected, frozen, persisted, and consumption goes on',
  async (t) => {
    const broker = await withBroker({ queues: 1 });
    t.teardown(() => broker.close());
    const topic = uniqueName('T');
    const group = uniqueName('cg');
    await produce(broker.namesrv, topic, 10);
    // Commit 1000 for the group on the only queue: the first pull gets PULL_OFFSET_MOVED (OFFSET_OVERFLOW_BADLY).
    const inst = MQClientInstance.acquire({ namesrvAddr: broker.namesrv, instanceName: uniqueName('admin') });
    await inst.getTopicRoute(topic);
    await inst.updateConsumerOffset(
      inst.findBrokerAddress('broker-a')!,
      group,
      messageQueue(topic, 'broker-a', 0),
      1000,
    );
    await inst.release();
    const bodies: string[] = [];
    const c = new PushConsumer({ consumerGroup: group, namesrvAddr: broker.namesrv });
    c.subscribe(topic);
    await c.start((msgs) => {
      for (const m of msgs) bodies.push(m.body.toString());
      return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
    });
    t.teardown(() => c.shutdown());
    await until(
      () => c.stats().queues.some((q) => q.topic === topic && q.pulledOffset === 10),
      'the queue re-created at the corrected offset',
    );
    t.equal(
      (await brokerOffsets(broker.namesrv, topic, group))[0]!.committed,
      10,
      'corrected offset persisted to the broker',
    );
    await produce(broker.namesrv, topic, 5, (i) => ({ body: `late${i}` }));
    await until(() => bodies.length === 5, 'new messages consumed');
    t.same(bodies.sort(), ['late0', 'late1', 'late2', 'late3', 'late4']);
  },
);

t.test(
  'async iterator: messages in a for-await loop; leaving the loop shuts down and commits what was handled',
  async (t) => {
    const broker = await withBroker({ queues: 1 });
    t.teardown(() => broker.close());
    const topic = uniqueName('T');
    const group = uniqueName('cg');
    await produce(broker.namesrv, topic, 30, (i) => ({ body: `m${i}` }));
    const c = new PushConsumer({
      consumerGroup: group,
      namesrvAddr: broker.namesrv,
      consumeFromWhere: 'first',
      subscriptions: { [topic]: '*' },
      consumeThreadMin: 1,
      consumeThreadMax: 1,
    });
    const got: string[] = [];
    for await (const m of c) {
      got.push(m.body.toString());
      if (got.length === 10) break;
    }
    t.equal(c.state, 'SHUTDOWN');
    t.same(
      got,
      Array.from({ length: 10 }, (_, i) => `m${i}`),
      'in queue order',
    );
    const committed = (await brokerOffsets(broker.namesrv, topic, group))[0]!.committed;
    t.equal(committed, 9, 'the 9 acknowledged messages are committed, the one being handled at the break is not');
  },
);

t.test('start errors: no handler, no subscription, twice', async (t) => {
  const c = new PushConsumer({ consumerGroup: 'g', namesrvAddr: '127.0.0.1:1' });
  await t.rejects(c.start(), /no message listener/);
  c.onMessage(() => ConsumeConcurrentlyStatus.CONSUME_SUCCESS);
  await t.rejects(c.start(), /no subscription/);
  await c.shutdown();
  await t.rejects(c.start(), /cannot start/);
});
