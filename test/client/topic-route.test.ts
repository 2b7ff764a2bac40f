import t from 'tap';
import {
  topicRouteToPublishQueues,
  topicRouteToSubscribeQueues,
  resolveClientOptions,
  parseNamesrvAddr,
  buildClientId,
  resolveInstanceName,
  ClientOptionError,
} from '../../lib/client/index.js';
import { decodeTopicRouteData } from '../../protocol/index.js';

t.test('standard route JSON (4.9.8 name server, version >= 401)', async (t) => {
  const text =
    '{"brokerDatas":[{"brokerAddrs":{"0":"192.168.1.20:10911","1":"192.168.1.21:10911"},"brokerName":"broker-a","cluster":"DefaultCluster"}],' +
    '"filterServerTable":{},"queueDatas":[{"brokerName":"broker-a","perm":6,"readQueueNums":4,"topicSysFlag":0,"writeQueueNums":4}]}';
  const r = decodeTopicRouteData(Buffer.from(text));
  t.same(r.brokerDatas, [
    {
      brokerName: 'broker-a',
      cluster: 'DefaultCluster',
      brokerAddrs: { '0': '192.168.1.20:10911', '1': '192.168.1.21:10911' },
    },
  ]);
  t.same(r.queueDatas, [{ brokerName: 'broker-a', perm: 6, readQueueNums: 4, writeQueueNums: 4, topicSysFlag: 0 }]);
});

t.test('fastjson non-standard route: unquoted broker ids, 4.8 topicSynFlag, 5.x extra keys', async (t) => {
  const text =
    '{"brokerDatas":[{"brokerAddrs":{0:"10.0.0.1:10911",1:"10.0.0.2:10911"},"brokerName":"b","cluster":"c","enableActingMaster":false}],' +
    '"filterServerTable":{},"queueDatas":[{"brokerName":"b","perm":4,"readQueueNums":2,"topicSynFlag":3,"writeQueueNums":1}]}';
  const r = decodeTopicRouteData(Buffer.from(text));
  t.same(r.brokerDatas[0]!.brokerAddrs, { '0': '10.0.0.1:10911', '1': '10.0.0.2:10911' });
  t.equal(r.queueDatas[0]!.topicSysFlag, 3);
});

t.test('garbage route body is a ProtocolError, not a crash', async (t) => {
  t.throws(() => decodeTopicRouteData(Buffer.from('{"brokerDatas":[{')), { name: 'ProtocolError' });
  t.throws(() => decodeTopicRouteData(Buffer.from('42')), { name: 'ProtocolError' });
});

t.test('subscribe = readable queues; publish = writable queues of brokers with a master, sorted by name', async (t) => {
  const route = decodeTopicRouteData(
    Buffer.from(
      JSON.stringify({
        brokerDatas: [
          { brokerName: 'broker-c', cluster: 'x', brokerAddrs: { '1': 'slave-only:1' } },
          { brokerName: 'broker-b', cluster: 'x', brokerAddrs: { '0': 'b:1' } },
          { brokerName: 'broker-a', cluster: 'x', brokerAddrs: { '0': 'a:1' } },
        ],
        queueDatas: [
          { brokerName: 'broker-c', perm: 6, readQueueNums: 1, writeQueueNums: 1, topicSysFlag: 0 },
          { brokerName: 'broker-b', perm: 6, readQueueNums: 2, writeQueueNums: 1, topicSysFlag: 0 },
          { brokerName: 'broker-a', perm: 2, readQueueNums: 3, writeQueueNums: 2, topicSysFlag: 0 },
        ],
      }),
    ),
  );
  t.same(
    topicRouteToPublishQueues('T', route).map((q) => `${q.brokerName}/${q.queueId}`),
    ['broker-a/0', 'broker-a/1', 'broker-b/0'],
    'broker-c has no master; broker-a is write-only but publishable',
  );
  t.same(
    topicRouteToSubscribeQueues('T', route).map((q) => `${q.brokerName}/${q.queueId}`),
    ['broker-b/0', 'broker-b/1', 'broker-c/0'],
    'broker-a lacks READ; slave-only broker-c is readable',
  );
});

t.test('orderTopicConf replaces the publish list', async (t) => {
  const route = decodeTopicRouteData(
    Buffer.from('{"brokerDatas":[],"queueDatas":[],"orderTopicConf":"broker-x:2;broker-y:1"}'),
  );
  t.same(
    topicRouteToPublishQueues('T', route).map((q) => `${q.brokerName}/${q.queueId}`),
    ['broker-x/0', 'broker-x/1', 'broker-y/0'],
  );
});

t.test('client options: defaults, validation, client id', async (t) => {
  const o = resolveClientOptions({ namesrvAddr: '127.0.0.1:9876;127.0.0.2:9876', clientIp: '10.1.2.3' });
  t.same(o.namesrvAddrs, ['127.0.0.1:9876', '127.0.0.2:9876']);
  t.equal(o.version, 409);
  t.equal(o.language, 'JAVA');
  t.equal(o.heartbeatIntervalMs, 30000);
  t.equal(o.pollNameServerIntervalMs, 30000);
  t.equal(o.persistOffsetIntervalMs, 5000);
  t.equal(o.mqClientApiTimeoutMs, 3000);
  t.equal(buildClientId(o), '10.1.2.3@DEFAULT');
  t.throws(() => parseNamesrvAddr('nohost'), ClientOptionError);
  const optionOf = (fn: () => unknown): string | undefined => {
    try {
      fn();
    } catch (err) {
      return (err as ClientOptionError).option;
    }
    return undefined;
  };
  t.equal(
    optionOf(() => resolveClientOptions({ namesrvAddr: 'a:1', heartbeatIntervalMs: 0 })),
    'heartbeatIntervalMs',
  );
  t.equal(
    optionOf(() => resolveClientOptions({ namesrvAddr: '' })),
    'namesrvAddr',
  );
  t.match(resolveInstanceName('DEFAULT'), new RegExp(`^${process.pid}#\\d+$`));
  t.not(
    resolveInstanceName(undefined),
    resolveInstanceName(undefined),
    'two producers in one process get distinct names',
  );
  t.equal(resolveInstanceName('mine'), 'mine');
});
