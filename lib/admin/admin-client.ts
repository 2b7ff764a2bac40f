import {
  decodeMessages,
  decodeOffsetMsgId,
  dlqTopic as dlqTopicOf,
  MessageConst,
  Operations,
  PermName,
  ResponseCode,
  retryTopic as retryTopicOf,
  type ClusterInfo,
  type ConsumerRunningInfo,
  type MessageExt,
  type MessageQueue,
  type Operation,
  type OperationRequest,
  type OperationRequestBody,
  type TopicConfigBody,
  type TopicRouteData,
} from '../../protocol/internal.js';
import {
  subscriptionGroupConfig,
  type ConsumerConnection,
  type SubscriptionGroupConfig,
} from '../../protocol/body/admin-tools-bodies.js';
import { MQClientInstance, type ClientOptions, type Reply } from '../client/index.js';
import { BrokerError, RemotingError } from '../remoting/index.js';
import { Producer } from '../producer/index.js';
import {
  AdminPermissionError,
  MessageNotFoundError,
  UnknownClusterError,
  UnknownGroupError,
  UnknownTopicError,
} from './errors.js';

/** How an AdminClient reaches the cluster: the client options of lib/client (namesrvAddr, acl, tls, timeouts). */
export type AdminClientOptions = ClientOptions;

/** One broker of `clusterList` (ClusterListSubCommand): its cluster, name, id, address and version. */
export interface ClusterBroker {
  clusterName: string;
  brokerName: string;
  brokerId: number;
  addr: string;
  /** brokerVersionDesc of GET_BROKER_RUNTIME_INFO ("V5_3_3"), or null when the broker did not answer. */
  version: string | null;
  role: 'MASTER' | 'SLAVE';
}

/** One queue of `topicStatus`. */
export interface TopicQueueStatus {
  brokerName: string;
  queueId: number;
  minOffset: number;
  maxOffset: number;
  /** Store time of the last message, 0 for an empty queue. */
  lastUpdateTimestamp: number;
}

/** A broker's part of a topic (`topicRoute`'s queue data, with the master address). */
export interface TopicRouteBroker {
  brokerName: string;
  cluster: string;
  addrs: Record<string, string>;
  readQueueNums: number;
  writeQueueNums: number;
  perm: number;
  /** PermName text, "RW-" style: R read, W write, X inherit. */
  permText: string;
  topicSysFlag: number;
}

/** One queue of `consumerProgress` (ConsumerProgressSubCommand). */
export interface QueueProgress {
  topic: string;
  brokerName: string;
  queueId: number;
  brokerOffset: number;
  consumerOffset: number;
  /** 5.x: max(consumer offset, the last pull's next offset); absent from 4.9 brokers. */
  pullOffset?: number | undefined;
  /** brokerOffset − consumerOffset (mqadmin's #Diff). */
  lag: number;
  /** Store time of the last consumed message; 0 = none (mqadmin prints N/A). */
  lastTimestamp: number;
}

export interface GroupProgress {
  group: string;
  queues: QueueProgress[];
  totalLag: number;
  consumeTps: number;
}

/** One client of `consumerConnection`. */
export interface GroupClient {
  clientId: string;
  clientAddr: string;
  language: string;
  /** MQVersion ordinal. */
  version: number;
}

export interface GroupConnection extends Omit<ConsumerConnection, 'connectionSet'> {
  group: string;
  clients: GroupClient[];
}

/** One row of `resetOffsetByTime`. */
export interface ResetQueue {
  brokerName: string;
  queueId: number;
  offset: number;
}

export interface ResetResult {
  /** 'broker': INVOKE_BROKER_TO_RESET_OFFSET; 'offline': the group had no client online and the broker wanted one (4.9, or 5.x with useServerSideResetOffset off), so each queue's offset was written with UPDATE_CONSUMER_OFFSET (mqadmin's ResetOffsetByTimeOldCommand). */
  mode: 'broker' | 'offline';
  queues: ResetQueue[];
}

/** Where a reset goes: the first or last offset of every queue, or the first message stored at or after a time. */
export type ResetTarget = { to: 'first' } | { to: 'last' } | { to: 'timestamp'; timestamp: number };

/** A message found by an admin lookup, with where it came from. */
export interface FoundMessage {
  brokerName: string;
  brokerAddr: string;
  message: MessageExt;
}

export interface CreateTopicArgs {
  topic: string;
  readQueueNums?: number;
  writeQueueNums?: number;
  /** Default 6 (read + write). */
  perm?: number;
  order?: boolean;
  /** Only the masters of this cluster (default: every master the name server knows). */
  clusterName?: string;
  /** Only this broker address. */
  brokerAddr?: string;
}

