import { ResponseCode, type MessageQueue } from '../../protocol/index.js';
import type { CallReply } from '../client/index.js';
import type { Prepared } from './send-preparation.js';
import type { SendResult, SendStatus } from './send-result.js';

const SEND_STATUS: Record<number, SendStatus> = {
  [ResponseCode.SUCCESS]: 'SEND_OK',
  [ResponseCode.FLUSH_DISK_TIMEOUT]: 'FLUSH_DISK_TIMEOUT',
  [ResponseCode.FLUSH_SLAVE_TIMEOUT]: 'FLUSH_SLAVE_TIMEOUT',
  [ResponseCode.SLAVE_NOT_AVAILABLE]: 'SLAVE_NOT_AVAILABLE',
};

/**
 * The SendResult of a send's answer. SUCCESS and the store's partial successes (FLUSH_DISK_TIMEOUT,
 * …: the row's answers) carry a SendMessageResponseHeader, read strictly as Java's
 * processSendResponse does: a missing msgId, queueId or queueOffset is a ResponseFieldError.
 */
export function toSendResult(reply: CallReply<Prepared['op']>, p: Prepared, mq: MessageQueue): SendResult {
  const status = SEND_STATUS[reply.code]!;
  const h = reply.header;
  const result: SendResult = {
    status,
    msgId: p.uniqMsgId,
    offsetMsgId: h.msgId,
    messageQueue: { topic: mq.topic, brokerName: mq.brokerName, queueId: h.queueId },
    queueOffset: h.queueOffset,
  };
  if (h.MSG_REGION !== undefined) result.regionId = h.MSG_REGION;
  if (h.TRACE_ON !== undefined) result.traceOn = h.TRACE_ON === 'true';
  if (h.transactionId !== undefined) result.transactionId = h.transactionId;
  if (h.recallHandle !== undefined) result.recallHandle = h.recallHandle;
  return result;
}
