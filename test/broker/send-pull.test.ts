import t from 'tap';
import { RequestCode, ResponseCode, createRequest } from '../../protocol/index.js';
import { startBroker } from '../../lib/broker/index.js';
import { RemotingClient } from '../../lib/remoting/index.js';
import { batchBody, client, decode, ext, pullRequest, sendRequest } from './helpers.js';

t.test('send and pull round trip in both serialize types', async (t) => {
  const b = await startBroker({ queues: 4 });
  t.teardown(() => b.close());
  for (const type of ['JSON', 'ROCKETMQ'] as const) {
    const c = client(type);
    t.teardown(() => c.close());
    const topic = `RoundTrip${type}`;
    for (const code of [RequestCode.SEND_MESSAGE_V2, RequestCode.SEND_MESSAGE]) {
      const res = await c.invoke(
        b.broker,
        sendRequest(topic, `hello-${code}`, { code, tags: 'TagA', keys: 'k1 k2', serializeType: type, queueId: 1 }),
      );
      t.equal(res.code, ResponseCode.SUCCESS, `${type} send code ${code}`);
      t.equal(ext(res, 'queueId'), '1');
      t.match(ext(res, 'msgId'), /^7F000001[0-9A-F]{24}$/, 'offset msgId of 127.0.0.1 + port + offset');
      t.equal(ext(res, 'MSG_REGION'), 'DefaultRegion');
      t.equal(ext(res, 'TRACE_ON'), 'true');
    }
    const pull = await c.invoke(b.broker, pullRequest(topic, { queueId: 1, serializeType: type }));
    t.equal(pull.code, ResponseCode.SUCCESS);
    t.equal(pull.remark, 'FOUND');
    t.equal(ext(pull, 'nextBeginOffset'), '2');
    t.equal(ext(pull, 'maxOffset'), '2');
    t.equal(ext(pull, 'minOffset'), '0');
    t.equal(ext(pull, 'suggestWhichBrokerId'), '0');
    const msgs = decode(pull);
    t.same(
      msgs.map((m) => m.body.toString()),
      [`hello-${RequestCode.SEND_MESSAGE_V2}`, `hello-${RequestCode.SEND_MESSAGE}`],
    );
    const m = msgs[0]!;
    t.equal(m.topic, topic);
    t.equal(m.queueId, 1);
    t.equal(m.queueOffset, 0);
    t.equal(msgs[1]!.queueOffset, 1);
    t.equal(m.tags, 'TagA');
    t.same(m.keys, ['k1', 'k2'], 'keys as an array');
    t.equal(m.properties.KEYS, 'k1 k2', 'stored space-joined, as Java');
    t.equal(m.properties.CLUSTER, 'DefaultCluster');
    t.equal(m.storeHost, b.broker, 'STOREHOST is the broker address');
    t.match(m.bornHost, /^127\.0\.0\.1:\d+$/);
    t.ok(m.storeTimestamp > 0);
    t.ok(msgs[1]!.commitLogOffset > m.commitLogOffset);
    // the offset msgId resolves through VIEW_MESSAGE_BY_ID
    const view = await c.invoke(
      b.broker,
      createRequest(RequestCode.VIEW_MESSAGE_BY_ID, { extFields: { offset: String(m.commitLogOffset) } }),
    );
    t.equal(view.code, ResponseCode.SUCCESS);
    t.equal(decode(view)[0]!.offsetMsgId, m.offsetMsgId);
  }
});

