// Static topics (RIP-21) on the client side: the route's topicQueueMappingByBroker decoded, turned
// into logic queues as Java's topicRouteData2TopicPublishInfo / topicRouteData2TopicSubscribeInfo
// do, each logic queue addressed at the broker leading it, and a pull answer's offsetDelta added to
// the records' queue offsets. The real-broker proof is test/interop/real-broker-static-topic.test.ts.
import t from 'tap';
import {
  brokerNameOf,
  checkTopicRoute,
  checkPullOffsets,
  RouteLimitError,
  topicRouteToPublishQueues,
  topicRouteToSubscribeQueues,
} from '../../lib/client/index.js';
import {
  decodeMessages,
  decodeMessagesSkipping,
  decodeTopicQueueMappingDetail,
  decodeTopicRouteData,
  encodeStoredMessage,
  encodeTopicQueueMappingDetail,
  encodeTopicRouteData,
  type StoredMessageInit,
  type TopicRouteData,
} from '../../protocol/index.js';

const brokers = [
  { brokerName: 'broker-a', cluster: 'c', brokerAddrs: { '0': 'a:10911' } },
  { brokerName: 'broker-b', cluster: 'c', brokerAddrs: { '0': 'b:10911' } },
];

/** A route as a 5.3.3 name server writes it after `mqadmin remappingStaticTopic` moved queues 2 and 3 to broker-b. */
function remappedRoute(): TopicRouteData {
  // fastjson's non-standard form for the integer-keyed currIdMap, as the name server may write it.
  const text =
    `{"brokerDatas":${JSON.stringify(brokers)},"filterServerTable":{},` +
    '"queueDatas":[{"brokerName":"broker-a","perm":6,"readQueueNums":4,"topicSysFlag":0,"writeQueueNums":4},' +
    '{"brokerName":"broker-b","perm":6,"readQueueNums":2,"topicSysFlag":0,"writeQueueNums":2}],' +
    '"topicQueueMappingByBroker":{' +
    '"broker-a":{"bname":"broker-a","currIdMap":{0:0,1:1},"dirty":false,"epoch":1700000001000,"scope":"__global__","topic":"S","totalQueues":4},' +
    '"broker-b":{"bname":"broker-b","currIdMap":{"2":0,"3":1},"dirty":false,"epoch":1700000001000,"scope":"__global__","topic":"S","totalQueues":4}}}';
  return decodeTopicRouteData(Buffer.from(text));
}

function routesOf(route: TopicRouteData) {
  return { cachedTopicRoute: (topic: string) => (topic === 'S' ? route : undefined) };
}

t.test(
  'logic queues: one per id under the mock broker name, each led by the broker whose currIdMap has it',
  async (t) => {
    const route = remappedRoute();
    t.same(route.topicQueueMappingByBroker?.['broker-b']?.currIdMap, { 2: 0, 3: 1 });
    const pub = topicRouteToPublishQueues('S', route);
    t.same(
      pub.map((q) => `${q.brokerName}/${q.queueId}`),
      ['__syslo__global__/0', '__syslo__global__/1', '__syslo__global__/2', '__syslo__global__/3'],
      'publish: the logic queues by id, not the physical queues of the QueueDatas',
    );
    t.same(
      topicRouteToSubscribeQueues('S', route).map((q) => q.queueId),
      [0, 1, 2, 3],
    );
    t.same(
      pub.map((q) => brokerNameOf(routesOf(route), q)),
      ['broker-a', 'broker-a', 'broker-b', 'broker-b'],
    );
    t.equal(
      brokerNameOf(routesOf(route), { topic: 'N', brokerName: 'broker-a', queueId: 0 }),
      'broker-a',
      'a normal queue keeps its broker',
    );
  },
);

t.test(
  'the newer epoch wins an id two brokers claim; an id nobody leads is left out of the publish list',
  async (t) => {
    const route = remappedRoute();
    const m = route.topicQueueMappingByBroker!;
    // broker-a still registers queue 2 under the old epoch (its update not yet seen), and nobody leads 3.
    m['broker-a'] = { ...m['broker-a']!, epoch: 1700000000000, currIdMap: { 0: 0, 1: 1, 2: 2 } };
    m['broker-b'] = { ...m['broker-b']!, currIdMap: { 2: 0 } };
    const routes = routesOf(route);
    const sub = topicRouteToSubscribeQueues('S', route);
    t.same(
      sub.map((q) => `${q.queueId}:${brokerNameOf(routes, q)}`),
      ['0:broker-a', '1:broker-a', '2:broker-b', '3:__syslo__none__'],
    );
    t.same(
      topicRouteToPublishQueues('S', route).map((q) => q.queueId),
      [0, 1, 2],
    );
  },
);

