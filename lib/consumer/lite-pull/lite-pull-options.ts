import { ConsumerOptionError } from '../errors.js';
import { resolveConsumerOptions, type ConsumerConfig } from '../core/consumer-config.js';
import type { PushConsumerOptions } from '../core/options.js';
import type { ClientOptions } from '../../client/client-options.js';
import type { InflateOptions } from '../core/inflate.js';
import { optionValidator } from '../../validate.js';
import type { NamespaceOption } from '../../client/namespace.js';
import type { SubscriptionExpression } from '../core/sql-subscription.js';

/**
 * What a user may pass to `new LitePullConsumer(options)`: the options the push consumer shares with
 * Java's DefaultLitePullConsumer, plus the lite pull consumer's own (defaults from
 * DefaultLitePullConsumer, the same in 4.9.8 and 5.3.3).
 * @category Consuming
 */
export interface LitePullConsumerOptions
  extends ClientOptions,
    InflateOptions,
    Pick<
      PushConsumerOptions,
      | 'group'
      | 'consumerGroup'
      | 'messageModel'
      | 'consumeFromWhere'
      | 'consumeTimestampMs'
      | 'allocateStrategy'
      | 'rebalanceIntervalMs'
      | 'pullTimeDelayMsWhenException'
      | 'pullTimeDelayMillsWhenException'
      | 'offsetStoreDir'
      | 'metrics'
      | 'sqlLimits'
      | 'enableTrace'
      | 'traceTopic'
    >,
    NamespaceOption {
  /**
   * topic → tag expression or `{ sql }` (a SQL92 expression the broker evaluates, checked with it
   * by CHECK_CLIENT_CONFIG at start); more with subscribe() (subscribe mode: the group's rebalance).
   * @default {} (subscribe with subscribe(), or assign queues with assign())
   */
  subscriptions?: Record<string, SubscriptionExpression>;
  /**
   * Commit what poll() returned, at the first poll after each autoCommitIntervalMs.
   * @default true
   */
  autoCommit?: boolean;
  /**
   * Interval of the automatic commit, in milliseconds, at least 1000 (Java ignores smaller values;
   * here they are refused).
   * @default 5000
   */
  autoCommitIntervalMs?: number;
  /**
   * Messages per pull, and so at most per poll(), 1..1024.
   * @default 10
   */
  pullBatchSize?: number;
  /**
   * Pulled batches waiting for poll() × pullBatchSize above which every queue's pull waits.
   * @default 10000
   */
  pullThresholdForAll?: number;
  /**
   * Cached messages per queue above which its pull waits, 1..65535.
   * @default 1000
   */
  pullThresholdForQueue?: number;
  /**
   * Cached message bodies per queue, in MiB, above which its pull waits, 1..1024.
   * @default 100
   */
  pullThresholdSizeForQueueMiB?: number;
  /**
   * Highest − lowest cached offset of a queue above which its pull waits, 1..65535.
   * @default 2000
   */
  consumeMaxSpan?: number;
  /**
   * How long poll() without an argument waits for messages, in milliseconds.
   * @default 5000
   */
  pollTimeoutMs?: number;
  /**
   * How long the broker holds a pull with nothing to return, in milliseconds (the push consumer's
   * default is 15000).
   * @default 20000
   */
  brokerSuspendMaxTimeMs?: number;
  /**
   * RPC timeout of a held pull, in milliseconds (Java consumerTimeoutMillisWhenSuspend); must exceed
   * brokerSuspendMaxTimeMs.
   * @default 30000
   */
  consumerTimeoutMsWhenSuspend?: number;
}

export interface LitePullConsumerConfig {
  /** The settings shared with the push consumer (its rebalance and client instance read them). */
  base: ConsumerConfig;
  autoCommit: boolean;
  autoCommitIntervalMs: number;
  pullBatchSize: number;
  pullThresholdForAll: number;
  pullThresholdForQueue: number;
  pullThresholdSizeForQueueMiB: number;
  consumeMaxSpan: number;
  pollTimeoutMs: number;
}

