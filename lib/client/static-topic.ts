import { BrokerError } from '../remoting/index.js';
import {
  isLogicQueueBroker,
  ResponseCode,
  staticTopicEndpoints,
  type MessageQueue,
  type TopicRouteData,
} from '../../protocol/internal.js';

/** What the lookup needs of the client instance: the cached route of a topic. */
export interface StaticTopicRoutes {
  cachedTopicRoute(topic: string): TopicRouteData | undefined;
}

/**
 * queueId → leading broker of each logic queue, per route object: a route is replaced, never changed,
 * when it is fetched again, so the table is built once per fetch and dropped with the route.
 */
const endpointsByRoute = new WeakMap<TopicRouteData, Map<string, string>>();

function endpointKey(brokerName: string, queueId: number): string {
  return `${brokerName}\u0000${queueId}`;
}

function endpointsOf(topic: string, route: TopicRouteData): Map<string, string> {
  let table = endpointsByRoute.get(route);
  if (!table) {
    table = new Map();
    for (const e of staticTopicEndpoints(topic, route.topicQueueMappingByBroker))
      table.set(endpointKey(e.queue.brokerName, e.queue.queueId), e.brokerName);
    endpointsByRoute.set(route, table);
  }
  return table;
}

/**
 * The broker a request about `mq` goes to (Java's MQClientInstance.getBrokerNameFromMessageQueue):
 * its own broker name, unless `mq` is a static topic's logic queue, whose requests go to the broker
 * that leads it in the cached route (`__syslo__none__` when none does, which has no address). The
 * broker then maps the logic queue id and offset onto its physical queue, or forwards the request
 * to the broker holding an older stretch of it.
 */
export function brokerNameOf(routes: StaticTopicRoutes, mq: MessageQueue): string {
  if (!isLogicQueueBroker(mq.brokerName)) return mq.brokerName;
  const route = routes.cachedTopicRoute(mq.topic);
  if (!route) return mq.brokerName;
  return endpointsOf(mq.topic, route).get(endpointKey(mq.brokerName, mq.queueId)) ?? mq.brokerName;
}

/** What refreshOnNotLeader needs of the client instance. */
export interface StaticTopicRefresh {
  getTopicRoute(topic: string, opts?: { refresh?: boolean }): Promise<TopicRouteData>;
}

/**
 * After NOT_LEADER_FOR_QUEUE (a static topic's logic queue was remapped to another broker), the
 * route is fetched again at once, so the next attempt goes to the new leader instead of waiting for
 * the periodic refresh as Java's client does. Concurrent callers share one fetch per topic
 * (TopicRouteTable), so a burst of refusals asks the name server once.
 */
export async function refreshOnNotLeader(routes: StaticTopicRefresh, topic: string, err: unknown): Promise<void> {
  if (err instanceof BrokerError && err.code === ResponseCode.NOT_LEADER_FOR_QUEUE)
    await routes.getTopicRoute(topic, { refresh: true }).catch(() => undefined);
}
