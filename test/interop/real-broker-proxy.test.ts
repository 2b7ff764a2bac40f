// rocketwire through the Apache RocketMQ 5.x proxy (rocketmq-proxy in cluster mode, in front of a
// real 5.5.0 broker), with the proxy's remoting endpoint as rocketwire's name server, as Java's
// remoting client can use it: routes, sends, pulls, offsets, locks and send-backs all go to the proxy.
//  - producer and push consumer (concurrent and orderly); offsets checked on the broker behind it;
//  - the retry path (RECONSUME_LATER → CONSUMER_SEND_MSG_BACK through the proxy → redelivery);
//  - a topic without `+message.type=NORMAL`: the proxy refuses the send; what it answers is pinned;
//  - POP through the proxy: the SimpleConsumer refuses it with PopNotSupportedError.
import t from 'tap';
import { PushConsumer, type MessageExt } from '../../lib/consumer/index.js';
import { Producer, selectMessageQueueByHash } from '../../lib/producer/index.js';
import { BrokerError } from '../../lib/index.js';
import { SimpleConsumer } from '../../lib/consumer/pop/simple-consumer.js';
import { createRequest, RequestCode, ResponseCode } from '../../protocol/index.js';
import { startRealCluster, V55_VERSION } from './harness.js';
import { waitFor } from '../support/until.js';
import { interopReady } from './skip.js';

t.setTimeout(300_000);

const NORMAL = { 'message.type': 'NORMAL' };

