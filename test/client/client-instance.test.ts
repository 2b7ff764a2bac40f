import { once } from '../../lib/emitter.js';
import t from 'tap';
import {
  createRequest,
  createResponse,
  encodeStoredMessage,
  RequestCode,
  ResponseCode,
  type MessageExt,
} from '../../protocol/index.js';
import { MQClientInstance, NameServerUnavailableError, type ConsumerInner } from '../../lib/client/index.js';
import type { ConsumeMessageDirectlyResult, MessageQueue, SubscriptionData } from '../../protocol/index.js';
import type { RemotingConnection } from '../../lib/remoting/index.js';
import { ManualClock } from '../../lib/clock.js';
import { refusedAddress, routeJson, startFakeBroker, startFakeNameServer, startFakeNode } from './fake-cluster.js';

let seq = 0;
/** A fresh instance name per test so acquire() never hands back another test's instance. */
function name(): string {
  return `t${process.pid}_${++seq}`;
}

class FakeConsumer implements ConsumerInner {
  readonly messageModel = 'CLUSTERING' as const;
  readonly consumeType = 'CONSUME_PASSIVELY' as const;
  readonly consumeFromWhere = 'CONSUME_FROM_LAST_OFFSET';
  rebalances = 0;
  persisted = 0;
  resets: { topic: string; offsets: Map<string, number> }[] = [];
  constructor(
    readonly groupName: string,
    private readonly subs: SubscriptionData[],
  ) {}
  subscriptions(): SubscriptionData[] {
    return this.subs;
  }
  doRebalance(): void {
    this.rebalances++;
  }
  runningInfo(): Buffer {
    return Buffer.from(
      JSON.stringify({ properties: { PROP_CONSUME_TYPE: 'CONSUME_PASSIVELY' }, subscriptionSet: this.subs }),
    );
  }
  direct: { msg: MessageExt; brokerName: string }[] = [];
  async consumeMessageDirectly(msg: MessageExt, brokerName: string): Promise<ConsumeMessageDirectlyResult> {
    this.direct.push({ msg, brokerName });
    return { autoCommit: true, consumeResult: 'CR_SUCCESS', order: false, spentTimeMills: 1 };
  }
  async resetOffset(topic: string, offsets: Map<string, number>): Promise<void> {
    this.resets.push({ topic, offsets });
  }
  async persistOffsets(): Promise<void> {
    this.persisted++;
  }
  statusAsked: string[] = [];
  consumerStatus(topic: string): [MessageQueue, number][] {
    this.statusAsked.push(topic);
    return [
      [{ topic, brokerName: 'broker-a', queueId: 1 }, 42],
      [{ topic, brokerName: 'broker-b', queueId: 0 }, 7],
    ];
  }
}

const SUBS: SubscriptionData[] = [
  {
    classFilterMode: false,
    topic: 'TopicTest',
    subString: 'TagA || TagB',
    tagsSet: ['TagA', 'TagB'],
    codeSet: [2598919, 2598920],
    subVersion: 1712345678000,
    expressionType: 'TAG',
  },
  {
    classFilterMode: false,
    topic: '%RETRY%cg1',
    subString: '*',
    tagsSet: [],
    codeSet: [],
    subVersion: 1712345678001,
    expressionType: 'TAG',
  },
];

t.test('route fetch: request header, caching, broker address table', async (t) => {
  const broker = await startFakeBroker();
  const ns = await startFakeNameServer(
    new Map([['T1', routeJson([{ name: 'broker-a', addrs: { '0': broker.addr, '1': '127.0.0.1:9' } }])]]),
  );
  const inst = MQClientInstance.acquire({ namesrvAddr: ns.addr, instanceName: name(), clientIp: '10.0.0.9' });
  t.teardown(async () => {
    await inst.release();
    await ns.close();
    await broker.close();
  });
  const route = await inst.getTopicRoute('T1');
  t.equal(route.queueDatas[0]!.writeQueueNums, 4);
  const [req] = ns.requestsOf(RequestCode.GET_ROUTEINFO_BY_TOPIC);
  t.same(req!.extFields, { topic: 'T1' });
  t.equal(req!.version, 409, 'version >= 401 so the name server answers standard JSON');
  t.equal(req!.language, 'JAVA');
  await inst.getTopicRoute('T1');
  t.equal(ns.requestsOf(RequestCode.GET_ROUTEINFO_BY_TOPIC).length, 1, 'second call served from the cache');
  await inst.getTopicRoute('T1', { refresh: true });
  t.equal(ns.requestsOf(RequestCode.GET_ROUTEINFO_BY_TOPIC).length, 2);
  t.equal(inst.findBrokerAddress('broker-a'), broker.addr);
  t.same(inst.findBrokerAddressInSubscribe('broker-a', 1), { addr: '127.0.0.1:9', slave: true });
  t.equal(inst.findBrokerAddress('nope'), undefined);
  await t.rejects(inst.getTopicRoute('missing'), { name: 'BrokerError', code: ResponseCode.TOPIC_NOT_EXIST });
  const before = ns.requestsOf(RequestCode.GET_ROUTEINFO_BY_TOPIC).length;
  const routes = await Promise.all(Array.from({ length: 10 }, () => inst.getTopicRoute('T1', { refresh: true })));
  t.equal(
    ns.requestsOf(RequestCode.GET_ROUTEINFO_BY_TOPIC).length,
    before + 1,
    'concurrent refreshes share one request',
  );
  t.ok(routes.every((r) => r === routes[0]));
});

