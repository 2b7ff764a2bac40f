import {
  DUPLICATES_DROPPED_GAUGE,
  Gauges,
  Histograms,
  InvocationStatus,
  MetricLabels,
  type HistogramSpec,
} from './metric-names.js';
import type {
  HistogramLike,
  MeterLike,
  MetricAttributes,
  ObservableGaugeLike,
  ObservableResultLike,
} from './otel-types.js';

function histogram(meter: MeterLike, spec: HistogramSpec): HistogramLike {
  return meter.createHistogram(spec.name, {
    description: spec.description,
    unit: 'ms',
    advice: { explicitBucketBoundaries: [...spec.boundaries] },
  });
}

/**
 * Label sets by key, built once: a send or a handler call records with an attributes object it
 * does not allocate (the SDK keys its series by the attributes' content, not their identity).
 */
class LabelCache {
  /** By status ('' for none), then topic. */
  private readonly maps = new Map<string, Map<string, MetricAttributes>>();
  /** The last answer: a consumer's calls come from one topic at a time. */
  private lastTopic = '';
  private lastStatus = '\u0000';
  private last: MetricAttributes = {};
  constructor(private readonly base: MetricAttributes) {}
  get(topic: string, status = ''): MetricAttributes {
    if (topic === this.lastTopic && status === this.lastStatus) return this.last;
    let byTopic = this.maps.get(status);
    if (byTopic === undefined) this.maps.set(status, (byTopic = new Map()));
    let a = byTopic.get(topic);
    if (a === undefined) {
      a = { ...this.base, [MetricLabels.TOPIC]: topic };
      if (status !== '') a[MetricLabels.INVOCATION_STATUS] = status;
      // A client sending to an unbounded set of topics must not grow this without end.
      if (byTopic.size >= 10_000) byTopic.clear();
      byTopic.set(topic, a);
    }
    this.lastTopic = topic;
    this.lastStatus = status;
    this.last = a;
    return a;
  }
}

/** The producer's metric: rocketmq_send_cost_time. Exists only when metrics are on. */
export class ProducerMetrics {
  private readonly sendCost: HistogramLike;
  private readonly labels: LabelCache;

  constructor(meter: MeterLike, clientId: string) {
    this.sendCost = histogram(meter, Histograms.SEND_COST_TIME);
    this.labels = new LabelCache({ [MetricLabels.CLIENT_ID]: clientId });
  }

  /**
   * One send attempt ended after `costMs`: one record per message it carried, as Java's
   * MessageMeterInterceptor records each message of a publishing call (and each attempt: a retry
   * is a new call there too).
   */
  sendDone(topic: string, messages: number, costMs: number, ok: boolean): void {
    const a = this.labels.get(topic, ok ? InvocationStatus.SUCCESS : InvocationStatus.FAILURE);
    for (let i = 0; i < messages; i++) this.sendCost.record(costMs, a);
  }
}

/** What a consumer's gauges read at collection time: its cache, per queue. */
export interface CachedQueue {
  topic: string;
  messages: number;
  bytes: number;
}

/** The message fields the consumer metrics read. */
interface MessageLike {
  topic: string;
  storeTimestamp: number;
}

/**
 * A consumer's metrics: rocketmq_delivery_latency, rocketmq_await_time, rocketmq_process_time and
 * the two cache gauges. Exists only when metrics are on, so the consumers' hooks are one null
 * check per pull and per handler call when they are off.
 */
export class ConsumerMetrics {
  private readonly delivery: HistogramLike;
  private readonly awaitTime: HistogramLike;
  private readonly process: HistogramLike;
  private readonly labels: LabelCache;
  /**
   * When messages (or a pulled batch) arrived, for the await time of the consumers that take
   * messages out of order of arrival (orderly, lite pull); the concurrent service carries the
   * arrival in its consume requests instead, which costs nothing per message.
   */
  private readonly arrivals = new WeakMap<object, number>();
  private readonly gauges: [ObservableGaugeLike, (r: ObservableResultLike) => void][] = [];

