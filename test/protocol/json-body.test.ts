import t from 'tap';
import {
  buildSubscriptionData,
  ClusterInfo,
  ConsumeMessageDirectlyResult,
  ConsumerListBody,
  ConsumerRunningInfo,
  decodeConsumerOffsetFile,
  encodeConsumerOffsetFile,
  HeartbeatData,
  LockBatchBody,
  LockBatchResponseBody,
  parseFastjson,
  ProtocolError,
  ResetOffsetBody,
  toJavaJson,
  topicRoutePublishQueues,
  topicRouteSubscribeQueues,
  TopicRouteData,
} from '../../protocol/index.js';
import { messageQueueKey } from '../../protocol/body/message-queue.js';
import { javaStringHash } from '../../protocol/java-hash.js';

const HEARTBEAT_49 =
  '{"clientID":"192.168.1.10@12345#1712345678901234","consumerDataSet":[{"consumeFromWhere":"CONSUME_FROM_LAST_OFFSET","consumeType":"CONSUME_PASSIVELY","groupName":"cg1","messageModel":"CLUSTERING","subscriptionDataSet":[{"classFilterMode":false,"codeSet":[2598919,2598920],"expressionType":"TAG","subString":"TagA || TagB","subVersion":1712345678000,"tagsSet":["TagA","TagB"],"topic":"TopicTest"},{"classFilterMode":false,"codeSet":[],"expressionType":"TAG","subString":"*","subVersion":1712345678001,"tagsSet":[],"topic":"%RETRY%cg1"}],"unitMode":false}],"producerDataSet":[{"groupName":"CLIENT_INNER_PRODUCER"}]}';

t.test('tag hashes of the fact sheet', async (t) => {
  t.equal(javaStringHash('TagA'), 2598919);
  t.equal(javaStringHash('TagB'), 2598920);
});

t.test('heartbeat built from values equals the 4.9 literal byte for byte', async (t) => {
  const hb = {
    clientID: '192.168.1.10@12345#1712345678901234',
    consumerDataSet: [
      {
        groupName: 'cg1',
        consumeType: 'CONSUME_PASSIVELY',
        messageModel: 'CLUSTERING',
        consumeFromWhere: 'CONSUME_FROM_LAST_OFFSET',
        unitMode: false,
        subscriptionDataSet: [
          buildSubscriptionData('TopicTest', 'TagA || TagB', 1712345678000),
          buildSubscriptionData('%RETRY%cg1', '*', 1712345678001),
        ],
      },
    ],
    producerDataSet: [{ groupName: 'CLIENT_INNER_PRODUCER' }],
  };
  t.equal(HeartbeatData.encode(hb).toString(), HEARTBEAT_49);
  t.same(HeartbeatData.decode(Buffer.from(HEARTBEAT_49)), hb);
  const v5 = HeartbeatData.encode({ ...hb, heartbeatFingerprint: 0, withoutSub: false }).toString();
  t.match(v5, /"consumerDataSet":\[.*\],"heartbeatFingerprint":0,"producerDataSet":\[.*\],"withoutSub":false}$/);
  t.same(buildSubscriptionData('T', ' A ||  || B||A', 1).tagsSet, ['A', 'B'], 'split, trim, drop empties and repeats');
  t.same(buildSubscriptionData('T', null, 1).subString, '*');
});

const ROUTE_STD =
  '{"brokerDatas":[{"brokerAddrs":{"0":"192.168.1.20:10911","1":"192.168.1.21:10911"},"brokerName":"broker-a","cluster":"DefaultCluster"}],"filterServerTable":{},"queueDatas":[{"brokerName":"broker-a","perm":6,"readQueueNums":4,"topicSysFlag":0,"writeQueueNums":4}]}';

t.test('TopicRouteData standard and non-standard forms', async (t) => {
  const std = TopicRouteData.decode(Buffer.from(ROUTE_STD));
  t.same(std.brokerDatas[0]!.brokerAddrs, { 0: '192.168.1.20:10911', 1: '192.168.1.21:10911' });
  t.equal(TopicRouteData.encode(std).toString(), ROUTE_STD, 'standard form round-trips exactly');
  const old = ROUTE_STD.replace('{"0":', '{0:').replace(',"1":', ',1:').replace('topicSysFlag', 'topicSynFlag');
  t.same(TopicRouteData.decode(Buffer.from(old)), std, 'unquoted ids and topicSynFlag accepted');
  t.equal(
    TopicRouteData.encode(std, { nonStandard: true }).toString(),
    ROUTE_STD.replace('{"0":', '{0:').replace(',"1":', ',1:'),
  );
  t.match(
    TopicRouteData.encode(std, { v5: true }).toString(),
    /"cluster":"DefaultCluster","enableActingMaster":false}/,
  );
  t.equal(topicRouteSubscribeQueues('T', std).length, 4);
  t.same(
    topicRoutePublishQueues('T', std).map((q) => q.queueId),
    [0, 1, 2, 3],
  );
  t.same(
    topicRoutePublishQueues('T', { ...std, orderTopicConf: 'broker-a:2;broker-b:1' }).map(
      (q) => `${q.brokerName}/${q.queueId}`,
    ),
    ['broker-a/0', 'broker-a/1', 'broker-b/0'],
  );
  t.throws(() => TopicRouteData.decode(Buffer.from('{"brokerDatas":[{"brokerName":1}]}')), ProtocolError);
});

