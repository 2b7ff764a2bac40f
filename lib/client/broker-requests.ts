import createDebug from '../debug.js';
import {
  decodeMessages,
  Operations,
  queueKey,
  ResponseCode,
  type MessageExt,
  type MessageQueue,
} from '../../protocol/internal.js';
import type { RemotingClient } from '../remoting/index.js';
import type { ConsumerInner } from './consumer-inner.js';
import { BrokerRequestRefusedError } from './errors.js';
import type { Logger } from '../logger.js';
import { serve } from './operation-call.js';
import { checkTransactionState, type TransactionCheckHandler } from './transaction-check.js';

const log = createDebug('rocketwire:client');

/** What the broker-initiated processors need from the client instance. */
export interface BrokerRequestHost {
  readonly consumers: ReadonlyMap<string, ConsumerInner>;
  readonly transactionCheckers: ReadonlyMap<string, TransactionCheckHandler>;
  readonly logger: Pick<Logger, 'warn'>;
  readonly maxRouteQueues: number;
  findBrokerAddress(brokerName: string): string | undefined;
  getMinOffset(addr: string, mq: MessageQueue): Promise<number>;
  getMaxOffset(addr: string, mq: MessageQueue): Promise<number>;
}

/**
 * The requests a broker sends to its clients (Java's ClientRemotingProcessor), each served through
 * its row of the operation table (operation-call.ts's `serve`): a missing required header field
 * throws, which the connection answers with SYSTEM_ERROR (Java's decodeCommandCustomHeader throws
 * the same way). PUSH_REPLY_MESSAGE_TO_CLIENT is served by reply-message.ts.
 */
export function serveBrokerRequests(remoting: RemotingClient, host: BrokerRequestHost): void {
  serve(remoting, Operations.NOTIFY_CONSUMER_IDS_CHANGED, ({ header }) => {
    log('NOTIFY_CONSUMER_IDS_CHANGED for %s', header.consumerGroup);
    host.consumers.get(header.consumerGroup)?.doRebalance(true);
    return null;
  });
  serve(remoting, Operations.GET_CONSUMER_RUNNING_INFO, ({ header }) => {
    const c = host.consumers.get(header.consumerGroup);
    if (!c) return groupNotExist(header.consumerGroup);
    return { bodyBytes: c.runningInfo() };
  });
  serve(remoting, Operations.CONSUME_MESSAGE_DIRECTLY, async ({ header, request, conn }) => {
    const c = host.consumers.get(header.consumerGroup);
    if (!c) return groupNotExist(header.consumerGroup);
    const msg = request.body ? decodeMessages(request.body)[0] : undefined;
    if (!msg) return { code: ResponseCode.SYSTEM_ERROR, remark: 'no message in the request body' };
    const refused = directTopicRefused(conn.remoteAddress, header.consumerGroup, msg, c);
    if (refused) {
      host.logger.warn(refused.message);
      return { code: ResponseCode.SYSTEM_ERROR, remark: refused.message };
    }
    return { body: await c.consumeMessageDirectly(msg, header.brokerName ?? '') };
  });
  serve(remoting, Operations.GET_CONSUMER_STATUS_FROM_CLIENT, ({ header }) => {
    // Java answers SUCCESS with an empty table for a group it does not hold (getConsumerStatus).
    const messageQueueTable = host.consumers.get(header.group)?.consumerStatus(header.topic) ?? [];
    return { body: { messageQueueTable } };
  });
  serve(remoting, Operations.CHECK_TRANSACTION_STATE, ({ header, body, conn }) =>
    checkTransactionState(header, body, conn.remoteAddress, host.transactionCheckers),
  );
  serve(remoting, Operations.RESET_CONSUMER_CLIENT_OFFSET, async ({ header, body, conn }) => {
    const { group, topic } = header;
    const c = host.consumers.get(group);
    if (!c) {
      log('RESET_CONSUMER_CLIENT_OFFSET for unknown group %s', group);
      return null;
    }
    const offsets = new Map<string, number>();
    for (const [mq, offset] of body?.offsetTable ?? []) offsets.set(queueKey(mq), offset);
    try {
      await checkResetOffsets(host, conn.remoteAddress, group, topic, offsets, c);
    } catch (err) {
      host.logger.warn((err as Error).message);
      return null;
    }
    await c.resetOffset(topic, offsets);
    return null;
  });
}

