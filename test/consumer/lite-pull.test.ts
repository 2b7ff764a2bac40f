import t from 'tap';
import {
  ConsumerOptionError,
  ConsumerStateError,
  LitePullConsumer,
  messageQueue,
  type MessageExt,
} from '../../lib/consumer/index.js';
import { litePullConsumerImpl } from '../../lib/consumer/lite-pull/lite-pull-consumer.js';
import { litePullOperation } from '../../lib/consumer/lite-pull/lite-pull-operation.js';
import { Operations } from '../../protocol/index.js';
import { ManualClock } from '../../lib/clock.js';
import { brokerOffsets, produce, uniqueName, until, withBroker } from './helpers.js';

const broker = await withBroker();
t.teardown(() => broker.close());

/** Polls until `n` distinct bodies were seen (or fails after the helper's limit). */
async function pollAll(
  c: LitePullConsumer,
  n: number,
  seen = new Map<string, MessageExt>(),
): Promise<Map<string, MessageExt>> {
  await until(async () => {
    for (const m of await c.poll(200)) seen.set(m.body.toString(), m);
    return seen.size >= n;
  }, `${n} messages`);
  return seen;
}

t.test(
  'subscribe: polls every message once in batches of pullBatchSize, commitSync persists the end offsets',
  async (t) => {
    const topic = uniqueName('T');
    const group = uniqueName('cg');
    // One send per message: batches of 64 each go to one queue, and when the producer's route
    // refresh restarts its round robin (as Java's does) two can land on one queue and leave another
    // empty, whose offset nobody commits; every queue must hold messages for the check below.
    await produce(broker.namesrv, topic, 200, () => ({}), { single: true });
    const c = new LitePullConsumer({
      consumerGroup: group,
      namesrvAddr: broker.namesrv,
      consumeFromWhere: 'first',
      autoCommit: false,
    });
    c.subscribe(topic, '*');
    await c.start();
    t.teardown(() => c.shutdown());
    t.equal(c.assignment().length, 4, 'the rebalance gave the only member the 4 queues');
    const seen = new Map<string, MessageExt>();
    let largest = 0;
    let polls = 0;
    await until(async () => {
      const msgs = await c.poll(200);
      polls++;
      largest = Math.max(largest, msgs.length);
      if (msgs.length > 0) t.equal(new Set(msgs.map((m) => m.queueId)).size, 1, 'one poll = one queue');
      for (const m of msgs) {
        t.notOk(seen.has(m.body.toString()), 'no duplicate');
        seen.set(m.body.toString(), m);
      }
      return seen.size === 200;
    }, '200 messages');
    t.equal(largest, 10, 'a poll returns up to pullBatchSize (10) messages');
    t.ok(polls >= 20, 'so 200 messages take at least 20 polls');
    await c.commitSync({ persist: true });
    await until(
      async () => (await brokerOffsets(broker.namesrv, topic, group)).every((r) => r.committed === r.max),
      'the broker has the end offsets',
    );
    for (const mq of c.assignment()) {
      const rows = await brokerOffsets(broker.namesrv, topic, group);
      t.equal(
        await c.committed(mq),
        rows.find((r) => r.queueId === mq.queueId)!.max,
        `committed(${mq.queueId}) = end offset`,
      );
    }
  },
);

t.test(
  'autoCommit: a poll commits what earlier polls returned once the interval has passed (ManualClock)',
  async (t) => {
    const topic = uniqueName('T');
    const group = uniqueName('cg');
    await produce(broker.namesrv, topic, 40);
    // The consumer's timers and its autoCommit deadline run on this clock; pulls answered at once need none.
    const clock = new ManualClock(Date.now());
    const c = new LitePullConsumer({
      consumerGroup: group,
      namesrvAddr: broker.namesrv,
      consumeFromWhere: 'first',
      autoCommitIntervalMs: 1000,
      clock,
    });
    c.subscribe(topic);
    await c.start();
    t.teardown(() => c.shutdown());
    let first: MessageExt[] = [];
    await until(async () => (first = await c.poll(0)).length > 0, 'a first batch');
    const mq = messageQueue(topic, first[0]!.brokerName!, first[0]!.queueId);
    // The broker answers 0 for a group without an offset on a queue whose messages start at 0.
    t.ok((await c.committed(mq)) <= first[0]!.queueOffset, 'nothing committed past the first batch by the first poll');
    clock.advance(999);
    const second = await c.poll(0);
    t.ok((await c.committed(mq)) <= first[0]!.queueOffset, 'nor by a poll before the interval has passed');
    clock.advance(1);
    await c.poll(0);
    const polled = [...first, ...second].filter((m) => m.queueId === mq.queueId);
    t.equal(
      await c.committed(mq),
      Math.max(...polled.map((m) => m.queueOffset)) + 1,
      'the first poll after the interval committed past everything polled before it',
    );
  },
);

