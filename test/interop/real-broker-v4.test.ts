// The harness against real Apache RocketMQ 4.9.7 (the newest 4.x whose server jars are on Maven
// Central): Java producer → broker → Java push consumer with bodies above the 4 KiB compression
// threshold, and the places where 4.9 answers differently from 5.x
// (docs/protocol-facts.md: which-serialization-an-answer-uses, heartbeat, query-consumer-offset-answer).
import t from 'tap';
import { createRequest, RequestCode, ResponseCode } from '../../protocol/index.js';
import { startRealCluster, V4_VERSION } from './harness.js';
import { expectedBody, javaOffsets, javaProduce, sha1, startJavaConsumer, type JavaSent } from './java-client.js';
import { checkBrokerFacts, checkPullFacts } from './broker-facts.js';
import { interopReady } from './skip.js';

t.setTimeout(300_000);

if (await interopReady(t, [V4_VERSION])) {
  const version = V4_VERSION;
  const cluster = await startRealCluster({ version });
  t.teardown(() => cluster.stop({ graceful: false }));
  t.comment(
    `RocketMQ ${version}: name server ${cluster.namesrv} (${cluster.bootMs.namesrv} ms), broker ${cluster.brokers[0]} (${cluster.bootMs.brokers[0]} ms)`,
  );
  await cluster.createTopic('InteropV4', { queues: 4 });
  await cluster.createTopic('InteropV4Empty', { queues: 1 });

  const size = 8192;
  let sent: JavaSent[] = [];
  t.test('Java 4.9 producer → real 4.9 broker → Java push consumer, 8 KiB compressed bodies', async (t) => {
    const consumer = await startJavaConsumer({
      version,
      namesrv: cluster.namesrv,
      topic: 'InteropV4',
      group: 'v4_cg',
      expect: 40,
      timeoutMs: 60_000,
    });
    sent = (
      await javaProduce({
        version,
        namesrv: cluster.namesrv,
        topic: 'InteropV4',
        count: 40,
        size,
        tag: 'Big',
        props: { k: 'v' },
      })
    ).sent;
    t.equal(sent.length, 40);
    const { summary, messages } = await consumer.done;
    t.equal(summary.received, 40);
    const byId = new Map(messages.map((m) => [m.msgId, m]));
    const intact = sent.filter((s) => {
      const m = byId.get(s.msgId);
      return (
        m &&
        m.bodyLength === size &&
        m.bodySha1 === sha1(expectedBody(s.i, size)) &&
        m.tags === 'Big' &&
        m.properties.k === 'v'
      );
    });
    t.equal(intact.length, 40, 'every body arrives decompressed and intact, with tag and property');
    // Stored with the compressed flag (bit 0) and the zlib type (3 << 8): the broker keeps what the producer sent.
    t.ok(
      messages.every((m) => (m.sysFlag & 0x701) === 0x301),
      'sysFlag says zlib-compressed on the stored messages',
    );
    const progress = await javaOffsets({ version, namesrv: cluster.namesrv, group: 'v4_cg', topic: 'InteropV4' });
    t.equal(progress.diffTotal, 0, 'all offsets committed');
  });

  t.test('4.9 wire differences', async (t) => {
    const route = await cluster.invoke(
      cluster.namesrv,
      createRequest(RequestCode.GET_ROUTEINFO_BY_TOPIC, { version: 409, extFields: { topic: 'InteropV4' } }),
    );
    t.equal(route.version, 407, 'the name server reports V4_9_7');
    t.same(
      JSON.parse(route.body!.toString()).brokerDatas[0].brokerAddrs,
      { '0': cluster.brokers[0] },
      'standard JSON for version 409',
    );
    const old = await cluster.invoke(
      cluster.namesrv,
      createRequest(RequestCode.GET_ROUTEINFO_BY_TOPIC, { version: 0, extFields: { topic: 'InteropV4' } }),
    );
    t.match(old.body!.toString(), `{0:"${cluster.brokers[0]}"}`, 'fastjson map key for version 0');

    const ask = (topic: string, extra: Record<string, string> = {}) =>
      cluster.invoke(
        cluster.brokers[0]!,
        createRequest(RequestCode.QUERY_CONSUMER_OFFSET, {
          extFields: { consumerGroup: 'v4_fresh', topic, queueId: '0', ...extra },
        }),
      );
    const empty = await ask('InteropV4Empty');
    t.equal(empty.code, ResponseCode.SUCCESS, '4.9: an empty queue also answers SUCCESS ...');
    t.equal(empty.extFields?.offset, '0', '... with offset 0');
    const strict = await ask('InteropV4', { setZeroIfNotFound: 'false' });
    t.equal(strict.code, ResponseCode.SUCCESS, '4.9 ignores setZeroIfNotFound');

    const heartbeat = { clientID: '127.0.0.1@v4#1', consumerDataSet: [], producerDataSet: [{ groupName: 'v4_pg' }] };
    for (const serializeType of ['JSON', 'ROCKETMQ'] as const) {
      const hb = await cluster.invoke(
        cluster.brokers[0]!,
        createRequest(RequestCode.HEART_BEAT, { serializeType, body: Buffer.from(JSON.stringify(heartbeat)) }),
      );
      t.equal(hb.code, ResponseCode.SUCCESS);
      t.equal(hb.extFields, null, `${serializeType}: no ext fields in a 4.9 heartbeat reply`);
      t.equal(hb.serializeType, serializeType, `${serializeType}: 4.9 answers in the request's encoding`);
    }
  });

  t.test('broker wire facts', (t) => checkBrokerFacts(t, cluster, 'InteropV4Empty'));
  t.test('raw pulls', (t) => checkPullFacts(t, cluster, 'InteropV4', sent, size));
}
