import createDebug from '../debug.js';
import { AUTO_CREATE_TOPIC_KEY_TOPIC, PermName, SCHEDULE_TOPIC, type SerializeTypeName } from '../../protocol/index.js';
import { RemotingServer, type RemotingConnection } from '../remoting/index.js';
import { advertisedHost } from './advertised-host.js';
import { stderrWarn, type StoreWarn } from './atomic-file.js';
import type { Clock } from '../clock.js';
import { ConsumerManager } from './consumer-manager.js';
import { ConsumerOffsetManager } from './consumer-offset-manager.js';
import { indexedProperties, socketAddressText } from './message-record.js';
import type { RetentionOptions } from './store-retention.js';
import { brokerTagsCode } from './store-tags-code.js';
import { MessageStore } from './message-store.js';
import type { NameServer } from './name-server.js';
import { startBrokerTasks } from './broker-tasks.js';
import { PullRequestHoldService } from './pull-request-hold.js';
import { RebalanceLockManager } from './rebalance-lock-manager.js';
import { ScheduleMessageService, parseDelayLevels } from './schedule-message-service.js';
import { TopicConfigManager } from './topic-config.js';
import { TIMER_TOPIC, TimerMessageStore, resolveTimerSettings, type TimerSettings } from './timer/index.js';
import { resolveEnablePropertyFilter } from './sql-filter.js';
import { resolveBrokerLimits, type BrokerContext, type BrokerLimits } from './processor/broker-context.js';
import { AdminBrokerProcessor } from './processor/admin-broker-processor.js';
import { AdminToolsProcessor, type AdminToolsHost } from './processor/admin-tools-processor.js';
import { AdminOpsProcessor } from './processor/admin-ops-processor.js';
import { brokerConfigEntries } from './broker-config-table.js';
import { IndexService } from './index-service.js';
import { SubscriptionGroupManager } from './subscription-group-manager.js';
import { ClientManageProcessor } from './processor/client-manage-processor.js';
import { ConsumerManageProcessor } from './processor/consumer-manage-processor.js';
import { PullMessageProcessor } from './processor/pull-message-processor.js';
import { SendMessageProcessor } from './processor/send-message-processor.js';
import { createTransactions, type TransactionTuning, type Transactions } from './transaction/index.js';
import {
  ReplyMessageProcessor,
  createReplyRequestTable,
  replyTopicOf,
  resolveStoreReplyMessageEnable,
} from './reply/reply-message-processor.js';
import type { ReplyRequestTable } from './reply/reply-request-table.js';
import { PopService } from './pop/pop-message-processor.js';
import { aclRequestGate, type PermissionChecker } from './acl/index.js';
import { ensureTraceTopic } from './trace-topic.js';
import { RecallMessageProcessor, type RecallOptions } from './processor/recall-message-processor.js';
import { BrokerStatsProcessor } from './processor/broker-stats-processor.js';

const log = createDebug('rocketwire:broker');
export { BROKER_VERSION } from './broker-version.js';

