// rocketwire's retry and dead-letter paths against real Apache RocketMQ brokers (5.3.3 and 4.9.7):
//  - RECONSUME_LATER with delay level 1 (1 s) twice, then CONSUME_SUCCESS: the message comes back
//    from the %RETRY%<group> queue with reconsumeTimes 1 then 2, its original topic and msgId restored;
//  - delay level −1: the broker writes the message straight to %DLQ%<group> (no redelivery), where
//    a raw PULL_MESSAGE and a second rocketwire consumer read back exactly the messages sent.
import t from 'tap';
import { PushConsumer, type MessageExt } from '../../lib/consumer/index.js';
import { Producer } from '../../lib/producer/index.js';
import {
  createRequest,
  decodeMessages,
  PullMessageRequestHeader,
  RequestCode,
  ResponseCode,
} from '../../protocol/index.js';
import { delay, startRealCluster, V4_VERSION, V5_VERSION, type RealCluster } from './harness.js';
import { waitFor } from '../support/until.js';
import { interopReady } from './skip.js';

t.setTimeout(180_000);

const versions = [V5_VERSION, V4_VERSION];

/** Max offset of queue 0 of `topic` on broker 0, or -1 while the broker does not know the topic. */
async function maxOffset(cluster: RealCluster, topic: string): Promise<number> {
  const res = await cluster.invoke(
    cluster.brokers[0]!,
    createRequest(RequestCode.GET_MAX_OFFSET, { extFields: { topic, queueId: '0' } }),
  );
  return res.code === ResponseCode.SUCCESS ? Number(res.extFields?.offset) : -1;
}

interface Delivery {
  msgId: string;
  topic: string;
  queueTopic: string;
  queueId: number;
  reconsumeTimes: number;
  body: string;
  properties: Record<string, string>;
}

function record(m: MessageExt, queueTopic: string): Delivery {
  return {
    msgId: m.msgId,
    topic: m.topic,
    queueTopic,
    queueId: m.queueId,
    reconsumeTimes: m.reconsumeTimes,
    body: m.body.toString(),
    properties: { ...m.properties },
  };
}

