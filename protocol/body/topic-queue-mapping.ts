import { toJavaJson } from '../json/java-json.js';
import { parseFastjsonBody } from '../json/fastjson-parse.js';
import type { MessageQueue } from './message-queue.js';
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
 * Static topics (RIP-21, Apache 5.x): a topic with a fixed number of logic queues, each hosted by one
 * broker at a time and movable to another broker without changing its id or its offsets.
 * docs/protocol-facts.md#static-topics has the wire facts.
 */

/** Java's MixAll.LOGICAL_QUEUE_MOCK_BROKER_PREFIX: the broker name of every logic queue starts with it. */
export const LOGIC_QUEUE_BROKER_PREFIX = '__syslo__';
/** MixAll.METADATA_SCOPE_GLOBAL, the scope every mapping gets unless set otherwise. */
export const STATIC_TOPIC_GLOBAL_SCOPE = '__global__';
/** MixAll.LOGICAL_QUEUE_MOCK_BROKER_NAME_NOT_EXIST: where a logic queue no broker hosts points. */
export const LOGIC_QUEUE_NO_BROKER = '__syslo__none__';

/**
 * TopicQueueMappingInfo: what one broker registers about a static topic, as the route carries it in
 * `topicQueueMappingByBroker` (broker name → info).
 */
export interface TopicQueueMappingInfo {
  topic: string;
  /** Logic queues of one scope share one mock broker name. Default `__global__`. */
  scope: string;
  /** Logic queues of the topic in all. */
  totalQueues: number;
  /** The broker this info is from. */
  bname: string;
  /** Milliseconds stamp of the mapping's version: the highest epoch wins. */
  epoch: number;
  dirty: boolean;
  /** Logic queue id → physical queue id, for the logic queues this broker leads now. */
  currIdMap: Record<number, number>;
}

/**
 * LogicQueueMappingItem: one stretch of a logic queue on one broker's physical queue. Logic offset
 * `logicOffset` is physical offset `startOffset` there; `endOffset` (exclusive) is set once the
 * stretch is closed, −1 before. A stretch just mapped in has logicOffset −1 until it is decided.
 */
export interface LogicQueueMappingItem {
  gen: number;
  queueId: number;
  bname: string;
  logicOffset: number;
  startOffset: number;
  endOffset: number;
  timeOfStart: number;
  timeOfEnd: number;
}

/** TopicQueueMappingDetail: a broker's full mapping of a static topic (GET_TOPIC_CONFIG with lo, UPDATE_AND_CREATE_STATIC_TOPIC's body). */
export interface TopicQueueMappingDetail extends TopicQueueMappingInfo {
  /** Logic queue id → its stretches, oldest first; the last one is the queue's leader. */
  hostedQueues: Record<number, LogicQueueMappingItem[]>;
}

/** The mock broker name of a scope's logic queues (TopicQueueMappingUtils.getMockBrokerName): `__syslo__global__` by default. */
export function logicQueueBrokerName(scope: string): string {
  return LOGIC_QUEUE_BROKER_PREFIX + (scope === STATIC_TOPIC_GLOBAL_SCOPE ? scope.slice(2) : scope);
}

/** True for a MessageQueue of a static topic: its broker name is a logic queue's mock name. */
export function isLogicQueueBroker(brokerName: string): boolean {
  return brokerName.startsWith(LOGIC_QUEUE_BROKER_PREFIX);
}

function intKeyMap<T>(v: unknown, path: string, read: (x: unknown, p: string) => T): Record<number, T> {
  const out: Record<number, T> = {};
  for (const [k, x] of Object.entries(asObject(v ?? {}, path))) {
    if (!/^-?\d+$/.test(k)) throw bodyError(path, `has a non-numeric queue id ${JSON.stringify(k)}`);
    out[Number(k)] = read(x, `${path}.${k}`);
  }
  return out;
}

function readInt(v: unknown, path: string): number {
  if (typeof v !== 'number' || !Number.isInteger(v)) throw bodyError(path, 'is not an integer');
  return v;
}

export function readTopicQueueMappingInfo(v: unknown, path: string): TopicQueueMappingInfo {
  const o = asObject(v, path);
  return {
    topic: optString(o, 'topic', path) ?? '',
    scope: optString(o, 'scope', path) ?? STATIC_TOPIC_GLOBAL_SCOPE,
    totalQueues: optNumber(o, 'totalQueues', path, 0),
    bname: optString(o, 'bname', path) ?? '',
    epoch: optNumber(o, 'epoch', path, 0),
    dirty: optBoolean(o, 'dirty', path, false),
    currIdMap: intKeyMap(o.currIdMap, `${path}.currIdMap`, readInt),
  };
}

export function readLogicQueueMappingItem(v: unknown, path: string): LogicQueueMappingItem {
  const o = asObject(v, path);
  return {
    gen: optNumber(o, 'gen', path, 0),
    queueId: reqNumber(o, 'queueId', path),
    bname: reqString(o, 'bname', path),
    logicOffset: optNumber(o, 'logicOffset', path, 0),
    startOffset: optNumber(o, 'startOffset', path, 0),
    endOffset: optNumber(o, 'endOffset', path, -1),
    timeOfStart: optNumber(o, 'timeOfStart', path, -1),
    timeOfEnd: optNumber(o, 'timeOfEnd', path, -1),
  };
}