/** A broker's tunable settings; startBroker takes the same ones and passes them on. */
export interface BrokerTuning extends TransactionTuning, RecallOptions, RetentionOptions {
  /**
   * Queues of TBW102, i.e. the most an auto-created topic gets (defaultTopicQueueNums), 1..1024.
   * @default 8
   */
  queues?: number;
  /**
   * Create unknown topics on first send (TBW102).
   * @default true
   */
  autoCreateTopic?: boolean;
  /**
   * Serialize type of requests the broker initiates (NOTIFY_CONSUMER_IDS_CHANGED).
   * @default "JSON"
   */
  serializeType?: SerializeTypeName;
  /**
   * Commit-log segment size, in bytes.
   * @default 67108864 (64 MiB)
   */
  segmentSize?: number;
  /**
   * Newest commit-log segments kept in memory.
   * @default 2
   */
  cachedSegments?: number;
  /**
   * Largest message body the broker stores, in bytes (Java's maxMessageSize).
   * @default 4194304 (4 MiB)
   */
  maxMessageSize?: number;
  /**
   * Java's messageDelayLevel string (the delays of delay levels 1, 2, …); e.g. "100ms 200ms" for
   * fast tests.
   * @default "1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h"
   */
  messageDelayLevel?: string;
  /**
   * A consumer connection not refreshed by a heartbeat for this long is closed and leaves its
   * groups, in milliseconds.
   * @default 120000
   */
  channelExpiredTimeoutMs?: number;
  /**
   * Interval between two persists of the consumer offsets to the store, in milliseconds.
   * @default 5000
   */
  flushConsumerOffsetIntervalMs?: number;
  /**
   * How long an orderly consumer's queue lock lives without renewal, in milliseconds (Java's
   * rocketmq.broker.rebalance.lockMaxLiveTime).
   * @default 60000
   */
  lockMaxLiveTimeMs?: number;
  /**
   * Where the broker says, one line each, what it found damaged on disk at start-up and what it did
   * about it (records skipped, a torn tail cut, consume queues rebuilt, a config file's .bak
   * loaded).
   * @default undefined (the logger's warn, else lines to stderr)
   */
  warn?: StoreWarn;
  /**
   * Most read / write queues of a topic a request may create, 1..65535.
   * @default 1024
   */
  maxQueueNums?: number;
  /**
   * Most tags of one subscription a pull or heartbeat may carry, 1..1000000.
   * @default 1024
   */
  maxTagsPerSubscription?: number;
  /**
   * Most characters of a SQL92 expression (a pull's own, a heartbeat's), 1..16777216; a longer one
   * is refused as one that does not parse, naming sqlMaxLength (Apache has no bound).
   * @default 65536
   */
  sqlMaxLength?: number;
  /**
   * Most nodes of a SQL92 expression's tree (each is one step of evaluating it against a
   * message), 1..16777216; refused as sqlMaxLength.
   * @default 4096
   */
  sqlMaxNodes?: number;
  /**
   * Evaluation steps one SQL92 pull may spend (a node evaluated, or 4 bytes of a message's
   * properties decoded), 1..2147483647: past it the pull answers what matched so far, and the
   * client pulls again from the first message not evaluated. A pull evaluates one message at least.
   * @default 100000 (about 4 ms on a 2-core VM)
   */
  sqlEvaluationBudget?: number;
  /**
   * Serve SQL92 subscriptions (Java's enablePropertyFilter; sql-filter.ts).
   * @default false (as Apache's)
   */
  enablePropertyFilter?: boolean;
  /**
   * Close a connection when nothing was read and no write completed for this long, on the clock
   * (Java's serverChannelMaxIdleTimeSeconds), in milliseconds; 0 = never.
   * @default 120000
   */
  idleTimeoutMs?: number;
  /**
   * Bytes held for all connections together, input and output (RemotingServer).
   * @default 268435456 (256 MiB)
   */
  maxBufferedBytes?: number;
  /**
   * Output bytes held for one connection that does not read (RemotingServer): at this bound the
   * connection stops reading and its requests wait until half of it has drained.
   * @default 16777216 (16 MiB)
   */
  maxOutputBytesPerConnection?: number;
  /**
   * Smallest invisibleTime a POP_MESSAGE may ask for, in ms (not checked by Apache's broker; the
   * Java client pops with 5–300 s).
   * @default 1000
   */
  minPopInvisibleTimeMs?: number;
  /**
   * Largest invisibleTime a POP_MESSAGE or CHANGE_INVISIBLETIME may ask for, in ms (Apache's
   * proxy's maxInvisibleTimeMills).
   * @default 43200000 (12 h)
   */
  maxPopInvisibleTimeMs?: number;
  /**
   * Push a reply (SEND_REPLY_MESSAGE) only to the client whose request with that CORRELATION_ID
   * this process's brokers stored, within the request's TTL, once. Not in Apache, which pushes any
   * reply to whatever client REPLY_TO_CLIENT names; turn it off for a cluster whose brokers run in
   * separate processes (a reply may reach another broker than its request).
   * @default true
   */
  checkReplyRequests?: boolean;
  /**
   * Requests remembered for checkReplyRequests; past it the oldest is forgotten (its reply is refused).
   * @default 65536
   */
  maxPendingReplyRequests?: number;
  /**
   * Also store replies (SEND_REPLY_MESSAGE) in `<cluster>_REPLY_TOPIC` after pushing them, as Apache's.
   * @default true
   */
  storeReplyMessageEnable?: boolean;
  /**
   * Create the message trace topic at start (Java's traceTopicEnable).
   * @default false
   */
  traceTopicEnable?: boolean;
  /**
   * Name of the message trace topic (Java's msgTraceTopicName).
   * @default "RMQ_SYS_TRACE_TOPIC"
   */
  msgTraceTopicName?: string;
  /**
   * Serve 5.x timer messages (Java's MessageStoreConfig timerWheelEnable; timer/timer-message-store.ts).
   * @default true
   */
  timerWheelEnable?: boolean;
  /**
   * Precision of the timer wheel, in milliseconds, 1..60000 (Java's timerPrecisionMs).
   * @default 1
   */
  timerPrecisionMs?: number;
  /**
   * Longest delay a timer message may ask for, in seconds (Java's timerMaxDelaySec).
   * @default 259200 (3 days)
   */
  timerMaxDelaySec?: number;
  /**
   * Most pending timer messages held in memory (16 bytes each); the rest wait in the timer queue
   * and are read back as the held ones are delivered (timer/README.md). Not a Java setting.
   * @default 100000
   */
  timerMaxInMemory?: number;
  /**
   * Most timer messages delivered in one turn of the event loop, so a burst of due timers does not
   * hold up other clients.
   * @default 64
   */
  timerDeliverPerTick?: number;
}