if (await interopReady(t, versions)) {
  for (const version of versions) {
    t.test(`real RocketMQ ${version}: retry and DLQ`, async (t) => {
      const cluster = await startRealCluster({ version });
      t.teardown(() => cluster.stop({ graceful: false }));
      await cluster.createTopic('RwRetryTwice', { queues: 2 });
      await cluster.createTopic('RwToDlq', { queues: 2 });
      const producer = new Producer({ group: 'rw_dlq_pg', namesrvAddr: cluster.namesrv });
      await producer.start();
      t.teardown(() => producer.shutdown());

      t.test('RECONSUME_LATER twice: redelivered from %RETRY%group with reconsumeTimes 1, 2', async (t) => {
        const group = 'rw_retry_twice_cg';
        const sent = await producer.send({
          topic: 'RwRetryTwice',
          body: 'fail me twice',
          tags: 'T',
          keys: 'k1',
          properties: { n: '7' },
        });
        t.equal(sent.status, 'SEND_OK');
        const deliveries: Delivery[] = [];
        const consumer = new PushConsumer({
          consumerGroup: group,
          namesrvAddr: cluster.namesrv,
          subscriptions: { RwRetryTwice: '*' },
          consumeFromWhere: 'first',
        });
        t.teardown(() => consumer.shutdown());
        await consumer.start((msgs, ctx) => {
          const m = msgs[0]!;
          deliveries.push(record(m, ctx.messageQueue.topic));
          if (m.reconsumeTimes < 2) {
            ctx.delayLevelWhenNextConsume = 1; // 1 s on a stock broker
            return 'RECONSUME_LATER';
          }
          return 'CONSUME_SUCCESS';
        });
        await waitFor(() => deliveries.some((d) => d.reconsumeTimes >= 2), 40_000);
        await delay(2500); // a 4th delivery (success not honoured) would be back within 1 s + pull latency
        await consumer.shutdown();

        t.same(
          deliveries.map((d) => d.reconsumeTimes),
          [0, 1, 2],
          'delivered 3 times, reconsumeTimes 0, 1, 2',
        );
        t.ok(
          deliveries.every((d) => d.msgId === sent.msgId),
          'always with the msgId the send returned (UNIQ_KEY)',
        );
        t.ok(
          deliveries.every((d) => d.topic === 'RwRetryTwice'),
          'the handler always sees the original topic',
        );
        t.same(
          deliveries.map((d) => d.queueTopic),
          ['RwRetryTwice', `%RETRY%${group}`, `%RETRY%${group}`],
          'the redeliveries were pulled from the %RETRY%group queue',
        );
        t.same(
          deliveries.map((d) => d.queueId),
          [sent.messageQueue.queueId, 0, 0],
          'retry topic: one queue, id 0',
        );
        t.same(
          deliveries.map((d) => d.properties.RETRY_TOPIC),
          [undefined, 'RwRetryTwice', 'RwRetryTwice'],
          'the broker stamped RETRY_TOPIC = the original topic',
        );
        const origin = deliveries.map((d) => d.properties.ORIGIN_MESSAGE_ID);
        t.equal(origin[0], undefined, 'no ORIGIN_MESSAGE_ID on the first delivery');
        t.ok(
          origin[1] && origin[2] === origin[1],
          'ORIGIN_MESSAGE_ID set on the first retry copy and kept on the second',
        );
        // The broker takes the msgId of the record it looked up by commit-log offset: the offsetMsgId, not UNIQ_KEY.
        t.equal(
          origin[1],
          sent.offsetMsgId,
          'ORIGIN_MESSAGE_ID is the original offsetMsgId (store id), not the UNIQ_KEY',
        );
        t.same(
          deliveries.map((d) => d.properties.DELAY),
          [undefined, '1', '1'],
          'the retry copies carry the delay level the handler asked for (DELAY=1)',
        );
        t.comment(`2nd retry copy properties: ${JSON.stringify(deliveries[2]?.properties)}`);
        t.ok(
          deliveries.every(
            (d) =>
              d.body === 'fail me twice' &&
              d.properties.n === '7' &&
              d.properties.TAGS === 'T' &&
              d.properties.KEYS === 'k1',
          ),
          'body, tags, keys and user properties survive both retry copies',
        );
      });

      t.test('delay level -1: straight to %DLQ%group, no redelivery', async (t) => {
        const group = 'rw_to_dlq_cg';
        const dlq = `%DLQ%${group}`;
        const n = 3;
        const sent = [];
        for (let i = 0; i < n; i++)
          sent.push(
            await producer.send({
              topic: 'RwToDlq',
              body: `dead letter ${i}`,
              tags: 'D',
              properties: { i: String(i) },
            }),
          );
        t.ok(sent.every((s) => s.status === 'SEND_OK'));
        const ids = sent.map((s) => s.msgId).sort();

        const deliveries: Delivery[] = [];
        const consumer = new PushConsumer({
          consumerGroup: group,
          namesrvAddr: cluster.namesrv,
          subscriptions: { RwToDlq: '*' },
          consumeFromWhere: 'first',
        });
        t.teardown(() => consumer.shutdown());
        await consumer.start((msgs, ctx) => {
          for (const m of msgs) deliveries.push(record(m, ctx.messageQueue.topic));
          ctx.delayLevelWhenNextConsume = -1;
          return 'RECONSUME_LATER';
        });
        await waitFor(() => deliveries.length >= n, 30_000);
        await waitFor(async () => (await maxOffset(cluster, dlq)) >= n, 10_000, 100);
        t.equal(await maxOffset(cluster, dlq), n, `${dlq} queue 0 holds exactly ${n} messages`);
        await delay(3000); // a retry at any delay level ≥ 1 s would show up by now
        await consumer.shutdown();
        t.same(deliveries.map((d) => d.msgId).sort(), ids, 'each message was delivered once ...');
        t.ok(
          deliveries.every((d) => d.reconsumeTimes === 0 && d.queueTopic === 'RwToDlq'),
          '... from its own topic, and never redelivered',
        );
        t.equal(await maxOffset(cluster, `%RETRY%${group}`), 0, 'nothing went to the retry topic');

        // Read the DLQ back with a raw pull (no heartbeat: the subscription rides along, FLAG_SUBSCRIPTION).
        const res = await cluster.invoke(
          cluster.brokers[0]!,
          createRequest(RequestCode.PULL_MESSAGE, {
            extFields: PullMessageRequestHeader.encode({
              consumerGroup: 'raw_dlq_reader_cg',
              topic: dlq,
              queueId: 0,
              queueOffset: 0,
              maxMsgNums: 32,
              sysFlag: 4,
              commitOffset: -1,
              suspendTimeoutMillis: 0,
              subscription: '*',
              subVersion: 0,
              expressionType: 'TAG',
            }),
          }),
        );
        t.equal(res.code, ResponseCode.SUCCESS, `raw PULL_MESSAGE on ${dlq}: FOUND (${res.remark})`);
        const stored = res.body ? decodeMessages(res.body, { verifyCrc: true }) : [];
        t.same(stored.map((m) => m.msgId).sort(), ids, 'the DLQ holds the sent messages (UNIQ_KEY msgIds)');
        const byId = new Map(sent.map((s, i) => [s.msgId, i]));
        t.ok(
          stored.every(
            (m) =>
              m.body.toString() === `dead letter ${byId.get(m.msgId)}` && m.properties.i === String(byId.get(m.msgId)),
          ),
          'bodies and user properties as sent',
        );
        t.ok(
          stored.every((m) => m.topic === dlq && m.queueId === 0),
          `stored under ${dlq}, queue 0`,
        );
        t.same(
          stored.map((m) => m.reconsumeTimes),
          [1, 1, 1],
          'reconsumeTimes 1: the failed delivery counts',
        );
        t.ok(
          stored.every((m) => m.properties.RETRY_TOPIC === 'RwToDlq'),
          'the original topic is kept in RETRY_TOPIC',
        );
        const offsetIds = new Map(sent.map((s) => [s.msgId, s.offsetMsgId]));
        t.ok(
          stored.every((m) => m.properties.ORIGIN_MESSAGE_ID === offsetIds.get(m.msgId)),
          'ORIGIN_MESSAGE_ID = the original offsetMsgId',
        );
        t.ok(
          stored.every((m) => m.properties.TAGS === 'D'),
          'tags kept',
        );
        // -1 reaches the broker as delayLevel -1; it writes the DLQ copy with delay level 0 (DELAY=0, not absent).
        t.ok(
          stored.every((m) => m.properties.DELAY === '0'),
          'the DLQ copy has delay level 0 (property DELAY=0)',
        );
        t.comment(`DLQ copy properties: ${JSON.stringify(stored[0]?.properties)}`);

        const route = await cluster.invoke(
          cluster.namesrv,
          createRequest(RequestCode.GET_ROUTEINFO_BY_TOPIC, { extFields: { topic: dlq } }),
        );
        t.equal(route.code, ResponseCode.SUCCESS, 'the broker registered the DLQ topic with the name server');
        t.match(
          JSON.parse(route.body?.toString() ?? '{}').queueDatas,
          [{ readQueueNums: 1, writeQueueNums: 1, perm: 6 }],
          'one queue, perm 6 (readable)',
        );

        // And a rocketwire consumer can subscribe to the DLQ topic itself.
        const readBack: MessageExt[] = [];
        const reader = new PushConsumer({
          consumerGroup: 'rw_dlq_reader_cg',
          namesrvAddr: cluster.namesrv,
          subscriptions: { [dlq]: '*' },
          consumeFromWhere: 'first',
        });
        t.teardown(() => reader.shutdown());
        await reader.start((msgs) => {
          readBack.push(...msgs);
          return 'CONSUME_SUCCESS';
        });
        await waitFor(() => readBack.length >= n, 20_000);
        await reader.shutdown();
        t.same(
          readBack.map((m) => m.msgId).sort(),
          ids,
          'a rocketwire consumer of the DLQ topic gets the same messages',
        );
        t.ok(
          readBack.every((m) => m.topic === dlq && m.properties.RETRY_TOPIC === 'RwToDlq'),
          'with the DLQ topic (not reset: not its retry topic) and RETRY_TOPIC',
        );
      });
    });
  }
}