/**
 * RESET_CONSUMER_CLIENT_OFFSET as Java's resetOffset semantics allow it: each offset of a queue
 * the consumer holds lies within the queue's [minOffset, maxOffset] on its broker (what the
 * broker's own resetOffsetByTimestamp computes: a search clamped to the queue), else the whole
 * reset is refused (BrokerRequestRefusedError) and no offset moves. A table larger than
 * maxRouteQueues is refused before anything is asked. Java's client applies any offset it is sent.
 */
async function checkResetOffsets(
  host: BrokerRequestHost,
  addr: string,
  group: string,
  topic: string,
  offsets: Map<string, number>,
  c: ConsumerInner,
): Promise<void> {
  const code = Operations.RESET_CONSUMER_CLIENT_OFFSET.code;
  const refuse = (field: string, value: string | number, why: string, option?: string): never => {
    throw new BrokerRequestRefusedError({
      addr,
      requestCode: code,
      field,
      value,
      why: `${why} (group ${group}, topic ${topic}); the offsets stay where they are`,
      option,
    });
  };
  if (offsets.size > host.maxRouteQueues) {
    refuse(
      'offsetTable.size',
      offsets.size,
      `exceeds maxRouteQueues (${host.maxRouteQueues}); raise the option maxRouteQueues`,
      'maxRouteQueues',
    );
  }
  for (const [key, offset] of offsets) {
    if (!Number.isSafeInteger(offset) || offset < 0)
      refuse(`offsetTable[${key}]`, offset, 'is not an offset (a non-negative integer below 2^53)');
  }
  const held = c.consumerStatus(topic).filter(([mq]) => offsets.has(queueKey(mq)));
  await Promise.all(
    held.map(async ([mq]) => {
      const key = queueKey(mq);
      const offset = offsets.get(key)!;
      const brokerAddr = host.findBrokerAddress(mq.brokerName) ?? addr;
      let min: number;
      let max: number;
      try {
        [min, max] = await Promise.all([host.getMinOffset(brokerAddr, mq), host.getMaxOffset(brokerAddr, mq)]);
      } catch (err) {
        refuse(
          `offsetTable[${key}]`,
          offset,
          `cannot be checked: the queue's min/max offsets from ${brokerAddr} failed: ${(err as Error).message.split('\n')[0]}`,
        );
        return;
      }
      if (offset < min || offset > max)
        refuse(`offsetTable[${key}]`, offset, `is outside the queue's [${min}, ${max}] on ${brokerAddr}`);
    }),
  );
}

/**
 * CONSUME_MESSAGE_DIRECTLY hands a message to the group's handler: only one of a topic the group
 * subscribes (its own retry topic included, whose messages carry RETRY_TOPIC, the topic they were
 * first sent to). Anything else would run the application's handler on a message it never asked
 * for. Java's consumeMessageDirectly does not look.
 */
function directTopicRefused(
  addr: string,
  group: string,
  msg: MessageExt,
  c: ConsumerInner,
): BrokerRequestRefusedError | null {
  const topics = new Set(c.subscriptions().map((s) => s.topic));
  if (topics.has(msg.topic)) return null;
  return new BrokerRequestRefusedError({
    addr,
    requestCode: Operations.CONSUME_MESSAGE_DIRECTLY.code,
    field: 'topic',
    value: msg.topic,
    why: `is not subscribed by consumer group ${group}; the message was not handed to the handler`,
  });
}

/** Java's answer for a group this process does not hold. */
function groupNotExist(group: string): { code: number; remark: string } {
  return { code: ResponseCode.SYSTEM_ERROR, remark: `The Consumer Group <${group}> not exist in this consumer` };
}
