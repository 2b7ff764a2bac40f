import { queueKey, type MessageQueue } from '../../../protocol/internal.js';
import { ConsumerOptionError } from '../errors.js';
import { PULL_TIME_DELAY_MILLS_WHEN_SUSPEND } from '../core/flow-control.js';
import type { PullMessageService } from '../core/pull-message-service.js';
import type { PullRequest } from '../core/pull-request.js';

/**
 * What pause() and resume() take: topics, queues, or a list of either.
 * @category Consuming
 */
export type PauseTarget = string | MessageQueue | readonly (string | MessageQueue)[];

/**
 * The push consumer's paused topics and queues (KafkaJS's pause/resume). A paused queue keeps its
 * assignment and its ProcessQueue: its pull request is parked in the pull service (looked at again
 * every 1 s, which keeps the queue from counting as idle for the rebalance's 120 s rule) rather than
 * dropped, and resume() puts it back in the pull FIFO at once. What is already cached is still
 * consumed. A queue is paused when its topic or the queue itself is.
 */
export class PausedQueues {
  private readonly topics = new Set<string>();
  private readonly queues = new Map<string, MessageQueue>();
  private readonly parked = new Set<PullRequest>();

  constructor(private readonly pullService: PullMessageService) {}

  pause(target: PauseTarget): void {
    for (const t of targets(target)) {
      if (typeof t === 'string') this.topics.add(t);
      else this.queues.set(queueKey(t), t);
    }
  }

  /** Resuming a topic also resumes its queues paused one by one; parked pulls that may go now are re-queued. */
  resume(target: PauseTarget): void {
    for (const t of targets(target)) {
      if (typeof t === 'string') {
        this.topics.delete(t);
        for (const [k, mq] of this.queues) if (mq.topic === t) this.queues.delete(k);
      } else {
        this.queues.delete(queueKey(t));
      }
    }
    for (const pr of this.parked) {
      if (pr.processQueue.dropped) {
        this.parked.delete(pr);
        continue;
      }
      if (this.isPaused(pr.messageQueue)) continue;
      this.parked.delete(pr);
      this.pullService.resume(pr);
    }
  }

  isPaused(mq: MessageQueue): boolean {
    return (
      (this.topics.size > 0 && this.topics.has(mq.topic)) || (this.queues.size > 0 && this.queues.has(queueKey(mq)))
    );
  }

  /** Paused topics and queues, as given. */
  paused(): { topics: string[]; queues: MessageQueue[] } {
    return { topics: [...this.topics], queues: [...this.queues.values()] };
  }

  /** The pull path's hook: true when the request was parked because its queue is paused. */
  parkIfPaused(pr: PullRequest): boolean {
    if (this.topics.size === 0 && this.queues.size === 0) return false;
    if (!this.isPaused(pr.messageQueue)) {
      this.parked.delete(pr);
      return false;
    }
    this.parked.add(pr);
    this.pullService.executePullRequestLater(pr, PULL_TIME_DELAY_MILLS_WHEN_SUSPEND);
    return true;
  }
}

function targets(target: PauseTarget): (string | MessageQueue)[] {
  const list = Array.isArray(target) ? (target as (string | MessageQueue)[]) : [target as string | MessageQueue];
  for (const t of list) {
    if (
      typeof t === 'string'
        ? t === ''
        : !t || typeof t.topic !== 'string' || typeof t.brokerName !== 'string' || !Number.isInteger(t.queueId)
    ) {
      throw new ConsumerOptionError('pause', 'takes topic names or { topic, brokerName, queueId } queues');
    }
  }
  return list;
}
