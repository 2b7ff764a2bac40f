// The metrics of the RocketMQ 5.x clients (apache/rocketmq-clients, java/client/.../metrics:
// HistogramEnum, GaugeEnum, MetricLabels, InvocationStatus, ClientMeterManager), by the same names,
// buckets and labels, so that one dashboard reads Java and rocketwire clients alike.

/** ClientMeterManager's METRIC_INSTRUMENTATION_NAME: the meter every instrument is created on. */
export const METER_NAME = 'org.apache.rocketmq.message';

/** Label keys (MetricLabels). */
export const MetricLabels = {
  TOPIC: 'topic',
  CLIENT_ID: 'client_id',
  CONSUMER_GROUP: 'consumer_group',
  INVOCATION_STATUS: 'invocation_status',
} as const;

/** Values of the invocation_status label (InvocationStatus). */
export const InvocationStatus = { SUCCESS: 'success', FAILURE: 'failure' } as const;
export type InvocationStatusValue = (typeof InvocationStatus)[keyof typeof InvocationStatus];

/** One histogram of HistogramEnum: its name and explicit bucket boundaries, in milliseconds. */
export interface HistogramSpec {
  readonly name: string;
  readonly description: string;
  readonly boundaries: readonly number[];
}

/**
 * HistogramEnum. Java gives the instruments no unit string (histogramBuilder(name).build()) and says
 * in the enum's comments that "the time unit of bucket is milliseconds"; rocketwire records
 * milliseconds too and sets the UCUM unit `ms` so that exporters can say so.
 */
export const Histograms = {
  /** Cost of each send attempt (per message of a batch), labels topic, client_id, invocation_status. */
  SEND_COST_TIME: {
    name: 'rocketmq_send_cost_time',
    description: "Time a send attempt took, from its start to the broker's answer or its failure",
    boundaries: [1, 5, 10, 20, 50, 200, 500],
  },
  /** From the message's store timestamp to its arrival at the consumer (the first message of a pull), labels topic, client_id, consumer_group. */
  DELIVERY_LATENCY: {
    name: 'rocketmq_delivery_latency',
    description: 'Time from the broker storing a message to its arrival at the consumer',
    boundaries: [1, 5, 10, 20, 50, 200, 500],
  },
  /** From arrival in the consumer's cache to the handler's start (per handler call), labels topic, client_id, consumer_group. */
  AWAIT_TIME: {
    name: 'rocketmq_await_time',
    description: "Time a message waited in the consumer's cache before its handler started",
    boundaries: [1, 5, 20, 100, 1000, 5000, 10000],
  },
  /** The handler's run (per message of the call), labels topic, client_id, consumer_group, invocation_status. */
  PROCESS_TIME: {
    name: 'rocketmq_process_time',
    description: 'Time the message handler took',
    boundaries: [1, 5, 10, 100, 1000, 10000, 60000],
  },
} as const satisfies Record<string, HistogramSpec>;

/** GaugeEnum: per topic, summed over the consumer's process queues; labels topic, client_id, consumer_group. */
export const Gauges = {
  CONSUMER_CACHED_MESSAGES: {
    name: 'rocketmq_consumer_cached_messages',
    description: "Messages in the consumer's cache",
    unit: '{message}',
  },
  CONSUMER_CACHED_BYTES: {
    name: 'rocketmq_consumer_cached_bytes',
    description: "Body bytes in the consumer's cache",
    unit: 'By',
  },
} as const;

/**
 * Not a metric of the Java clients: deliveries the duplicate guard dropped (the consumer's
 * `duplicateGuard` option), a running total per topic; labels topic, client_id, consumer_group.
 */
export const DUPLICATES_DROPPED_GAUGE = {
  name: 'rocketwire_consumer_duplicates_dropped',
  description: 'Deliveries the duplicate guard acked without handing them to the handler, since start',
  unit: '{message}',
} as const;
