import { compareMessageQueue, type MessageQueue } from '../../protocol/index.js';
import { resetOffsetKey } from '../client/message-queue.js';

/** A queue of a topic on one broker (protocol's MessageQueue): the unit of rebalance, pulling and offset commits. */
export type { MessageQueue } from '../../protocol/index.js';

/** A queue object whose keys are in Java's JSON order (`{"brokerName":…,"queueId":…,"topic":…}`). */
export function messageQueue(topic: string, brokerName: string, queueId: number): MessageQueue {
  // Key order matters: JSON.stringify keeps insertion order and Java writes keys sorted.
  return { brokerName, queueId, topic };
}

/**
 * A string usable as a Map key: lib/client's resetOffsetKey, which resetOffset relies on
 * ("@" cannot occur in a topic).
 */
export const queueKey: (mq: MessageQueue) => string = resetOffsetKey;

/** Java's MessageQueue.toString(), which is also the consistent-hash key of a queue. */
export function messageQueueToString(mq: MessageQueue): string {
  return `MessageQueue [topic=${mq.topic}, brokerName=${mq.brokerName}, queueId=${mq.queueId}]`;
}

/**
 * Java's MessageQueue.compareTo (protocol's compareMessageQueue): every member of a group must sort
 * identically or the allocation strategies disagree.
 */
export const compareMessageQueues: (a: MessageQueue, b: MessageQueue) => number = compareMessageQueue;

/** Java string order (UTF-16 code units) for client ids. */
export function compareJavaStrings(a: string, b: string): number {
  return a === b ? 0 : a < b ? -1 : 1;
}
