// Authentication on the real brokers, the way the harness turns it on: 5.3.3 with auth 2.0 (the
// user is created at boot as a super user), 4.9.7 with plain ACL (an admin account, no white-listed
// address). Requests signed like the Java AclClientRPCHook pass; unsigned or badly signed ones are
// rejected, with a different code per version.
import t from 'tap';
import { createRequest, RequestCode, ResponseCode } from '../../protocol/index.js';
import { startRealCluster, V4_VERSION, V5_VERSION } from './harness.js';
import { javaProduce, startJavaConsumer } from './java-client.js';
import { interopReady } from './skip.js';

t.setTimeout(300_000);

const acl = { accessKey: 'rocketwire', secretKey: 'interop-secret' };
const cases = [
  { version: V5_VERSION, rejected: ResponseCode.NO_PERMISSION, unsigned: /username cannot be null/, badSignature: /check signature failed/ },
  { version: V4_VERSION, rejected: ResponseCode.SYSTEM_ERROR, unsigned: /No accessKey is configured/, badSignature: /Check signature failed for accessKey=rocketwire/ },
];

if (await interopReady(t, [V5_VERSION, V4_VERSION])) {
  for (const c of cases) {
    t.test(`ACL on RocketMQ ${c.version}`, async (t) => {
      const cluster = await startRealCluster({ version: c.version, acl });
      t.teardown(() => cluster.stop({ graceful: false }));
      await cluster.createTopic('InteropAcl', { queues: 2 });
      const query = createRequest(RequestCode.QUERY_CONSUMER_OFFSET, { extFields: { consumerGroup: 'acl_cg', topic: 'InteropAcl', queueId: '0' } });

      const signed = await cluster.invoke(cluster.brokers[0]!, query);
      t.not(signed.code, c.rejected, 'a signed request is served');
      const unsigned = await cluster.invoke(cluster.brokers[0]!, query, { acl: null });
      t.equal(unsigned.code, c.rejected, 'an unsigned request is rejected');
      t.match(unsigned.remark, c.unsigned);
      const wrong = await cluster.invoke(cluster.brokers[0]!, query, { acl: { accessKey: acl.accessKey, secretKey: 'not-the-secret' } });
      t.equal(wrong.code, c.rejected, 'a wrong signature is rejected');
      t.match(wrong.remark, c.badSignature);
      const route = await cluster.invoke(cluster.namesrv, createRequest(RequestCode.GET_ROUTEINFO_BY_TOPIC, { extFields: { topic: 'InteropAcl' } }), { acl: null });
      t.equal(route.code, ResponseCode.SUCCESS, 'the name server does not check signatures');

      const consumer = await startJavaConsumer({ version: c.version, acl, namesrv: cluster.namesrv, topic: 'InteropAcl', group: 'acl_cg', expect: 10, timeoutMs: 60_000 });
      const { sent } = await javaProduce({ version: c.version, acl, namesrv: cluster.namesrv, topic: 'InteropAcl', count: 10 });
      t.equal(sent.length, 10, 'the Java producer with AclClientRPCHook sends');
      const { summary } = await consumer.done;
      t.equal(summary.received, 10, 'the Java push consumer with AclClientRPCHook receives');
    });
  }
}