t.test('auto-create from TBW102 through the name server, and routes', async (t) => {
  const b = await startBroker({ queues: 3 });
  t.teardown(() => b.close());
  const c = client();
  t.teardown(() => c.close());
  const route = (topic: string) =>
    c.invoke(b.namesrv, createRequest(RequestCode.GET_ROUTEINFO_BY_TOPIC, { extFields: { topic } }));
  const missing = await route('NewTopic');
  t.equal(missing.code, ResponseCode.TOPIC_NOT_EXIST);
  t.match(missing.remark, /^No topic route info in name server for the topic: NewTopic/);
  const tbw = await route('TBW102');
  t.equal(tbw.code, ResponseCode.SUCCESS);
  const tbwRoute = JSON.parse(tbw.body!.toString()) as {
    brokerDatas: { brokerAddrs: Record<string, string> }[];
    queueDatas: { writeQueueNums: number; perm: number }[];
  };
  t.equal(tbwRoute.brokerDatas[0]!.brokerAddrs['0'], b.broker);
  t.equal(tbwRoute.queueDatas[0]!.writeQueueNums, 3);
  t.equal(tbwRoute.queueDatas[0]!.perm, 7);
  const sent = await c.invoke(b.broker, sendRequest('NewTopic', 'x', { defaultTopicQueueNums: 4 }));
  t.equal(sent.code, ResponseCode.SUCCESS);
  const created = await route('NewTopic');
  t.equal(created.code, ResponseCode.SUCCESS);
  t.equal(
    created.body!.toString(),
    `{"brokerDatas":[{"brokerAddrs":{"0":"${b.broker}"},"brokerName":"broker-a","cluster":"DefaultCluster"}],"filterServerTable":{},"queueDatas":[{"brokerName":"broker-a","perm":6,"readQueueNums":3,"topicSysFlag":0,"writeQueueNums":3}]}`,
    'standard JSON, min(4, 3) queues',
  );
  const oldClient = new RemotingClient({ version: 300 });
  t.teardown(() => oldClient.close());
  const old = await oldClient.invoke(
    b.namesrv,
    createRequest(RequestCode.GET_ROUTEINFO_BY_TOPIC, { extFields: { topic: 'NewTopic' } }),
  );
  t.match(old.body!.toString(), `"brokerAddrs":{0:"${b.broker}"}`, 'old clients get fastjson unquoted keys');
  const cluster = await c.invoke(b.namesrv, createRequest(RequestCode.GET_BROKER_CLUSTER_INFO));
  t.match(cluster.body!.toString(), `"clusterAddrTable":{"DefaultCluster":["broker-a"]}`);
  const other = await c.invoke(
    b.namesrv,
    createRequest(RequestCode.GET_KV_CONFIG, { extFields: { namespace: 'x', key: 'y' } }),
  );
  t.equal(other.code, ResponseCode.REQUEST_CODE_NOT_SUPPORTED);
});

t.test('multi-broker routes', async (t) => {
  const b = await startBroker({ brokers: 2, queues: 2 });
  t.teardown(() => b.close());
  const c = client();
  t.teardown(() => c.close());
  t.equal(b.brokers.length, 2);
  const r = await c.invoke(
    b.namesrv,
    createRequest(RequestCode.GET_ROUTEINFO_BY_TOPIC, { extFields: { topic: 'TBW102' } }),
  );
  const route = JSON.parse(r.body!.toString()) as {
    brokerDatas: { brokerName: string; brokerAddrs: Record<string, string> }[];
  };
  t.same(
    route.brokerDatas.map((d) => [d.brokerName, d.brokerAddrs['0']]),
    [
      ['broker-a', b.brokers[0]],
      ['broker-b', b.brokers[1]],
    ],
  );
  const created = await c.invoke(
    b.namesrv,
    createRequest(RequestCode.UPDATE_AND_CREATE_TOPIC, {
      extFields: {
        topic: 'Both',
        defaultTopic: 'TBW102',
        readQueueNums: '2',
        writeQueueNums: '2',
        perm: '6',
        topicFilterType: 'SINGLE_TAG',
        topicSysFlag: '0',
        order: 'false',
      },
    }),
  );
  t.equal(created.code, ResponseCode.SUCCESS);
  const both = await c.invoke(
    b.namesrv,
    createRequest(RequestCode.GET_ROUTEINFO_BY_TOPIC, { extFields: { topic: 'Both' } }),
  );
  t.equal((JSON.parse(both.body!.toString()) as { queueDatas: unknown[] }).queueDatas.length, 2);
  // sending to broker-b creates the topic there only
  await c.invoke(b.brokers[1]!, sendRequest('OnlyB', 'x'));
  const onlyB = await c.invoke(
    b.namesrv,
    createRequest(RequestCode.GET_ROUTEINFO_BY_TOPIC, { extFields: { topic: 'OnlyB' } }),
  );
  t.same(
    (JSON.parse(onlyB.body!.toString()) as { brokerDatas: { brokerName: string }[] }).brokerDatas.map(
      (d) => d.brokerName,
    ),
    ['broker-b'],
  );
});