t.test('findBrokerAddressInSubscribe as Java: the exact id, then id + 1 for a slave, then any address', async (t) => {
  const ns = await startFakeNameServer(
    new Map([
      [
        'T1',
        routeJson([
          { name: 'broker-a', addrs: { '0': '127.0.0.1:10', '2': '127.0.0.1:12' } },
          { name: 'broker-b', addrs: { '1': '127.0.0.1:21', '2': '127.0.0.1:22' } },
        ]),
      ],
    ]),
  );
  const inst = MQClientInstance.acquire({ namesrvAddr: ns.addr, instanceName: name() });
  t.teardown(async () => {
    await inst.release();
    await ns.close();
  });
  await inst.getTopicRoute('T1');
  // Suggested slave 1 is gone: its neighbour 2 serves the pull (before, the master was taken).
  t.same(inst.findBrokerAddressInSubscribe('broker-a', 1), { addr: '127.0.0.1:12', slave: true });
  t.same(
    inst.findBrokerAddressInSubscribe('broker-a', 1, true),
    { addr: '127.0.0.1:12', slave: true },
    'id + 1 counts as this broker',
  );
  t.same(inst.findBrokerAddressInSubscribe('broker-a', 0), { addr: '127.0.0.1:10', slave: false });
  t.same(
    inst.findBrokerAddressInSubscribe('broker-a', 3),
    { addr: '127.0.0.1:10', slave: false },
    'neither 3 nor 4: any address, the master first',
  );
  t.equal(inst.findBrokerAddressInSubscribe('broker-a', 3, true), undefined);
  // Master gone: id 0 does not look at id 1, only "any" does.
  t.equal(inst.findBrokerAddressInSubscribe('broker-b', 0, true), undefined);
  t.same(inst.findBrokerAddressInSubscribe('broker-b', 0), { addr: '127.0.0.1:21', slave: true });
  t.equal(inst.findBrokerMasterAddress('broker-b'), undefined);
});

t.test('name server failover: a refused address is skipped, the next one answers', async (t) => {
  const dead = await refusedAddress();
  const ns = await startFakeNameServer(new Map([['T', routeJson([{ name: 'b', addrs: { '0': '127.0.0.1:9' } }])]]));
  const inst = MQClientInstance.acquire({ namesrvAddr: `${dead};${ns.addr}`, instanceName: name() });
  t.teardown(async () => {
    await inst.release();
    await ns.close();
  });
  const r = await inst.getTopicRoute('T');
  t.equal(r.brokerDatas[0]!.brokerName, 'b');
  await inst.getTopicRoute('T', { refresh: true });
  t.equal(ns.requestsOf(RequestCode.GET_ROUTEINFO_BY_TOPIC).length, 2, 'the working server stays current');
});

t.test('every name server failing gives one error naming each address', async (t) => {
  const dead1 = await refusedAddress();
  const dead2 = await refusedAddress();
  const inst = MQClientInstance.acquire({
    namesrvAddr: `${dead1};${dead2}`,
    instanceName: name(),
    connectTimeoutMs: 500,
  });
  t.teardown(() => inst.release());
  const err = (await inst.getTopicRoute('T').catch((e: unknown) => e)) as NameServerUnavailableError;
  t.type(err, NameServerUnavailableError);
  t.equal(err.failures.length, 2);
  t.match(err.message, dead1);
  t.match(err.message, dead2);
  t.notMatch(err.message, /\n/);
});

