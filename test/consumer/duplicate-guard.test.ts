import { popModeTopic, popPushConsumer } from '../support/pop-mode.js';
import t from 'tap';
import { AdminClient } from '../../lib/admin/index.js';
import { ManualClock } from '../../lib/clock.js';
import { PushConsumer, type MessageExt } from '../../lib/consumer/index.js';
import {
  DuplicateGuard,
  MemoryDuplicateStore,
  type DuplicateDropped,
  type DuplicateStore,
} from '../../lib/consumer/core/duplicate-guard.js';
import type { MessageListenerConcurrently } from '../../lib/consumer/core/consume-types.js';
import { silentLogger } from '../../lib/logger.js';
import { createTopic, produce, uniqueName, until, withBroker } from './helpers.js';
import { gaugePoints, metricsProbe } from '../metrics/helpers.js';

// The duplicate guard (duplicateGuard option): a redelivered message is handled once, a message
// whose handler failed is retried and handled, dropped duplicates are acked / committed and
// counted, and the in-memory set stays within its window and count.

const bodyCounts = (seen: readonly string[]): Map<string, number> => {
  const m = new Map<string, number>();
  for (const b of seen) m.set(b, (m.get(b) ?? 0) + 1);
  return m;
};

t.test('pull mode: messages the broker redelivers after an offset reset are dropped, acked, counted', async (t) => {
  const b = await withBroker();
  t.teardown(() => b.close());
  const topic = uniqueName('DupReset');
  const group = uniqueName('cg');
  await produce(b.namesrv, topic, 20, (i) => ({ body: `m-${i}` }));
  const seen: string[] = [];
  const dropped: DuplicateDropped[] = [];
  const probe = metricsProbe('sdk');
  t.teardown(() => probe.close());
  const consumer = new PushConsumer({
    group,
    namesrvAddr: b.namesrv,
    subscriptions: { [topic]: '*' },
    consumeFromWhere: 'first',
    duplicateGuard: true,
    metrics: { meterProvider: probe.provider },
  });
  consumer.on('duplicate', (d) => dropped.push(d));
  await consumer.start((msgs) => {
    for (const m of msgs) seen.push(m.body.toString());
  });
  t.teardown(() => consumer.shutdown());
  await until(() => seen.length === 20, '20 handled');
  const admin = new AdminClient({ namesrvAddr: b.namesrv });
  t.teardown(() => admin.close());
  // the broker hands the 20 out again (RESET_CONSUMER_CLIENT_OFFSET to the running consumer)
  await admin.resetOffset(group, topic, { to: 'first' });
  await until(
    () => dropped.length === 20,
    () => `20 redeliveries dropped (${dropped.length})`,
    30_000,
  );
  t.equal(seen.length, 20, 'each message handled once');
  t.same(
    [...bodyCounts(seen).values()].filter((n) => n !== 1),
    [],
    'none twice',
  );
  t.equal(consumer.stats().duplicates?.dropped, 20, 'stats().duplicates.dropped');
  t.equal(consumer.stats().duplicates?.recorded, 20, 'stats().duplicates.recorded');
  t.ok(
    dropped.every((d) => d.topic === topic && d.key.length > 0),
    'the events name topic and key',
  );
  const got = await probe.collect();
  t.same(
    gaugePoints(got.get('rocketwire_consumer_duplicates_dropped')).find((p) => p.attributes.topic === topic),
    { attributes: { topic, client_id: consumer.clientId, consumer_group: group }, value: 20 },
    'the metrics gauge counts them',
  );
  const store = b.instances[0]!.messageStore;
  const queues = () => consumer.stats().queues.filter((q) => q.topic === topic);
  await until(
    () => queues().length === 4 && queues().every((q) => q.committedOffset === store.getMaxOffset(topic, q.queueId)),
    () =>
      `the duplicates are committed as consumed (every queue at its end): ${JSON.stringify(queues().map((q) => q.committedOffset))}`,
  );
});

