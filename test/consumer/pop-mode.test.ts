import t from 'tap';
import { RequestCode, ResponseCode, createRequest } from '../../protocol/index.js';
import { SetMessageRequestModeRequestBody } from '../../protocol/body/pop-bodies.js';
import { PushConsumer, type MessageExt } from '../../lib/consumer/index.js';
import { RemotingClient } from '../../lib/remoting/index.js';
import { produce, uniqueName, until, withBroker } from './helpers.js';

// The push consumer with clientRebalance=false (Java 5.x's DefaultMQPushConsumer pop mode): it asks
// the broker how to consume (QUERY_ASSIGNMENT); once the group is switched to POP for the topic
// (SET_MESSAGE_REQUEST_MODE, what `mqadmin setConsumeMode` sends) it pops and acks, and pulls none
// of the topic's queues.

async function setMode(addr: string, topic: string, group: string, mode: 'POP' | 'PULL'): Promise<number> {
  const c = new RemotingClient();
  try {
    const res = await c.invoke(
      addr,
      createRequest(RequestCode.SET_MESSAGE_REQUEST_MODE, {
        body: SetMessageRequestModeRequestBody.encode({ topic, consumerGroup: group, mode, popShareQueueNum: 0 }),
      }),
    );
    return res.code;
  } finally {
    await c.close();
  }
}

t.test('a group switched to POP is popped and acked, never pulled', async (t) => {
  const b = await withBroker();
  t.teardown(() => b.close());
  const topic = uniqueName('PopMode');
  const group = uniqueName('cg');
  await produce(b.namesrv, topic, 1);
  t.equal(await setMode(b.broker, topic, group, 'POP'), ResponseCode.SUCCESS);
  t.equal(
    await setMode(b.broker, `%RETRY%${group}`, group, 'POP'),
    ResponseCode.NO_PERMISSION,
    'a retry topic cannot be switched',
  );
  const seen = new Map<string, MessageExt>();
  const consumer = new PushConsumer({
    consumerGroup: group,
    namesrvAddr: b.namesrv,
    subscriptions: { [topic]: '*' },
    consumeFromWhere: 'first',
    clientRebalance: false,
    popInvisibleTimeMs: 20_000,
  });
  await consumer.start((msgs) => {
    for (const m of msgs) seen.set(m.body.toString(), m);
    return 'CONSUME_SUCCESS';
  });
  t.teardown(() => consumer.shutdown());
  await produce(b.namesrv, topic, 30, (i) => ({ body: `m-${i}` }));
  await until(() => seen.size === 31, '31 messages');
  t.ok(
    [...seen.values()].every((m) => m.properties.POP_CK),
    'every message came by POP (it has a receipt handle)',
  );
  t.equal(consumer.stats().queues.filter((q) => q.topic === topic).length, 0, 'no queue of the topic is pulled');
  const pop = b.instances[0]!.pop;
  await until(() => pop.checkpoints.size === 0, 'every popped message acked');
  t.ok(b.instances[0]!.pop.modes.get(topic, group)?.mode === 'POP');
});

t.test('clientRebalance=false with the broker saying PULL (the default) pulls as before', async (t) => {
  const b = await withBroker();
  t.teardown(() => b.close());
  const topic = uniqueName('PullMode');
  const group = uniqueName('cg');
  await produce(b.namesrv, topic, 20);
  const seen = new Set<string>();
  const consumer = new PushConsumer({
    consumerGroup: group,
    namesrvAddr: b.namesrv,
    subscriptions: { [topic]: '*' },
    consumeFromWhere: 'first',
    clientRebalance: false,
  });
  await consumer.start((msgs) => {
    for (const m of msgs) seen.add(m.body.toString());
    return 'CONSUME_SUCCESS';
  });
  t.teardown(() => consumer.shutdown());
  await until(() => seen.size === 20, '20 messages');
  t.equal(consumer.stats().queues.filter((q) => q.topic === topic).length, 4, 'the 4 queues are pulled');
});

t.test('pop-mode options are checked', async (t) => {
  t.throws(() => new PushConsumer({ consumerGroup: 'g', namesrvAddr: 'h:1', popBatchNums: 33 }), {
    name: 'ConsumerOptionError',
    option: 'popBatchNums',
  });
  t.throws(() => new PushConsumer({ consumerGroup: 'g', namesrvAddr: 'h:1', popThresholdForQueue: 0 }), {
    name: 'ConsumerOptionError',
    option: 'popThresholdForQueue',
  });
});
