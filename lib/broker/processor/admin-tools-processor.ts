import {
  MQVersion,
  Operations,
  RETRY_GROUP_TOPIC_PREFIX,
  isSystemTopic,
  ResponseCode,
  encodeResetOffsetBody,
  type MessageQueue,
  type ResetOffsetRequestHeader,
} from '../../../protocol/internal.js';
import {
  encodeConsumerConnection,
  encodeKVTable,
  encodeSubscriptionGroupWrapper,
  encodeTopicStatsTable,
  subscriptionGroupConfig,
  type SubscriptionGroupConfig,
  type TopicOffset,
} from '../../../protocol/body/admin-tools-bodies.js';
import type { RemotingServer } from '../../remoting/index.js';
import { BROKER_VERSION } from '../broker-version.js';
import { UNIQUE_KEY_QUERY_MAX, type IndexService } from '../index-service.js';
import type { NameServer } from '../name-server.js';
import type { SubscriptionGroupManager } from '../subscription-group-manager.js';
import { topicNotExist, type BrokerContext } from './broker-context.js';
import { callClient, fail, ok, registerOperation, type Answer } from './request-processor.js';

/** What the admin tools need of a broker beyond the processors' shared context. */
export interface AdminToolsHost {
  readonly index: IndexService;
  readonly groups: SubscriptionGroupManager;
  readonly namesrv: NameServer;
}

/** The MQVersion name of an ordinal ("V4_9_8"), as Java's MQVersion.getVersionDesc prints it. */
function versionDesc(v: number): string {
  return Object.entries(MQVersion).find(([, n]) => n === v)?.[0] ?? String(v);
}

/**
 * The requests of Apache's mqadmin that AdminBrokerProcessor and QueryMessageProcessor serve in
 * Java and the rest of the broker did not: runtime info (the version `clusterList` prints), topic
 * stats, consumer connections, topic deletion, subscription groups, the server-side offset reset,
 * and QUERY_MESSAGE over the key index (index-service.ts).
 */
export class AdminToolsProcessor {
  constructor(
    private readonly ctx: BrokerContext,
    private readonly host: AdminToolsHost,
  ) {}

  register(server: RemotingServer): void {
    registerOperation(server, Operations.GET_BROKER_RUNTIME_INFO, () =>
      ok({
        body: encodeKVTable({
          table: {
            brokerVersionDesc: versionDesc(BROKER_VERSION),
            brokerVersion: String(BROKER_VERSION),
            brokerName: this.ctx.brokerName,
          },
        }),
      }),
    );
    registerOperation(server, Operations.GET_TOPIC_STATS_INFO, ({ header: h }) => this.topicStats(h.topic));
    registerOperation(server, Operations.GET_CONSUMER_CONNECTION_LIST, ({ header: h }) =>
      this.connectionList(h.consumerGroup),
    );
    registerOperation(server, Operations.DELETE_TOPIC_IN_BROKER, ({ header: h }) => {
      // as Java (validateSystemTopicWhenUpdateTopic, on by default): TBW102, SCHEDULE_TOPIC_XXXX… stay
      if (isSystemTopic(h.topic))
        return fail(ResponseCode.INVALID_PARAMETER, `The topic[${h.topic}] is conflict with system topic.`);
      // Java deletes the topic's consume queues and config and answers SUCCESS for an unknown topic too
      this.ctx.topics.delete(h.topic);
      this.ctx.messageStore.deleteTopic(h.topic);
      this.ctx.messageStore.stats.onTopicDeleted(h.topic);
      this.host.namesrv.unregisterTopic(h.topic, this.ctx.brokerName);
      return ok();
    });
    registerOperation(server, Operations.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, ({ body }) => {
      // the group name was checked with every request's names (resource-names.ts)
      this.host.groups.put(body);
      return ok();
    });
    registerOperation(server, Operations.GET_ALL_SUBSCRIPTIONGROUP_CONFIG, () => {
      const table: Record<string, SubscriptionGroupConfig> = {};
      for (const g of [...this.knownGroups()].sort()) table[g] = this.host.groups.get(g) ?? subscriptionGroupConfig(g);
      return ok({
        body: encodeSubscriptionGroupWrapper({
          subscriptionGroupTable: table,
          dataVersion: this.host.groups.dataVersion(),
        }),
      });
    });
    registerOperation(server, Operations.DELETE_SUBSCRIPTIONGROUP, ({ header: h }) => {
      this.host.groups.delete(h.groupName);
      if (h.cleanOffset === true) this.ctx.offsets.removeGroup(h.groupName);
      // Java's autoDeleteUnusedStats (on by default)
      this.ctx.messageStore.stats.onGroupDeleted(h.groupName);
      return ok();
    });
    registerOperation(server, Operations.INVOKE_BROKER_TO_RESET_OFFSET, ({ header: h }) => this.resetOffset(h));
    registerOperation(server, Operations.QUERY_MESSAGE, ({ header: h }) => {
      this.host.index.flush();
      const maxNum = h.uniqueKeyQuery === true ? UNIQUE_KEY_QUERY_MAX : h.maxNum;
      const r = this.host.index.query(h.topic, h.key, maxNum, h.beginTimestamp, h.endTimestamp);
      const header = { indexLastUpdateTimestamp: r.lastTimestamp, indexLastUpdatePhyoffset: r.lastPhys };
      const records = r.entries
        .map((e) => this.ctx.messageStore.lookMessageByOffset(e.phys))
        .filter((b): b is Buffer => b !== null);
      if (records.length === 0) {
        const remark = 'can not find message, maybe time range not correct';
        return { code: ResponseCode.QUERY_NOT_FOUND, remark, header };
      }
      return { header, body: Buffer.concat(records) };
    });
  }