t.test('a name server that never answers times out and the next is used', async (t) => {
  const silent = await startFakeNode();
  silent.on(RequestCode.GET_ROUTEINFO_BY_TOPIC, () => null);
  const ns = await startFakeNameServer(new Map([['T', routeJson([{ name: 'b', addrs: { '0': '127.0.0.1:9' } }])]]));
  const inst = MQClientInstance.acquire({
    namesrvAddr: `${silent.addr};${ns.addr}`,
    instanceName: name(),
    mqClientApiTimeoutMs: 100,
  });
  t.teardown(async () => {
    await inst.release();
    await ns.close();
    await silent.close();
  });
  const r = await inst.getTopicRoute('T');
  t.equal(r.brokerDatas.length, 1);
  t.equal(silent.requestsOf(RequestCode.GET_ROUTEINFO_BY_TOPIC).length, 1);
});

t.test('heartbeat body as Java 4.9 writes it; masters only without consumers', async (t) => {
  const master = await startFakeBroker();
  const slave = await startFakeBroker();
  const ns = await startFakeNameServer(
    new Map([['TopicTest', routeJson([{ name: 'broker-a', addrs: { '0': master.addr, '1': slave.addr } }])]]),
  );
  const inst = MQClientInstance.acquire({
    namesrvAddr: ns.addr,
    instanceName: '12345#1712345678901234',
    clientIp: '192.168.1.10',
  });
  t.teardown(async () => {
    await inst.release();
    await Promise.all([ns.close(), master.close(), slave.close()]);
  });
  await inst.sendHeartbeatToAllBrokers();
  await inst.getTopicRoute('TopicTest');
  await inst.sendHeartbeatToAllBrokers();
  t.equal(master.requestsOf(RequestCode.HEART_BEAT).length, 0, 'no producer and no consumer: no heartbeat');

  inst.registerProducer('pg1');
  await inst.sendHeartbeatToAllBrokers();
  const [hb1] = master.requestsOf(RequestCode.HEART_BEAT);
  t.equal(
    hb1!.body!.toString(),
    '{"clientID":"192.168.1.10@12345#1712345678901234","consumerDataSet":[],"producerDataSet":[{"groupName":"pg1"}]}',
  );
  t.equal(slave.requestsOf(RequestCode.HEART_BEAT).length, 0, 'producer-only process: masters only');
  t.equal(inst.brokerVersion(master.addr), 409);

  inst.unregisterProducer('pg1');
  inst.registerConsumer('cg1', new FakeConsumer('cg1', SUBS));
  await inst.sendHeartbeatToAllBrokers();
  const hb2 = master.requestsOf(RequestCode.HEART_BEAT)[1]!;
  t.equal(
    hb2.body!.toString(),
    '{"clientID":"192.168.1.10@12345#1712345678901234","consumerDataSet":[{"consumeFromWhere":"CONSUME_FROM_LAST_OFFSET","consumeType":"CONSUME_PASSIVELY","groupName":"cg1","messageModel":"CLUSTERING","subscriptionDataSet":[{"classFilterMode":false,"codeSet":[2598919,2598920],"expressionType":"TAG","subString":"TagA || TagB","subVersion":1712345678000,"tagsSet":["TagA","TagB"],"topic":"TopicTest"},{"classFilterMode":false,"codeSet":[],"expressionType":"TAG","subString":"*","subVersion":1712345678001,"tagsSet":[],"topic":"%RETRY%cg1"}],"unitMode":false}],"producerDataSet":[{"groupName":"CLIENT_INNER_PRODUCER"}]}',
    'the §8.1 literal, byte for byte',
  );
  t.equal(slave.requestsOf(RequestCode.HEART_BEAT).length, 1, 'with a consumer the slave gets heartbeats too');
  // unregisterProducer tells the brokers in the background (release() waits for it).
  while (master.requestsOf(RequestCode.UNREGISTER_CLIENT).length === 0) await new Promise((r) => setTimeout(r, 2));
  t.equal(
    master.requestsOf(RequestCode.UNREGISTER_CLIENT)[0]?.extFields?.producerGroup,
    'pg1',
    'unregisterProducer tells the brokers',
  );
  await inst.unregisterConsumer('cg1');
  const unreg = master.requestsOf(RequestCode.UNREGISTER_CLIENT).find((r) => r.extFields?.consumerGroup === 'cg1');
  t.same(unreg?.extFields, { clientID: '192.168.1.10@12345#1712345678901234', consumerGroup: 'cg1' });
});

t.test('one group per process: registering a group twice throws', async (t) => {
  const inst = MQClientInstance.acquire({ namesrvAddr: '127.0.0.1:9876', instanceName: name() });
  t.teardown(() => inst.release());
  inst.registerProducer('g');
  t.throws(() => inst.registerProducer('g'), { name: 'MQClientError' });
  inst.registerConsumer('c', new FakeConsumer('c', []));
  t.throws(() => inst.registerConsumer('c', new FakeConsumer('c', [])), { name: 'MQClientError' });
});

