import { toJavaJson } from '../json/java-json.js';
import { parseFastjsonBody } from '../json/fastjson-parse.js';
import { readSubscriptionData, type SubscriptionData } from './heartbeat-data.js';
import { messageQueueToJson, parseMessageQueueKey, type MessageQueue } from './message-queue.js';
import {
  asArray,
  asObject,
  bodyError,
  optBoolean,
  optNumber,
  optString,
  reqNumber,
  reqString,
  type Obj,
} from './shape.js';

/**
 * Bodies of the admin requests mqadmin sends (Java's remoting/protocol/body classes of 5.3.3).
 * Tables keyed by MessageQueue use fastjson's non-standard object keys, as Java writes them.
 */

function json(v: unknown, nonStandard = false): Buffer {
  return Buffer.from(toJavaJson(v, { nonStandard }), 'utf8');
}
function javaDouble(v: number): string {
  return Number.isInteger(v) ? v.toFixed(1) : toJavaJson(v);
}

/** GET_BROKER_RUNTIME_INFO (28) response body, `KVTable`: `{"table":{"brokerVersionDesc":"V5_3_3",…}}` (every value a string). */
export interface KVTable {
  table: Record<string, string>;
}
export function encodeKVTable(t: KVTable): Buffer {
  return json({ table: t.table });
}
export function decodeKVTable(body: Buffer | Uint8Array): KVTable {
  const o = asObject(parseFastjsonBody(body), 'KVTable');
  const table: Record<string, string> = {};
  for (const [k, v] of Object.entries(asObject(o.table ?? {}, 'KVTable.table'))) {
    if (typeof v !== 'string') throw bodyError(`KVTable.table.${k}`, 'is not a string');
    table[k] = v;
  }
  return { table };
}
export const KVTable = { encode: encodeKVTable, decode: decodeKVTable } as const;

/** One queue of TopicStatsTable, `TopicOffset`. */
export interface TopicOffset {
  minOffset: number;
  maxOffset: number;
  /** Store time of the last message, 0 for an empty queue. */
  lastUpdateTimestamp: number;
}

/**
 * GET_TOPIC_STATS_INFO (202) response body, `TopicStatsTable`: `{"offsetTable":{{MessageQueue}:
 * {TopicOffset},…},"topicPutTps":0.0}` (topicPutTps since 5.3.3; written only when set).
 */
export interface TopicStatsTable {
  offsetTable: Array<[MessageQueue, TopicOffset]>;
  topicPutTps?: number | undefined;
}
export function encodeTopicStatsTable(s: TopicStatsTable): Buffer {
  const entries = s.offsetTable.map(
    ([mq, o]) =>
      `${toJavaJson(messageQueueToJson(mq))}:${toJavaJson({ lastUpdateTimestamp: o.lastUpdateTimestamp, maxOffset: o.maxOffset, minOffset: o.minOffset })}`,
  );
  const tps = s.topicPutTps === undefined ? '' : `,"topicPutTps":${javaDouble(s.topicPutTps)}`;
  return Buffer.from(`{"offsetTable":{${entries.join(',')}}${tps}}`, 'utf8');
}
export function decodeTopicStatsTable(body: Buffer | Uint8Array): TopicStatsTable {
  const o = asObject(parseFastjsonBody(body), 'TopicStatsTable');
  const table = asObject(o.offsetTable ?? {}, 'TopicStatsTable.offsetTable');
  const offsetTable: Array<[MessageQueue, TopicOffset]> = Object.entries(table).map(([key, v]) => {
    const path = `offsetTable[${key}]`;
    const w = asObject(v, path);
    return [
      parseMessageQueueKey(key, path),
      {
        minOffset: reqNumber(w, 'minOffset', path),
        maxOffset: reqNumber(w, 'maxOffset', path),
        lastUpdateTimestamp: optNumber(w, 'lastUpdateTimestamp', path, 0),
      },
    ];
  });
  const out: TopicStatsTable = { offsetTable };
  if (o.topicPutTps != null) out.topicPutTps = optNumber(o, 'topicPutTps', 'TopicStatsTable', 0);
  return out;
}
export const TopicStatsTable = { encode: encodeTopicStatsTable, decode: decodeTopicStatsTable } as const;

/** One client of a ConsumerConnection, `Connection`: language is the LanguageCode name ("JAVA", "NODE"…), version the client's MQVersion ordinal. */
export interface Connection {
  clientId: string;
  clientAddr: string;
  language: string;
  version: number;
}

/**
 * GET_CONSUMER_CONNECTION_LIST (203) response body, `ConsumerConnection`: `{"connectionSet":[…],
 * "consumeFromWhere":…,"consumeType":…,"messageModel":…,"subscriptionTable":{topic:{SubscriptionData}}}`.
 * A group with no client online is answered CONSUMER_NOT_ONLINE (206) instead.
 */