/** Java's NettyServerConfig.serverChannelMaxIdleTimeSeconds (120 s). */
export const DEFAULT_IDLE_TIMEOUT_MS = 120_000;

export interface BrokerOptions extends BrokerTuning {
  brokerName: string;
  clusterName?: string;
  host: string;
  port: number;
  storeDir: string;
  namesrv: NameServer;
  clock: Clock;
  /** The table of waiting requests shared by the brokers of one startBroker (else one of its own). */
  replyRequests?: ReplyRequestTable | null;
  /** Asked before every request's processor (lib/broker/acl); none = every request is served, as before. */
  permissionChecker?: PermissionChecker | undefined;
}

/**
 * One broker: its own listening socket and store, registered with the in-process name server.
 * It wires the store and the managers (topics, offsets, consumers, long-poll hold, locks) to the
 * request processors (processor/, named after Apache RocketMQ's SendMessageProcessor,
 * PullMessageProcessor, ConsumerManageProcessor, ClientManageProcessor and AdminBrokerProcessor;
 * see docs/protocol-facts.md#broker), each registered from the operation table, and owns start and close.
 */
export class Broker implements BrokerContext {
  readonly brokerName: string;
  readonly clusterName: string;
  readonly server: RemotingServer;
  address = '';
  readonly clock: Clock;
  readonly topics: TopicConfigManager;
  readonly offsets: ConsumerOffsetManager;
  readonly consumers: ConsumerManager;
  readonly pullHold: PullRequestHoldService;
  readonly locks: RebalanceLockManager;
  readonly delayLevels: number[];
  readonly autoCreateTopic: boolean;
  readonly limits: BrokerLimits;
  /** Half messages, END_TRANSACTION and the check loop (transaction/). */
  readonly tx: Transactions;
  readonly timerSettings: TimerSettings;
  private timerStore: TimerMessageStore | null = null;
  readonly enablePropertyFilter: boolean;
  readonly replyRequests: ReplyRequestTable | null;
  /** The key index, subscription groups and name server of the admin requests (admin-tools-processor.ts). */
  readonly adminTools: AdminToolsHost;
  private readonly options: BrokerOptions;
  private store!: MessageStore;
  private schedule: ScheduleMessageService | null = null;
  private readonly stopTasks: Array<() => void> = [];
  private closed = false;
  /** POP, ACK, CHANGE_INVISIBLETIME and revive (lib/broker/pop). */
  readonly pop: PopService;

