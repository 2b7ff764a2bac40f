import { HeaderFieldError } from './errors.js';

/**
 * The POP receipt handle ("extraInfo", message property POP_CK) and the offset strings of a
 * POP_MESSAGE answer, as Java's ExtraInfoUtil writes and reads them (R/header/ExtraInfoUtil,
 * C/MQClientAPIImpl#processPopResponse). Pure: strings in, values out.
 *
 * A receipt handle is eight fields joined by single spaces:
 *
 *   `ckQueueOffset popTime invisibleTime reviveQid r brokerName queueId msgQueueOffset`
 *
 * ckQueueOffset is the first offset of the checkpoint the broker wrote for the pop (one per queue
 * and pop), msgQueueOffset the message's own queue offset; r says which topic the message was read
 * from: 0 the topic, 1 the pop retry topic `%RETRY%{group}_{topic}`, 2 `%RETRY%{group}+{topic}`
 * (enableRetryTopicV2). reviveQid 999 marks an order pop.
 */

/** KeyBuilder.POP_ORDER_REVIVE_QUEUE: the reviveQid of an order pop (no checkpoint). */
export const POP_ORDER_REVIVE_QUEUE = 999;

/** Which topic a popped message was read from: '0' the topic, '1' / '2' its pop retry topic (V1 `_`, V2 `+`). */
export type PopRetryMark = '0' | '1' | '2';

export interface ReceiptHandle {
  /** First queue offset of the checkpoint (startOffsetInfo of the pop). */
  readonly ckQueueOffset: number;
  /** Broker time of the pop, ms. */
  readonly popTime: number;
  readonly invisibleTime: number;
  readonly reviveQid: number;
  readonly retry: PopRetryMark;
  readonly brokerName: string;
  readonly queueId: number;
  /** The message's queue offset (in the retry topic's queue when retry is not '0'). */
  readonly queueOffset: number;
}

const RETRY_PREFIX = '%RETRY%';

/** KeyBuilder.buildPopRetryTopicV1 / V2. */
export function popRetryTopic(topic: string, group: string, v2 = false): string {
  return `${RETRY_PREFIX}${group}${v2 ? '+' : '_'}${topic}`;
}

/** ExtraInfoUtil.getRetry(topic): the mark of the topic a message was read from. */
export function popRetryMarkOf(topic: string): PopRetryMark {
  if (topic.startsWith(RETRY_PREFIX) && topic.includes('+')) return '2';
  if (topic.startsWith(RETRY_PREFIX)) return '1';
  return '0';
}

/** ExtraInfoUtil.getRealTopic: the topic an ACK or CHANGE_INVISIBLETIME names for a receipt of `topic`. */
export function popRealTopic(topic: string, group: string, retry: PopRetryMark): string {
  return retry === '0' ? topic : popRetryTopic(topic, group, retry === '2');
}

/** The receipt handle as Java writes it (ExtraInfoUtil.buildExtraInfo with msgQueueOffset). */
export function encodeReceiptHandle(h: ReceiptHandle): string {
  return [
    h.ckQueueOffset,
    h.popTime,
    h.invisibleTime,
    h.reviveQid,
    h.retry,
    h.brokerName,
    h.queueId,
    h.queueOffset,
  ].join(' ');
}

const LONG_RE = /^-?\d+$/;

function num(parts: string[], i: number, what: string, text: string): number {
  const v = parts[i];
  if (v === undefined || !LONG_RE.test(v))
    throw new HeaderFieldError('extraInfo', `field ${i + 1} (${what}) is not a number in ${JSON.stringify(text)}`);
  const n = Number(v);
  // Narrowing point: offsets and ms timestamps stay below 2^53
  if (!Number.isSafeInteger(n))
    throw new HeaderFieldError('extraInfo', `field ${i + 1} (${what}) does not fit in 53 bits`);
  return n;
}

/**
 * A receipt handle read back; HeaderFieldError{field: 'extraInfo'} naming the field that is wrong.
 * Java's ExtraInfoUtil splits on one space and reads by position; so does this, and it asks for
 * all eight fields, which every 5.x broker and client writes.
 */
