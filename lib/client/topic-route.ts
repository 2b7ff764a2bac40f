import { ProtocolError } from '../../protocol/index.js';
import { parseFastjsonLocal } from './fastjson.js';
import { compareMessageQueues, type MessageQueue } from './message-queue.js';

/** PermName bits (§6.3). */
export const PERM_READ = 0x4;
export const PERM_WRITE = 0x2;

/** One broker group of a route: brokerAddrs maps broker id ("0" = master) to "ip:port". */
export interface BrokerData {
  brokerName: string;
  cluster: string;
  brokerAddrs: Record<string, string>;
}

export interface QueueData {
  brokerName: string;
  readQueueNums: number;
  writeQueueNums: number;
  perm: number;
  topicSysFlag: number;
}

/** GET_ROUTEINFO_BY_TOPIC answer (§8.2). */
export interface TopicRouteData {
  brokerDatas: BrokerData[];
  queueDatas: QueueData[];
  orderTopicConf?: string;
}

function num(v: unknown, field: string): number {
  const n = typeof v === 'string' ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isFinite(n)) throw new ProtocolError(`route field ${field} is not a number`, 0);
  return n;
}

/**
 * Reads a route body: standard JSON or fastjson's unquoted numeric broker ids, `topicSynFlag` of 4.8 and
 * older accepted for `topicSysFlag`, unknown keys ignored.
 */
export function parseTopicRouteData(body: Buffer | string): TopicRouteData {
  const text = typeof body === 'string' ? body : body.toString('utf8');
  let raw: unknown;
  try {
    raw = parseFastjsonLocal(text);
  } catch (err) {
    throw new ProtocolError(`route body is not JSON: ${(err as Error).message}`, 0, { cause: err });
  }
  if (raw === null || typeof raw !== 'object') throw new ProtocolError('route body is not an object', 0);
  const r = raw as Record<string, unknown>;
  const brokerDatas: BrokerData[] = [];
  for (const b of Array.isArray(r.brokerDatas) ? (r.brokerDatas as Record<string, unknown>[]) : []) {
    const addrs: Record<string, string> = {};
    const src = (b.brokerAddrs ?? {}) as Record<string, unknown>;
    for (const [id, a] of Object.entries(src)) if (typeof a === 'string') addrs[String(Number(id))] = a;
    brokerDatas.push({ brokerName: String(b.brokerName), cluster: String(b.cluster ?? ''), brokerAddrs: addrs });
  }
  const queueDatas: QueueData[] = [];
  for (const q of Array.isArray(r.queueDatas) ? (r.queueDatas as Record<string, unknown>[]) : []) {
    queueDatas.push({
      brokerName: String(q.brokerName),
      readQueueNums: num(q.readQueueNums, 'readQueueNums'),
      writeQueueNums: num(q.writeQueueNums, 'writeQueueNums'),
      perm: num(q.perm, 'perm'),
      topicSysFlag: num(q.topicSysFlag ?? q.topicSynFlag ?? 0, 'topicSysFlag'),
    });
  }
  const route: TopicRouteData = { brokerDatas, queueDatas };
  if (typeof r.orderTopicConf === 'string') route.orderTopicConf = r.orderTopicConf;
  return route;
}

/** Master address (id 0) of a broker, or undefined. */
export function masterAddress(b: BrokerData): string | undefined {
  return b.brokerAddrs['0'];
}

/** Subscribe set (§8.2): queues 0..readQueueNums-1 of every readable QueueData, in Java's queue order. */
export function topicRouteToSubscribeQueues(topic: string, route: TopicRouteData): MessageQueue[] {
  const out: MessageQueue[] = [];
  for (const q of route.queueDatas) {
    if ((q.perm & PERM_READ) === 0) continue;
    for (let i = 0; i < q.readQueueNums; i++) out.push({ topic, brokerName: q.brokerName, queueId: i });
  }
  return out.sort(compareMessageQueues);
}

/**
 * Publish list (§8.2): QueueDatas sorted by broker name; writable ones whose broker has a master give
 * queues 0..writeQueueNums-1. orderTopicConf ("brokerName:nums;...") replaces this when present.
 */
export function topicRouteToPublishQueues(topic: string, route: TopicRouteData): MessageQueue[] {
  const out: MessageQueue[] = [];
  if (route.orderTopicConf) {
    for (const part of route.orderTopicConf.split(';')) {
      const [brokerName, nums] = part.split(':');
      const n = Number(nums);
      if (!brokerName || !Number.isInteger(n)) continue;
      for (let i = 0; i < n; i++) out.push({ topic, brokerName, queueId: i });
    }
    return out;
  }
  const queues = [...route.queueDatas].sort((a, b) => (a.brokerName < b.brokerName ? -1 : a.brokerName > b.brokerName ? 1 : 0));
  for (const q of queues) {
    if ((q.perm & PERM_WRITE) === 0) continue;
    const b = route.brokerDatas.find((x) => x.brokerName === q.brokerName);
    if (!b || masterAddress(b) === undefined) continue;
    for (let i = 0; i < q.writeQueueNums; i++) out.push({ topic, brokerName: q.brokerName, queueId: i });
  }
  return out;
}
