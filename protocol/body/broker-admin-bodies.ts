import { toJavaJson } from '../json/java-json.js';
import { parseFastjsonBody } from '../json/fastjson-parse.js';
import { readSubscriptionData, type SubscriptionData } from './heartbeat-data.js';
import { messageQueueToJson, parseMessageQueueKey, type MessageQueue } from './message-queue.js';
import {
  readTopicQueueMappingDetail,
  topicQueueMappingDetailToJson,
  type TopicQueueMappingDetail,
} from './topic-queue-mapping.js';
import { asObject, optBoolean, optNumber, optString, reqNumber, reqString, stringArray } from './shape.js';

/**
 * CHECK_CLIENT_CONFIG request body, `CheckClientRequestBody`:
 * `{"clientId":…,"group":…,"subscriptionData":{SubscriptionData}}` (the client sends it before
 * subscribing with SQL92 to ask whether the broker can filter that way).
 */
export interface CheckClientRequestBody {
  clientId?: string | undefined;
  group?: string | undefined;
  subscriptionData?: SubscriptionData | undefined;
}
export function encodeCheckClientRequestBody(b: CheckClientRequestBody): Buffer {
  return Buffer.from(toJavaJson(b), 'utf8');
}
export function decodeCheckClientRequestBody(body: Buffer | Uint8Array): CheckClientRequestBody {
  const o = asObject(parseFastjsonBody(body), 'CheckClientRequestBody');
  const out: CheckClientRequestBody = {};
  const clientId = optString(o, 'clientId', 'CheckClientRequestBody');
  const group = optString(o, 'group', 'CheckClientRequestBody');
  if (clientId !== undefined) out.clientId = clientId;
  if (group !== undefined) out.group = group;
  if (o.subscriptionData != null) out.subscriptionData = readSubscriptionData(o.subscriptionData, 'subscriptionData');
  return out;
}

/**
 * TopicConfig as GET_TOPIC_CONFIG answers it (and as register-broker bodies and topics.json hold
 * it): keys sorted, `{"order":…,"perm":…,"readQueueNums":…,"topicFilterType":…,"topicName":…,
 * "topicSysFlag":…,"writeQueueNums":…}`.
 */
export interface TopicConfigBody {
  topicName: string;
  readQueueNums: number;
  writeQueueNums: number;
  perm: number;
  topicFilterType: string;
  topicSysFlag: number;
  order: boolean;
  /**
   * 5.x static topics: the broker's TopicQueueMappingDetail, answered when the request set `lo`
   * (Java's TopicConfigAndQueueMapping); absent for a topic without one.
   */
  mappingDetail?: TopicQueueMappingDetail | undefined;
}
export function encodeTopicConfigBody(c: TopicConfigBody): Buffer {
  return Buffer.from(
    toJavaJson({
      mappingDetail: c.mappingDetail ? topicQueueMappingDetailToJson(c.mappingDetail) : undefined,
      order: c.order,
      perm: c.perm,
      readQueueNums: c.readQueueNums,
      topicFilterType: c.topicFilterType,
      topicName: c.topicName,
      topicSysFlag: c.topicSysFlag,
      writeQueueNums: c.writeQueueNums,
    }),
    'utf8',
  );
}
export function decodeTopicConfigBody(body: Buffer | Uint8Array): TopicConfigBody {
  const p = 'TopicConfig';
  const o = asObject(parseFastjsonBody(body), p);
  const c: TopicConfigBody = {
    topicName: reqString(o, 'topicName', p),
    readQueueNums: reqNumber(o, 'readQueueNums', p),
    writeQueueNums: reqNumber(o, 'writeQueueNums', p),
    perm: reqNumber(o, 'perm', p),
    topicFilterType: optString(o, 'topicFilterType', p) ?? 'SINGLE_TAG',
    topicSysFlag: optNumber(o, 'topicSysFlag', p, 0),
    order: optBoolean(o, 'order', p, false),
  };
  if (o.mappingDetail != null) c.mappingDetail = readTopicQueueMappingDetail(o.mappingDetail, `${p}.mappingDetail`);
  return c;
}

