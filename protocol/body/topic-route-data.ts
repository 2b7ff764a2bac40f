import { toJavaJson } from '../json/java-json.js';
import { parseFastjsonBody } from '../json/fastjson-parse.js';
import { isReadable, isWriteable } from '../sys-flag.js';
import type { MessageQueue } from './message-queue.js';
import {
  readTopicQueueMappingByBroker,
  staticTopicEndpoints,
  LOGIC_QUEUE_NO_BROKER,
  topicQueueMappingInfoToJson,
  type TopicQueueMappingInfo,
} from './topic-queue-mapping.js';
import {
  asArray,
  asObject,
  bodyError,
  optBoolean,
  optNumber,
  optString,
  reqNumber,
  reqString,
  stringArray,
  type Obj,
} from './shape.js';

/**
 * One broker group of a route or of ClusterInfo: its cluster, name and the address of each of
 * its brokers by broker id.
 */
export interface BrokerData {
  cluster: string;
  brokerName: string;
  /** broker id (decimal text; "0" = master) → "ip:port" */
  brokerAddrs: Record<string, string>;
  /** 5.x */
  enableActingMaster?: boolean | undefined;
  /** 5.x, when set */
  zoneName?: string | undefined;
}

/**
 * A topic's queues on one broker: how many are read and written, and the topic's PermName bits
 * and TopicSysFlag there.
 */
export interface QueueData {
  brokerName: string;
  readQueueNums: number;
  writeQueueNums: number;
  perm: number;
  topicSysFlag: number;
}

/**
 * GET_ROUTEINFO_BY_TOPIC body
 * (docs/protocol-facts.md#topic-route): the topic's brokers and queues. Read both the standard form
 * (quoted broker-id keys) and the plain-fastjson form (`{0:"addr"}`), and QueueData's 4.8 field
 * name `topicSynFlag`.
 */
export interface TopicRouteData {
  brokerDatas: BrokerData[];
  queueDatas: QueueData[];
  filterServerTable: Record<string, string[]>;
  orderTopicConf?: string | undefined;
  /** 5.x static topics (RIP-21): broker name → the logic queues it leads (topic-queue-mapping.ts). */
  topicQueueMappingByBroker?: Record<string, TopicQueueMappingInfo> | undefined;
}

/** How encodeTopicRouteData writes a route: which name server's JSON it imitates. */
export interface TopicRouteEncodeOptions {
  /**
   * Plain fastjson form with unquoted broker ids (what old clients get).
   * @default false
   */
  nonStandard?: boolean;
  /**
   * Write enableActingMaster:false when unset, as 5.x name servers do.
   * @default false (as 4.9)
   */
  v5?: boolean;
}

export function readBrokerData(v: unknown, path: string): BrokerData {
  const o = asObject(v, path);
  const addrs = asObject(o.brokerAddrs ?? {}, `${path}.brokerAddrs`);
  const brokerAddrs: Record<string, string> = {};
  for (const [k, a] of Object.entries(addrs)) {
    if (!/^-?\d+$/.test(k)) throw bodyError(`${path}.brokerAddrs`, `has a non-numeric broker id ${JSON.stringify(k)}`);
    if (typeof a !== 'string') throw bodyError(`${path}.brokerAddrs.${k}`, 'is not a string');
    brokerAddrs[String(Number(k))] = a;
  }
  const bd: BrokerData = {
    cluster: optString(o, 'cluster', path) ?? '',
    brokerName: reqString(o, 'brokerName', path),
    brokerAddrs,
  };
  if (o.enableActingMaster != null) bd.enableActingMaster = optBoolean(o, 'enableActingMaster', path, false);
  const zone = optString(o, 'zoneName', path);
  if (zone !== undefined) bd.zoneName = zone;
  return bd;
}

function readQueueData(v: unknown, path: string): QueueData {
  const o = asObject(v, path);
  return {
    brokerName: reqString(o, 'brokerName', path),
    readQueueNums: reqNumber(o, 'readQueueNums', path),
    writeQueueNums: reqNumber(o, 'writeQueueNums', path),
    perm: reqNumber(o, 'perm', path),
    // 4.8 and older name the field topicSynFlag.
    topicSysFlag:
      o.topicSysFlag != null ? optNumber(o, 'topicSysFlag', path, 0) : optNumber(o, 'topicSynFlag', path, 0),
  };
}