export interface ConsumerConnection {
  connectionSet: Connection[];
  subscriptionTable: Record<string, SubscriptionData>;
  consumeType?: string | undefined;
  messageModel?: string | undefined;
  consumeFromWhere?: string | undefined;
}
export function encodeConsumerConnection(c: ConsumerConnection): Buffer {
  return json({
    connectionSet: c.connectionSet.map((x) => ({
      clientAddr: x.clientAddr,
      clientId: x.clientId,
      language: x.language,
      version: x.version,
    })),
    consumeFromWhere: c.consumeFromWhere,
    consumeType: c.consumeType,
    messageModel: c.messageModel,
    subscriptionTable: c.subscriptionTable,
  });
}
export function decodeConsumerConnection(body: Buffer | Uint8Array): ConsumerConnection {
  const p = 'ConsumerConnection';
  const o = asObject(parseFastjsonBody(body), p);
  const connectionSet = asArray(o.connectionSet, `${p}.connectionSet`).map((v, i): Connection => {
    const path = `${p}.connectionSet[${i}]`;
    const c = asObject(v, path);
    return {
      clientId: reqString(c, 'clientId', path),
      clientAddr: optString(c, 'clientAddr', path) ?? '',
      language: optString(c, 'language', path) ?? 'JAVA',
      version: optNumber(c, 'version', path, 0),
    };
  });
  const subscriptionTable: Record<string, SubscriptionData> = {};
  for (const [topic, v] of Object.entries(asObject(o.subscriptionTable ?? {}, `${p}.subscriptionTable`))) {
    subscriptionTable[topic] = readSubscriptionData(v, `${p}.subscriptionTable.${topic}`);
  }
  return {
    connectionSet,
    subscriptionTable,
    consumeType: optString(o, 'consumeType', p),
    messageModel: optString(o, 'messageModel', p),
    consumeFromWhere: optString(o, 'consumeFromWhere', p),
  };
}
export const ConsumerConnection = { encode: encodeConsumerConnection, decode: decodeConsumerConnection } as const;

/**
 * `SubscriptionGroupConfig`, the body of UPDATE_AND_CREATE_SUBSCRIPTIONGROUP (200) and the values
 * of GET_ALL_SUBSCRIPTIONGROUP_CONFIG (201). Java's defaults: consumeEnable, consumeFromMinEnable,
 * consumeBroadcastEnable true, consumeMessageOrderly false, retryQueueNums 1, retryMaxTimes 16,
 * brokerId 0, whichBrokerWhenConsumeSlowly 1, notifyConsumerIdsChangedEnable true, groupSysFlag 0,
 * consumeTimeoutMinute 15. Fields we do not model (groupRetryPolicy, subscriptionDataSet,
 * attributes) are kept as they came in `extra`, so a config read and written back loses nothing.
 */
export interface SubscriptionGroupConfig {
  groupName: string;
  consumeEnable: boolean;
  consumeFromMinEnable: boolean;
  consumeBroadcastEnable: boolean;
  consumeMessageOrderly: boolean;
  retryQueueNums: number;
  retryMaxTimes: number;
  brokerId: number;
  whichBrokerWhenConsumeSlowly: number;
  notifyConsumerIdsChangedEnable: boolean;
  groupSysFlag: number;
  consumeTimeoutMinute: number;
  extra?: Record<string, unknown> | undefined;
}
const GROUP_KEYS = new Set([
  'groupName',
  'consumeEnable',
  'consumeFromMinEnable',
  'consumeBroadcastEnable',
  'consumeMessageOrderly',
  'retryQueueNums',
  'retryMaxTimes',
  'brokerId',
  'whichBrokerWhenConsumeSlowly',
  'notifyConsumerIdsChangedEnable',
  'groupSysFlag',
  'consumeTimeoutMinute',
]);

