/** Java's DefaultMQPushConsumerImpl constants for re-queuing a pull. */
export const PULL_TIME_DELAY_MILLS_WHEN_CACHE_FLOW_CONTROL = 50;
export const PULL_TIME_DELAY_MILLS_WHEN_BROKER_FLOW_CONTROL = 20;
export const PULL_TIME_DELAY_MILLS_WHEN_SUSPEND = 1000;

const MIB = 1024 * 1024;

/**
 * Why flow control parked a queue's pull: too many cached messages, too many cached bytes, or too wide an offset span.
 * @category Consuming
 */
export type FlowControlReason = 'count' | 'size' | 'span';

export interface QueueCacheState {
  msgCount: number;
  msgSize: number;
  maxSpan: number;
}

export interface FlowLimits {
  pullThresholdForQueue: number;
  pullThresholdSizeForQueueMiB: number;
  consumeConcurrentlyMaxSpan: number;
  /** Span is only checked in concurrent mode (orderly consumption cannot skip ahead anyway). */
  orderly: boolean;
}

/**
 * Decides whether a queue's next pull must wait (steps 4-5 of
 * docs/protocol-facts.md#pull-loop): the cache holds more than
 * pullThresholdForQueue messages, more than pullThresholdSizeForQueue whole MiB of bodies, or (concurrent)
 * its offsets span more than consumeConcurrentlyMaxSpan. Returns the reason, or null to pull now.
 */
export function flowControlReason(pq: QueueCacheState, limits: FlowLimits): FlowControlReason | null {
  if (pq.msgCount > limits.pullThresholdForQueue) return 'count';
  // Java compares msgSize / (1024*1024) in long arithmetic, i.e. whole MiB.
  if (Math.floor(pq.msgSize / MIB) > limits.pullThresholdSizeForQueueMiB) return 'size';
  if (!limits.orderly && pq.maxSpan > limits.consumeConcurrentlyMaxSpan) return 'span';
  return null;
}

/**
 * Per-queue limits derived from topic limits after a rebalance (Java's messageQueueChanged):
 * max(1, topicLimit / queues held of the topic), or the configured per-queue limit when the topic limit is off.
 */
export function queueLimitsFromTopic(
  perQueue: { pullThresholdForQueue: number; pullThresholdSizeForQueueMiB: number },
  topic: { pullThresholdForTopic: number; pullThresholdSizeForTopicMiB: number },
  queuesHeld: number,
): { pullThresholdForQueue: number; pullThresholdSizeForQueueMiB: number } {
  const n = Math.max(1, queuesHeld);
  return {
    pullThresholdForQueue:
      topic.pullThresholdForTopic !== -1
        ? Math.max(1, Math.floor(topic.pullThresholdForTopic / n))
        : perQueue.pullThresholdForQueue,
    pullThresholdSizeForQueueMiB:
      topic.pullThresholdSizeForTopicMiB !== -1
        ? Math.max(1, Math.floor(topic.pullThresholdSizeForTopicMiB / n))
        : perQueue.pullThresholdSizeForQueueMiB,
  };
}