export interface DlqResendResult {
  group: string;
  dlqTopic: string;
  /** Messages read from the DLQ. */
  read: number;
  /** Messages sent again, by original topic. */
  resent: Record<string, number>;
  /** Messages without RETRY_TOPIC (cannot tell their original topic): not sent. */
  skipped: number;
  /** Queue offsets read, per DLQ queue (brokerName:queueId → [from, to)). */
  ranges: Record<string, [number, number]>;
}

/** The admin group the lookup pulls use, as mqadmin's DefaultMQPullConsumer (MixAll.TOOLS_CONSUMER_GROUP). */
export const TOOLS_CONSUMER_GROUP = 'TOOLS_CONSUMER';
/** PullSysFlag FLAG_SUBSCRIPTION: the pull carries its subscription expression. */
const FLAG_SUBSCRIPTION = 0x4;
/** QueryMsgByKeySubCommand's default maxNum. */
const DEFAULT_QUERY_MAX = 64;

/** PermName.perm2String: "R" read, "W" write, "X" inherit, "-" where not set. */
export function permText(perm: number): string {
  return `${perm & PermName.PERM_READ ? 'R' : '-'}${perm & PermName.PERM_WRITE ? 'W' : '-'}${perm & PermName.PERM_INHERIT ? 'X' : '-'}`;
}

/**
 * The operations of Apache's mqadmin (DefaultMQAdminExt), one method each, over one
 * MQClientInstance: cluster and topic listing, topic routes, stats, creation and deletion,
 * consumer progress, connections and running info, subscription groups, message lookups by id,
 * key and queue offset, offset resets and re-sending dead letters. Errors are typed: an unknown
 * topic or group is UnknownTopicError / UnknownGroupError naming it, a write the broker refuses
 * for want of permission AdminPermissionError, anything else the BrokerError or RemotingError of
 * the call.
 * @category Admin
 */
export class AdminClient {
  /** The client instance of its own the admin client sends through (not shared with producers or consumers). */
  readonly instance: MQClientInstance;
  private closed = false;

  constructor(private readonly options: AdminClientOptions) {
    // One instance of its own: the admin client's name server list and credentials are its own.
    this.instance = MQClientInstance.acquire({
      instanceName: `admin-${process.pid}-${Math.random().toString(36).slice(2, 8)}`,
      ...options,
    });
  }

  /**
   * Checks that a name server answers (NameServerUnavailableError otherwise, retriable, naming
   * each address): optional, every call connects on its own; a readiness check for tools.
   */
  async connect(): Promise<void> {
    await this.instance.checkNameServer('TBW102');
  }

  /** Closes its connections. Calling it again does nothing. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.instance.release();
  }

  /** close(), under the name the other clients use. */
  shutdown(): Promise<void> {
    return this.close();
  }

  /** `await using admin = new AdminClient(…)` closes it at the end of the block. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  // ------------------------------------------------------------------ plumbing

  private async call<O extends Operation>(
    addr: string,
    op: O,
    header: OperationRequest<O>,
    body?: OperationRequestBody<O>,
  ): Promise<Reply<O>> {
    try {
      return await this.instance.invoke(addr, op, header, body);
    } catch (err) {
      throw permissionError(err, op.name, addr);
    }
  }

  private async nameServer<O extends Operation>(op: O, header: OperationRequest<O>): Promise<Reply<O>> {
    try {
      return await this.instance.callNameServer(op, header);
    } catch (err) {
      throw permissionError(err, op.name, 'name server');
    }
  }

  /** The route of a topic, fresh from the name server; UnknownTopicError when it has none. */
  async topicRoute(topic: string): Promise<TopicRouteData> {
    try {
      return await this.instance.queryTopicRoute(topic);
    } catch (err) {
      if (err instanceof BrokerError && err.code === ResponseCode.TOPIC_NOT_EXIST)
        throw new UnknownTopicError(topic, { cause: err });
      throw err;
    }
  }

  /** Master address of each broker of a route (a broker whose master is down is left out). */
  private masters(route: TopicRouteData): Array<{ brokerName: string; addr: string }> {
    const out: Array<{ brokerName: string; addr: string }> = [];
    for (const bd of [...route.brokerDatas].sort((a, b) => (a.brokerName < b.brokerName ? -1 : 1))) {
      const addr = bd.brokerAddrs['0'];
      if (addr) out.push({ brokerName: bd.brokerName, addr });
    }
    return out;
  }

  /** Master addresses of a cluster (every cluster when not given), as CommandUtil.fetchMasterAddrByClusterName. */
  async masterAddrs(clusterName?: string): Promise<Array<{ brokerName: string; addr: string }>> {
    const info = await this.clusterInfo();
    const names = clusterName === undefined ? Object.keys(info.brokerAddrTable) : info.clusterAddrTable[clusterName];
    if (names === undefined) throw new UnknownClusterError(clusterName ?? '');
    const out: Array<{ brokerName: string; addr: string }> = [];
    for (const n of [...names].sort()) {
      const addr = info.brokerAddrTable[n]?.brokerAddrs['0'];
      if (addr) out.push({ brokerName: n, addr });
    }
    return out;
  }

