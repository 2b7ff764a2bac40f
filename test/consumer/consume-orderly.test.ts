import t from 'tap';
import { ManualClock } from '../../lib/clock.js';
import {
  messageQueue,
  RemoteBrokerOffsetStore,
  resolveConsumerOptions,
  type MessageExt,
  type MessageListenerOrderly,
} from '../../lib/consumer/index.js';
import { ConsumeMessageOrderlyService } from '../../lib/consumer/push/consume-message-orderly-service.js';
import { ConsumerStatsRecorder } from '../../lib/consumer/core/consumer-stats.js';
import { ProcessQueue } from '../../lib/consumer/core/process-queue.js';
import { createMessageExt } from '../../protocol/internal.js';

function msg(queueOffset: number): MessageExt {
  return createMessageExt({
    topic: 'T',
    queueId: 0,
    flag: 0,
    queueOffset,
    commitLogOffset: queueOffset * 100,
    sysFlag: 0,
    bornTimestamp: 0,
    bornHost: '127.0.0.1:1',
    storeTimestamp: 0,
    storeHost: '127.0.0.1:2',
    reconsumeTimes: 0,
    preparedTransactionOffset: 0,
    bodyCRC: 0,
    storeSize: 0,
    properties: {},
    body: Buffer.alloc(1),
    msgId: `id${queueOffset}`,
    offsetMsgId: `id${queueOffset}`,
  });
}

function setup(listener: MessageListenerOrderly, opts: Record<string, unknown> = {}) {
  const clock = new ManualClock();
  const config = resolveConsumerOptions({
    consumerGroup: 'g',
    namesrvAddr: '127.0.0.1:1',
    orderly: true,
    clock,
    ...opts,
  });
  const offsetStore = new RemoteBrokerOffsetStore({
    queryConsumerOffset: async () => -1,
    updateConsumerOffsetOneway: async () => undefined,
  });
  const host = {
    config,
    offsetStore,
    recorder: new ConsumerStatsRecorder(),
    maxReconsumeTimes: 2147483647,
    sendMessageBack: async () => true,
    republishToRetry: async () => true,
    onConsumed: () => undefined,
    lockQueue: async () => true,
    invalid: [] as unknown[],
    invalidHandlerResult(value: unknown) {
      this.invalid.push(value);
    },
  };
  const svc = new ConsumeMessageOrderlyService(host, listener);
  const mq = messageQueue('T', 'broker-a', 0);
  const pq = new ProcessQueue(clock.now());
  pq.markLocked(clock.now());
  const feed = (m: MessageExt) => svc.submitConsumeRequest([m], pq, mq, pq.putMessage([m]));
  return { clock, svc, pq, feed, offsetStore, mq, host };
}

t.test(
  'an orderly handler resolving nothing is SUCCESS: the offset moves past its messages, nothing is handed over again',
  async (t) => {
    const calls: number[] = [];
    const { clock, svc, pq, feed, offsetStore, mq, host } = setup(async (msgs) => {
      calls.push(msgs[0]!.queueOffset);
    });
    feed(msg(0));
    feed(msg(1));
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    clock.advance(60_000);
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    t.same(calls, [0, 1], 'each message handled once');
    t.equal(offsetStore.readMemory(mq), 2, 'committed past both');
    t.equal(pq.msgCount, 0);
    t.same(host.invalid, []);
    await svc.shutdown(0);
  },
);

t.test('an orderly handler returning a string that is no status suspends the queue and is reported', async (t) => {
  const calls: number[] = [];
  const { clock, svc, feed, offsetStore, mq, host } = setup(async (msgs) => {
    calls.push(msgs[0]!.queueOffset);
    return calls.length === 1 ? 'SUCESS' : 'SUCCESS';
  });
  feed(msg(0));
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  t.same(calls, [0]);
  t.equal(offsetStore.readMemory(mq), -1, 'nothing committed after the unknown value');
  t.same(host.invalid, ['SUCESS']);
  clock.advance(1000);
  for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
  t.same(calls, [0, 0], 'handed over again after suspendCurrentQueueTimeMs');
  t.equal(offsetStore.readMemory(mq), 1);
  await svc.shutdown(0);
});

