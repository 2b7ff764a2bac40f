import createDebug from '../debug.js';
import {
  createMessageExt,
  decodeProperties,
  decompressBody,
  MessageSysFlag,
  Operations,
  ResponseCode,
  setProperty,
  type MessageExt,
  type RemotingCommand,
  type ReplyMessageRequestHeader,
} from '../../protocol/internal.js';
import type { Clock } from '../clock.js';
import type { RemotingClient } from '../remoting/index.js';
import { serve } from './operation-call.js';

const log = createDebug('rocketwire:client');

/**
 * Takes a reply the broker pushed; true when it completed a request of this process. Producers
 * register one (their pending-request table, lib/producer/request-reply.ts).
 */
export type ReplyListener = (reply: MessageExt) => boolean;

/**
 * The reply of a PUSH_REPLY_MESSAGE_TO_CLIENT as a message, as Java's
 * ClientRemotingProcessor#receiveReplyMessage builds it: the header's fields, the body (inflated
 * when sysFlag says it is compressed, COMPRESSED then cleared) and ARRIVE_TIME = `receivedAt`.
 * A pushed reply has no queue offset or commit-log offset (0, as in Java's MessageExt).
 */
export function replyMessageFromPush(req: RemotingCommand, receivedAt: number): MessageExt {
  return replyMessage(Operations.PUSH_REPLY_MESSAGE_TO_CLIENT.request.decode(req.extFields), req.body, receivedAt);
}

/** replyMessageFromPush from the request's decoded header and its body. */
function replyMessage(h: ReplyMessageRequestHeader, pushed: Buffer | null, receivedAt: number): MessageExt {
  let body: Buffer = pushed ?? Buffer.alloc(0);
  let sysFlag = h.sysFlag;
  if ((sysFlag & MessageSysFlag.COMPRESSED_FLAG) !== 0) {
    body = decompressBody(body, sysFlag);
    sysFlag &= ~MessageSysFlag.COMPRESSED_FLAG;
  }
  const properties = decodeProperties(h.properties ?? '');
  setProperty(properties, 'ARRIVE_TIME', String(receivedAt));
  return createMessageExt({
    topic: h.topic,
    queueId: h.queueId,
    flag: h.flag,
    queueOffset: 0,
    commitLogOffset: 0,
    sysFlag,
    bornTimestamp: h.bornTimestamp,
    bornHost: h.bornHost,
    storeTimestamp: h.storeTimestamp,
    storeHost: h.storeHost,
    reconsumeTimes: h.reconsumeTimes ?? 0,
    preparedTransactionOffset: 0,
    bodyCRC: 0,
    storeSize: 0,
    properties,
    body,
    msgId: properties.UNIQ_KEY ?? '',
    offsetMsgId: '',
    tags: properties.TAGS,
  });
}

/**
 * Serves PUSH_REPLY_MESSAGE_TO_CLIENT on the client's connections: every listener is offered the
 * reply until one takes it. Java answers SUCCESS also for a reply that matches no request (it only
 * logs it: the request timed out, or another process asked), and SYSTEM_ERROR "process reply
 * message fail" when the reply cannot be read; a header without a required field is SYSTEM_ERROR
 * naming it (the connection's answer to a throw).
 */
export function registerReplyMessageProcessor(
  remoting: RemotingClient,
  listeners: ReadonlySet<ReplyListener>,
  clock: Clock,
): void {
  serve(remoting, Operations.PUSH_REPLY_MESSAGE_TO_CLIENT, ({ header, body, conn }) => {
    const receivedAt = clock.now();
    let reply: MessageExt;
    try {
      reply = replyMessage(header, body, receivedAt);
    } catch (err) {
      log('PUSH_REPLY_MESSAGE_TO_CLIENT from %s: %s', conn.remoteAddress, (err as Error).message);
      return { code: ResponseCode.SYSTEM_ERROR, remark: 'process reply message fail' };
    }
    let taken = false;
    for (const l of listeners) {
      try {
        if (l(reply)) {
          taken = true;
          break;
        }
      } catch (err) {
        log('reply listener failed: %s', (err as Error).message);
      }
    }
    if (!taken)
      log('reply matches no request: CORRELATION_ID %s from %s', reply.properties.CORRELATION_ID, reply.bornHost);
    return {};
  });
}