  // ------------------------------------------------------------------ cluster

  /** The name of the broker at `addr` (from the cluster info), or "" when the name server does not list it. */
  async brokerNameOf(addr: string): Promise<string> {
    const info = await this.clusterInfo().catch(() => null);
    for (const bd of Object.values(info?.brokerAddrTable ?? {}))
      if (Object.values(bd.brokerAddrs).includes(addr)) return bd.brokerName;
    return '';
  }

  /** GET_BROKER_CLUSTER_INFO. */
  async clusterInfo(): Promise<ClusterInfo> {
    const r = await this.nameServer(Operations.GET_BROKER_CLUSTER_INFO, {});
    return r.body ?? { brokerAddrTable: {}, clusterAddrTable: {} };
  }

  /** GET_BROKER_RUNTIME_INFO: the broker's KVTable (brokerVersionDesc, msgPutTotalTodayNow…). */
  async brokerRuntimeInfo(addr: string): Promise<Record<string, string>> {
    return (await this.call(addr, Operations.GET_BROKER_RUNTIME_INFO, {})).body?.table ?? {};
  }

  /** `clusterList`: every broker of every cluster with its role, address and version. */
  async cluster(): Promise<ClusterBroker[]> {
    const info = await this.clusterInfo();
    const rows: ClusterBroker[] = [];
    for (const [clusterName, names] of Object.entries(info.clusterAddrTable).sort()) {
      for (const brokerName of [...names].sort()) {
        const bd = info.brokerAddrTable[brokerName];
        if (!bd) continue;
        for (const [id, addr] of Object.entries(bd.brokerAddrs).sort(([a], [b]) => Number(a) - Number(b))) {
          rows.push({
            clusterName,
            brokerName,
            brokerId: Number(id),
            addr,
            version: null,
            role: id === '0' ? 'MASTER' : 'SLAVE',
          });
        }
      }
    }
    await Promise.all(
      rows.map(async (r) => {
        try {
          r.version = (await this.brokerRuntimeInfo(r.addr)).brokerVersionDesc ?? null;
        } catch (err) {
          // a broker that is down or does not answer in time is listed without a version, as clusterList lists it
          if (!(err instanceof RemotingError && err.retriable)) throw err;
          r.version = null;
        }
      }),
    );
    return rows;
  }

  // ------------------------------------------------------------------ topics

  /** GET_ALL_TOPIC_LIST_FROM_NAMESERVER, sorted. */
  async topicList(): Promise<string[]> {
    const r = await this.nameServer(Operations.GET_ALL_TOPIC_LIST_FROM_NAMESERVER, {});
    return [...(r.body?.topicList ?? [])].sort();
  }

  /** `topicRoute`, per broker: addresses, queue counts and perm. */
  async topicRouteBrokers(topic: string): Promise<TopicRouteBroker[]> {
    const route = await this.topicRoute(topic);
    return [...route.queueDatas]
      .sort((a, b) => (a.brokerName < b.brokerName ? -1 : 1))
      .map((q) => {
        const bd = route.brokerDatas.find((b) => b.brokerName === q.brokerName);
        return {
          brokerName: q.brokerName,
          cluster: bd?.cluster ?? '',
          addrs: { ...(bd?.brokerAddrs ?? {}) },
          readQueueNums: q.readQueueNums,
          writeQueueNums: q.writeQueueNums,
          perm: q.perm,
          permText: permText(q.perm),
          topicSysFlag: q.topicSysFlag,
        };
      });
  }

  /** `topicStatus`: GET_TOPIC_STATS_INFO on every master of the route, queues sorted. */
  async topicStatus(topic: string): Promise<TopicQueueStatus[]> {
    const route = await this.topicRoute(topic);
    const parts = await Promise.all(
      this.masters(route).map(async ({ addr }) => {
        try {
          return (await this.call(addr, Operations.GET_TOPIC_STATS_INFO, { topic })).body?.offsetTable ?? [];
        } catch (err) {
          if (err instanceof BrokerError && err.code === ResponseCode.TOPIC_NOT_EXIST) return [];
          throw err;
        }
      }),
    );
    return parts
      .flat()
      .map(([mq, o]) => ({
        brokerName: mq.brokerName,
        queueId: mq.queueId,
        minOffset: o.minOffset,
        maxOffset: o.maxOffset,
        lastUpdateTimestamp: o.lastUpdateTimestamp,
      }))
      .sort((a, b) => (a.brokerName === b.brokerName ? a.queueId - b.queueId : a.brokerName < b.brokerName ? -1 : 1));
  }