t.test('ClusterInfo is written with unquoted broker ids and read back', async (t) => {
  const info = {
    brokerAddrTable: {
      'broker-a': { brokerName: 'broker-a', cluster: 'DefaultCluster', brokerAddrs: { 0: '10.0.0.1:10911' } },
    },
    clusterAddrTable: { DefaultCluster: ['broker-a'] },
  };
  const text = ClusterInfo.encode(info).toString();
  t.equal(
    text,
    '{"brokerAddrTable":{"broker-a":{"brokerAddrs":{0:"10.0.0.1:10911"},"brokerName":"broker-a","cluster":"DefaultCluster"}},"clusterAddrTable":{"DefaultCluster":["broker-a"]}}',
  );
  t.same(ClusterInfo.decode(Buffer.from(text)), info);
});

t.test('lock bodies of §8.4', async (t) => {
  const req =
    '{"clientId":"192.168.1.10@12345#1712345678901234","consumerGroup":"cg1","mqSet":[{"brokerName":"broker-a","queueId":0,"topic":"TopicTest"},{"brokerName":"broker-a","queueId":1,"topic":"TopicTest"}]}';
  const body = LockBatchBody.decode(Buffer.from(req));
  t.equal(body.mqSet.length, 2);
  t.equal(LockBatchBody.encode(body).toString(), req);
  t.match(LockBatchBody.encode({ ...body, onlyThisBroker: false }).toString(), /,"onlyThisBroker":false}$/);
  const resp = '{"lockOKMQSet":[{"brokerName":"broker-a","queueId":0,"topic":"TopicTest"}]}';
  t.same(LockBatchResponseBody.decode(Buffer.from(resp)).lockOKMQSet, [
    { topic: 'TopicTest', brokerName: 'broker-a', queueId: 0 },
  ]);
  t.equal(LockBatchResponseBody.encode(LockBatchResponseBody.decode(Buffer.from(resp))).toString(), resp);
  const list = '{"consumerIdList":["a@1","b@2"]}';
  t.same(ConsumerListBody.decode(Buffer.from(list)), { consumerIdList: ['a@1', 'b@2'] });
  t.equal(ConsumerListBody.encode({ consumerIdList: ['a@1', 'b@2'] }).toString(), list);
});

t.test('ResetOffsetBody with MessageQueue objects as map keys', async (t) => {
  const wire =
    '{"offsetTable":{{"brokerName":"broker-a","queueId":0,"topic":"TopicTest"}:100,{"brokerName":"broker-a","queueId":1,"topic":"TopicTest"}:98}}';
  const b = ResetOffsetBody.decode(Buffer.from(wire));
  t.same(b.offsetTable, [
    [{ topic: 'TopicTest', brokerName: 'broker-a', queueId: 0 }, 100],
    [{ topic: 'TopicTest', brokerName: 'broker-a', queueId: 1 }, 98],
  ]);
  t.equal(ResetOffsetBody.encode(b).toString(), wire);
});

t.test('parseFastjson tolerates fastjson forms and rejects garbage', async (t) => {
  t.same(parseFastjson('{0:"a",-1:"b"}'), { 0: 'a', '-1': 'b' });
  t.same(
    parseFastjson('{{"topic":"T","queueId":0,"brokerName":"b"}:5}'),
    { '{"brokerName":"b","queueId":0,"topic":"T"}': 5 },
    'object key → canonical sorted text',
  );
  t.equal(messageQueueKey({ topic: 'T', brokerName: 'b', queueId: 0 }), '{"brokerName":"b","queueId":0,"topic":"T"}');
  t.same(parseFastjson('{name:\'x\',"a":[1,2,],}'), { name: 'x', a: [1, 2] });
  t.same(parseFastjson('{\n\t"k":{0:1\n\t\t}\n}'), { k: { 0: 1 } });
  t.same(parseFastjson('"\\u0001\\x02"'), '\u0001\u0002');
  for (const bad of ['', '{', '{"a":}', '{"a" 1}', '[1 2]', 'tru', '{"a":1}x', '"abc', '{:1}']) {
    const e = t.throws(() => parseFastjson(bad), ProtocolError, JSON.stringify(bad)) as ProtocolError;
    t.ok(e.offset >= 0);
  }
  t.equal(Object.getPrototypeOf(parseFastjson('{0:1,"__proto__":{"x":1}}')), Object.prototype);
  t.throws(
    () => parseFastjson('{0:'.repeat(10000)),
    /nesting deeper/,
    'deep nesting is a ProtocolError, not a stack overflow',
  );
});

