import type { MessageQueue } from '../../protocol/index.js';

/** A queue of a topic on one broker (protocol's MessageQueue): the unit of rebalance, pulling and offset commits. */
export type { MessageQueue } from '../../protocol/index.js';

/** A queue object whose keys are in Java's JSON order (`{"brokerName":…,"queueId":…,"topic":…}`). */
export function messageQueue(topic: string, brokerName: string, queueId: number): MessageQueue {
  // Key order matters: JSON.stringify keeps insertion order and Java writes keys sorted.
  return { brokerName, queueId, topic };
}

/** A string usable as a Map key; the same format as lib/client's messageQueueKey ("@" cannot occur in a topic). */
export function queueKey(mq: MessageQueue): string {
  return `${mq.topic}@${mq.brokerName}@${mq.queueId}`;
}

/** Java's MessageQueue.toString(), which is also the consistent-hash key of a queue. */
export function messageQueueToString(mq: MessageQueue): string {
  return `MessageQueue [topic=${mq.topic}, brokerName=${mq.brokerName}, queueId=${mq.queueId}]`;
}

/**
 * Java's MessageQueue.compareTo: topic, then broker name (String.compareTo = UTF-16 code-unit order,
 * which is what JavaScript's `<` on strings does), then queue id numerically. Every member of a group
 * must sort identically or the allocation strategies disagree.
 */
export function compareMessageQueues(a: MessageQueue, b: MessageQueue): number {
  if (a.topic !== b.topic) return a.topic < b.topic ? -1 : 1;
  if (a.brokerName !== b.brokerName) return a.brokerName < b.brokerName ? -1 : 1;
  return a.queueId - b.queueId;
}

/** Java string order (UTF-16 code units) for client ids. */
export function compareJavaStrings(a: string, b: string): number {
  return a === b ? 0 : a < b ? -1 : 1;
}