  /** GET_TOPIC_CONFIG of one broker, or null when it has no such topic. */
  async topicConfig(addr: string, topic: string): Promise<TopicConfigBody | null> {
    try {
      return (await this.call(addr, Operations.GET_TOPIC_CONFIG, { topic })).body;
    } catch (err) {
      if (err instanceof BrokerError && err.code === ResponseCode.TOPIC_NOT_EXIST) return null;
      throw err;
    }
  }

  /**
   * `updateTopic`: UPDATE_AND_CREATE_TOPIC on one broker or every master of a cluster (all masters
   * by default), with mqadmin's defaults: 8 read and 8 write queues, perm 6, not ordered. Returns
   * the addresses written.
   */
  async createOrUpdateTopic(args: CreateTopicArgs): Promise<string[]> {
    const addrs =
      args.brokerAddr !== undefined ? [args.brokerAddr] : (await this.masterAddrs(args.clusterName)).map((m) => m.addr);
    const header = {
      topic: args.topic,
      defaultTopic: 'TBW102',
      readQueueNums: args.readQueueNums ?? 8,
      writeQueueNums: args.writeQueueNums ?? 8,
      perm: args.perm ?? PermName.PERM_READ | PermName.PERM_WRITE,
      topicFilterType: 'SINGLE_TAG',
      topicSysFlag: 0,
      order: args.order ?? false,
    };
    for (const addr of addrs) await this.call(addr, Operations.UPDATE_AND_CREATE_TOPIC, header);
    return addrs;
  }

  /**
   * `updateTopic` of an existing topic: its brokers' current config with the given fields changed
   * (UnknownTopicError when no broker has it).
   */
  async updateTopic(args: Omit<CreateTopicArgs, 'clusterName' | 'brokerAddr'>): Promise<string[]> {
    const route = await this.topicRoute(args.topic);
    const written: string[] = [];
    for (const { addr } of this.masters(route)) {
      const cur = await this.topicConfig(addr, args.topic);
      if (!cur) continue;
      await this.createOrUpdateTopic({
        topic: args.topic,
        brokerAddr: addr,
        readQueueNums: args.readQueueNums ?? cur.readQueueNums,
        writeQueueNums: args.writeQueueNums ?? cur.writeQueueNums,
        perm: args.perm ?? cur.perm,
        order: args.order ?? cur.order,
      });
      written.push(addr);
    }
    if (written.length === 0) throw new UnknownTopicError(args.topic);
    return written;
  }

  /**
   * `deleteTopic` (DeleteTopicSubCommand): DELETE_TOPIC_IN_BROKER on every master of the cluster
   * (the route's brokers when no cluster is named), then DELETE_TOPIC_IN_NAMESRV on every name
   * server. UnknownTopicError when the name server has no route for it.
   */
  async deleteTopic(topic: string, clusterName?: string): Promise<string[]> {
    const route = await this.topicRoute(topic);
    const addrs =
      clusterName !== undefined
        ? (await this.masterAddrs(clusterName)).map((m) => m.addr)
        : this.masters(route).map((m) => m.addr);
    for (const addr of addrs) await this.call(addr, Operations.DELETE_TOPIC_IN_BROKER, { topic });
    await this.deleteTopicInNameServers(topic, clusterName);
    return addrs;
  }

  private async deleteTopicInNameServers(topic: string, clusterName?: string): Promise<void> {
    const header = clusterName !== undefined ? { topic, clusterName } : { topic };
    for (const addr of this.instance.options.namesrvAddrs)
      await this.call(addr, Operations.DELETE_TOPIC_IN_NAMESRV, header);
  }

  // ------------------------------------------------------------------ consumer groups

  /** The route of a group's retry topic: where the group lives (DefaultMQAdminExtImpl#examineConsumeStats). */
  private async groupRoute(group: string): Promise<TopicRouteData> {
    try {
      return await this.topicRoute(retryTopicOf(group));
    } catch (err) {
      if (err instanceof UnknownTopicError)
        throw new UnknownGroupError(group, 'no broker has its retry topic', { cause: err });
      throw err;
    }
  }