export function decodeReceiptHandle(text: string): ReceiptHandle {
  const parts = text.split(' ');
  if (parts.length < 8)
    throw new HeaderFieldError(
      'extraInfo',
      `a receipt handle has 8 fields, got ${parts.length}: ${JSON.stringify(text)}`,
    );
  const retry = parts[4]!;
  if (retry !== '0' && retry !== '1' && retry !== '2')
    throw new HeaderFieldError('extraInfo', `field 5 (retry) must be 0, 1 or 2, got ${JSON.stringify(retry)}`);
  return {
    ckQueueOffset: num(parts, 0, 'ckQueueOffset', text),
    popTime: num(parts, 1, 'popTime', text),
    invisibleTime: num(parts, 2, 'invisibleTime', text),
    reviveQid: num(parts, 3, 'reviveQid', text),
    retry,
    brokerName: parts[5]!,
    queueId: num(parts, 6, 'queueId', text),
    queueOffset: num(parts, 7, 'msgQueueOffset', text),
  };
}

/** One entry of startOffsetInfo (`r qid start`). */
export interface StartOffsetEntry {
  readonly retry: PopRetryMark;
  readonly queueId: number;
  readonly startOffset: number;
}
/** One entry of msgOffsetInfo (`r qid o1,o2,…`). */
export interface MsgOffsetEntry {
  readonly retry: PopRetryMark;
  readonly queueId: number;
  readonly offsets: readonly number[];
}
/** One entry of orderCountInfo: `r qid count` (key `qid`) or `r qo{qid}%{offset} count` (key `qo…`). */
export interface OrderCountEntry {
  readonly retry: PopRetryMark;
  readonly key: string;
  readonly count: number;
}

export function encodeStartOffsetInfo(entries: readonly StartOffsetEntry[]): string {
  return entries.map((e) => `${e.retry} ${e.queueId} ${e.startOffset}`).join(';');
}
export function encodeMsgOffsetInfo(entries: readonly MsgOffsetEntry[]): string {
  return entries.map((e) => `${e.retry} ${e.queueId} ${e.offsets.join(',')}`).join(';');
}
export function encodeOrderCountInfo(entries: readonly OrderCountEntry[]): string {
  return entries.map((e) => `${e.retry} ${e.key} ${e.count}`).join(';');
}
/** ExtraInfoUtil.getQueueOffsetKeyValueKey: the key of one offset's count in orderCountInfo. */
export function orderCountOffsetKey(queueId: number, queueOffset: number): string {
  return `qo${queueId}%${queueOffset}`;
}

/**
 * Split `a b c;d e f` into triples keyed `a@b`, refusing a duplicate key as Java does
 * (IllegalArgumentException there, HeaderFieldError naming the field here).
 */
function triples(text: string | undefined, field: string): Map<string, [string, string, string]> {
  const out = new Map<string, [string, string, string]>();
  if (!text) return out;
  for (const one of text.split(';')) {
    const p = one.split(' ');
    if (p.length !== 3) throw new HeaderFieldError(field, `entry ${JSON.stringify(one)} has ${p.length} fields, not 3`);
    const key = `${p[0]}@${p[1]}`;
    if (out.has(key)) throw new HeaderFieldError(field, `duplicate entry ${key}`);
    out.set(key, p as [string, string, string]);
  }
  return out;
}

function long(v: string, field: string): number {
  if (!LONG_RE.test(v) || !Number.isSafeInteger(Number(v)))
    throw new HeaderFieldError(field, `not a number: ${JSON.stringify(v)}`);
  return Number(v);
}

/** parseStartOffsetInfo: start offset by `r@qid`. */
export function parseStartOffsetInfo(text: string | undefined): Map<string, number> {
  const out = new Map<string, number>();
  for (const [k, p] of triples(text, 'startOffsetInfo')) out.set(k, long(p[2], 'startOffsetInfo'));
  return out;
}
/** parseMsgOffsetInfo: the popped offsets by `r@qid`. */
export function parseMsgOffsetInfo(text: string | undefined): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const [k, p] of triples(text, 'msgOffsetInfo'))
    out.set(
      k,
      p[2].split(',').map((v) => long(v, 'msgOffsetInfo')),
    );
  return out;
}
/** parseOrderCountInfo: counts by `r@qid` or `r@qo{qid}%{offset}`. */
export function parseOrderCountInfo(text: string | undefined): Map<string, number> {
  const out = new Map<string, number>();
  for (const [k, p] of triples(text, 'orderCountInfo')) out.set(k, long(p[2], 'orderCountInfo'));
  return out;
}

