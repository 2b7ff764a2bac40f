import type { MessageExt } from './message.js';
import type { MessageQueue } from '../../../protocol/index.js';

/**
 * Results of a concurrent handler (ConsumeConcurrentlyStatus).
 * @category Consuming
 */
export const ConsumeConcurrentlyStatus = {
  CONSUME_SUCCESS: 'CONSUME_SUCCESS',
  RECONSUME_LATER: 'RECONSUME_LATER',
} as const;
/** @category Consuming */
export type ConsumeConcurrentlyStatus = (typeof ConsumeConcurrentlyStatus)[keyof typeof ConsumeConcurrentlyStatus];

/**
 * Results of an orderly handler (ConsumeOrderlyStatus); COMMIT/ROLLBACK only matter with autoCommit off.
 * @category Consuming
 */
export const ConsumeOrderlyStatus = {
  SUCCESS: 'SUCCESS',
  SUSPEND_CURRENT_QUEUE_A_MOMENT: 'SUSPEND_CURRENT_QUEUE_A_MOMENT',
  COMMIT: 'COMMIT',
  ROLLBACK: 'ROLLBACK',
} as const;
/** @category Consuming */
export type ConsumeOrderlyStatus = (typeof ConsumeOrderlyStatus)[keyof typeof ConsumeOrderlyStatus];

/**
 * Per-call context of a concurrent handler (ConsumeConcurrentlyContext).
 * @category Consuming
 */
export interface ConsumeConcurrentlyContext {
  /** The queue the messages come from. */
  readonly messageQueue: MessageQueue;
  /**
   * −1: no retry, straight to the DLQ; 0 (default): the broker picks 3 + reconsumeTimes; >0: that delay level.
   */
  delayLevelWhenNextConsume: number;
  /** Index of the last message that succeeded when returning CONSUME_SUCCESS (default: all). */
  ackIndex: number;
}

/**
 * Per-call context of an orderly handler (ConsumeOrderlyContext).
 * @category Consuming
 */
export interface ConsumeOrderlyContext {
  /** The queue the messages come from. */
  readonly messageQueue: MessageQueue;
  /**
   * true (default): the offset is committed after SUCCESS (COMMIT and ROLLBACK count as SUCCESS);
   * false: only after COMMIT, SUCCESS does not commit and ROLLBACK hands the messages over again.
   */
  autoCommit: boolean;
  /**
   * Back-off after SUSPEND_CURRENT_QUEUE_A_MOMENT (or a throw) for this call, in milliseconds, 10..30 000.
   * @default -1 (the consumer's suspendCurrentQueueTimeMs)
   */
  suspendCurrentQueueTimeMs: number;
  /**
   * Java's name of suspendCurrentQueueTimeMs (either may be set; the Ms one wins).
   * @deprecated use `suspendCurrentQueueTimeMs`
   */
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
export type AsyncConsumeResult<Status extends string> = Status | void | undefined | (string & {});

/**
 * A concurrent handler. Returning or resolving nothing, or CONSUME_SUCCESS, acknowledges the
 * messages (a deliberate departure from Java, where null means RECONSUME_LATER); a throw, a
 * rejection or RECONSUME_LATER retries them; any other value retries them too and is reported
 * (a warn line once per value and the consumer's 'handlerResultInvalid' event).
 * @category Consuming
 */
export type MessageListenerConcurrently = (
  msgs: MessageExt[],
  context: ConsumeConcurrentlyContext,
) => ConsumeConcurrentlyStatus | void | undefined | PromiseLike<AsyncConsumeResult<ConsumeConcurrentlyStatus>>;

/**
 * An orderly handler. Returning or resolving nothing is SUCCESS (Java: SUSPEND); a throw, a
 * rejection or SUSPEND_CURRENT_QUEUE_A_MOMENT suspends the queue and hands the messages over again
 * later; any other value suspends too and is reported as for a concurrent handler.
 * @category Consuming
 */
export type MessageListenerOrderly = (
  msgs: MessageExt[],
  context: ConsumeOrderlyContext,
) => ConsumeOrderlyStatus | void | undefined | PromiseLike<AsyncConsumeResult<ConsumeOrderlyStatus>>;

export type MessageListener = MessageListenerConcurrently | MessageListenerOrderly;

/**
 * The handler rule, one place for both modes. A handler that returns or resolves nothing
 * (`undefined`, or `null`) acknowledges: CONSUME_SUCCESS for a concurrent handler, SUCCESS for an
 * orderly one. This departs from Java on purpose (Java counts null as RECONSUME_LATER, orderly as
 * SUSPEND_CURRENT_QUEUE_A_MOMENT): a Node handler that finished without throwing has done its work,
 * as KafkaJS's and BullMQ's do. A status of the mode is taken as it is; anything else (a typo such
 * as 'CONSUME_SUCESS', a number, an object) is `invalid`: retried like RECONSUME_LATER / SUSPEND,
 * and reported by the caller (a warn line once per value, the 'handlerResultInvalid' event).
 * A throw or a rejection never reaches here: it is a retry.
 */
export function concurrentResult(value: unknown): { status: ConsumeConcurrentlyStatus; invalid: boolean } {
  if (value === undefined || value === null || value === ConsumeConcurrentlyStatus.CONSUME_SUCCESS) {
    return { status: ConsumeConcurrentlyStatus.CONSUME_SUCCESS, invalid: false };
  }
  return {
    status: ConsumeConcurrentlyStatus.RECONSUME_LATER,
    invalid: value !== ConsumeConcurrentlyStatus.RECONSUME_LATER,
  };
}

/** The orderly side of concurrentResult: nothing is SUCCESS; an unknown value suspends. */
export function orderlyResult(value: unknown): { status: ConsumeOrderlyStatus; invalid: boolean } {
  if (value === undefined || value === null) return { status: ConsumeOrderlyStatus.SUCCESS, invalid: false };
  if (typeof value === 'string' && Object.hasOwn(ConsumeOrderlyStatus, value))
    return { status: value as ConsumeOrderlyStatus, invalid: false };
  return { status: ConsumeOrderlyStatus.SUSPEND_CURRENT_QUEUE_A_MOMENT, invalid: true };
}

export function isThenable<T>(v: unknown): v is PromiseLike<T> {
  return v !== null && typeof v === 'object' && typeof (v as { then?: unknown }).then === 'function';
}