export function readTopicQueueMappingDetail(v: unknown, path: string): TopicQueueMappingDetail {
  const o: Obj = asObject(v, path);
  return {
    ...readTopicQueueMappingInfo(o, path),
    hostedQueues: intKeyMap(o.hostedQueues, `${path}.hostedQueues`, (x, p) =>
      asArray(x, p).map((item, i) => readLogicQueueMappingItem(item, `${p}[${i}]`)),
    ),
  };
}

/** The route's `topicQueueMappingByBroker` (broker name → info); a value of another shape throws a ProtocolError naming the path. */
export function readTopicQueueMappingByBroker(v: unknown, path: string): Record<string, TopicQueueMappingInfo> {
  const out: Record<string, TopicQueueMappingInfo> = {};
  for (const [k, x] of Object.entries(asObject(v, path))) out[k] = readTopicQueueMappingInfo(x, `${path}.${k}`);
  return out;
}

function numberKeyed<T>(r: Record<number, T>, map: (x: T) => unknown = (x) => x): Map<number, unknown> {
  const m = new Map<number, unknown>();
  for (const k of Object.keys(r)
    .map(Number)
    .sort((a, b) => a - b))
    m.set(k, map(r[k]!));
  return m;
}

/** A TopicQueueMappingInfo as JSON-ready value, keys as fastjson sorts them. */
export function topicQueueMappingInfoToJson(i: TopicQueueMappingInfo): Record<string, unknown> {
  return {
    bname: i.bname,
    currIdMap: numberKeyed(i.currIdMap),
    dirty: i.dirty,
    epoch: i.epoch,
    scope: i.scope,
    topic: i.topic,
    totalQueues: i.totalQueues,
  };
}

function itemToJson(x: LogicQueueMappingItem): Record<string, unknown> {
  return {
    bname: x.bname,
    endOffset: x.endOffset,
    gen: x.gen,
    logicOffset: x.logicOffset,
    queueId: x.queueId,
    startOffset: x.startOffset,
    timeOfEnd: x.timeOfEnd,
    timeOfStart: x.timeOfStart,
  };
}

/** A TopicQueueMappingDetail as JSON-ready value (UPDATE_AND_CREATE_STATIC_TOPIC's body). */
export function topicQueueMappingDetailToJson(d: TopicQueueMappingDetail): Record<string, unknown> {
  const { bname, currIdMap, dirty, epoch, scope, topic, totalQueues } = topicQueueMappingInfoToJson(d);
  return {
    bname,
    currIdMap,
    dirty,
    epoch,
    hostedQueues: numberKeyed(d.hostedQueues, (items) => items.map(itemToJson)),
    scope,
    topic,
    totalQueues,
  };
}

/** A TopicQueueMappingDetail as the JSON bytes UPDATE_AND_CREATE_STATIC_TOPIC carries. */
export function encodeTopicQueueMappingDetail(d: TopicQueueMappingDetail): Buffer {
  return Buffer.from(toJavaJson(topicQueueMappingDetailToJson(d)), 'utf8');
}
/** Parse a TopicQueueMappingDetail body (either JSON form); another shape throws a ProtocolError naming the path. */
export function decodeTopicQueueMappingDetail(body: Buffer | Uint8Array): TopicQueueMappingDetail {
  return readTopicQueueMappingDetail(parseFastjsonBody(body), 'TopicQueueMappingDetail');
}
/** UPDATE_AND_CREATE_STATIC_TOPIC's request body. */
export const TopicQueueMappingDetailBody = {
  encode: encodeTopicQueueMappingDetail,
  decode: decodeTopicQueueMappingDetail,
} as const;

/**
 * The logic queues of a static topic and the broker that leads each (Java's
 * ClientMetadata.topicRouteData2EndpointsForStaticTopic): per scope, every id in a broker's
 * currIdMap points at that broker, the info of the higher epoch winning; ids up to the scope's
 * largest totalQueues that nobody claims point at LOGIC_QUEUE_NO_BROKER. The queue's broker name
 * is the scope's mock name. Empty when the route has no mapping (not a static topic).
 */
export function staticTopicEndpoints(
  topic: string,
  mappingByBroker: Record<string, TopicQueueMappingInfo> | undefined,
): Array<{ queue: MessageQueue; brokerName: string }> {
  if (!mappingByBroker) return [];
  const byScope = new Map<string, TopicQueueMappingInfo[]>();
  for (const info of Object.values(mappingByBroker)) {
    let list = byScope.get(info.scope);
    if (!list) byScope.set(info.scope, (list = []));
    list.push(info);
  }
  const out: Array<{ queue: MessageQueue; brokerName: string }> = [];
  for (const [scope, infos] of byScope) {
    // Newest epoch first, as Java sorts them; of two infos of one epoch claiming an id the later wins.
    infos.sort((a, b) => b.epoch - a.epoch);
    let total = 0;
    const leader = new Map<number, TopicQueueMappingInfo>();
    for (const info of infos) {
      // Java's check compares against a maximum epoch it never raises above −1: any info counts.
      if (info.totalQueues > total) total = info.totalQueues;
      for (const k of Object.keys(info.currIdMap)) {
        const id = Number(k);
        const old = leader.get(id);
        if (!old || old.epoch <= info.epoch) leader.set(id, info);
      }
    }
    const brokerName = logicQueueBrokerName(scope);
    for (let id = 0; id < total; id++) {
      out.push({
        queue: { topic, brokerName, queueId: id },
        brokerName: leader.get(id)?.bname ?? LOGIC_QUEUE_NO_BROKER,
      });
    }
  }
  return out;
}
