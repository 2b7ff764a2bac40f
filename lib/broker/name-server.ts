import createDebug from '../debug.js';
import {
  MQVersion,
  Operations,
  ResponseCode,
  encodeTopicRouteData,
  type BrokerData,
  type ClusterInfo,
  type CreateTopicRequestHeader,
  type GetRouteInfoRequestHeader,
  type RemotingCommand,
  type TopicRouteData,
} from '../../protocol/internal.js';
import { RemotingServer, formatAddress, type RemotingServerOptions } from '../remoting/index.js';
import { advertisedHost } from './advertised-host.js';
import { fail, ok, registerOperation, type Answer } from './processor/request-processor.js';
import { FAQ_APPLY_TOPIC } from './faq-remarks.js';
import { DEFAULT_MAX_QUEUE_NUMS } from './processor/broker-context.js';
import { operateWritePerm } from './write-perm.js';
import { checkTopicConfigRequest, topicConfigFromHeader, type TopicConfig } from './topic-config.js';

const log = createDebug('rocketwire:broker');

interface BrokerEntry {
  clusterName: string;
  brokerName: string;
  brokerAddr: string;
  /** UPDATE_AND_CREATE_TOPIC sent to the name server creates the topic on every broker through this. */
  createTopic: (config: TopicConfig) => void;
}

interface QueueData {
  brokerName: string;
  perm: number;
  readQueueNums: number;
  writeQueueNums: number;
  topicSysFlag: number;
}

/**
 * In-process name server (RouteInfoManager): brokers of the same process register by direct call,
 * clients ask over the wire. Serves GET_ROUTEINFO_BY_TOPIC, GET_BROKER_CLUSTER_INFO,
 * GET_ALL_TOPIC_LIST_FROM_NAMESERVER, UPDATE_AND_CREATE_TOPIC (which creates the topic on
 * every broker), DELETE_TOPIC_IN_NAMESRV and WIPE / ADD_WRITE_PERM_OF_BROKER; any other code gets REQUEST_CODE_NOT_SUPPORTED from the remoting layer.
 */
export class NameServer {
  readonly server: RemotingServer;
  private readonly brokers = new Map<string, BrokerEntry>();
  /** topic → brokerName → queue data */
  private readonly topicQueues = new Map<string, Map<string, QueueData>>();
  address = '';
  private readonly maxQueueNums: number;

  /** `maxQueueNums` bounds the queue counts UPDATE_AND_CREATE_TOPIC may ask for, as on a broker. */
  constructor(options: RemotingServerOptions & { maxQueueNums?: number | undefined } = {}) {
    const { maxQueueNums, ...remoting } = options;
    this.maxQueueNums = maxQueueNums ?? DEFAULT_MAX_QUEUE_NUMS;
    this.server = new RemotingServer(remoting);
    registerOperation(this.server, Operations.GET_ROUTEINFO_BY_TOPIC, ({ header, request }) =>
      this.getRouteInfo(request, header),
    );
    registerOperation(this.server, Operations.GET_BROKER_CLUSTER_INFO, () => ({ body: this.clusterInfo() }));
    registerOperation(this.server, Operations.GET_ALL_TOPIC_LIST_FROM_NAMESERVER, () => ({
      body: { topicList: [...this.topicQueues.keys()].sort() },
    }));
    registerOperation(this.server, Operations.UPDATE_AND_CREATE_TOPIC, ({ header }) => this.createTopic(header));
    // DELETE_TOPIC_IN_NAMESRV: the topic's route goes (from one cluster's brokers, or all)
    registerOperation(this.server, Operations.DELETE_TOPIC_IN_NAMESRV, ({ header }) => {
      this.unregisterTopic(header.topic);
      return ok();
    });
    registerOperation(this.server, Operations.WIPE_WRITE_PERM_OF_BROKER, ({ header }) => ({
      header: { wipeTopicCount: operateWritePerm(this.topicQueues, header.brokerName, 'wipe') },
    }));
    registerOperation(this.server, Operations.ADD_WRITE_PERM_OF_BROKER, ({ header }) => ({
      header: { addTopicCount: operateWritePerm(this.topicQueues, header.brokerName, 'add') },
    }));
  }

