import type { MessageQueue } from '../../protocol/index.js';

/**
 * The Map key under which RESET_CONSUMER_CLIENT_OFFSET hands offsets to ConsumerInner.resetOffset:
 * `topic@brokerName@queueId` (lib/consumer's queueKey; "@" cannot occur in a topic or broker name).
 */
export function resetOffsetKey(mq: MessageQueue): string {
  return `${mq.topic}@${mq.brokerName}@${mq.queueId}`;
}
