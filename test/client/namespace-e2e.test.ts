import t from 'tap';
import { PushConsumer, type MessageExt } from '../../lib/consumer/index.js';
import { Producer } from '../../lib/producer/index.js';
import { ClientOptionError } from '../../lib/client/index.js';
import { spyOnBroker } from '../consumer/broker-spy.js';
import { FAST_DELAY_LEVELS, uniqueName, until, withBroker } from '../consumer/helpers.js';
import { ManualClock } from '../../lib/clock.js';
import { RequestCode } from '../../protocol/index.js';

// The namespace option end to end on the embedded broker: what reaches the broker is NS%name, what
// the user sees is the name; a client without the namespace sees nothing of it.

t.test(
  'namespace v1: NS%topic and NS%group on the wire, plain names to the user, isolated from other clients',
  async (t) => {
    const broker = await withBroker({ messageDelayLevel: FAST_DELAY_LEVELS });
    t.teardown(() => broker.close());
    const topic = uniqueName('T');
    const spy = spyOnBroker(broker, new ManualClock());
    const producer = new Producer({ group: 'ns_pg', namesrvAddr: broker.namesrv, namespace: 'NS_a' });
    await producer.start();
    t.teardown(() => producer.shutdown());
    const r = await producer.send({ topic, body: 'one' });
    t.equal(r.messageQueue.topic, topic, 'the send result shows the topic without the namespace');
    const send = spy.find((s) => s.code === RequestCode.SEND_MESSAGE_V2)!;
    t.equal(send.ext.b, `NS_a%${topic}`, 'the broker got NS%topic');
    t.equal(send.ext.a, 'NS_a%ns_pg', 'and NS%group');
    t.match(send.ext.i, /INSTANCE_ID\u0001NS_a/, 'INSTANCE_ID is the namespace, as DefaultMQProducerImpl sets it');
    t.equal(
      broker.instances[0]!.messageStore.getMaxOffset(`NS_a%${topic}`, r.messageQueue.queueId),
      1,
      'stored under NS%topic',
    );

    const mine: MessageExt[] = [];
    const inNs = new PushConsumer({
      consumerGroup: 'ns_cg',
      namespace: 'NS_a',
      namesrvAddr: broker.namesrv,
      consumeFromWhere: 'first',
      subscriptions: { [topic]: '*' },
    });
    await inNs.start((msgs) => {
      mine.push(...msgs);
      // fail once: the retry goes through %RETRY%NS_a%ns_cg and comes back with the plain topic
      return msgs[0]!.reconsumeTimes === 0 ? 'RECONSUME_LATER' : 'CONSUME_SUCCESS';
    });
    t.teardown(() => inNs.shutdown());
    const other: MessageExt[] = [];
    const plain = new PushConsumer({
      consumerGroup: 'plain_cg',
      namesrvAddr: broker.namesrv,
      consumeFromWhere: 'first',
      subscriptions: { [topic]: '*' },
    });
    await plain.start((msgs) => {
      other.push(...msgs);
      return 'CONSUME_SUCCESS';
    });
    t.teardown(() => plain.shutdown());
    await until(() => mine.length >= 2, 'the namespaced consumer got the message and its retry');
    t.same(
      mine.map((m) => [m.topic, m.body.toString(), m.reconsumeTimes]),
      [
        [topic, 'one', 0],
        [topic, 'one', 1],
      ],
      'topic without the namespace, also on the retry',
    );
    t.ok(
      spy.some((s) => s.code === RequestCode.CONSUMER_SEND_MSG_BACK && s.ext.group === 'NS_a%ns_cg'),
      'sent back for NS%group',
    );
    t.ok(
      spy.some((s) => s.code === RequestCode.PULL_MESSAGE && s.ext.topic === '%RETRY%NS_a%ns_cg'),
      'its retry topic is %RETRY%NS%group',
    );
    t.same(other, [], 'a consumer of the plain topic sees nothing');
  },
);

t.test('namespaceV2: names stay as they are; every request carries nsd/ns (NamespaceRpcHook)', async (t) => {
  const broker = await withBroker();
  t.teardown(() => broker.close());
  const topic = uniqueName('T');
  const spy = spyOnBroker(broker, new ManualClock());
  const producer = new Producer({
    group: 'v2_pg',
    namesrvAddr: broker.namesrv,
    namespaceV2: 'NS_b',
    instanceName: 'v2',
  });
  await producer.start();
  t.teardown(() => producer.shutdown());
  const r = await producer.send({ topic, body: 'v2' });
  t.equal(r.messageQueue.topic, topic);
  const send = spy.find((s) => s.code === RequestCode.SEND_MESSAGE_V2)!;
  t.equal(send.ext.b, topic, 'topic not wrapped');
  t.same([send.ext.nsd, send.ext.ns], ['true', 'NS_b']);
  await producer['clientInstance'].sendHeartbeatToAllBrokers();
  const hb = spy.find((s) => s.code === RequestCode.HEART_BEAT)!;
  t.same([hb.ext.nsd, hb.ext.ns], ['true', 'NS_b'], 'also on a request whose header has no fields');
  t.throws(() => new Producer({ group: 'v2_pg2', namesrvAddr: broker.namesrv, namespaceV2: 'a%b' }), ClientOptionError);
  const clash = new Producer({ group: 'v2_pg3', namesrvAddr: broker.namesrv, namespaceV2: 'NS_c', instanceName: 'v2' });
  await t.rejects(
    clash.start(),
    { name: 'ClientOptionError', option: 'namespaceV2' },
    'one client instance, one namespaceV2',
  );
});

t.test('bad namespaces are refused at construction, naming the option', async (t) => {
  t.throws(() => new Producer({ group: 'g', namesrvAddr: '127.0.0.1:9876', namespace: 'a b' }), {
    name: 'ClientOptionError',
    option: 'namespace',
  });
  t.throws(() => new PushConsumer({ consumerGroup: 'g', namesrvAddr: '127.0.0.1:9876', namespace: 'NS%x' }), {
    name: 'ClientOptionError',
    option: 'namespace',
  });
});

t.test('namespace v1 on a batch: NS%topic for the batch and its members, results without it', async (t) => {
  const broker = await withBroker();
  t.teardown(() => broker.close());
  const topic = uniqueName('T');
  const producer = new Producer({ group: 'ns_batch_pg', namesrvAddr: broker.namesrv, namespace: 'NS_a' });
  await producer.start();
  t.teardown(() => producer.shutdown());
  const r = await producer.sendBatch([
    { topic, body: 'a' },
    { topic, body: 'b' },
  ]);
  t.equal(r.messageQueue.topic, topic);
  t.equal(
    broker.instances[0]!.messageStore.getMaxOffset(`NS_a%${topic}`, r.messageQueue.queueId),
    2,
    'both stored under NS%topic',
  );
  await t.rejects(
    producer.sendBatch([
      { topic, body: 'a' },
      { topic: 'Other', body: 'b' },
    ]),
    { name: 'MessageValidationError', field: 'topic' },
    'one topic per batch, checked on the wrapped names',
  );
});
