import {
  resolveAllocateStrategy,
  type AllocateMessageQueueStrategy,
  type AllocateStrategyOption,
} from './allocate-strategy.js';
import { systemClock, type Clock } from '../../clock.js';
import { ConsumerOptionError } from '../errors.js';
import { resolvePopConsumeOptions, type ResolvedPopConsumeOptions } from './pop-consume-options.js';
import { resolveInflateOptions, type ResolvedInflateOptions } from './inflate.js';
import {
  ConsumeFromWhere as JavaConsumeFromWhere,
  type ConsumeFromWhereName as ConsumeFromWhere,
  type MessageModelName as MessageModel,
} from '../../../protocol/index.js';
import { GROUP_MAX_LENGTH, checkTopicName } from '../../../protocol/resource-names.js';
import { checkTraceOptions } from '../../trace/trace-hooks.js';
import { checkSubscriptionExpression, resolveSqlLimits, type SubscriptionExpression } from './sql-subscription.js';
import {
  clientInstanceOptions,
  durationOption,
  groupOption,
  namesrvAddrOption,
  type ClientOptions,
} from '../../client/client-options.js';
import { resolveLogger, type Logger } from '../../logger.js';
import type { PushConsumerOptions } from './options.js';
import { optionValidator } from '../../validate.js';

/**
 * The validated, complete configuration of a consumer: the push consumer's, and the lite pull
 * consumer's `base` (the options the two share, resolved by the same rules).
 */
export interface ConsumerConfig {
  consumerGroup: string;
  namesrvAddr: string;
  subscriptions: Record<string, SubscriptionExpression>;
  messageModel: MessageModel;
  consumeFromWhere: ConsumeFromWhere;
  consumeTimestampMs: number | null;
  allocateStrategy: AllocateMessageQueueStrategy;
  orderly: boolean;
  pullBatchSize: number;
  consumeMessageBatchMaxSize: number;
  consumeThreadMin: number;
  consumeThreadMax: number;
  pullThresholdForQueue: number;
  pullThresholdSizeForQueueMiB: number;
  pullThresholdForTopic: number;
  pullThresholdSizeForTopicMiB: number;
  consumeConcurrentlyMaxSpan: number;
  pullIntervalMs: number;
  maxReconsumeTimes: number;
  consumeTimeoutMs: number;
  suspendCurrentQueueTimeMillis: number;
  persistOffsetIntervalMs: number;
  rebalanceIntervalMs: number;
  pullTimeoutMs: number;
  brokerSuspendMaxTimeMs: number;
  pullTimeDelayMillsWhenException: number;
  awaitTerminationMillisWhenShutdown: number;
  lockIntervalMs: number;
  offsetStoreDir: string | null;
  instanceName: string | undefined;
  clientIp: string | undefined;
  serializeType: 'JSON' | 'ROCKETMQ' | undefined;
  heartbeatIntervalMs: number | undefined;
  pollNameServerIntervalMs: number | undefined;
  mqClientApiTimeoutMs: number | undefined;
  acl: { accessKey: string; secretKey: string; securityToken?: string } | undefined;
  clock: Clock;
  logger: Logger;
  /** Bounds of SQL92 expressions; null = warn only, past the embedded broker's defaults. */
  sqlLimits: { maxLength: number; maxNodes: number } | null;
  startWithoutNameServer: boolean;
  /** The connection options passed on to the client instance as given (tls, connectTimeoutMs, namespaceV2, logger, …). */
  client: Omit<ClientOptions, 'namesrvAddr' | 'instanceName'>;
  /** SubBefore/SubAfter trace records (lib/trace). */
  enableTrace: boolean;
  traceTopic: string | undefined;
  /** POP mode (clientRebalance=false, pop-consume-service.ts). */
  pop: ResolvedPopConsumeOptions;
  /** Inflate bounds (inflate.ts): per body and per pull. */
  inflate: ResolvedInflateOptions;
}

/**
 * Java's DefaultMQPushConsumer defaults
 * (docs/protocol-facts.md#consumer-defaults), in one place. Returns a fresh object.
 */
