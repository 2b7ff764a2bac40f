import { inflateSync } from 'node:zlib';
import t, { type Test } from 'tap';
import { createResponse, decodeBatch, decodeProperties, RequestCode, ResponseCode } from '../../protocol/index.js';
import {
  MessageValidationError,
  Producer,
  type ProducerOptionError,
  SendFailedError,
  resolveProducerOptions,
  selectMessageQueueByHash,
  type ProducerOptions,
} from '../../lib/producer/index.js';
import {
  routeJson,
  startFakeBroker,
  startFakeNameServer,
  startFakeNode,
  type FakeNode,
} from '../client/fake-cluster.js';
import { until } from '../consumer/helpers.js';

let seq = 0;
async function started(t: Test, namesrv: string, extra: Partial<ProducerOptions> = {}): Promise<Producer> {
  // startWithoutNameServer: these tests count the route requests of sends; start()'s own check of
  // the name server is tested in start-name-server.test.ts
  const p = new Producer({
    namesrvAddr: namesrv,
    group: 'pg1',
    instanceName: `p${process.pid}_${++seq}`,
    clientIp: '10.0.0.1',
    startWithoutNameServer: true,
    ...extra,
  });
  await p.start();
  t.teardown(() => p.shutdown());
  return p;
}

async function cluster(
  t: Test,
  brokers = 1,
  queues = 4,
): Promise<{ ns: FakeNode; bs: Awaited<ReturnType<typeof startFakeBroker>>[] }> {
  const bs = await Promise.all(Array.from({ length: brokers }, () => startFakeBroker()));
  const route = routeJson(
    bs.map((b, i) => ({ name: `broker-${String.fromCharCode(97 + i)}`, addrs: { '0': b.addr }, queues })),
  );
  const ns = await startFakeNameServer(new Map([['TopicTest', route]]));
  t.teardown(async () => {
    await ns.close();
    await Promise.all(bs.map((b) => b.close()));
  });
  return { ns, bs };
}

t.test('options: Java defaults and range checks naming the option', async (t) => {
  const o = resolveProducerOptions({ namesrvAddr: 'h:1', group: 'pg' });
  t.match(o, {
    sendMsgTimeoutMs: 3000,
    retryTimesWhenSendFailed: 2,
    compressMsgBodyOverHowmuch: 4096,
    maxMessageSize: 4194304,
    createTopicKey: 'TBW102',
    defaultTopicQueueNums: 4,
  });
  t.equal(o.client.namesrvAddr, 'h:1');
  t.notOk('group' in o.client);
  const bad = (opts: ProducerOptions): string | undefined => {
    try {
      resolveProducerOptions(opts);
    } catch (err) {
      return (err as ProducerOptionError).option;
    }
    return undefined;
  };
  t.equal(bad({ namesrvAddr: 'h:1', group: 'DEFAULT_PRODUCER' }), 'group');
  t.equal(bad({ namesrvAddr: 'h:1', group: 'a b' }), 'group');
  t.equal(bad({ namesrvAddr: 'h:1', group: 'g', retryTimesWhenSendFailed: -1 }), 'retryTimesWhenSendFailed');
  t.equal(bad({ namesrvAddr: 'h:1', group: 'g', sendMsgTimeoutMs: 0 }), 'sendMsgTimeoutMs');
});

