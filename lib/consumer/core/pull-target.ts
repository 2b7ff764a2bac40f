import type { MQClientInstance } from '../../client/index.js';
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
  let target = instance.findBrokerAddressInSubscribe(mq.brokerName, pr.suggestWhichBrokerId);
  if (!target) {
    await instance.getTopicRoute(mq.topic, { refresh: true }).catch(() => undefined);
    target = instance.findBrokerAddressInSubscribe(mq.brokerName, pr.suggestWhichBrokerId);
  }
  if (!target) throw new BrokerAddressNotFoundError(mq.brokerName);
  return target;
}