/** A group config with Java's defaults for everything not given. */
export function subscriptionGroupConfig(
  groupName: string,
  fields: Partial<Omit<SubscriptionGroupConfig, 'groupName'>> = {},
): SubscriptionGroupConfig {
  return {
    groupName,
    consumeEnable: true,
    consumeFromMinEnable: true,
    consumeBroadcastEnable: true,
    consumeMessageOrderly: false,
    retryQueueNums: 1,
    retryMaxTimes: 16,
    brokerId: 0,
    whichBrokerWhenConsumeSlowly: 1,
    notifyConsumerIdsChangedEnable: true,
    groupSysFlag: 0,
    consumeTimeoutMinute: 15,
    ...fields,
  };
}
function groupToJson(c: SubscriptionGroupConfig): Record<string, unknown> {
  const out: Record<string, unknown> = { ...(c.extra ?? {}) };
  for (const k of GROUP_KEYS) out[k] = c[k as keyof SubscriptionGroupConfig];
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
export function readSubscriptionGroupConfig(v: unknown, path: string): SubscriptionGroupConfig {
  const o: Obj = asObject(v, path);
  const d = subscriptionGroupConfig(reqString(o, 'groupName', path));
  const extra: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(o)) if (!GROUP_KEYS.has(k)) extra[k] = x;
  const c: SubscriptionGroupConfig = {
    groupName: d.groupName,
    consumeEnable: optBoolean(o, 'consumeEnable', path, d.consumeEnable),
    consumeFromMinEnable: optBoolean(o, 'consumeFromMinEnable', path, d.consumeFromMinEnable),
    consumeBroadcastEnable: optBoolean(o, 'consumeBroadcastEnable', path, d.consumeBroadcastEnable),
    consumeMessageOrderly: optBoolean(o, 'consumeMessageOrderly', path, d.consumeMessageOrderly),
    retryQueueNums: optNumber(o, 'retryQueueNums', path, d.retryQueueNums),
    retryMaxTimes: optNumber(o, 'retryMaxTimes', path, d.retryMaxTimes),
    brokerId: optNumber(o, 'brokerId', path, d.brokerId),
    whichBrokerWhenConsumeSlowly: optNumber(o, 'whichBrokerWhenConsumeSlowly', path, d.whichBrokerWhenConsumeSlowly),
    notifyConsumerIdsChangedEnable: optBoolean(
      o,
      'notifyConsumerIdsChangedEnable',
      path,
      d.notifyConsumerIdsChangedEnable,
    ),
    groupSysFlag: optNumber(o, 'groupSysFlag', path, d.groupSysFlag),
    consumeTimeoutMinute: optNumber(o, 'consumeTimeoutMinute', path, d.consumeTimeoutMinute),
  };
  if (Object.keys(extra).length > 0) c.extra = extra;
  return c;
}
export function encodeSubscriptionGroupConfig(c: SubscriptionGroupConfig): Buffer {
  return json(groupToJson(c));
}
export function decodeSubscriptionGroupConfig(body: Buffer | Uint8Array): SubscriptionGroupConfig {
  return readSubscriptionGroupConfig(parseFastjsonBody(body), 'SubscriptionGroupConfig');
}
export const SubscriptionGroupConfig = {
  encode: encodeSubscriptionGroupConfig,
  decode: decodeSubscriptionGroupConfig,
} as const;

/**
 * GET_ALL_SUBSCRIPTIONGROUP_CONFIG (201) response body, `SubscriptionGroupWrapper`:
 * `{"dataVersion":{…},"forbiddenTable":{…},"subscriptionGroupTable":{group:{SubscriptionGroupConfig}}}`.
 */
export interface SubscriptionGroupWrapper {
  subscriptionGroupTable: Record<string, SubscriptionGroupConfig>;
  dataVersion?: { timestamp: number; counter: number } | undefined;
}
export function encodeSubscriptionGroupWrapper(w: SubscriptionGroupWrapper): Buffer {
  const table: Record<string, unknown> = {};
  for (const [k, c] of Object.entries(w.subscriptionGroupTable)) table[k] = groupToJson(c);
  return json({
    dataVersion: w.dataVersion ?? { counter: 0, timestamp: 0 },
    forbiddenTable: {},
    subscriptionGroupTable: table,
  });
}
export function decodeSubscriptionGroupWrapper(body: Buffer | Uint8Array): SubscriptionGroupWrapper {
  const p = 'SubscriptionGroupWrapper';
  const o = asObject(parseFastjsonBody(body), p);
  const subscriptionGroupTable: Record<string, SubscriptionGroupConfig> = {};
  for (const [k, v] of Object.entries(asObject(o.subscriptionGroupTable ?? {}, `${p}.subscriptionGroupTable`))) {
    subscriptionGroupTable[k] = readSubscriptionGroupConfig(v, `${p}.subscriptionGroupTable.${k}`);
  }
  const out: SubscriptionGroupWrapper = { subscriptionGroupTable };
  if (o.dataVersion != null) {
    const dv = asObject(o.dataVersion, `${p}.dataVersion`);
    out.dataVersion = {
      timestamp: optNumber(dv, 'timestamp', `${p}.dataVersion`, 0),
      counter: typeof dv.counter === 'number' ? dv.counter : 0,
    };
  }
  return out;
}
export const SubscriptionGroupWrapper = {
  encode: encodeSubscriptionGroupWrapper,
  decode: decodeSubscriptionGroupWrapper,
} as const;