t.test('batch send', async (t) => {
  const b = await startBroker();
  t.teardown(() => b.close());
  const c = client();
  t.teardown(() => c.close());
  const req = sendRequest(
    'Batch',
    batchBody([
      { body: 'one', properties: { UNIQ_KEY: 'A1', TAGS: 'x' } },
      { body: 'two', properties: { UNIQ_KEY: 'A2' } },
      { body: 'three', properties: { UNIQ_KEY: 'A3' } },
    ]),
    { code: RequestCode.SEND_BATCH_MESSAGE, queueId: 2 },
  );
  req.extFields!.m = 'true';
  req.extFields!.i = 'WAIT\u0001true'; // batch-level properties: only WAIT, as the Java producer sends
  const res = await c.invoke(b.broker, req);
  t.equal(res.code, ResponseCode.SUCCESS);
  t.equal(ext(res, 'msgId')!.split(',').length, 3);
  t.equal(ext(res, 'queueOffset'), '0');
  const pull = await c.invoke(b.broker, pullRequest('Batch', { queueId: 2 }));
  const msgs = decode(pull);
  t.same(
    msgs.map((m) => [m.body.toString(), m.msgId, m.queueOffset]),
    [
      ['one', 'A1', 0],
      ['two', 'A2', 1],
      ['three', 'A3', 2],
    ],
  );
  t.equal(msgs[0]!.properties.WAIT, 'true', 'batch-level properties appended to each message');
  t.same(
    msgs.map((m) => m.offsetMsgId),
    ext(res, 'msgId')!.split(','),
  );
});

t.test('every pull status', async (t) => {
  const b = await startBroker();
  t.teardown(() => b.close());
  const c = client();
  t.teardown(() => c.close());
  for (let i = 0; i < 3; i++) await c.invoke(b.broker, sendRequest('Status', `m${i}`, { tags: i === 1 ? 'B' : 'A' }));
  await c.invoke(b.broker, sendRequest('Other', 'x', { queueId: 0 }));
  const pull = async (o: Parameters<typeof pullRequest>[1], topic = 'Status') =>
    c.invoke(b.broker, pullRequest(topic, o));
  const cases: [string, Parameters<typeof pullRequest>[1], number, string, string, string?][] = [
    ['found', { offset: 0 }, ResponseCode.SUCCESS, 'FOUND', '3'],
    ['caught up', { offset: 3 }, ResponseCode.PULL_NOT_FOUND, 'OFFSET_OVERFLOW_ONE', '3'],
    ['far beyond', { offset: 10 }, ResponseCode.PULL_OFFSET_MOVED, 'OFFSET_OVERFLOW_BADLY', '3'],
    ['too small', { offset: -5 }, ResponseCode.PULL_OFFSET_MOVED, 'OFFSET_TOO_SMALL', '0'],
    [
      'no match',
      { offset: 0, maxMsgNums: 32, subscription: 'C' },
      ResponseCode.PULL_RETRY_IMMEDIATELY,
      'NO_MATCHED_MESSAGE',
      '3',
    ],
    [
      'empty queue at 0',
      { offset: 0, queueId: 1 },
      ResponseCode.PULL_NOT_FOUND,
      'NO_MATCHED_LOGIC_QUEUE',
      '0',
      'Other',
    ],
    [
      'empty queue past 0',
      { offset: 4, queueId: 1 },
      ResponseCode.PULL_OFFSET_MOVED,
      'NO_MATCHED_LOGIC_QUEUE',
      '0',
      'Other',
    ],
  ];
  for (const [name, o, code, remark, next, topic] of cases) {
    const r = await pull(o, topic);
    t.equal(r.code, code, `${name}: code`);
    t.equal(r.remark, remark, `${name}: remark`);
    t.equal(ext(r, 'nextBeginOffset'), next, `${name}: nextBeginOffset`);
    if (code !== ResponseCode.SUCCESS) t.equal(r.body, null, `${name}: no body`);
  }
  const tagged = await pull({ offset: 0, subscription: 'B || Z' });
  t.same(
    decode(tagged).map((m) => m.body.toString()),
    ['m1'],
    'tag filter by hash code',
  );
  t.equal(ext(tagged, 'nextBeginOffset'), '3', 'filtered-out entries still advance');
  const one = await pull({ offset: 0, maxMsgNums: 1 });
  t.equal(decode(one).length, 1);
  t.equal(ext(one, 'nextBeginOffset'), '1');
  const badQueue = await pull({ queueId: 99 });
  t.equal(badQueue.code, ResponseCode.SYSTEM_ERROR);
  const noTopic = await pull({}, 'NoSuchTopic');
  t.equal(noTopic.code, ResponseCode.TOPIC_NOT_EXIST);
});

t.test('per-pull caps: 32 messages, 256 KiB, first message always', async (t) => {
  const b = await startBroker();
  t.teardown(() => b.close());
  const c = client();
  t.teardown(() => c.close());
  for (let i = 0; i < 40; i++) await c.invoke(b.broker, sendRequest('Caps', `m${i}`));
  const r = await c.invoke(b.broker, pullRequest('Caps', { maxMsgNums: 64 }));
  t.equal(decode(r).length, 32);
  t.equal(ext(r, 'nextBeginOffset'), '32');
  const big = Buffer.alloc(200 * 1024, 1);
  await c.invoke(b.broker, sendRequest('Big', big));
  await c.invoke(b.broker, sendRequest('Big', big));
  const r2 = await c.invoke(b.broker, pullRequest('Big'));
  t.equal(decode(r2).length, 1, 'second 200 KiB message would pass 256 KiB');
  t.equal(ext(r2, 'nextBeginOffset'), '1');
});

