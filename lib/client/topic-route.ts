import {
  compareMessageQueue,
  decodeTopicRouteData,
  ProtocolError,
  topicRoutePublishQueues,
  topicRouteSubscribeQueues,
  type MessageQueue,
  type TopicRouteData,
} from '../../protocol/index.js';

/**
 * Reads a GET_ROUTEINFO_BY_TOPIC body (standard JSON or fastjson's unquoted broker ids, 4.8's
 * `topicSynFlag`); any malformation is a ProtocolError.
 */
export function parseTopicRouteData(body: Buffer | string): TopicRouteData {
  try {
    return decodeTopicRouteData(typeof body === 'string' ? Buffer.from(body, 'utf8') : body);
  } catch (err) {
    if (err instanceof ProtocolError) throw err;
    throw new ProtocolError(`route body is not valid: ${(err as Error).message}`, 0, { cause: err });
  }
}

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
