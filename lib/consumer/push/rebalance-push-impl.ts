import createDebug from '../../debug.js';
import type { ClockTimer } from '../../clock.js';
import { queueKey } from '../../../protocol/internal.js';
import type { MessageQueue } from '../../../protocol/index.js';
import type { ConsumerConfig } from '../core/consumer-config.js';
import type { ProcessQueue } from '../core/process-queue.js';
import { RebalanceImpl, type RebalanceBaseHost } from '../core/rebalance-impl.js';

const log = createDebug('rocketwire:consumer');

/** Java's unlockDelayTimeMills: a queue removed with messages still cached is unlocked this much later. */
export const UNLOCK_DELAY_TIME_MS = 20_000;
/**
 * How long the removal of an orderly queue waits for the handler call in flight on it (Java's
 * `consumeLock.tryLock(1000, ms)` in RebalancePushImpl.removeUnnecessaryMessageQueue).
 */
export const CONSUME_LOCK_WAIT_MS = 1000;

/** What the push consumer's rebalance needs from the consumer. */
export interface RebalanceHost extends RebalanceBaseHost {
  readonly config: ConsumerConfig;
  lockBatch(brokerName: string, mqs: MessageQueue[]): Promise<MessageQueue[]>;
  /**
   * Orderly: whether the broker group has a master in the route now (locks live on the master only).
   * Absent, every lock is treated as held.
   */
  hasMaster?: ((brokerName: string) => boolean) | undefined;
  unlockBatch(brokerName: string, mqs: MessageQueue[], oneway: boolean): Promise<void>;
  /**
   * The broker that holds `mq`'s lock: a static topic's logic queue is locked at the broker leading it
   * (static-topic.ts). Absent, the queue's own broker name.
   */
  brokerOf?: ((mq: MessageQueue) => string) | undefined;
  /** A round changed the topic's queues (the 'rebalance' event). */
  messageQueueChanged(topic: string): Promise<void>;
  /** After a round that changed queues: new subVersions, per-queue limits, one heartbeat; awaited before the round's new pulls. */
  roundChanged(topics: string[]): Promise<void>;
  /**
   * Orderly: resolves true once no consume run owns the queue (at once when none does), false when
   * `timeoutMs` passes on the clock first.
   */
  awaitConsumeIdle(pq: ProcessQueue, timeoutMs: number): Promise<boolean>;
  /** 5.x clientRebalance=false: how the broker says the group consumes the topic (QUERY_ASSIGNMENT); null when it did not say. */
  serverAssignment?: ((topic: string) => Promise<'POP' | 'PULL' | null>) | undefined;
}

/**
 * The push consumer's rebalance (Java's RebalancePushImpl): RebalanceImpl plus, for orderly
 * clustering, the broker locks of the queues held (taken before a queue's first pull, renewed by
 * lockAll, released on removal and at shutdown), and the topics a 5.x broker hands out by POP.
 */
export class RebalancePushImpl extends RebalanceImpl<RebalanceHost> {
  /** Delayed oneway unlocks of removed orderly queues (timer → queue), flushed at shutdown. */
  private readonly pendingUnlocks = new Map<ClockTimer, MessageQueue>();

  private get orderlyClustering(): boolean {
    return this.host.config.orderly && this.host.config.messageModel === 'CLUSTERING';
  }

  // A topic the broker hands out by POP is popped (PopConsumeService) and none of its queues is
  // pulled, so the consumer never mixes pull and pop in a group the broker switched.
  protected override async handedOutByPop(topic: string): Promise<boolean> {
    return this.host.serverAssignment !== undefined && (await this.host.serverAssignment(topic)) === 'POP';
  }

  protected override async admit(mq: MessageQueue): Promise<boolean> {
    if (!this.orderlyClustering || (await this.lock(mq))) return true;
    log('rebalance: lock of %o not granted, skipping it this round', mq);
    return false;
  }

  protected override admitted(pq: ProcessQueue): void {
    if (this.orderlyClustering) pq.markLocked(this.host.config.clock.now());
  }

  protected override afterRound(): void {
    if (this.host.config.orderly) this.releaseLocksWithoutMaster();
  }

  /**
   * Forgets a queue: persist its offset (oneway), drop it from the offset table and, for orderly
   * clustering, unlock it (later when messages are still cached). An orderly queue whose handler call
   * does not end within 1 s is not removed: it stays dropped in the table (neither consumed nor pulled,
   * its offset kept) until a later rebalance removes it, as Java's removeUnnecessaryMessageQueue leaves it.
   */
  override async removeUnnecessaryMessageQueue(mq: MessageQueue, pq: ProcessQueue): Promise<boolean> {
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
          this.host.unlockBatch(this.brokerOf(mq), [mq], true).catch(() => undefined);
        }, UNLOCK_DELAY_TIME_MS);
        this.pendingUnlocks.set(t, mq);
      } else {
        await this.host.unlockBatch(this.brokerOf(mq), [mq], true).catch(() => undefined);
      }
      return true;
    }
    offsetStore.removeOffset(mq);
    return true;
  }

  private async lock(mq: MessageQueue): Promise<boolean> {
    try {
      const granted = await this.host.lockBatch(this.brokerOf(mq), [mq]);
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
      const brokerName = this.brokerOf(e.mq);
      let list = m.get(brokerName);
      if (!list) m.set(brokerName, (list = []));
      list.push(e);
    }
    return m;
  }

  private brokerOf(mq: MessageQueue): string {
    return this.host.brokerOf?.(mq) ?? mq.brokerName;
  }

  /** Orderly: one queue's lock was granted again outside lockAll (the consume service relocked it). */
  lockGranted(mq: MessageQueue): void {
    this.processQueueTable.get(queueKey(mq))?.pq.markLocked(this.host.config.clock.now());
  }

  override async shutdown(): Promise<void> {
    await super.shutdown();
    // Unlock now what was waiting for its delayed unlock, so no lock outlives this consumer.
    const pending = [...this.pendingUnlocks];
    this.pendingUnlocks.clear();
    await Promise.all(
      pending.map(([t, mq]) => {
        this.host.config.clock.clearTimeout(t);
        return this.host.unlockBatch(this.brokerOf(mq), [mq], true).catch(() => undefined);
      }),
    );
  }
}
