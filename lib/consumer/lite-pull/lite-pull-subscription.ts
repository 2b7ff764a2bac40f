import { ExpressionType, type SubscriptionData } from '../../../protocol/internal.js';
import { checkTopicName } from '../../../protocol/resource-names.js';
import type { MQClientInstance } from '../../client/index.js';
import type { ConsumerConfig } from '../core/consumer-config.js';
import {
  buildSubscription,
  checkClientInBroker,
  checkSubscriptionExpression,
  type SubscriptionExpression,
} from '../core/sql-subscription.js';
import { ConsumerOptionError } from '../errors.js';

/**
 * The lite pull consumer's subscribe(topic, expression): a tag expression or `{ sql }`, checked as
 * the push consumer checks it (sql-subscription.ts, the consumer's sqlLimits), built as Java's
 * FilterAPI.build (subVersion the clock's now; a SQL92 pull sends it, a TAG pull sends 0).
 */
export function liteSubscription(
  topic: string,
  expression: unknown,
  base: Pick<ConsumerConfig, 'clock' | 'sqlLimits' | 'logger'>,
): SubscriptionData {
  if (typeof topic !== 'string' || topic === '') throw new ConsumerOptionError('topic', 'must be a non-empty string');
  const bad = checkTopicName(topic);
  if (bad) throw new ConsumerOptionError('topic', bad);
  const expr: SubscriptionExpression = checkSubscriptionExpression(topic, expression, 'expression', {
    sqlLimits: base.sqlLimits,
    logger: base.logger,
  });
  return buildSubscription(topic, expr, base.clock.now());
}

/** What a subscription made while the consumer runs needs of it. */
interface RunningLite {
  readonly instance: MQClientInstance | null;
  readonly groupName: string;
  readonly config: { base: Pick<ConsumerConfig, 'logger' | 'mqClientApiTimeoutMs'> };
  readonly subscriptionInner: Map<string, SubscriptionData>;
  doRebalance(): void;
}

/**
 * subscribe() on a running consumer: a SQL92 subscription is checked with the broker
 * (CHECK_CLIENT_CONFIG) first; one refused is dropped again and logged at warn, since subscribe()
 * has returned by then. Then the heartbeat carries it and the rebalance takes its queues.
 */
export function subscribedWhileRunning(
  c: RunningLite,
  sd: SubscriptionData,
  debug: (f: string, ...a: unknown[]) => void,
): void {
  const instance = c.instance;
  if (!instance) return;
  const base = c.config.base;
  const check =
    sd.expressionType === ExpressionType.TAG
      ? Promise.resolve()
      : checkClientInBroker(instance, c.groupName, [sd], base.mqClientApiTimeoutMs).catch((err: unknown) => {
          if (c.subscriptionInner.get(sd.topic) === sd) c.subscriptionInner.delete(sd.topic);
          throw err;
        });
  check
    .then(() => instance.sendHeartbeatToAllBrokers())
    .then(
      () => c.doRebalance(),
      (err: unknown) => {
        base.logger.warn(
          `lite pull consumer ${c.groupName}: subscribing to ${sd.topic} failed: ${(err as Error)?.message ?? err}`,
        );
        debug('subscribe of %s failed: %O', sd.topic, err);
      },
    );
}
