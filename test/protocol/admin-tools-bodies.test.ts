// The admin bodies and headers of protocol/body/admin-tools-bodies.ts and
// protocol/custom-header/admin-tools.ts, on bodies shaped as a 5.3.3 broker writes them (fastjson,
// MessageQueue objects as map keys, enum names as strings, fields we do not model kept).
import t from 'tap';
import {
  decodeConsumerConnection,
  decodeKVTable,
  decodeSubscriptionGroupWrapper,
  decodeTopicStatsTable,
  encodeSubscriptionGroupConfig,
  encodeTopicStatsTable,
  decodeSubscriptionGroupConfig,
  subscriptionGroupConfig,
} from '../../protocol/body/admin-tools-bodies.js';
import {
  DeleteSubscriptionGroupRequestHeader,
  DeleteTopicFromNamesrvRequestHeader,
} from '../../protocol/custom-header/admin-tools.js';
import { Operations } from '../../protocol/index.js';

t.test('rows: codes of the admin requests', async (t) => {
  t.same(
    [
      Operations.GET_BROKER_RUNTIME_INFO,
      Operations.GET_TOPIC_STATS_INFO,
      Operations.GET_CONSUMER_CONNECTION_LIST,
      Operations.DELETE_TOPIC_IN_BROKER,
      Operations.DELETE_TOPIC_IN_NAMESRV,
      Operations.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP,
      Operations.GET_ALL_SUBSCRIPTIONGROUP_CONFIG,
      Operations.DELETE_SUBSCRIPTIONGROUP,
      Operations.INVOKE_BROKER_TO_RESET_OFFSET,
    ].map((o) => o.code),
    [28, 202, 203, 215, 216, 200, 201, 207, 222],
  );
});

t.test('TopicStatsTable with MessageQueue keys, and back', async (t) => {
  const body =
    '{"offsetTable":{{"brokerName":"broker-a","queueId":1,"topic":"T"}:{"lastUpdateTimestamp":1796143457198,"maxOffset":3,"minOffset":0},{"brokerName":"broker-a","queueId":0,"topic":"T"}:{"lastUpdateTimestamp":0,"maxOffset":0,"minOffset":0}},"topicPutTps":0.0}';
  const s = decodeTopicStatsTable(Buffer.from(body));
  t.same(
    s.offsetTable.map(([mq, o]) => [mq.brokerName, mq.queueId, o.minOffset, o.maxOffset, o.lastUpdateTimestamp]),
    [
      ['broker-a', 1, 0, 3, 1796143457198],
      ['broker-a', 0, 0, 0, 0],
    ],
  );
  t.equal(s.topicPutTps, 0);
  t.equal(encodeTopicStatsTable(s).toString(), body, 'written as Java writes it');
});

t.test('ConsumerConnection: clients, subscriptions and enum names', async (t) => {
  const body =
    '{"connectionSet":[{"clientAddr":"127.0.0.1:41784","clientId":"192.0.2.2@20581#1","language":"JAVA","version":479}],"consumeFromWhere":"CONSUME_FROM_FIRST_OFFSET","consumeType":"CONSUME_PASSIVELY","messageModel":"CLUSTERING","subscriptionTable":{"T":{"classFilterMode":false,"codeSet":[],"expressionType":"TAG","subString":"*","subVersion":1796143457000,"tagsSet":[],"topic":"T"}}}';
  const c = decodeConsumerConnection(Buffer.from(body));
  t.same(c.connectionSet, [
    { clientId: '192.0.2.2@20581#1', clientAddr: '127.0.0.1:41784', language: 'JAVA', version: 479 },
  ]);
  t.same(
    [c.consumeType, c.messageModel, c.consumeFromWhere, c.subscriptionTable.T?.subString],
    ['CONSUME_PASSIVELY', 'CLUSTERING', 'CONSUME_FROM_FIRST_OFFSET', '*'],
  );
  t.throws(
    () => decodeConsumerConnection(Buffer.from('{"connectionSet":[{"clientAddr":"a"}]}')),
    /connectionSet\[0\]\.clientId is not a string/,
  );
});

t.test('KVTable of GET_BROKER_RUNTIME_INFO', async (t) => {
  t.same(decodeKVTable(Buffer.from('{"table":{"brokerVersionDesc":"V5_3_3","brokerVersion":"479"}}')).table, {
    brokerVersionDesc: 'V5_3_3',
    brokerVersion: '479',
  });
});

t.test('SubscriptionGroupWrapper: defaults, and fields we do not model kept', async (t) => {
  const body =
    '{"dataVersion":{"counter":3,"stateVersion":0,"timestamp":1796143457000},"forbiddenTable":{},"subscriptionGroupTable":{"g1":{"attributes":{},"brokerId":0,"consumeBroadcastEnable":true,"consumeEnable":true,"consumeFromMinEnable":true,"consumeMessageOrderly":false,"consumeTimeoutMinute":15,"groupName":"g1","groupRetryPolicy":{"type":"CUSTOMIZED"},"groupSysFlag":0,"notifyConsumerIdsChangedEnable":true,"retryMaxTimes":7,"retryQueueNums":1,"whichBrokerWhenConsumeSlowly":1}}}';
  const w = decodeSubscriptionGroupWrapper(Buffer.from(body));
  const g = w.subscriptionGroupTable.g1!;
  t.equal(g.retryMaxTimes, 7);
  t.same(g.extra, { attributes: {}, groupRetryPolicy: { type: 'CUSTOMIZED' } });
  t.same(w.dataVersion, { timestamp: 1796143457000, counter: 3 });
  t.same(
    decodeSubscriptionGroupConfig(encodeSubscriptionGroupConfig(g)),
    g,
    'a config read and written back loses nothing',
  );
  t.same(
    subscriptionGroupConfig('x'),
    decodeSubscriptionGroupConfig(Buffer.from('{"groupName":"x"}')),
    "Java's defaults for what is absent",
  );
});

t.test('headers: keys as Java names them', async (t) => {
  t.same(DeleteSubscriptionGroupRequestHeader.encode({ groupName: 'g', cleanOffset: true }), {
    groupName: 'g',
    cleanOffset: 'true',
  });
  t.same(DeleteTopicFromNamesrvRequestHeader.encode({ topic: 'T' }), { topic: 'T' });
  t.throws(() => DeleteSubscriptionGroupRequestHeader.decode({}), { name: 'HeaderFieldError', field: 'groupName' });
});
