import { PermName } from '../../protocol/internal.js';
import type { Clock } from '../clock.js';
import type { TimerSettings } from './timer/timer-send-rules.js';

/**
 * What GET_BROKER_CONFIG answers and UPDATE_BROKER_CONFIG changes (Java's
 * org.apache.rocketmq.remoting.Configuration over BrokerConfig, MessageStoreConfig and the netty
 * configs): the embedded broker's settings under Java's key names, as strings. As in Java, an
 * update changes only keys the table has (others are ignored without a word), a key of the black
 * list is refused whole, and every update moves the data version on. The embedded broker reads its
 * options once, at start: a changed value is what the next GET_BROKER_CONFIG shows, not a live
 * setting (Java applies some keys live, through their setters; the admin tools do not tell which).
 */
export class BrokerConfigTable {
  private readonly values = new Map<string, string>();
  private counter = 0;
  private timestamp: number;
  /** Keys an update may never carry (Java's configBlackList, brokerConfigPath and rocketmqHome always in it). */
  readonly blackList: ReadonlySet<string>;

  constructor(
    initial: Readonly<Record<string, string>>,
    private readonly clock: Clock,
  ) {
    for (const [k, v] of Object.entries(initial)) this.values.set(k, v);
    this.blackList = new Set([
      'brokerConfigPath',
      'rocketmqHome',
      'configBlackList',
      ...(initial.configBlackList ?? '').split(';').filter((k) => k !== ''),
    ]);
    this.timestamp = clock.now();
  }

  /** Every key and value, keys sorted (MixAll.properties2String with isSort). */
  all(): Record<string, string> {
    return Object.fromEntries([...this.values].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  }

  get(key: string): string | undefined {
    return this.values.get(key);
  }

  /** The first key of `props` on the black list, or undefined. */
  blackListed(props: Readonly<Record<string, string>>): string | undefined {
    return Object.keys(props).find((k) => this.blackList.has(k));
  }

  /** Merge the keys the table has; returns those changed. */
  update(props: Readonly<Record<string, string>>): string[] {
    const changed: string[] = [];
    for (const [k, v] of Object.entries(props)) {
      if (!this.values.has(k)) continue;
      if (this.values.get(k) !== v) changed.push(k);
      this.values.set(k, v);
    }
    this.counter++;
    this.timestamp = this.clock.now();
    return changed;
  }

  /** DataVersion as Java's Configuration#getDataVersionJson writes it. */
  dataVersionJson(): string {
    return JSON.stringify({ counter: this.counter, stateVersion: 0, timestamp: this.timestamp });
  }
}

/** The broker options the config table shows (BrokerOptions' fields of those names). */
export interface BrokerConfigSource {
  brokerName: string;
  clusterName?: string | undefined;
  storeDir: string;
  autoCreateTopic?: boolean | undefined;
  queues?: number | undefined;
  maxMessageSize?: number | undefined;
  messageDelayLevel?: string | undefined;
  enablePropertyFilter?: boolean | undefined;
  traceTopicEnable?: boolean | undefined;
  msgTraceTopicName?: string | undefined;
  storeReplyMessageEnable?: boolean | undefined;
  idleTimeoutMs?: number | undefined;
  channelExpiredTimeoutMs?: number | undefined;
}

/** The embedded broker's settings under Java's BrokerConfig / MessageStoreConfig / NettyServerConfig names. */
export function brokerConfigEntries(
  o: BrokerConfigSource,
  address: string,
  namesrvAddr: string,
  timer: Pick<TimerSettings, 'timerWheelEnable' | 'timerPrecisionMs' | 'timerMaxDelaySec'>,
): Record<string, string> {
  const port = address.slice(address.lastIndexOf(':') + 1);
  const host = address.slice(0, address.lastIndexOf(':'));
  return {
    brokerClusterName: o.clusterName ?? 'DefaultCluster',
    brokerName: o.brokerName,
    brokerId: '0',
    brokerRole: 'ASYNC_MASTER',
    brokerIP1: host,
    listenPort: port,
    namesrvAddr,
    storePathRootDir: o.storeDir,
    brokerPermission: String(PermName.PERM_READ | PermName.PERM_WRITE),
    autoCreateTopicEnable: String(o.autoCreateTopic !== false),
    defaultTopicQueueNums: String(o.queues ?? 8),
    maxMessageSize: String(o.maxMessageSize ?? 4 * 1024 * 1024),
    messageDelayLevel: o.messageDelayLevel ?? '1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h',
    enablePropertyFilter: String(o.enablePropertyFilter === true),
    traceTopicEnable: String(o.traceTopicEnable === true),
    msgTraceTopicName: o.msgTraceTopicName ?? 'RMQ_SYS_TRACE_TOPIC',
    storeReplyMessageEnable: String(o.storeReplyMessageEnable !== false),
    timerWheelEnable: String(timer.timerWheelEnable),
    timerPrecisionMs: String(timer.timerPrecisionMs),
    timerMaxDelaySec: String(timer.timerMaxDelaySec),
    serverChannelMaxIdleTimeSeconds: String(Math.round((o.idleTimeoutMs ?? 120_000) / 1000)),
    channelExpiredTimeout: String(o.channelExpiredTimeoutMs ?? 120_000),
    configBlackList: 'configBlackList;brokerConfigPath',
  };
}