t.test('bad sends: MESSAGE_ILLEGAL, TOPIC_NOT_EXIST without auto-create, forbidden topics', async (t) => {
  const b = await startBroker({ autoCreateTopic: false });
  t.teardown(() => b.close());
  const c = client();
  t.teardown(() => c.close());
  const unknown = await c.invoke(b.broker, sendRequest('Unknown', 'x'));
  t.equal(unknown.code, ResponseCode.TOPIC_NOT_EXIST);
  t.match(unknown.remark, /^topic\[Unknown\] not exist, apply first please!/);
  t.equal(ext(unknown, 'MSG_REGION'), 'DefaultRegion', 'error answers to sends carry MSG_REGION too');
  t.equal(ext(unknown, 'TRACE_ON'), 'true');
  // the header mqadmin updateTopic sends (CreateTopicRequestHeader: defaultTopic, topicFilterType and order are required)
  const made = await c.invoke(
    b.broker,
    createRequest(RequestCode.UPDATE_AND_CREATE_TOPIC, {
      extFields: {
        topic: 'Made',
        defaultTopic: 'TBW102',
        readQueueNums: '2',
        writeQueueNums: '2',
        perm: '6',
        topicFilterType: 'SINGLE_TAG',
        topicSysFlag: '0',
        order: 'false',
      },
    }),
  );
  t.equal(made.code, ResponseCode.SUCCESS);
  const tooBig = await c.invoke(b.broker, sendRequest('Made', Buffer.alloc(4 * 1024 * 1024 + 1)), { timeoutMs: 10000 });
  t.equal(tooBig.code, ResponseCode.MESSAGE_ILLEGAL);
  const bigProps = await c.invoke(b.broker, sendRequest('Made', 'x', { properties: { BIG: 'p'.repeat(33000) } }));
  t.equal(bigProps.code, ResponseCode.MESSAGE_ILLEGAL);
  const forbidden = await c.invoke(b.broker, sendRequest('SCHEDULE_TOPIC_XXXX', 'x'));
  t.equal(forbidden.code, ResponseCode.NO_PERMISSION);
  // INVALID_PARAMETER, as Java's AbstractSendMessageProcessor#msgCheck answers since 5.3.2 (SYSTEM_ERROR before)
  const badName = await c.invoke(b.broker, sendRequest('bad topic!', 'x'));
  t.equal(badName.code, ResponseCode.INVALID_PARAMETER);
  const badQueue = await c.invoke(b.broker, sendRequest('Made', 'x', { queueId: 5 }));
  t.equal(badQueue.code, ResponseCode.SYSTEM_ERROR);
  const ok = await c.invoke(b.broker, sendRequest('Made', 'fine', { queueId: 1 }));
  t.equal(ok.code, ResponseCode.SUCCESS, 'the broker still serves after rejecting');
  const unsupported = await c.invoke(
    b.broker,
    createRequest(RequestCode.GET_ALL_TOPIC_CONFIG, { extFields: { topic: 'Made' } }),
  );
  t.equal(unsupported.code, ResponseCode.REQUEST_CODE_NOT_SUPPORTED);
});

