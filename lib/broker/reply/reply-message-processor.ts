import createDebug from '../../debug.js';
import {
  decodeProperties,
  encodeProperties,
  Operations,
  PermName,
  ResponseCode,
  setProperty,
  type SendMessageRequestHeader,
} from '../../../protocol/internal.js';
import type { RemotingConnection, RemotingServer } from '../../remoting/index.js';
import type { Clock } from '../../clock.js';
import { BROKER_VERSION } from '../broker-version.js';
import { optionValidator } from '../../validate.js';
import { BrokerOptionError } from '../errors.js';
import { brokerOptionCheck } from '../option-check.js';

/** The reply options' switches: `must be true or false, got "yes"`. */
const switchCheck = optionValidator(BrokerOptionError, { boolean: 'true or false', shown: 'json' });
import type { ConsumerManager } from '../consumer-manager.js';
import { socketAddressText, type MessageInner } from '../message-record.js';
import { topicNotExist, type BrokerContext } from '../processor/broker-context.js';
import { answerTo, callClient, fail, registerOperation, type Answer } from '../processor/request-processor.js';
import { addTraceFields } from '../processor/send-message-processor.js';
import { DEFAULT_MAX_PENDING_REPLY_REQUESTS, ReplyRequestTable } from './reply-request-table.js';

const log = createDebug('rocketwire:broker');

/** Broker2Client#callClient waits this long for the requester's answer to a push. */
export const PUSH_REPLY_TIMEOUT_MS = 10_000;

/** The topic replies of a cluster go to (MixAll.getReplyTopic); the broker creates it at start with one queue. */
export function replyTopicOf(clusterName: string): string {
  return `${clusterName}_REPLY_TOPIC`;
}

/** The `storeReplyMessageEnable` broker option: a boolean, default true (BrokerOptionError naming it otherwise). */
export function resolveStoreReplyMessageEnable(value: unknown): boolean {
  if (value === undefined) return true;
  return switchCheck.boolean('storeReplyMessageEnable', value);
}

/**
 * The table of waiting requests for the `checkReplyRequests` / `maxPendingReplyRequests` broker
 * options (null when the check is off); BrokerOptionError naming a bad one.
 */
export function createReplyRequestTable(
  o: { checkReplyRequests?: unknown; maxPendingReplyRequests?: unknown },
  clock: Clock,
): ReplyRequestTable | null {
  if (o.checkReplyRequests !== undefined) switchCheck.boolean('checkReplyRequests', o.checkReplyRequests);
  const max = brokerOptionCheck.intIn(
    'maxPendingReplyRequests',
    o.maxPendingReplyRequests ?? DEFAULT_MAX_PENDING_REPLY_REQUESTS,
    1,
    10_000_000,
  );
  return o.checkReplyRequests === false ? null : new ReplyRequestTable(clock, max);
}

/** What the reply processor needs of its broker: the processors' context, its own address and its setting. */
export interface ReplyBrokerContext extends BrokerContext {
  /** "ip:port" the broker advertises: the pushed reply's storeHost. */
  readonly address: string;
}

/**
 * The connection of the producer whose heartbeat named `clientId` (ProducerManager#findChannel: the
 * channel of the client's latest producer registration), or undefined when none is open.
 */
export function findProducerChannel(consumers: ConsumerManager, clientId: string): RemotingConnection | undefined {
  let best: { conn: RemotingConnection; lastUpdate: number } | undefined;
  for (const channels of consumers.producerGroups.values()) {
    for (const [conn, p] of channels) {
      if (p.clientId !== clientId || conn.closed) continue;
      if (!best || p.lastUpdate >= best.lastUpdate) best = { conn, lastUpdate: p.lastUpdate };
    }
  }
  return best?.conn;
}

/**
 * ReplyMessageProcessor: SEND_REPLY_MESSAGE (324, V1 keys) and SEND_REPLY_MESSAGE_V2 (325). The reply
 * is pushed to the requester with PUSH_REPLY_MESSAGE_TO_CLIENT (326) on the connection of the
 * producer whose client id is the reply's REPLY_TO_CLIENT, and the replier is answered SUCCESS with
 * msgId "0" once the requester took it, else SYSTEM_ERROR saying why (no REPLY_TO_CLIENT, no such
 * client, the push failed or timed out after 10 s). With `storeReplyMessageEnable` (default true, as
 * Apache's) the reply is also stored in the reply topic, whatever the push's outcome, and the answer
 * then carries the stored offset msgId and queue offset.
 */
export class ReplyMessageProcessor {
  constructor(
    private readonly ctx: ReplyBrokerContext,
    private readonly storeReplyMessageEnable = true,
  ) {}

  register(server: RemotingServer): void {
    for (const op of [Operations.SEND_REPLY_MESSAGE, Operations.SEND_REPLY_MESSAGE_V2]) {
      // as every send answer: the Java client reads MSG_REGION and TRACE_ON without a null check
      // (on the handler's answers only: an undecodable request is answered without them)
      registerOperation(server, op, async ({ header, body, request, conn }) =>
        addTraceFields(answerTo(op, request, await this.process(conn, header, body))),
      );
    }
  }