t.test(
  'awaitConsumeIdle: at once without a run; when the run ends (the queue dropped); false after 1 s of the clock',
  async (t) => {
    let finish!: () => void;
    const { clock, svc, pq, feed } = setup(() => new Promise((r) => (finish = () => r('SUCCESS'))));
    t.equal(await svc.awaitConsumeIdle(pq, 1000), true, 'no run owns the queue');
    feed(msg(0));
    let settled: boolean | undefined;
    void svc.awaitConsumeIdle(pq, 1000).then((v) => (settled = v));
    pq.drop();
    clock.advance(999);
    await new Promise((r) => setImmediate(r));
    t.equal(settled, undefined, 'still waiting at 999 ms');
    finish();
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    t.equal(settled, true, 'resolves when the handler call in flight ends, without the clock moving');
  },
);

t.test('awaitConsumeIdle gives up after the bound when the handler call does not end', async (t) => {
  const { clock, svc, pq, feed } = setup(() => new Promise(() => undefined));
  feed(msg(0));
  let settled: boolean | undefined;
  void svc.awaitConsumeIdle(pq, 1000).then((v) => (settled = v));
  clock.advance(999);
  await new Promise((r) => setImmediate(r));
  t.equal(settled, undefined);
  clock.advance(1);
  await new Promise((r) => setImmediate(r));
  t.equal(settled, false, 'false after 1000 ms');
  t.equal(svc.inFlightCount, 1, 'the run still owns the queue');
});

t.test(
  'orderly honours consumeThreadMin: 100 queues, at most 20 handler calls at once, the others wait their turn in order',
  async (t) => {
    const release: (() => void)[] = [];
    const started: number[] = [];
    const { clock, svc } = setup((msgs) => {
      started.push(msgs[0]!.queueId);
      return new Promise((r) => release.push(() => r('SUCCESS')));
    });
    for (let q = 0; q < 100; q++) {
      const mq = messageQueue('T', 'broker-a', q);
      const pq = new ProcessQueue(clock.now());
      pq.markLocked(clock.now());
      const m = { ...msg(0), queueId: q };
      svc.submitConsumeRequest([m], pq, mq, pq.putMessage([m]));
    }
    await new Promise((r) => setImmediate(r));
    // Before: one run per queue, unbounded (100 handler calls at once).
    t.equal(started.length, 20, 'the default consumeThreadMin');
    t.equal(svc.inFlightCount, 20);
    t.equal(svc.backlogCount, 80);
    release.shift()!();
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    t.equal(started.length, 21, 'a queue that ran dry frees its slot for the next one');
    t.equal(started[20], 20, 'in the order they asked');
    while (release.length > 0) {
      release.shift()!();
      for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
      t.ok(svc.inFlightCount <= 20);
    }
    t.same(
      started,
      Array.from({ length: 100 }, (_, i) => i),
      'every queue consumed once, in order',
    );
  },
);

t.test('orderly with consumeThreadMin 1: a dropped waiting queue is skipped', async (t) => {
  const release: (() => void)[] = [];
  const started: number[] = [];
  const { clock, svc } = setup(
    (msgs) => {
      started.push(msgs[0]!.queueId);
      return new Promise((r) => release.push(() => r('SUCCESS')));
    },
    { consumeThreadMin: 1 },
  );
  const pqs: ProcessQueue[] = [];
  for (let q = 0; q < 3; q++) {
    const mq = messageQueue('T', 'broker-a', q);
    const pq = new ProcessQueue(clock.now());
    pq.markLocked(clock.now());
    pqs.push(pq);
    const m = { ...msg(0), queueId: q };
    svc.submitConsumeRequest([m], pq, mq, pq.putMessage([m]));
  }
  await new Promise((r) => setImmediate(r));
  t.same(started, [0]);
  t.equal(await svc.awaitConsumeIdle(pqs[1]!, 1000), true, 'a waiting queue runs no handler call');
  pqs[1]!.drop();
  release.shift()!();
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  t.same(started, [0, 2]);
  release.shift()!();
});