t.test('send: SEND_MESSAGE_V2 header fields and properties exactly as Java writes them', async (t) => {
  const { ns, bs } = await cluster(t);
  const p = await started(t, ns.addr);
  const before = Date.now();
  const r = await p.send({
    topic: 'TopicTest',
    body: 'hello',
    tags: 'TagA',
    keys: ['order-1', 'k2'],
    properties: { color: 'red' },
  });
  const req = bs[0]!.stored[0]!;
  t.equal(req.code, RequestCode.SEND_MESSAGE_V2);
  t.equal(req.body!.toString(), 'hello');
  const ext = req.extFields!;
  t.same(Object.keys(ext), ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'm', 'n']);
  t.match(ext, {
    a: 'pg1',
    b: 'TopicTest',
    c: 'TBW102',
    d: '4',
    f: '0',
    h: '0',
    j: '0',
    k: 'false',
    m: 'false',
    n: 'broker-a',
  });
  t.ok(Number(ext.g) >= before && Number(ext.g) <= Date.now(), 'bornTimestamp is the client clock');
  t.ok(Number(ext.e) >= 0 && Number(ext.e) < 4);
  const props = decodeProperties(ext.i!);
  t.match(props, { TAGS: 'TagA', KEYS: 'order-1 k2', WAIT: 'true', color: 'red' });
  t.match(props.UNIQ_KEY, /^0A000001[0-9A-F]{24}$/, 'UNIQ_KEY: client IP 10.0.0.1 + pid + hash + time + counter');
  t.equal(ext.i!.indexOf('\u0002', ext.i!.length - 1), -1, 'no trailing separator (4.9.4-5.1.4 form)');
  t.match(r, {
    status: 'SEND_OK',
    msgId: props.UNIQ_KEY,
    offsetMsgId: '7F00000100002A9F0000000000000000',
    queueOffset: 0,
    regionId: 'DefaultRegion',
    traceOn: true,
  });
  t.same(r.messageQueue, { topic: 'TopicTest', brokerName: 'broker-a', queueId: Number(ext.e) });
  // The instance's first scheduled route refresh (10 ms after start, as Java) may or may not have
  // run by now; what matters is that sends reuse the cached route instead of asking each time.
  await new Promise((resolve) => setTimeout(resolve, 50));
  const routeRequests = ns.requestsOf(RequestCode.GET_ROUTEINFO_BY_TOPIC).length;
  t.ok(
    routeRequests >= 1 && routeRequests <= 2,
    `the route was asked for once, plus at most the scheduled refresh (${routeRequests})`,
  );
  await p.send({ topic: 'TopicTest', body: 'again' });
  await p.send({ topic: 'TopicTest', body: 'and again' });
  t.equal(
    ns.requestsOf(RequestCode.GET_ROUTEINFO_BY_TOPIC).length,
    routeRequests,
    'later sends reuse the cached route',
  );
});

t.test('properties iterate in Java HashMap order (as the 4.9.8 golden batch shows)', async (t) => {
  const { ns, bs } = await cluster(t);
  const p = await started(t, ns.addr);
  await p.send({ topic: 'TopicTest', body: 'x', tags: 'TagA', keys: 'order-1' });
  const names = bs[0]!.stored[0]!.extFields!.i!.split('\u0002').map((kv) => kv.split('\u0001')[0]);
  t.same(names, ['KEYS', 'UNIQ_KEY', 'WAIT', 'TAGS']);
});

t.test('V1 SEND_MESSAGE uses the long header names', async (t) => {
  const { ns, bs } = await cluster(t);
  const p = await started(t, ns.addr, { sendMessageV1: true });
  await p.send({ topic: 'TopicTest', body: 'x' });
  const req = bs[0]!.stored[0]!;
  t.equal(req.code, RequestCode.SEND_MESSAGE);
  t.match(req.extFields, {
    producerGroup: 'pg1',
    topic: 'TopicTest',
    defaultTopic: 'TBW102',
    defaultTopicQueueNums: '4',
    bname: 'broker-a',
    batch: 'false',
  });
});

t.test('bodies of 4096 bytes and more are zlib-compressed with sysFlag 0x301', async (t) => {
  const { ns, bs } = await cluster(t);
  const p = await started(t, ns.addr);
  const big = Buffer.alloc(4096, 'abcdefgh');
  await p.send({ topic: 'TopicTest', body: big });
  await p.send({ topic: 'TopicTest', body: big.subarray(0, 4095) });
  const [a, b] = bs[0]!.stored;
  t.equal(a!.extFields!.f, String(0x301));
  t.ok(a!.body!.length < 4096);
  t.same(inflateSync(a!.body!), big, 'the body is a standard zlib stream');
  t.equal(b!.extFields!.f, '0', 'below the threshold: sent as is');
  t.equal(b!.body!.length, 4095);
});