  /** Groups this broker knows: a config, committed offsets, a live consumer, or a retry topic. */
  private knownGroups(): Set<string> {
    const out = new Set<string>(this.host.groups.all().map((c) => c.groupName));
    for (const g of this.ctx.offsets.groups()) out.add(g);
    for (const [g, info] of this.ctx.consumers.groups) if (info.channels.size > 0) out.add(g);
    // a group's retry topic is made on its first heartbeat and kept: the embedded broker's stand-in
    // for the config Java's broker auto-creates then (autoCreateSubscriptionGroup)
    for (const t of this.ctx.topics.all())
      if (t.topicName.startsWith(RETRY_GROUP_TOPIC_PREFIX)) out.add(t.topicName.slice(RETRY_GROUP_TOPIC_PREFIX.length));
    return out;
  }

  /** GET_TOPIC_STATS_INFO: min and max offset and last store time of every queue (AdminBrokerProcessor#getTopicStatsInfo). */
  private topicStats(topic: string): Answer {
    const config = this.ctx.topics.get(topic);
    if (!config) return topicNotExist(topic);
    const store = this.ctx.messageStore;
    const queues = Math.min(Math.max(config.readQueueNums, config.writeQueueNums), this.ctx.limits.maxQueueNums);
    const offsetTable: Array<[MessageQueue, TopicOffset]> = [];
    for (let q = 0; q < queues; q++) {
      const minOffset = Math.max(0, store.getMinOffset(topic, q));
      const maxOffset = Math.max(0, store.getMaxOffset(topic, q));
      const lastUpdateTimestamp = maxOffset > 0 ? Math.max(0, store.storeTimestampAt(topic, q, maxOffset - 1)) : 0;
      offsetTable.push([
        { topic, brokerName: this.ctx.brokerName, queueId: q },
        { minOffset, maxOffset, lastUpdateTimestamp },
      ]);
    }
    return ok({ body: encodeTopicStatsTable({ offsetTable, topicPutTps: 0 }) });
  }

  /** GET_CONSUMER_CONNECTION_LIST: the group's live clients, or CONSUMER_NOT_ONLINE with Java's remark. */
  private connectionList(group: string): Answer {
    const info = this.ctx.consumers.find(group);
    if (!info || info.channels.size === 0)
      return fail(ResponseCode.CONSUMER_NOT_ONLINE, `the consumer group[${group}] not online`);
    return ok({
      body: encodeConsumerConnection({
        connectionSet: [...info.channels.values()].map((c) => ({
          clientId: c.clientId,
          clientAddr: c.conn.remoteAddress,
          language: c.language ?? 'JAVA',
          version: c.version,
        })),
        subscriptionTable: Object.fromEntries(info.subscriptions),
        consumeType: info.consumeType,
        messageModel: info.messageModel,
        consumeFromWhere: info.consumeFromWhere,
      }),
    });
  }

  /**
   * INVOKE_BROKER_TO_RESET_OFFSET as a 5.x broker serves it (useServerSideResetOffset,
   * AdminBrokerProcessor#resetOffsetInner): the broker stores the new offsets itself, for a stopped
   * group as for a running one, and answers them. Java then makes each queue's next pull answer
   * PULL_OFFSET_MOVED; here every online client of the group also gets RESET_CONSUMER_CLIENT_OFFSET
   * (the 4.9 way, Broker2Client#resetOffset), which Java's and rocketwire's consumers both follow.
   */
  private resetOffset(h: ResetOffsetRequestHeader): Answer {
    const { topic, group } = h;
    const config = this.ctx.topics.get(topic);
    if (!config) return fail(ResponseCode.TOPIC_NOT_EXIST, `Topic ${topic} does not exist`);
    if (!this.knownGroups().has(group))
      return fail(ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST, `Group ${group} does not exist`);
    const store = this.ctx.messageStore;
    const byTime = (q: number): number =>
      h.timestamp < 0 ? store.getMaxOffset(topic, q) : store.getOffsetByTime(topic, q, h.timestamp, 'LOWER');
    const offsets = new Map<number, number>();
    const queueId = h.queueId ?? -1;
    if (queueId >= 0) {
      let offset = h.offset ?? -1;
      if (offset !== -1) {
        const min = store.getMinOffset(topic, queueId);
        const max = store.getMaxOffset(topic, queueId);
        if ((min >= 0 && offset < min) || offset > max + 1)
          return fail(ResponseCode.SYSTEM_ERROR, `Target offset ${offset} not in consume queue range [${min}-${max}]`);
      } else offset = byTime(queueId);
      offsets.set(queueId, offset);
    } else {
      for (let q = 0; q < Math.min(config.readQueueNums, this.ctx.limits.maxQueueNums); q++) offsets.set(q, byTime(q));
    }
    if (offsets.size === 0) return fail(ResponseCode.SYSTEM_ERROR, 'No queues to reset.');
    const offsetTable: Array<[MessageQueue, number]> = [];
    for (const [q, offset] of offsets) {
      this.ctx.offsets.commit(group, topic, q, offset);
      offsetTable.push([{ topic, brokerName: this.ctx.brokerName, queueId: q }, offset]);
    }
    const body = encodeResetOffsetBody({ offsetTable });
    for (const c of this.ctx.consumers.find(group)?.channels.values() ?? []) {
      if (c.conn.closed) continue;
      const header = { topic, group, timestamp: h.timestamp, isForce: true };
      const op = Operations.RESET_CONSUMER_CLIENT_OFFSET;
      void callClient(c.conn, op, header, body, { version: BROKER_VERSION, oneway: true }).catch(() => undefined);
    }
    return ok({ body });
  }
}