  constructor(
    private readonly meter: MeterLike,
    clientId: string,
    consumerGroup: string,
    cached?: () => Iterable<CachedQueue>,
  ) {
    this.delivery = histogram(meter, Histograms.DELIVERY_LATENCY);
    this.awaitTime = histogram(meter, Histograms.AWAIT_TIME);
    this.process = histogram(meter, Histograms.PROCESS_TIME);
    this.labels = new LabelCache({ [MetricLabels.CLIENT_ID]: clientId, [MetricLabels.CONSUMER_GROUP]: consumerGroup });
    if (cached) {
      const observe = (pick: (q: CachedQueue) => number) => (result: ObservableResultLike) => {
        // ProcessQueueGaugeObserver: one value per topic, the sum over its queues.
        const perTopic = new Map<string, number>();
        for (const q of cached()) perTopic.set(q.topic, (perTopic.get(q.topic) ?? 0) + pick(q));
        for (const [topic, v] of perTopic) result.observe(v, this.labels.get(topic));
      };
      for (const [spec, pick] of [
        [Gauges.CONSUMER_CACHED_MESSAGES, (q: CachedQueue) => q.messages],
        [Gauges.CONSUMER_CACHED_BYTES, (q: CachedQueue) => q.bytes],
      ] as const) {
        const g = meter.createObservableGauge(spec.name, { description: spec.description, unit: spec.unit });
        const cb = observe(pick);
        g.addCallback(cb);
        this.gauges.push([g, cb]);
      }
    }
  }

  /**
   * A pull (or pop) brought `msgs` at `now`: the delivery latency of the first one, as Java records
   * it once per received batch, skipped when negative (clocks of broker and client disagree).
   */
  arrived(msgs: readonly MessageLike[], now: number): void {
    const first = msgs[0];
    if (first === undefined) return;
    const latency = now - first.storeTimestamp;
    if (latency >= 0) this.delivery.record(latency, this.labels.get(originalTopic(first)));
  }

  /** Remembers when `key` (a message, or a pulled batch handed out whole) arrived. */
  track(key: object, now: number): void {
    this.arrivals.set(key, now);
  }

  /** `track`ed arrival of `key`, or −1. */
  arrivalOf(key: object | undefined): number {
    return key === undefined ? -1 : (this.arrivals.get(key) ?? -1);
  }

  /**
   * A handler call (or poll) starts at `now` with `msgs` (their retry topics already put back),
   * which arrived at `arrivedAt` (−1: unknown, nothing recorded): the await time, once per call.
   */
  beforeConsume(msgs: readonly MessageLike[], now: number, arrivedAt: number): void {
    const first = msgs[0];
    if (first === undefined || arrivedAt < 0) return;
    this.awaitTime.record(Math.max(0, now - arrivedAt), this.labels.get(first.topic));
  }

  /** The handler call that began at `begin` ended at `now`: the process time of each of its messages. */
  afterConsume(msgs: readonly MessageLike[], begin: number, now: number, ok: boolean): void {
    const status = ok ? InvocationStatus.SUCCESS : InvocationStatus.FAILURE;
    const ms = now - begin;
    for (let i = 0; i < msgs.length; i++) this.process.record(ms, this.labels.get(msgs[i]!.topic, status));
  }

  /** The duplicate guard's dropped deliveries, per topic (read at collection time). */
  observeDuplicates(byTopic: () => Iterable<[topic: string, dropped: number]>): void {
    const spec = DUPLICATES_DROPPED_GAUGE;
    const g = this.meter.createObservableGauge(spec.name, { description: spec.description, unit: spec.unit });
    const cb = (result: ObservableResultLike): void => {
      for (const [topic, n] of byTopic()) result.observe(n, this.labels.get(topic));
    };
    g.addCallback(cb);
    this.gauges.push([g, cb]);
  }

  /** Stops the gauges' callbacks (the consumer's shutdown). */
  close(): void {
    for (const [g, cb] of this.gauges) g.removeCallback(cb);
    this.gauges.length = 0;
  }
}

/** A retried message's own topic (the retry topic's messages carry it in RETRY_TOPIC). */
function originalTopic(m: MessageLike): string {
  const props = (m as { properties?: Record<string, string> }).properties;
  return props?.RETRY_TOPIC ?? m.topic;
}
