import { clientInstanceOptions, groupOption, namesrvDomainOption, type ClientOptions } from '../../client/index.js';
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
export interface SimpleConsumerOptions extends ClientOptions, InflateOptions {
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
   * TAG expression ("TagA || TagB") the broker filters with.
   * @default "*" (every message)
   */
  filterExpression?: string | undefined;
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
  consumerGroup: string;
  topic: string;
  filterExpression: string;
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
  if (o.initMode !== undefined && o.initMode !== 'MIN' && o.initMode !== 'MAX')
    throw new ConsumerOptionError('initMode', `must be MIN or MAX, got ${String(o.initMode)}`);
  return {
    // '' when the list comes from an address server (namesrvDomain)
    namesrvAddr:
      o.namesrvAddr === undefined && !process.env.NAMESRV_ADDR && namesrvDomainOption(o.namesrvDomain) !== undefined
        ? ''
        : nameOption('namesrvAddr', o.namesrvAddr ?? process.env.NAMESRV_ADDR),
    consumerGroup: nameOption(
      o.group === undefined && o.consumerGroup !== undefined ? 'consumerGroup' : 'group',
      groupOption(
        o as unknown as Record<string, unknown>,
        'consumerGroup',
        (option, m) => new ConsumerOptionError(option, m),
      ),
    ),
    topic: nameOption('topic', o.topic),
    filterExpression: o.filterExpression ?? '*',
    invisibleDurationMs: intOption('invisibleDurationMs', o.invisibleDurationMs, 60_000, 1000, MAX_INVISIBLE_MS),
    awaitDurationMs: intOption('awaitDurationMs', o.awaitDurationMs, 15_000, 0, 300_000),
    initMode: o.initMode === 'MIN' ? 0 : 1,
    ackTimeoutMs: intOption('ackTimeoutMs', o.ackTimeoutMs, 3000, 1, 300_000),
    orderly: o.orderly === true,
    instanceName: o.instanceName,
    clock: o.clock ?? systemClock,
    client: clientInstanceOptions(o),
    inflate: resolveInflateOptions(o),
    logger: resolveLogger(o.logger, (m) => new ConsumerOptionError('logger', m)),
  };
}