t.test('acquire shares one instance per clientId; the last release closes it', async (t) => {
  const n = name();
  const a = MQClientInstance.acquire({ namesrvAddr: '127.0.0.1:9876', instanceName: n, clientIp: '1.2.3.4' });
  const b = MQClientInstance.acquire({ namesrvAddr: '127.0.0.1:9876', instanceName: n, clientIp: '1.2.3.4' });
  t.equal(a, b);
  t.equal(a.clientId, `1.2.3.4@${n}`);
  await a.start();
  await a.release();
  await t.resolves(b.start(), 'still alive after the first release');
  await b.release();
  await t.rejects(b.start(), { name: 'MQClientError' }, 'shut down after the last release');
  const c = MQClientInstance.acquire({ namesrvAddr: '127.0.0.1:9876', instanceName: n, clientIp: '1.2.3.4' });
  t.not(c, a, 'a new acquire after shutdown creates a new instance');
  await c.release();
});

t.test(
  'clients sharing an instance must agree on its connection options: ClientOptionError naming the option',
  async (t) => {
    const n = name();
    const a = MQClientInstance.acquire({
      namesrvAddr: '127.0.0.1:9876',
      instanceName: n,
      connectTimeoutMs: 1000,
      acl: { accessKey: 'ak', secretKey: 'sk' },
    });
    t.teardown(() => a.release());
    t.throws(
      () =>
        MQClientInstance.acquire({
          namesrvAddr: '127.0.0.1:9876',
          instanceName: n,
          connectTimeoutMs: 2000,
          acl: { accessKey: 'ak', secretKey: 'sk' },
        }),
      {
        name: 'ClientOptionError',
        option: 'connectTimeoutMs',
      },
    );
    t.throws(
      () => MQClientInstance.acquire({ namesrvAddr: '127.0.0.1:9876', instanceName: n, connectTimeoutMs: 1000 }),
      { name: 'ClientOptionError', option: 'acl' },
    );
    t.throws(
      () =>
        MQClientInstance.acquire({
          namesrvAddr: '127.0.0.1:9876',
          instanceName: n,
          connectTimeoutMs: 1000,
          acl: { accessKey: 'ak', secretKey: 'sk' },
          tls: true,
        }),
      {
        name: 'ClientOptionError',
        option: 'tls',
      },
    );
    const b = MQClientInstance.acquire({
      namesrvAddr: '127.0.0.1:9876',
      instanceName: n,
      connectTimeoutMs: 1000,
      acl: { accessKey: 'ak', secretKey: 'sk' },
    });
    t.equal(b, a, 'equal options (acl as an equal literal) share the instance');
    await b.release();
  },
);

t.test(
  'scheduled tasks on the clock: routes at 10 ms then every 30 s, heartbeat at 1 s then every 30 s, persist at 5 s then every 5 s; none after release',
  async (t) => {
    const broker = await startFakeBroker();
    const ns = await startFakeNameServer(
      new Map([['TopicTest', routeJson([{ name: 'broker-a', addrs: { '0': broker.addr } }])]]),
    );
    const clock = new ManualClock();
    const inst = MQClientInstance.acquire({ namesrvAddr: ns.addr, instanceName: name(), clock });
    const consumer = new FakeConsumer('cg1', SUBS);
    inst.registerConsumer('cg1', consumer);
    await inst.start();
    const routes = () => ns.requestsOf(RequestCode.GET_ROUTEINFO_BY_TOPIC).length;
    const beats = () => broker.requestsOf(RequestCode.HEART_BEAT).length;
    /** Waits (on events) until the count reaches `n`, then lets the task's completion re-arm its timer. */
    const reach = async (what: () => number, n: number): Promise<void> => {
      while (what() < n) await new Promise((r) => setTimeout(r, 2));
      for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    };
    const step = async (ms: number): Promise<void> => {
      clock.advance(ms);
      for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    };
    await step(9);
    t.equal(routes(), 0, 'no route refresh at 9 ms');
    await step(1);
    await reach(routes, 2);
    const topics = new Set(ns.requestsOf(RequestCode.GET_ROUTEINFO_BY_TOPIC).map((r) => r.extFields?.topic));
    t.ok(topics.has('TopicTest') && topics.has('%RETRY%cg1'), 'routes of subscribed topics refreshed at 10 ms');
    await step(989);
    t.equal(beats(), 0, 'no heartbeat at 999 ms');
    await step(1);
    await reach(beats, 1);
    await step(3_999);
    t.equal(consumer.persisted, 0, 'no persist at 4.999 s');
    await step(1);
    await reach(() => consumer.persisted, 1);
    await step(4_999);
    t.equal(consumer.persisted, 1, 'no persist 4.999 s later');
    await step(1);
    await reach(() => consumer.persisted, 2);
    // routes were refreshed at 10 ms, the heartbeat sent at 1 s: the next ones 30 s after those
    t.equal(routes(), 2);
    await step(30_010 - 10_000 - 1);
    t.equal(routes(), 2, 'no route refresh 29.999 s after the first');
    t.equal(beats(), 1);
    await step(1);
    await reach(routes, 4);
    await step(1_000 - 10 - 1);
    t.equal(beats(), 1, 'no heartbeat 29.999 s after the first');
    await step(1);
    await reach(beats, 2);
    await inst.release();
    const counts = [ns.requests.length, beats(), consumer.persisted];
    await step(120_000);
    t.same([ns.requests.length, beats(), consumer.persisted], counts, 'nothing runs after release');
    t.equal(clock.pending, 0, 'and no timer is left');
    await ns.close();
    await broker.close();
  },
);

