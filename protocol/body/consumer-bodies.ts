import { toJavaJson } from '../json/java-json.js';
import { parseFastjsonBody } from '../json/fastjson-parse.js';
import { messageQueueToJson, parseMessageQueueKey, readMessageQueue, type MessageQueue } from './message-queue.js';
import { asArray, asObject, bodyError, optBoolean, optNumber, optString, reqString, stringArray } from './shape.js';

function json(v: unknown, nonStandard = false): Buffer {
  return Buffer.from(toJavaJson(v, { nonStandard }), 'utf8');
}

/**
 * GET_CONSUMER_LIST_BY_GROUP response body
 * (docs/protocol-facts.md#consumer-list-and-locks): `{"consumerIdList":[…]}`.
 */
export interface ConsumerListBody {
  consumerIdList: string[];
}
/** A ConsumerListBody as the JSON bytes a broker answers GET_CONSUMER_LIST_BY_GROUP with. */
export function encodeConsumerListBody(b: ConsumerListBody): Buffer {
  return json({ consumerIdList: b.consumerIdList });
}
/** Parse a GET_CONSUMER_LIST_BY_GROUP response body; a body of another shape throws a ProtocolError naming the bad path. */
export function decodeConsumerListBody(body: Buffer | Uint8Array): ConsumerListBody {
  const o = asObject(parseFastjsonBody(body), 'GetConsumerListByGroupResponseBody');
  return { consumerIdList: stringArray(o.consumerIdList, 'consumerIdList') };
}

/**
 * LOCK_BATCH_MQ / UNLOCK_BATCH_MQ request body (docs/protocol-facts.md#consumer-list-and-locks):
 * `{"clientId":…,"consumerGroup":…,"mqSet":[MessageQueue…]}`, 5.x adds `"onlyThisBroker":false`.
 */
export interface LockBatchBody {
  consumerGroup: string;
  clientId: string;
  mqSet: MessageQueue[];
  /** 5.x; written only when set. */
  onlyThisBroker?: boolean | undefined;
}
/** LOCK_BATCH_MQ's request body under its Java class name (the same JSON as LockBatchBody). */
export type LockBatchRequestBody = LockBatchBody;
/** UNLOCK_BATCH_MQ's request body under its Java class name (the same JSON as LockBatchBody). */
export type UnlockBatchRequestBody = LockBatchBody;

/** A LOCK_BATCH_MQ / UNLOCK_BATCH_MQ request body as JSON bytes (`onlyThisBroker` only when set). */
export function encodeLockBatchBody(b: LockBatchBody): Buffer {
  return json({
    clientId: b.clientId,
    consumerGroup: b.consumerGroup,
    mqSet: b.mqSet.map(messageQueueToJson),
    onlyThisBroker: b.onlyThisBroker,
  });
}
/** Parse a LOCK_BATCH_MQ / UNLOCK_BATCH_MQ request body; consumerGroup and clientId are required, a missing mqSet is empty. */
export function decodeLockBatchBody(body: Buffer | Uint8Array): LockBatchBody {
  const o = asObject(parseFastjsonBody(body), 'LockBatchRequestBody');
  const out: LockBatchBody = {
    consumerGroup: reqString(o, 'consumerGroup', 'LockBatchRequestBody'),
    clientId: reqString(o, 'clientId', 'LockBatchRequestBody'),
    mqSet: asArray(o.mqSet, 'mqSet').map((m, i) => readMessageQueue(m, `mqSet[${i}]`)),
  };
  if (o.onlyThisBroker != null) out.onlyThisBroker = optBoolean(o, 'onlyThisBroker', 'LockBatchRequestBody', false);
  return out;
}