t.test('pull mode: a message whose handler failed is retried and handled, then recorded', async (t) => {
  const b = await withBroker();
  t.teardown(() => b.close());
  const topic = uniqueName('DupRetry');
  const group = uniqueName('cg');
  await createTopic([b.broker], topic, 4);
  const seen: { body: string; reconsumeTimes: number }[] = [];
  let failed = false;
  const consumer = new PushConsumer({
    group,
    namesrvAddr: b.namesrv,
    subscriptions: { [topic]: '*' },
    consumeFromWhere: 'first',
    duplicateGuard: { windowMs: 60_000 },
  });
  await consumer.start((msgs, ctx) => {
    for (const m of msgs) seen.push({ body: m.body.toString(), reconsumeTimes: m.reconsumeTimes });
    if (!failed && msgs.some((m) => m.body.toString() === 'm-3')) {
      failed = true;
      ctx.delayLevelWhenNextConsume = 1; // 1 s
      throw new Error('first attempt fails');
    }
  });
  t.teardown(() => consumer.shutdown());
  await produce(b.namesrv, topic, 8, (i) => ({ body: `m-${i}` }));
  await until(() => seen.some((s) => s.body === 'm-3' && s.reconsumeTimes === 1), 'm-3 retried', 20_000);
  t.same(
    seen.filter((s) => s.body === 'm-3').map((s) => s.reconsumeTimes),
    [0, 1],
    'the failed message was not taken for a duplicate: handled again on its retry',
  );
  t.equal(consumer.stats().duplicates?.dropped, 0, 'nothing dropped');
  t.equal(consumer.stats().duplicates?.recorded, 8, 'the 8 recorded once their handler succeeded');
});

t.test('POP mode: a message the broker revives after its ack came too late is dropped and acked', async (t) => {
  const clock = new ManualClock();
  const set = await popModeTopic(t, 'DupPop', 1, { queues: 1, clock });
  const { b, topic, group } = set;
  const seen: MessageExt[] = [];
  let release: () => void = () => {};
  const slow = new Promise<void>((r) => (release = r));
  const consumer = popPushConsumer(t, set, { popInvisibleTimeMs: 10_000, duplicateGuard: true, clock });
  await consumer.start(async (msgs) => {
    seen.push(...msgs);
    // the first delivery takes longer than its invisible time
    if (seen.length === 1) await slow;
  });
  await produce(b.namesrv, topic, 1, () => ({ body: 'slow' }), { single: true });
  await until(() => seen.length === 1, 'the first delivery reached the handler');
  // past the invisible time: the broker revives the message into the pop retry topic
  clock.advance(12_000);
  const pop = b.instances[0]!.pop;
  await until(() => b.instances[0]!.messageStore.getMaxOffset(`%RETRY%${group}_${topic}`, 0) === 1, 'revived');
  release();
  // the redelivery (same UNIQ_KEY, from the retry topic) is dropped and acked
  await until(
    async () => {
      clock.advance(1000);
      await new Promise((r) => setImmediate(r));
      return consumer.stats().duplicates?.dropped === 1 && pop.checkpoints.size === 0;
    },
    () =>
      `the redelivery dropped and acked (${JSON.stringify(consumer.stats().duplicates)}, checkpoints ${pop.checkpoints.size})`,
  );
  t.equal(seen.length, 1, 'handled once');
});

