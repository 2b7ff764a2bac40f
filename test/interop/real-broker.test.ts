// Proves the interop harness against a real Apache RocketMQ 5.3.3 name server and broker: the stock
// Java producer and push consumer exchange 100 messages through it, and a few wire facts that
// rocketwire relies on (docs/protocol-facts.md: consumer-offsets, heartbeat, topic-route,
// query-consumer-offset-answer) hold on the real thing.
import t from 'tap';
import { createRequest, RequestCode, ResponseCode } from '../../protocol/index.js';
import { parseRouteBody, startRealCluster, V5_VERSION } from './harness.js';
import { expectedBody, javaOffsets, javaProduce, sha1, startJavaConsumer, type JavaSent } from './java-client.js';
import { checkBrokerFacts, checkPullFacts } from './broker-facts.js';
import { interopReady } from './skip.js';

t.setTimeout(300_000);

if (await interopReady(t, [V5_VERSION])) {
  const cluster = await startRealCluster({ version: V5_VERSION });
  t.teardown(() => cluster.stop({ graceful: false }));
  t.comment(
    `RocketMQ ${cluster.version}: name server ${cluster.namesrv} (${cluster.bootMs.namesrv} ms), broker ${cluster.brokers[0]} (${cluster.bootMs.brokers[0]} ms)`,
  );

  await cluster.createTopic('InteropBasic', { queues: 4 });
  await cluster.createTopic('InteropEmpty', { queues: 1 });

  const size = 300;
  let sent: JavaSent[] = [];
  t.test('Java producer → real broker → Java push consumer: all 100 messages, intact', async (t) => {
    const consumer = await startJavaConsumer({
      namesrv: cluster.namesrv,
      topic: 'InteropBasic',
      group: 'basic_cg',
      expect: 100,
      timeoutMs: 60_000,
    });
    const produced = await javaProduce({
      namesrv: cluster.namesrv,
      topic: 'InteropBasic',
      count: 100,
      size,
      tag: 'TagA',
      keys: 'key-{i}',
      props: { color: 'blue', note: 'a b' },
    });
    sent = produced.sent;
    const ps = produced.summary;
    t.equal(ps.sent, 100, 'producer: 100 SEND_OK');
    t.equal(new Set(sent.map((s) => s.queueId)).size, 4, 'producer spread messages over the 4 queues');

    const { summary, messages } = await consumer.done;
    t.equal(summary.complete, true, 'consumer saw the expected count before its timeout');
    t.equal(messages.length, 100);
    const byId = new Map(messages.map((m) => [m.msgId, m]));
    t.equal(byId.size, 100, 'no duplicates');
    let intact = 0;
    for (const s of sent) {
      const m = byId.get(s.msgId);
      if (!m) continue;
      const ok =
        m.queueId === s.queueId &&
        m.queueOffset === s.queueOffset &&
        m.bodySha1 === sha1(expectedBody(s.i, size)) &&
        m.tags === 'TagA' &&
        m.keys === `key-${s.i}` &&
        m.properties.color === 'blue' &&
        m.properties.note === 'a b' &&
        m.properties.UNIQ_KEY === s.msgId &&
        m.offsetMsgId === s.offsetMsgId;
      if (ok) intact++;
    }
    t.equal(intact, 100, 'every sent message arrived with its queue, offset, body, tag, keys, properties and ids');

    const progress = await javaOffsets({ namesrv: cluster.namesrv, group: 'basic_cg', topic: 'InteropBasic' });
    t.equal(progress.queues.length, 4);
    t.equal(
      progress.queues.reduce((n, q) => n + q.brokerOffset, 0),
      100,
      'broker offsets add up to 100',
    );
    t.equal(progress.diffTotal, 0, 'the consumer committed every queue to its end');
  });

  t.test('consume-bench (the --vs java peer of the benchmark) reports progress and a throughput', async (t) => {
    const c = await startJavaConsumer({
      namesrv: cluster.namesrv,
      topic: 'InteropBasic',
      group: 'bench_cg',
      expect: 100,
      bench: true,
      progressMs: 100,
      timeoutMs: 60_000,
    });
    const { summary, messages } = await c.done;
    t.equal(summary.type, 'bench');
    t.equal(summary.received, 100, 'a fresh group reads the 100 messages from the first offset');
    t.equal(messages.length, 0, 'no per-message lines in bench mode');
    t.ok(summary.msgsPerSec! > 0 && summary.lastTs >= summary.firstTs, 'a rate over first → last message');
    t.ok(
      c.process.lines.some((l) => l.type === 'progress' && typeof l.received === 'number'),
      'progress lines',
    );
  });

  t.test('consume-bench --handler-ms: every listener call sleeps, one call at a time with --threads 1', async (t) => {
    const c = await startJavaConsumer({
      namesrv: cluster.namesrv,
      topic: 'InteropBasic',
      group: 'bench_slow_cg',
      expect: 100,
      bench: true,
      threads: 1,
      batchMax: 4,
      handlerMs: 20,
      timeoutMs: 60_000,
    });
    const { summary } = await c.done;
    t.equal(summary.received, 100);
    // 100 messages in calls of at most 4 make at least 25 calls, one at a time, each sleeping 20 ms
    // after its messages were counted: the first message and the last are at least 24 sleeps apart.
    // Without the sleep they are milliseconds apart. (A lower bound: a sleep is never shorter.)
    t.ok(summary.lastTs - summary.firstTs >= 24 * 20, `first → last ${summary.lastTs - summary.firstTs} ms`);
  });

  t.test('name server answers standard JSON to version >= 401 and fastjson map keys to older clients', async (t) => {
    const modern = await cluster.invoke(
      cluster.namesrv,
      createRequest(RequestCode.GET_ROUTEINFO_BY_TOPIC, { version: 409, extFields: { topic: 'InteropBasic' } }),
    );
    t.equal(modern.code, ResponseCode.SUCCESS);
    const text = modern.body!.toString();
    const route = JSON.parse(text) as ReturnType<typeof parseRouteBody>;
    t.same(route.brokerDatas[0]!.brokerAddrs, { '0': cluster.brokers[0] }, 'broker id key quoted');
    t.match(route.queueDatas[0], {
      brokerName: 'broker-a',
      perm: 6,
      readQueueNums: 4,
      writeQueueNums: 4,
      topicSysFlag: 0,
    });

    const old = await cluster.invoke(
      cluster.namesrv,
      createRequest(RequestCode.GET_ROUTEINFO_BY_TOPIC, { version: 121, extFields: { topic: 'InteropBasic' } }),
    );
    t.match(
      old.body!.toString(),
      `"brokerAddrs":{0:"${cluster.brokers[0]}"}`,
      'unquoted numeric key for an old client',
    );
    t.same(parseRouteBody(old.body).brokerDatas[0]!.brokerAddrs, { '0': cluster.brokers[0] });

    const missing = await cluster.invoke(
      cluster.namesrv,
      createRequest(RequestCode.GET_ROUTEINFO_BY_TOPIC, { extFields: { topic: 'NoSuchTopic' } }),
    );
    t.equal(missing.code, ResponseCode.TOPIC_NOT_EXIST);
  });

  t.test('QUERY_CONSUMER_OFFSET for a group that never committed', async (t) => {
    const ask = (topic: string, extra: Record<string, string> = {}) =>
      cluster.invoke(
        cluster.brokers[0]!,
        createRequest(RequestCode.QUERY_CONSUMER_OFFSET, {
          extFields: { consumerGroup: 'never_committed', topic, queueId: '0', ...extra },
        }),
      );
    const young = await ask('InteropBasic');
    t.equal(young.code, ResponseCode.SUCCESS, 'a queue whose first message is in memory answers SUCCESS');
    t.equal(young.extFields?.offset, '0', '... with offset 0');
    const empty = await ask('InteropEmpty');
    t.equal(empty.code, ResponseCode.QUERY_NOT_FOUND, '5.x: an empty queue answers QUERY_NOT_FOUND');
    const strict = await ask('InteropBasic', { setZeroIfNotFound: 'false' });
    t.equal(strict.code, ResponseCode.QUERY_NOT_FOUND, 'setZeroIfNotFound=false turns the 0 into QUERY_NOT_FOUND');
  });

  t.test('HEART_BEAT reply: broker version and the 5.x ext fields, JSON even to a ROCKETMQ request', async (t) => {
    const heartbeat = {
      clientID: '127.0.0.1@interop#1',
      consumerDataSet: [
        {
          consumeFromWhere: 'CONSUME_FROM_LAST_OFFSET',
          consumeType: 'CONSUME_PASSIVELY',
          groupName: 'heartbeat_cg',
          messageModel: 'CLUSTERING',
          subscriptionDataSet: [
            {
              classFilterMode: false,
              codeSet: [],
              expressionType: 'TAG',
              subString: '*',
              subVersion: Date.now(),
              tagsSet: [],
              topic: 'InteropBasic',
            },
          ],
          unitMode: false,
        },
      ],
      producerDataSet: [],
    };
    const conn = cluster.connect(cluster.brokers[0]!);
    t.teardown(() => conn.close());
    for (const serializeType of ['JSON', 'ROCKETMQ'] as const) {
      const res = await conn.invoke(
        createRequest(RequestCode.HEART_BEAT, { serializeType, body: Buffer.from(JSON.stringify(heartbeat)) }),
      );
      t.equal(res.code, ResponseCode.SUCCESS, `${serializeType}: SUCCESS`);
      t.equal(res.version, 479, `${serializeType}: the response carries the broker's version (V5_3_3)`);
      t.same(
        res.extFields,
        { IS_SUPPORT_HEART_BEAT_V2: 'true', IS_SUB_CHANGE: 'true' },
        `${serializeType}: ext fields`,
      );
      t.equal(res.serializeType, 'JSON', `${serializeType}: a 5.x broker answers in its own (JSON) encoding`);
    }
    const list = await conn.invoke(
      createRequest(RequestCode.GET_CONSUMER_LIST_BY_GROUP, { extFields: { consumerGroup: 'heartbeat_cg' } }),
    );
    t.equal(list.code, ResponseCode.SUCCESS);
    t.same(
      JSON.parse(list.body!.toString()),
      { consumerIdList: ['127.0.0.1@interop#1'] },
      'the heartbeat registered the client id',
    );
  });

  t.test('broker wire facts', (t) => checkBrokerFacts(t, cluster, 'InteropEmpty'));
  t.test('raw pulls', (t) => checkPullFacts(t, cluster, 'InteropBasic', sent, size));
}
