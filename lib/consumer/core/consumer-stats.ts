import { systemClock, type Clock } from '../../clock.js';
import { newInflateStats, type InflateStats } from './inflate.js';
import { ConsumerStatsManager } from './consumer-stats-manager.js';
import type { FlowControlReason } from './flow-control.js';

const WINDOW_SECONDS = 10;

/**
 * A counter with a rate over the last 10 seconds: per-second buckets in a ring, updated with the
 * caller's clock reading (callers add per pull or per handler call, never per message with its own timer).
 */
export class RateCounter {
  total = 0;
  private readonly buckets = new Float64Array(WINDOW_SECONDS);
  private readonly bucketSecond = new Float64Array(WINDOW_SECONDS).fill(-1);

  add(n: number, nowMs: number): void {
    this.total += n;
    const sec = Math.floor(nowMs / 1000);
    const i = sec % WINDOW_SECONDS;
    if (this.bucketSecond[i] !== sec) {
      this.bucketSecond[i] = sec;
      this.buckets[i] = 0;
    }
    this.buckets[i]! += n;
  }

  /** Events per second over the last full seconds of the window (the running second is excluded). */
  rate(nowMs: number): number {
    const sec = Math.floor(nowMs / 1000);
    let sum = 0;
    let span = 0;
    for (let back = 1; back <= WINDOW_SECONDS - 1; back++) {
      const s = sec - back;
      const i = ((s % WINDOW_SECONDS) + WINDOW_SECONDS) % WINDOW_SECONDS;
      span++;
      if (this.bucketSecond[i] === s) sum += this.buckets[i]!;
    }
    return span === 0 ? 0 : sum / span;
  }
}

/**
 * Counters of one consumer: exposed through PushConsumer.stats() (totals and 10 s rates), and, per
 * topic as Java's ConsumerStatsManager keeps them, through GET_CONSUMER_RUNNING_INFO (`manager`).
 * The pull path and the consume services record through the methods, which feed both.
 */
export class ConsumerStatsRecorder {
  readonly manager: ConsumerStatsManager;
  constructor(clock: Clock = systemClock) {
    this.manager = new ConsumerStatsManager(clock);
  }

  /** A FOUND pull of `topic`'s queue: its round trip, and the messages it handed on (after tag filtering, maybe 0). */
  pullFound(topic: string, rtMs: number, msgs: number, now: number): void {
    this.pullsFound++;
    this.manager.incPullRT(topic, rtMs);
    if (msgs > 0) {
      this.pulledMessages.add(msgs, now);
      this.manager.incPullTPS(topic, msgs);
    }
  }
  /** One handler call on a queue of `topic` took `rtMs`. */
  consumeRt(topic: string, rtMs: number): void {
    this.consumeRtSum += rtMs;
    this.consumeRtCount++;
    this.manager.incConsumeRT(topic, rtMs);
  }
  consumeOk(topic: string, msgs: number, now: number): void {
    if (msgs > 0) this.consumedOk.add(msgs, now);
    this.manager.incConsumeOKTPS(topic, msgs);
  }
  consumeFailed(topic: string, msgs: number, now: number): void {
    if (msgs > 0) this.consumedFailed.add(msgs, now);
    this.manager.incConsumeFailedTPS(topic, msgs);
  }
  close(): void {
    this.manager.close();
  }

  readonly pulls = new RateCounter();
  readonly pulledMessages = new RateCounter();
  readonly consumedOk = new RateCounter();
  readonly consumedFailed = new RateCounter();
  pullErrors = 0;
  pullsFound = 0;
  sendBackOk = 0;
  sendBackFailed = 0;
  republished = 0;
  localRetries = 0;
  expired = 0;
  rebalances = 0;
  flowControl: Record<FlowControlReason, number> = { count: 0, size: 0, span: 0 };
  /** What inflating compressed bodies cost and refused (stats().inflate). */
  readonly inflate: InflateStats = newInflateStats();
  /** Sum of handler-call durations in ms and their number (for consumeRT). */
  consumeRtSum = 0;
  consumeRtCount = 0;
}

