import {
  Operations,
  ResponseCode,
  retryTopic as retryTopicOf,
  type ClusterInfo,
  type Operation,
  type OperationRequest,
  type OperationRequestBody,
  type TopicRouteData,
} from '../../protocol/internal.js';
import type { MessageRequestMode } from '../../protocol/body/pop-bodies.js';
import type { Reply } from '../client/index.js';
import { BrokerError } from '../remoting/index.js';
import type {
  AdminTarget,
  BrokerConfigOf,
  ProducerConnectionInfo,
  TopicPermChange,
  WritePermResult,
} from './admin-ops-types.js';
import type { ResetResult, ResetTarget } from './admin-types.js';
import {
  AdminArgumentError,
  UnknownClusterError,
  UnknownGroupError,
  UnknownProducerGroupError,
  UnknownTopicError,
} from './errors.js';

/** What the operator commands need of their AdminClient. */
export interface AdminOpsHost {
  readonly namesrvAddrs: readonly string[];
  call<O extends Operation>(
    addr: string,
    op: O,
    header: OperationRequest<O>,
    body?: OperationRequestBody<O>,
  ): Promise<Reply<O>>;
  clusterInfo(): Promise<ClusterInfo>;
  topicRoute(topic: string): Promise<TopicRouteData>;
  masters(route: TopicRouteData): Array<{ brokerName: string; addr: string }>;
  masterAddrs(clusterName?: string): Promise<Array<{ brokerName: string; addr: string }>>;
  resetOffset(group: string, topic: string, target: ResetTarget): Promise<ResetResult>;
}

/**
 * The AdminClient's operator commands beside mqadmin's reads: setConsumeMode, get/updateBrokerConfig,
 * producerConnection, wipe/addWritePerm, updateTopicPerm, cloneGroupOffset and skipAccumulatedMessage.
 */
export class AdminOps {
  constructor(private readonly host: AdminOpsHost) {}

  /** The addresses `target` names: the broker, a cluster's masters, or every master. */
  private async targetAddrs(target: AdminTarget): Promise<Array<{ brokerName: string; addr: string }>> {
    if (target.brokerAddr !== undefined) return [{ brokerName: '', addr: target.brokerAddr }];
    return this.host.masterAddrs(target.clusterName);
  }

  /**
   * `setConsumeMode` (SetConsumeModeSubCommand): SET_MESSAGE_REQUEST_MODE on one broker, every
   * master of a cluster, or (neither given) every master of the topic's route.
   */
  async setConsumeMode(
    group: string,
    topic: string,
    mode: MessageRequestMode,
    opts: AdminTarget & { popShareQueueNum?: number } = {},
  ): Promise<string[]> {
    // neither given: the masters of the topic's route (mqadmin wants one of -b and -c)
    const addrs =
      opts.brokerAddr === undefined && opts.clusterName === undefined
        ? this.host.masters(await this.host.topicRoute(topic)).map((m) => m.addr)
        : (await this.targetAddrs(opts)).map((m) => m.addr);
    const body = { topic, consumerGroup: group, mode, popShareQueueNum: opts.popShareQueueNum ?? 0 };
    for (const addr of addrs) {
      try {
        await this.host.call(addr, Operations.SET_MESSAGE_REQUEST_MODE, {}, body);
      } catch (err) {
        throw nameNotFound(err, topic, group);
      }
    }
    return addrs;
  }

  /**
   * `getBrokerConfig` (GetBrokerConfigCommand): GET_BROKER_CONFIG of one broker, or of every broker
   * of a cluster, masters and slaves (every cluster when neither is given).
   */
  async brokerConfig(target: AdminTarget = {}): Promise<BrokerConfigOf[]> {
    const brokers: Array<{ addr: string; brokerName: string; brokerId: number }> = [];
    if (target.brokerAddr !== undefined) {
      const info = await this.host.clusterInfo();
      const at = whereIs(info, target.brokerAddr);
      brokers.push({ addr: target.brokerAddr, brokerName: at?.brokerName ?? '', brokerId: at?.brokerId ?? 0 });
    } else {
      const info = await this.host.clusterInfo();
      const names =
        target.clusterName === undefined
          ? Object.keys(info.brokerAddrTable)
          : info.clusterAddrTable[target.clusterName];
      if (names === undefined) throw new UnknownClusterError(target.clusterName ?? '');
      for (const brokerName of [...names].sort()) {
        const addrs = info.brokerAddrTable[brokerName]?.brokerAddrs ?? {};
        for (const [id, addr] of Object.entries(addrs).sort(([a], [b]) => Number(a) - Number(b)))
          brokers.push({ addr, brokerName, brokerId: Number(id) });
      }
    }
    return Promise.all(
      brokers.map(async (b) => {
        const r = await this.host.call(b.addr, Operations.GET_BROKER_CONFIG, {});
        return { ...b, config: r.body ?? {}, version: r.header.version ?? null };
      }),
    );
  }

