// Request–reply, proven on a real Apache RocketMQ 5.3.3 broker against the stock Java
// client in both directions: a rocketwire requester (Producer.request) with a Java replier
// (MessageUtil.createReplyMessage + producer.send), and a Java requester (DefaultMQProducer.request)
// with a rocketwire replier (createReplyMessage / sendReply over SEND_REPLY_MESSAGE_V2): 100 round
// trips each, median and p99 latency reported.
//
// The Java requester runs the 5.5.0 client against the 5.3.3 broker: the 5.3.3 client's sync
// DefaultMQProducer.request is broken. Its send callback counts the reply latch down as soon as the
// broker confirms the request message (RequestResponseFuture#acquireCountDownLatch, added by
// apache/rocketmq#4313 and gone again by 5.5.0), so request() throws RequestTimeoutException ("send
// request message to <T> OK, but wait reply message timeout") at once unless the reply won the race
// against the send's answer. The last subtest shows it. Also what the real broker answers a reply to a
// client it does not know (the embedded broker answers the same), and a request nobody answers.
import t from 'tap';
import { startBroker } from '../../lib/broker/index.js';
import { PushConsumer } from '../../lib/consumer/index.js';
import { Producer, RequestTimeoutError, SendFailedError, createReplyMessage } from '../../lib/producer/index.js';
import { BrokerError } from '../../lib/remoting/index.js';
import { createTopic } from '../consumer/helpers.js';
import { startRealCluster, V53_VERSION, V55_VERSION, V5_VERSION } from './harness.js';
import { javaRequester, startJavaReplier } from './java-reply.js';
import { interopReady } from './skip.js';

t.setTimeout(240_000);

const ROUND_TRIPS = 100;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Median and p99 of latencies in ms (nearest rank). */
function percentiles(ms: number[]): { median: number; p99: number; max: number } {
  const s = [...ms].sort((a, b) => a - b);
  const rank = (p: number): number => s[Math.min(s.length - 1, Math.ceil(s.length * p) - 1)]!;
  return { median: s[Math.floor(s.length / 2)]!, p99: rank(0.99), max: s[s.length - 1]! };
}

const fmt = (n: number): string => n.toFixed(2);