t.test('round robin over all queues of all brokers', async (t) => {
  const { ns, bs } = await cluster(t, 2, 2);
  const p = await started(t, ns.addr);
  const seen = new Set<string>();
  for (let i = 0; i < 8; i++) {
    const r = await p.send({ topic: 'TopicTest', body: 'x' });
    seen.add(`${r.messageQueue.brokerName}/${r.messageQueue.queueId}`);
  }
  t.same([...seen].sort(), ['broker-a/0', 'broker-a/1', 'broker-b/0', 'broker-b/1']);
  t.equal(bs[0]!.stored.length + bs[1]!.stored.length, 8);
  t.equal(bs[0]!.stored.length, 4, 'evenly spread');
});

t.test('selector: the same key always lands on the same queue', async (t) => {
  const { ns } = await cluster(t, 2, 4);
  const p = await started(t, ns.addr);
  const queues = new Set<string>();
  for (let i = 0; i < 5; i++) {
    const r = await p.send(
      { topic: 'TopicTest', body: `m${i}` },
      { selector: selectMessageQueueByHash, arg: 'order-42' },
    );
    queues.add(`${r.messageQueue.brokerName}/${r.messageQueue.queueId}`);
  }
  t.equal(queues.size, 1);
  const r = await p.send(
    { topic: 'TopicTest', body: 'x' },
    { queue: { topic: 'TopicTest', brokerName: 'broker-b', queueId: 3 } },
  );
  t.same(r.messageQueue, { topic: 'TopicTest', brokerName: 'broker-b', queueId: 3 });
});

t.test('an ordered send is not retried on another queue', async (t) => {
  const { ns, bs } = await cluster(t, 2, 1);
  bs[0]!.on(RequestCode.SEND_MESSAGE_V2, (req) => createResponse(req, ResponseCode.SYSTEM_BUSY, { remark: 'busy' }));
  const p = await started(t, ns.addr);
  const err = (await p
    .send({ topic: 'TopicTest', body: 'x' }, { queue: { topic: 'TopicTest', brokerName: 'broker-a', queueId: 0 } })
    .catch((e: unknown) => e)) as SendFailedError;
  t.type(err, SendFailedError);
  t.equal(err.attempts.length, 1);
  t.equal(bs[1]!.stored.length, 0, 'nothing went to broker-b');
});

t.test('a failed send is retried on the other broker', async (t) => {
  const { ns, bs } = await cluster(t, 2, 2);
  const [a, b] = bs;
  a!.on(RequestCode.SEND_MESSAGE_V2, (req) =>
    createResponse(req, ResponseCode.SYSTEM_BUSY, { remark: '[PC_SYNCHRONIZED]broker busy' }),
  );
  const p = await started(t, ns.addr);
  for (let i = 0; i < 4; i++) {
    const r = await p.send({ topic: 'TopicTest', body: 'x' });
    t.equal(r.messageQueue.brokerName, 'broker-b');
  }
  const tried = a!.requestsOf(RequestCode.SEND_MESSAGE_V2).length;
  t.ok(tried >= 1, 'broker-a was tried');
  t.equal(b!.stored.length, 4);
  const uniqA = a!.requestsOf(RequestCode.SEND_MESSAGE_V2).map((r) => decodeProperties(r.extFields!.i!).UNIQ_KEY);
  const uniqB = b!.stored.map((r) => decodeProperties(r.extFields!.i!).UNIQ_KEY);
  t.ok(
    uniqA.every((u) => uniqB.includes(u)),
    'a retry keeps the UNIQ_KEY',
  );
  t.equal(p.stats().retries, tried);
});

t.test('a broker that closes the connection is a retriable failure too', async (t) => {
  const { ns, bs } = await cluster(t, 2, 1);
  bs[0]!.on(RequestCode.SEND_MESSAGE_V2, (_req, conn) => {
    conn.close();
    return null;
  });
  const p = await started(t, ns.addr);
  const results = [];
  for (let i = 0; i < 3; i++) results.push(await p.send({ topic: 'TopicTest', body: 'x' }));
  t.ok(results.every((r) => r.messageQueue.brokerName === 'broker-b'));
});

