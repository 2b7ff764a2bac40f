import createDebug from '../../debug.js';
import { messageQueue, type MessageQueue } from '../../../protocol/internal.js';
import {
  MQClientInstance,
  resolveInstanceName,
  topicRouteToSubscribeQueues,
  type ConsumerInner,
} from '../../client/index.js';
import type { ConsumerConfig } from './consumer-config.js';

const log = createDebug('rocketwire:consumer');

/**
 * The client instance a consumer runs on (Java's MQClientManager.getOrCreateMQClientInstance),
 * with the consumer registered under its group: CLUSTERING consumers share the instance of their
 * instanceName (the pid by default), BROADCASTING ones get "DEFAULT" unless named. When the group
 * cannot be registered (the same group twice on one instance) the instance is released and the
 * error thrown. Used by the push and the lite pull consumer.
 */
export async function acquireConsumerInstance(
  config: Pick<
    ConsumerConfig,
    | 'messageModel'
    | 'instanceName'
    | 'client'
    | 'namesrvAddr'
    | 'persistOffsetIntervalMs'
    | 'clock'
    | 'consumerGroup'
    | 'logger'
  >,
  consumer: ConsumerInner,
): Promise<MQClientInstance> {
  const instanceName =
    config.messageModel === 'CLUSTERING'
      ? resolveInstanceName(config.instanceName)
      : (config.instanceName ?? 'DEFAULT');
  const instance = MQClientInstance.acquire({
    ...config.client,
    namesrvAddr: config.namesrvAddr === '' ? undefined : config.namesrvAddr,
    instanceName,
    persistOffsetIntervalMs: config.persistOffsetIntervalMs,
    clock: config.clock,
  });
  try {
    instance.registerConsumer(config.consumerGroup, consumer);
  } catch (err) {
    await instance.release(config.logger);
    throw err;
  }
  return instance;
}

/**
 * start()'s name-server check (unless startWithoutNameServer): any answer to a route request for
 * `topic` within connectTimeoutMs will do; else NameServerUnavailableError, after which the caller
 * gives the instance back and returns to its initial state.
 */
export async function checkNameServerAtStart(
  instance: MQClientInstance,
  config: Pick<ConsumerConfig, 'startWithoutNameServer'>,
  topic: string,
): Promise<void> {
  if (config.startWithoutNameServer) return;
  await instance.checkNameServer(topic);
}

/** The rebalance's view of a topic's queues (RebalanceImpl#topicSubscribeInfoTable); null when its route cannot be had. */
export async function subscribeQueuesOf(instance: MQClientInstance, topic: string): Promise<MessageQueue[] | null> {
  try {
    const route = await instance.getTopicRoute(topic);
    return topicRouteToSubscribeQueues(topic, route).map((q) => messageQueue(q.topic, q.brokerName, q.queueId));
  } catch (err) {
    log('route of %s: %s', topic, (err as Error).message);
    return null;
  }
}

/** Who hears which broker answered a request or failed (the push consumer's broker events). */
interface BrokerReport {
  answered(brokerName: string, addr: string): void;
  failed(brokerName: string, addr: string, err: unknown): void;
}

/**
 * The group's client ids from one broker of the topic's route, picked at random (Java's
 * findConsumerIdList); null when none can be asked or it fails. With `asked` (one rebalance round's
 * answers by broker name), a broker of the route already asked this round answers from there: the
 * group's list does not depend on the topic. `report` hears which broker answered or failed (the push
 * consumer's broker events).
 */
export function consumerIdsOf(
  instance: MQClientInstance,
  group: string,
  topic: string,
  report?: BrokerReport,
  asked?: Map<string, Promise<string[] | null>>,
): Promise<string[] | null> {
  const route = instance.cachedTopicRoute(topic);
  if (!route || route.brokerDatas.length === 0) return Promise.resolve(null);
  if (asked) {
    for (const b of route.brokerDatas) {
      const known = asked.get(b.brokerName);
      if (known) return known;
    }
  }
  const b = route.brokerDatas[Math.floor(Math.random() * route.brokerDatas.length)]!;
  const addr = instance.findBrokerAddress(b.brokerName);
  if (!addr) return Promise.resolve(null);
  const ids = askConsumerIds(instance, group, b.brokerName, addr, report).then((list) => {
    // a failed answer is not reused: the next topic asks again
    if (list === null) asked?.delete(b.brokerName);
    return list;
  });
  asked?.set(b.brokerName, ids);
  return ids;
}

async function askConsumerIds(
  instance: MQClientInstance,
  group: string,
  brokerName: string,
  addr: string,
  report?: BrokerReport,
): Promise<string[] | null> {
  try {
    const ids = await instance.getConsumerIdList(addr, group);
    report?.answered(brokerName, addr);
    return ids;
  } catch (err) {
    log('GET_CONSUMER_LIST_BY_GROUP at %s failed: %s', addr, (err as Error).message);
    report?.failed(brokerName, addr, err);
    return null;
  }
}
