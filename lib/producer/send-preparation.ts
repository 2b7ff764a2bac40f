import {
  encodeBatch,
  encodeProperties,
  isRetryTopic,
  MAX_PROPERTIES_BYTES,
  Operations,
  type SendMessageRequestHeader,
  type UniqKeyGenerator,
} from '../../protocol/index.js';
import { compressBody } from './compression-options.js';
import { MessageValidationError } from './errors.js';
import { validateTopic, type Message } from './message.js';
import { encodeMessageProperties, messageBody } from './message-encoding.js';
import type { ResolvedProducerOptions } from './producer-options.js';
import { isReplyMessage, systemPropertiesOf } from './request-reply.js';
import { isDelayed } from './timer-message.js';

/*
 * A message (or a batch) made ready to send before any queue is chosen: topic and body checked,
 * properties encoded with a fresh UNIQ_KEY, a large body compressed, the send row picked.
 */

/**
 * The stored record keeps the properties behind a signed int16 length, so a broker answers
 * MESSAGE_ILLEGAL beyond 32767 bytes; failing here names the cause and saves the round trip.
 */
function checkedProperties(s: string): string {
  const n = Buffer.byteLength(s, 'utf8');
  if (n > MAX_PROPERTIES_BYTES)
    throw new MessageValidationError('properties', `properties take ${n} bytes, more than ${MAX_PROPERTIES_BYTES}`);
  return s;
}

/** The send rows: V1 (long keys), V2 (one-letter keys) and the batch; the same fields in all three. */
export type SendOperation =
  | typeof Operations.SEND_MESSAGE
  | typeof Operations.SEND_MESSAGE_V2
  | typeof Operations.SEND_BATCH_MESSAGE
  | typeof Operations.SEND_REPLY_MESSAGE
  | typeof Operations.SEND_REPLY_MESSAGE_V2;

/** A prepared send: everything but the queue. */
export interface Prepared {
  topic: string;
  op: SendOperation;
  body: Buffer;
  sysFlag: number;
  flag: number;
  properties: string;
  batch: boolean;
  uniqMsgId: string;
  /** The message handed to a selector. */
  msg: Message;
}

export function prepareSingle(
  options: ResolvedProducerOptions,
  uniqKeys: UniqKeyGenerator,
  msg: Message,
  propertiesOf: (msg: Message, uniqKey: string) => string = (m, u) =>
    encodeMessageProperties(m, u, systemPropertiesOf(m)),
): Prepared {
  const topic = validateTopic(msg.topic, options.createTopicKey);
  let body = messageBody(msg, options.maxMessageSize);
  const uniqKey = uniqKeys.next();
  const properties = checkedProperties(propertiesOf(msg, uniqKey));
  // a body of at least compressMsgBodyOverHowmuch bytes goes compressed, its codec in sysFlag (compression-options.ts)
  const compressed = compressBody(body, options);
  body = compressed.body;
  const sysFlag = compressed.sysFlag;
  return {
    topic,
    op: isReplyMessage(msg)
      ? options.sendMessageV1
        ? Operations.SEND_REPLY_MESSAGE
        : Operations.SEND_REPLY_MESSAGE_V2
      : options.sendMessageV1
        ? Operations.SEND_MESSAGE
        : Operations.SEND_MESSAGE_V2,
    body,
    sysFlag,
    flag: msg.flag ?? 0,
    properties,
    batch: false,
    uniqMsgId: uniqKey,
    msg,
  };
}

export function prepareBatch(
  options: ResolvedProducerOptions,
  uniqKeys: UniqKeyGenerator,
  msgs: readonly Message[],
): Prepared {
  if (msgs.length === 0) throw new MessageValidationError('messages', 'a batch needs at least one message');
  const first = msgs[0]!;
  const topic = validateTopic(first.topic, options.createTopicKey);
  if (isRetryTopic(topic)) throw new MessageValidationError('topic', 'retry topics are not supported for batching');
  const wait = first.waitStoreMsgOK ?? true;
  const ids: string[] = [];
  const records = msgs.map((m) => {
    if (m.topic !== topic) throw new MessageValidationError('topic', 'the messages of one batch must share one topic');
    if ((m.delayTimeLevel ?? 0) > 0)
      throw new MessageValidationError('delayTimeLevel', 'delayed messages are not supported for batching');
    if (isDelayed(m))
      throw new MessageValidationError(
        m.deliverAt !== undefined ? 'deliverAt' : 'delayMs',
        'timer messages are not supported for batching',
      );
    if ((m.waitStoreMsgOK ?? true) !== wait)
      throw new MessageValidationError('waitStoreMsgOK', 'the messages of one batch must share waitStoreMsgOK');
    const uniq = uniqKeys.next();
    ids.push(uniq);
    return {
      body: messageBody(m, options.maxMessageSize),
      flag: m.flag ?? 0,
      properties: checkedProperties(encodeMessageProperties(m, uniq)),
    };
  });
  const body = encodeBatch(records);
  if (body.length > options.maxMessageSize) {
    throw new MessageValidationError(
      'body',
      `batch body size ${body.length} exceeds the maximum ${options.maxMessageSize}`,
    );
  }
  // The batch is itself a Message in Java carrying only WAIT (from the first message). 4.9.8 gives it no
  // UNIQ_KEY; 5.x clients do, and brokers before 5.3.3 append the batch properties to every member, so
  // that id then replaces each member's own on consumption (apache/rocketmq#9416).
  const batchProps = { WAIT: String(wait) };
  return {
    topic,
    op: Operations.SEND_BATCH_MESSAGE,
    body,
    sysFlag: 0,
    flag: 0,
    properties: encodeProperties(batchProps),
    batch: true,
    uniqMsgId: ids.join(','),
    msg: first,
  };
}

/** The SEND_MESSAGE header of an attempt of `p` to queue `queueId` of `brokerName`, born at `now`. */
export function sendHeader(
  options: ResolvedProducerOptions,
  p: Prepared,
  queueId: number,
  brokerName: string,
  now: number,
): SendMessageRequestHeader {
  return {
    producerGroup: options.group,
    topic: p.topic,
    defaultTopic: options.createTopicKey,
    defaultTopicQueueNums: options.defaultTopicQueueNums,
    queueId,
    sysFlag: p.sysFlag,
    bornTimestamp: now,
    flag: p.flag,
    properties: p.properties,
    reconsumeTimes: 0,
    unitMode: false,
    batch: p.batch,
    bname: brokerName,
  };
}
