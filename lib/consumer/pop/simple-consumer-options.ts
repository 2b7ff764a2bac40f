import {
  clientInstanceOptions,
  groupOption,
  namesrvDomainOption,
  takeNamespace,
  wrapNamespace,
  type ClientOptions,
  type NamespaceOption,
} from '../../client/index.js';
import { checkTraceOptions, type TraceOptions } from '../../trace/trace-hooks.js';
import {
  checkSubscriptionExpression,
  resolveSqlLimits,
  type SubscriptionExpression,
} from '../core/sql-subscription.js';
import { systemClock, type Clock } from '../../clock.js';
import type { MetricsOptions } from '../../metrics/index.js';
import { resolveLogger, type Logger } from '../../logger.js';
import { resolveInflateOptions, type InflateOptions, type ResolvedInflateOptions } from '../core/inflate.js';
import { ConsumerOptionError } from '../errors.js';
import { optionValidator } from '../../validate.js';

/**
 * POP consumption over remoting (5.0+ brokers): a consumer that asks the broker for messages
 * (POP_MESSAGE), which keeps them invisible to the group for a while and hands them out again if
 * they are not acked in time. No rebalance, no offsets on the client: the broker does both. The
 * API follows Apache's 5.x SimpleConsumer (receive / ack / changeInvisibleDuration), which Java
 * only offers over gRPC through the proxy; over remoting Java's DefaultMQPushConsumer does the
 * same calls in its pop mode (C/impl/MQClientAPIImpl#popMessageAsync, ackMessageAsync,
 * changeInvisibleTimeAsync).
 * @category Consuming
 */
export interface SimpleConsumerOptions extends ClientOptions, InflateOptions, TraceOptions, NamespaceOption {
  /** The consumer group (required: `group` or its alias `consumerGroup`). */
  group?: string;
  /**
   * Java's name of `group`.
   * @deprecated use `group`
   */
  consumerGroup?: string;
  /** The topic every receive() pops from. */
  topic: string;
  /**
   * What the broker hands out: a TAG expression ("TagA || TagB") or `{ sql }`, a SQL92 expression
   * over message properties (sent as the POP request's expType SQL92, as Java's push consumer in
   * POP mode and the 5.x proxy send it).
   * @default "*" (every message)
   */
  filterExpression?: SubscriptionExpression | undefined;
  /**
   * Bounds of a SQL92 filterExpression, refused here past them (as the push consumer's sqlLimits).
   * @default undefined (past the embedded broker's defaults only a warning)
   */
  sqlLimits?: { maxLength?: number; maxNodes?: number };
  /**
   * How long received messages stay invisible when receive() is not told, in milliseconds (Java's
   * popInvisibleTime).
   * @default 60000
   */
  invisibleDurationMs?: number | undefined;
  /**
   * Long-poll time of a receive that finds nothing (POP's pollTime), in milliseconds, 0..300000;
   * 0 answers at once.
   * @default 15000
   */
  awaitDurationMs?: number | undefined;
  /**
   * Where a group without an offset starts: MIN (the oldest message) or MAX (the newest, as Java's
   * CONSUME_FROM_LAST_OFFSET).
   * @default "MAX"
   */
  initMode?: 'MIN' | 'MAX' | undefined;
  /**
   * Order pop (`order=true`, for orderly topics): the broker hands out a queue's messages in order
   * and none of the queue's later messages while any of them is neither acked nor back to visible;
   * a redelivery carries reconsumeTimes from the broker's orderCountInfo.
   * @default false
   */
  orderly?: boolean | undefined;
  /**
   * Timeout of ACK and CHANGE_INVISIBLETIME calls, in milliseconds (Java's ack timeout).
   * @default 3000
   */
  ackTimeoutMs?: number | undefined;
  /**
   * OpenTelemetry metrics (lib/metrics): rocketmq_delivery_latency per receive, as Java's
   * SimpleConsumer; false turns them off.
   * @default undefined (the global meter provider, when `@opentelemetry/api` is installed)
   */
  metrics?: MetricsOptions | undefined;
}