export function consumerDefaults() {
  return {
    messageModel: 'CLUSTERING' as MessageModel,
    consumeFromWhere: 'CONSUME_FROM_LAST_OFFSET' as ConsumeFromWhere,
    allocateStrategy: 'AVG' as AllocateStrategyOption,
    orderly: false,
    pullBatchSize: 32,
    consumeMessageBatchMaxSize: 1,
    consumeThreadMin: 20,
    consumeThreadMax: 20,
    pullThresholdForQueue: 1000,
    pullThresholdSizeForQueueMiB: 100,
    pullThresholdForTopic: -1,
    pullThresholdSizeForTopicMiB: -1,
    consumeConcurrentlyMaxSpan: 2000,
    pullIntervalMs: 0,
    maxReconsumeTimes: -1,
    consumeTimeoutMinutes: 15,
    suspendCurrentQueueTimeMillis: 1000,
    persistOffsetIntervalMs: 5000,
    rebalanceIntervalMs: 20000,
    pullTimeoutMs: 30000,
    brokerSuspendMaxTimeMs: 15000,
    pullTimeDelayMillsWhenException: 1000,
    awaitTerminationMillisWhenShutdown: 0,
    lockIntervalMs: 20000,
  };
}

/** The consumer's options: "must be an integer, got x", then "must be between 1 and 1024, got x". */
const check = optionValidator(ConsumerOptionError, { range: 'separate' });
const int = (name: string, value: unknown, min: number, max: number): number => check.intIn(name, value, min, max);

/** The short names, then every Java enum name as itself. */
const FROM_WHERE: Record<string, ConsumeFromWhere> = {
  last: 'CONSUME_FROM_LAST_OFFSET',
  first: 'CONSUME_FROM_FIRST_OFFSET',
  timestamp: 'CONSUME_FROM_TIMESTAMP',
  ...JavaConsumeFromWhere,
};

