import type { SubscriptionData } from '../../../protocol/internal.js';
import type { ProcessQueue } from './process-queue.js';

// The rows of ConsumerRunningInfo (GET_CONSUMER_RUNNING_INFO) that the push and lite pull consumers share.

/** ProcessQueue#fillProcessQueueInfo: a queue's row of ConsumerRunningInfo's mqTable. */
export function processQueueInfo(pq: ProcessQueue, commitOffset: number): Record<string, unknown> {
  return {
    cachedMsgCount: pq.msgCount,
    cachedMsgMaxOffset: pq.msgCount > 0 ? pq.queueOffsetMax : 0,
    cachedMsgMinOffset: pq.msgCount > 0 ? Math.max(0, pq.minOffset) : 0,
    cachedMsgSizeInMiB: Math.floor(pq.msgSize / (1024 * 1024)),
    commitOffset,
    droped: pq.dropped,
    lastConsumeTimestamp: pq.lastConsumeTimestamp,
    lastLockTimestamp: pq.lastLockTimestamp,
    lastPullTimestamp: pq.lastPullTimestamp,
    locked: pq.locked,
    transactionMsgCount: 0,
    transactionMsgMaxOffset: 0,
    transactionMsgMinOffset: 0,
    tryUnlockTimes: pq.tryUnlockTimes,
  };
}

/** A subscription as ConsumerRunningInfo's subscriptionSet lists it. */
export function subscriptionInfo(d: SubscriptionData): Record<string, unknown> {
  return {
    classFilterMode: d.classFilterMode,
    codeSet: d.codeSet,
    expressionType: d.expressionType,
    subString: d.subString,
    subVersion: d.subVersion,
    tagsSet: d.tagsSet,
    topic: d.topic,
  };
}
