import {
  Operations,
  ResponseCode,
  dlqTopic as dlqTopicOf,
  retryTopic as retryTopicOf,
  type ConsumerRunningInfo,
  type MessageQueue,
  type Operation,
  type OperationRequest,
  type OperationRequestBody,
  type TopicRouteData,
} from '../../protocol/internal.js';
import { subscriptionGroupConfig, type SubscriptionGroupConfig } from '../../protocol/body/admin-tools-bodies.js';
import type { MQClientInstance, Reply } from '../client/index.js';
import { BrokerError } from '../remoting/index.js';
import type {
  GroupConnection,
  GroupProgress,
  QueueProgress,
  ResetQueue,
  ResetResult,
  ResetTarget,
} from './admin-types.js';
import { UnknownGroupError, UnknownTopicError, permissionError } from './errors.js';
import { examineConsumeStats } from './admin-consume-stats.js';

/** What the group and offset commands need of their AdminClient. */
export interface AdminGroupsHost {
  readonly instance: MQClientInstance;
  call<O extends Operation>(
    addr: string,
    op: O,
    header: OperationRequest<O>,
    body?: OperationRequestBody<O>,
  ): Promise<Reply<O>>;
  topicRoute(topic: string): Promise<TopicRouteData>;
  masters(route: TopicRouteData): Array<{ brokerName: string; addr: string }>;
  masterAddrs(clusterName?: string): Promise<Array<{ brokerName: string; addr: string }>>;
  deleteTopic(topic: string, clusterName?: string): Promise<string[]>;
}

/**
 * The AdminClient's consumer-group commands (consumerProgress, consumerConnection,
 * consumerStatus, groupList, createGroup, deleteGroup) and resetOffset.
 */
export class AdminGroups {
  constructor(private readonly host: AdminGroupsHost) {}

  /** The route of a group's retry topic: where the group lives (DefaultMQAdminExtImpl#examineConsumeStats). */
  private async groupRoute(group: string): Promise<TopicRouteData> {
    try {
      return await this.host.topicRoute(retryTopicOf(group));
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
    // a broker without the group's offsets answers an error, as Java's tool skips it
    const { queues, consumeTps } = await examineConsumeStats(
      (addr, header) => this.host.call(addr, Operations.GET_CONSUME_STATS, header),
      route,
      group,
      topic,
    );
    queues.sort(compareQueue);
    return { group, queues, totalLag: queues.reduce((a, q) => a + q.lag, 0), consumeTps };
  }

  /** `consumerConnection`: GET_CONSUMER_CONNECTION_LIST from the first broker of the group's route that has the group online. */
  async consumerConnection(group: string): Promise<GroupConnection> {
    const route = await this.groupRoute(group);
    let last: unknown = null;
    for (const { addr } of this.host.masters(route)) {
      try {
        const c = (await this.host.call(addr, Operations.GET_CONSUMER_CONNECTION_LIST, { consumerGroup: group })).body;
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
    const addr = this.host.masters(route)[0]?.addr;
    if (!addr) throw new UnknownGroupError(group, 'no master broker in its route');
    const ids = conn.clients.map((c) => c.clientId).filter((id) => clientId === undefined || id === clientId);
    if (clientId !== undefined && ids.length === 0)
      throw new UnknownGroupError(group, `client ${clientId} is not online in it`);
    const out: Array<{ clientId: string; info: ConsumerRunningInfo }> = [];
    for (const id of ids) {
      const r = await this.host.call(addr, Operations.GET_CONSUMER_RUNNING_INFO, {
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
    for (const { addr } of await this.host.masterAddrs(clusterName)) {
      const w = (await this.host.call(addr, Operations.GET_ALL_SUBSCRIPTIONGROUP_CONFIG, {})).body;
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
        : (await this.host.masterAddrs(target.clusterName)).map((m) => m.addr);
    const config = subscriptionGroupConfig(group, fields);
    for (const addr of addrs) await this.host.call(addr, Operations.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, {}, config);
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
    const addrs = (await this.host.masterAddrs(opts.clusterName)).map((m) => m.addr);
    for (const addr of addrs)
      await this.host.call(addr, Operations.DELETE_SUBSCRIPTIONGROUP, {
        groupName: group,
        cleanOffset: opts.cleanOffset === true,
      });
    for (const topic of [retryTopicOf(group), dlqTopicOf(group)]) {
      try {
        await this.host.deleteTopic(topic, opts.clusterName);
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
    const route = await this.host.topicRoute(topic);
    await this.requireGroup(group);
    const timestamp = target.to === 'first' ? 0 : target.to === 'last' ? -1 : target.timestamp;
    const queues: ResetQueue[] = [];
    let mode: ResetResult['mode'] = 'broker';
    for (const { brokerName, addr } of this.host.masters(route)) {
      try {
        const r = await this.host.call(addr, Operations.INVOKE_BROKER_TO_RESET_OFFSET, {
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
          ? await this.host.instance.getMinOffset(addr, mq)
          : target.to === 'last'
            ? await this.host.instance.getMaxOffset(addr, mq)
            : await this.host.instance.searchOffsetByTimestamp(addr, mq, target.timestamp);
      try {
        await this.host.instance.updateConsumerOffset(addr, group, mq, offset);
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
      await this.host.instance.queryTopicRoute(retryTopicOf(group));
      return;
    } catch (err) {
      if (!(err instanceof BrokerError && err.code === ResponseCode.TOPIC_NOT_EXIST)) throw err;
    }
    if ((await this.groupList()).some((g) => g.groupName === group)) return;
    throw new UnknownGroupError(group);
  }
}

function compareQueue(a: QueueProgress, b: QueueProgress): number {
  if (a.topic !== b.topic) return a.topic < b.topic ? -1 : 1;
  if (a.brokerName !== b.brokerName) return a.brokerName < b.brokerName ? -1 : 1;
  return a.queueId - b.queueId;
}