  /**
   * `consumerProgress`: GET_CONSUME_STATS on every master of the group's retry-topic route, per
   * queue the broker offset, the committed offset, the lag and the last consume time, and the total
   * lag (mqadmin's "Diff Total"). With `topic`, that topic only.
   */
  async consumerProgress(group: string, topic?: string): Promise<GroupProgress> {
    const route = await this.groupRoute(group);
    const queues: QueueProgress[] = [];
    let consumeTps = 0;
    for (const { addr } of this.masters(route)) {
      let stats;
      try {
        stats = (
          await this.call(
            addr,
            Operations.GET_CONSUME_STATS,
            topic === undefined ? { consumerGroup: group } : { consumerGroup: group, topic },
          )
        ).body;
      } catch (err) {
        // a broker without the group's offsets answers an error, as Java's tool skips it
        if (err instanceof BrokerError) continue;
        throw err;
      }
      if (!stats) continue;
      consumeTps += stats.consumeTps;
      for (const [mq, w] of stats.offsetTable) {
        queues.push({
          topic: mq.topic,
          brokerName: mq.brokerName,
          queueId: mq.queueId,
          brokerOffset: w.brokerOffset,
          consumerOffset: w.consumerOffset,
          pullOffset: w.pullOffset,
          lag: w.brokerOffset - w.consumerOffset,
          lastTimestamp: w.lastTimestamp,
        });
      }
    }
    queues.sort(compareQueue);
    return { group, queues, totalLag: queues.reduce((a, q) => a + q.lag, 0), consumeTps };
  }

  /** `consumerConnection`: GET_CONSUMER_CONNECTION_LIST from the first broker of the group's route that has the group online. */
  async consumerConnection(group: string): Promise<GroupConnection> {
    const route = await this.groupRoute(group);
    let last: unknown = null;
    for (const { addr } of this.masters(route)) {
      try {
        const c = (await this.call(addr, Operations.GET_CONSUMER_CONNECTION_LIST, { consumerGroup: group })).body;
        if (!c) continue;
        const clients = [...c.connectionSet].sort((a, b) => (a.clientId < b.clientId ? -1 : 1));
        return {
          group,
          clients,
          subscriptionTable: c.subscriptionTable,
          consumeType: c.consumeType,
          messageModel: c.messageModel,
          consumeFromWhere: c.consumeFromWhere,
        };
      } catch (err) {
        last = err;
        if (err instanceof BrokerError && err.code === ResponseCode.CONSUMER_NOT_ONLINE) continue;
        throw err;
      }
    }
    throw new UnknownGroupError(group, 'no consumer of the group is online', { cause: last });
  }

  /**
   * `consumerStatus`: GET_CONSUMER_RUNNING_INFO relayed by the broker to each online client of the
   * group (or only `clientId`).
   */
  async consumerStatus(
    group: string,
    clientId?: string,
  ): Promise<Array<{ clientId: string; info: ConsumerRunningInfo }>> {
    const conn = await this.consumerConnection(group);
    const route = await this.groupRoute(group);
    const addr = this.masters(route)[0]?.addr;
    if (!addr) throw new UnknownGroupError(group, 'no master broker in its route');
    const ids = conn.clients.map((c) => c.clientId).filter((id) => clientId === undefined || id === clientId);
    if (clientId !== undefined && ids.length === 0)
      throw new UnknownGroupError(group, `client ${clientId} is not online in it`);
    const out: Array<{ clientId: string; info: ConsumerRunningInfo }> = [];
    for (const id of ids) {
      const r = await this.call(addr, Operations.GET_CONSUMER_RUNNING_INFO, {
        consumerGroup: group,
        clientId: id,
        jstackEnable: false,
      });
      if (r.body) out.push({ clientId: id, info: r.body });
    }
    return out;
  }

  /** `consumerProgress -g`'s list: GET_ALL_SUBSCRIPTIONGROUP_CONFIG of every master, merged by name. */
  async groupList(clusterName?: string): Promise<SubscriptionGroupConfig[]> {
    const byName = new Map<string, SubscriptionGroupConfig>();
    for (const { addr } of await this.masterAddrs(clusterName)) {
      const w = (await this.call(addr, Operations.GET_ALL_SUBSCRIPTIONGROUP_CONFIG, {})).body;
      for (const [name, c] of Object.entries(w?.subscriptionGroupTable ?? {}))
        if (!byName.has(name)) byName.set(name, c);
    }
    return [...byName.values()].sort((a, b) => (a.groupName < b.groupName ? -1 : 1));
  }

  /** `updateSubGroup`: UPDATE_AND_CREATE_SUBSCRIPTIONGROUP on one broker or every master of a cluster. */
  async createGroup(
    group: string,
    fields: Partial<Omit<SubscriptionGroupConfig, 'groupName'>> = {},
    target: { clusterName?: string; brokerAddr?: string } = {},
  ): Promise<string[]> {
    const addrs =
      target.brokerAddr !== undefined
        ? [target.brokerAddr]
        : (await this.masterAddrs(target.clusterName)).map((m) => m.addr);
    const config = subscriptionGroupConfig(group, fields);
    for (const addr of addrs) await this.call(addr, Operations.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, {}, config);
    return addrs;
  }