t.test('broker-initiated requests reach the consumer of the named group', async (t) => {
  const broker = await startFakeBroker();
  const ns = await startFakeNameServer(
    new Map([['TopicTest', routeJson([{ name: 'broker-a', addrs: { '0': broker.addr } }])]]),
  );
  const inst = MQClientInstance.acquire({ namesrvAddr: ns.addr, instanceName: name(), clientIp: '10.0.0.1' });
  const consumer = new FakeConsumer('cg1', SUBS);
  inst.registerConsumer('cg1', consumer);
  t.teardown(async () => {
    await inst.release();
    await ns.close();
    await broker.close();
  });
  const connected = once(broker.server, 'connection');
  await inst.getTopicRoute('TopicTest');
  await inst.sendHeartbeatToAllBrokers();
  const [conn] = (await connected) as [RemotingConnection];

  await conn.invokeOneway(
    createRequest(RequestCode.NOTIFY_CONSUMER_IDS_CHANGED, { extFields: { consumerGroup: 'cg1' }, oneway: true }),
  );
  while (consumer.rebalances === 0) await new Promise((r) => setTimeout(r, 2));
  t.equal(consumer.rebalances, 1);

  const info = await conn.invoke(
    createRequest(RequestCode.GET_CONSUMER_RUNNING_INFO, {
      extFields: { consumerGroup: 'cg1', clientId: inst.clientId, jstackEnable: 'false' },
    }),
  );
  t.equal(info.code, ResponseCode.SUCCESS);
  t.match(JSON.parse(info.body!.toString()), { properties: { PROP_CONSUME_TYPE: 'CONSUME_PASSIVELY' } });

  // GET_CONSUMER_STATUS_FROM_CLIENT (221): the consumer's offsets of the topic, as GetConsumerStatusBody
  // (fastjson: MessageQueue objects as map keys); an unknown group gets an empty table, as in Java.
  const status = await conn.invoke(
    createRequest(RequestCode.GET_CONSUMER_STATUS_FROM_CLIENT, { extFields: { topic: 'TopicTest', group: 'cg1' } }),
  );
  t.equal(status.code, ResponseCode.SUCCESS);
  t.equal(
    status.body!.toString(),
    '{"consumerTable":{},"messageQueueTable":{{"brokerName":"broker-a","queueId":1,"topic":"TopicTest"}:42,{"brokerName":"broker-b","queueId":0,"topic":"TopicTest"}:7}}',
  );
  t.same(consumer.statusAsked, ['TopicTest']);
  const statusUnknown = await conn.invoke(
    createRequest(RequestCode.GET_CONSUMER_STATUS_FROM_CLIENT, {
      extFields: { topic: 'TopicTest', group: 'nope', clientAddr: '1.2.3.4:5' },
    }),
  );
  t.equal(statusUnknown.code, ResponseCode.SUCCESS);
  t.equal(statusUnknown.body!.toString(), '{"consumerTable":{},"messageQueueTable":{}}');

  const unknown = await conn.invoke(
    createRequest(RequestCode.GET_CONSUMER_RUNNING_INFO, {
      extFields: { consumerGroup: 'nope', clientId: inst.clientId, jstackEnable: 'false' },
    }),
  );
  t.equal(unknown.code, ResponseCode.SYSTEM_ERROR);
  t.equal(unknown.remark, 'The Consumer Group <nope> not exist in this consumer');
  // Headers are decoded by the operation table's codecs, as Java's decodeCommandCustomHeader does:
  // a request without its required consumerGroup is answered SYSTEM_ERROR naming the field.
  const headerless = await conn.invoke(
    createRequest(RequestCode.GET_CONSUMER_RUNNING_INFO, { extFields: { clientId: inst.clientId } }),
  );
  t.equal(headerless.code, ResponseCode.SYSTEM_ERROR);
  t.match(headerless.remark, /header field "consumerGroup"/);

  const body =
    '{"offsetTable":{{"brokerName":"broker-a","queueId":0,"topic":"TopicTest"}:100,{"brokerName":"broker-a","queueId":3,"topic":"TopicTest"}:7}}';
  await conn.invokeOneway(
    createRequest(RequestCode.RESET_CONSUMER_CLIENT_OFFSET, {
      extFields: { topic: 'TopicTest', group: 'cg1', timestamp: '0', isForce: 'true' },
      body: Buffer.from(body),
      oneway: true,
    }),
  );
  while (consumer.resets.length === 0) await new Promise((r) => setTimeout(r, 2));

  const stored = encodeStoredMessage({
    topic: 'TopicTest',
    queueId: 1,
    queueOffset: 9,
    commitLogOffset: 4096,
    bornTimestamp: 1,
    bornHost: '10.0.0.1:5000',
    storeTimestamp: 2,
    storeHost: '127.0.0.1:10911',
    body: Buffer.from('direct'),
    properties: { UNIQ_KEY: 'ABC', TAGS: 'T1' },
  });
  const direct = await conn.invoke(
    createRequest(RequestCode.CONSUME_MESSAGE_DIRECTLY, {
      extFields: { consumerGroup: 'cg1', clientId: inst.clientId, msgId: 'ABC', brokerName: 'broker-a' },
      body: stored,
    }),
  );
  t.equal(direct.code, ResponseCode.SUCCESS);
  t.same(JSON.parse(direct.body!.toString()), {
    autoCommit: true,
    consumeResult: 'CR_SUCCESS',
    order: false,
    spentTimeMills: 1,
  });
  t.equal(consumer.direct[0]!.brokerName, 'broker-a');
  t.match(consumer.direct[0]!.msg, { topic: 'TopicTest', queueOffset: 9, msgId: 'ABC', tags: 'T1' });
  t.equal(consumer.direct[0]!.msg.body.toString(), 'direct');
  const directUnknown = await conn.invoke(
    createRequest(RequestCode.CONSUME_MESSAGE_DIRECTLY, {
      extFields: { consumerGroup: 'zz', clientId: inst.clientId, msgId: 'ABC', brokerName: 'broker-a' },
      body: stored,
    }),
  );
  t.equal(directUnknown.code, ResponseCode.SYSTEM_ERROR);
  t.equal(consumer.resets[0]!.topic, 'TopicTest');
  t.same(
    [...consumer.resets[0]!.offsets],
    [
      ['TopicTest@broker-a@0', 100],
      ['TopicTest@broker-a@3', 7],
    ],
  );
});