  /**
   * `updateBrokerConfig` (UpdateBrokerConfigSubCommand): UPDATE_BROKER_CONFIG with the given keys
   * on one broker, or every master of a cluster (and its slaves with `includeSlaves`, mqadmin's -a),
   * every master when neither is given. A broker ignores keys it does not have, and refuses a key
   * of its configBlackList with NO_PERMISSION (AdminPermissionError). Returns the addresses written.
   */
  async updateBrokerConfig(
    props: Readonly<Record<string, string>>,
    target: AdminTarget & { includeSlaves?: boolean } = {},
  ): Promise<string[]> {
    let addrs: string[];
    if (target.brokerAddr !== undefined || target.includeSlaves !== true) {
      addrs = (await this.targetAddrs(target)).map((m) => m.addr);
    } else {
      const info = await this.host.clusterInfo();
      const names =
        target.clusterName === undefined
          ? Object.keys(info.brokerAddrTable)
          : info.clusterAddrTable[target.clusterName];
      if (names === undefined) throw new UnknownClusterError(target.clusterName ?? '');
      addrs = [...names].sort().flatMap((n) => Object.values(info.brokerAddrTable[n]?.brokerAddrs ?? {}));
    }
    for (const addr of addrs) await this.host.call(addr, Operations.UPDATE_BROKER_CONFIG, {}, { ...props });
    return addrs;
  }

  /**
   * `producerConnection` (DefaultMQAdminExt#examineProducerConnectionInfo): GET_PRODUCER_CONNECTION_LIST
   * on the first master of the topic's route that knows the group (Java asks one broker at random);
   * UnknownProducerGroupError when none has a producer of it online.
   */
  async producerConnection(group: string, topic: string): Promise<ProducerConnectionInfo> {
    const route = await this.host.topicRoute(topic);
    let last: unknown;
    for (const { addr } of this.host.masters(route)) {
      try {
        const r = await this.host.call(addr, Operations.GET_PRODUCER_CONNECTION_LIST, { producerGroup: group });
        const clients = [...(r.body?.connectionSet ?? [])].sort((a, b) => (a.clientId < b.clientId ? -1 : 1));
        if (clients.length > 0) return { group, addr, clients };
      } catch (err) {
        // the broker's "the producer group[…] not exist" (SYSTEM_ERROR): try the next broker
        if (!(err instanceof BrokerError)) throw err;
        last = err;
      }
    }
    throw new UnknownProducerGroupError(group, last === undefined ? {} : { cause: last });
  }

  /**
   * `wipeWritePerm` (WipeWritePermSubCommand): WIPE_WRITE_PERM_OF_BROKER on every name server: the
   * broker's topic routes lose write permission there, so producers send elsewhere while consumers
   * still read it (before taking a broker down). The broker keeps its own topic configs.
   */
  wipeWritePerm(brokerName: string): Promise<WritePermResult[]> {
    return this.writePerm(brokerName, 'wipe');
  }

  /** `addWritePerm` (AddWritePermSubCommand): ADD_WRITE_PERM_OF_BROKER on every name server: the broker's routes read and write again. */
  addWritePerm(brokerName: string): Promise<WritePermResult[]> {
    return this.writePerm(brokerName, 'add');
  }

  private async writePerm(brokerName: string, how: 'wipe' | 'add'): Promise<WritePermResult[]> {
    const out: WritePermResult[] = [];
    for (const namesrvAddr of this.host.namesrvAddrs) {
      if (how === 'wipe') {
        const r = await this.host.call(namesrvAddr, Operations.WIPE_WRITE_PERM_OF_BROKER, { brokerName });
        out.push({ namesrvAddr, topicCount: r.header.wipeTopicCount });
      } else {
        const r = await this.host.call(namesrvAddr, Operations.ADD_WRITE_PERM_OF_BROKER, { brokerName });
        out.push({ namesrvAddr, topicCount: r.header.addTopicCount });
      }
    }
    return out;
  }

