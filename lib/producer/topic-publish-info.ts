import type { MessageQueue } from '../../protocol/index.js';
import { MQClientError } from '../client/index.js';

/**
 * The queues a producer may write a topic to (TopicPublishInfo in Java), with the round-robin index.
 * `autoCreate` marks queues borrowed from the TBW102 template route: sends then carry the template
 * topic so that the broker creates the topic.
 */
export class TopicPublishInfo {
  private index: number;

  constructor(
    readonly queues: readonly MessageQueue[],
    readonly autoCreate = false,
    start = Math.floor(Math.random() * 1024),
  ) {
    this.index = start;
  }

  get ok(): boolean {
    return this.queues.length > 0;
  }

  /**
   * Next queue round robin; after a failure (`lastBrokerName` given) the next queue on a different
   * broker, falling back to plain round robin when the topic lives on one broker only.
   */
  selectOneMessageQueue(lastBrokerName?: string): MessageQueue {
    const n = this.queues.length;
    if (n === 0) throw new MQClientError('no queue to select: the topic has no writable queue');
    if (lastBrokerName !== undefined) {
      for (let i = 0; i < n; i++) {
        const mq = this.queues[this.nextIndex() % n]!;
        if (mq.brokerName !== lastBrokerName) return mq;
      }
    }
    return this.queues[this.nextIndex() % n]!;
  }

  /**
   * The next queue round robin that passes every filter, or undefined when none does within one
   * turn (Java's selectOneMessageQueue(QueueFilter...), used by the fault strategy).
   */
  selectOneMessageQueueWhere(...filters: ((mq: MessageQueue) => boolean)[]): MessageQueue | undefined {
    const n = this.queues.length;
    for (let i = 0; i < n; i++) {
      const mq = this.queues[this.nextIndex() % n]!;
      if (filters.every((f) => f(mq))) return mq;
    }
    return undefined;
  }

  /** A fresh random start for round robin: the fault strategy's retry does it, as Java's resetIndex. */
  resetIndex(): void {
    this.index = Math.floor(Math.random() * 0x7fffffff);
  }

  private nextIndex(): number {
    this.index = (this.index + 1) & 0x7fffffff;
    return this.index;
  }
}
