/**
 * Queue helpers the consumer needs beyond protocol's (MessageQueue, queueKey,
 * parseMessageQueueKey, compareMessageQueue live in protocol/body/message-queue.ts).
 */
import type { MessageQueue } from '../../protocol/index.js';

/** A queue of a topic on one broker (protocol's MessageQueue): the unit of rebalance, pulling and offset commits. */
export type { MessageQueue } from '../../protocol/index.js';

/** A queue object whose keys are in Java's JSON order (`{"brokerName":…,"queueId":…,"topic":…}`). */
export function messageQueue(topic: string, brokerName: string, queueId: number): MessageQueue {
  // Key order matters: JSON.stringify keeps insertion order and Java writes keys sorted.
  return { brokerName, queueId, topic };
}

/** Java's MessageQueue.toString(), which is also the consistent-hash key of a queue. */
export function messageQueueToString(mq: MessageQueue): string {
  return `MessageQueue [topic=${mq.topic}, brokerName=${mq.brokerName}, queueId=${mq.queueId}]`;
}

/** Java string order (UTF-16 code units) for client ids. */
export function compareJavaStrings(a: string, b: string): number {
  return a === b ? 0 : a < b ? -1 : 1;
}