/** DefaultLitePullConsumer's defaults, in one place. Returns a fresh object. */
export function litePullConsumerDefaults() {
  return {
    autoCommit: true,
    autoCommitIntervalMs: 5000,
    pullBatchSize: 10,
    pullThresholdForAll: 10000,
    pullThresholdForQueue: 1000,
    pullThresholdSizeForQueueMiB: 100,
    consumeMaxSpan: 2000,
    pollTimeoutMs: 5000,
    brokerSuspendMaxTimeMs: 20000,
    consumerTimeoutMsWhenSuspend: 30000,
  };
}

/** The lite pull consumer's own options: "must be an integer in 1..1024, got x". */
const check = optionValidator(ConsumerOptionError, { range: 'dots' });
const int = (name: string, v: unknown, min: number, max: number): number => check.intIn(name, v, min, max);

/** Validates the options (each bad one raises ConsumerOptionError naming it) and fills in the defaults. */
export function resolveLitePullConsumerOptions(options: LitePullConsumerOptions): LitePullConsumerConfig {
  if (options === null || typeof options !== 'object') throw new ConsumerOptionError('options', 'must be an object');
  const d = litePullConsumerDefaults();
  const suspend = int(
    'brokerSuspendMaxTimeMs',
    options.brokerSuspendMaxTimeMs ?? d.brokerSuspendMaxTimeMs,
    0,
    2147483647,
  );
  const timeout = int(
    'consumerTimeoutMsWhenSuspend',
    options.consumerTimeoutMsWhenSuspend ?? d.consumerTimeoutMsWhenSuspend,
    1,
    2147483647,
  );
  // Java's checkConfig: the RPC must outlive the broker's hold, or every long poll times out.
  if (timeout <= suspend) {
    throw new ConsumerOptionError(
      'consumerTimeoutMsWhenSuspend',
      `must exceed brokerSuspendMaxTimeMs (${timeout} <= ${suspend})`,
    );
  }
  const pullBatchSize = int('pullBatchSize', options.pullBatchSize ?? d.pullBatchSize, 1, 1024);
  const { subscriptions, ...rest } = options;
  const base = resolveConsumerOptions({
    ...rest,
    ...(subscriptions !== undefined ? { subscriptions } : {}),
    pullBatchSize,
    pullTimeoutMs: timeout,
    brokerSuspendMaxTimeMs: suspend,
  } as PushConsumerOptions);
  const autoCommit = options.autoCommit ?? d.autoCommit;
  if (typeof autoCommit !== 'boolean')
    throw new ConsumerOptionError('autoCommit', `must be a boolean, got ${String(autoCommit)}`);
  return {
    base,
    autoCommit,
    autoCommitIntervalMs: int(
      'autoCommitIntervalMs',
      options.autoCommitIntervalMs ?? d.autoCommitIntervalMs,
      1000,
      2147483647,
    ),
    pullBatchSize,
    pullThresholdForAll: int(
      'pullThresholdForAll',
      options.pullThresholdForAll ?? d.pullThresholdForAll,
      1,
      Number.MAX_SAFE_INTEGER,
    ),
    pullThresholdForQueue: int(
      'pullThresholdForQueue',
      options.pullThresholdForQueue ?? d.pullThresholdForQueue,
      1,
      65535,
    ),
    pullThresholdSizeForQueueMiB: int(
      'pullThresholdSizeForQueueMiB',
      options.pullThresholdSizeForQueueMiB ?? d.pullThresholdSizeForQueueMiB,
      1,
      1024,
    ),
    consumeMaxSpan: int('consumeMaxSpan', options.consumeMaxSpan ?? d.consumeMaxSpan, 1, 65535),
    pollTimeoutMs: int('pollTimeoutMs', options.pollTimeoutMs ?? d.pollTimeoutMs, 0, 2147483647),
  };
}