t.test('two lite pull consumers of one group split the queues and consume everything once', async (t) => {
  const topic = uniqueName('T');
  const group = uniqueName('cg');
  await produce(broker.namesrv, topic, 400);
  const a = new LitePullConsumer({
    consumerGroup: group,
    namesrvAddr: broker.namesrv,
    consumeFromWhere: 'first',
    instanceName: 'a',
    rebalanceIntervalMs: 200,
  });
  const b = new LitePullConsumer({
    consumerGroup: group,
    namesrvAddr: broker.namesrv,
    consumeFromWhere: 'first',
    instanceName: 'b',
    rebalanceIntervalMs: 200,
  });
  a.subscribe(topic);
  b.subscribe(topic);
  await a.start();
  await b.start();
  t.teardown(() => Promise.all([a.shutdown(), b.shutdown()]));
  await until(() => a.assignment().length === 2 && b.assignment().length === 2, 'two queues each');
  const mine = (c: LitePullConsumer) => new Set(c.assignment().map((q) => q.queueId));
  const qa = mine(a);
  t.notOk(
    [...mine(b)].some((q) => qa.has(q)),
    'no queue held by both',
  );
  const seen = new Map<string, string>();
  let dup = 0;
  await until(async () => {
    for (const [name, c] of [
      ['a', a],
      ['b', b],
    ] as const) {
      for (const m of await c.poll(50)) {
        if (seen.has(m.body.toString())) dup++;
        seen.set(m.body.toString(), name);
      }
    }
    return seen.size === 400;
  }, '400 messages');
  t.equal(dup, 0, 'nothing consumed twice');
  t.ok([...seen.values()].includes('a') && [...seen.values()].includes('b'), 'both consumed');
});

t.test('assign: only the given queues; seek back re-delivers exactly from the offset asked for', async (t) => {
  const topic = uniqueName('T');
  const group = uniqueName('cg');
  await produce(broker.namesrv, topic, 200);
  const c = new LitePullConsumer({
    consumerGroup: group,
    namesrvAddr: broker.namesrv,
    consumeFromWhere: 'first',
    autoCommit: false,
  });
  t.throws(() => c.assign([]), ConsumerOptionError);
  await t.rejects(c.start(), ConsumerStateError, 'nothing to consume');
});