/** LOCK_BATCH_MQ response body: `{"lockOKMQSet":[MessageQueue…]}`. */
export interface LockBatchResponseBody {
  lockOKMQSet: MessageQueue[];
}
/** A LOCK_BATCH_MQ response body (the queues the broker locked for the client) as JSON bytes. */
export function encodeLockBatchResponseBody(b: LockBatchResponseBody): Buffer {
  return json({ lockOKMQSet: b.lockOKMQSet.map(messageQueueToJson) });
}
/** Parse a LOCK_BATCH_MQ response body; a missing lockOKMQSet means no queue was locked. */
export function decodeLockBatchResponseBody(body: Buffer | Uint8Array): LockBatchResponseBody {
  const o = asObject(parseFastjsonBody(body), 'LockBatchResponseBody');
  return { lockOKMQSet: asArray(o.lockOKMQSet, 'lockOKMQSet').map((m, i) => readMessageQueue(m, `lockOKMQSet[${i}]`)) };
}

/**
 * RESET_CONSUMER_CLIENT_OFFSET body `ResetOffsetBody`: `{"offsetTable":{{MessageQueue}:offset,…}}`,
 * always with object map keys (non-standard).
 */
export interface ResetOffsetBody {
  offsetTable: Array<[MessageQueue, number]>;
}
/** A RESET_CONSUMER_CLIENT_OFFSET body as JSON bytes, MessageQueue objects as the offsetTable's keys. */
export function encodeResetOffsetBody(b: ResetOffsetBody): Buffer {
  return json({ offsetTable: new Map(b.offsetTable.map(([mq, off]) => [messageQueueToJson(mq), off])) }, true);
}
/** Parse a RESET_CONSUMER_CLIENT_OFFSET body into [queue, offset] pairs; a non-numeric offset throws a ProtocolError. */
export function decodeResetOffsetBody(body: Buffer | Uint8Array): ResetOffsetBody {
  const o = asObject(parseFastjsonBody(body), 'ResetOffsetBody');
  const table = asObject(o.offsetTable ?? {}, 'offsetTable');
  const offsetTable: Array<[MessageQueue, number]> = [];
  for (const [k, v] of Object.entries(table)) {
    if (typeof v !== 'number') throw bodyError(`offsetTable[${k}]`, 'is not a number');
    offsetTable.push([parseMessageQueueKey(k, 'offsetTable key'), v]);
  }
  return { offsetTable };
}

/**
 * GET_CONSUMER_STATUS_FROM_CLIENT response body, Java's GetConsumerStatusBody:
 * `{"consumerTable":{},"messageQueueTable":{{MessageQueue}:offset,…}}` (fastjson, fields in name
 * order, MessageQueue objects as map keys). The client answers with its in-memory offset of each
 * queue of the topic; `consumerTable` (per client, filled by the broker's aggregation) is sent empty.
 */
export interface GetConsumerStatusBody {
  messageQueueTable: Array<[MessageQueue, number]>;
}
/** A GetConsumerStatusBody as JSON bytes, with an empty consumerTable as the Java client writes it. */
export function encodeGetConsumerStatusBody(b: GetConsumerStatusBody): Buffer {
  const messageQueueTable = new Map(b.messageQueueTable.map(([mq, offset]) => [messageQueueToJson(mq), offset]));
  return json({ consumerTable: {}, messageQueueTable }, true);
}
/** Parse a GetConsumerStatusBody's messageQueueTable; a non-numeric offset throws a ProtocolError. */
export function decodeGetConsumerStatusBody(body: Buffer | Uint8Array): GetConsumerStatusBody {
  const o = asObject(parseFastjsonBody(body), 'GetConsumerStatusBody');
  const table = asObject(o.messageQueueTable ?? {}, 'messageQueueTable');
  const messageQueueTable: Array<[MessageQueue, number]> = [];
  for (const [k, v] of Object.entries(table)) {
    if (typeof v !== 'number') throw bodyError(`messageQueueTable[${k}]`, 'is not a number');
    messageQueueTable.push([parseMessageQueueKey(k, 'messageQueueTable key'), v]);
  }
  return { messageQueueTable };
}

