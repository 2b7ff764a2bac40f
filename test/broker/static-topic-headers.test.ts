// The embedded broker does not serve static topics (RIP-21), but it must not break on what a client
// of one sends: the `lo` key and a logic queue's mock broker name in `bname` are ignored like any
// unknown key, and UPDATE_AND_CREATE_STATIC_TOPIC (513) is refused with REQUEST_CODE_NOT_SUPPORTED,
// which AdminClient.updateStaticTopic reports as a BrokerError naming the code.
import t from 'tap';
import { AdminClient } from '../../lib/admin/index.js';
import { createRequest, RequestCode, ResponseCode } from '../../protocol/index.js';
import { createTopic, produce, withBroker } from '../support/embedded-broker.js';
import { rawInvoke } from '../support/raw-remoting.js';

t.test('lo and a mock bname are ignored; 513 is refused with a clear code', async (t) => {
  const b = await withBroker();
  t.teardown(() => b.close());
  await createTopic([b.broker], 'T', 4);
  await produce(b.namesrv, 'T', 3, () => ({}), { single: true });
  const maxOffset = await rawInvoke(
    b.broker,
    createRequest(RequestCode.GET_MAX_OFFSET, {
      extFields: { topic: 'T', queueId: '0', lo: 'true', bname: '__syslo__global__' },
    }),
  );
  t.equal(maxOffset.code, ResponseCode.SUCCESS, 'GET_MAX_OFFSET with lo=true answers as without it');
  const ask = (extra: Record<string, string>) =>
    rawInvoke(
      b.broker,
      createRequest(RequestCode.QUERY_CONSUMER_OFFSET, {
        extFields: { consumerGroup: 'g', topic: 'T', queueId: '0', ...extra },
      }),
    );
  const plain = await ask({});
  const logic = await ask({ lo: 'true', bname: '__syslo__global__' });
  t.same(
    [logic.code, logic.extFields?.offset],
    [plain.code, plain.extFields?.offset],
    'QUERY_CONSUMER_OFFSET with lo answers as without it',
  );

  const admin = new AdminClient({ namesrvAddr: b.namesrv });
  t.teardown(() => admin.close());
  t.equal((await admin.topicConfig(b.broker, 'T', { mapping: true }))?.mappingDetail, undefined, 'no mapping');
  await t.rejects(
    admin.updateStaticTopic({
      topic: 'S',
      clusters: [Object.keys((await admin.clusterInfo()).clusterAddrTable)[0]!],
      queueNums: 2,
    }),
    { name: 'BrokerError', code: ResponseCode.REQUEST_CODE_NOT_SUPPORTED },
  );
  await t.rejects(admin.updateStaticTopic({ topic: 'S', clusters: ['nope'], queueNums: 2 }), {
    name: 'StaticTopicError',
    message: /no target broker/,
  });
  await t.rejects(admin.updateStaticTopic({ topic: 'T', brokers: ['x'], queueNums: 2 }), {
    name: 'StaticTopicError',
    message: /normal topic/,
  });
});