  private async process(conn: RemotingConnection, h: SendMessageRequestHeader, body: Buffer): Promise<Answer> {
    // msgCheck: the topic must exist and be writable (the reply topic is made at start), the queue be one of its
    const config = this.ctx.topics.get(h.topic);
    if (!config) return topicNotExist(h.topic);
    if ((config.perm & PermName.PERM_WRITE) === 0)
      return fail(ResponseCode.NO_PERMISSION, `the topic[${h.topic}] sending message is forbidden`);
    let queueId = h.queueId;
    if (queueId < 0 && config.writeQueueNums > 0) queueId = Math.floor(Math.random() * config.writeQueueNums);
    if (queueId < 0 || queueId >= Math.max(config.readQueueNums, config.writeQueueNums)) {
      return fail(
        ResponseCode.SYSTEM_ERROR,
        `request queueId[${queueId}] is illegal, ${JSON.stringify(config)} Producer: ${conn.remoteAddress}`,
      );
    }
    const properties = decodeProperties(h.properties ?? '');
    const pushed = await this.push(conn, h, properties, body);
    if (pushed.ok === 'refused') {
      log('reply from %s refused: %s', conn.remoteAddress, pushed.remark);
      return fail(ResponseCode.NO_PERMISSION, pushed.remark);
    }
    let response: Answer = pushed.ok
      ? { header: { msgId: '0', queueId, queueOffset: 0 } }
      : fail(ResponseCode.SYSTEM_ERROR, pushed.remark);
    if (this.storeReplyMessageEnable) {
      const inner: MessageInner = {
        topic: h.topic,
        queueId,
        flag: h.flag,
        sysFlag: h.sysFlag,
        bornTimestamp: h.bornTimestamp,
        bornHost: socketAddressText(conn.remoteAddress),
        reconsumeTimes: h.reconsumeTimes ?? 0,
        preparedTransactionOffset: 0,
        body,
        // as Apache stores it: the properties the replier sent (PUSH_REPLY_TIME only went to the requester)
        properties: decodeProperties(h.properties ?? ''),
      };
      const put = this.ctx.messageStore.putMessages([inner]);
      const w = put.written[0];
      if (put.status === 'PUT_OK' && w) {
        response = { ...response, header: { msgId: w.msgId, queueId, queueOffset: w.queueOffset } };
      } else {
        log('reply to %s not stored: %s', h.topic, put.remark ?? put.status);
      }
    }
    return response;
  }

  /** PUSH_REPLY_MESSAGE_TO_CLIENT to the requester; the remark says why it failed. */
  private async push(
    from: RemotingConnection,
    h: SendMessageRequestHeader,
    properties: Record<string, string>,
    body: Buffer,
  ): Promise<{ ok: true } | { ok: false | 'refused'; remark: string }> {
    const clientId = properties.REPLY_TO_CLIENT;
    if (clientId === undefined) return { ok: false, remark: 'reply message properties[REPLY_TO_CLIENT] is null' };
    const channel = findProducerChannel(this.ctx.consumers, clientId);
    if (!channel) {
      log('push reply message fail, channel of <%s> not found', clientId);
      return { ok: false, remark: `push reply message fail, channel of <${clientId}> not found.` };
    }
    // not in Apache: only to the client whose request with this CORRELATION_ID is waiting
    const table = this.ctx.replyRequests;
    const checked = table?.check(properties);
    if (checked && !checked.ok) return { ok: 'refused', remark: checked.remark };
    setProperty(properties, 'PUSH_REPLY_TIME', String(this.ctx.clock.now()));
    const op = Operations.PUSH_REPLY_MESSAGE_TO_CLIENT;
    const header = {
      producerGroup: h.producerGroup,
      topic: h.topic,
      defaultTopic: h.defaultTopic,
      defaultTopicQueueNums: h.defaultTopicQueueNums,
      queueId: h.queueId,
      sysFlag: h.sysFlag,
      bornTimestamp: h.bornTimestamp,
      flag: h.flag,
      properties: encodeProperties(properties, { javaOrder: true }),
      reconsumeTimes: h.reconsumeTimes,
      unitMode: h.unitMode ?? false,
      bornHost: socketAddressText(from.remoteAddress),
      storeHost: this.ctx.address,
      storeTimestamp: this.ctx.clock.now(),
    };
    // Apache's remark has no space before "fail" ("push reply message to <id>fail."); kept as it is
    const failed = `push reply message to ${clientId}fail.`;
    try {
      const res = await callClient(channel, op, header, body, {
        version: BROKER_VERSION,
        timeoutMs: PUSH_REPLY_TIMEOUT_MS,
      });
      if (res.code === ResponseCode.SUCCESS) {
        if (properties.CORRELATION_ID !== undefined) table?.answered(properties.CORRELATION_ID);
        return { ok: true };
      }
      log('push reply message to <%s> return fail, response remark: %s', clientId, res.remark);
      return { ok: false, remark: failed };
    } catch (err) {
      log('push reply message to <%s> fail: %s', clientId, (err as Error).message);
      return { ok: false, remark: failed };
    }
  }
}
