import type { ConsumerStatsRecorder } from './consumer-stats.js';
import type { MessageExt } from './message.js';
import type { MessageQueue } from '../../../protocol/index.js';
import type { OffsetStore } from './offset-store.js';
import type { ConsumerConfig } from './consumer-config.js';
import type { ProcessQueue } from './process-queue.js';
import type { ConsumerTrace } from '../../trace/trace-hooks.js';
import type { ConsumerMetrics } from '../../metrics/index.js';

/** What the consume services need from the consumer that owns them. */
export interface ConsumeHost {
  readonly config: ConsumerConfig;
  readonly offsetStore: OffsetStore;
  readonly recorder: ConsumerStatsRecorder;
  readonly maxReconsumeTimes: number;
  /** enableTrace: SubBefore/SubAfter records around each handler call (lib/trace); null when off. */
  readonly trace?: ConsumerTrace | null;
  /** Metrics around each handler call (lib/metrics); null when off. */
  readonly metrics?: ConsumerMetrics | null;
  /**
   * Concurrent path: CONSUMER_SEND_MSG_BACK to the queue's broker, falling back to republishing to the
   * retry topic. Resolves true when one of them stored the message.
   */
  sendMessageBack(msg: MessageExt, delayLevel: number, brokerName: string): Promise<boolean>;
  /** Orderly path: republish to %RETRY%group with RECONSUME_TIME = `reconsumeTime` (≥ max sends it to the DLQ). */
  republishToRetry(msg: MessageExt, reconsumeTime: number): Promise<boolean>;
  /** Called after consumption removed messages from a queue's cache (wakes a pull parked by flow control). */
  onConsumed(pq: ProcessQueue): void;
  /** A handler returned a value that is no status (logged once per value, emitted as 'handlerResultInvalid'). */
  invalidHandlerResult(value: unknown, mq: MessageQueue, count: number): void;
  /** Orderly: ask the broker for the lock of one queue. */
  lockQueue(mq: MessageQueue): Promise<boolean>;
}

/** Restores the original topic of retry messages before user code sees them (resetRetryAndNamespace). */
export function resetRetryTopic(msgs: readonly MessageExt[], retryTopic: string): void {
  for (let i = 0; i < msgs.length; i++) {
    const msg = msgs[i]!;
    if (msg.topic === retryTopic) {
      const orig = msg.properties.RETRY_TOPIC;
      if (orig !== undefined) msg.topic = orig;
    }
  }
}
