import type { MessageQueue } from '../../protocol/index.js';
import type { Clock } from '../clock.js';
import { BrokerError, RemotingError } from '../remoting/index.js';
import { LatencyFaultTolerance, type FaultDetectorHost } from './latency-fault-tolerance.js';
import type { ResolvedSendPathOptions } from './send-path-options.js';
import type { TopicPublishInfo } from './topic-publish-info.js';

/** A failed send counts as this latency when it isolates its broker (Java's updateFaultItem isolation). */
export const ISOLATION_LATENCY_MS = 10_000;

type FaultOptions = Pick<
  ResolvedSendPathOptions,
  | 'sendLatencyFaultEnable'
  | 'startDetectorEnable'
  | 'latencyMaxMs'
  | 'notAvailableDurationMs'
  | 'detectTimeoutMs'
  | 'detectIntervalMs'
>;

/**
 * Queue selection with latency fault tolerance (Java's MQFaultStrategy). Off (the default), it is the
 * plain round robin that avoids the broker of the last failed attempt. On, each send the producer
 * routes itself records its broker's latency or failure, and selection takes, in this order: a
 * queue of an available broker other than the last failed one; else one of a reachable broker
 * other than it; else any queue.
 */
export class MQFaultStrategy {
  readonly tolerance: LatencyFaultTolerance;

  constructor(
    private readonly options: FaultOptions,
    clock: Clock,
  ) {
    this.tolerance = new LatencyFaultTolerance(clock, options.detectTimeoutMs, options.detectIntervalMs);
  }

  get enabled(): boolean {
    return this.options.sendLatencyFaultEnable;
  }

  /** The queue of one attempt; `retry` is true from the second attempt of a send on. */
  selectOneMessageQueue(info: TopicPublishInfo, lastBrokerName: string | undefined, retry: boolean): MessageQueue {
    if (!this.enabled) return info.selectOneMessageQueue(lastBrokerName);
    if (retry) info.resetIndex();
    const notLast = (mq: MessageQueue) => lastBrokerName === undefined || mq.brokerName !== lastBrokerName;
    const t = this.tolerance;
    return (
      info.selectOneMessageQueueWhere((mq) => t.isAvailable(mq.brokerName), notLast) ??
      info.selectOneMessageQueueWhere((mq) => t.isReachable(mq.brokerName), notLast) ??
      info.selectOneMessageQueue()
    );
  }

  /**
   * Records an attempt's outcome as Java's sendDefaultImpl does: a success by its latency; a broker
   * error isolates the broker and marks it unreachable; a connection failure or timeout isolates it,
   * and marks it unreachable only when the detector runs to bring it back; any other failure (no
   * master address, …) counts by its latency.
   */
  onAttempt(brokerName: string, latencyMs: number, error?: unknown): void {
    if (!this.enabled) return;
    if (error instanceof BrokerError) this.updateFaultItem(brokerName, latencyMs, true, false);
    else if (error instanceof RemotingError)
      this.updateFaultItem(brokerName, latencyMs, true, !this.options.startDetectorEnable);
    else this.updateFaultItem(brokerName, latencyMs, false, true);
  }

  updateFaultItem(brokerName: string, latencyMs: number, isolation: boolean, reachable: boolean): void {
    if (!this.enabled) return;
    const duration = this.notAvailableDuration(isolation ? ISOLATION_LATENCY_MS : latencyMs);
    this.tolerance.updateFaultItem(brokerName, latencyMs, duration, reachable);
  }

  /** The isolation of the highest latency step `latencyMs` reaches; 0 below the first. */
  notAvailableDuration(latencyMs: number): number {
    const { latencyMaxMs, notAvailableDurationMs } = this.options;
    for (let i = latencyMaxMs.length - 1; i >= 0; i--)
      if (latencyMs >= latencyMaxMs[i]!) return notAvailableDurationMs[i]!;
    return 0;
  }

  /** Starts the detector when both sendLatencyFaultEnable and startDetectorEnable are on. */
  start(host: FaultDetectorHost): void {
    if (this.enabled && this.options.startDetectorEnable) this.tolerance.startDetector(host);
  }

  shutdown(): Promise<void> {
    return this.tolerance.stopDetector();
  }
}
