// The rebalance as Java's. An orderly queue whose removal gives up (its
// handler call did not end within 1 s) stays dropped; a round that did not balance is retried after
// 1 s (5.x RebalanceService), and a suspended consumer does not rebalance on its period.
import t from 'tap';
import { ManualClock } from '../../lib/clock.js';
import {
  messageQueue,
  RemoteBrokerOffsetStore,
  resolveConsumerOptions,
  type MessageQueue,
} from '../../lib/consumer/index.js';
import { RebalancePushImpl } from '../../lib/consumer/push/rebalance-push-impl.js';
import {
  buildSubscriptionData,
  createRequest,
  encodeLockBatchBody,
  RequestCode,
  type SubscriptionData,
} from '../../protocol/index.js';
import { queueKey } from '../../protocol/internal.js';
import { clockedConsumer } from './broker-spy.js';
import { until } from './helpers.js';

/** A rebalance over a scripted group: `cids` are the group's members, `idle` answers the 1 s consume-lock wait. */
function scripted(opts: { orderly?: boolean } = {}) {
  const clock = new ManualClock();
  const config = resolveConsumerOptions({
    consumerGroup: 'g',
    namesrvAddr: '127.0.0.1:1',
    orderly: opts.orderly ?? true,
    clock,
  });
  const persisted: string[] = [];
  const offsetStore = new RemoteBrokerOffsetStore({
    queryConsumerOffset: async () => 5,
    updateConsumerOffsetOneway: async (mq) => {
      persisted.push(queueKey(mq));
    },
  });
  const queues = [messageQueue('T', 'broker-a', 0), messageQueue('T', 'broker-a', 1)];
  const subs = new Map<string, SubscriptionData>([['T', buildSubscriptionData('T', '*', 0)]]);
  const state = {
    cids: ['a'],
    idle: true,
    grant: (_mq: MessageQueue) => true,
    unlocked: [] as string[],
    locked: [] as string[],
    master: true,
    lockFails: false,
  };
  const rebalance = new RebalancePushImpl({
    config,
    clientId: 'a',
    offsetStore,
    subscriptionTable: () => subs,
    subscribeQueues: async () => queues,
    consumerIdList: async () => state.cids,
    computePullFromWhere: async () => 0,
    lockBatch: async (_b, mqs) => {
      if (state.lockFails) throw new Error('connect ECONNREFUSED');
      state.locked.push(...mqs.map(queueKey));
      return mqs.filter((mq) => state.grant(mq));
    },
    hasMaster: () => state.master,
    unlockBatch: async (_b, mqs) => {
      state.unlocked.push(...mqs.map(queueKey));
    },
    dispatchPullRequests: () => undefined,
    messageQueueChanged: async () => undefined,
    roundChanged: async () => undefined,
    awaitConsumeIdle: async () => state.idle,
  });
  const entry = (q: number) => rebalance.processQueueTable.get(queueKey(queues[q]!));
  return { clock, rebalance, state, entry, offsetStore, queues };
}

t.test(
  'orderly removal that gives up after 1 s leaves the queue dropped in the table; a later round removes it',
  async (t) => {
    const s = scripted();
    t.equal(await s.rebalance.doRebalance(), true);
    t.equal(s.rebalance.processQueueTable.size, 2);
    s.offsetStore.updateOffset(s.queues[1]!, 9, true);
    // A second member arrives: queue 1 goes to it, but its handler call does not end within 1 s.
    s.state.cids = ['a', 'b'];
    s.state.idle = false;
    t.equal(await s.rebalance.doRebalance(), true, 'what this consumer works on (queue 0) is its assignment');
    const pq = s.entry(1)?.pq;
    t.ok(pq, 'still in the table');
    t.equal(
      pq!.dropped,
      true,
      'and dropped: neither consumed nor pulled (before: held again, after its offset was removed)',
    );
    t.equal(pq!.tryUnlockTimes, 1);
    t.same(s.state.unlocked, [], 'not unlocked');
    t.equal(s.offsetStore.readMemory(s.queues[1]!), 9, 'its offset is kept while it is not removed');
    s.state.locked.length = 0;
    await s.rebalance.lockAll();
    t.same(
      s.state.locked,
      [queueKey(s.queues[0]!)],
      'the lock renewal leaves the dropped queue to its new owner (5.x)',
    );
    s.state.idle = true;
    await s.rebalance.doRebalance();
    t.equal(s.entry(1), undefined, 'removed once the call ended');
    t.equal(pq!.lifecycle, 'removed');
    t.same(s.state.unlocked, [queueKey(s.queues[1]!)]);
    t.equal(s.offsetStore.readMemory(s.queues[1]!), -1);
  },
);

t.test(
  'a master that fails to renew the locks or leaves the route: its orderly queues are not consumed until locked again',
  async (t) => {
    // A restarted master has an empty lock table and grants the queue to whoever asks first, so a
    // consumer that went on trusting its old grant consumed one queue beside its new owner (real
    // master+slave cluster, CI). Java keeps the local lock for 30 s after the last grant.
    const s = scripted();
    t.equal(await s.rebalance.doRebalance(), true);
    t.ok(s.entry(0)!.pq.locked && s.entry(1)!.pq.locked, 'both queues locked by the rebalance');
    s.state.lockFails = true;
    await s.rebalance.lockAll();
    t.same(
      [s.entry(0)!.pq.locked, s.entry(1)!.pq.locked],
      [false, false],
      'a renewal that failed leaves the queues unlocked',
    );
    s.state.lockFails = false;
    await s.rebalance.lockAll();
    t.same([s.entry(0)!.pq.locked, s.entry(1)!.pq.locked], [true, true], 'granted again once the master answers');
    s.state.master = false;
    await s.rebalance.doRebalance();
    t.same(
      [s.entry(0)!.pq.locked, s.entry(1)!.pq.locked],
      [false, false],
      'a round that finds no master in the route unlocks its queues',
    );
    t.ok(s.entry(0) && s.entry(1), 'and keeps them assigned');
  },
);

