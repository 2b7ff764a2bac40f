import {
  DLQ_GROUP_TOPIC_PREFIX,
  Operations,
  RETRY_GROUP_TOPIC_PREFIX,
  ResponseCode,
  retryTopic as retryTopicOf,
  type Operation,
  type OperationRequest,
  type TopicRouteData,
} from '../../protocol/internal.js';
import type { MQClientInstance, Reply } from '../client/index.js';
import { BrokerError } from '../remoting/index.js';
import { UnknownTopicError, permissionError } from './errors.js';
import { examineConsumeStats, routeMasters } from './admin-consume-stats.js';
import { inParallel } from '../in-parallel.js';

/**
 * One window of a broker's stats item (Java's BrokerStatsItem).
 * @category Admin
 */
export interface BrokerStatsItem {
  /** What was counted in the window: messages put (TOPIC_PUT_NUMS) or got (GROUP_GET_NUMS). */
  sum: number;
  /** sum per second over the span between the window's oldest and newest sample. */
  tps: number;
  /** sum per counted call: messages per put request, or per pull that found messages. */
  avgpt: number;
}

/**
 * A broker's stats item (VIEW_BROKER_STATS_DATA's answer, Java's BrokerStatsData): the last minute
 * (six 10-s samples), the last hour (six 10-min samples) and the last day (24 hourly samples).
 * @category Admin
 */
export interface BrokerStatsData {
  /** The last minute, sampled every 10 s. */
  statsMinute: BrokerStatsItem;
  /** The last hour, sampled every 10 min. */
  statsHour: BrokerStatsItem;
  /** The last day, sampled every hour. */
  statsDay: BrokerStatsItem;
}

/** The stats set of messages put per topic, key `topic` (BrokerStatsManager.TOPIC_PUT_NUMS). */
export const TOPIC_PUT_NUMS = 'TOPIC_PUT_NUMS';
/** The stats set of messages got per group, key `topic@group` (BrokerStatsManager.GROUP_GET_NUMS). */
export const GROUP_GET_NUMS = 'GROUP_GET_NUMS';

/**
 * One line of `statsAll`: a topic and one group consuming it (mqadmin statsAll's columns), or the
 * topic alone with `group` null when no group consumes it (mqadmin prints NO_CONSUMER).
 * @category Admin
 */
export interface StatsAllRow {
  /** The topic, as the name server lists it (without the namespace on a namespaced AdminClient). */
  topic: string;
  /** null: no group consumes the topic (no consumer online for it, no offsets of it). */
  group: string | null;
  /** The group's backlog of the topic: broker offsets minus committed offsets, 0 at least (0 when no group). */
  accumulation: number;
  /** Messages put per second into the topic over the last minute, summed over its masters. */
  inTps: number;
  /** Messages the group got per second over the last minute; null when no group. */
  outTps: number | null;
  /** Messages put into the topic over the last 24 hours (see compute24HourSum). */
  inMsg24Hour: number;
  /** Messages the group got over the last 24 hours; null when no group. */
  outMsg24Hour: number | null;
}

/** What `statsAll` lists. @category Admin */
export interface StatsAllOptions {
  /**
   * Only this topic (mqadmin -t).
   * @default undefined (every topic)
   */
  topic?: string;
  /**
   * Only rows with messages in or out in the last 24 hours (mqadmin -a).
   * @default false
   */
  activeOnly?: boolean;
}

const NOT_EXIST = /^The stats <.*> <.*> not exist$/s;

/**
 * StatsAllSubCommand.compute24HourSum: the day window's sum, or the hour's when the day window is
 * still empty, or the minute's. A broker samples the day window hourly and the hour window every
 * 10 minutes, so for traffic of the last minutes only the minute window has it.
 */
export function compute24HourSum(d: BrokerStatsData): number {
  if (d.statsDay.sum !== 0) return d.statsDay.sum;
  if (d.statsHour.sum !== 0) return d.statsHour.sum;
  return d.statsMinute.sum;
}

/** Which topics a scoped AdminClient (namespace) lists; set by admin-namespace.ts. */
const SCOPES = new WeakMap<object, (topic: string) => boolean>();

/** Limits statsAll of `admin` to the topics `inScope` accepts (its namespace's). */
export function scopeStatsAll(admin: object, inScope: (topic: string) => boolean): void {
  SCOPES.set(admin, inScope);
}

/**
 * mqadmin's statsAll and the request under it, which AdminClient has through this class: what was
 * put into every topic and got by every group over the last minute and day, with each group's
 * backlog.
 * @category Admin
 */
export abstract class AdminStatsCommands {
  /** The client instance the requests go through (AdminClient's own). */
  abstract readonly instance: MQClientInstance;

  private async statsCall<O extends Operation>(addr: string, op: O, header: OperationRequest<O>): Promise<Reply<O>> {
    try {
      return await this.instance.invoke(addr, op, header);
    } catch (err) {
      throw permissionError(err, op.name, addr);
    }
  }

  /**
   * VIEW_BROKER_STATS_DATA (315): one item of a broker's stats, e.g. `(addr, 'TOPIC_PUT_NUMS',
   * 'Orders')` or `(addr, 'GROUP_GET_NUMS', 'Orders@cg')`, names as the broker has them (no
   * namespace added). null when the broker has counted nothing under that key since it started
   * (it answers SYSTEM_ERROR "The stats <…> <…> not exist", which mqadmin reads as zero).
   */
  async viewBrokerStatsData(brokerAddr: string, statsName: string, statsKey: string): Promise<BrokerStatsData | null> {
    try {
      return (await this.statsCall(brokerAddr, Operations.VIEW_BROKER_STATS_DATA, { statsName, statsKey })).body;
    } catch (err) {
      if (err instanceof BrokerError && err.code === ResponseCode.SYSTEM_ERROR && NOT_EXIST.test(err.remark ?? ''))
        return null;
      throw err;
    }
  }

