import { ConsumerOptionError } from '../errors.js';
import { optionValidator } from '../../validate.js';

/**
 * The push consumer in POP mode (Java 5.x's DefaultMQPushConsumer with clientRebalance=false):
 * every rebalance asks a broker of the topic QUERY_ASSIGNMENT; when the group was switched to POP
 * for the topic (SET_MESSAGE_REQUEST_MODE, `mqadmin setConsumeMode`), the consumer pops from the
 * queues assigned (queueId −1: all of a broker's) instead of pulling them, acks what the handler
 * consumed and moves what it did not back by CHANGE_INVISIBLETIME, so it never pulls queues the
 * broker hands out by pop. PULL assignments go on with the client's own rebalance.
 */
export interface PopConsumeOptions {
  /**
   * false: ask the broker how to consume (QUERY_ASSIGNMENT; 5.x brokers may then assign POP), as
   * Java's setClientRebalance(false).
   * @default true (client rebalance, PULL only)
   */
  clientRebalance?: boolean;
  /**
   * POP invisible time, in milliseconds; outside 5 s–300 s it is 60 s, as Java's.
   * @default 60000
   */
  popInvisibleTimeMs?: number;
  /**
   * Most un-acked messages per popped queue before the next pop waits 50 ms.
   * @default 96
   */
  popThresholdForQueue?: number;
  /**
   * Messages per pop, 1–32.
   * @default 32
   */
  popBatchNums?: number;
}

export interface ResolvedPopConsumeOptions {
  clientRebalance: boolean;
  popInvisibleTimeMs: number;
  popThresholdForQueue: number;
  popBatchNums: number;
}

/** "must be an integer in [1, 32], got x". */
const check = optionValidator(ConsumerOptionError);

export function resolvePopConsumeOptions(o: PopConsumeOptions): ResolvedPopConsumeOptions {
  const it = o.popInvisibleTimeMs ?? 60_000;
  if (!Number.isInteger(it)) throw check.error('popInvisibleTimeMs', `must be an integer, got ${String(it)}`);
  const threshold = check.intIn('popThresholdForQueue', o.popThresholdForQueue ?? 96, 1, 65535);
  const batch = check.intIn('popBatchNums', o.popBatchNums ?? 32, 1, 32);
  return {
    clientRebalance: o.clientRebalance ?? true,
    // DefaultMQPushConsumerImpl#popMessage: a value outside 5–300 s falls back to 60 s
    popInvisibleTimeMs: it < 5000 || it > 300_000 ? 60_000 : it,
    popThresholdForQueue: threshold,
    popBatchNums: batch,
  };
}