t.test('assign mode', async (t) => {
  const topic = uniqueName('T');
  const group = uniqueName('cg');
  await produce(broker.namesrv, topic, 200);
  const c = new LitePullConsumer({
    consumerGroup: group,
    namesrvAddr: broker.namesrv,
    consumeFromWhere: 'first',
    autoCommit: false,
  });
  const probe = new LitePullConsumer({ consumerGroup: uniqueName('probe'), namesrvAddr: broker.namesrv });
  probe.assign([messageQueue(topic, 'x', 0)]);
  await probe.start();
  const all = await probe.fetchMessageQueues(topic);
  await probe.shutdown();
  t.equal(all.length, 4, 'fetchMessageQueues lists the 4 queues');
  const rows = await brokerOffsets(broker.namesrv, topic, group);
  const fullest = rows.reduce((a, r) => (r.max > a.max ? r : a));
  const mq = all.find((q) => q.queueId === fullest.queueId)!;
  const max = fullest.max;
  t.ok(max >= 20, `queue ${mq.queueId} holds ${max} messages`);
  c.assign([mq]);
  t.throws(() => c.subscribe(topic), ConsumerStateError, 'subscribe and assign are exclusive');
  await c.start();
  t.teardown(() => c.shutdown());
  t.same(c.assignment(), [mq]);
  const got: MessageExt[] = [];
  await until(async () => {
    got.push(...(await c.poll(200)));
    return got.length >= max;
  }, 'queue 1 read to its end');
  t.ok(
    got.every((m) => m.queueId === mq.queueId),
    'only the assigned queue',
  );
  t.same(
    got.map((m) => m.queueOffset),
    Array.from({ length: max }, (_, i) => i),
    'in order, every offset once',
  );

  await c.seek(mq, 7);
  const again: MessageExt[] = [];
  await until(async () => {
    again.push(...(await c.poll(200)));
    return again.length >= max - 7;
  }, 're-delivery after seek');
  t.equal(again[0]!.queueOffset, 7, 'the first message after seek(7) is offset 7');
  t.same(
    again.map((m) => m.queueOffset),
    Array.from({ length: max - 7 }, (_, i) => i + 7),
    'then every later offset once',
  );
  await c.commitSync();
  t.equal(await c.committed(mq), max, 'committed the end after re-reading');

  await c.seek(mq, 3);
  let batch: MessageExt[] = [];
  await until(async () => (batch = await c.poll(200)).length > 0, 'a batch after seek(3)');
  t.equal(batch[0]!.queueOffset, 3, 'seek(3) again: the next batch starts at 3');
  await c.commitSync();
  t.equal(
    await c.committed(mq),
    3 + batch.length,
    'commitSync stores the offset after that batch (committing lower than before)',
  );

  await t.rejects(c.seek(mq, max + 1), ConsumerOptionError, 'past the end');
  // another queue than the assigned one (queue 2 was, whenever the producer had filled it most)
  await t.rejects(
    c.seek(messageQueue(topic, mq.brokerName, (mq.queueId + 1) % 4), 0),
    ConsumerStateError,
    'a queue not assigned',
  );
  await c.seekToEnd(mq);
  t.same(await c.poll(100), [], 'nothing after seekToEnd');
  await c.seekToBegin(mq);
  const begin = await c.poll(2000);
  t.equal(begin[0]?.queueOffset, 0, 'seekToBegin starts at 0');
  const ts = begin[0]!.storeTimestamp;
  t.equal(await c.offsetForTimestamp(mq, ts), 0, 'offsetForTimestamp of the first message is 0');
});

t.test("pause stops a queue's pulls (it stays assigned); resume pulls again", async (t) => {
  const topic = uniqueName('T');
  const group = uniqueName('cg');
  const probe = new LitePullConsumer({ consumerGroup: group, namesrvAddr: broker.namesrv, consumeFromWhere: 'first' });
  await produce(broker.namesrv, topic, 8, undefined, { single: true });
  probe.subscribe(topic);
  await probe.start();
  t.teardown(() => probe.shutdown());
  await pollAll(probe, 8);
  const [q0, ...rest] = probe.assignment().sort((x, y) => x.queueId - y.queueId);
  const pausedParks = litePullConsumerImpl(probe).counters.parks.pause;
  probe.pause([q0!]);
  t.ok(probe.isPaused(q0!));
  t.notOk(probe.isPaused(rest[0]!));
  await produce(broker.namesrv, topic, 80, undefined, { single: true });
  const got: MessageExt[] = [];
  await until(async () => {
    got.push(...(await probe.poll(100)));
    return got.length >= 60;
  }, "the other queues' messages");
  // The pull held at the broker when pause() was called may still bring one batch.
  const early = got.filter((m) => m.queueId === q0!.queueId).length;
  t.ok(early <= 10, `at most the pull in flight at pause time (${early} ≤ pullBatchSize) from the paused queue`);
  // Once its pull loop has come round and parked for the pause, the queue pulls nothing until resume().
  await until(() => litePullConsumerImpl(probe).counters.parks.pause > pausedParks, 'the paused queue parked');
  got.push(...(await probe.poll(0)));
  t.equal(got.filter((m) => m.queueId === q0!.queueId).length, early, 'nothing more from it while paused');
  t.equal(probe.assignment().length, 4, 'the paused queue is still assigned');
  probe.resume([q0!]);
  await until(async () => {
    got.push(...(await probe.poll(100)));
    return got.length >= 80;
  }, "the paused queue's messages after resume");
  t.equal(got.filter((m) => m.queueId === q0!.queueId).length, 20, 'all 20 of its messages came after resume');
});

