import type { ConsumerInner } from './consumer-inner.js';
import { toJavaJsonLocal } from './fastjson.js';

/** Group of the internal producer every Java consumer process announces (§8.1). */
export const CLIENT_INNER_PRODUCER_GROUP = 'CLIENT_INNER_PRODUCER';

export interface HeartbeatConsumerData {
  groupName: string;
  consumeType: string;
  messageModel: string;
  consumeFromWhere: string;
  subscriptionDataSet: {
    classFilterMode: boolean;
    codeSet: number[];
    expressionType: string;
    subString: string;
    subVersion: number;
    tagsSet: string[];
    topic: string;
  }[];
  unitMode: boolean;
}

export interface HeartbeatDataInit {
  clientID: string;
  producerDataSet: { groupName: string }[];
  consumerDataSet: HeartbeatConsumerData[];
}

/**
 * HeartbeatData of a 4.9 client (§8.1): producers by group, one ConsumerData per consumer, and
 * CLIENT_INNER_PRODUCER whenever a consumer exists (Java's consumer process always starts it).
 */
export function buildHeartbeatData(
  clientId: string,
  producerGroups: Iterable<string>,
  consumers: Iterable<ConsumerInner>,
): HeartbeatDataInit {
  const consumerDataSet: HeartbeatConsumerData[] = [];
  for (const c of consumers) {
    consumerDataSet.push({
      groupName: c.groupName,
      consumeType: c.consumeType,
      messageModel: c.messageModel,
      consumeFromWhere: c.consumeFromWhere,
      subscriptionDataSet: c.subscriptions().map((s) => ({
        classFilterMode: s.classFilterMode ?? false,
        codeSet: [...s.codeSet],
        expressionType: s.expressionType,
        subString: s.subString,
        subVersion: s.subVersion,
        tagsSet: [...s.tagsSet],
        topic: s.topic,
      })),
      unitMode: false,
    });
  }
  const groups = new Set(producerGroups);
  if (consumerDataSet.length > 0) groups.add(CLIENT_INNER_PRODUCER_GROUP);
  return {
    clientID: clientId,
    consumerDataSet,
    producerDataSet: [...groups].map((groupName) => ({ groupName })),
  };
}

/** The HEART_BEAT body: fastjson form, keys sorted. */
export function encodeHeartbeatBody(data: HeartbeatDataInit): Buffer {
  return Buffer.from(toJavaJsonLocal(data), 'utf8');
}