  /**
   * `deleteSubGroup`: DELETE_SUBSCRIPTIONGROUP on every master of the cluster (offsets too with
   * `cleanOffset`), then, as DeleteSubscriptionGroupCommand does with -c, the group's %RETRY% and
   * %DLQ% topics. UnknownGroupError when no master lists the group.
   */
  async deleteGroup(group: string, opts: { cleanOffset?: boolean; clusterName?: string } = {}): Promise<string[]> {
    const known = (await this.groupList(opts.clusterName)).some((g) => g.groupName === group);
    if (!known) throw new UnknownGroupError(group);
    const addrs = (await this.masterAddrs(opts.clusterName)).map((m) => m.addr);
    for (const addr of addrs)
      await this.call(addr, Operations.DELETE_SUBSCRIPTIONGROUP, {
        groupName: group,
        cleanOffset: opts.cleanOffset === true,
      });
    for (const topic of [retryTopicOf(group), dlqTopicOf(group)]) {
      try {
        await this.deleteTopic(topic, opts.clusterName);
      } catch (err) {
        if (!(err instanceof UnknownTopicError)) throw err;
      }
    }
    return addrs;
  }

  // ------------------------------------------------------------------ offsets

  /**
   * `resetOffsetByTime` (ResetOffsetByTimeCommand): INVOKE_BROKER_TO_RESET_OFFSET on every master
   * of the topic's route, for a running group as for a stopped one (a 5.x broker stores the
   * offsets itself). A broker that wants an online client (CONSUMER_NOT_ONLINE: 4.9, or 5.x with
   * useServerSideResetOffset off) gets what ResetOffsetByTimeOldCommand does instead: each queue's
   * offset by time, written with UPDATE_CONSUMER_OFFSET.
   */
  async resetOffset(group: string, topic: string, target: ResetTarget): Promise<ResetResult> {
    const route = await this.topicRoute(topic);
    await this.requireGroup(group);
    const timestamp = target.to === 'first' ? 0 : target.to === 'last' ? -1 : target.timestamp;
    const queues: ResetQueue[] = [];
    let mode: ResetResult['mode'] = 'broker';
    for (const { brokerName, addr } of this.masters(route)) {
      try {
        const r = await this.call(addr, Operations.INVOKE_BROKER_TO_RESET_OFFSET, {
          topic,
          group,
          timestamp,
          isForce: true,
          queueId: -1,
        });
        for (const [mq, offset] of r.body?.offsetTable ?? [])
          queues.push({ brokerName: mq.brokerName, queueId: mq.queueId, offset });
      } catch (err) {
        if (err instanceof BrokerError && err.code === ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST)
          throw new UnknownGroupError(group, err.remark ?? undefined, { cause: err });
        if (!(err instanceof BrokerError && err.code === ResponseCode.CONSUMER_NOT_ONLINE)) throw err;
        mode = 'offline';
        queues.push(...(await this.resetOffline(group, topic, brokerName, addr, route, target)));
      }
    }
    queues.sort((a, b) =>
      a.brokerName === b.brokerName ? a.queueId - b.queueId : a.brokerName < b.brokerName ? -1 : 1,
    );
    return { mode, queues };
  }

  private async resetOffline(
    group: string,
    topic: string,
    brokerName: string,
    addr: string,
    route: TopicRouteData,
    target: ResetTarget,
  ): Promise<ResetQueue[]> {
    const qd = route.queueDatas.find((q) => q.brokerName === brokerName);
    const out: ResetQueue[] = [];
    for (let queueId = 0; queueId < (qd?.readQueueNums ?? 0); queueId++) {
      const mq: MessageQueue = { topic, brokerName, queueId };
      const offset =
        target.to === 'first'
          ? await this.instance.getMinOffset(addr, mq)
          : target.to === 'last'
            ? await this.instance.getMaxOffset(addr, mq)
            : await this.instance.searchOffsetByTimestamp(addr, mq, target.timestamp);
      try {
        await this.instance.updateConsumerOffset(addr, group, mq, offset);
      } catch (err) {
        throw permissionError(err, 'UPDATE_CONSUMER_OFFSET', addr);
      }
      out.push({ brokerName, queueId, offset });
    }
    return out;
  }

  /** UnknownGroupError unless some master lists the group or its retry topic has a route. */
  private async requireGroup(group: string): Promise<void> {
    try {
      await this.instance.queryTopicRoute(retryTopicOf(group));
      return;
    } catch (err) {
      if (!(err instanceof BrokerError && err.code === ResponseCode.TOPIC_NOT_EXIST)) throw err;
    }
    if ((await this.groupList()).some((g) => g.groupName === group)) return;
    throw new UnknownGroupError(group);
  }

  // ------------------------------------------------------------------ messages

