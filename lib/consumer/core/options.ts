import type { AllocateStrategyOption } from './allocate-strategy.js';
import type { PopConsumeOptions } from './pop-consume-options.js';
import type { InflateOptions } from './inflate.js';
import type {
  ConsumeFromWhereName as ConsumeFromWhere,
  MessageModelName as MessageModel,
} from '../../../protocol/index.js';
import type { TraceOptions } from '../../trace/trace-hooks.js';
import type { SubscriptionExpression } from './sql-subscription.js';
import type { MetricsOption } from '../../metrics/meter.js';
import type { TracingOption } from '../../metrics/tracing.js';
import type { ClientOptions } from '../../client/client-options.js';
import type { DuplicateGuardOptions } from './duplicate-guard.js';

/**
 * What a user may pass to `new PushConsumer(options)`. Everything but the group and name server is optional.
 * @category Consuming
 */
export interface PushConsumerOptions
  extends ClientOptions,
    TraceOptions,
    PopConsumeOptions,
    MetricsOption,
    TracingOption,
    InflateOptions {
  /**
   * The consumer group (required: `group` or its alias `consumerGroup`): at most 120 characters of
   * `%|a-zA-Z0-9_-`, not "DEFAULT_CONSUMER".
   */
  group?: string;
  /**
   * Java's name of `group`.
   * @deprecated use `group`
   */
  consumerGroup?: string;
  /**
   * topic → tag expression ("TagA || TagB" or "*") or { sql: "a > 5" }; more can be added with
   * subscribe() before start.
   * @default {} (subscribe with subscribe())
   */
  subscriptions?: Record<string, SubscriptionExpression>;
  /**
   * Drop a redelivered message whose UNIQ_KEY was consumed within a window instead of handing it
   * to the handler again (acked or committed as consumed, counted in `stats().duplicates`, the
   * `'duplicate'` event); a key is recorded only once its handler succeeded. `true`: in memory,
   * 10 min, at most 100 000 keys; or `{ windowMs, maxKeys, store }` (docs/consuming.md).
   * @default false
   */
  duplicateGuard?: boolean | DuplicateGuardOptions;
  /**
   * CLUSTERING: the group's consumers share the queues and the broker keeps the offsets;
   * BROADCASTING: every consumer of the group gets every message and keeps its offsets in a local
   * file (see offsetStoreDir).
   * @default "CLUSTERING"
   */
  messageModel?: MessageModel;
  /**
   * Where a queue with no committed offset starts: short names or the Java enum names.
   * @default "last" (CONSUME_FROM_LAST_OFFSET)
   */
  consumeFromWhere?: 'last' | 'first' | 'timestamp' | ConsumeFromWhere;
  /**
   * For consumeFromWhere "timestamp": milliseconds since the epoch.
   * @default 30 minutes before start()
   */
  consumeTimestampMs?: number;
  /**
   * How the group's queues are shared among its consumers: "AVG", "AVG_BY_CIRCLE",
   * "CONSISTENT_HASH", { config: queues }, or your own strategy/function.
   * @default "AVG"
   */
  allocateStrategy?: AllocateStrategyOption;
  /**
   * Orderly consumption (one call at a time per queue, broker locks) instead of concurrent.
   * @default false
   */
  orderly?: boolean;
  /**
   * Messages asked for per pull request, 1..1024.
   * @default 32
   */
  pullBatchSize?: number;
  /**
   * Most messages handed to one handler call, 1..1024.
   * @default 1
   */
  consumeMessageBatchMaxSize?: number;
  /**
   * Handler calls run at once (Java's consume thread pool core size), 1..1000. Concurrent
   * and orderly consumption both honour it; raise it to run more calls at once.
   * @default 20
   */
  consumeThreadMin?: number;
  /**
   * Java's pool maximum, 1..1000, at least consumeThreadMin (it follows a larger consumeThreadMin when
   * not given). Java's pool never grows past its core size, so this is checked and reported
   * (GET_CONSUMER_RUNNING_INFO) but does not raise concurrency: consumeThreadMin does.
   * @default 20
   */
  consumeThreadMax?: number;
  /**
   * Cached (pulled, not yet consumed) messages per queue above which the queue's pulls wait
   * (flow control), 1..65535.
   * @default 1000
   */
  pullThresholdForQueue?: number;
  /**
   * Cached message bodies per queue, in MiB, above which the queue's pulls wait (flow control), 1..1024.
   * @default 100
   */
  pullThresholdSizeForQueueMiB?: number;
  /**
   * Cached messages per topic: when set, it replaces pullThresholdForQueue by this divided among
   * the topic's queues held by this consumer; -1 = off, else 1..6553500.
   * @default -1 (off)
   */
  pullThresholdForTopic?: number;
  /**
   * Cached message bodies per topic, in MiB: when set, it replaces pullThresholdSizeForQueueMiB by
   * this divided among the topic's queues held by this consumer; -1 = off, else 1..102400.
   * @default -1 (off)
   */
  pullThresholdSizeForTopicMiB?: number;
  /**
   * Concurrent consumption: highest − lowest cached offset of a queue above which its pulls wait
   * (a slow message holds the committed offset back), 1..65535.
   * @default 2000
   */
  consumeConcurrentlyMaxSpan?: number;
  /**
   * Pause between two pulls of a queue, in milliseconds, 0..65535.
   * @default 0
   */
  pullIntervalMs?: number;
  /**
   * Times a message is retried before it goes to the group's dead-letter queue; −1 = 16 for
   * concurrent, Integer.MAX_VALUE for orderly.
   * @default -1
   */
  maxReconsumeTimes?: number;
  /**
   * Java's consumeTimeout, in minutes.
   * @default 15
   * @deprecated use `consumeTimeoutMs`
   */
  consumeTimeoutMinutes?: number;
  /**
   * How long a message may sit with the handler before the expiry sweep sends it back for a retry,
   * in milliseconds.
   * @default 900000 (15 minutes)
   */
  consumeTimeoutMs?: number;
  /**
   * Orderly: how long a queue waits after SUSPEND_CURRENT_QUEUE_A_MOMENT (or a throw) before the
   * messages are handed over again, in milliseconds, 10..30000.
   * @default 1000
   */
  suspendCurrentQueueTimeMs?: number;
  /**
   * Java's name of `suspendCurrentQueueTimeMs` (milliseconds).
   * @default 1000
   * @deprecated use `suspendCurrentQueueTimeMs`
   */
  suspendCurrentQueueTimeMillis?: number;
  /**
   * Interval between two rebalances (the group's queues shared anew), in milliseconds.
   * @default 20000
   */
  rebalanceIntervalMs?: number;
  /**
   * RPC timeout of a pull, in milliseconds; must exceed brokerSuspendMaxTimeMs, or every long poll
   * times out.
   * @default 30000
   */
  pullTimeoutMs?: number;
  /**
   * How long the broker holds a pull that finds no message (long polling), in milliseconds.
   * @default 15000
   */
  brokerSuspendMaxTimeMs?: number;
  /**
   * Back-off after a failed pull, in milliseconds.
   * @default 1000
   */
  pullTimeDelayMsWhenException?: number;
  /**
   * Java's name of `pullTimeDelayMsWhenException` (milliseconds).
   * @default 1000
   * @deprecated use `pullTimeDelayMsWhenException`
   */
  pullTimeDelayMillsWhenException?: number;
  /**
   * How long shutdown waits for running handler calls, in milliseconds; 0 = do not wait.
   * @default 0
   */
  awaitTerminationMsWhenShutdown?: number;
  /**
   * Java's name of `awaitTerminationMsWhenShutdown` (milliseconds).
   * @default 0
   * @deprecated use `awaitTerminationMsWhenShutdown`
   */
  awaitTerminationMillisWhenShutdown?: number;
  /**
   * Orderly: how often LOCK_BATCH_MQ renews the locks, in milliseconds.
   * @default 20000
   */
  lockIntervalMs?: number;
  /**
   * Broadcasting: directory of the local offsets file.
   * @default ~/.rocketmq_offsets (Java's)
   */
  offsetStoreDir?: string;
  /**
   * Bounds on a SQL92 subscription's expression, checked at subscribe: longer than `maxLength`
   * characters or with more nodes than `maxNodes` is refused with SqlLimitError. Apache's broker
   * has no bound, so none is enforced by default: an expression past the embedded broker's
   * defaults (65536 characters, 4096 nodes; docs/hardening.md) is accepted with a warning.
   * Each is an integer in 1..16777216; one not given is its default (65536, 4096).
   * @default undefined (a warning past 65536 characters or 4096 nodes)
   */
  sqlLimits?: { maxLength?: number; maxNodes?: number };
}