t.test('offsets: piggyback, update, query on young queues, max/min/search/earliest', async (t) => {
  const b = await startBroker();
  t.teardown(() => b.close());
  const c = client();
  t.teardown(() => c.close());
  for (let i = 0; i < 5; i++) await c.invoke(b.broker, sendRequest('Off', `m${i}`));
  const query = (queueId = 0) =>
    c.invoke(
      b.broker,
      createRequest(RequestCode.QUERY_CONSUMER_OFFSET, {
        extFields: { consumerGroup: 'g', topic: 'Off', queueId: String(queueId) },
      }),
    );
  const young = await query();
  t.equal(young.code, ResponseCode.SUCCESS, 'young non-empty queue answers 0');
  t.equal(ext(young, 'offset'), '0');
  const empty = await query(3);
  t.equal(empty.code, ResponseCode.QUERY_NOT_FOUND);
  t.equal(empty.remark, 'Not found, V3_0_6_SNAPSHOT maybe this group consumer boot first');
  // piggyback with FLAG_COMMIT_OFFSET
  await c.invoke(b.broker, pullRequest('Off', { group: 'g', sysFlag: 1 | 4, commitOffset: 4 }));
  t.equal(ext(await query(), 'offset'), '4');
  // smaller values are stored too
  await c.invoke(b.broker, pullRequest('Off', { group: 'g', sysFlag: 1 | 4, commitOffset: 2 }));
  t.equal(ext(await query(), 'offset'), '2');
  // without the flag nothing is stored
  await c.invoke(b.broker, pullRequest('Off', { group: 'g', sysFlag: 4, commitOffset: 5 }));
  t.equal(ext(await query(), 'offset'), '2');
  // oneway UPDATE_CONSUMER_OFFSET
  await c.invokeOneway(
    b.broker,
    createRequest(RequestCode.UPDATE_CONSUMER_OFFSET, {
      oneway: true,
      extFields: { consumerGroup: 'g', topic: 'Off', queueId: '0', commitOffset: '3' },
    }),
  );
  const q = await query();
  t.equal(ext(q, 'offset'), '3', 'oneway update processed before the next request');
  const max = await c.invoke(
    b.broker,
    createRequest(RequestCode.GET_MAX_OFFSET, { extFields: { topic: 'Off', queueId: '0' } }),
  );
  t.equal(ext(max, 'offset'), '5');
  const min = await c.invoke(
    b.broker,
    createRequest(RequestCode.GET_MIN_OFFSET, { extFields: { topic: 'Off', queueId: '0' } }),
  );
  t.equal(ext(min, 'offset'), '0');
  const earliest = await c.invoke(
    b.broker,
    createRequest(RequestCode.GET_EARLIEST_MSG_STORETIME, { extFields: { topic: 'Off', queueId: '0' } }),
  );
  t.ok(Number(ext(earliest, 'timestamp')) > 0);
  const future = await c.invoke(
    b.broker,
    createRequest(RequestCode.SEARCH_OFFSET_BY_TIMESTAMP, {
      extFields: { topic: 'Off', queueId: '0', timestamp: String(Date.now() + 60_000), boundaryType: 'LOWER' },
    }),
  );
  t.equal(ext(future, 'offset'), '5', '5.x LOWER past the end gives max offset');
  const past = await c.invoke(
    b.broker,
    createRequest(RequestCode.SEARCH_OFFSET_BY_TIMESTAMP, {
      extFields: { topic: 'Off', queueId: '0', timestamp: '0' },
    }),
  );
  t.equal(ext(past, 'offset'), '0');
});

t.test('admin reads: GET_TOPIC_CONFIG, GET_CONSUME_STATS; LITE_PULL_MESSAGE pulls like PULL_MESSAGE', async (t) => {
  const b = await startBroker({ queues: 2 });
  t.teardown(() => b.close());
  const c = client();
  t.teardown(() => c.close());
  for (let i = 0; i < 3; i++) await c.invoke(b.broker, sendRequest('Stats', `m${i}`, { queueId: 1 }));
  const cfg = await c.invoke(b.broker, createRequest(RequestCode.GET_TOPIC_CONFIG, { extFields: { topic: 'Stats' } }));
  t.equal(
    cfg.body!.toString(),
    '{"order":false,"perm":6,"readQueueNums":2,"topicFilterType":"SINGLE_TAG","topicName":"Stats","topicSysFlag":0,"writeQueueNums":2}',
  );
  t.equal(
    (await c.invoke(b.broker, createRequest(RequestCode.GET_TOPIC_CONFIG, { extFields: { topic: 'Nope' } }))).code,
    ResponseCode.TOPIC_NOT_EXIST,
  );
  await c.invoke(b.broker, pullRequest('Stats', { group: 'sg', queueId: 1, sysFlag: 1 | 4, commitOffset: 2 }));
  const stats = await c.invoke(
    b.broker,
    createRequest(RequestCode.GET_CONSUME_STATS, { extFields: { consumerGroup: 'sg' } }),
  );
  t.equal(stats.code, ResponseCode.SUCCESS);
  const text = stats.body!.toString();
  t.match(
    text,
    '{"brokerName":"broker-a","queueId":1,"topic":"Stats"}:{"brokerOffset":3,"consumerOffset":2,"lastTimestamp":',
  );
  t.match(
    text,
    '{"brokerName":"broker-a","queueId":0,"topic":"Stats"}:{"brokerOffset":0,"consumerOffset":0,"lastTimestamp":0}',
  );
  const lite = pullRequest('Stats', { queueId: 1 });
  lite.code = RequestCode.LITE_PULL_MESSAGE;
  const r = await c.invoke(b.broker, lite);
  t.equal(decode(r).length, 3);
});