  /**
   * `statsAll` (StatsAllSubCommand): for every topic of the name server (but `%RETRY%` and `%DLQ%`
   * topics), each group that consumes it (QUERY_TOPIC_CONSUME_BY_WHO) with its backlog
   * (GET_CONSUME_STATS) and what it got (GROUP_GET_NUMS), and what was put into the topic
   * (TOPIC_PUT_NUMS), summed over the topic's masters. Rows sorted by topic, then group. A stats
   * item a broker does not have counts as 0, as in mqadmin; an unreachable broker is an error here
   * (mqadmin prints zeros), a topic deleted meanwhile is left out (as mqadmin).
   */
  async statsAll(opts: StatsAllOptions = {}): Promise<StatsAllRow[]> {
    const inScope = SCOPES.get(this) ?? (() => true);
    const all = (await this.listTopics()).filter(
      (t) =>
        !t.startsWith(RETRY_GROUP_TOPIC_PREFIX) &&
        !t.startsWith(DLQ_GROUP_TOPIC_PREFIX) &&
        inScope(t) &&
        (opts.topic === undefined || opts.topic === '' || t === opts.topic),
    );
    // a few topics at a time: each is a handful of requests to its brokers
    const perTopic = await inParallel([...all].sort(), 4, (topic) => this.topicStats(topic, opts.activeOnly === true));
    return perTopic
      .flat()
      .sort((a, b) =>
        a.topic !== b.topic ? (a.topic < b.topic ? -1 : 1) : (a.group ?? '') < (b.group ?? '') ? -1 : 1,
      );
  }

  private async listTopics(): Promise<string[]> {
    try {
      return (
        (await this.instance.callNameServer(Operations.GET_ALL_TOPIC_LIST_FROM_NAMESERVER, {})).body?.topicList ?? []
      );
    } catch (err) {
      throw permissionError(err, 'GET_ALL_TOPIC_LIST_FROM_NAMESERVER', 'name server');
    }
  }

  private async route(topic: string): Promise<TopicRouteData | null> {
    try {
      return await this.instance.queryTopicRoute(topic);
    } catch (err) {
      if (err instanceof BrokerError && err.code === ResponseCode.TOPIC_NOT_EXIST) return null;
      if (err instanceof UnknownTopicError) return null;
      throw err;
    }
  }

  /** StatsAllSubCommand.printTopicDetail: the rows of one topic. */
  private async topicStats(topic: string, activeOnly: boolean): Promise<StatsAllRow[]> {
    const route = await this.route(topic);
    if (!route) return [];
    const masters = routeMasters(route).map((m) => m.addr);
    let inTps = 0;
    let inMsg24Hour = 0;
    for (const addr of masters) {
      const d = await this.viewBrokerStatsData(addr, TOPIC_PUT_NUMS, topic);
      if (!d) continue;
      inTps += d.statsMinute.tps;
      inMsg24Hour += compute24HourSum(d);
    }
    const groups = await this.consumeByWho(topic, route);
    if (groups.length === 0) {
      if (activeOnly && inMsg24Hour <= 0) return [];
      return [{ topic, group: null, accumulation: 0, inTps, outTps: null, inMsg24Hour, outMsg24Hour: null }];
    }
    const rows: StatsAllRow[] = [];
    for (const group of groups) {
      let outTps = 0;
      let outMsg24Hour = 0;
      for (const addr of masters) {
        const d = await this.viewBrokerStatsData(addr, GROUP_GET_NUMS, `${topic}@${group}`);
        if (!d) continue;
        outTps += d.statsMinute.tps;
        outMsg24Hour += compute24HourSum(d);
      }
      if (activeOnly && inMsg24Hour <= 0 && outMsg24Hour <= 0) continue;
      const accumulation = await this.accumulation(group, topic);
      rows.push({ topic, group, accumulation, inTps, outTps, inMsg24Hour, outMsg24Hour });
    }
    return rows;
  }

  /** DefaultMQAdminExtImpl#queryTopicConsumeByWho: asked of the first broker of the route (its master when it has one). */
  private async consumeByWho(topic: string, route: TopicRouteData): Promise<string[]> {
    const bd = [...route.brokerDatas].sort((a, b) => (a.brokerName < b.brokerName ? -1 : 1))[0];
    const addr = bd ? (bd.brokerAddrs['0'] ?? Object.values(bd.brokerAddrs)[0]) : undefined;
    if (addr === undefined) return [];
    const r = await this.statsCall(addr, Operations.QUERY_TOPIC_CONSUME_BY_WHO, { topic });
    return [...(r.body?.groupList ?? [])].sort();
  }

  /**
   * examineConsumeStats(group, topic).computeTotalDiff(), at least 0: GET_CONSUME_STATS on every
   * master of the group's retry-topic route (the topic's own when the group has none). A broker
   * refusing it makes the backlog 0, as mqadmin's catch-all does.
   */
  private async accumulation(group: string, topic: string): Promise<number> {
    const route = (await this.route(retryTopicOf(group))) ?? (await this.route(topic));
    if (!route) return 0;
    const stats = await examineConsumeStats(
      (addr, header) => this.statsCall(addr, Operations.GET_CONSUME_STATS, header),
      route,
      group,
      topic,
    );
    if (stats.refused) return 0;
    return Math.max(
      0,
      stats.queues.reduce((sum, q) => sum + q.lag, 0),
    );
  }
}