/** What a client knows of one popped message before it has a receipt handle. */
export interface PoppedMessageView {
  topic: string;
  queueId: number;
  queueOffset: number;
  reconsumeTimes: number;
  properties: Record<string, string>;
}

/** The answer fields receiptHandles needs (PopMessageResponseHeader). */
export interface PopAnswerInfo {
  popTime: number;
  invisibleTime: number;
  reviveQid: number;
  startOffsetInfo?: string | undefined;
  msgOffsetInfo?: string | undefined;
  orderCountInfo?: string | undefined;
}

/**
 * Give each popped message its receipt handle (property POP_CK) as Java's
 * MQClientAPIImpl.processPopResponse does: a message the broker already marked (a retry message,
 * whose POP_CK the broker set while rewriting its topic) keeps it; any other gets
 * `startOffsetInfo[r@qid] popTime invisibleTime reviveQid r brokerName qid msgOffset`, the
 * offset being the message's place among its queue's offsets in msgOffsetInfo. An old broker that
 * sends no startOffsetInfo gets the first message's offset of each queue as ckQueueOffset. For an
 * order pop, reconsumeTimes is set from orderCountInfo (per offset, else per queue). Sets
 * 1ST_POP_TIME when missing. Mutates the messages' properties and reconsumeTimes.
 */
export function assignReceiptHandles(
  messages: readonly PoppedMessageView[],
  answer: PopAnswerInfo,
  brokerName: string,
  order: boolean,
): void {
  const start = parseStartOffsetInfo(answer.startOffsetInfo);
  const msgOffsets = parseMsgOffsetInfo(answer.msgOffsetInfo);
  const orderCounts = order ? parseOrderCountInfo(answer.orderCountInfo) : new Map<string, number>();
  const sorted = new Map<string, number[]>();
  const keyOf = (m: PoppedMessageView): string => {
    const ck = m.properties.POP_CK;
    const mark = ck !== undefined ? (ck.split(' ')[4] ?? '0') : popRetryMarkOf(m.topic);
    return `${mark}@${m.queueId}`;
  };
  for (const m of messages) {
    const k = keyOf(m);
    let l = sorted.get(k);
    if (!l) sorted.set(k, (l = []));
    l.push(m.queueOffset);
  }
  const firstOfQueue = new Map<string, string>();
  for (const m of messages) {
    if (answer.startOffsetInfo === undefined || answer.startOffsetInfo === '') {
      // an old broker: the checkpoint starts at the first message of its queue in this answer
      const k = m.topic + m.queueId;
      if (!firstOfQueue.has(k))
        firstOfQueue.set(
          k,
          `${m.queueOffset} ${answer.popTime} ${answer.invisibleTime} ${answer.reviveQid} ${popRetryMarkOf(m.topic)} ${brokerName} ${m.queueId}`,
        );
      m.properties.POP_CK = `${firstOfQueue.get(k)!} ${m.queueOffset}`;
    } else if (m.properties.POP_CK === undefined) {
      const mark = popRetryMarkOf(m.topic);
      const k = `${mark}@${m.queueId}`;
      const ck = start.get(k);
      const index = sorted.get(k)!.indexOf(m.queueOffset);
      const msgOffset = msgOffsets.get(k)?.[index];
      if (ck === undefined || msgOffset === undefined) {
        throw new HeaderFieldError(
          ck === undefined ? 'startOffsetInfo' : 'msgOffsetInfo',
          `no entry for ${k} (message at offset ${m.queueOffset})`,
        );
      }
      m.properties.POP_CK = encodeReceiptHandle({
        ckQueueOffset: ck,
        popTime: answer.popTime,
        invisibleTime: answer.invisibleTime,
        reviveQid: answer.reviveQid,
        retry: mark,
        brokerName,
        queueId: m.queueId,
        queueOffset: msgOffset,
      });
      if (order) {
        const count = orderCounts.get(`${mark}@${orderCountOffsetKey(m.queueId, m.queueOffset)}`) ?? orderCounts.get(k);
        if (count !== undefined && count > 0) m.reconsumeTimes = count;
      }
    }
    m.properties['1ST_POP_TIME'] ??= String(answer.popTime);
  }
}