  constructor(options: BrokerOptions) {
    this.options = options;
    this.brokerName = options.brokerName;
    this.clusterName = options.clusterName ?? 'DefaultCluster';
    this.clock = options.clock;
    this.delayLevels = parseDelayLevels(options.messageDelayLevel);
    this.autoCreateTopic = options.autoCreateTopic !== false;
    this.limits = resolveBrokerLimits(options);
    this.timerSettings = resolveTimerSettings(options);
    this.enablePropertyFilter = resolveEnablePropertyFilter(options.enablePropertyFilter);
    this.replyRequests =
      options.replyRequests !== undefined ? options.replyRequests : createReplyRequestTable(options, this.clock);
    this.server = new RemotingServer({
      serializeType: options.serializeType ?? 'JSON',
      clock: this.clock,
      idleTimeoutMs: options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS,
      maxBufferedBytes: options.maxBufferedBytes,
      maxOutputBytesPerConnection: options.maxOutputBytesPerConnection,
      requestGate:
        options.permissionChecker &&
        aclRequestGate(options.permissionChecker, { server: options.brokerName, warn: options.warn ?? stderrWarn }),
    });
    const warn = options.warn ?? stderrWarn;
    this.topics = new TopicConfigManager(options.storeDir, warn);
    this.offsets = new ConsumerOffsetManager(options.storeDir, warn);
    this.pullHold = new PullRequestHoldService(this.clock);
    this.locks = new RebalanceLockManager(options.lockMaxLiveTimeMs ?? 60_000);
    const clientManage = new ClientManageProcessor(this);
    this.consumers = new ConsumerManager(
      (group, channels) => clientManage.notifyConsumerIdsChanged(group, channels),
      options.channelExpiredTimeoutMs ?? 120_000,
    );
    clientManage.register(this.server);
    new SendMessageProcessor(this).register(this.server);
    new PullMessageProcessor(this).register(this.server);
    new ConsumerManageProcessor(this).register(this.server);
    new AdminBrokerProcessor(this).register(this.server);
    const onRecall = (deleteKey: string): void => this.timerStore?.recall(deleteKey);
    new RecallMessageProcessor(this, options.recallMessageEnable === true, onRecall).register(this.server);
    this.tx = createTransactions(this, options);
    this.tx.register(this.server);
    new ReplyMessageProcessor(this, resolveStoreReplyMessageEnable(options.storeReplyMessageEnable)).register(
      this.server,
    );
    this.pop = new PopService(this, options.storeDir, {
      minPopInvisibleTimeMs: options.minPopInvisibleTimeMs,
      maxPopInvisibleTimeMs: options.maxPopInvisibleTimeMs,
    });
    this.pop.register(this.server);
    this.adminTools = {
      index: new IndexService(options.storeDir, warn),
      groups: new SubscriptionGroupManager(options.storeDir, this.clock, warn),
      namesrv: options.namesrv,
    };
    new AdminToolsProcessor(this, this.adminTools).register(this.server);
    new BrokerStatsProcessor(this).register(this.server);
    new AdminOpsProcessor(this, () =>
      brokerConfigEntries(options, this.address, options.namesrv.address, this.timerSettings),
    ).register(this.server);
    this.server.on('disconnect', (conn: RemotingConnection) => {
      this.pullHold.dropConnection(conn);
      this.consumers.removeConnection(conn);
    });
  }