/** Fills in defaults and checks every option against Java's ranges; throws ConsumerOptionError naming the option. */
export function resolveConsumerOptions(options: PushConsumerOptions): ConsumerConfig {
  if (options === null || typeof options !== 'object') throw new ConsumerOptionError('options', 'must be an object');
  const d = consumerDefaults();
  const optionError = (option: string, message: string): Error => new ConsumerOptionError(option, message);
  const group = groupOption(options as Record<string, unknown>, 'consumerGroup', optionError) ?? '';
  // errors name the option the user wrote
  const g = options.group === undefined && options.consumerGroup !== undefined ? 'consumerGroup' : 'group';
  check.groupName(g, group, {
    missing: 'must be a non-blank string',
    blank: 'must be a non-blank string',
    tooLong: `must be at most ${GROUP_MAX_LENGTH} characters (Validators.checkGroup; the broker refuses longer)`,
    illegal: () => 'may only contain %|a-zA-Z0-9_-',
    reserved: { name: 'DEFAULT_CONSUMER', message: '"DEFAULT_CONSUMER" is reserved' },
  });
  let namesrvAddr: string;
  try {
    // '' when the list comes from an address server (namesrvDomain)
    namesrvAddr = namesrvAddrOption(options.namesrvAddr, 'namesrvAddr', options);
  } catch (err) {
    throw new ConsumerOptionError('namesrvAddr', (err as Error).message.replace(/^option namesrvAddr: /, ''));
  }
  if (namesrvAddr.trim() === '' && options.namesrvAddr !== undefined)
    throw new ConsumerOptionError('namesrvAddr', 'must be "host:port[;host:port…]"');
  const o = options as Record<string, unknown>;
  const suspendMs = durationOption<number>(
    o,
    'suspendCurrentQueueTimeMs',
    'suspendCurrentQueueTimeMillis',
    optionError,
  );
  const pullDelayMs = durationOption<number>(
    o,
    'pullTimeDelayMsWhenException',
    'pullTimeDelayMillsWhenException',
    optionError,
  );
  const awaitMs = durationOption<number>(
    o,
    'awaitTerminationMsWhenShutdown',
    'awaitTerminationMillisWhenShutdown',
    optionError,
  );
  const messageModel = check.oneOf('messageModel', options.messageModel ?? d.messageModel, [
    'CLUSTERING',
    'BROADCASTING',
  ] as const);
  const fromWhere = FROM_WHERE[String(options.consumeFromWhere ?? d.consumeFromWhere)];
  if (!fromWhere)
    throw new ConsumerOptionError(
      'consumeFromWhere',
      `must be last, first or timestamp, got ${String(options.consumeFromWhere)}`,
    );
  let consumeTimestampMs: number | null = null;
  if (options.consumeTimestampMs !== undefined) {
    consumeTimestampMs = int('consumeTimestampMs', options.consumeTimestampMs, 0, Number.MAX_SAFE_INTEGER);
  }
  const strategy = resolveAllocateStrategy(options.allocateStrategy ?? d.allocateStrategy);
  if (!strategy)
    throw new ConsumerOptionError(
      'allocateStrategy',
      'must be AVG, AVG_BY_CIRCLE, CONSISTENT_HASH, {config}, a strategy or a function',
    );
  const logger = resolveLogger(options.logger, (m) => new ConsumerOptionError('logger', m));
  const sqlLimits = resolveSqlLimits(options.sqlLimits);
  const subscriptions: Record<string, SubscriptionExpression> = {};
  for (const [topic, expr] of Object.entries(options.subscriptions ?? {})) {
    if (typeof topic !== 'string' || topic === '')
      throw new ConsumerOptionError('subscriptions', 'topic names must be non-empty');
    const badTopic = checkTopicName(topic);
    if (badTopic) throw new ConsumerOptionError('subscriptions', badTopic);
    subscriptions[topic] = checkSubscriptionExpression(topic, expr, 'subscriptions', { sqlLimits, logger });
  }
  const consumeThreadMin = int('consumeThreadMin', options.consumeThreadMin ?? d.consumeThreadMin, 1, 1000);
  const consumeThreadMax = int(
    'consumeThreadMax',
    options.consumeThreadMax ?? Math.max(d.consumeThreadMax, consumeThreadMin),
    1,
    1000,
  );
  if (consumeThreadMin > consumeThreadMax) {
    throw new ConsumerOptionError(
      'consumeThreadMin',
      `must not exceed consumeThreadMax (${consumeThreadMin} > ${consumeThreadMax})`,
    );
  }
  const pullThresholdForTopic = int(
    'pullThresholdForTopic',
    options.pullThresholdForTopic ?? d.pullThresholdForTopic,
    -1,
    6553500,
  );
  if (pullThresholdForTopic === 0)
    throw new ConsumerOptionError('pullThresholdForTopic', 'must be -1 (off) or 1..6553500');
  const pullThresholdSizeForTopicMiB = int(
    'pullThresholdSizeForTopicMiB',
    options.pullThresholdSizeForTopicMiB ?? d.pullThresholdSizeForTopicMiB,
    -1,
    102400,
  );
  if (pullThresholdSizeForTopicMiB === 0)
    throw new ConsumerOptionError('pullThresholdSizeForTopicMiB', 'must be -1 (off) or 1..102400');
  const maxReconsumeTimes = int('maxReconsumeTimes', options.maxReconsumeTimes ?? d.maxReconsumeTimes, -1, 2147483647);
  let consumeTimeoutMs: number;
  if (options.consumeTimeoutMs !== undefined)
    consumeTimeoutMs = int('consumeTimeoutMs', options.consumeTimeoutMs, 1, 2147483647);
  else
    consumeTimeoutMs =
      int('consumeTimeoutMinutes', options.consumeTimeoutMinutes ?? d.consumeTimeoutMinutes, 1, 35791) * 60_000;
  const pullTimeoutMs = int('pullTimeoutMs', options.pullTimeoutMs ?? d.pullTimeoutMs, 1, 2147483647);
  const brokerSuspendMaxTimeMs = int(
    'brokerSuspendMaxTimeMs',
    options.brokerSuspendMaxTimeMs ?? d.brokerSuspendMaxTimeMs,
    0,
    2147483647,
  );
  if (pullTimeoutMs <= brokerSuspendMaxTimeMs) {
    // The broker holds a pull up to its suspend time (+ its 5 s check period); a shorter RPC timeout loses every long poll.
    throw new ConsumerOptionError(
      'pullTimeoutMs',
      `must exceed brokerSuspendMaxTimeMs (${pullTimeoutMs} <= ${brokerSuspendMaxTimeMs})`,
    );
  }
  const clock = options.clock ?? systemClock;
  if (
    typeof clock.now !== 'function' ||
    typeof clock.setTimeout !== 'function' ||
    typeof clock.clearTimeout !== 'function'
  ) {
    throw new ConsumerOptionError('clock', 'must have now(), setTimeout() and clearTimeout() methods');
  }
  const badTrace = checkTraceOptions(options);
  if (badTrace) throw new ConsumerOptionError(badTrace.option, badTrace.message);
  const optInt = (name: keyof PushConsumerOptions, min: number, max: number): number | undefined =>
    options[name] === undefined ? undefined : int(name, options[name], min, max);
  return {
    consumerGroup: group,
    namesrvAddr,
    subscriptions,
    messageModel,
    consumeFromWhere: fromWhere,
    consumeTimestampMs,
    allocateStrategy: strategy,
    orderly: options.orderly ?? d.orderly,
    pullBatchSize: int('pullBatchSize', options.pullBatchSize ?? d.pullBatchSize, 1, 1024),
    consumeMessageBatchMaxSize: int(
      'consumeMessageBatchMaxSize',
      options.consumeMessageBatchMaxSize ?? d.consumeMessageBatchMaxSize,
      1,
      1024,
    ),
    consumeThreadMin,
    consumeThreadMax,
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
    pullThresholdForTopic,
    pullThresholdSizeForTopicMiB,
    consumeConcurrentlyMaxSpan: int(
      'consumeConcurrentlyMaxSpan',
      options.consumeConcurrentlyMaxSpan ?? d.consumeConcurrentlyMaxSpan,
      1,
      65535,
    ),
    pullIntervalMs: int('pullIntervalMs', options.pullIntervalMs ?? d.pullIntervalMs, 0, 65535),
    maxReconsumeTimes,
    consumeTimeoutMs,
    suspendCurrentQueueTimeMillis: int(
      options.suspendCurrentQueueTimeMillis !== undefined
        ? 'suspendCurrentQueueTimeMillis'
        : 'suspendCurrentQueueTimeMs',
      suspendMs ?? d.suspendCurrentQueueTimeMillis,
      10,
      30000,
    ),
    persistOffsetIntervalMs: int(
      'persistOffsetIntervalMs',
      options.persistOffsetIntervalMs ?? d.persistOffsetIntervalMs,
      1,
      2147483647,
    ),
    rebalanceIntervalMs: int(
      'rebalanceIntervalMs',
      options.rebalanceIntervalMs ?? d.rebalanceIntervalMs,
      1,
      2147483647,
    ),
    pullTimeoutMs,
    brokerSuspendMaxTimeMs,
    pullTimeDelayMillsWhenException: int(
      options.pullTimeDelayMillsWhenException !== undefined
        ? 'pullTimeDelayMillsWhenException'
        : 'pullTimeDelayMsWhenException',
      pullDelayMs ?? d.pullTimeDelayMillsWhenException,
      0,
      2147483647,
    ),
    awaitTerminationMillisWhenShutdown: int(
      options.awaitTerminationMillisWhenShutdown !== undefined
        ? 'awaitTerminationMillisWhenShutdown'
        : 'awaitTerminationMsWhenShutdown',
      awaitMs ?? d.awaitTerminationMillisWhenShutdown,
      0,
      2147483647,
    ),
    lockIntervalMs: int('lockIntervalMs', options.lockIntervalMs ?? d.lockIntervalMs, 1, 2147483647),
    offsetStoreDir: options.offsetStoreDir ?? null,
    instanceName: options.instanceName,
    clientIp: options.clientIp,
    serializeType: options.serializeType,
    heartbeatIntervalMs: optInt('heartbeatIntervalMs', 1, 2147483647),
    pollNameServerIntervalMs: optInt('pollNameServerIntervalMs', 1, 2147483647),
    mqClientApiTimeoutMs: optInt('mqClientApiTimeoutMs', 1, 2147483647),
    acl: options.acl,
    clock,
    logger,
    sqlLimits,
    startWithoutNameServer: options.startWithoutNameServer ?? false,
    client: clientInstanceOptions(options),
    enableTrace: options.enableTrace ?? false,
    traceTopic: options.traceTopic,
    pop: resolvePopConsumeOptions(options),
    inflate: resolveInflateOptions(options),
  };
}

/** −1 means 16 (concurrent) or Integer.MAX_VALUE (orderly), as Java's getMaxReconsumeTimes. */
export function effectiveMaxReconsumeTimes(config: Pick<ConsumerConfig, 'maxReconsumeTimes' | 'orderly'>): number {
  if (config.maxReconsumeTimes !== -1) return config.maxReconsumeTimes;
  return config.orderly ? 2147483647 : 16;
}
