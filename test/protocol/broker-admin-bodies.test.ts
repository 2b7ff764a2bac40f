import t from 'tap';
import {
  GetConsumeStatsRequestHeader,
  GetTopicConfigRequestHeader,
  HeaderFieldError,
  Operations,
  ProtocolError,
  decodeCheckClientRequestBody,
  decodeConsumeStats,
  decodeTopicConfigBody,
  encodeConsumeStats,
  encodeTopicConfigBody,
} from '../../protocol/internal.js';

t.test('ConsumeStats: fastjson object keys, a Java double consumeTps, entries in the given order', async (t) => {
  const stats = {
    consumeTps: 0,
    offsetTable: [
      [
        { topic: 'A', brokerName: 'broker-a', queueId: 10 },
        { brokerOffset: 5, consumerOffset: 3, lastTimestamp: 1700000000000 },
      ],
      [
        { topic: 'A', brokerName: 'broker-a', queueId: 2 },
        { brokerOffset: 0, consumerOffset: 0, lastTimestamp: 0 },
      ],
    ] as Parameters<typeof encodeConsumeStats>[0]['offsetTable'],
  };
  const text = encodeConsumeStats(stats).toString();
  t.equal(
    text,
    '{"consumeTps":0.0,"offsetTable":{{"brokerName":"broker-a","queueId":10,"topic":"A"}:{"brokerOffset":5,"consumerOffset":3,"lastTimestamp":1700000000000},' +
      '{"brokerName":"broker-a","queueId":2,"topic":"A"}:{"brokerOffset":0,"consumerOffset":0,"lastTimestamp":0}}}',
  );
  t.same(decodeConsumeStats(Buffer.from(text)), stats);
  t.equal(encodeConsumeStats({ consumeTps: 1.5, offsetTable: [] }).toString(), '{"consumeTps":1.5,"offsetTable":{}}');
  t.throws(
    () =>
      decodeConsumeStats(
        Buffer.from('{"offsetTable":{{"brokerName":"b","queueId":0,"topic":"T"}:{"consumerOffset":1}}}'),
      ),
    ProtocolError,
  );
});

t.test('TopicConfig body: keys sorted as fastjson writes the bean', async (t) => {
  const c = {
    topicName: 'T',
    readQueueNums: 4,
    writeQueueNums: 2,
    perm: 6,
    topicFilterType: 'SINGLE_TAG',
    topicSysFlag: 0,
    order: false,
  };
  const text = encodeTopicConfigBody(c).toString();
  t.equal(
    text,
    '{"order":false,"perm":6,"readQueueNums":4,"topicFilterType":"SINGLE_TAG","topicName":"T","topicSysFlag":0,"writeQueueNums":2}',
  );
  t.same(decodeTopicConfigBody(Buffer.from(text)), c);
});

t.test('CheckClientRequestBody: the subscription the Java client sends', async (t) => {
  const body = Buffer.from(
    '{"clientId":"10.0.0.1@1","group":"g","subscriptionData":{"classFilterMode":false,"codeSet":[],"expressionType":"SQL92","subString":"a > 1","subVersion":17,"tagsSet":[],"topic":"T"}}',
  );
  const b = decodeCheckClientRequestBody(body);
  t.equal(b.clientId, '10.0.0.1@1');
  t.equal(b.group, 'g');
  t.equal(b.subscriptionData?.expressionType, 'SQL92');
  t.equal(b.subscriptionData?.subString, 'a > 1');
  t.same(decodeCheckClientRequestBody(Buffer.from('{}')), {});
  t.throws(
    () => decodeCheckClientRequestBody(Buffer.from('{"subscriptionData":{"subString":"*"}}')),
    ProtocolError,
    'topic is required',
  );
});

t.test('GET_CONSUME_STATS / GET_TOPIC_CONFIG / CHECK_CLIENT_CONFIG rows', async (t) => {
  t.equal(Operations.GET_CONSUME_STATS.code, 208);
  t.equal(Operations.GET_TOPIC_CONFIG.code, 351);
  t.equal(Operations.CHECK_CLIENT_CONFIG.code, 46);
  t.same(GetConsumeStatsRequestHeader.decode({ consumerGroup: 'g' }), { consumerGroup: 'g' });
  t.throws(() => GetConsumeStatsRequestHeader.decode({ topic: 'T' }), HeaderFieldError);
  t.same(GetTopicConfigRequestHeader.decode({ topic: 'T', lo: 'true' }), { topic: 'T', lo: true });
});