/** SimpleConsumer's options with their defaults filled in. */
export interface ResolvedSimpleConsumerOptions {
  namesrvAddr: string;
  /** The group and topic as the broker knows them (namespace applied). */
  consumerGroup: string;
  topic: string;
  /** The topic as the application named it (what received messages carry). */
  userTopic: string;
  /** The POP request's expType and exp. */
  expType: string;
  exp: string;
  enableTrace: boolean;
  traceTopic: string | undefined;
  invisibleDurationMs: number;
  awaitDurationMs: number;
  initMode: 0 | 1;
  ackTimeoutMs: number;
  orderly: boolean;
  instanceName: string | undefined;
  clock: Clock;
  /** The connection options passed on to the client instance (acl, tls, connectTimeoutMs, logger, …). */
  client: Omit<ClientOptions, 'namesrvAddr' | 'instanceName'>;
  inflate: ResolvedInflateOptions;
  logger: Logger;
}

/** The POP consumers' options: "must be an integer in [1, 32], got x". */
const check = optionValidator(ConsumerOptionError);

/** The longest invisible time a receive or changeInvisibleDuration may ask for. */
export const MAX_INVISIBLE_MS = 12 * 3600_000;

/** An integer option within [min, max] (dflt when undefined); ConsumerOptionError naming it otherwise. */
export function intOption(name: string, v: number | undefined, dflt: number, min: number, max: number): number {
  return check.intIn(name, v ?? dflt, min, max);
}
function nameOption(name: string, v: unknown): string {
  if (typeof v !== 'string' || v === '')
    throw new ConsumerOptionError(name, `must be a non-empty string, got ${JSON.stringify(v)}`);
  return v;
}

/** The options with defaults filled in; ConsumerOptionError naming a bad one. */
export function resolveSimpleConsumerOptions(o: SimpleConsumerOptions): ResolvedSimpleConsumerOptions {
  if (o === null || typeof o !== 'object') throw new ConsumerOptionError('options', 'must be an object');
  const { namespace } = takeNamespace(o);
  if (o.initMode !== undefined && o.initMode !== 'MIN' && o.initMode !== 'MAX')
    throw new ConsumerOptionError('initMode', `must be MIN or MAX, got ${String(o.initMode)}`);
  const badTrace = checkTraceOptions(o);
  if (badTrace) throw new ConsumerOptionError(badTrace.option, badTrace.message);
  const logger = resolveLogger(o.logger, (m) => new ConsumerOptionError('logger', m));
  const topic = nameOption('topic', o.topic);
  const expr = checkSubscriptionExpression(topic, o.filterExpression ?? '*', 'filterExpression', {
    sqlLimits: resolveSqlLimits(o.sqlLimits),
    logger,
  });
  return {
    // '' when the list comes from an address server (namesrvDomain)
    namesrvAddr:
      o.namesrvAddr === undefined && !process.env.NAMESRV_ADDR && namesrvDomainOption(o.namesrvDomain) !== undefined
        ? ''
        : nameOption('namesrvAddr', o.namesrvAddr ?? process.env.NAMESRV_ADDR),
    consumerGroup: wrapNamespace(
      namespace,
      nameOption(
        o.group === undefined && o.consumerGroup !== undefined ? 'consumerGroup' : 'group',
        groupOption(
          o as unknown as Record<string, unknown>,
          'consumerGroup',
          (option, m) => new ConsumerOptionError(option, m),
        ),
      ),
    ),
    topic: wrapNamespace(namespace, topic),
    userTopic: topic,
    expType: typeof expr === 'string' ? 'TAG' : 'SQL92',
    exp: typeof expr === 'string' ? expr : expr.sql,
    enableTrace: o.enableTrace ?? false,
    traceTopic: o.traceTopic,
    invisibleDurationMs: intOption('invisibleDurationMs', o.invisibleDurationMs, 60_000, 1000, MAX_INVISIBLE_MS),
    awaitDurationMs: intOption('awaitDurationMs', o.awaitDurationMs, 15_000, 0, 300_000),
    initMode: o.initMode === 'MIN' ? 0 : 1,
    ackTimeoutMs: intOption('ackTimeoutMs', o.ackTimeoutMs, 3000, 1, 300_000),
    orderly: o.orderly === true,
    instanceName: o.instanceName,
    clock: o.clock ?? systemClock,
    client: clientInstanceOptions(o),
    inflate: resolveInflateOptions(o),
    logger,
  };
}
