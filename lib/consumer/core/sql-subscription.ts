import { SqlFilterRefusedError } from '../errors.js';
import {
  ExpressionType,
  Operations,
  SQL92_DEFAULT_MAX_LENGTH,
  SQL92_DEFAULT_MAX_NODES,
  SqlLimitError,
  SqlParseError,
  buildSubscriptionData,
  compileSql92,
  type SubscriptionData,
} from '../../../protocol/internal.js';
import type { MQClientInstance } from '../../client/index.js';
import type { Logger } from '../../logger.js';
import { ConsumerOptionError } from '../errors.js';
import { optionValidator } from '../../validate.js';

/** The consumer's `sqlLimits` option (PushConsumerOptions) checked, defaults filled in; null when not given (then expressions past the defaults are only warned about). */
export function resolveSqlLimits(
  o: { maxLength?: number; maxNodes?: number } | undefined,
): { maxLength: number; maxNodes: number } | null {
  if (o === undefined) return null;
  if (o === null || typeof o !== 'object')
    throw new ConsumerOptionError('sqlLimits', 'must be { maxLength?, maxNodes? }');
  const int = (k: 'maxLength' | 'maxNodes', dflt: number): number => {
    return optionValidator(ConsumerOptionError).intIn(`sqlLimits.${k}`, o[k] ?? dflt, 1, 16 * 1024 * 1024);
  };
  return { maxLength: int('maxLength', SQL92_DEFAULT_MAX_LENGTH), maxNodes: int('maxNodes', SQL92_DEFAULT_MAX_NODES) };
}

/** What checkSubscriptionExpression needs of the consumer's options for a SQL92 expression. */
export interface SqlCheckOptions {
  sqlLimits: { maxLength: number; maxNodes: number } | null;
  logger: Logger;
}

/**
 * What a subscription is given as: a tag expression ("*", "TagA || TagB"), or `{ sql }`, a SQL92
 * expression over message properties (Java's MessageSelector.bySql) that the broker evaluates;
 * it needs a broker started with enablePropertyFilter=true.
 * @category Consuming
 */
export type SubscriptionExpression = string | { sql: string };

/**
 * Validate an expression as subscribe() and the `subscriptions` option take it. A SQL92 one is
 * parsed here as the broker will parse it (Java sends it unparsed and fails later, at start,
 * with the broker's SUBSCRIPTION_PARSE_FAILED); an error names the option and, through its
 * cause (SqlParseError), the position. Stricter than the broker in one way: an expression the
 * broker would read only in part (`a LIKE 'x%'` is read as `a`, which matches nothing) is refused,
 * naming the position where the broker's parser stops.
 *
 * With the `sqlLimits` option an expression past its bounds is refused with SqlLimitError (its
 * `option` names sqlLimits.maxLength or sqlLimits.maxNodes); without it, one past the embedded
 * broker's defaults is accepted (Apache's broker has no bound) and a warning says so.
 */
export function checkSubscriptionExpression(
  topic: string,
  expr: unknown,
  option: string,
  check?: SqlCheckOptions,
): SubscriptionExpression {
  if (typeof expr === 'string') return expr;
  if (expr === null || typeof expr !== 'object' || !('sql' in expr)) {
    throw new ConsumerOptionError(option, `expression of ${topic} must be a tag expression string or { sql: string }`);
  }
  const keys = Object.keys(expr).filter((k) => k !== 'sql');
  if (keys.length > 0)
    throw new ConsumerOptionError(
      option,
      `expression of ${topic}: unknown key ${JSON.stringify(keys[0])} (only "sql")`,
    );
  const sql = (expr as { sql: unknown }).sql;
  if (typeof sql !== 'string' || sql.trim() === '')
    throw new ConsumerOptionError('sql', `the SQL92 expression of ${topic} must be a non-empty string`);
  try {
    const { ignoredFrom } = compileSqlSubscription(topic, sql, check);
    if (ignoredFrom !== null) {
      const rest = sql.slice(ignoredFrom);
      throw new ConsumerOptionError(
        'sql',
        `the SQL92 expression of ${topic} does not parse past position ${ignoredFrom} (${JSON.stringify(rest.length > 20 ? rest.slice(0, 20) + '…' : rest)}): ` +
          `the broker would ignore everything from there (RocketMQ's SelectorParser stops at the first token that cannot continue the expression)`,
      );
    }
  } catch (err) {
    if (err instanceof SqlLimitError) throw err;
    if (err instanceof SqlParseError)
      throw new ConsumerOptionError('sql', `the SQL92 expression of ${topic} does not parse: ${err.message}`, {
        cause: err,
      });
    throw err;
  }
  return { sql };
}