  /**
   * `updateTopicPerm` (UpdateTopicPermSubCommand): the topic's route read, then UPDATE_AND_CREATE_TOPIC
   * with the new perm and each broker's own queue counts and sys flag, on one master (`brokerAddr`:
   * left alone when its perm is already that, as mqadmin says "new perm equals to the old one!"),
   * a cluster's masters, or every master of the route. mqadmin sends the first broker's queue
   * counts to every broker of a cluster; each broker keeps its own here.
   */
  async updateTopicPerm(topic: string, perm: number, target: AdminTarget = {}): Promise<TopicPermChange[]> {
    if (!Number.isInteger(perm) || perm < 0 || perm > 7)
      throw new AdminArgumentError('perm', `must be 0..7 (2 write, 4 read, 6 both), got ${perm}`);
    const route = await this.host.topicRoute(topic);
    const qd = (brokerName: string) => route.queueDatas.find((q) => q.brokerName === brokerName) ?? route.queueDatas[0];
    let brokers: Array<{ brokerName: string; addr: string }>;
    if (target.brokerAddr !== undefined) {
      const m = this.host.masters(route).find((x) => x.addr === target.brokerAddr);
      if (!m) throw new AdminArgumentError('brokerAddr', `${target.brokerAddr} is no master of ${topic}'s route`);
      brokers = [m];
    } else if (target.clusterName !== undefined) {
      brokers = await this.host.masterAddrs(target.clusterName);
    } else brokers = this.host.masters(route);
    const out: TopicPermChange[] = [];
    for (const b of brokers) {
      const q = qd(b.brokerName);
      if (!q) continue;
      const oldPerm = route.queueDatas.find((x) => x.brokerName === b.brokerName)?.perm ?? q.perm;
      const changed = !(target.brokerAddr !== undefined && oldPerm === perm);
      if (changed)
        await this.host.call(b.addr, Operations.UPDATE_AND_CREATE_TOPIC, {
          topic,
          defaultTopic: 'TBW102',
          readQueueNums: q.readQueueNums,
          writeQueueNums: q.writeQueueNums,
          perm,
          topicFilterType: 'SINGLE_TAG',
          topicSysFlag: q.topicSysFlag,
          order: false,
        });
      out.push({ addr: b.addr, brokerName: b.brokerName, oldPerm, perm, changed });
    }
    return out;
  }

  /**
   * DefaultMQAdminExt#cloneGroupOffset: CLONE_GROUP_OFFSET on every broker of the source group's
   * retry-topic route, each broker copying the source group's committed offsets of `topic` over
   * the destination group's. `offline` (default false): also for a topic the online source group
   * does not subscribe to. mqadmin's cloneGroupOffset command does the same from outside (the source
   * group's consume stats, then UPDATE_CONSUMER_OFFSET per queue). Returns the brokers asked.
   */
  async cloneGroupOffset(
    srcGroup: string,
    destGroup: string,
    topic: string,
    opts: { offline?: boolean } = {},
  ): Promise<string[]> {
    let route: TopicRouteData;
    try {
      route = await this.host.topicRoute(retryTopicOf(srcGroup));
    } catch (err) {
      if (err instanceof UnknownTopicError)
        throw new UnknownGroupError(srcGroup, 'no broker has its retry topic', { cause: err });
      throw err;
    }
    const addrs = this.host.masters(route).map((m) => m.addr);
    const header = { srcGroup, destGroup, topic, offline: opts.offline ?? false };
    for (const addr of addrs) await this.host.call(addr, Operations.CLONE_GROUP_OFFSET, header);
    return addrs;
  }

  /**
   * `skipAccumulatedMessage` (SkipAccumulationSubCommand): every queue of the topic set to its max
   * offset for the group, running or stopped (resetOffsetByTimestamp with timestamp −1, forced;
   * the offline path of a 4.9 broker as resetOffset's).
   */
  skipAccumulatedMessage(group: string, topic: string): Promise<ResetResult> {
    return this.host.resetOffset(group, topic, { to: 'last' });
  }
}

/** Broker name and id of an address in the cluster info, or undefined. */
function whereIs(info: ClusterInfo, addr: string): { brokerName: string; brokerId: number } | undefined {
  for (const bd of Object.values(info.brokerAddrTable))
    for (const [id, a] of Object.entries(bd.brokerAddrs))
      if (a === addr) return { brokerName: bd.brokerName, brokerId: Number(id) };
  return undefined;
}

/** TOPIC_NOT_EXIST / SUBSCRIPTION_GROUP_NOT_EXIST as the typed errors naming them. */
function nameNotFound(err: unknown, topic: string, group: string): unknown {
  if (err instanceof BrokerError && err.code === ResponseCode.TOPIC_NOT_EXIST)
    return new UnknownTopicError(topic, { cause: err });
  if (err instanceof BrokerError && err.code === ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST)
    return new UnknownGroupError(group, 'the broker has no subscription group config', { cause: err });
  return err;
}