/**
 * Per-queue figures of stats().
 * @category Consuming
 */
export interface QueueStats {
  /** The queue's topic. */
  topic: string;
  /** The broker that holds the queue. */
  brokerName: string;
  /** The queue's id on that broker. */
  queueId: number;
  /** Messages pulled and not yet consumed. */
  cachedCount: number;
  /** Bytes of the bodies of those messages (inflated bodies: what they hold in memory). */
  cachedBytes: number;
  /** The most cachedBytes the queue held at once (after a pull was put in it). */
  peakCachedBytes: number;
  /** Highest − lowest cached offset. */
  span: number;
  /** In-memory committed offset (next offset to consume), −1 if none yet. */
  committedOffset: number;
  /** Offset the next pull asks for. */
  pulledOffset: number;
  /** Pulls parked by flow control on this queue, by reason. */
  flowControlPauses: Record<FlowControlReason, number>;
  /** Orderly: the broker lock on the queue is held. */
  locked: boolean;
  /** The queue was taken away by a rebalance (or the consumer stopped). */
  dropped: boolean;
}

/**
 * What `consumer.stats()` returns: totals and rates of the consumer and, per held queue, its QueueStats.
 * @category Consuming
 */
export interface ConsumerStats {
  /** The consumer group. */
  consumerGroup: string;
  /** The consumer's client id (clientIp@instanceName). */
  clientId: string;
  /** Totals since start. */
  pulls: number;
  /** Pulls answered FOUND. */
  pullsFound: number;
  /** Pulls that failed (an error, not an empty answer). */
  pullErrors: number;
  /** Messages pulled (after the tag filter). */
  messagesPulled: number;
  /** Messages the handler consumed successfully. */
  messagesConsumed: number;
  /** Messages the handler failed (threw, rejected or asked for a retry). */
  messagesFailed: number;
  /** Failed messages sent back to the broker for a retry (CONSUMER_SEND_MSG_BACK). */
  sendBackOk: number;
  /** Send-backs that failed (the message is then republished to the retry topic). */
  sendBackFailed: number;
  /** Failed messages republished to the retry topic after a failed send-back. */
  republished: number;
  /** Failed messages neither sent back nor republished, consumed again here (orderly: messages of suspended queues). */
  localRetries: number;
  /** Messages that sat with the handler past consumeTimeoutMs and were sent back for a retry. */
  expired: number;
  /** Rebalances that changed the queues held. */
  rebalances: number;
  /** Pulls parked by flow control, by reason. */
  flowControlPauses: Record<FlowControlReason, number>;
  /** Inflation of compressed bodies: bytes, the most one pull inflated, budget cuts, refused messages. */
  inflate: InflateStats;
  /** The duplicate guard's figures (only with the `duplicateGuard` option). */
  duplicates?: {
    /** Deliveries dropped as duplicates (acked or committed without the handler). */
    dropped: number;
    /** Keys recorded after a handler succeeded. */
    recorded: number;
    /** Keys the in-memory set holds now (0 with a store). */
    held: number;
    /** Calls to the store that threw or rejected (the message was then handled, or not recorded). */
    storeErrors: number;
  };
  /** Rates over the last 10 s, per second. */
  pullTps: number;
  /** Messages pulled per second, over the last 10 s. */
  pulledMsgTps: number;
  /** Messages consumed successfully per second, over the last 10 s. */
  consumeOkTps: number;
  /** Messages failed per second, over the last 10 s. */
  consumeFailedTps: number;
  /** Mean handler-call time in ms. */
  consumeRtMs: number;
  /** Handler calls running now / waiting for a slot (orderly: queues being consumed / waiting for their turn). */
  consumeInFlight: number;
  /** Handler calls waiting for a slot (orderly: queues waiting for their turn). */
  consumeBacklog: number;
  /** Per held queue: its cache and offsets. */
  queues: QueueStats[];
}