if (await interopReady(t, [...new Set([V5_VERSION, V53_VERSION, V55_VERSION])])) {
  const cluster = await startRealCluster({ version: V5_VERSION });
  t.teardown(() => cluster.stop({ graceful: false }));
  await cluster.createTopic('ReplyRwToJava', { queues: 2 });
  await cluster.createTopic('ReplyJavaToRw', { queues: 2 });
  await cluster.createTopic('ReplyNobody', { queues: 1 });
  await cluster.createTopic('ReplyJava533', { queues: 1 });

  t.test(`rocketwire requester → Java replier: ${ROUND_TRIPS} round trips`, async (t) => {
    const replier = await startJavaReplier({
      namesrv: cluster.namesrv,
      topic: 'ReplyRwToJava',
      group: 'java_replier_cg',
      count: ROUND_TRIPS + 1,
    });
    t.teardown(() => replier.stop());
    const requester = new Producer({ group: 'rw_requester_pg', namesrvAddr: cluster.namesrv });
    await requester.start();
    t.teardown(() => requester.shutdown());
    const clientId = requester['clientInstance'].clientId;
    // The first reply is the event that says the Java consumer pulls (its first rebalance, on a
    // loaded machine once more than 10 s after "started"); it is not one of the timed round trips.
    const warmT0 = performance.now();
    const warm = await requester.request({ topic: 'ReplyRwToJava', body: 'warm-up' }, 60_000);
    const warmMs = performance.now() - warmT0;
    t.equal(warm.body.toString(), 're:warm-up');
    const latencies: number[] = [];
    const bodies: string[] = [];
    let first: Record<string, string> | undefined;
    for (let i = 0; i < ROUND_TRIPS; i++) {
      const t0 = performance.now();
      const reply = await requester.request({ topic: 'ReplyRwToJava', body: `q${i}` }, 10_000).catch((err: unknown) => {
        t.comment(`request ${i} failed; the Java replier said: ${JSON.stringify(replier.process.lines.slice(-3))}`);
        throw err;
      });
      latencies.push(performance.now() - t0);
      bodies.push(reply.body.toString());
      first ??= reply.properties;
    }
    t.same(
      bodies,
      Array.from({ length: ROUND_TRIPS }, (_, i) => `re:q${i}`),
      'every reply, in order',
    );
    t.match(
      first,
      {
        MSG_TYPE: 'reply',
        CORRELATION_ID: UUID,
        REPLY_TO_CLIENT: clientId,
        TTL: '10000',
        PUSH_REPLY_TIME: /^\d+$/,
        ARRIVE_TIME: /^\d+$/,
      },
      'the reply as the real broker pushed it',
    );
    const { replied, complete } = await replier.done;
    t.ok(complete, 'the Java replier answered every request');
    t.equal(replied.length, ROUND_TRIPS + 1);
    t.same([...new Set(replied.map((r) => r.status))], ['SEND_OK'], 'every reply send is SEND_OK');
    t.same([...new Set(replied.map((r) => r.replyTopic))], ['DefaultCluster_REPLY_TOPIC']);
    t.match(
      replied[1]!.requestProperties,
      { CORRELATION_ID: UUID, REPLY_TO_CLIENT: clientId, TTL: '10000', CLUSTER: 'DefaultCluster' },
      'the request as the Java consumer saw it (after the warm-up one)',
    );
    const p = percentiles(latencies);
    const later = percentiles(latencies.slice(10));
    t.comment(
      `rocketwire request → Java reply, ${ROUND_TRIPS} sequential round trips: median ${fmt(p.median)} ms, p99 ${fmt(p.p99)} ms, max ${fmt(p.max)} ms; without the first 10: median ${fmt(later.median)} ms, p99 ${fmt(later.p99)} ms; before them the warm-up request (route fetch, heartbeat, the Java consumer's first pull): ${fmt(warmMs)} ms`,
    );
  });

  t.test(
    `Java 5.5.0 requester (DefaultMQProducer.request) → rocketwire replier: ${ROUND_TRIPS} round trips`,
    async (t) => {
      const replier = new Producer({ group: 'rw_replier_pg', namesrvAddr: cluster.namesrv });
      await replier.start();
      t.teardown(() => replier.shutdown());
      const requests: Record<string, string>[] = [];
      const statuses = new Set<string>();
      const offsetMsgIds: string[] = [];
      const consumer = new PushConsumer({
        consumerGroup: 'rw_replier_cg',
        namesrvAddr: cluster.namesrv,
        consumeFromWhere: 'first',
      });
      consumer.subscribe('ReplyJavaToRw');
      await consumer.start(async (msgs) => {
        for (const m of msgs) {
          requests.push(m.properties);
          const r = await replier.sendReply(m, `re:${m.body.toString()}`);
          statuses.add(r.status);
          offsetMsgIds.push(r.offsetMsgId);
        }
        return 'CONSUME_SUCCESS';
      });
      t.teardown(() => consumer.shutdown());
      let javaClientId = '';
      const { replies, errors, summary } = await javaRequester({
        version: V55_VERSION,
        namesrv: cluster.namesrv,
        topic: 'ReplyJavaToRw',
        count: ROUND_TRIPS,
        onStarted: (id) => (javaClientId = id),
      });
      t.same(errors, [], 'no request failed');
      t.equal(summary.replies, ROUND_TRIPS);
      t.same(
        replies.map((r) => r.body),
        Array.from({ length: ROUND_TRIPS }, (_, i) => `re:q${i}`),
        'every reply, in order',
      );
      t.match(
        replies[0]!.properties,
        { MSG_TYPE: 'reply', CORRELATION_ID: UUID, PUSH_REPLY_TIME: /^\d+$/, ARRIVE_TIME: /^\d+$/ },
        'the reply as Java received it',
      );
      t.match(
        requests[0],
        { CORRELATION_ID: UUID, REPLY_TO_CLIENT: javaClientId, TTL: '10000', CLUSTER: 'DefaultCluster' },
        'the request as the rocketwire consumer saw it',
      );
      t.same([...statuses], ['SEND_OK'], 'every reply send is SEND_OK');
      t.notOk(
        offsetMsgIds.includes('0'),
        'storeReplyMessageEnable (default true): the answer carries the stored offset msgId, not the "0" of a push alone',
      );
      t.comment(
        `Java request → rocketwire reply, ${ROUND_TRIPS} sequential round trips (measured in the JVM): median ${fmt(summary.medianUs! / 1000)} ms, p99 ${fmt(summary.p99Us! / 1000)} ms, max ${fmt(summary.maxUs! / 1000)} ms`,
      );
    },
  );

  t.test("the 5.3.3 Java client's sync request() gives up once its request is stored", async (t) => {
    const replier = new Producer({ group: 'rw_replier533_pg', namesrvAddr: cluster.namesrv });
    await replier.start();
    t.teardown(() => replier.shutdown());
    const consumer = new PushConsumer({
      consumerGroup: 'rw_replier533_cg',
      namesrvAddr: cluster.namesrv,
      consumeFromWhere: 'first',
    });
    consumer.subscribe('ReplyJava533');
    let replied = 0;
    await consumer.start(async (msgs) => {
      for (const m of msgs) {
        await replier.sendReply(m, `re:${m.body.toString()}`);
        replied++;
      }
      return 'CONSUME_SUCCESS';
    });
    t.teardown(() => consumer.shutdown());
    const n = 10;
    const { replies, errors } = await javaRequester({
      // the 5.3.3 client whatever broker the suite runs on: the bug shown is that client's
      version: V53_VERSION,
      namesrv: cluster.namesrv,
      topic: 'ReplyJava533',
      count: n,
    });
    t.equal(replies.length + errors.length, n);
    for (const e of errors)
      t.match(
        e,
        /^RequestTimeoutException: CODE: 10006 {2}DESC: send request message to <ReplyJava533> OK, but wait reply message timeout, 10000 ms\.$/,
      );
    t.comment(
      `5.3.3 client, ${n} requests: ${replies.length} got their reply, ${errors.length} threw RequestTimeoutException right after the send (rocketwire replied to ${replied})`,
    );
  });

  t.test("a reply to a client the broker does not know: the real broker's answer", async (t) => {
    const p = new Producer({ group: 'rw_lost_pg', namesrvAddr: cluster.namesrv, retryTimesWhenSendFailed: 0 });
    await p.start();
    t.teardown(() => p.shutdown());
    const request = {
      properties: { CLUSTER: 'DefaultCluster', CORRELATION_ID: 'c-1', REPLY_TO_CLIENT: '10.9.9.9@gone', TTL: '3000' },
    };
    const err = await p.send(createReplyMessage(request, 'x')).then(
      () => null,
      (e: unknown) => e,
    );
    t.type(err, SendFailedError);
    const cause = (err as SendFailedError).cause as BrokerError;
    t.type(cause, BrokerError);
    t.equal(cause.code, 1, 'SYSTEM_ERROR');
    t.equal(
      cause.remark,
      'push reply message fail, channel of <10.9.9.9@gone> not found.',
      'the remark the embedded broker gives too',
    );
  });

  t.test('the embedded broker serves Java requesters and repliers alike (offline)', async (t) => {
    const embedded = await startBroker({ queues: 2 });
    t.teardown(() => embedded.close());
    await createTopic(embedded.brokers, 'EmbeddedRwToJava', 2);
    await createTopic(embedded.brokers, 'EmbeddedJavaToRw', 2);
    const n = 20;
    // Java replier, rocketwire requester
    const javaReplier = await startJavaReplier({
      namesrv: embedded.namesrv,
      topic: 'EmbeddedRwToJava',
      group: 'java_replier_cg',
      count: n,
    });
    t.teardown(() => javaReplier.stop());
    const requester = new Producer({ group: 'rw_embedded_requester_pg', namesrvAddr: embedded.namesrv });
    await requester.start();
    t.teardown(() => requester.shutdown());
    const bodies: string[] = [];
    // the first reply also waits for the Java consumer's first pull (see the first subtest)
    for (let i = 0; i < n; i++)
      bodies.push(
        (
          await requester.request({ topic: 'EmbeddedRwToJava', body: `q${i}` }, i === 0 ? 60_000 : 15_000)
        ).body.toString(),
      );
    t.same(
      bodies,
      Array.from({ length: n }, (_, i) => `re:q${i}`),
      'rocketwire requester, Java replier: every reply',
    );
    const { replied } = await javaReplier.done;
    t.match(replied[0], {
      status: 'SEND_OK',
      replyTopic: 'DefaultCluster_REPLY_TOPIC',
      requestProperties: { CLUSTER: 'DefaultCluster' },
    });

    // Java requester (5.5.0), rocketwire replier
    const replier = new Producer({ group: 'rw_embedded_replier_pg', namesrvAddr: embedded.namesrv });
    await replier.start();
    t.teardown(() => replier.shutdown());
    const consumer = new PushConsumer({
      consumerGroup: 'rw_embedded_replier_cg',
      namesrvAddr: embedded.namesrv,
      consumeFromWhere: 'first',
    });
    consumer.subscribe('EmbeddedJavaToRw');
    await consumer.start(async (msgs) => {
      for (const m of msgs) await replier.sendReply(m, `re:${m.body.toString()}`);
      return 'CONSUME_SUCCESS';
    });
    t.teardown(() => consumer.shutdown());
    const { replies, errors, summary } = await javaRequester({
      version: V55_VERSION,
      namesrv: embedded.namesrv,
      topic: 'EmbeddedJavaToRw',
      count: n,
      timeoutMs: 15_000,
    });
    t.same(errors, [], 'Java requester: no request failed');
    t.same(
      replies.map((r) => r.body),
      Array.from({ length: n }, (_, i) => `re:q${i}`),
      'Java requester, rocketwire replier: every reply, pushed by the embedded broker',
    );
    t.match(replies[0]!.properties, { MSG_TYPE: 'reply', PUSH_REPLY_TIME: /^\d+$/, ARRIVE_TIME: /^\d+$/ });
    t.comment(
      `embedded broker, Java request → rocketwire reply, ${n} round trips: median ${fmt(summary.medianUs! / 1000)} ms, p99 ${fmt(summary.p99Us! / 1000)} ms`,
    );
  });

  t.test('a request nobody answers ends in RequestTimeoutError', async (t) => {
    const p = new Producer({ group: 'rw_nobody_pg', namesrvAddr: cluster.namesrv });
    await p.start();
    t.teardown(() => p.shutdown());
    const err = await p.request({ topic: 'ReplyNobody', body: 'x' }, 1500).then(
      () => null,
      (e: unknown) => e,
    );
    t.type(err, RequestTimeoutError);
    t.match(err, { topic: 'ReplyNobody', correlationId: UUID, timeoutMs: 1500, sendOk: true });
  });
}
