import t from 'tap';
import { ConsumerOptionError, PushConsumer, messageQueue, type MessageExt } from '../../lib/consumer/index.js';
import { ManualClock } from '../../lib/clock.js';
import { pushConsumerImpl } from '../../lib/consumer/push/push-consumer.js';
import { produce, uniqueName, until, withBroker } from './helpers.js';

const broker = await withBroker();
t.teardown(() => broker.close());

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * How many pull requests of `topic` (queue `queueId`) are parked because they are paused: a parked
 * request is looked at again every second and parked again, so its queue pulls nothing until resume().
 */
function parkedFor(c: PushConsumer, topic: string, queueId?: number): number {
  return [...pushConsumerImpl(c).pausedQueues['parked']].filter(
    (pr) => pr.messageQueue.topic === topic && (queueId === undefined || pr.messageQueue.queueId === queueId),
  ).length;
}

async function started(topics: string[], got: MessageExt[], extra: Record<string, unknown> = {}) {
  const c = new PushConsumer({
    consumerGroup: uniqueName('cg'),
    namesrvAddr: broker.namesrv,
    consumeFromWhere: 'first',
    ...extra,
  });
  for (const topic of topics) c.subscribe(topic);
  await c.start((msgs) => {
    got.push(...msgs);
    return 'CONSUME_SUCCESS';
  });
  return c;
}

t.test(
  'pause(queue): that queue stops pulling but stays assigned; the others go on; resume(queue) pulls it again',
  async (t) => {
    const topic = uniqueName('T');
    const got: MessageExt[] = [];
    await produce(broker.namesrv, topic, 8, undefined, { single: true });
    const c = await started([topic], got);
    t.teardown(() => c.shutdown());
    await until(() => got.length === 8, 'the first 8');
    const q0 = c.assignment().find((q) => q.topic === topic && q.queueId === 0)!;
    c.pause(q0);
    t.same(c.paused().queues, [q0]);
    got.length = 0;
    await produce(broker.namesrv, topic, 80, undefined, { single: true });
    await until(() => got.filter((m) => m.queueId !== 0).length === 60, "the other queues' 60");
    // The pull held at the broker when pause() came may still bring one batch (up to 32) of queue 0.
    const early = got.filter((m) => m.queueId === 0).length;
    t.ok(early <= 20, `queue 0: at most the pull in flight at pause time (${early})`);
    await until(() => parkedFor(c, topic, 0) === 1, 'the pull of queue 0 back and parked');
    t.equal(got.filter((m) => m.queueId === 0).length, early, 'nothing more from queue 0 while paused');
    t.equal(c.assignment().filter((q) => q.topic === topic).length, 4, 'queue 0 is still assigned');
    const s = c.stats().queues.find((q) => q.topic === topic && q.queueId === 0)!;
    t.notOk(s.dropped, 'its process queue is kept');
    c.resume(q0);
    t.same(c.paused().queues, []);
    await until(() => got.filter((m) => m.queueId === 0).length === 20, "queue 0's 20 after resume");
    t.equal(got.length, 80, 'each message once');
  },
);

t.test('pause(topic) stops every queue of that topic only; resume(topic) also ends its queue pauses', async (t) => {
  const a = uniqueName('A');
  const b = uniqueName('B');
  const got: MessageExt[] = [];
  await produce(broker.namesrv, a, 4, undefined, { single: true });
  await produce(broker.namesrv, b, 4, undefined, { single: true });
  const c = await started([a, b], got);
  t.teardown(() => c.shutdown());
  await until(() => got.length === 8, 'the first 8');
  c.pause(a);
  c.pause([messageQueue(a, c.assignment().find((q) => q.topic === a)!.brokerName, 1)]);
  got.length = 0;
  await produce(broker.namesrv, a, 40, undefined, { single: true });
  await produce(broker.namesrv, b, 40, undefined, { single: true });
  await until(() => got.filter((m) => m.topic === b).length === 40, 'topic B goes on');
  const early = got.filter((m) => m.topic === a).length;
  await until(() => parkedFor(c, a) === 4, "the pulls of topic A's 4 queues back and parked");
  t.equal(got.filter((m) => m.topic === a).length, early, 'nothing more of topic A while paused');
  t.ok(early <= 4 * 32, 'at most the pulls that were in flight');
  c.resume(a);
  t.same(c.paused(), { topics: [], queues: [] }, 'resume(topic) cleared the topic and its queue pause');
  await until(() => got.filter((m) => m.topic === a).length === 40, 'topic A after resume');
});

t.test(
  'a paused queue is not dropped as idle: its parked pull is looked at every second (ManualClock, 3 minutes)',
  async (t) => {
    const clock = new ManualClock(Date.now());
    const b = await withBroker({ clock });
    t.teardown(() => b.close());
    const topic = uniqueName('T');
    await produce(b.namesrv, topic, 4, undefined, { single: true });
    const got: MessageExt[] = [];
    const c = new PushConsumer({
      consumerGroup: uniqueName('cg'),
      namesrvAddr: b.namesrv,
      consumeFromWhere: 'first',
      clock,
      rebalanceIntervalMs: 20_000,
    });
    c.subscribe(topic);
    await c.start((msgs) => {
      got.push(...msgs);
      return 'CONSUME_SUCCESS';
    });
    t.teardown(() => c.shutdown());
    await until(async () => {
      clock.advance(10);
      return got.length === 4;
    }, 'the first 4');
    c.pause(topic);
    const table = pushConsumerImpl(c).rebalance.processQueueTable;
    const before = [...table.values()].filter((e) => e.mq.topic === topic).map((e) => e.pq);
    for (let i = 0; i < 180; i++) {
      clock.advance(1000);
      await tick(1);
    }
    const qs = c.stats().queues.filter((q) => q.topic === topic);
    t.equal(qs.length, 4, 'still 4 queues after 3 minutes paused (the 120 s idle rule did not drop them)');
    t.ok(qs.every((q) => !q.dropped));
    const after = [...table.values()].filter((e) => e.mq.topic === topic).map((e) => e.pq);
    t.ok(
      before.length === 4 && after.every((pq, i) => pq === before[i]),
      'the same 4 process queues: none was removed and re-created',
    );
  },
);

t.test('bad pause targets are refused naming the option', async (t) => {
  const c = new PushConsumer({ consumerGroup: 'g', namesrvAddr: '127.0.0.1:1' });
  t.throws(() => c.pause(''), ConsumerOptionError);
  t.throws(() => c.pause([{ topic: 'T' } as never]), { name: 'ConsumerOptionError', option: 'pause' });
});