t.test(
  'pull-ahead stops at the flow-control limits; poll with nothing cached waits without pulling again',
  async (t) => {
    const topic = uniqueName('T');
    const group = uniqueName('cg');
    await produce(broker.namesrv, topic, 800);
    const c = new LitePullConsumer({
      consumerGroup: group,
      namesrvAddr: broker.namesrv,
      consumeFromWhere: 'first',
      pullThresholdForQueue: 50,
    });
    c.subscribe(topic);
    await c.start();
    t.teardown(() => c.shutdown());
    const impl = litePullConsumerImpl(c);
    await until(() => impl.counters.parks.count > 8, 'every queue parked by flow control');
    for (const q of impl.cacheStats().queues) {
      t.ok(
        q.cachedMessages > 50 && q.cachedMessages <= 50 + 10,
        `queue ${q.mq.queueId}: cache stopped just over 50 (${q.cachedMessages})`,
      );
    }
    const pulled = impl.counters.messagesPulled;
    // Every queue's pull loop comes round on its flow-control timer twice more, and parks again.
    const parks = impl.counters.parks.count;
    await until(
      () => impl.counters.parks.count >= parks + 2 * impl.cacheStats().queues.length,
      'two more rounds of parks',
    );
    t.equal(impl.counters.messagesPulled, pulled, 'no more pulled while nothing is polled');

    const warned: string[] = [];
    const empty = new LitePullConsumer({
      consumerGroup: uniqueName('cg'),
      namesrvAddr: broker.namesrv,
      logger: { debug: () => {}, info: () => {}, warn: (m) => warned.push(m), error: (m) => warned.push(m) },
    });
    empty.subscribe(uniqueName('E'));
    await empty.start();
    t.teardown(() => empty.shutdown());
    const e = litePullConsumerImpl(empty);
    // Its start-up route lookup came back: the topic has no route yet, and the consumer polls for it.
    await until(() => warned.some((m) => m.includes('no route for topic')), 'the route lookup answered');
    const pulls = e.counters.pulls;
    t.same(await empty.poll(300), [], 'nothing to poll');
    t.ok(
      e.counters.pulls - pulls <= 4,
      `poll waited on held long polls (${e.counters.pulls - pulls} pulls sent meanwhile)`,
    );
  },
);

t.test('options and states', async (t) => {
  const base = { consumerGroup: 'g', namesrvAddr: '127.0.0.1:1' };
  t.throws(() => new LitePullConsumer({ ...base, autoCommitIntervalMs: 500 }), {
    name: 'ConsumerOptionError',
    option: 'autoCommitIntervalMs',
  });
  t.throws(() => new LitePullConsumer({ ...base, brokerSuspendMaxTimeMs: 30000 }), {
    name: 'ConsumerOptionError',
    option: 'consumerTimeoutMsWhenSuspend',
  });
  t.throws(() => new LitePullConsumer({ ...base, pullBatchSize: 0 }), {
    name: 'ConsumerOptionError',
    option: 'pullBatchSize',
  });
  t.throws(() => new LitePullConsumer({ ...base, consumerGroup: 'bad group' }), {
    name: 'ConsumerOptionError',
    option: 'consumerGroup',
  });
  const c = new LitePullConsumer(base);
  await t.rejects(c.poll(), ConsumerStateError, 'poll before start');
  c.assign([messageQueue('T', 'b', 0)]);
  t.throws(() => c.subscribe('T'), ConsumerStateError);
});

t.test('request code: 361 to a 5.x broker, 11 to 4.9 and to one not heard from', async (t) => {
  t.equal(litePullOperation(479), Operations.LITE_PULL_MESSAGE, '5.3.3');
  t.equal(litePullOperation(413), Operations.LITE_PULL_MESSAGE, '5.0.0');
  t.equal(litePullOperation(409), Operations.PULL_MESSAGE, '4.9.8 (the embedded broker)');
  t.equal(litePullOperation(undefined), Operations.PULL_MESSAGE);
});
