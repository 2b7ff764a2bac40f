import createDebug from '../../debug.js';
import type { ClockTimer } from '../../clock.js';
import { compareMessageQueue, isRetryTopic, queueKey } from '../../../protocol/internal.js';
import type { MessageQueue } from '../../../protocol/index.js';
import type { OffsetStore } from './offset-store.js';
import type { PushConsumerConfig } from './options.js';
import { ProcessQueue } from './process-queue.js';
import { newPullRequest, type PullRequest } from './pull-request.js';
import type { SubscriptionData } from './subscription.js';

const log = createDebug('rocketwire:consumer');

/** Java's unlockDelayTimeMills: a queue removed with messages still cached is unlocked this much later. */
export const UNLOCK_DELAY_TIME_MS = 20_000;
/**
 * How long the removal of an orderly queue waits for the handler call in flight on it (Java's
 * `consumeLock.tryLock(1000, ms)` in RebalancePushImpl.removeUnnecessaryMessageQueue).
 */
export const CONSUME_LOCK_WAIT_MS = 1000;

/** What the rebalance needs from the consumer. */
export interface RebalanceHost {
  readonly config: PushConsumerConfig;
  readonly clientId: string;
  readonly offsetStore: OffsetStore;
  subscriptionTable(): Map<string, SubscriptionData>;
  /** Readable queues of the topic from its route; null when there is no route. */
  subscribeQueues(topic: string): Promise<MessageQueue[] | null>;
  /** Client ids of the group from a broker of the topic; null when unknown. */
  consumerIdList(topic: string): Promise<string[] | null>;
  /** §9.5; a negative result means "skip this queue this round". */
  computePullFromWhere(mq: MessageQueue): Promise<number>;
  lockBatch(brokerName: string, mqs: MessageQueue[]): Promise<MessageQueue[]>;
  /**
   * Orderly: whether the broker group has a master in the route now (locks live on the master only).
   * Absent, every lock is treated as held.
   */
  hasMaster?: ((brokerName: string) => boolean) | undefined;
  unlockBatch(brokerName: string, mqs: MessageQueue[], oneway: boolean): Promise<void>;
  dispatchPullRequests(prs: PullRequest[]): void;
  /** New subVersion, per-queue limits, heartbeat; awaited before the new queues' first pulls. */
  messageQueueChanged(topic: string): Promise<void>;
  /**
   * Orderly: resolves true once no consume run owns the queue (at once when none does), false when
   * `timeoutMs` passes on the clock first.
   */
  awaitConsumeIdle(pq: ProcessQueue, timeoutMs: number): Promise<boolean>;
  /** 5.x clientRebalance=false: how the broker says the group consumes the topic (QUERY_ASSIGNMENT); null when it did not say. */
  serverAssignment?: ((topic: string) => Promise<'POP' | 'PULL' | null>) | undefined;
}

/**
 * The push consumer's rebalance (RebalanceImpl + RebalancePushImpl): owns the table of held queues and
 * their process queues, computes the assignment per subscribed topic and applies the difference.
 */
export class RebalancePushImpl {
  readonly processQueueTable = new Map<string, { mq: MessageQueue; pq: ProcessQueue }>();
  private running: Promise<boolean> | null = null;
  private again = false;
  /**
   * Rounds run (rebalanceOnce) and rounds asked for (doRebalance calls): a storm of
   * NOTIFY_CONSUMER_IDS_CHANGED asks many times, runs one round at a time and at most one more.
   */
  readonly counts = { requested: 0, runs: 0 };
  /** Delayed oneway unlocks of removed orderly queues (timer → queue), flushed at shutdown. */
  private readonly pendingUnlocks = new Map<ClockTimer, MessageQueue>();
  private stopped = false;

  constructor(private readonly host: RebalanceHost) {}

