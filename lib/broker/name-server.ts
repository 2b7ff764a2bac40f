import createDebug from 'debug';
import { MQVersion, RequestCode, ResponseCode, createResponse, type RemotingCommand } from '../../protocol/index.js';
import { RemotingServer, formatAddress, type RemotingServerOptions } from '../remoting/index.js';
import { advertisedHost } from './advertised-host.js';
import type { TopicConfig } from './topic-config.js';

const log = createDebug('rocketwire:broker');

/** FAQUrl.suggestTodo(APPLY_TOPIC_URL), appended by Java to topic errors. */
export const FAQ_APPLY_TOPIC = '\nSee http://rocketmq.apache.org/docs/faq/ for further details.';

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
 * GET_ALL_TOPIC_LIST_FROM_NAMESERVER and UPDATE_AND_CREATE_TOPIC (which creates the topic on
 * every broker); any other code gets REQUEST_CODE_NOT_SUPPORTED from the remoting layer.
 */
export class NameServer {
  readonly server: RemotingServer;
  private readonly brokers = new Map<string, BrokerEntry>();
  /** topic → brokerName → queue data */
  private readonly topicQueues = new Map<string, Map<string, QueueData>>();
  address = '';

  constructor(options: RemotingServerOptions = {}) {
    this.server = new RemotingServer(options);
    this.server.registerProcessor(RequestCode.GET_ROUTEINFO_BY_TOPIC, (req) => this.getRouteInfo(req));
    this.server.registerProcessor(RequestCode.GET_BROKER_CLUSTER_INFO, (req) => this.getClusterInfo(req));
    this.server.registerProcessor(RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER, (req) =>
      createResponse(req, ResponseCode.SUCCESS, { body: Buffer.from(JSON.stringify({ topicList: [...this.topicQueues.keys()].sort() })) }),
    );
    this.server.registerProcessor(RequestCode.UPDATE_AND_CREATE_TOPIC, (req) => this.createTopic(req));
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
    m.set(brokerName, { brokerName, perm: t.perm, readQueueNums: t.readQueueNums, writeQueueNums: t.writeQueueNums, topicSysFlag: t.topicSysFlag });
    log('route of %s on %s: %d queues, perm %d', t.topicName, brokerName, t.writeQueueNums, t.perm);
  }

  /** Route of a topic as TopicRouteData JSON; `standard` quotes the numeric brokerAddrs keys. */
  routeJson(topic: string, standard: boolean): string | null {
    const m = this.topicQueues.get(topic);
    if (!m || m.size === 0) return null;
    const names = [...m.keys()].filter((n) => this.brokers.has(n)).sort();
    if (names.length === 0) return null;
    const brokerDatas = names.map((n) => this.brokerDataJson(this.brokers.get(n)!, standard));
    const queueDatas = names.map((n) => {
      const q = m.get(n)!;
      return `{"brokerName":${JSON.stringify(q.brokerName)},"perm":${q.perm},"readQueueNums":${q.readQueueNums},"topicSysFlag":${q.topicSysFlag},"writeQueueNums":${q.writeQueueNums}}`;
    });
    return `{"brokerDatas":[${brokerDatas.join(',')}],"filterServerTable":{},"queueDatas":[${queueDatas.join(',')}]}`;
  }

  private brokerDataJson(b: BrokerEntry, standard: boolean): string {
    const key = standard ? '"0"' : '0';
    return `{"brokerAddrs":{${key}:${JSON.stringify(b.brokerAddr)}},"brokerName":${JSON.stringify(b.brokerName)},"cluster":${JSON.stringify(b.clusterName)}}`;
  }

  private getRouteInfo(req: RemotingCommand): RemotingCommand {
    const topic = req.extFields?.topic;
    if (!topic) return createResponse(req, ResponseCode.SYSTEM_ERROR, { remark: 'the custom field <topic> is null' });
    // Standard JSON for clients >= V4_9_4 or when asked; older clients get fastjson's unquoted keys.
    const standard = req.version >= MQVersion.V4_9_4 || req.extFields?.acceptStandardJsonOnly?.toLowerCase() === 'true';
    const json = this.routeJson(topic, standard);
    if (json === null) {
      return createResponse(req, ResponseCode.TOPIC_NOT_EXIST, {
        remark: `No topic route info in name server for the topic: ${topic}${FAQ_APPLY_TOPIC}`,
      });
    }
    return createResponse(req, ResponseCode.SUCCESS, { body: Buffer.from(json, 'utf8') });
  }

  /** ClusterInfo; like Java, always with fastjson's unquoted numeric brokerAddrs keys. */
  private getClusterInfo(req: RemotingCommand): RemotingCommand {
    const names = [...this.brokers.keys()].sort();
    const table = names.map((n) => `${JSON.stringify(n)}:${this.brokerDataJson(this.brokers.get(n)!, false)}`);
    const clusters = new Map<string, string[]>();
    for (const n of names) {
      const c = this.brokers.get(n)!.clusterName;
      clusters.set(c, [...(clusters.get(c) ?? []), n]);
    }
    const ct = [...clusters].map(([c, ns]) => `${JSON.stringify(c)}:${JSON.stringify(ns)}`);
    const json = `{"brokerAddrTable":{${table.join(',')}},"clusterAddrTable":{${ct.join(',')}}}`;
    return createResponse(req, ResponseCode.SUCCESS, { body: Buffer.from(json, 'utf8') });
  }

  private createTopic(req: RemotingCommand): RemotingCommand {
    const e = req.extFields ?? {};
    const topic = e.topic;
    if (!topic) return createResponse(req, ResponseCode.SYSTEM_ERROR, { remark: 'the custom field <topic> is null' });
    const read = Number(e.readQueueNums ?? 8);
    const write = Number(e.writeQueueNums ?? read);
    const perm = Number(e.perm ?? 6);
    if (![read, write, perm].every((n) => Number.isInteger(n) && n >= 0)) {
      return createResponse(req, ResponseCode.SYSTEM_ERROR, { remark: 'readQueueNums, writeQueueNums and perm must be integers' });
    }
    const config: TopicConfig = {
      topicName: topic,
      readQueueNums: read,
      writeQueueNums: write,
      perm,
      topicFilterType: e.topicFilterType ?? 'SINGLE_TAG',
      topicSysFlag: Number(e.topicSysFlag ?? 0) || 0,
      order: e.order === 'true',
    };
    for (const b of this.brokers.values()) b.createTopic(config);
    return createResponse(req, ResponseCode.SUCCESS);
  }
}