/** CONSUME_MESSAGE_DIRECTLY response body. consumeResult is a CMResult name. */
export interface ConsumeMessageDirectlyResult {
  order: boolean;
  autoCommit: boolean;
  consumeResult: string;
  remark?: string | undefined;
  /** Milliseconds the handler took; the JSON key keeps Java's spelling (ConsumeMessageDirectlyResult). */
  spentTimeMills: number;
}
/** A CONSUME_MESSAGE_DIRECTLY response body as JSON bytes (keys sorted, `remark` only when set). */
export function encodeConsumeMessageDirectlyResult(r: ConsumeMessageDirectlyResult): Buffer {
  return json({
    autoCommit: r.autoCommit,
    consumeResult: r.consumeResult,
    order: r.order,
    remark: r.remark,
    spentTimeMills: r.spentTimeMills,
  });
}
/**
 * Parse a CONSUME_MESSAGE_DIRECTLY response body. Missing keys take Java's defaults: order false,
 * autoCommit true, consumeResult CR_RETURN_NULL, spentTimeMills 0.
 */
export function decodeConsumeMessageDirectlyResult(body: Buffer | Uint8Array): ConsumeMessageDirectlyResult {
  const p = 'ConsumeMessageDirectlyResult';
  const o = asObject(parseFastjsonBody(body), p);
  const r: ConsumeMessageDirectlyResult = {
    order: optBoolean(o, 'order', p, false),
    autoCommit: optBoolean(o, 'autoCommit', p, true),
    consumeResult: optString(o, 'consumeResult', p) ?? 'CR_RETURN_NULL',
    spentTimeMills: optNumber(o, 'spentTimeMills', p, 0),
  };
  const remark = optString(o, 'remark', p);
  if (remark !== undefined) r.remark = remark;
  return r;
}

/**
 * GET_CONSUMER_RUNNING_INFO response body `ConsumerRunningInfo`. mqTable uses MessageQueue
 * objects as map keys (non-standard, like Java). Process-queue info and status values are
 * written as given (sorted keys), e.g. ProcessQueueInfo {commitOffset, cachedMsgMinOffset,
 * cachedMsgMaxOffset, cachedMsgCount, cachedMsgSizeInMiB, locked, droped, lastPullTimestamp,
 * lastConsumeTimestamp, …} and ConsumeStatus {pullRT, pullTPS, consumeRT, consumeOKTPS,
 * consumeFailedTPS, consumeFailedMsgs}.
 */
export interface ConsumerRunningInfo {
  /** Consumer configuration as strings plus PROP_* entries. */
  properties: Record<string, string>;
  subscriptionSet: unknown[];
  mqTable: Array<[MessageQueue, Record<string, unknown>]>;
  /** topic → ConsumeStatus */
  statusTable: Record<string, Record<string, unknown>>;
  jstack?: string | undefined;
  /** 5.x */
  userConsumerInfo?: Record<string, string> | undefined;
}

/** Property names a Java consumer puts into ConsumerRunningInfo.properties. */
export const ConsumerRunningInfoProp = {
  PROP_NAMESERVER_ADDR: 'PROP_NAMESERVER_ADDR',
  PROP_THREADPOOL_CORE_SIZE: 'PROP_THREADPOOL_CORE_SIZE',
  PROP_CONSUME_ORDERLY: 'PROP_CONSUMEORDERLY',
  PROP_CONSUME_TYPE: 'PROP_CONSUME_TYPE',
  PROP_CLIENT_VERSION: 'PROP_CLIENT_VERSION',
  PROP_CONSUMER_START_TIMESTAMP: 'PROP_CONSUMER_START_TIMESTAMP',
} as const;

