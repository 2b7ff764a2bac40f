import { CLIENT_INNER_PRODUCER_GROUP, type HeartbeatData } from '../../protocol/index.js';
import type { ConsumerInner } from './consumer-inner.js';

/**
 * HeartbeatData of a 4.9 client
 * (docs/protocol-facts.md#heartbeat-data): producers by group, one ConsumerData per consumer, and
 * CLIENT_INNER_PRODUCER whenever a consumer exists (Java's consumer process always starts it).
 */
export function buildHeartbeatData(
  clientId: string,
  producerGroups: Iterable<string>,
  consumers: Iterable<ConsumerInner>,
): HeartbeatData {
  const consumerDataSet: HeartbeatData['consumerDataSet'] = [];
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
