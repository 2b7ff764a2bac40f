import {
  Operations,
  PermName,
  ResponseCode,
  type ClusterInfo,
  type ConsumerRunningInfo,
  type Operation,
  type OperationRequest,
  type OperationRequestBody,
  type TopicConfigBody,
  type TopicRouteData,
} from '../../protocol/internal.js';
import type { SubscriptionGroupConfig } from '../../protocol/body/admin-tools-bodies.js';
import {
  MQClientInstance,
  takeNamespace,
  type ClientOptions,
  type NamespaceOption,
  type Reply,
} from '../client/index.js';
import { applyAdminNamespace } from './admin-namespace.js';
import { BrokerError, RemotingError } from '../remoting/index.js';
import { AdminMessages } from './admin-messages.js';
import { AdminGroups } from './admin-groups.js';
import { updateStaticTopic, type StaticTopicUpdate, type UpdateStaticTopicArgs } from './admin-static-topic.js';
import { AdminOps } from './admin-ops.js';
import { AdminOperatorCommands, bindAdminOps } from './admin-operator-commands.js';
import { AdminAuth } from './admin-auth.js';
import { bindAdminAuth } from './admin-auth-commands.js';
export * from './admin-ops-types.js';
export { AdminOperatorCommands } from './admin-operator-commands.js';
export * from './admin-types.js';
export type { StaticTopicUpdate, UpdateStaticTopicArgs } from './admin-static-topic.js';
import {
  permText,
  type ClusterBroker,
  type CreateTopicArgs,
  type DlqResendResult,
  type FoundMessage,
  type GroupConnection,
  type GroupProgress,
  type ResetResult,
  type ResetTarget,
  type TopicQueueStatus,
  type TopicRouteBroker,
} from './admin-types.js';
import { permissionError, UnknownClusterError, UnknownTopicError } from './errors.js';
import { routeMasters } from './admin-consume-stats.js';
import { formatMessageTrace, queryMessageTrace, type MessageTraceQuery, type MessageTraceView } from './admin-trace.js';

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
export class AdminClient extends AdminOperatorCommands {
  /** The client instance of its own the admin client sends through (not shared with producers or consumers). */
  readonly instance: MQClientInstance;
  private closed = false;
  private readonly messages: AdminMessages;
  private readonly groups: AdminGroups;