t.test('all attempts failing gives SendFailedError listing each attempt', async (t) => {
  const { ns, bs } = await cluster(t, 1, 2);
  bs[0]!.on(RequestCode.SEND_MESSAGE_V2, (req) =>
    createResponse(req, ResponseCode.SYSTEM_ERROR, { remark: 'disk full' }),
  );
  const p = await started(t, ns.addr, { retryTimesWhenSendFailed: 2 });
  const err = (await p.send({ topic: 'TopicTest', body: 'x' }).catch((e: unknown) => e)) as SendFailedError;
  t.type(err, SendFailedError);
  t.equal(err.attempts.length, 3, '1 + retryTimesWhenSendFailed');
  t.match(err.message, /disk full/);
  t.equal(bs[0]!.requestsOf(RequestCode.SEND_MESSAGE_V2).length, 3);
  t.same(p.stats(), { sent: 0, failed: 1, retries: 2 });
});

t.test('a non-retriable answer is thrown at once', async (t) => {
  const { ns, bs } = await cluster(t, 2, 1);
  for (const b of bs)
    b.on(RequestCode.SEND_MESSAGE_V2, (req) => createResponse(req, ResponseCode.MESSAGE_ILLEGAL, { remark: 'bad' }));
  const p = await started(t, ns.addr);
  await t.rejects(p.send({ topic: 'TopicTest', body: 'x' }), {
    name: 'BrokerError',
    code: ResponseCode.MESSAGE_ILLEGAL,
  });
  t.equal(
    bs[0]!.requestsOf(RequestCode.SEND_MESSAGE_V2).length + bs[1]!.requestsOf(RequestCode.SEND_MESSAGE_V2).length,
    1,
  );
});

t.test('FLUSH_DISK_TIMEOUT is a stored message with that status', async (t) => {
  const { ns, bs } = await cluster(t);
  bs[0]!.on(RequestCode.SEND_MESSAGE_V2, (req) =>
    createResponse(req, ResponseCode.FLUSH_DISK_TIMEOUT, {
      extFields: { msgId: 'X', queueId: '1', queueOffset: '5', MSG_REGION: 'r', TRACE_ON: 'false' },
    }),
  );
  const p = await started(t, ns.addr);
  const r = await p.send({ topic: 'TopicTest', body: 'x' });
  t.match(r, { status: 'FLUSH_DISK_TIMEOUT', offsetMsgId: 'X', queueOffset: 5, traceOn: false });
  t.equal(r.messageQueue.queueId, 1);
});

t.test(
  'a send answer with a garbled queueOffset is a ResponseFieldError, not NaN (and not retried: the broker may have stored it)',
  async (t) => {
    const { ns, bs } = await cluster(t);
    bs[0]!.on(RequestCode.SEND_MESSAGE_V2, (req) =>
      createResponse(req, ResponseCode.SUCCESS, { extFields: { msgId: 'X', queueId: '1', queueOffset: 'five' } }),
    );
    const p = await started(t, ns.addr);
    await t.rejects(p.send({ topic: 'TopicTest', body: 'x' }), {
      name: 'ResponseFieldError',
      field: 'queueOffset',
      requestCode: RequestCode.SEND_MESSAGE_V2,
      addr: bs[0]!.addr,
    });
    t.equal(bs[0]!.requestsOf(RequestCode.SEND_MESSAGE_V2).length, 1);
  },
);

t.test('the time budget ends the retries', async (t) => {
  const { ns, bs } = await cluster(t, 1, 1);
  bs[0]!.on(RequestCode.SEND_MESSAGE_V2, () => null);
  const p = await started(t, ns.addr, { sendMsgTimeoutMs: 50 });
  const err = (await p.send({ topic: 'TopicTest', body: 'x' }).catch((e: unknown) => e)) as SendFailedError;
  t.type(err, SendFailedError);
  t.equal(err.timedOut, true);
  t.equal(err.attempts[0]!.error.name, 'RemotingTimeoutError');
});

