import type { MessageExt } from './message.js';
import type { MessageQueue } from '../../protocol/index.js';

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
 * What the promise of an async handler may resolve to: the mode's status, or any string. TypeScript
 * widens a lone string literal returned from an async function whose contextual return type mixes
 * promise and non-promise members (`Status | PromiseLike<Status>`: the checker looks for the
 * awaited contextual type only when the return type is itself a promise), so with a strict promise
 * type `async (msgs) => { …; return 'CONSUME_SUCCESS'; }` would not compile. The value of an async
 * handler is therefore checked at run time, with the rule each handler type states; a synchronous
 * result is checked by the compiler.
 */
export type AsyncConsumeResult<Status extends string> = Status | undefined | (string & {});

/**
 * A concurrent handler. Anything other than CONSUME_SUCCESS (undefined, another string, a throw, a
 * rejected promise) counts as RECONSUME_LATER, as Java treats null and exceptions.
 */
export type MessageListenerConcurrently = (
  msgs: MessageExt[],
  context: ConsumeConcurrentlyContext,
) => ConsumeConcurrentlyStatus | undefined | PromiseLike<AsyncConsumeResult<ConsumeConcurrentlyStatus>>;

/**
 * An orderly handler; anything but SUCCESS/COMMIT (or ROLLBACK with autoCommit off), another string
 * included, suspends the queue.
 */
export type MessageListenerOrderly = (
  msgs: MessageExt[],
  context: ConsumeOrderlyContext,
) => ConsumeOrderlyStatus | undefined | PromiseLike<AsyncConsumeResult<ConsumeOrderlyStatus>>;

export type MessageListener = MessageListenerConcurrently | MessageListenerOrderly;


export function isThenable<T>(v: unknown): v is PromiseLike<T> {
  return v !== null && typeof v === 'object' && typeof (v as { then?: unknown }).then === 'function';
}