/** One queue's line of ConsumeStats (`OffsetWrapper`). */
export interface OffsetWrapper {
  brokerOffset: number;
  consumerOffset: number;
  /** Store time of the last consumed message, 0 when none. */
  lastTimestamp: number;
  /** 5.x; written only when set. */
  pullOffset?: number | undefined;
}

/**
 * GET_CONSUME_STATS response body, `ConsumeStats`: `{"consumeTps":0.0,"offsetTable":{{MessageQueue}:
 * {OffsetWrapper},…}}`. The table is keyed by MessageQueue objects (fastjson's non-standard form);
 * entries are written in the order given (Java writes its HashMap's order, which no reader relies
 * on). consumeTps is a Java double, so it is written with a fraction ("0.0").
 */
export interface ConsumeStats {
  consumeTps: number;
  offsetTable: Array<[MessageQueue, OffsetWrapper]>;
}
function javaDouble(v: number): string {
  return Number.isInteger(v) ? v.toFixed(1) : toJavaJson(v);
}
export function encodeConsumeStats(s: ConsumeStats): Buffer {
  const entries = s.offsetTable.map(([mq, w]) => `${toJavaJson(messageQueueToJson(mq))}:${toJavaJson(w)}`);
  return Buffer.from(`{"consumeTps":${javaDouble(s.consumeTps)},"offsetTable":{${entries.join(',')}}}`, 'utf8');
}
export function decodeConsumeStats(body: Buffer | Uint8Array): ConsumeStats {
  const o = asObject(parseFastjsonBody(body), 'ConsumeStats');
  const table = asObject(o.offsetTable ?? {}, 'ConsumeStats.offsetTable');
  const offsetTable: Array<[MessageQueue, OffsetWrapper]> = Object.entries(table).map(([key, v]) => {
    const path = `offsetTable[${key}]`;
    const w = asObject(v, path);
    const wrapper: OffsetWrapper = {
      brokerOffset: reqNumber(w, 'brokerOffset', path),
      consumerOffset: reqNumber(w, 'consumerOffset', path),
      lastTimestamp: optNumber(w, 'lastTimestamp', path, 0),
    };
    if (w.pullOffset != null) wrapper.pullOffset = reqNumber(w, 'pullOffset', path);
    return [parseMessageQueueKey(key, path), wrapper];
  });
  return { consumeTps: optNumber(o, 'consumeTps', 'ConsumeStats', 0), offsetTable };
}

// `X.encode(v)` / `X.decode(body)` rows for the operation table.
/** The codec of CheckClientRequestBody: the CHECK_CLIENT_CONFIG request body. */
export const CheckClientRequestBody = {
  encode: encodeCheckClientRequestBody,
  decode: decodeCheckClientRequestBody,
} as const;
/** The codec of TopicConfigBody: GET_TOPIC_CONFIG's answer (a missing topicFilterType reads as SINGLE_TAG, topicSysFlag 0, order false). */
export const TopicConfigBody = { encode: encodeTopicConfigBody, decode: decodeTopicConfigBody } as const;
/** The codec of ConsumeStats: the GET_CONSUME_STATS response body. */
export const ConsumeStats = { encode: encodeConsumeStats, decode: decodeConsumeStats } as const;

/**
 * GET_ALL_TOPIC_LIST_FROM_NAMESERVER response body, `TopicList`: `{"topicList":[…]}` (plus
 * `brokerAddr` when set). Topics are written in the order given.
 */
export interface TopicList {
  topicList: string[];
  brokerAddr?: string | undefined;
}
export function encodeTopicList(l: TopicList): Buffer {
  return Buffer.from(toJavaJson({ brokerAddr: l.brokerAddr, topicList: l.topicList }), 'utf8');
}
export function decodeTopicList(body: Buffer | Uint8Array): TopicList {
  const o = asObject(parseFastjsonBody(body), 'TopicList');
  const out: TopicList = { topicList: stringArray(o.topicList, 'topicList') };
  const addr = optString(o, 'brokerAddr', 'TopicList');
  if (addr !== undefined) out.brokerAddr = addr;
  return out;
}
/** The codec of TopicList: the GET_ALL_TOPIC_LIST_FROM_NAMESERVER response body. */
export const TopicList = { encode: encodeTopicList, decode: decodeTopicList } as const;
