import {
  compareMessageQueue,
  topicRoutePublishQueues,
  topicRouteSubscribeQueues,
  type MessageQueue,
  type TopicRouteData,
} from '../../protocol/index.js';
import { RouteLimitError } from './errors.js';

/**
 * Subscribe set (docs/protocol-facts.md#topic-route): queues 0..readQueueNums-1 of every readable QueueData, in Java's
 * MessageQueue order.
 */
export function topicRouteToSubscribeQueues(topic: string, route: TopicRouteData): MessageQueue[] {
  return topicRouteSubscribeQueues(topic, route).sort(compareMessageQueue);
}

/**
 * Publish list (docs/protocol-facts.md#topic-route): QueueDatas sorted by broker name; writable ones
 * whose broker has a master give
 * queues 0..writeQueueNums-1. orderTopicConf ("brokerName:nums;...") replaces this when present.
 */
export function topicRouteToPublishQueues(topic: string, route: TopicRouteData): MessageQueue[] {
  return topicRoutePublishQueues(topic, route);
}

/** The bounds a route must stay within (ClientOptions.maxRouteQueues, maxRouteBrokers). */
export interface RouteLimits {
  maxRouteQueues: number;
  maxRouteBrokers: number;
}

/**
 * Refuses a route whose counts would make the client build absurd queue lists or tables: every
 * readQueueNums / writeQueueNums a non-negative integer, the queues of the route (per QueueData
 * the larger of the two, and orderTopicConf's counts) at most `maxRouteQueues` in all, the
 * BrokerDatas, the QueueDatas and the addresses of one BrokerData at most `maxRouteBrokers` each.
 * Runs before any queue list is built, in time linear in the route's size (which the frame bounds).
 * Java's client has no such check: a name server answering readQueueNums 2^31 makes
 * topicRouteData2TopicSubscribeInfo loop 2^31 times.
 */
export function checkTopicRoute(topic: string, route: TopicRouteData, addr: string, limits: RouteLimits): void {
  const refuse = (field: string, value: number, limit: number, option: string): never => {
    throw new RouteLimitError({ addr, topic, field, value, limit, option });
  };
  const { maxRouteQueues, maxRouteBrokers } = limits;
  if (route.brokerDatas.length > maxRouteBrokers)
    refuse('brokerDatas.length', route.brokerDatas.length, maxRouteBrokers, 'maxRouteBrokers');
  if (route.queueDatas.length > maxRouteBrokers)
    refuse('queueDatas.length', route.queueDatas.length, maxRouteBrokers, 'maxRouteBrokers');
  for (let i = 0; i < route.brokerDatas.length; i++) {
    let n = 0;
    for (const _ in route.brokerDatas[i]!.brokerAddrs) n++;
    if (n > maxRouteBrokers) refuse(`brokerDatas[${i}].brokerAddrs`, n, maxRouteBrokers, 'maxRouteBrokers');
  }
  const count = (field: string, v: number): number => {
    if (!Number.isInteger(v) || v < 0) refuse(field, v, maxRouteQueues, 'maxRouteQueues');
    if (v > maxRouteQueues) refuse(field, v, maxRouteQueues, 'maxRouteQueues');
    return v;
  };
  let total = 0;
  for (let i = 0; i < route.queueDatas.length; i++) {
    const q = route.queueDatas[i]!;
    const r = count(`queueDatas[${i}].readQueueNums`, q.readQueueNums);
    const w = count(`queueDatas[${i}].writeQueueNums`, q.writeQueueNums);
    total += Math.max(r, w);
    if (total > maxRouteQueues) refuse('queueDatas (queues of the route)', total, maxRouteQueues, 'maxRouteQueues');
  }
  if (route.topicQueueMappingByBroker) {
    // A static topic's logic queues: one per id up to the largest totalQueues of each scope.
    const perScope = new Map<string, number>();
    let brokers = 0;
    for (const [name, info] of Object.entries(route.topicQueueMappingByBroker)) {
      if (++brokers > maxRouteBrokers) refuse('topicQueueMappingByBroker', brokers, maxRouteBrokers, 'maxRouteBrokers');
      const n = count(`topicQueueMappingByBroker.${name}.totalQueues`, info.totalQueues);
      perScope.set(info.scope, Math.max(perScope.get(info.scope) ?? 0, n));
    }
    let logic = 0;
    for (const n of perScope.values()) logic += n;
    if (logic > maxRouteQueues)
      refuse('topicQueueMappingByBroker (logic queues of the route)', logic, maxRouteQueues, 'maxRouteQueues');
  }
  if (route.orderTopicConf) {
    let order = 0;
    for (const item of route.orderTopicConf.split(';')) {
      const [name, nums] = item.split(':');
      if (!name || nums === undefined) continue;
      order += count('orderTopicConf', Number(nums));
      if (order > maxRouteQueues)
        refuse('orderTopicConf (queues of the route)', order, maxRouteQueues, 'maxRouteQueues');
    }
  }
}