t.test('sendOneway: one oneway frame, no answer awaited', async (t) => {
  const { ns, bs } = await cluster(t);
  const p = await started(t, ns.addr);
  await p.sendOneway({ topic: 'TopicTest', body: 'fire' });
  while (bs[0]!.stored.length === 0) await new Promise((r) => setTimeout(r, 2));
  t.equal(bs[0]!.stored[0]!.flag & 2, 2);
});

t.test('delay level goes to property DELAY', async (t) => {
  const { ns, bs } = await cluster(t);
  const p = await started(t, ns.addr);
  await p.send({ topic: 'TopicTest', body: 'x', delayTimeLevel: 3 });
  t.equal(decodeProperties(bs[0]!.stored[0]!.extFields!.i!).DELAY, '3');
});

t.test('batch: SEND_BATCH_MESSAGE with one record per message, each with its UNIQ_KEY', async (t) => {
  const { ns, bs } = await cluster(t);
  const p = await started(t, ns.addr);
  const big = Buffer.alloc(5000, 1);
  const r = await p.sendBatch([
    { topic: 'TopicTest', body: 'one', tags: 'A' },
    { topic: 'TopicTest', body: 'two', keys: 'k2', flag: 7 },
    { topic: 'TopicTest', body: big },
  ]);
  const req = bs[0]!.stored[0]!;
  t.equal(req.code, RequestCode.SEND_BATCH_MESSAGE);
  t.match(req.extFields, { m: 'true', f: '0', b: 'TopicTest' });
  const batchProps = decodeProperties(req.extFields!.i!);
  t.same(batchProps, { WAIT: 'true' }, '4.9.8 gives the batch itself no UNIQ_KEY');
  const items = decodeBatch(req.body!);
  t.equal(items.length, 3);
  t.equal(items[0]!.body.toString(), 'one');
  t.equal(items[0]!.properties.TAGS, 'A');
  t.equal(items[1]!.flag, 7);
  t.equal(items[1]!.properties.KEYS, 'k2');
  t.same(items[2]!.body, big, 'batches are never compressed');
  t.equal(r.msgId, items.map((i) => i.properties.UNIQ_KEY).join(','));
});

t.test('batch rules: one topic, no delay, no retry topic, not empty', async (t) => {
  const { ns } = await cluster(t);
  const p = await started(t, ns.addr);
  await t.rejects(p.sendBatch([]), MessageValidationError);
  await t.rejects(
    p.sendBatch([
      { topic: 'TopicTest', body: 'a' },
      { topic: 'Other', body: 'b' },
    ]),
    { name: 'MessageValidationError', field: 'topic' },
  );
  await t.rejects(p.sendBatch([{ topic: 'TopicTest', body: 'a', delayTimeLevel: 2 }]), {
    name: 'MessageValidationError',
    field: 'delayTimeLevel',
  });
  await t.rejects(p.sendBatch([{ topic: '%RETRY%g', body: 'a' }]), { name: 'MessageValidationError', field: 'topic' });
});

t.test('message checks as Java Validators', async (t) => {
  const { ns } = await cluster(t);
  const p = await started(t, ns.addr, { maxMessageSize: 10 });
  await t.rejects(p.send({ topic: '', body: 'x' }), { name: 'MessageValidationError', field: 'topic' });
  await t.rejects(p.send({ topic: 'bad topic', body: 'x' }), { name: 'MessageValidationError', field: 'topic' });
  await t.rejects(p.send({ topic: 'TBW102', body: 'x' }), { name: 'MessageValidationError', field: 'topic' });
  await t.rejects(p.send({ topic: 'TopicTest', body: '' }), { name: 'MessageValidationError', field: 'body' });
  await t.rejects(p.send({ topic: 'TopicTest', body: 'x'.repeat(11) }), {
    name: 'MessageValidationError',
    field: 'body',
  });
  await t.rejects(p.send({ topic: 'TopicTest', body: 'x', properties: { UNIQ_KEY: 'mine' } }), {
    name: 'MessageValidationError',
    field: 'properties',
  });
  await t.rejects(p.send({ topic: 'TopicTest', body: 'x', properties: { big: 'é'.repeat(16400) } }), {
    name: 'MessageValidationError',
    field: 'properties',
  });
  t.equal(ns.requestsOf(RequestCode.GET_ROUTEINFO_BY_TOPIC).length, 0, 'rejected before any request');
});