t.test('client RPCs: pull status mapping, offsets, consumer list, locks', async (t) => {
  const broker = await startFakeNode();
  const inst = MQClientInstance.acquire({ namesrvAddr: '127.0.0.1:9876', instanceName: name(), clientIp: '10.0.0.1' });
  t.teardown(async () => {
    await inst.release();
    await broker.close();
  });
  const mq = { topic: 'T', brokerName: 'broker-a', queueId: 2 };
  let pullCode: number = ResponseCode.PULL_NOT_FOUND;
  broker.on(RequestCode.PULL_MESSAGE, (req) =>
    createResponse(req, pullCode, {
      extFields: { nextBeginOffset: '12', minOffset: '0', maxOffset: '12', suggestWhichBrokerId: '0' },
    }),
  );
  const pull = {
    consumerGroup: 'cg1',
    topic: 'T',
    queueId: 2,
    queueOffset: 12,
    maxMsgNums: 32,
    sysFlag: 2,
    commitOffset: -1,
    suspendTimeoutMillis: 15000,
    subVersion: 1712345678000,
    expressionType: 'TAG',
    bname: 'broker-a',
  };
  const r = await inst.pullMessage(broker.addr, pull, 1000);
  t.equal(r.status, 'NO_NEW_MSG');
  t.equal(r.nextBeginOffset, 12);
  t.same(r.messages, []);
  t.same(broker.requestsOf(RequestCode.PULL_MESSAGE)[0]!.extFields, {
    consumerGroup: 'cg1',
    topic: 'T',
    queueId: '2',
    queueOffset: '12',
    maxMsgNums: '32',
    sysFlag: '2',
    commitOffset: '-1',
    suspendTimeoutMillis: '15000',
    subVersion: '1712345678000',
    expressionType: 'TAG',
    bname: 'broker-a',
  });
  pullCode = ResponseCode.PULL_RETRY_IMMEDIATELY;
  t.equal((await inst.pullMessage(broker.addr, pull, 1000)).status, 'NO_MATCHED_MSG');
  pullCode = ResponseCode.PULL_OFFSET_MOVED;
  t.equal((await inst.pullMessage(broker.addr, pull, 1000)).status, 'OFFSET_ILLEGAL');
  pullCode = ResponseCode.SUBSCRIPTION_NOT_EXIST;
  await t.rejects(inst.pullMessage(broker.addr, pull, 1000), {
    name: 'BrokerError',
    code: ResponseCode.SUBSCRIPTION_NOT_EXIST,
  });

  let found = false;
  broker.on(RequestCode.QUERY_CONSUMER_OFFSET, (req) =>
    found
      ? createResponse(req, ResponseCode.SUCCESS, { extFields: { offset: '42' } })
      : createResponse(req, ResponseCode.QUERY_NOT_FOUND, { remark: 'Not found' }),
  );
  t.equal(await inst.queryConsumerOffset(broker.addr, 'cg1', mq), -1, 'QUERY_NOT_FOUND is -1');
  let foundWithOffset: string | null = '17';
  broker.on(RequestCode.QUERY_CONSUMER_OFFSET, (req) =>
    found
      ? createResponse(req, ResponseCode.SUCCESS, { extFields: { offset: '42' } })
      : createResponse(req, ResponseCode.QUERY_NOT_FOUND, {
          remark: 'Not found',
          extFields: foundWithOffset === null ? null : { offset: foundWithOffset },
        }),
  );
  t.equal(
    await inst.queryConsumerOffset(broker.addr, 'cg1', mq),
    -1,
    'QUERY_NOT_FOUND is -1 whatever offset it carries (Java never reads it)',
  );
  foundWithOffset = 'garbled';
  t.equal(await inst.queryConsumerOffset(broker.addr, 'cg1', mq), -1, 'a QUERY_NOT_FOUND header is not decoded');
  foundWithOffset = null;
  found = true;
  t.equal(await inst.queryConsumerOffset(broker.addr, 'cg1', mq), 42);
  t.same(broker.requestsOf(RequestCode.QUERY_CONSUMER_OFFSET)[0]!.extFields, {
    consumerGroup: 'cg1',
    topic: 'T',
    queueId: '2',
    bname: 'broker-a',
  });

  broker.on(RequestCode.GET_MAX_OFFSET, (req) =>
    createResponse(req, ResponseCode.SUCCESS, { extFields: { offset: '99' } }),
  );
  broker.on(RequestCode.GET_MIN_OFFSET, (req) =>
    createResponse(req, ResponseCode.SUCCESS, { extFields: { offset: '3' } }),
  );
  broker.on(RequestCode.SEARCH_OFFSET_BY_TIMESTAMP, (req) =>
    createResponse(req, ResponseCode.SUCCESS, { extFields: { offset: '50' } }),
  );
  t.equal(await inst.getMaxOffset(broker.addr, mq), 99);
  t.equal(await inst.getMinOffset(broker.addr, mq), 3);
  t.equal(await inst.searchOffsetByTimestamp(broker.addr, mq, 1700000000000), 50);
  t.equal(broker.requestsOf(RequestCode.SEARCH_OFFSET_BY_TIMESTAMP)[0]!.extFields!.timestamp, '1700000000000');

  broker.on(RequestCode.UPDATE_CONSUMER_OFFSET, () => null);
  await inst.updateConsumerOffsetOneway(broker.addr, 'cg1', mq, 77);
  while (broker.requestsOf(RequestCode.UPDATE_CONSUMER_OFFSET).length === 0) await new Promise((r) => setTimeout(r, 2));
  const up = broker.requestsOf(RequestCode.UPDATE_CONSUMER_OFFSET)[0]!;
  t.equal(up.flag & 2, 2, 'sent oneway');
  t.same(up.extFields, { consumerGroup: 'cg1', topic: 'T', queueId: '2', commitOffset: '77', bname: 'broker-a' });

  broker.on(RequestCode.GET_CONSUMER_LIST_BY_GROUP, (req) =>
    createResponse(req, ResponseCode.SUCCESS, { body: Buffer.from('{"consumerIdList":["10.0.0.1@a","10.0.0.2@b"]}') }),
  );
  t.same(await inst.getConsumerIdList(broker.addr, 'cg1'), ['10.0.0.1@a', '10.0.0.2@b']);

  broker.on(RequestCode.LOCK_BATCH_MQ, (req) =>
    createResponse(req, ResponseCode.SUCCESS, {
      body: Buffer.from('{"lockOKMQSet":[{"brokerName":"broker-a","queueId":2,"topic":"T"}]}'),
    }),
  );
  t.same(await inst.lockBatchMQ(broker.addr, 'cg1', [mq, { ...mq, queueId: 3 }]), [mq]);
  t.equal(
    broker.requestsOf(RequestCode.LOCK_BATCH_MQ)[0]!.body!.toString(),
    '{"clientId":"10.0.0.1@' +
      inst.clientId.split('@')[1] +
      '","consumerGroup":"cg1","mqSet":[{"brokerName":"broker-a","queueId":2,"topic":"T"},{"brokerName":"broker-a","queueId":3,"topic":"T"}]}',
  );

  broker.on(RequestCode.CONSUMER_SEND_MSG_BACK, (req) => createResponse(req, ResponseCode.SUCCESS));
  await inst.consumerSendMessageBack(broker.addr, {
    group: 'cg1',
    commitLogOffset: 1234,
    delayLevel: 0,
    originMsgId: 'ID',
    originTopic: 'T',
    maxReconsumeTimes: 16,
    brokerName: 'broker-a',
  });
  t.same(broker.requestsOf(RequestCode.CONSUMER_SEND_MSG_BACK)[0]!.extFields, {
    offset: '1234',
    group: 'cg1',
    delayLevel: '0',
    originMsgId: 'ID',
    originTopic: 'T',
    unitMode: 'false',
    maxReconsumeTimes: '16',
    bname: 'broker-a',
  });
});