  /** `namespace` (admin-namespace.ts): operations take and answer the application's names. */
  constructor(adminOptions: ClientOptions & NamespaceOption) {
    super();
    const { namespace, rest: options } = takeNamespace(adminOptions);
    // One instance of its own: the admin client's name server list and credentials are its own.
    this.instance = MQClientInstance.acquire({
      instanceName: `admin-${process.pid}-${Math.random().toString(36).slice(2, 8)}`,
      ...options,
    });
    applyAdminNamespace(this, namespace);
    const instance = this.instance;
    const call = this.call.bind(this);
    const topicRoute = this.topicRoute.bind(this);
    const masters = routeMasters;
    const masterAddrs = this.masterAddrs.bind(this);
    const deleteTopic = this.deleteTopic.bind(this);
    this.groups = new AdminGroups({ instance, call, topicRoute, masters, masterAddrs, deleteTopic });
    const brokerNameOf = this.brokerNameOf.bind(this);
    this.messages = new AdminMessages({ instance, options, call, topicRoute, masters, brokerNameOf });
    const clusterInfo = this.clusterInfo.bind(this);
    const resetOffset = this.resetOffset.bind(this);
    const namesrvAddrs = instance.options.namesrvAddrs;
    bindAdminOps(
      this,
      new AdminOps({ namesrvAddrs, call, clusterInfo, topicRoute, masters, masterAddrs, resetOffset }),
    );
    bindAdminAuth(this, new AdminAuth({ call, clusterInfo, masterAddrs, namespace }));
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
      routeMasters(route).map(async ({ addr }) => {
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

  /**
   * `updateStaticTopic`: creates a static topic (RIP-21) or adds logic queues to one, placing the new
   * ones on the given brokers or clusters; UPDATE_AND_CREATE_STATIC_TOPIC (513) to every broker
   * concerned. StaticTopicError when it cannot be done.
   */
  updateStaticTopic(args: UpdateStaticTopicArgs): Promise<StaticTopicUpdate> {
    const clock = this.instance.options.clock;
    return updateStaticTopic(
      { call: this.call.bind(this), clusterInfo: () => this.clusterInfo(), now: () => clock.now() },
      args,
    );
  }

  /**
   * GET_TOPIC_CONFIG of one broker, or null when it has no such topic; with `mapping`, a static
   * topic's TopicQueueMappingDetail too (`mappingDetail`, the request's `lo` flag).
   */
  async topicConfig(addr: string, topic: string, opts?: { mapping?: boolean }): Promise<TopicConfigBody | null> {
    try {
      const header = opts?.mapping ? { topic, lo: true } : { topic };
      return (await this.call(addr, Operations.GET_TOPIC_CONFIG, header)).body;
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
    for (const { addr } of routeMasters(route)) {
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
        : routeMasters(route).map((m) => m.addr);
    for (const addr of addrs) await this.call(addr, Operations.DELETE_TOPIC_IN_BROKER, { topic });
    await this.deleteTopicInNameServers(topic, clusterName);
    return addrs;
  }

  private async deleteTopicInNameServers(topic: string, clusterName?: string): Promise<void> {
    const header = clusterName !== undefined ? { topic, clusterName } : { topic };
    for (const addr of this.instance.nameServerAddresses())
      await this.call(addr, Operations.DELETE_TOPIC_IN_NAMESRV, header);
  }

  // ------------------------------------------------------------------ consumer groups and offsets (admin-groups.ts)

  /**
   * `consumerProgress`: GET_CONSUME_STATS on every master of the group's retry-topic route, per
   * queue the broker offset, the committed offset, the lag and the last consume time, and the total
   * lag (mqadmin's "Diff Total"). With `topic`, that topic only.
   */
  consumerProgress(group: string, topic?: string): Promise<GroupProgress> {
    return this.groups.consumerProgress(group, topic);
  }

  /** `consumerConnection`: GET_CONSUMER_CONNECTION_LIST from the first broker of the group's route that has the group online. */
  consumerConnection(group: string): Promise<GroupConnection> {
    return this.groups.consumerConnection(group);
  }

  /**
   * `consumerStatus`: GET_CONSUMER_RUNNING_INFO relayed by the broker to each online client of the
   * group (or only `clientId`).
   */
  consumerStatus(group: string, clientId?: string): Promise<Array<{ clientId: string; info: ConsumerRunningInfo }>> {
    return this.groups.consumerStatus(group, clientId);
  }

  /** `consumerProgress -g`'s list: GET_ALL_SUBSCRIPTIONGROUP_CONFIG of every master, merged by name. */
  groupList(clusterName?: string): Promise<SubscriptionGroupConfig[]> {
    return this.groups.groupList(clusterName);
  }

  /** `updateSubGroup`: UPDATE_AND_CREATE_SUBSCRIPTIONGROUP on one broker or every master of a cluster. */
  createGroup(
    group: string,
    fields: Partial<Omit<SubscriptionGroupConfig, 'groupName'>> = {},
    target: { clusterName?: string; brokerAddr?: string } = {},
  ): Promise<string[]> {
    return this.groups.createGroup(group, fields, target);
  }

  /**
   * `deleteSubGroup`: DELETE_SUBSCRIPTIONGROUP on every master of the cluster (offsets too with
   * `cleanOffset`), then, as DeleteSubscriptionGroupCommand does with -c, the group's %RETRY% and
   * %DLQ% topics. UnknownGroupError when no master lists the group.
   */
  deleteGroup(group: string, opts: { cleanOffset?: boolean; clusterName?: string } = {}): Promise<string[]> {
    return this.groups.deleteGroup(group, opts);
  }

  /**
   * `resetOffsetByTime` (ResetOffsetByTimeCommand): INVOKE_BROKER_TO_RESET_OFFSET on every master
   * of the topic's route, for a running group as for a stopped one (a 5.x broker stores the
   * offsets itself). A broker that wants an online client (CONSUMER_NOT_ONLINE: 4.9, or 5.x with
   * useServerSideResetOffset off) gets what ResetOffsetByTimeOldCommand does instead: each queue's
   * offset by time, written with UPDATE_CONSUMER_OFFSET.
   */
  resetOffset(group: string, topic: string, target: ResetTarget): Promise<ResetResult> {
    return this.groups.resetOffset(group, topic, target);
  }

  // ------------------------------------------------------------------ messages (admin-messages.ts)

  /**
   * `queryMsgById`: an offset msgId (the store host and commit-log offset in hex) is looked up
   * with VIEW_MESSAGE_BY_ID on the broker it names; any other id is taken as a unique key
   * (UNIQ_KEY, what producers return as msgId) and looked up over the key index of `topic`
   * (QUERY_MESSAGE with _UNIQUE_KEY_QUERY), as DefaultMQAdminExt#viewMessage does.
   */
  messageById(msgId: string, topic?: string): Promise<FoundMessage[]> {
    return this.messages.messageById(msgId, topic);
  }

  /** `queryMsgByKey`: QUERY_MESSAGE on every master of the topic, hash collisions dropped (MQAdminImpl#queryMessage). */
  messageByKey(
    topic: string,
    key: string,
    opts: { maxNum?: number; beginTimestamp?: number; endTimestamp?: number } = {},
  ): Promise<FoundMessage[]> {
    return this.messages.messageByKey(topic, key, opts);
  }

  /**
   * `queryMsgByOffset`: the message at one queue offset, pulled without committing by the tools
   * group (QueryMsgByOffsetSubCommand pulls with DefaultMQPullConsumer, then views it by id).
   */
  messageByOffset(topic: string, brokerName: string, queueId: number, offset: number): Promise<FoundMessage> {
    return this.messages.messageByOffset(topic, brokerName, queueId, offset);
  }

  /**
   * Re-send a group's dead letters (`%DLQ%<group>`) to their original topics (property
   * RETRY_TOPIC, which the broker sets when it moves a message to the retry or dead-letter topic):
   * every message of every DLQ queue from `fromOffset` (default each queue's min offset) to its max
   * is read and sent again, with its body, tags, keys and user properties, as a new message. mqadmin
   * has no such command (the Dashboard re-delivers one message to a client with
   * CONSUME_MESSAGE_DIRECTLY); this sends them through the broker again, so every consumer of the
   * topic sees them. The DLQ keeps its messages.
   */
  dlqResend(group: string, opts: { fromOffset?: number; maxMessages?: number } = {}): Promise<DlqResendResult> {
    return this.messages.dlqResend(group, opts);
  }

  /**
   * `queryMsgTraceById`: the trace records of one message (Pub, SubBefore, SubAfter, …) from the
   * trace topic, as mqadmin finds and reads them (admin-trace.ts); formatMessageTrace prints them
   * as mqadmin does.
   */
  messageTrace(msgId: string, query: MessageTraceQuery = {}): Promise<MessageTraceView[]> {
    return queryMessageTrace((topic, key, opts) => this.messageByKey(topic, key, opts), msgId, query);
  }

  /** The records of messageTrace() as `mqadmin queryMsgTraceById` prints them (its columns, Pub first, then SubAfter per group). */
  static formatMessageTrace(views: readonly MessageTraceView[]): string {
    return formatMessageTrace(views);
  }
}
