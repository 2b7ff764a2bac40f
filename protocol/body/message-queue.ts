import { toJavaJson } from '../json/java-json.js';
import { parseFastjson } from '../json/fastjson-parse.js';
import { asObject, reqNumber, reqString } from './shape.js';

/**
 * A queue: JSON `{"brokerName":…,"queueId":…,"topic":…}` (keys in that order).
 * @category Shared by every client
 */
export interface MessageQueue {
  /** The queue's topic. */
  topic: string;
  /** The broker that holds the queue. */
  brokerName: string;
  /** The queue's id on that broker. */
  queueId: number;
}

/** A queue object whose keys are in Java's JSON order (what JSON.stringify keeps: insertion order). */
export function messageQueue(topic: string, brokerName: string, queueId: number): MessageQueue {
  return { brokerName, queueId, topic };
}

/** Java's MessageQueue.toString(), which is also the consistent-hash key of a queue. */
export function messageQueueToString(mq: MessageQueue): string {
  return `MessageQueue [topic=${mq.topic}, brokerName=${mq.brokerName}, queueId=${mq.queueId}]`;
}

export function messageQueueToJson(mq: MessageQueue): { brokerName: string; queueId: number; topic: string } {
  return { brokerName: mq.brokerName, queueId: mq.queueId, topic: mq.topic };
}

export function readMessageQueue(v: unknown, path: string): MessageQueue {
  const o = asObject(v, path);
  return {
    topic: reqString(o, 'topic', path),
    brokerName: reqString(o, 'brokerName', path),
    queueId: reqNumber(o, 'queueId', path),
  };
}

/**
 * The canonical key text of a queue, as parseFastjson turns an object map key into a string:
 * `{"brokerName":"b","queueId":0,"topic":"T"}`: the wire form of a queue used as a JSON map key
 * (ResetOffsetBody.offsetTable, ConsumerRunningInfo.mqTable). For a Map key use queueKey.
 */
export function messageQueueKey(mq: MessageQueue): string {
  return toJavaJson(messageQueueToJson(mq));
}

/** Parse a key produced by parseFastjson (or messageQueueKey) back into a queue. */
export function parseMessageQueueKey(key: string, path = 'key'): MessageQueue {
  return readMessageQueue(parseFastjson(key), path);
}

/** Java's MessageQueue.compareTo: topic, then broker name, then queue id. */
export function compareMessageQueue(a: MessageQueue, b: MessageQueue): number {
  if (a.topic !== b.topic) return a.topic < b.topic ? -1 : 1;
  if (a.brokerName !== b.brokerName) return a.brokerName < b.brokerName ? -1 : 1;
  return a.queueId - b.queueId;
}

/**
 * The Map key of a queue in the client's and the broker's tables: `topic@brokerName@queueId` ("@"
 * cannot occur in a topic or broker name). The consumer keys its process queues, offsets and the
 * offsets RESET_CONSUMER_CLIENT_OFFSET hands it by it; the broker keys its queue locks by it.
 */
export function queueKey(mq: MessageQueue): string {
  return `${mq.topic}@${mq.brokerName}@${mq.queueId}`;
}