function compileSqlSubscription(
  topic: string,
  sql: string,
  check: SqlCheckOptions | undefined,
): ReturnType<typeof compileSql92> {
  if (check?.sqlLimits) {
    const { maxLength, maxNodes } = check.sqlLimits;
    return compileSql92(sql, {
      maxLength,
      maxNodes,
      options: { maxLength: 'sqlLimits.maxLength', maxNodes: 'sqlLimits.maxNodes' },
    });
  }
  const f = compileSql92(sql);
  const past =
    sql.length > SQL92_DEFAULT_MAX_LENGTH
      ? `${sql.length} characters (maxLength ${SQL92_DEFAULT_MAX_LENGTH})`
      : f.nodes > SQL92_DEFAULT_MAX_NODES
        ? `${f.nodes} nodes (maxNodes ${SQL92_DEFAULT_MAX_NODES})`
        : null;
  if (past && check) {
    check.logger.warn(
      `consumer: the SQL92 expression of topic ${topic} has ${past}, past what a rocketwire broker accepts by default ` +
        `(its sqlMaxLength / sqlMaxNodes; Apache's has no bound); set the consumer option sqlLimits to refuse such expressions here`,
    );
  }
  return f;
}

/** FilterAPI.build for either kind: a SQL92 subscription has expressionType SQL92 and the SQL as subString. */
export function buildSubscription(topic: string, expr: SubscriptionExpression, subVersion: number): SubscriptionData {
  return typeof expr === 'string'
    ? buildSubscriptionData(topic, expr, subVersion)
    : buildSubscriptionData(topic, expr.sql, subVersion, ExpressionType.SQL92);
}

/**
 * MQClientInstance.checkClientInBroker, as DefaultMQPushConsumerImpl.start calls it before the
 * first heartbeat: for every subscription that is not TAG, CHECK_CLIENT_CONFIG (no header; body
 * clientId, group, subscriptionData) to one broker of the topic (Java assumes the brokers of a
 * cluster are configured alike); a topic with no route yet is skipped. Any failure fails start.
 */
export async function checkClientInBroker(
  instance: MQClientInstance,
  group: string,
  subs: Iterable<SubscriptionData>,
  timeoutMs?: number,
): Promise<void> {
  for (const sd of subs) {
    if (sd.expressionType === ExpressionType.TAG) continue;
    const addr = await brokerAddrByTopic(instance, sd.topic);
    if (addr === undefined) continue;
    try {
      await instance.invoke(
        addr,
        Operations.CHECK_CLIENT_CONFIG,
        {},
        { clientId: instance.clientId, group, subscriptionData: sd },
        { timeoutMs },
      );
    } catch (err) {
      throw new SqlFilterRefusedError(sd.topic, addr, err);
    }
  }
}

/** findBrokerAddrByTopic: a broker of the topic's route, its master when it has one. */
async function brokerAddrByTopic(instance: MQClientInstance, topic: string): Promise<string | undefined> {
  const route = await instance.getTopicRoute(topic).catch(() => undefined);
  const datas = route?.brokerDatas ?? [];
  if (datas.length === 0) return undefined;
  const bd = datas[Math.floor(Math.random() * datas.length)]!;
  const addrs = bd.brokerAddrs as Record<string, string>;
  return addrs['0'] ?? Object.values(addrs)[0];
}