t.test('a route without a mapping is unchanged; one with orderTopicConf keeps it (as Java)', async (t) => {
  const plain = remappedRoute();
  delete plain.topicQueueMappingByBroker;
  t.same(
    topicRouteToPublishQueues('S', plain).map((q) => `${q.brokerName}/${q.queueId}`),
    ['broker-a/0', 'broker-a/1', 'broker-a/2', 'broker-a/3', 'broker-b/0', 'broker-b/1'],
  );
  const ordered = { ...remappedRoute(), orderTopicConf: 'broker-a:2' };
  t.same(
    topicRouteToPublishQueues('S', ordered).map((q) => `${q.brokerName}/${q.queueId}`),
    ['broker-a/0', 'broker-a/1'],
  );
});

t.test('the mapping survives encode and decode (the embedded name server passes it on)', async (t) => {
  const route = remappedRoute();
  t.same(decodeTopicRouteData(encodeTopicRouteData(route)), route);
});

t.test('a mapping of the wrong shape is a ProtocolError naming the path; absurd totals are refused', async (t) => {
  const bad = (mapping: string) =>
    decodeTopicRouteData(
      Buffer.from(`{"brokerDatas":[],"queueDatas":[],"filterServerTable":{},"topicQueueMappingByBroker":${mapping}}`),
    );
  t.throws(() => bad('{"b":{"currIdMap":{"x":1}}}'), { name: 'ProtocolError', message: /currIdMap/ });
  t.throws(() => bad('{"b":{"totalQueues":"four"}}'), { name: 'ProtocolError', message: /totalQueues/ });
  t.throws(() => bad('[1]'), { name: 'ProtocolError', message: /topicQueueMappingByBroker/ });
  const route = remappedRoute();
  route.topicQueueMappingByBroker!['broker-a']!.totalQueues = 2 ** 31;
  t.throws(
    () => checkTopicRoute('S', route, 'ns:9876', { maxRouteQueues: 65_536, maxRouteBrokers: 1024 }),
    RouteLimitError,
  );
});

t.test('TopicQueueMappingDetail body: Java field names, integer-keyed maps, round trip', async (t) => {
  const detail = {
    topic: 'S',
    scope: '__global__',
    totalQueues: 2,
    bname: 'broker-b',
    epoch: 1700000001000,
    dirty: false,
    currIdMap: {},
    hostedQueues: {
      1: [
        {
          gen: 0,
          queueId: 1,
          bname: 'broker-a',
          logicOffset: 0,
          startOffset: 0,
          endOffset: 57,
          timeOfStart: -1,
          timeOfEnd: -1,
        },
        {
          gen: 1,
          queueId: 0,
          bname: 'broker-b',
          logicOffset: 10000,
          startOffset: 0,
          endOffset: -1,
          timeOfStart: -1,
          timeOfEnd: -1,
        },
      ],
    },
  };
  const bytes = encodeTopicQueueMappingDetail(detail);
  t.match(bytes.toString(), /"hostedQueues":\{"1":\[\{"bname":"broker-a","endOffset":57,"gen":0,"logicOffset":0/);
  t.same(decodeTopicQueueMappingDetail(bytes), detail);
});

function record(queueOffset: number): Buffer {
  const init: StoredMessageInit = {
    topic: 'S',
    queueId: 0,
    flag: 0,
    queueOffset,
    commitLogOffset: 1000 + queueOffset,
    sysFlag: 0,
    bornTimestamp: 1712345678901,
    bornHost: '127.0.0.1:5000',
    storeTimestamp: 1712345679000,
    storeHost: '127.0.0.1:10911',
    reconsumeTimes: 0,
    preparedTransactionOffset: 0,
    body: Buffer.from(`m${queueOffset}`),
    properties: {},
  };
  return encodeStoredMessage(init);
}

t.test(
  'offsetDelta: records of the physical queue become logic offsets, and the pull range check uses them',
  async (t) => {
    // Logic queue stretch starting at 10000 on a physical queue starting at 0: physical 3 and 4 are logic 10003, 10004.
    const body = Buffer.concat([record(3), record(4)]);
    t.same(
      decodeMessages(body, { queueOffsetDelta: 10000 }).map((m) => m.queueOffset),
      [10003, 10004],
    );
    t.same(
      decodeMessagesSkipping(body, { queueOffsetDelta: 10000 }).messages.map((m) => m.queueOffset),
      [10003, 10004],
    );
    const h = { nextBeginOffset: 10005, minOffset: 0, maxOffset: 10005, offsetDelta: 10000 };
    const req = { topic: 'S', queueId: 0, queueOffset: 10003 };
    t.doesNotThrow(() => checkPullOffsets('b:10911', req, 'FOUND', h, null, body));
    t.throws(
      () => checkPullOffsets('b:10911', req, 'FOUND', { ...h, offsetDelta: 0 }, null, body),
      { name: 'PullOffsetError' },
      'without the delta the physical offsets fall outside the logic range asked for',
    );
  },
);
