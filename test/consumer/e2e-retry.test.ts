import t from 'tap';
import { ConsumeConcurrentlyStatus, PushConsumer, type MessageExt } from '../../lib/consumer/index.js';
import { drained, scheduleDelivered } from '../support/embedded-broker.js';
import { FAST_DELAY_LEVELS, produce, uniqueName, until, withBroker } from './helpers.js';

const { CONSUME_SUCCESS, RECONSUME_LATER } = ConsumeConcurrentlyStatus;

t.test(
  'RECONSUME_LATER: the message comes back through %RETRY% with reconsumeTimes rising and its own topic',
  async (t) => {
    const broker = await withBroker({ messageDelayLevel: FAST_DELAY_LEVELS });
    t.teardown(() => broker.close());
    const topic = uniqueName('T');
    const group = uniqueName('cg');
    await produce(broker.namesrv, topic, 3, (i) => ({ body: `m${i}`, tags: 'TagA' }));
    const deliveries = new Map<string, MessageExt[]>();
    const c = new PushConsumer({
      consumerGroup: group,
      namesrvAddr: broker.namesrv,
      consumeFromWhere: 'first',
      rebalanceIntervalMs: 300,
    });
    c.subscribe(topic, 'TagA');
    await c.start((msgs) => {
      const m = msgs[0]!;
      const body = m.body.toString();
      deliveries.set(body, [...(deliveries.get(body) ?? []), m]);
      return body === 'm1' && m.reconsumeTimes < 3 ? RECONSUME_LATER : CONSUME_SUCCESS;
    });
    t.teardown(() => c.shutdown());
    await until(() => (deliveries.get('m1')?.length ?? 0) === 4, 'm1 delivered 4 times');
    const m1 = deliveries.get('m1')!;
    t.same(
      m1.map((m) => m.reconsumeTimes),
      [0, 1, 2, 3],
      'reconsumeTimes rises by one per delivery',
    );
    t.ok(
      m1.every((m) => m.topic === topic),
      'retry copies show the original topic',
    );
    t.ok(
      m1.every((m) => m.msgId === m1[0]!.msgId),
      'same msgId on every delivery',
    );
    t.equal(deliveries.get('m0')!.length, 1);
    t.equal(deliveries.get('m2')!.length, 1);
    t.ok(c.stats().sendBackOk >= 3, 'sent back with CONSUMER_SEND_MSG_BACK');
  },
);

t.test('ackIndex: with a batch, only messages after ackIndex are retried', async (t) => {
  const broker = await withBroker({ messageDelayLevel: FAST_DELAY_LEVELS });
  t.teardown(() => broker.close());
  const topic = uniqueName('T');
  const group = uniqueName('cg');
  await produce(broker.namesrv, topic, 8, (i) => ({ body: `m${i}` }));
  const counts = new Map<string, number>();
  const batches: number[] = [];
  const c = new PushConsumer({
    consumerGroup: group,
    namesrvAddr: broker.namesrv,
    consumeFromWhere: 'first',
    consumeMessageBatchMaxSize: 4,
  });
  c.subscribe(topic);
  await c.start((msgs, ctx) => {
    batches.push(msgs.length);
    for (const m of msgs) counts.set(m.body.toString(), (counts.get(m.body.toString()) ?? 0) + 1);
    if (msgs[0]!.reconsumeTimes === 0 && msgs.length === 4) ctx.ackIndex = 1; // first two succeed, last two fail
    return CONSUME_SUCCESS;
  });
  t.teardown(() => c.shutdown());
  await until(() => [...counts.values()].reduce((a, b) => a + b, 0) === 12, '8 first deliveries + 4 retries');
  await until(
    async () => scheduleDelivered(broker) && (await drained(c, broker.namesrv, group, [topic, `%RETRY%${group}`])),
    'no retry left in the schedule, every queue pulled to its end and consumed',
  );
  t.ok(batches.includes(4), 'batches of 4 were delivered');
  const twice = [...counts]
    .filter(([, n]) => n === 2)
    .map(([b]) => b)
    .sort();
  t.same(twice, ['m2', 'm3', 'm6', 'm7'], 'exactly the messages after ackIndex came back');
});