t.test('POP orderly mode: a failed message comes back and is handled; a recorded one is dropped', async (t) => {
  const set = await popModeTopic(t, 'DupPopOrder', 2);
  const { b, topic, group } = set;
  const store = new Map<string, number>();
  const shared: DuplicateStore = {
    has: async (k) => store.has(k),
    add: async (k) => void store.set(k, 1),
  };
  const seen: string[] = [];
  let failed = false;
  const consumer = popPushConsumer(t, set, { orderly: true, duplicateGuard: { store: shared } });
  await consumer.start((msgs) => {
    for (const m of msgs) seen.push(m.body.toString());
    if (!failed && msgs.some((m) => m.body.toString() === 'o-2')) {
      failed = true;
      return 'SUSPEND_CURRENT_QUEUE_A_MOMENT';
    }
    return 'SUCCESS';
  });
  await produce(b.namesrv, topic, 6, (i) => ({ body: `o-${i}` }), { single: true });
  await until(() => new Set(seen).size === 6 && seen.filter((s) => s === 'o-2').length === 2, 'all 6, o-2 twice');
  t.equal(consumer.stats().duplicates?.dropped, 0, 'the retry of the failed one was not dropped');
  t.equal(store.size, 6, 'the user store holds the 6 keys, recorded after success');
  t.ok(
    [...store.keys()].every((k) => k.startsWith(`${group}:`)),
    'keys carry the group',
  );
});

t.test('the in-memory set keeps to its window and its count', async (t) => {
  const clock = new ManualClock();
  const mem = new MemoryDuplicateStore(clock, 100);
  for (let i = 0; i < 250; i++) mem.add(`k${i}`, 60_000);
  t.equal(mem.size, 100, 'at most maxKeys');
  t.notOk(mem.has('k0'), 'the oldest forgotten first');
  t.ok(mem.has('k249'), 'the newest kept');
  clock.advance(60_000);
  t.notOk(mem.has('k249'), 'nothing past the window');
  mem.add('fresh', 60_000);
  t.equal(mem.size, 1, 'expired keys leave on the next add');

  // through the guard: a recorded key is dropped within the window, handled again after it
  const dropped: DuplicateDropped[] = [];
  const guard = new DuplicateGuard({ windowMs: 5000, maxKeys: 10 }, clock, 'g', {
    dropped: (d) => dropped.push(d),
    logger: silentLogger,
    label: 'consumer g',
  });
  const handled: string[] = [];
  const listener = guard.wrap((msgs: MessageExt[]) => {
    for (const m of msgs) handled.push(m.properties.UNIQ_KEY!);
  }, false) as MessageListenerConcurrently;
  const msg = (key: string) =>
    ({
      topic: 'T',
      queueId: 0,
      queueOffset: 0,
      reconsumeTimes: 0,
      msgId: key,
      properties: { UNIQ_KEY: key },
    }) as unknown as MessageExt;
  const ctx = () => ({
    messageQueue: { topic: 'T', brokerName: 'b', queueId: 0 },
    delayLevelWhenNextConsume: 0,
    ackIndex: 2147483647,
  });
  t.equal(listener([msg('A')], ctx()), undefined, 'a synchronous handler stays synchronous');
  t.equal(listener([msg('A')], ctx()), 'CONSUME_SUCCESS', 'the duplicate is answered as consumed');
  clock.advance(5000);
  listener([msg('A')], ctx());
  t.same(handled, ['A', 'A'], 'within the window dropped, after it handled');
  for (let i = 0; i < 30; i++) listener([msg(`x${i}`)], ctx());
  t.equal(guard.stats().held, 10, 'held keys bounded by maxKeys');
  t.equal(guard.stats().dropped, 1);
  // a batch with a duplicate: the handler sees the rest; its ackIndex maps back onto the batch
  listener([msg('x29')], ctx());
  const c = ctx();
  const seen: string[][] = [];
  const partial = guard.wrap((msgs: MessageExt[], cx: { ackIndex: number }) => {
    seen.push(msgs.map((m) => m.properties.UNIQ_KEY!));
    cx.ackIndex = 0;
  }, false) as MessageListenerConcurrently;
  partial([msg('x29'), msg('n1'), msg('n2')], c);
  t.same(seen, [['n1', 'n2']], 'the duplicate not handed over');
  t.equal(c.ackIndex, 1, "the handler's ackIndex 0 (n1) is index 1 of the batch");
  t.throws(() => new PushConsumer({ group: 'g', namesrvAddr: 'h:1', duplicateGuard: { windowMs: 10 } }), {
    name: 'ConsumerOptionError',
  });
});
