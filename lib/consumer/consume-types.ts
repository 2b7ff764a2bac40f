import type { MessageExt } from './message.js';
import type { MessageQueue } from './message-queue.js';

/** Results of a concurrent handler (ConsumeConcurrentlyStatus). */
export const ConsumeConcurrentlyStatus = {
  CONSUME_SUCCESS: 'CONSUME_SUCCESS',
  RECONSUME_LATER: 'RECONSUME_LATER',
} as const;
export type ConsumeConcurrentlyStatus = (typeof ConsumeConcurrentlyStatus)[keyof typeof ConsumeConcurrentlyStatus];

/** Results of an orderly handler (ConsumeOrderlyStatus); COMMIT/ROLLBACK only matter with autoCommit off. */
export const ConsumeOrderlyStatus = {
  SUCCESS: 'SUCCESS',
  SUSPEND_CURRENT_QUEUE_A_MOMENT: 'SUSPEND_CURRENT_QUEUE_A_MOMENT',
  COMMIT: 'COMMIT',
  ROLLBACK: 'ROLLBACK',
} as const;
export type ConsumeOrderlyStatus = (typeof ConsumeOrderlyStatus)[keyof typeof ConsumeOrderlyStatus];

/** Per-call context of a concurrent handler (ConsumeConcurrentlyContext). */
export interface ConsumeConcurrentlyContext {
  readonly messageQueue: MessageQueue;
  /**
   * −1: no retry, straight to the DLQ; 0 (default): the broker picks 3 + reconsumeTimes; >0: that delay level.
   */
  delayLevelWhenNextConsume: number;
  /** Index of the last message that succeeded when returning CONSUME_SUCCESS (default: all). */
  ackIndex: number;
}

/** Per-call context of an orderly handler (ConsumeOrderlyContext). */
export interface ConsumeOrderlyContext {
  readonly messageQueue: MessageQueue;
  autoCommit: boolean;
  /** Back-off after SUSPEND_CURRENT_QUEUE_A_MOMENT; −1 = the consumer's suspendCurrentQueueTimeMillis. */
  suspendCurrentQueueTimeMillis: number;
}

/**
 * A concurrent handler. Anything other than CONSUME_SUCCESS (undefined, a throw, a rejected promise)
 * counts as RECONSUME_LATER, as Java treats null and exceptions.
 */
export type MessageListenerConcurrently = (
  msgs: MessageExt[],
  context: ConsumeConcurrentlyContext,
) => ConsumeConcurrentlyStatus | undefined | PromiseLike<ConsumeConcurrentlyStatus | undefined>;

/** An orderly handler; anything but SUCCESS/COMMIT (or ROLLBACK with autoCommit off) suspends the queue. */
export type MessageListenerOrderly = (
  msgs: MessageExt[],
  context: ConsumeOrderlyContext,
) => ConsumeOrderlyStatus | undefined | PromiseLike<ConsumeOrderlyStatus | undefined>;

export type MessageListener = MessageListenerConcurrently | MessageListenerOrderly;


export function isThenable<T>(v: unknown): v is PromiseLike<T> {
  return v !== null && typeof v === 'object' && typeof (v as { then?: unknown }).then === 'function';
}