  /** Listen, open the store (its STOREHOST needs the port), register with the name server. */
  async start(): Promise<string> {
    const a = await this.server.listen(this.options.port, this.options.host);
    const host = advertisedHost(this.options.host);
    this.address = socketAddressText(host, a.port);
    this.store = new MessageStore({
      dir: this.options.storeDir,
      storeHost: this.address,
      clock: this.clock,
      segmentSize: this.options.segmentSize,
      cachedSegments: this.options.cachedSegments,
      maxMessageSize: this.options.maxMessageSize,
      retention: this.options,
      warn: this.options.warn,
      tagsCode: brokerTagsCode(this.delayLevels),
    });
    this.store.open();
    this.store.onStored = (inner, phys, size, ts) =>
      this.adminTools.index.add(inner.topic, indexedProperties(inner), phys, size, ts);
    this.adminTools.index.open(this.store);
    this.store.onTrimmed = (min) => this.adminTools.index.deleteBelow(min);
    // Each throws ConfigFileError when its file and the .bak are unreadable: the broker does not
    // start rather than overwrite them with empty tables at its next flush.
    this.topics.load();
    this.offsets.load();
    this.adminTools.groups.load();
    this.offsets.reportPastMax((topic, queueId) => this.store.getMaxOffset(topic, queueId));
    this.schedule = new ScheduleMessageService(
      this.store,
      this.clock,
      this.delayLevels,
      this.options.storeDir,
      this.options.warn,
    );
    this.schedule.load();
    this.timerStore = new TimerMessageStore(
      this.store,
      this.clock,
      this.options.storeDir,
      this.options.warn,
      this.timerSettings,
    );
    this.timerStore.load();
    const queues = this.options.queues ?? 8;
    if (this.autoCreateTopic) {
      this.topics.ensure(
        AUTO_CREATE_TOPIC_KEY_TOPIC,
        queues,
        PermName.PERM_INHERIT | PermName.PERM_READ | PermName.PERM_WRITE,
      );
    }
    this.topics.ensure(SCHEDULE_TOPIC, this.delayLevels.length, PermName.PERM_READ | PermName.PERM_WRITE);
    // request–reply: the cluster's reply topic, one queue, as Apache's TopicConfigManager makes it
    this.topics.ensure(replyTopicOf(this.clusterName), 1);
    ensureTraceTopic(this.topics, this.options);
    // Java's TopicConfigManager adds the timer topic (1 queue) when the wheel is on
    if (this.timerSettings.timerWheelEnable)
      this.topics.ensure(TIMER_TOPIC, 1, PermName.PERM_READ | PermName.PERM_WRITE);
    // topics found in the store but missing from topics.json (e.g. the file was lost) come back
    for (const [topic, n] of this.store.queueIdsByTopic()) if (!this.topics.get(topic)) this.topics.ensure(topic, n);
    this.topics.onChange = (config) => this.options.namesrv.registerTopic(this.brokerName, config);
    this.options.namesrv.registerBroker(
      {
        clusterName: this.clusterName,
        brokerName: this.brokerName,
        brokerAddr: this.address,
        createTopic: (config) => this.topics.put({ ...config }),
      },
      this.topics.all().filter((t) => t.topicName !== SCHEDULE_TOPIC),
    );
    this.schedule.start();
    this.tx.start();
    this.timerStore.start();
    this.pop.start();
    this.store.onArrival((topic, queueId, maxOffset, codes) => {
      if (topic === SCHEDULE_TOPIC) this.schedule?.onArrival(queueId + 1);
      else if (topic === TIMER_TOPIC) this.timerStore?.onArrival();
      else this.pullHold.notifyMessageArriving(topic, queueId, maxOffset, codes);
    });
    const failed = (err: unknown): void => {
      log('periodic task failed: %O', err);
      (this.options.warn ?? stderrWarn)(
        `a periodic task of ${this.brokerName} failed: ${(err as Error)?.message ?? String(err)}`,
      );
    };
    this.stopTasks.push(
      startBrokerTasks(
        this.clock,
        this.consumers,
        this.offsets,
        this.options.flushConsumerOffsetIntervalMs ?? 5000,
        failed,
      ),
    );
    log('broker %s listening on %s, store %s', this.brokerName, this.address, this.options.storeDir);
    return this.address;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const stop of this.stopTasks) stop();
    this.tx.close();
    this.options.namesrv.unregisterBroker(this.brokerName);
    this.pullHold.clear();
    await this.server.close();
    this.schedule?.close();
    this.timerStore?.close();
    if (this.store) {
      this.pop.close();
      this.offsets.persist(true);
      this.adminTools.index.close();
      this.store.close();
    }
  }

  /** The timer-message store (timer/), started by start(); its stats() count what it holds. */
  get timers(): TimerMessageStore | null {
    return this.timerStore;
  }

  /** The delay-level service (schedule-message-service.ts), started by start(). */
  get delayService(): ScheduleMessageService | null {
    return this.schedule;
  }

  get transactions(): Transactions['service'] {
    return this.tx.service;
  }

  /** The store, opened by start(). */
  get messageStore(): MessageStore {
    return this.store;
  }
}