  /**
   * Runs a rebalance now; calls during a run coalesce into one more run after it. Resolves whether the
   * last round balanced (5.x RebalanceImpl.doRebalance): every topic's assignment is what this
   * consumer now works on. A lock refused, a start offset missing or a removal that gave up leaves it
   * unbalanced, and the periodic task then tries again after 1 s instead of 20 s.
   */
  doRebalance(): Promise<boolean> {
    if (this.stopped) return Promise.resolve(true);
    this.counts.requested++;
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      let balanced = true;
      try {
        do {
          this.again = false;
          this.counts.runs++;
          balanced = await this.rebalanceOnce();
        } while (this.again && !this.stopped);
      } finally {
        this.running = null;
      }
      return balanced;
    })();
    return this.running;
  }

  private async rebalanceOnce(): Promise<boolean> {
    const subs = this.host.subscriptionTable();
    let balanced = true;
    for (const topic of subs.keys()) {
      if (this.stopped) return balanced;
      try {
        if (!(await this.rebalanceByTopic(topic))) balanced = false;
      } catch (err) {
        log('rebalance of %s failed: %s', topic, (err as Error).message);
        // As Java, a failure on the retry topic (often not created yet) does not count.
        if (!isRetryTopic(topic)) balanced = false;
      }
    }
    if (this.host.config.orderly) this.releaseLocksWithoutMaster();
    // Drop queues of topics no longer subscribed.
    for (const [key, { mq, pq }] of this.processQueueTable) {
      if (!subs.has(mq.topic)) {
        pq.drop();
        this.processQueueTable.delete(key);
        pq.markRemoved();
        log('dropped %o: topic no longer subscribed', mq);
      }
    }
    return balanced;
  }

  /**
   * False when the topic did not balance. No route or no consumer list counts as balanced, as in Java
   * (there is nothing to work on until the next period).
   */
  private async rebalanceByTopic(topic: string): Promise<boolean> {
    const { config } = this.host;
    // A topic the broker hands out by POP is popped (PopConsumeService) and none of its queues is
    // pulled, so the consumer never mixes pull and pop in a group the broker switched.
    if (this.host.serverAssignment && !isRetryTopic(topic) && (await this.host.serverAssignment(topic)) === 'POP') {
      await this.updateProcessQueueTableInRebalance(topic, []);
      return true;
    }
    const mqSet = await this.host.subscribeQueues(topic);
    if (mqSet === null) {
      log('rebalance: no route for %s yet', topic);
      return true;
    }
    let assigned: MessageQueue[];
    if (config.messageModel === 'BROADCASTING') {
      assigned = mqSet;
    } else {
      const cidAll = await this.host.consumerIdList(topic);
      if (cidAll === null || cidAll.length === 0) {
        log('rebalance: no consumer id list for %s/%s', config.consumerGroup, topic);
        return true;
      }
      const mqAll = mqSet.slice().sort(compareMessageQueue);
      const cids = cidAll.slice().sort(compareJavaStrings);
      try {
        assigned = config.allocateStrategy.allocate(config.consumerGroup, this.host.clientId, mqAll, cids);
      } catch (err) {
        log('allocate strategy %s failed: %s', config.allocateStrategy.name, (err as Error).message);
        return false;
      }
    }
    const { changed, prs } = await this.updateProcessQueueTableInRebalance(topic, assigned);
    if (changed) {
      log('rebalance changed %s: now %d queues', topic, assigned.length);
      // The heartbeat carrying the new subVersion goes out before the new queues' first pulls, so the
      // broker does not answer them SUBSCRIPTION_NOT_LATEST (Java 4.9 pulls first and retries 1 s later).
      await this.host
        .messageQueueChanged(topic)
        .catch((err: unknown) => log('messageQueueChanged failed: %s', (err as Error).message));
    }
    if (prs.length > 0 && !this.stopped) this.host.dispatchPullRequests(prs);
    const working = new Set<string>();
    for (const [key, { mq, pq }] of this.processQueueTable) if (mq.topic === topic && !pq.dropped) working.add(key);
    return working.size === assigned.length && assigned.every((mq) => working.has(queueKey(mq)));
  }

  private async updateProcessQueueTableInRebalance(
    topic: string,
    mqSet: MessageQueue[],
  ): Promise<{ changed: boolean; prs: PullRequest[] }> {
    const { config } = this.host;
    const now = config.clock.now();
    const wanted = new Map(mqSet.map((mq) => [queueKey(mq), mq]));
    let changed = false;
    for (const [key, { mq, pq }] of this.processQueueTable) {
      if (mq.topic !== topic) continue;
      const expired = !wanted.has(key) ? false : pq.isPullExpired(now);
      if (!wanted.has(key) || expired) {
        pq.drop();
        if (await this.removeUnnecessaryMessageQueue(mq, pq)) {
          this.processQueueTable.delete(key);
          pq.markRemoved();
          changed = true;
          log('rebalance removed %o%s', mq, expired ? ' (pull expired)' : '');
        }
      }
    }
    const orderly = config.orderly && config.messageModel === 'CLUSTERING';
    const prs: PullRequest[] = [];
    for (const [key, mq] of wanted) {
      if (this.processQueueTable.has(key)) continue;
      if (orderly && !(await this.lock(mq))) {
        log('rebalance: lock of %o not granted, skipping it this round', mq);
        continue;
      }
      this.host.offsetStore.removeOffset(mq);
      const pq = new ProcessQueue(now);
      const nextOffset = await this.host.computePullFromWhere(mq);
      if (nextOffset < 0) {
        log('rebalance: no start offset for %o, skipping it this round', mq);
        continue;
      }
      if (this.processQueueTable.has(key)) continue;
      if (orderly) pq.markLocked(config.clock.now());
      this.processQueueTable.set(key, { mq, pq });
      const pr = newPullRequest(mq, pq, nextOffset);
      prs.push(pr);
      changed = true;
      log('rebalance added %o from offset %d', mq, nextOffset);
    }
    return { changed, prs };
  }

  /**
   * Forgets a queue: persist its offset (oneway), drop it from the offset table and, for orderly
   * clustering, unlock it (later when messages are still cached). An orderly queue whose handler call
   * does not end within 1 s is not removed: it stays dropped in the table (neither consumed nor pulled,
   * its offset kept) until a later rebalance removes it, as Java's removeUnnecessaryMessageQueue leaves it.
   */
  async removeUnnecessaryMessageQueue(mq: MessageQueue, pq: ProcessQueue): Promise<boolean> {
    const { config, offsetStore } = this.host;
    await offsetStore.persist(mq);
    if (config.orderly && config.messageModel === 'CLUSTERING') {
      if (!(await this.host.awaitConsumeIdle(pq, CONSUME_LOCK_WAIT_MS))) {
        pq.markUnlockFailed();
        log('%o is still being consumed; it stays dropped until a later rebalance (%d tries)', mq, pq.tryUnlockTimes);
        return false;
      }
      // 5.x removes the offset only once the queue is really removed (4.9 before the wait).
      offsetStore.removeOffset(mq);
      pq.markUnlocked();
      if (pq.msgCount > 0) {
        const t = config.clock.setTimeout(() => {
          this.pendingUnlocks.delete(t);
          this.host.unlockBatch(mq.brokerName, [mq], true).catch(() => undefined);
        }, UNLOCK_DELAY_TIME_MS);
        this.pendingUnlocks.set(t, mq);
      } else {
        await this.host.unlockBatch(mq.brokerName, [mq], true).catch(() => undefined);
      }
      return true;
    }
    offsetStore.removeOffset(mq);
    return true;
  }

  /** Removes one queue at once (OFFSET_ILLEGAL handling, offset reset). */
  async removeProcessQueue(mq: MessageQueue): Promise<void> {
    const key = queueKey(mq);
    const entry = this.processQueueTable.get(key);
    if (!entry) return;
    this.processQueueTable.delete(key);
    entry.pq.drop();
    entry.pq.markRemoved();
    await this.removeUnnecessaryMessageQueue(mq, entry.pq);
  }

  private async lock(mq: MessageQueue): Promise<boolean> {
    try {
      const granted = await this.host.lockBatch(mq.brokerName, [mq]);
      return granted.some((g) => queueKey(g) === queueKey(mq));
    } catch (err) {
      log('LOCK_BATCH_MQ %o failed: %s', mq, (err as Error).message);
      return false;
    }
  }

  /** Orderly: one LOCK_BATCH_MQ per broker for every held queue; granted ones get a fresh timestamp. */
  async lockAll(): Promise<void> {
    // 5.x skips dropped queues: one whose removal gave up stays in the table, and renewing its lock
    // would keep the member it now belongs to from taking it.
    const byBroker = this.byBroker(true);
    await Promise.all(
      [...byBroker].map(async ([brokerName, entries]) => {
        let granted: Set<string>;
        try {
          granted = new Set(
            (
              await this.host.lockBatch(
                brokerName,
                entries.map((e) => e.mq),
              )
            ).map(queueKey),
          );
        } catch (err) {
          // Java keeps the local locks when a renewal fails, for up to 30 s after the last grant. But a
          // master that fails to answer may be restarting, and a restarted master has an empty lock
          // table: it grants the queue to the next member that asks while this one, still trusting
          // its old grant, goes on consuming (seen on a real master+slave cluster: one queue in two
          // consumers' handlers). So a lock that could not be renewed is not consumed under until the
          // broker grants it again (the orderly service asks again at once).
          log(
            'LOCK_BATCH_MQ to %s failed: %s; its queues are not consumed until locked again',
            brokerName,
            (err as Error).message,
          );
          for (const { pq } of entries) pq.markUnlocked();
          return;
        }
        const now = this.host.config.clock.now();
        for (const { mq, pq } of entries) {
          if (granted.has(queueKey(mq))) {
            if (!pq.locked) log('lock of %o granted again', mq);
            pq.markLocked(now);
          } else {
            pq.markUnlocked();
          }
        }
      }),
    );
  }

  /**
   * Orderly: a broker group whose master has left the route (killed, restarting) keeps no lock this
   * consumer can trust: the master that comes back starts with an empty lock table. Its queues stop
   * being consumed until a lock on the master that returns is granted again (see lockAll).
   */
  private releaseLocksWithoutMaster(): void {
    const hasMaster = this.host.hasMaster;
    if (!hasMaster) return;
    for (const [brokerName, entries] of this.byBroker()) {
      if (hasMaster(brokerName)) continue;
      for (const { mq, pq } of entries) {
        if (!pq.locked) continue;
        log('%o: the master of %s left the route; its lock is no longer trusted', mq, brokerName);
        pq.markUnlocked();
      }
    }
  }

  /** Shutdown: synchronous UNLOCK_BATCH_MQ for every held queue. */
  async unlockAll(): Promise<void> {
    await Promise.all(
      [...this.byBroker()].map(([brokerName, entries]) =>
        this.host
          .unlockBatch(
            brokerName,
            entries.map((e) => e.mq),
            false,
          )
          .then(
            () => {
              for (const e of entries) e.pq.markUnlocked();
            },
            (err: unknown) => log('UNLOCK_BATCH_MQ to %s failed: %s', brokerName, (err as Error).message),
          ),
      ),
    );
  }

  private byBroker(skipDropped = false): Map<string, { mq: MessageQueue; pq: ProcessQueue }[]> {
    const m = new Map<string, { mq: MessageQueue; pq: ProcessQueue }[]>();
    for (const e of this.processQueueTable.values()) {
      if (skipDropped && e.pq.dropped) continue;
      let list = m.get(e.mq.brokerName);
      if (!list) m.set(e.mq.brokerName, (list = []));
      list.push(e);
    }
    return m;
  }

  /** Drops a held queue now (OFFSET_ILLEGAL, offset reset); its removal follows through removeProcessQueue. */
  dropProcessQueue(pq: ProcessQueue): void {
    pq.drop();
  }

  /** Orderly: one queue's lock was granted again outside lockAll (the consume service relocked it). */
  lockGranted(mq: MessageQueue): void {
    this.processQueueTable.get(queueKey(mq))?.pq.markLocked(this.host.config.clock.now());
  }

  /** Shutdown: every held queue is dropped, so nothing pulled or consumed after it counts. */
  dropAll(): void {
    for (const { pq } of this.processQueueTable.values()) pq.drop();
  }

  heldQueues(): MessageQueue[] {
    return [...this.processQueueTable.values()].map((e) => e.mq);
  }

  async shutdown(): Promise<void> {
    this.stopped = true;
    await this.running;
    // Unlock now what was waiting for its delayed unlock, so no lock outlives this consumer.
    const pending = [...this.pendingUnlocks];
    this.pendingUnlocks.clear();
    await Promise.all(
      pending.map(([t, mq]) => {
        this.host.config.clock.clearTimeout(t);
        return this.host.unlockBatch(mq.brokerName, [mq], true).catch(() => undefined);
      }),
    );
  }
}

/** Java string order (UTF-16 code units), as the client ids of a group are sorted. */
function compareJavaStrings(a: string, b: string): number {
  return a === b ? 0 : a < b ? -1 : 1;
}
