// Authentication on the real brokers, the way the harness turns it on: 5.3.3 with auth 2.0 (the
// user is created at boot as a super user), 4.9.7 with plain ACL (an admin account, no white-listed
// address). Requests signed like the Java AclClientRPCHook pass; unsigned or badly signed ones are
// rejected, with a different code per version. rocketwire's producer and push consumer, given the
// credentials, work against both; without them the send fails.
import t from 'tap';
import { PushConsumer } from '../../lib/consumer/index.js';
import { Producer } from '../../lib/producer/index.js';
import { createRequest, RequestCode, ResponseCode } from '../../protocol/index.js';
import { startRealCluster, V4_VERSION, V5_VERSION } from './harness.js';
import { javaProduce, startJavaConsumer } from './java-client.js';
import { interopReady } from './skip.js';

t.setTimeout(300_000);

const acl = { accessKey: 'rocketwire', secretKey: 'interop-secret' };
const cases = [
  {
    version: V5_VERSION,
    rejected: ResponseCode.NO_PERMISSION,
    unsigned: /username cannot be null/,
    badSignature: /check signature failed/,
  },
  {
    version: V4_VERSION,
    rejected: ResponseCode.SYSTEM_ERROR,
    unsigned: /No accessKey is configured/,
    badSignature: /Check signature failed for accessKey=rocketwire/,
  },
];

if (await interopReady(t, [V5_VERSION, V4_VERSION])) {
  for (const c of cases) {
    t.test(`ACL on RocketMQ ${c.version}`, async (t) => {
      const cluster = await startRealCluster({ version: c.version, acl });
      t.teardown(() => cluster.stop({ graceful: false }));
      await cluster.createTopic('InteropAcl', { queues: 2 });
      const query = createRequest(RequestCode.QUERY_CONSUMER_OFFSET, {
        extFields: { consumerGroup: 'acl_cg', topic: 'InteropAcl', queueId: '0' },
      });

      const signed = await cluster.invoke(cluster.brokers[0]!, query);
      t.not(signed.code, c.rejected, 'a signed request is served');
      const unsigned = await cluster.invoke(cluster.brokers[0]!, query, { acl: null });
      t.equal(unsigned.code, c.rejected, 'an unsigned request is rejected');
      t.match(unsigned.remark, c.unsigned);
      const wrong = await cluster.invoke(cluster.brokers[0]!, query, {
        acl: { accessKey: acl.accessKey, secretKey: 'not-the-secret' },
      });
      t.equal(wrong.code, c.rejected, 'a wrong signature is rejected');
      t.match(wrong.remark, c.badSignature);
      const route = await cluster.invoke(
        cluster.namesrv,
        createRequest(RequestCode.GET_ROUTEINFO_BY_TOPIC, { extFields: { topic: 'InteropAcl' } }),
        { acl: null },
      );
      t.equal(route.code, ResponseCode.SUCCESS, 'the name server does not check signatures');

      const consumer = await startJavaConsumer({
        version: c.version,
        acl,
        namesrv: cluster.namesrv,
        topic: 'InteropAcl',
        group: 'acl_cg',
        expect: 10,
        timeoutMs: 60_000,
      });
      const { sent } = await javaProduce({
        version: c.version,
        acl,
        namesrv: cluster.namesrv,
        topic: 'InteropAcl',
        count: 10,
      });
      t.equal(sent.length, 10, 'the Java producer with AclClientRPCHook sends');
      const { summary } = await consumer.done;
      t.equal(summary.received, 10, 'the Java push consumer with AclClientRPCHook receives');

      const producer = new Producer({ group: 'acl_rw_pg', namesrvAddr: cluster.namesrv, acl });
      await producer.start();
      t.teardown(() => producer.shutdown());
      for (let i = 0; i < 10; i++) await producer.send({ topic: 'InteropAcl', body: `signed ${i}`, tags: 'Acl' });
      const rwGot = new Set<string>();
      let done!: () => void;
      const all = new Promise<void>((r) => (done = r));
      const rwConsumer = new PushConsumer({
        consumerGroup: 'acl_rw_cg',
        namesrvAddr: cluster.namesrv,
        acl,
        subscriptions: { InteropAcl: 'Acl' },
        consumeFromWhere: 'first',
      });
      t.teardown(() => rwConsumer.shutdown());
      const timer = setTimeout(done, 60_000);
      await rwConsumer.start((msgs) => {
        for (const m of msgs) rwGot.add(m.body.toString());
        if (rwGot.size >= 10) done();
        return 'CONSUME_SUCCESS';
      });
      await all;
      clearTimeout(timer);
      t.equal(
        rwGot.size,
        10,
        'rocketwire producer and push consumer with credentials: all 10 signed messages round-trip',
      );

      const anonymous = new Producer({
        group: 'acl_anon_pg',
        namesrvAddr: cluster.namesrv,
        retryTimesWhenSendFailed: 0,
      });
      await anonymous.start();
      t.teardown(() => anonymous.shutdown());
      await t.rejects(
        anonymous.send({ topic: 'InteropAcl', body: 'unsigned' }),
        'rocketwire without credentials is refused',
      );
    });
  }
}
