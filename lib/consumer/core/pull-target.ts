import { brokerNameOf, type MQClientInstance } from '../../client/index.js';
import { BrokerAddressNotFoundError } from '../errors.js';
import type { PullRequest } from './pull-request.js';

/**
 * The broker a pull of `pr` goes to (Java's findBrokerAddressInSubscribe with the broker's suggested
 * id), after one route refresh when the cached route lacks it; BrokerAddressNotFoundError when none.
 */
export async function pullTarget(
  instance: MQClientInstance,
  pr: PullRequest,
): Promise<{ addr: string; slave: boolean }> {
  const mq = pr.messageQueue;
  // A static topic's logic queue is pulled from the broker leading it (static-topic.ts).
  let target = instance.findBrokerAddressInSubscribe(brokerNameOf(instance, mq), pr.suggestWhichBrokerId);
  if (!target) {
    await instance.getTopicRoute(mq.topic, { refresh: true }).catch(() => undefined);
    target = instance.findBrokerAddressInSubscribe(brokerNameOf(instance, mq), pr.suggestWhichBrokerId);
  }
  if (!target) throw new BrokerAddressNotFoundError(brokerNameOf(instance, mq));
  return target;
}