  /**
   * `queryMsgById`: an offset msgId (the store host and commit-log offset in hex) is looked up
   * with VIEW_MESSAGE_BY_ID on the broker it names; any other id is taken as a unique key
   * (UNIQ_KEY, what producers return as msgId) and looked up over the key index of `topic`
   * (QUERY_MESSAGE with _UNIQUE_KEY_QUERY), as DefaultMQAdminExt#viewMessage does.
   */
  async messageById(msgId: string, topic?: string): Promise<FoundMessage[]> {
    let offsetId: { storeHost: string; commitLogOffset: number } | null = null;
    try {
      offsetId = decodeOffsetMsgId(msgId);
    } catch {
      offsetId = null;
    }
    if (offsetId) {
      try {
        const r = await this.call(
          offsetId.storeHost,
          Operations.VIEW_MESSAGE_BY_ID,
          topic === undefined ? { offset: offsetId.commitLogOffset } : { offset: offsetId.commitLogOffset, topic },
        );
        const msgs = r.body ? decodeMessages(r.body) : [];
        if (msgs.length > 0) {
          const brokerName = await this.brokerNameOf(offsetId.storeHost);
          return msgs.map((m) => ({ brokerName, brokerAddr: offsetId.storeHost, message: m }));
        }
      } catch (err) {
        // a unique key can look like an offset id; fall through to the index when a topic is given
        if (topic === undefined) throw err;
      }
    }
    if (topic === undefined)
      throw new MessageNotFoundError(
        `message id ${msgId} (not an offset id: give --topic to look it up as a unique key)`,
      );
    const found = await this.query(topic, msgId, DEFAULT_QUERY_MAX, 0, Number.MAX_SAFE_INTEGER, true);
    if (found.length === 0) throw new MessageNotFoundError(`message id ${msgId} in topic ${topic}`);
    return found;
  }

  /** `queryMsgByKey`: QUERY_MESSAGE on every master of the topic, hash collisions dropped (MQAdminImpl#queryMessage). */
  async messageByKey(
    topic: string,
    key: string,
    opts: { maxNum?: number; beginTimestamp?: number; endTimestamp?: number } = {},
  ): Promise<FoundMessage[]> {
    return this.query(
      topic,
      key,
      opts.maxNum ?? DEFAULT_QUERY_MAX,
      opts.beginTimestamp ?? 0,
      opts.endTimestamp ?? Number.MAX_SAFE_INTEGER,
      false,
    );
  }

  private async query(
    topic: string,
    key: string,
    maxNum: number,
    begin: number,
    end: number,
    unique: boolean,
  ): Promise<FoundMessage[]> {
    const route = await this.topicRoute(topic);
    const op = Operations.QUERY_MESSAGE;
    const out: FoundMessage[] = [];
    for (const { brokerName, addr } of this.masters(route)) {
      const header = { topic, key, maxNum, beginTimestamp: begin, endTimestamp: end, uniqueKeyQuery: unique };
      let r;
      try {
        r = await this.instance.call(addr, op, header, undefined, {
          timeoutMs: this.instance.options.mqClientApiTimeoutMs,
        });
      } catch (err) {
        throw permissionError(err, op.name, addr);
      }
      if (r.code === ResponseCode.QUERY_NOT_FOUND) continue;
      for (const m of r.body ? decodeMessages(r.body) : []) {
        if (m.topic !== topic) continue;
        const keys = (m.properties[MessageConst.PROPERTY_KEYS] ?? '').split(MessageConst.KEY_SEPARATOR);
        const matches = unique
          ? m.properties[MessageConst.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX] === key
          : keys.includes(key) || m.properties[MessageConst.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX] === key;
        if (matches) out.push({ brokerName, brokerAddr: addr, message: m });
      }
    }
    return out.sort(
      (a, b) =>
        a.message.storeTimestamp - b.message.storeTimestamp || a.message.commitLogOffset - b.message.commitLogOffset,
    );
  }

  /**
   * `queryMsgByOffset`: the message at one queue offset, pulled without committing by the tools
   * group (QueryMsgByOffsetSubCommand pulls with DefaultMQPullConsumer, then views it by id).
   */
  async messageByOffset(topic: string, brokerName: string, queueId: number, offset: number): Promise<FoundMessage> {
    const route = await this.topicRoute(topic);
    const m = this.masters(route).find((x) => x.brokerName === brokerName);
    if (!m) throw new UnknownTopicError(`${topic} on broker ${brokerName}`);
    const msgs = await this.pullAt(m.addr, topic, queueId, offset, 1);
    const msg = msgs.find((x) => x.queueOffset === offset);
    if (!msg) throw new MessageNotFoundError(`${topic} ${brokerName} queue ${queueId} offset ${offset}`);
    return { brokerName, brokerAddr: m.addr, message: msg };
  }