t.test('unknown topic: the TBW102 route is used and the broker creates the topic', async (t) => {
  const broker = await startFakeBroker();
  const routes = new Map([
    ['TBW102', routeJson([{ name: 'broker-a', addrs: { '0': broker.addr }, queues: 8, readQueues: 8 }])],
  ]);
  const ns = await startFakeNameServer(routes);
  t.teardown(async () => {
    await ns.close();
    await broker.close();
  });
  const p = await started(t, ns.addr);
  const queues = await p.fetchPublishMessageQueues('NewTopic');
  t.same(
    queues.map((q) => q.queueId),
    [0, 1, 2, 3],
    'min(defaultTopicQueueNums 4, template 8) queues',
  );
  t.ok(queues.every((q) => q.topic === 'NewTopic' && q.brokerName === 'broker-a'));
  const r = await p.send({ topic: 'NewTopic', body: 'x' });
  t.equal(r.status, 'SEND_OK');
  const ext = broker.stored[0]!.extFields!;
  t.match(ext, { b: 'NewTopic', c: 'TBW102', d: '4' });
  // the send's new connection to the broker got a heartbeat at once (Java 5.x's onChannelActive)
  await until(() => broker.requestsOf(RequestCode.HEART_BEAT).length === 1, 'the heartbeat on the new connection');
  await p['clientInstance'].sendHeartbeatToAllBrokers();
  t.equal(broker.requestsOf(RequestCode.HEART_BEAT).length, 2, 'the template broker gets heartbeats');
  const asked = ns.requestsOf(RequestCode.GET_ROUTEINFO_BY_TOPIC).map((r) => r.extFields!.topic);
  t.same(asked.slice(0, 2), ['NewTopic', 'TBW102']);

  // Once the name server knows the topic, the next refresh replaces the borrowed queues.
  routes.set('NewTopic', routeJson([{ name: 'broker-a', addrs: { '0': broker.addr }, queues: 2 }]));
  // (A scheduled refresh may be in flight with the old answer; the next one sees the new route.)
  for (let i = 0; i < 20 && (await p.fetchPublishMessageQueues('NewTopic')).length !== 2; i++)
    await p['clientInstance'].refreshAllRoutes();
  t.same(
    (await p.fetchPublishMessageQueues('NewTopic')).map((q) => q.queueId),
    [0, 1],
  );
});

t.test('a known topic without writable queues is not auto-created', async (t) => {
  const ns = await startFakeNameServer(
    new Map([
      ['ReadOnly', routeJson([{ name: 'broker-a', addrs: { '0': '127.0.0.1:9' }, perm: 4 }])],
      ['TBW102', routeJson([{ name: 'broker-a', addrs: { '0': '127.0.0.1:9' } }])],
    ]),
  );
  t.teardown(() => ns.close());
  const p = await started(t, ns.addr);
  await t.rejects(p.send({ topic: 'ReadOnly', body: 'x' }), { name: 'NoRouteError', topic: 'ReadOnly' });
  t.notOk(ns.requestsOf(RequestCode.GET_ROUTEINFO_BY_TOPIC).some((r) => r.extFields!.topic === 'TBW102'));
});

t.test('no route and no TBW102 either: NoRouteError naming the topic', async (t) => {
  const ns = await startFakeNameServer(new Map());
  t.teardown(() => ns.close());
  const p = await started(t, ns.addr);
  await t.rejects(p.send({ topic: 'Nowhere', body: 'x' }), { name: 'NoRouteError', topic: 'Nowhere' });
});