t.test('toJavaJson sorts keys, drops nulls, and writes Map keys by type', async (t) => {
  t.equal(toJavaJson({ b: 1, a: null, c: [1, 'x', true], A: undefined }), '{"b":1,"c":[1,"x",true]}');
  t.equal(
    toJavaJson(
      new Map([
        [10, 'x'],
        [2, 'y'],
      ]),
    ),
    '{"2":"y","10":"x"}',
  );
  t.equal(
    toJavaJson(
      new Map([
        [10, 'x'],
        [2, 'y'],
      ]),
      { nonStandard: true },
    ),
    '{2:"y",10:"x"}',
  );
  t.equal(toJavaJson('a\u0001"é', { escapeNonAscii: true }), '"a\\u0001\\"\\u00E9"');
  t.equal(toJavaJson(new Set(['a'])), '["a"]');
});

t.test('ConsumerRunningInfo and ConsumeMessageDirectlyResult', async (t) => {
  const info = {
    properties: { PROP_CONSUME_TYPE: 'CONSUME_PASSIVELY', PROP_CONSUMEORDERLY: 'false' },
    subscriptionSet: [buildSubscriptionData('T', '*', 1)],
    mqTable: [
      [
        { topic: 'T', brokerName: 'b', queueId: 0 },
        { commitOffset: 5, locked: false },
      ],
    ] as ConsumerRunningInfo['mqTable'],
    statusTable: { T: { pullRT: 1.5, pullTPS: 0 } },
    jstack: '',
  };
  const text = ConsumerRunningInfo.encode(info).toString();
  t.match(text, /"mqTable":\{\{"brokerName":"b","queueId":0,"topic":"T"\}:\{"commitOffset":5,"locked":false\}\}/);
  t.same(ConsumerRunningInfo.decode(Buffer.from(text)), info);
  // 5.x's userConsumerInfo (a TreeMap<String, String>) survives the round trip; a 4.x body has none
  const v5 = { ...info, userConsumerInfo: { region: 'east', weight: '3' } };
  t.same(ConsumerRunningInfo.decode(ConsumerRunningInfo.encode(v5)), v5, 'userConsumerInfo read back');
  t.equal(ConsumerRunningInfo.decode(Buffer.from(text)).userConsumerInfo, undefined);
  const r = { autoCommit: true, consumeResult: 'CR_SUCCESS', order: false, remark: 'ok', spentTimeMills: 3 };
  const wire = '{"autoCommit":true,"consumeResult":"CR_SUCCESS","order":false,"remark":"ok","spentTimeMills":3}';
  t.equal(ConsumeMessageDirectlyResult.encode(r).toString(), wire);
  t.same(ConsumeMessageDirectlyResult.decode(Buffer.from(wire)), r);
});

t.test('consumerOffset.json as a 4.9 broker writes it', async (t) => {
  const text =
    '{\n\t"offsetTable":{\n\t\t"TopicTest@cg1":{0:120,1:98,2:130,3:77\n\t\t},\n\t\t"%RETRY%cg1@cg1":{0:0\n\t\t}\n\t}\n}';
  const file = decodeConsumerOffsetFile(text);
  t.same(
    [...file.offsetTable.get('TopicTest@cg1')!.entries()],
    [
      [0, 120],
      [1, 98],
      [2, 130],
      [3, 77],
    ],
  );
  t.equal(encodeConsumerOffsetFile(file), text);
  const v5 = encodeConsumerOffsetFile({
    ...file,
    dataVersion: { counter: 3, stateVersion: 0, timestamp: 1700000000000 },
  });
  const back = decodeConsumerOffsetFile(v5);
  t.same(back.dataVersion, { counter: 3, stateVersion: 0, timestamp: 1700000000000 });
  t.same(back.offsetTable, file.offsetTable);
  t.same(parseFastjson(v5) as Record<string, unknown>, {
    dataVersion: { counter: 3, stateVersion: 0, timestamp: 1700000000000 },
    // a java.util.HashSet's iteration order, as in 5.3.3's own file (the golden vector in vectors-bodies)
    groupTopicMap: { cg1: ['%RETRY%cg1', 'TopicTest'] },
    offsetTable: { 'TopicTest@cg1': { 0: 120, 1: 98, 2: 130, 3: 77 }, '%RETRY%cg1@cg1': { 0: 0 } },
  });
  t.equal(encodeConsumerOffsetFile({ offsetTable: new Map() }), '{\n\t"offsetTable":{}\n}');
});