  private async pullAt(
    addr: string,
    topic: string,
    queueId: number,
    offset: number,
    max: number,
  ): Promise<MessageExt[]> {
    const r = await this.instance.pullMessage(
      addr,
      {
        consumerGroup: TOOLS_CONSUMER_GROUP,
        topic,
        queueId,
        queueOffset: offset,
        maxMsgNums: max,
        sysFlag: FLAG_SUBSCRIPTION,
        commitOffset: 0,
        suspendTimeoutMillis: 0,
        subscription: '*',
        subVersion: 0,
        expressionType: 'TAG',
      },
      this.instance.options.mqClientApiTimeoutMs,
    );
    return r.status === 'FOUND' ? r.messages : [];
  }

  // ------------------------------------------------------------------ dead letters

  /**
   * Re-send a group's dead letters (`%DLQ%<group>`) to their original topics (property
   * RETRY_TOPIC, which the broker sets when it moves a message to the retry or dead-letter topic):
   * every message of every DLQ queue from `fromOffset` (default each queue's min offset) to its max
   * is read and sent again, with its body, tags, keys and user properties, as a new message. mqadmin
   * has no such command (the Dashboard re-delivers one message to a client with
   * CONSUME_MESSAGE_DIRECTLY); this sends them through the broker again, so every consumer of the
   * topic sees them. The DLQ keeps its messages.
   */
  async dlqResend(group: string, opts: { fromOffset?: number; maxMessages?: number } = {}): Promise<DlqResendResult> {
    const dlqTopic = dlqTopicOf(group);
    let route: TopicRouteData;
    try {
      route = await this.topicRoute(dlqTopic);
    } catch (err) {
      if (err instanceof UnknownTopicError)
        throw new UnknownGroupError(group, `it has no dead-letter topic ${dlqTopic}`, { cause: err });
      throw err;
    }
    const result: DlqResendResult = { group, dlqTopic, read: 0, resent: {}, skipped: 0, ranges: {} };
    const limit = opts.maxMessages ?? Number.MAX_SAFE_INTEGER;
    const producer = new Producer({
      ...this.options,
      group: `rw_admin_dlq_resend`,
      instanceName: `admin-dlq-${process.pid}`,
    });
    await producer.start();
    try {
      for (const { brokerName, addr } of this.masters(route)) {
        const qd = route.queueDatas.find((q) => q.brokerName === brokerName);
        for (let queueId = 0; queueId < (qd?.readQueueNums ?? 0); queueId++) {
          const mq = { topic: dlqTopic, brokerName, queueId };
          const min = await this.instance.getMinOffset(addr, mq);
          const max = await this.instance.getMaxOffset(addr, mq);
          let at = Math.max(min, opts.fromOffset ?? min);
          const from = at;
          while (at < max && result.read < limit) {
            const msgs = await this.pullAt(addr, dlqTopic, queueId, at, Math.min(32, limit - result.read));
            if (msgs.length === 0) break;
            for (const m of msgs) {
              if (result.read >= limit) break;
              result.read++;
              at = m.queueOffset + 1;
              const original = m.properties[MessageConst.PROPERTY_RETRY_TOPIC];
              if (!original) {
                result.skipped++;
                continue;
              }
              await producer.send(resendMessage(original, m));
              result.resent[original] = (result.resent[original] ?? 0) + 1;
            }
          }
          result.ranges[`${brokerName}:${queueId}`] = [from, at];
        }
      }
    } finally {
      await producer.shutdown();
    }
    return result;
  }
}

/** Property names RocketMQ sets itself: not copied to a re-sent message. */
const SYSTEM_PROPERTIES = new Set<string>(Object.values(MessageConst));

function resendMessage(
  topic: string,
  m: MessageExt,
): { topic: string; body: Buffer; tags?: string; keys?: string; properties: Record<string, string> } {
  const properties: Record<string, string> = {};
  for (const [k, v] of Object.entries(m.properties)) if (!SYSTEM_PROPERTIES.has(k)) properties[k] = v;
  const msg: { topic: string; body: Buffer; tags?: string; keys?: string; properties: Record<string, string> } = {
    topic,
    body: m.body,
    properties,
  };
  const tags = m.properties[MessageConst.PROPERTY_TAGS];
  const keys = m.properties[MessageConst.PROPERTY_KEYS];
  if (tags) msg.tags = tags;
  if (keys) msg.keys = keys;
  return msg;
}

function compareQueue(a: QueueProgress, b: QueueProgress): number {
  if (a.topic !== b.topic) return a.topic < b.topic ? -1 : 1;
  if (a.brokerName !== b.brokerName) return a.brokerName < b.brokerName ? -1 : 1;
  return a.queueId - b.queueId;
}

/** NO_PERMISSION as AdminPermissionError naming the operation and the peer; anything else as it is. */
function permissionError(err: unknown, operation: string, addr: string): unknown {
  if (err instanceof BrokerError && err.code === ResponseCode.NO_PERMISSION)
    return new AdminPermissionError(operation, addr, err.remark, { cause: err });
  return err;
}
