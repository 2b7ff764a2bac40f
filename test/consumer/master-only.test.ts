// What must reach a broker group's master never goes to its slave. Orderly
// LOCK_BATCH_MQ / UNLOCK_BATCH_MQ (a slave answers locks from its own table, so during a failover two
// consumers could both own a queue) and CONSUMER_SEND_MSG_BACK; the republish fallback is sent as
// Java's default producer sends (masters only, 3 attempts, each retry on another broker).
// Scripted name server and brokers (test/client/fake-cluster.ts) play the cluster.
import t from 'tap';
import {
  createResponse,
  decodeLockBatchBody,
  encodeLockBatchResponseBody,
  RequestCode,
  ResponseCode,
  type MessageExt,
} from '../../protocol/index.js';
import { MQClientInstance } from '../../lib/client/index.js';
import { PushConsumer } from '../../lib/consumer/index.js';
import { PushConsumerImpl } from '../../lib/consumer/push/push-consumer-impl.js';
import { sendMessageBack, type SendBackHost } from '../../lib/consumer/push/send-back.js';
import {
  refusedAddress,
  routeJson,
  startFakeBroker,
  startFakeNameServer,
  type FakeNode,
} from '../client/fake-cluster.js';
import { uniqueName, until } from './helpers.js';
import { createMessageExt } from '../../protocol/internal.js';

/** What sendMessageBack reads of a consumer that was not started, with the client instance given. */
function sendBackHost(impl: PushConsumerImpl, instance: MQClientInstance): SendBackHost {
  return {
    config: impl.config,
    recorder: impl.recorder,
    maxReconsumeTimes: impl.maxReconsumeTimes,
    instance,
    publishIndex: 0,
  };
}

/** A broker node that plays the group's side of an orderly consumer: consumer list, locks, offsets, empty pulls. */
async function orderlyBroker(): Promise<FakeNode> {
  const b = await startFakeBroker();
  b.on(RequestCode.GET_CONSUMER_LIST_BY_GROUP, (req) => {
    const hb = b.requestsOf(RequestCode.HEART_BEAT).at(-1);
    const clientID = hb ? (JSON.parse(hb.body!.toString()) as { clientID: string }).clientID : '';
    return createResponse(req, ResponseCode.SUCCESS, {
      body: Buffer.from(JSON.stringify({ consumerIdList: [clientID] })),
    });
  });
  b.on(RequestCode.LOCK_BATCH_MQ, (req) =>
    createResponse(req, ResponseCode.SUCCESS, {
      body: encodeLockBatchResponseBody({ lockOKMQSet: decodeLockBatchBody(req.body!).mqSet }),
    }),
  );
  b.on(RequestCode.UNLOCK_BATCH_MQ, (req) => createResponse(req, ResponseCode.SUCCESS));
  b.on(RequestCode.QUERY_CONSUMER_OFFSET, (req) =>
    createResponse(req, ResponseCode.SUCCESS, { extFields: { offset: '0' } }),
  );
  b.on(RequestCode.UPDATE_CONSUMER_OFFSET, (req) => createResponse(req, ResponseCode.SUCCESS));
  b.on(RequestCode.PULL_MESSAGE, (req) =>
    createResponse(req, ResponseCode.PULL_NOT_FOUND, {
      extFields: { nextBeginOffset: '0', minOffset: '0', maxOffset: '0', suggestWhichBrokerId: '0' },
    }),
  );
  return b;
}

t.test('orderly locks go to the master only: a slave is never asked to lock or unlock', async (t) => {
  const master = await orderlyBroker();
  const slave = await orderlyBroker();
  const topic = uniqueName('T');
  const routes = new Map([
    [topic, routeJson([{ name: 'broker-a', addrs: { '0': master.addr, '1': slave.addr }, queues: 2 }])],
  ]);
  const ns = await startFakeNameServer(routes);
  t.teardown(async () => {
    await ns.close();
    await master.close();
    await slave.close();
  });
  const consumer = new PushConsumer({
    consumerGroup: uniqueName('cg'),
    namesrvAddr: ns.addr,
    orderly: true,
    pollNameServerIntervalMs: 20,
  });
  consumer.subscribe(topic);
  await consumer.start(() => 'SUCCESS');
  let down = false;
  t.teardown(() => (down ? undefined : consumer.shutdown()));
  await until(() => consumer.assignment().length === 2, 'both queues locked at the master');
  t.ok(master.requestsOf(RequestCode.LOCK_BATCH_MQ).length > 0);

  // The master leaves the route (killed): only its slave is known.
  routes.set(topic, routeJson([{ name: 'broker-a', addrs: { '1': slave.addr }, queues: 2 }]));
  const asked = ns.requestsOf(RequestCode.GET_ROUTEINFO_BY_TOPIC).length;
  await until(
    () => ns.requestsOf(RequestCode.GET_ROUTEINFO_BY_TOPIC).length >= asked + 2,
    'the route without the master read',
  );
  await consumer.shutdown();
  down = true;
  t.equal(slave.requestsOf(RequestCode.LOCK_BATCH_MQ).length, 0, 'no LOCK_BATCH_MQ to the slave');
  t.equal(
    slave.requestsOf(RequestCode.UNLOCK_BATCH_MQ).length,
    0,
    'no UNLOCK_BATCH_MQ to the slave at shutdown (before: the slave got it)',
  );
});