t.test('brokers that left every route get no more heartbeats', async (t) => {
  const a = await startFakeBroker();
  const b = await startFakeBroker();
  const routes = new Map([
    [
      'T',
      routeJson([
        { name: 'broker-a', addrs: { '0': a.addr } },
        { name: 'broker-b', addrs: { '0': b.addr } },
      ]),
    ],
  ]);
  const ns = await startFakeNameServer(routes);
  const inst = MQClientInstance.acquire({ namesrvAddr: ns.addr, instanceName: name() });
  t.teardown(async () => {
    await inst.release();
    await Promise.all([ns.close(), a.close(), b.close()]);
  });
  inst.registerProducer('pg');
  await inst.getTopicRoute('T');
  await inst.sendHeartbeatToAllBrokers();
  routes.set('T', routeJson([{ name: 'broker-a', addrs: { '0': a.addr } }]));
  await inst.refreshAllRoutes();
  await inst.sendHeartbeatToAllBrokers();
  t.equal(a.requestsOf(RequestCode.HEART_BEAT).length, 2);
  t.equal(b.requestsOf(RequestCode.HEART_BEAT).length, 1);
  t.equal(inst.findBrokerAddress('broker-b'), undefined);
});

t.test('ROCKETMQ header serialization and ACL signing reach the wire', async (t) => {
  const ns = await startFakeNameServer(new Map([['T', routeJson([{ name: 'b', addrs: { '0': '127.0.0.1:9' } }])]]));
  const inst = MQClientInstance.acquire({
    namesrvAddr: ns.addr,
    instanceName: name(),
    serializeType: 'ROCKETMQ',
    language: 'OTHER',
    acl: { accessKey: 'rocketmq2', secretKey: '12345678' },
  });
  t.teardown(async () => {
    await inst.release();
    await ns.close();
  });
  await inst.getTopicRoute('T');
  const req = ns.requestsOf(RequestCode.GET_ROUTEINFO_BY_TOPIC)[0]!;
  t.equal(req.serializeType, 'ROCKETMQ');
  t.equal(req.language, 'OTHER');
  t.equal(req.extFields!.topic, 'T');
  t.equal(req.extFields!.AccessKey, 'rocketmq2');
  t.match(req.extFields!.Signature, /^[A-Za-z0-9+/]+=*$/);
});

t.test(
  'clients sharing a clientId share its instance, so a second clock is refused rather than silently ignored',
  async (t) => {
    const instanceName = name();
    const clock = new ManualClock();
    const first = MQClientInstance.acquire({ namesrvAddr: '127.0.0.1:9876', instanceName, clock });
    t.teardown(() => first.release());
    t.throws(() => MQClientInstance.acquire({ namesrvAddr: '127.0.0.1:9876', instanceName }), {
      name: 'ClientOptionError',
      option: 'clock',
    });
    const again = MQClientInstance.acquire({ namesrvAddr: '127.0.0.1:9876', instanceName, clock });
    t.equal(again, first, 'the same clock gets the shared instance');
    again.release();
  },
);
