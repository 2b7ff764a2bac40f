/** A queue of a topic on one broker (MessageQueue in Java). */
export interface MessageQueue {
  topic: string;
  brokerName: string;
  queueId: number;
}

/**
 * A string key for maps of queues. The order of parts follows Java's MessageQueue.compareTo
 * (topic, broker name, queue id) and "@" cannot occur in a topic or broker name.
 */
export function messageQueueKey(mq: MessageQueue): string {
  return `${mq.topic}@${mq.brokerName}@${mq.queueId}`;
}

/** Java's MessageQueue order: topic, then broker name (UTF-16 code units), then queue id. */
export function compareMessageQueues(a: MessageQueue, b: MessageQueue): number {
  if (a.topic !== b.topic) return a.topic < b.topic ? -1 : 1;
  if (a.brokerName !== b.brokerName) return a.brokerName < b.brokerName ? -1 : 1;
  return a.queueId - b.queueId;
}
