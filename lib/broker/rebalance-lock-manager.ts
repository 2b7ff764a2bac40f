import { queueKey, type MessageQueue } from '../../protocol/internal.js';

interface LockEntry {
  clientId: string;
  lastUpdate: number;
}

/**
 * Orderly consumers' queue locks (RebalanceLockManager): per group, queue → holder. A lock is
 * granted to a free queue, renewed for its holder, and taken over once it has not been renewed
 * for `lockMaxLiveTimeMs` (Java's rocketmq.broker.rebalance.lockMaxLiveTime, 60 s).
 */
export class RebalanceLockManager {
  private readonly groups = new Map<string, Map<string, LockEntry>>();

  constructor(private readonly lockMaxLiveTimeMs = 60_000) {}

  /** Lock what can be locked for `clientId`; returns the queues now held by it, in request order. */
  tryLockBatch(group: string, mqs: readonly MessageQueue[], clientId: string, now: number): MessageQueue[] {
    let table = this.groups.get(group);
    if (!table) {
      table = new Map();
      this.groups.set(group, table);
    }
    const granted: MessageQueue[] = [];
    for (const mq of mqs) {
      const key = queueKey(mq);
      const e = table.get(key);
      if (!e || e.clientId === clientId || now - e.lastUpdate > this.lockMaxLiveTimeMs) {
        table.set(key, { clientId, lastUpdate: now });
        granted.push(mq);
      }
    }
    return granted;
  }

  /** Release the queues `clientId` holds; others' locks are left alone. */
  unlockBatch(group: string, mqs: readonly MessageQueue[], clientId: string): void {
    const table = this.groups.get(group);
    if (!table) return;
    for (const mq of mqs) {
      const key = queueKey(mq);
      if (table.get(key)?.clientId === clientId) table.delete(key);
    }
  }
}