t.test('heartbeat announces the producer group to the master only', async (t) => {
  const master = await startFakeBroker();
  const slave = await startFakeNode();
  slave.on(RequestCode.HEART_BEAT, (req) => createResponse(req, ResponseCode.SUCCESS));
  const ns = await startFakeNameServer(
    new Map([['TopicTest', routeJson([{ name: 'broker-a', addrs: { '0': master.addr, '1': slave.addr } }])]]),
  );
  t.teardown(async () => {
    await ns.close();
    await master.close();
    await slave.close();
  });
  const p = await started(t, ns.addr);
  await p.send({ topic: 'TopicTest', body: 'x' });
  await p['clientInstance'].sendHeartbeatToAllBrokers();
  const hb = master.requestsOf(RequestCode.HEART_BEAT).at(-1)!;
  t.same(JSON.parse(hb.body!.toString()), {
    clientID: p['clientInstance'].clientId,
    consumerDataSet: [],
    producerDataSet: [{ groupName: 'pg1' }],
  });
  t.equal(slave.requestsOf(RequestCode.HEART_BEAT).length, 0);
});

t.test('lifecycle: send before start or after shutdown fails; shutdown unregisters the group', async (t) => {
  const { ns, bs } = await cluster(t);
  const p = new Producer({ namesrvAddr: ns.addr, group: 'pgx', instanceName: `life${process.pid}` });
  await t.rejects(p.send({ topic: 'TopicTest', body: 'x' }), {
    name: 'ProducerStateError',
    errorCode: 'ERR_PRODUCER_STATE',
    state: 'CREATED',
    retriable: false,
    message: 'producer pgx is not started: call start() first',
  });
  await p.start();
  await p.send({ topic: 'TopicTest', body: 'x' });
  await p.shutdown();
  t.equal(bs[0]!.requestsOf(RequestCode.UNREGISTER_CLIENT)[0]?.extFields?.producerGroup, 'pgx');
  await t.rejects(p.send({ topic: 'TopicTest', body: 'x' }), {
    name: 'ProducerStateError',
    state: 'SHUTDOWN',
    message: 'producer pgx is shut down',
  });
  const again = new Producer({ namesrvAddr: ns.addr, group: 'pgx', instanceName: `life${process.pid}` });
  await again.start();
  await again.shutdown();
  t.pass('the group can be registered again after shutdown');
});

t.test('the send frame matches the Java 4.9.8 golden SEND_MESSAGE_V2 byte for byte (JSON and ROCKETMQ)', async (t) => {
  const golden = JSON.parse(
    (await import('node:fs')).readFileSync(
      new URL('../../../test/fixtures/vectors/4.9.8/frames.json', import.meta.url),
      'utf8',
    ),
  ) as { name: string; hex: string; fields: { extFields: [string, string][]; bodyHex: string } }[];
  const { encodeCommand } = await import('../../protocol/index.js');
  for (const type of ['JSON', 'ROCKETMQ'] as const) {
    const g = golden.find((f) => f.name === `send-message-v2.${type.toLowerCase()}`)!;
    const want = Object.fromEntries(g.fields.extFields);
    const { ns, bs } = await cluster(t, 1, 4);
    const p = await started(t, ns.addr, { serializeType: type });
    await p.send({
      topic: 'TopicTest',
      body: Buffer.from(g.fields.bodyHex, 'hex'),
      tags: 'TagA',
      keys: ['order-1', 'order-2'],
    });
    const req = bs[0]!.stored[0]!;
    t.equal(req.serializeType, type);
    // Only the clock, the queue choice, the generated UNIQ_KEY (and so the property string) and the opaque vary.
    const ext = { ...req.extFields!, g: want.g!, e: want.e!, i: want.i! };
    t.same(Object.keys(ext).sort(), Object.keys(want).sort(), `${type}: the same header keys as Java`);
    const bytes = encodeCommand({ ...req, opaque: 7, extFields: ext });
    t.equal(bytes.toString('hex'), g.hex, `${type}: identical frame bytes`);
  }
});