t.test(
  'an orderly consumer whose broker has no master locks nothing (before: the slave granted the locks)',
  async (t) => {
    const slave = await orderlyBroker();
    const topic = uniqueName('T');
    const ns = await startFakeNameServer(
      new Map([[topic, routeJson([{ name: 'broker-a', addrs: { '1': slave.addr }, queues: 2 }])]]),
    );
    t.teardown(async () => {
      await ns.close();
      await slave.close();
    });
    const consumer = new PushConsumer({ consumerGroup: uniqueName('cg'), namesrvAddr: ns.addr, orderly: true });
    consumer.subscribe(topic);
    await consumer.start(() => 'SUCCESS');
    t.teardown(() => consumer.shutdown());
    t.ok(slave.requestsOf(RequestCode.GET_CONSUMER_LIST_BY_GROUP).length > 0, 'the first rebalance ran');
    t.same(consumer.assignment(), [], 'no queue held');
    t.equal(slave.requestsOf(RequestCode.LOCK_BATCH_MQ).length, 0);
  },
);

function failedMessage(topic: string): MessageExt {
  return createMessageExt({
    topic,
    queueId: 0,
    flag: 0,
    queueOffset: 7,
    commitLogOffset: 700,
    sysFlag: 0,
    bornTimestamp: 0,
    bornHost: '127.0.0.1:1',
    storeTimestamp: 0,
    storeHost: '127.0.0.1:2',
    reconsumeTimes: 2,
    preparedTransactionOffset: 0,
    bodyCRC: 0,
    storeSize: 0,
    properties: { UNIQ_KEY: 'ABC' },
    body: Buffer.from('payload'),
    msgId: 'ABC',
    offsetMsgId: 'ABC',
  });
}

t.test(
  'send-back without a master: no CONSUMER_SEND_MSG_BACK to the slave; the republish skips the broker that failed',
  async (t) => {
    const slave = await startFakeBroker();
    const good = await startFakeBroker();
    const dead = await refusedAddress();
    const group = uniqueName('cg');
    const topic = uniqueName('T');
    const retry = `%RETRY%${group}`;
    const ns = await startFakeNameServer(
      new Map([
        [topic, routeJson([{ name: 'broker-a', addrs: { '1': slave.addr } }])],
        // broker-a (slave only) has no publish queue; broker-b's master is dead, broker-c's answers.
        [
          retry,
          routeJson([
            { name: 'broker-a', addrs: { '1': slave.addr }, queues: 1 },
            { name: 'broker-b', addrs: { '0': dead }, queues: 1 },
            { name: 'broker-c', addrs: { '0': good.addr }, queues: 1 },
          ]),
        ],
      ]),
    );
    const impl = new PushConsumerImpl({ consumerGroup: group, namesrvAddr: ns.addr });
    const instance = MQClientInstance.acquire({ namesrvAddr: ns.addr, instanceName: uniqueName('i') });
    t.teardown(async () => {
      await instance.release();
      await ns.close();
      await slave.close();
      await good.close();
    });
    await instance.getTopicRoute(topic);
    // The first queue picked is broker-b's (the round robin starts at 0): its attempt fails, the retry goes elsewhere.
    const ok = await sendMessageBack(sendBackHost(impl, instance), failedMessage(topic), 0, 'broker-a');
    t.equal(ok, true, 'stored by the republish (before: one attempt, to the dead broker)');
    t.equal(slave.requests.length, 0, 'the slave got nothing');
    const [sent, ...more] = good.stored;
    t.equal(more.length, 0);
    t.match(sent!.extFields, { b: retry, j: '3' }, 'to the retry topic with reconsumeTimes + 1');
    t.match(String(sent!.extFields!.i), /RETRY_TOPIC\u0001/);
    t.equal(impl.recorder.republished, 1);
    t.equal(impl.recorder.sendBackFailed, 1, 'the send-back itself failed: broker-a has no master');
  },
);

t.test('the republish stops at 3 attempts, and at once on an answer that is not retriable', async (t) => {
  const group = uniqueName('cg');
  const group2 = uniqueName('cg');
  const dead = [await refusedAddress(), await refusedAddress(), await refusedAddress(), await refusedAddress()];
  const refusing = await startFakeBroker();
  refusing.on(RequestCode.SEND_MESSAGE_V2, (req) =>
    createResponse(req, ResponseCode.MESSAGE_ILLEGAL, { remark: 'no' }),
  );
  const ns = await startFakeNameServer(
    new Map([
      [`%RETRY%${group}`, routeJson(dead.map((addr, i) => ({ name: `broker-${i}`, addrs: { '0': addr }, queues: 1 })))],
      [
        `%RETRY%${group2}`,
        routeJson([
          { name: 'broker-r', addrs: { '0': refusing.addr }, queues: 1 },
          { name: 'broker-x', addrs: { '0': dead[0]! }, queues: 1 },
        ]),
      ],
    ]),
  );
  const instance = MQClientInstance.acquire({ namesrvAddr: ns.addr, instanceName: uniqueName('i') });
  t.teardown(async () => {
    await instance.release();
    await ns.close();
    await refusing.close();
  });
  const sends: string[] = [];
  const invoke = instance.invoke.bind(instance);
  instance.invoke = ((addr: string, ...rest: unknown[]) => {
    sends.push(addr);
    return (invoke as (...a: unknown[]) => unknown)(addr, ...rest);
  }) as typeof instance.invoke;

  const impl = new PushConsumerImpl({ consumerGroup: group, namesrvAddr: ns.addr });
  t.equal(await sendMessageBack(sendBackHost(impl, instance), failedMessage('T'), 0, 'broker-0'), false);
  t.equal(sends.length, 3, 'three attempts');
  t.equal(new Set(sends).size, 3, 'each on another broker');

  sends.length = 0;
  const impl2 = new PushConsumerImpl({ consumerGroup: group2, namesrvAddr: ns.addr });
  t.equal(await sendMessageBack(sendBackHost(impl2, instance), failedMessage('T'), 0, 'broker-q'), false);
  t.same(sends, [refusing.addr], 'MESSAGE_ILLEGAL ends it after one attempt');
});
