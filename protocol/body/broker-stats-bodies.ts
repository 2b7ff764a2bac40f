import { toJavaJson } from '../json/java-json.js';
import { parseFastjsonBody } from '../json/fastjson-parse.js';
import { asObject, optNumber, stringArray } from './shape.js';

/**
 * Bodies of what mqadmin statsAll reads (Java's remoting/protocol/body classes of 5.3.3): a stats
 * item's three windows, and the groups that consume a topic.
 */

/**
 * One window of a stats item, `BrokerStatsItem`: `sum` (long: what was counted in the window),
 * `tps` (double: sum per second over the window's sampled span) and `avgpt` (double: sum per
 * counted call; for TOPIC_PUT_NUMS messages per put request, for GROUP_GET_NUMS per pull that
 * found messages).
 */
export interface BrokerStatsItem {
  sum: number;
  tps: number;
  avgpt: number;
}

/**
 * VIEW_BROKER_STATS_DATA (315) response body, `BrokerStatsData`:
 * `{"statsDay":{"avgpt":…,"sum":…,"tps":…},"statsHour":{…},"statsMinute":{…}}`. The minute window
 * spans the last 60 s (six 10-s samples), the hour window the last hour (six 10-min samples), the
 * day window the last 24 h (24 hourly samples).
 */
export interface BrokerStatsData {
  statsMinute: BrokerStatsItem;
  statsHour: BrokerStatsItem;
  statsDay: BrokerStatsItem;
}

function javaDouble(v: number): string {
  // fastjson writes a Java double with its fraction ("0.0"); NaN and infinities as null
  if (!Number.isFinite(v)) return 'null';
  return Number.isInteger(v) ? v.toFixed(1) : toJavaJson(v);
}

function itemJson(it: BrokerStatsItem): string {
  return `{"avgpt":${javaDouble(it.avgpt)},"sum":${Math.trunc(it.sum)},"tps":${javaDouble(it.tps)}}`;
}

export function encodeBrokerStatsData(d: BrokerStatsData): Buffer {
  return Buffer.from(
    `{"statsDay":${itemJson(d.statsDay)},"statsHour":${itemJson(d.statsHour)},"statsMinute":${itemJson(d.statsMinute)}}`,
    'utf8',
  );
}

function decodeItem(o: Record<string, unknown>, key: string): BrokerStatsItem {
  const path = `BrokerStatsData.${key}`;
  // fastjson leaves a field Java's object does not have at its default: 0
  const it = o[key] == null ? {} : asObject(o[key], path);
  return {
    sum: optNumber(it, 'sum', path, 0),
    tps: optNumber(it, 'tps', path, 0),
    avgpt: optNumber(it, 'avgpt', path, 0),
  };
}

export function decodeBrokerStatsData(body: Buffer | Uint8Array): BrokerStatsData {
  const o = asObject(parseFastjsonBody(body), 'BrokerStatsData');
  return {
    statsMinute: decodeItem(o, 'statsMinute'),
    statsHour: decodeItem(o, 'statsHour'),
    statsDay: decodeItem(o, 'statsDay'),
  };
}

/** The codec of BrokerStatsData: the VIEW_BROKER_STATS_DATA response body. */
export const BrokerStatsData = { encode: encodeBrokerStatsData, decode: decodeBrokerStatsData } as const;

/**
 * QUERY_TOPIC_CONSUME_BY_WHO (300) response body, `GroupList`: `{"groupList":[…]}`, the groups
 * online with a subscription to the topic and those with committed offsets of it (a Java HashSet:
 * no order).
 */
export interface GroupList {
  groupList: string[];
}
export function encodeGroupList(l: GroupList): Buffer {
  return Buffer.from(toJavaJson({ groupList: l.groupList }), 'utf8');
}
export function decodeGroupList(body: Buffer | Uint8Array): GroupList {
  const o = asObject(parseFastjsonBody(body), 'GroupList');
  return { groupList: stringArray(o.groupList, 'GroupList.groupList') };
}
/** The codec of GroupList: the QUERY_TOPIC_CONSUME_BY_WHO response body. */
export const GroupList = { encode: encodeGroupList, decode: decodeGroupList } as const;
