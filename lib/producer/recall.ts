import {
  DLQ_GROUP_TOPIC_PREFIX,
  Operations,
  RETRY_GROUP_TOPIC_PREFIX,
  decodeRecallHandle,
} from '../../protocol/internal.js';
import { wrapNamespace, type MQClientInstance } from '../client/index.js';
import { MessageValidationError, NoRouteError } from './errors.js';
import { validateTopic } from './message.js';
import type { PublishInfoTable } from './publish-info-table.js';

/** What recallMessage needs of its producer. */
export interface RecallContext {
  instance: MQClientInstance;
  publishInfo: PublishInfoTable;
  group: string;
  createTopicKey: string;
  namespace: string | undefined;
  timeoutMs: number;
}

/**
 * RECALL_MESSAGE (370) as DefaultMQProducerImpl#recallMessage: the topic checked (no retry or DLQ
 * topic), the handle decoded (its broker name says where the message waits), the topic's route
 * looked up, then the request to that broker's master, or to a broker of the topic when the handle's
 * broker is not in the route (as Java, so that a proxy endpoint answers too). Resolves to the
 * recalled message's id (its UNIQ_KEY); a broker's refusal is a BrokerError with Apache's code
 * (ILLEGAL_OPERATION for a handle that is malformed, of another topic or broker, or whose time has
 * passed; NO_PERMISSION when the broker has recallMessageEnable off).
 */
export async function recallMessage(ctx: RecallContext, topic: string, recallHandle: string): Promise<string> {
  const fullTopic = validateTopic(wrapNamespace(ctx.namespace, topic), ctx.createTopicKey);
  if (fullTopic.startsWith(RETRY_GROUP_TOPIC_PREFIX) || fullTopic.startsWith(DLQ_GROUP_TOPIC_PREFIX))
    throw new MessageValidationError('topic', `topic is not supported: ${fullTopic} is a retry or DLQ topic`);
  const handle = decodeRecallHandle(recallHandle);
  if (!handle) throw new MessageValidationError('recallHandle', 'recall handle is invalid');
  // Java's tryToFindTopicPublishInfo: a missing route is not an error yet, only no address is
  const info = await ctx.publishInfo.find(ctx.instance, fullTopic).catch(() => null);
  let addr = ctx.instance.findBrokerMasterAddress(handle.brokerName);
  if (!addr) {
    for (const mq of info?.queues ?? []) {
      addr = ctx.instance.findBrokerMasterAddress(mq.brokerName);
      if (addr) break;
    }
  }
  if (!addr) throw new NoRouteError(fullTopic, `the broker service address of ${handle.brokerName} is not found`);
  const reply = await ctx.instance.call(
    addr,
    Operations.RECALL_MESSAGE,
    { producerGroup: ctx.group, topic: fullTopic, recallHandle, bname: handle.brokerName },
    undefined,
    { timeoutMs: ctx.timeoutMs },
  );
  return reply.header.msgId;
}