  async listen(port: number, host: string): Promise<string> {
    const a = await this.server.listen(port, host);
    this.address = formatAddress(advertisedHost(host), a.port);
    return this.address;
  }

  close(): Promise<void> {
    return this.server.close();
  }

  registerBroker(entry: BrokerEntry, topics: TopicConfig[]): void {
    this.brokers.set(entry.brokerName, entry);
    for (const t of topics) this.registerTopic(entry.brokerName, t);
  }

  unregisterBroker(brokerName: string): void {
    this.brokers.delete(brokerName);
    for (const [topic, m] of this.topicQueues) {
      m.delete(brokerName);
      if (m.size === 0) this.topicQueues.delete(topic);
    }
  }

  registerTopic(brokerName: string, t: TopicConfig): void {
    let m = this.topicQueues.get(t.topicName);
    if (!m) {
      m = new Map();
      this.topicQueues.set(t.topicName, m);
    }
    m.set(brokerName, {
      brokerName,
      perm: t.perm,
      readQueueNums: t.readQueueNums,
      writeQueueNums: t.writeQueueNums,
      topicSysFlag: t.topicSysFlag,
    });
    log('route of %s on %s: %d queues, perm %d', t.topicName, brokerName, t.writeQueueNums, t.perm);
  }

  /** Forget a topic's route on one broker, or on all (DELETE_TOPIC_IN_NAMESRV, a broker's DELETE_TOPIC_IN_BROKER). */
  unregisterTopic(topic: string, brokerName?: string): void {
    const m = this.topicQueues.get(topic);
    if (brokerName !== undefined) m?.delete(brokerName);
    if (!m || brokerName === undefined || m.size === 0) this.topicQueues.delete(topic);
  }

  /** Route of a topic (brokers in name order), or null when no live broker serves it. */
  route(topic: string): TopicRouteData | null {
    const m = this.topicQueues.get(topic);
    if (!m || m.size === 0) return null;
    const names = [...m.keys()].filter((n) => this.brokers.has(n)).sort();
    if (names.length === 0) return null;
    return {
      brokerDatas: names.map((n) => brokerData(this.brokers.get(n)!)),
      queueDatas: names.map((n) => ({ ...m.get(n)! })),
      filterServerTable: {},
    };
  }

  private getRouteInfo(req: RemotingCommand, h: GetRouteInfoRequestHeader): Answer {
    // Standard JSON for clients >= V4_9_4 or when asked; older clients get fastjson's unquoted keys.
    const standard = req.version >= MQVersion.V4_9_4 || h.acceptStandardJsonOnly === true;
    const route = this.route(h.topic);
    if (route === null) {
      return fail(
        ResponseCode.TOPIC_NOT_EXIST,
        `No topic route info in name server for the topic: ${h.topic}${FAQ_APPLY_TOPIC}`,
      );
    }
    // the row's codec writes standard JSON only; an older client's fastjson keys are encoded here
    return ok({ body: encodeTopicRouteData(route, { nonStandard: !standard }) });
  }

  /** ClusterInfo; like Java, written with fastjson's unquoted numeric brokerAddrs keys. */
  private clusterInfo(): ClusterInfo {
    const info: ClusterInfo = { brokerAddrTable: {}, clusterAddrTable: {} };
    for (const n of [...this.brokers.keys()].sort()) {
      const b = this.brokers.get(n)!;
      info.brokerAddrTable[n] = brokerData(b);
      (info.clusterAddrTable[b.clusterName] ??= []).push(n);
    }
    return info;
  }

  /** Creates the topic on every broker (mqadmin sends this to brokers; the embedded name server fans it out). */
  private createTopic(h: CreateTopicRequestHeader): Answer {
    const config = topicConfigFromHeader(h);
    const bad = checkTopicConfigRequest(config, this.maxQueueNums);
    if (bad) return fail(ResponseCode.INVALID_PARAMETER, bad);
    for (const b of this.brokers.values()) b.createTopic(config);
    return ok();
  }
}

function brokerData(b: BrokerEntry): BrokerData {
  return { cluster: b.clusterName, brokerName: b.brokerName, brokerAddrs: { '0': b.brokerAddr } };
}
