import type { MessageQueue } from '../../protocol/index.js';
import { javaStringHash } from '../../protocol/java-hash.js';
import type { Message } from './message.js';

/**
 * Picks the queue of an ordered send (MessageQueueSelector in Java).
 * @category Producing
 */
export type MessageQueueSelector = (queues: readonly MessageQueue[], msg: Message, arg: unknown) => MessageQueue;

/**
 * Selector that keeps messages with the same `arg` on one queue (Java's SelectMessageQueueByHash).
 * @category Producing
 */
export const selectMessageQueueByHash: MessageQueueSelector = (queues, _msg, arg) => {
  const h = Math.abs(javaStringHash(String(arg)));
  return queues[h % queues.length]!;
};

/**
 * Options of one send: which queue (a selector and its argument, or the queue itself) and its timeout.
 * @category Producing
 */
export interface SendOptions {
  /**
   * Ordered send: choose the queue from the topic's publish queues (one attempt, no retry elsewhere).
   * @default undefined (queues taken in turn, retried on another broker after a failure)
   */
  selector?: MessageQueueSelector;
  /**
   * Argument handed to the selector.
   * @default undefined
   */
  arg?: unknown;
  /**
   * Send to exactly this queue (one attempt).
   * @default undefined (the producer chooses)
   */
  queue?: MessageQueue;
  /**
   * Budget of this call including retries, in milliseconds.
   * @default the producer's sendMsgTimeoutMs
   */
  timeoutMs?: number;
}
