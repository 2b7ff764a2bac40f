import {
  compareMessageQueue,
  topicRoutePublishQueues,
  topicRouteSubscribeQueues,
  type MessageQueue,
  type TopicRouteData,
} from '../../protocol/index.js';

/** Subscribe set (§8.2): queues 0..readQueueNums-1 of every readable QueueData, in Java's MessageQueue order. */
export function topicRouteToSubscribeQueues(topic: string, route: TopicRouteData): MessageQueue[] {
  return topicRouteSubscribeQueues(topic, route).sort(compareMessageQueue);
}

/**
 * Publish list (§8.2): QueueDatas sorted by broker name; writable ones whose broker has a master give
 * queues 0..writeQueueNums-1. orderTopicConf ("brokerName:nums;...") replaces this when present.
 */
export function topicRouteToPublishQueues(topic: string, route: TopicRouteData): MessageQueue[] {
  return topicRoutePublishQueues(topic, route);
}