/** Parse a GET_ROUTEINFO_BY_TOPIC body in either JSON form; a body of another shape throws a ProtocolError naming the bad path. */
export function decodeTopicRouteData(body: Buffer | Uint8Array): TopicRouteData {
  const o: Obj = asObject(parseFastjsonBody(body), 'TopicRouteData');
  const filter: Record<string, string[]> = {};
  if (o.filterServerTable != null) {
    for (const [k, v] of Object.entries(asObject(o.filterServerTable, 'filterServerTable'))) {
      filter[k] = stringArray(v, `filterServerTable.${k}`);
    }
  }
  const route: TopicRouteData = {
    brokerDatas: asArray(o.brokerDatas, 'brokerDatas').map((b, i) => readBrokerData(b, `brokerDatas[${i}]`)),
    queueDatas: asArray(o.queueDatas, 'queueDatas').map((q, i) => readQueueData(q, `queueDatas[${i}]`)),
    filterServerTable: filter,
  };
  const otc = optString(o, 'orderTopicConf', 'TopicRouteData');
  if (otc !== undefined) route.orderTopicConf = otc;
  if (o.topicQueueMappingByBroker != null)
    route.topicQueueMappingByBroker = readTopicQueueMappingByBroker(
      o.topicQueueMappingByBroker,
      'topicQueueMappingByBroker',
    );
  return route;
}

/** BrokerData as a JSON-ready value: brokerAddrs as a Map of numeric ids so they sort numerically. */
export function brokerDataToJson(bd: BrokerData, v5 = false): Record<string, unknown> {
  const addrs = new Map<number, string>();
  for (const [k, a] of Object.entries(bd.brokerAddrs)) addrs.set(Number(k), a);
  return {
    brokerAddrs: addrs,
    brokerName: bd.brokerName,
    cluster: bd.cluster,
    enableActingMaster: bd.enableActingMaster ?? (v5 ? false : undefined),
    zoneName: bd.zoneName,
  };
}

/**
 * A route as the JSON bytes a name server answers GET_ROUTEINFO_BY_TOPIC with: the standard form,
 * non-ASCII escaped, unless `options.nonStandard`.
 */
export function encodeTopicRouteData(route: TopicRouteData, options: TopicRouteEncodeOptions = {}): Buffer {
  const v = {
    brokerDatas: route.brokerDatas.map((b) => brokerDataToJson(b, options.v5)),
    filterServerTable: route.filterServerTable ?? {},
    orderTopicConf: route.orderTopicConf,
    queueDatas: route.queueDatas.map((q) => ({
      brokerName: q.brokerName,
      perm: q.perm,
      readQueueNums: q.readQueueNums,
      topicSysFlag: q.topicSysFlag,
      writeQueueNums: q.writeQueueNums,
    })),
    topicQueueMappingByBroker: route.topicQueueMappingByBroker
      ? Object.fromEntries(
          Object.entries(route.topicQueueMappingByBroker).map(([k, i]) => [k, topicQueueMappingInfoToJson(i)]),
        )
      : undefined,
  };
  return Buffer.from(
    toJavaJson(v, { nonStandard: options.nonStandard === true, escapeNonAscii: options.nonStandard !== true }),
    'utf8',
  );
}

/** True when the route is a static topic's: it carries a non-empty `topicQueueMappingByBroker`. */
export function isStaticTopicRoute(route: TopicRouteData): boolean {
  const m = route.topicQueueMappingByBroker;
  if (!m) return false;
  for (const _ in m) return true;
  return false;
}

/**
 * Queues a consumer may subscribe to: every readable QueueData's 0..readQueueNums-1; for a static
 * topic its logic queues instead (all of them, led by a broker or not), as Java's
 * topicRouteData2TopicSubscribeInfo.
 */
export function topicRouteSubscribeQueues(topic: string, route: TopicRouteData): MessageQueue[] {
  if (isStaticTopicRoute(route))
    return staticTopicEndpoints(topic, route.topicQueueMappingByBroker).map((e) => e.queue);
  const out: MessageQueue[] = [];
  for (const q of route.queueDatas) {
    if (!isReadable(q.perm)) continue;
    for (let i = 0; i < q.readQueueNums; i++) out.push({ topic, brokerName: q.brokerName, queueId: i });
  }
  return out;
}