t.test('a round whose lock was refused did not balance; once granted, it did', async (t) => {
  const s = scripted();
  s.state.grant = (mq) => mq.queueId === 0;
  t.equal(await s.rebalance.doRebalance(), false, 'queue 1 assigned but not worked on');
  t.ok(s.entry(0) && !s.entry(1));
  s.state.grant = () => true;
  t.equal(await s.rebalance.doRebalance(), true);
  t.ok(s.entry(1));
});

t.test(
  'an unbalanced round is retried after 1 s of the clock, a balanced one after 20 s (5.x RebalanceService)',
  async (t) => {
    let otherLock!: () => Promise<unknown>;
    const s = await clockedConsumer(
      t,
      {
        orderly: true,
        queues: 1,
        beforeStart: async ({ broker, probe, topic, group }) => {
          // Another member holds the queue's lock, so this consumer's first round cannot take it.
          const lock = (code: number) =>
            probe.invoke(
              broker.broker,
              createRequest(code, {
                body: encodeLockBatchBody({
                  consumerGroup: group,
                  clientId: 'other@1',
                  mqSet: [messageQueue(topic, 'broker-a', 0)],
                }),
              }),
              { timeoutMs: 3000 },
            );
          await lock(RequestCode.LOCK_BATCH_MQ);
          otherLock = () => lock(RequestCode.UNLOCK_BATCH_MQ);
        },
      },
      () => 'SUCCESS',
    );
    const rounds = () => s.count(RequestCode.GET_CONSUMER_LIST_BY_GROUP, (x) => x.ext.consumerGroup === s.group);
    t.notOk(
      s.consumer.assignment().some((q) => q.topic === s.topic),
      'the lock was refused',
    );
    const r0 = rounds();
    s.clock.advance(999);
    await s.quiet();
    t.equal(rounds(), r0, 'nothing at 999 ms');
    s.clock.advance(1);
    await until(() => rounds() > r0, 'a round at 1 s (before: at 20 s)');
    await s.quiet();
    t.notOk(
      s.consumer.assignment().some((q) => q.topic === s.topic),
      'still refused',
    );
    await otherLock();
    const r1 = rounds();
    s.clock.advance(1000);
    await until(
      () => s.consumer.assignment().some((q) => q.topic === s.topic),
      'the queue taken at the next 1 s retry',
    );
    await s.quiet();
    const r2 = rounds();
    t.ok(r2 > r1);
    s.clock.advance(19_999);
    await s.quiet();
    t.equal(rounds(), r2, 'balanced: nothing for 20 s');
    s.clock.advance(1);
    await until(() => rounds() > r2, 'the next round at 20 s');
  },
);

t.test('no periodic rebalance while suspended; resume() rebalances at once', async (t) => {
  const s = await clockedConsumer(t, {}, () => 'CONSUME_SUCCESS');
  const rounds = () => s.count(RequestCode.GET_CONSUMER_LIST_BY_GROUP, (x) => x.ext.consumerGroup === s.group);
  s.consumer.suspend();
  const r0 = rounds();
  for (let i = 0; i < 3; i++) {
    s.clock.advance(20_000);
    await s.quiet();
  }
  t.equal(rounds(), r0, 'nothing in 60 s while suspended (before: one round every 20 s)');
  s.consumer.resume();
  await until(() => rounds() > r0, 'resume() rebalances');
});

/** Lets every promise the rebalance has queued run (its scripted host answers at once). */
async function drain(): Promise<void> {
  for (let i = 0; i < 50; i++) await new Promise((r) => setImmediate(r));
}

t.test(
  'a round the broker asks for (NOTIFY_CONSUMER_IDS_CHANGED) starts 1 s after the previous round ended, as 5.x RebalanceService; a storm of them is one round',
  async (t) => {
    const s = scripted({ orderly: false });
    await s.rebalance.doRebalance();
    t.equal(s.rebalance.counts.runs, 1);
    const notified = [s.rebalance.doRebalance(true), s.rebalance.doRebalance(true), s.rebalance.doRebalance(true)];
    await drain();
    t.equal(s.rebalance.counts.runs, 1, 'no round at once (before: one per notification, as soon as the last ended)');
    s.clock.advance(999);
    await drain();
    t.equal(s.rebalance.counts.runs, 1, 'not before 1 s');
    s.clock.advance(1);
    await Promise.all(notified);
    t.equal(s.rebalance.counts.runs, 2, 'one round for the three notifications');

    // a request that may not wait (a new broker connection, resume) starts a waiting round at once
    const waiting = s.rebalance.doRebalance(true);
    await drain();
    t.equal(s.rebalance.counts.runs, 2);
    await s.rebalance.doRebalance();
    await waiting;
    t.equal(s.rebalance.counts.runs, 3, 'the waiting round ran at once and covered both');

    // shutdown does not wait for a spaced round
    const pending = s.rebalance.doRebalance(true);
    await drain();
    await s.rebalance.shutdown();
    await pending;
    t.equal(s.rebalance.counts.runs, 3, 'no round after shutdown');
  },
);