if (await interopReady(t, [V55_VERSION])) {
  const started = Date.now();
  // The proxy caches topic routes, a topic's absence included, and refreshes them every
  // topicRouteServiceCacheRefreshSeconds (default 20 s): the %RETRY% topic, created by the first
  // send-back, then stays unknown to consumers for up to 20 s (redelivery measured at 21.7 s, 40 s
  // with rocketwire's default 30 s route poll). 2 s keeps the retry subtest short.
  const cluster = await startRealCluster({ version: V55_VERSION, proxy: { topicRouteServiceCacheRefreshSeconds: 2 } });
  t.teardown(() => cluster.stop({ graceful: false }));
  t.comment(
    `name server, broker and proxy booted in ${Date.now() - started} ms; proxy remoting endpoint ${cluster.proxy}`,
  );
  const proxy = cluster.proxy;

  const committed = async (group: string, topic: string, queues: number): Promise<number[]> => {
    const out: number[] = [];
    for (let q = 0; q < queues; q++) {
      const res = await cluster.invoke(
        cluster.brokers[0]!,
        createRequest(RequestCode.QUERY_CONSUMER_OFFSET, {
          extFields: { consumerGroup: group, topic, queueId: String(q) },
        }),
      );
      out.push(res.code === ResponseCode.SUCCESS ? Number(res.extFields?.offset) : -1);
    }
    return out;
  };
  const maxOffsets = async (topic: string, queues: number): Promise<number[]> => {
    const out: number[] = [];
    for (let q = 0; q < queues; q++) {
      const res = await cluster.invoke(
        cluster.brokers[0]!,
        createRequest(RequestCode.GET_MAX_OFFSET, { extFields: { topic, queueId: String(q) } }),
      );
      out.push(Number(res.extFields?.offset ?? -1));
    }
    return out;
  };

  t.test('producer and push consumer through the proxy; offsets committed on the broker behind it', async (t) => {
    const topic = 'ProxyPlain';
    const group = 'proxy_plain_cg';
    await cluster.createTopic(topic, { queues: 4, attributes: NORMAL });
    const producer = new Producer({ group: 'proxy_plain_pg', namesrvAddr: proxy });
    await producer.start();
    t.teardown(() => producer.shutdown());
    const sent: string[] = [];
    const statuses = new Set<string>();
    for (let i = 0; i < 40; i++) {
      const r = await producer.send({
        topic,
        body: `through the proxy ${i}`,
        tags: 'P',
        keys: `p${i}`,
        properties: { n: String(i) },
      });
      statuses.add(r.status);
      sent.push(r.msgId);
    }
    t.same([...statuses], ['SEND_OK'], 'every send answered SEND_OK through the proxy');

    const got: MessageExt[] = [];
    const consumer = new PushConsumer({
      consumerGroup: group,
      namesrvAddr: proxy,
      subscriptions: { [topic]: '*' },
      consumeFromWhere: 'first',
      persistOffsetIntervalMs: 500,
    });
    t.teardown(() => consumer.shutdown());
    await consumer.start((msgs) => {
      got.push(...msgs);
      return 'CONSUME_SUCCESS';
    });
    t.ok(
      await waitFor(() => new Set(got.map((m) => m.msgId)).size >= 40, 60_000),
      'the push consumer got every message through the proxy',
    );
    t.same(new Set(got.map((m) => m.msgId)), new Set(sent), 'with the ids the sends returned');
    t.ok(
      got.every(
        (m) =>
          m.body.toString() === `through the proxy ${m.properties.n}` &&
          m.tags === 'P' &&
          m.keys.join(' ') === `p${m.properties.n}`,
      ),
      'bodies, tags, keys and properties intact',
    );
    await consumer.shutdown(); // persists the offsets (through the proxy)
    t.same(
      await committed(group, topic, 4),
      await maxOffsets(topic, 4),
      'the broker behind the proxy holds committed offset = max offset on every queue',
    );
  });

  t.test('orderly push consumer through the proxy: queue locks and per-key order', async (t) => {
    const topic = 'ProxyOrderly';
    await cluster.createTopic(topic, { queues: 4, attributes: NORMAL });
    const producer = new Producer({ group: 'proxy_orderly_pg', namesrvAddr: proxy });
    await producer.start();
    t.teardown(() => producer.shutdown());
    const orders = ['o1', 'o2', 'o3'];
    for (let step = 0; step < 10; step++) {
      for (const order of orders)
        await producer.send(
          { topic, body: `${order}:${step}`, keys: order },
          { selector: selectMessageQueueByHash, arg: order },
        );
    }
    const seen = new Map<string, number[]>();
    let total = 0;
    const consumer = new PushConsumer({
      consumerGroup: 'proxy_orderly_cg',
      namesrvAddr: proxy,
      subscriptions: { [topic]: '*' },
      consumeFromWhere: 'first',
      orderly: true,
    });
    t.teardown(() => consumer.shutdown());
    await consumer.start((msgs) => {
      for (const m of msgs) {
        const [order, step] = m.body.toString().split(':');
        seen.set(order!, [...(seen.get(order!) ?? []), Number(step)]);
        total++;
      }
      return 'SUCCESS';
    });
    t.ok(await waitFor(() => total >= 30, 60_000), `every message consumed (${total} of 30)`);
    for (const order of orders)
      t.same(seen.get(order), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], `${order}: every step, in order`);
    const mine = consumer.assignment().filter((q) => q.topic === topic);
    const locked = await cluster.invoke(
      cluster.brokers[0]!,
      createRequest(RequestCode.LOCK_BATCH_MQ, {
        body: Buffer.from(
          JSON.stringify({ clientId: '127.0.0.1@intruder', consumerGroup: 'proxy_orderly_cg', mqSet: mine }),
        ),
      }),
    );
    t.same(
      JSON.parse(locked.body!.toString()).lockOKMQSet,
      [],
      'the broker behind the proxy refuses another client the queues rocketwire locked through the proxy',
    );
  });

  t.test('RECONSUME_LATER through the proxy: sent back, redelivered with the original id', async (t) => {
    const topic = 'ProxyRetry';
    await cluster.createTopic(topic, { queues: 2, attributes: NORMAL });
    const producer = new Producer({ group: 'proxy_retry_pg', namesrvAddr: proxy });
    await producer.start();
    t.teardown(() => producer.shutdown());
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push((await producer.send({ topic, body: `retry ${i}` })).msgId);
    const again: MessageExt[] = [];
    const consumer = new PushConsumer({
      consumerGroup: 'proxy_retry_cg',
      namesrvAddr: proxy,
      subscriptions: { [topic]: '*' },
      consumeFromWhere: 'first',
      pollNameServerIntervalMs: 1000,
      rebalanceIntervalMs: 1000,
    });
    const startedAt = Date.now();
    t.teardown(() => consumer.shutdown());
    await consumer.start((msgs, ctx) => {
      const m = msgs[0]!;
      if (m.reconsumeTimes === 0) {
        ctx.delayLevelWhenNextConsume = 1;
        return 'RECONSUME_LATER';
      }
      again.push(m);
      return 'CONSUME_SUCCESS';
    });
    t.ok(await waitFor(() => again.length >= 4, 60_000), `every message came back (${again.length} of 4)`);
    t.comment(`redelivered ${Date.now() - startedAt} ms after the consumer started`);
    t.same(again.map((m) => m.msgId).sort(), [...ids].sort(), 'each once, with its original msgId');
    t.ok(
      again.every((m) => m.topic === topic && m.reconsumeTimes === 1),
      'on the real topic, reconsumeTimes 1',
    );
  });

  t.test('topics without a NORMAL message type: what the proxy answers a send', async (t) => {
    // An UPDATE_AND_CREATE_TOPIC without attributes gets message.type NORMAL on 5.5.0 (accepted);
    // a topic the broker auto-creates from TBW102, or one created +message.type=UNSPECIFIED, is
    // UNSPECIFIED, and the proxy's TopicMessageTypeValidator refuses a NORMAL message on it.
    await cluster.createTopic('ProxyPlainCreated', { queues: 2 });
    await cluster.createTopic('ProxyUnspecified', { queues: 2, attributes: { 'message.type': 'UNSPECIFIED' } });
    const producer = new Producer({ group: 'proxy_notype_pg', namesrvAddr: proxy, retryTimesWhenSendFailed: 0 });
    await producer.start();
    t.teardown(() => producer.shutdown());
    const outcome = (topic: string) =>
      producer.send({ topic, body: 'no type' }).then(
        (r) => r.status as string,
        (e: unknown) => e,
      );
    t.equal(await outcome('ProxyPlainCreated'), 'SEND_OK', 'a topic created without attributes is NORMAL: accepted');
    for (const topic of ['ProxyUnspecified', 'ProxyAutoCreated']) {
      const err = await outcome(topic);
      t.ok(err instanceof BrokerError, `${topic}: a BrokerError (${(err as Error).message ?? err})`);
      if (!(err instanceof BrokerError)) continue;
      t.equal(err.code, ResponseCode.MESSAGE_ILLEGAL, `${topic}: code MESSAGE_ILLEGAL (13)`);
      t.equal(
        err.remark,
        'TopicMessageType validate failed, the expected type is UNSPECIFIED, but actual type is NORMAL',
        `${topic}: the proxy's remark`,
      );
      t.equal(err.requestCode, RequestCode.SEND_MESSAGE_V2, `${topic}: answer to SEND_MESSAGE_V2`);
      t.match(err.message, '+message.type=NORMAL', `${topic}: the error says which attribute the topic needs`);
    }
  });

  t.test('POP through the proxy: the SimpleConsumer refuses with PopNotSupportedError, sending no POP', async (t) => {
    const topic = 'ProxyPop';
    await cluster.createTopic(topic, { queues: 2, attributes: NORMAL });
    const c = new SimpleConsumer({ namesrvAddr: proxy, consumerGroup: 'proxy_pop_cg', topic, awaitDurationMs: 0 });
    await c.start();
    t.teardown(() => c.shutdown());
    const err = await c.receive(1).catch((e: unknown) => e);
    t.match(err, {
      name: 'PopNotSupportedError',
      reason: 'proxy',
      message: /RocketMQ proxy: POP over remoting does not work through the 5\.x proxy/,
    });
    t.comment(`the proxy's route names it at ${(err as { addr?: string }).addr} (dialled as ${proxy})`);
    // what a POP sent anyway gets (read from the proxy's code,
    // docs/protocol-facts.md#the-5x-proxy: an NPE in PullMessageActivity)
    const res = await cluster.invoke(
      proxy,
      createRequest(RequestCode.POP_MESSAGE, {
        extFields: {
          consumerGroup: 'proxy_pop_cg',
          topic,
          queueId: '-1',
          maxMsgNums: '1',
          invisibleTime: '5000',
          pollTime: '0',
          bornTime: String(Date.now()),
          initMode: '0',
          bname: 'broker-a',
        },
      }),
    );
    t.comment(`the proxy answers a raw POP_MESSAGE: code ${res.code}, remark ${JSON.stringify(res.remark)}`);
    t.equal(res.code, ResponseCode.SYSTEM_ERROR, 'a POP through the proxy fails (5.5.0) ...');
    t.match(
      res.remark,
      /PullMessageRequestHeader\.getSysFlag\(\)" is null/,
      '... in PullMessageActivity, on the sysFlag a POP does not carry',
    );
  });
}