t.test('delayLevelWhenNextConsume -1 sends the message straight to %DLQ%group', async (t) => {
  const broker = await withBroker({ messageDelayLevel: FAST_DELAY_LEVELS });
  t.teardown(() => broker.close());
  const topic = uniqueName('T');
  const group = uniqueName('cg');
  await produce(broker.namesrv, topic, 2, (i) => ({ body: `m${i}` }));
  let calls = 0;
  const c = new PushConsumer({ consumerGroup: group, namesrvAddr: broker.namesrv, consumeFromWhere: 'first' });
  c.subscribe(topic);
  await c.start((msgs, ctx) => {
    calls++;
    if (msgs[0]!.body.toString() === 'm1') {
      ctx.delayLevelWhenNextConsume = -1;
      return RECONSUME_LATER;
    }
    return CONSUME_SUCCESS;
  });
  t.teardown(() => c.shutdown());
  // Read the DLQ with a second group: the failed message is there, once, never redelivered to the first group.
  const dlq: MessageExt[] = [];
  const reader = new PushConsumer({
    consumerGroup: uniqueName('dlqreader'),
    namesrvAddr: broker.namesrv,
    consumeFromWhere: 'first',
    rebalanceIntervalMs: 200,
  });
  reader.subscribe(`%DLQ%${group}`);
  await until(() => calls === 2, 'both consumed once');
  await reader.start((msgs) => {
    dlq.push(...msgs);
    return CONSUME_SUCCESS;
  });
  t.teardown(() => reader.shutdown());
  await until(() => dlq.length === 1, 'message in the DLQ');
  t.equal(dlq[0]!.body.toString(), 'm1');
  await until(
    async () => scheduleDelivered(broker) && (await drained(c, broker.namesrv, group, [topic])),
    'no retry left in the schedule, the topic pulled to its end and consumed',
  );
  t.equal(calls, 2, 'no redelivery to the group');
});

t.test(
  'expiry sweep: a handler stuck longer than consumeTimeout does not hold the queue; the message is retried',
  async (t) => {
    const broker = await withBroker({ messageDelayLevel: FAST_DELAY_LEVELS });
    t.teardown(() => broker.close());
    const topic = uniqueName('T');
    const group = uniqueName('cg');
    await produce(broker.namesrv, topic, 20, (i) => ({ body: `m${i}` }));
    let release!: () => void;
    const stuck = new Promise<void>((r) => (release = r));
    const seen: MessageExt[] = [];
    const c = new PushConsumer({
      consumerGroup: group,
      namesrvAddr: broker.namesrv,
      consumeFromWhere: 'first',
      consumeTimeoutMs: 300,
    });
    c.subscribe(topic);
    await c.start(async (msgs) => {
      const m = msgs[0]!;
      seen.push(m);
      if (m.body.toString() === 'm0' && m.reconsumeTimes === 0) await stuck;
      return CONSUME_SUCCESS;
    });
    t.teardown(async () => {
      release();
      await c.shutdown();
    });
    await until(
      () => seen.some((m) => m.body.toString() === 'm0' && m.reconsumeTimes === 1),
      'the stuck message redelivered',
    );
    t.equal(c.stats().expired, 1, 'one message expired');
    const q = c.stats().queues.find((x) => x.topic === topic && x.pulledOffset === 20);
    await until(
      () => c.stats().queues.find((x) => x.topic === topic && x.pulledOffset === 20)?.committedOffset === 20,
      'offset passes the expired message',
    );
    t.ok(q, 'the queue with the messages');
    t.equal(seen.filter((m) => m.reconsumeTimes === 0).length, 20, 'the other messages were consumed meanwhile');
    release();
  },
);