/**
 * Queues a producer may send to: QueueDatas sorted by broker name, writable, whose broker has a
 * master (id 0); `orderTopicConf` ("brokerName:queueNums;…") replaces this when set. A static
 * topic (without orderTopicConf) gives its logic queues by id, leaving out those no broker leads:
 * Java lists them too, and a send there can only fail on a missing address.
 */
export function topicRoutePublishQueues(topic: string, route: TopicRouteData): MessageQueue[] {
  const out: MessageQueue[] = [];
  if (!route.orderTopicConf && isStaticTopicRoute(route)) {
    for (const e of staticTopicEndpoints(topic, route.topicQueueMappingByBroker))
      if (e.brokerName !== LOGIC_QUEUE_NO_BROKER) out.push(e.queue);
    return out.sort((a, b) => a.queueId - b.queueId);
  }
  if (route.orderTopicConf) {
    for (const item of route.orderTopicConf.split(';')) {
      const [name, nums] = item.split(':');
      if (!name || nums === undefined) continue;
      for (let i = 0; i < Number(nums); i++) out.push({ topic, brokerName: name, queueId: i });
    }
    return out;
  }
  const qds = [...route.queueDatas].sort((a, b) =>
    a.brokerName < b.brokerName ? -1 : a.brokerName > b.brokerName ? 1 : 0,
  );
  for (const q of qds) {
    if (!isWriteable(q.perm)) continue;
    const bd = route.brokerDatas.find((b) => b.brokerName === q.brokerName);
    if (!bd || bd.brokerAddrs['0'] === undefined) continue;
    for (let i = 0; i < q.writeQueueNums; i++) out.push({ topic, brokerName: q.brokerName, queueId: i });
  }
  return out;
}

/**
 * GET_BROKER_CLUSTER_INFO body `ClusterInfo`: brokerAddrTable (brokerName → BrokerData) and
 * clusterAddrTable (cluster → broker names). Java always writes it in the non-standard form.
 */
export interface ClusterInfo {
  brokerAddrTable: Record<string, BrokerData>;
  clusterAddrTable: Record<string, string[]>;
}

/** Parse a GET_BROKER_CLUSTER_INFO body (either JSON form). */
export function decodeClusterInfo(body: Buffer | Uint8Array): ClusterInfo {
  const o = asObject(parseFastjsonBody(body), 'ClusterInfo');
  const brokerAddrTable: Record<string, BrokerData> = {};
  for (const [k, v] of Object.entries(asObject(o.brokerAddrTable ?? {}, 'brokerAddrTable'))) {
    brokerAddrTable[k] = readBrokerData(v, `brokerAddrTable.${k}`);
  }
  const clusterAddrTable: Record<string, string[]> = {};
  for (const [k, v] of Object.entries(asObject(o.clusterAddrTable ?? {}, 'clusterAddrTable'))) {
    clusterAddrTable[k] = stringArray(v, `clusterAddrTable.${k}`);
  }
  return { brokerAddrTable, clusterAddrTable };
}

/** A ClusterInfo as JSON bytes, in the non-standard form Java writes unless `options.nonStandard` is false. */
export function encodeClusterInfo(info: ClusterInfo, options: { nonStandard?: boolean; v5?: boolean } = {}): Buffer {
  const table: Record<string, unknown> = {};
  for (const [k, bd] of Object.entries(info.brokerAddrTable)) table[k] = brokerDataToJson(bd, options.v5);
  return Buffer.from(
    toJavaJson(
      { brokerAddrTable: table, clusterAddrTable: info.clusterAddrTable },
      { nonStandard: options.nonStandard ?? true },
    ),
    'utf8',
  );
}

/** `TopicRouteData.encode(route, opts)` / `TopicRouteData.decode(body)`. */
export const TopicRouteData = { encode: encodeTopicRouteData, decode: decodeTopicRouteData } as const;
/** `ClusterInfo.encode(info)` / `ClusterInfo.decode(body)`. */
export const ClusterInfo = { encode: encodeClusterInfo, decode: decodeClusterInfo } as const;