/** A GET_CONSUMER_RUNNING_INFO response body as JSON bytes, MessageQueue objects as mqTable's keys. */
export function encodeConsumerRunningInfo(info: ConsumerRunningInfo): Buffer {
  return json(
    {
      jstack: info.jstack,
      mqTable: new Map(info.mqTable.map(([mq, v]) => [messageQueueToJson(mq), v])),
      properties: info.properties,
      statusTable: info.statusTable,
      subscriptionSet: info.subscriptionSet,
      userConsumerInfo: info.userConsumerInfo,
    },
    true,
  );
}
/** Parse a GET_CONSUMER_RUNNING_INFO response body; property values are read as strings, jstack and userConsumerInfo only when present. */
export function decodeConsumerRunningInfo(body: Buffer | Uint8Array): ConsumerRunningInfo {
  const p = 'ConsumerRunningInfo';
  const o = asObject(parseFastjsonBody(body), p);
  const mqTable: Array<[MessageQueue, Record<string, unknown>]> = [];
  for (const [k, v] of Object.entries(asObject(o.mqTable ?? {}, 'mqTable'))) {
    mqTable.push([parseMessageQueueKey(k, 'mqTable key'), asObject(v, `mqTable[${k}]`)]);
  }
  const properties: Record<string, string> = {};
  for (const [k, v] of Object.entries(asObject(o.properties ?? {}, 'properties'))) properties[k] = String(v);
  const statusTable: Record<string, Record<string, unknown>> = {};
  for (const [k, v] of Object.entries(asObject(o.statusTable ?? {}, 'statusTable')))
    statusTable[k] = asObject(v, `statusTable.${k}`);
  const info: ConsumerRunningInfo = {
    properties,
    subscriptionSet: asArray(o.subscriptionSet, 'subscriptionSet'),
    mqTable,
    statusTable,
  };
  const jstack = optString(o, 'jstack', p);
  if (jstack !== undefined) info.jstack = jstack;
  // 5.x's TreeMap<String, String> userConsumerInfo (a 4.x consumer sends none)
  if (o.userConsumerInfo != null) {
    const user: Record<string, string> = {};
    for (const [k, v] of Object.entries(asObject(o.userConsumerInfo, 'userConsumerInfo'))) user[k] = String(v);
    info.userConsumerInfo = user;
  }
  return info;
}

/** The codec of ConsumerListBody (encodeConsumerListBody, decodeConsumerListBody), as the operation table uses it. */
export const ConsumerListBody = { encode: encodeConsumerListBody, decode: decodeConsumerListBody } as const;
/** The codec of LockBatchBody (encodeLockBatchBody, decodeLockBatchBody): LOCK_BATCH_MQ and UNLOCK_BATCH_MQ request bodies. */
export const LockBatchBody = { encode: encodeLockBatchBody, decode: decodeLockBatchBody } as const;
/** The codec of LockBatchResponseBody (encodeLockBatchResponseBody, decodeLockBatchResponseBody). */
export const LockBatchResponseBody = {
  encode: encodeLockBatchResponseBody,
  decode: decodeLockBatchResponseBody,
} as const;
/** The codec of ResetOffsetBody (encodeResetOffsetBody, decodeResetOffsetBody). */
export const ResetOffsetBody = { encode: encodeResetOffsetBody, decode: decodeResetOffsetBody } as const;
/** The codec of GetConsumerStatusBody (encodeGetConsumerStatusBody, decodeGetConsumerStatusBody). */
export const GetConsumerStatusBody = {
  encode: encodeGetConsumerStatusBody,
  decode: decodeGetConsumerStatusBody,
} as const;
/** The codec of ConsumeMessageDirectlyResult (encodeConsumeMessageDirectlyResult, decodeConsumeMessageDirectlyResult). */
export const ConsumeMessageDirectlyResult = {
  encode: encodeConsumeMessageDirectlyResult,
  decode: decodeConsumeMessageDirectlyResult,
} as const;
/** The codec of ConsumerRunningInfo (encodeConsumerRunningInfo, decodeConsumerRunningInfo). */
export const ConsumerRunningInfo = { encode: encodeConsumerRunningInfo, decode: decodeConsumerRunningInfo } as const;
