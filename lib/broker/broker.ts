import createDebug from 'debug';
import {
  AUTO_CREATE_TOPIC_KEY_TOPIC,
  DLQ_GROUP_TOPIC_PREFIX,
  MQVersion,
  MessageSysFlag,
  PermName,
  ProtocolError,
  PullSysFlag,
  RETRY_GROUP_TOPIC_PREFIX,
  SCHEDULE_TOPIC,
  RequestCode,
  ResponseCode,
  createRequest,
  createResponse,
  decodeBatch,
  decodeMessage,
  decodeOffsetMsgId,
  decodeProperties,
  type RemotingCommand,
  type SerializeTypeName,
} from '../../protocol/index.js';
import { setProperty } from '../../protocol/properties.js';
import { RemotingServer, type RemotingConnection } from '../remoting/index.js';
import { advertisedHost } from './advertised-host.js';
import type { Clock, ClockTimer } from '../clock.js';
import { ConsumerManager, buildSubscription, tagMatcher, type ClientChannelInfo, type SubscriptionData } from './consumer-manager.js';
import { ConsumerOffsetManager, quoteNumericKeys } from './consumer-offset-manager.js';
import { type MessageInner, socketAddressText, tagsCodeOf } from './message-record.js';
import { MessageStore, type GetMessageStatus, type PutMessageResult } from './message-store.js';
import { FAQ_APPLY_TOPIC, type NameServer } from './name-server.js';
import { PullRequestHoldService } from './pull-request-hold.js';
import { ScheduleMessageService, parseDelayLevels } from './schedule-message-service.js';
import {
  NOT_ALLOWED_SEND_TOPICS,
  TopicConfigManager,
  newTopicConfig,
  validateTopicName,
  type TopicConfig,
} from './topic-config.js';

const log = createDebug('rocketwire:broker');

/** The version this broker claims in heartbeat answers (>= V4_1_0_SNAPSHOT keeps SQL92 enabled client-side). */
export const BROKER_VERSION = MQVersion.V4_9_8;

/** A broker's tunable settings; startBroker takes the same ones and passes them on. */
export interface BrokerTuning {
  /** Queues of TBW102, i.e. the most an auto-created topic gets (defaultTopicQueueNums). Default 8. */
  queues?: number;
  /** Create unknown topics on first send (TBW102). Default true. */
  autoCreateTopic?: boolean;
  /** Serialize type of requests the broker initiates (NOTIFY_CONSUMER_IDS_CHANGED). Default JSON. */
  serializeType?: SerializeTypeName;
  /** Commit-log segment size. Default 64 MiB. */
  segmentSize?: number;
  /** Newest commit-log segments kept in memory. Default 2. */
  cachedSegments?: number;
  maxMessageSize?: number;
  /**
   * Java's messageDelayLevel string. Default "1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m
   * 1h 2h"; e.g. "100ms 200ms" for fast tests.
   */
  messageDelayLevel?: string;
  channelExpiredTimeoutMs?: number;
  flushConsumerOffsetIntervalMs?: number;
  lockMaxLiveTimeMs?: number;
}

export interface BrokerOptions extends BrokerTuning {
  brokerName: string;
  clusterName?: string;
  host: string;
  port: number;
  storeDir: string;
  namesrv: NameServer;
  clock: Clock;
}

/** Decoded request header fields with Java's parse rules; missing required fields throw like Java's NPE path. */
class Fields {
  constructor(private readonly ext: Record<string, string>) {}
  str(key: string): string {
    const v = this.ext[key];
    if (v === undefined || v === null) throw new MissingFieldError(key);
    return v;
  }
  optStr(key: string): string | undefined {
    return this.ext[key] ?? undefined;
  }
  int(key: string): number {
    const n = this.optInt(key);
    if (n === undefined) throw new MissingFieldError(key);
    return n;
  }
  optInt(key: string): number | undefined {
    const v = this.ext[key];
    if (v === undefined || v === null) return undefined;
    if (!/^[+-]?\d+$/.test(v.trim())) throw new MissingFieldError(key, `"${v}" is not a number`);
    const n = Number(v);
    if (!Number.isSafeInteger(n)) throw new MissingFieldError(key, `"${v}" is out of range`);
    return n;
  }
  bool(key: string): boolean {
    return (this.ext[key] ?? '').toLowerCase() === 'true';
  }
}

class MissingFieldError extends Error {
  constructor(field: string, why = 'is null') {
    super(`the custom field <${field}> ${why}`);
    this.name = 'MissingFieldError';
  }
}

function fields(req: RemotingCommand): Fields {
  return new Fields(req.extFields ?? {});
}

function ok(req: RemotingCommand, init: Parameters<typeof createResponse>[2] = {}): RemotingCommand {
  return createResponse(req, ResponseCode.SUCCESS, init);
}
function fail(req: RemotingCommand, code: number, remark: string): RemotingCommand {
  return createResponse(req, code, { remark });
}

/** Commit-log offset inside an offset msgId, or -1 when `id` is not one (no record is found then). */
function commitLogOffsetOfMsgId(id: string): number {
  try {
    return decodeOffsetMsgId(id).commitLogOffset;
  } catch {
    return -1;
  }
}

function parseJsonBody(req: RemotingCommand): unknown {
  if (!req.body || req.body.length === 0) return {};
  const text = req.body.toString('utf8');
  try {
    return JSON.parse(text);
  } catch {
    return JSON.parse(quoteNumericKeys(text));
  }
}

interface MessageQueueJson {
  topic: string;
  brokerName: string;
  queueId: number;
}
function mqKey(mq: MessageQueueJson): string {
  return `${mq.topic}@${mq.brokerName}@${mq.queueId}`;
}
function mqJson(mq: MessageQueueJson): string {
  return `{"brokerName":${JSON.stringify(mq.brokerName)},"queueId":${mq.queueId},"topic":${JSON.stringify(mq.topic)}}`;
}

const PULL_STATUS_CODE: Record<GetMessageStatus, number> = {
  FOUND: ResponseCode.SUCCESS,
  MESSAGE_WAS_REMOVING: ResponseCode.PULL_RETRY_IMMEDIATELY,
  NO_MATCHED_MESSAGE: ResponseCode.PULL_RETRY_IMMEDIATELY,
  NO_MATCHED_LOGIC_QUEUE: ResponseCode.PULL_NOT_FOUND,
  NO_MESSAGE_IN_QUEUE: ResponseCode.PULL_NOT_FOUND,
  OFFSET_FOUND_NULL: ResponseCode.PULL_NOT_FOUND,
  OFFSET_OVERFLOW_BADLY: ResponseCode.PULL_OFFSET_MOVED,
  OFFSET_OVERFLOW_ONE: ResponseCode.PULL_NOT_FOUND,
  OFFSET_TOO_SMALL: ResponseCode.PULL_OFFSET_MOVED,
};

/**
 * One broker: its own listening socket and store, registered with the in-process name server.
 * Request processing follows Apache RocketMQ's SendMessageProcessor, PullMessageProcessor,
 * ConsumerManageProcessor, ClientManageProcessor and AdminBrokerProcessor (see protocol-facts §10).
 */
export class Broker {
  readonly brokerName: string;
  readonly clusterName: string;
  readonly server: RemotingServer;
  address = '';
  private readonly options: BrokerOptions;
  private readonly clock: Clock;
  private store!: MessageStore;
  readonly topics: TopicConfigManager;
  readonly offsets: ConsumerOffsetManager;
  readonly consumers: ConsumerManager;
  readonly pullHold: PullRequestHoldService;
  private schedule: ScheduleMessageService | null = null;
  private readonly delayLevels: number[];
  private readonly locks = new Map<string, Map<string, { clientId: string; lastUpdate: number }>>();
  private timers: ClockTimer[] = [];
  private closed = false;

  constructor(options: BrokerOptions) {
    this.options = options;
    this.brokerName = options.brokerName;
    this.clusterName = options.clusterName ?? 'DefaultCluster';
    this.clock = options.clock;
    this.delayLevels = parseDelayLevels(options.messageDelayLevel);
    this.server = new RemotingServer({ serializeType: options.serializeType ?? 'JSON' });
    this.topics = new TopicConfigManager(options.storeDir);
    this.offsets = new ConsumerOffsetManager(options.storeDir);
    this.pullHold = new PullRequestHoldService(this.clock);
    this.consumers = new ConsumerManager((group, channels) => this.notifyConsumerIdsChanged(group, channels), options.channelExpiredTimeoutMs ?? 120_000);
    this.registerProcessors();
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
      tagsCode: (topic, props, storeTimestamp) => {
        if (topic === SCHEDULE_TOPIC) {
          const level = Math.min(Number(props.DELAY ?? '1') || 1, this.delayLevels.length);
          return storeTimestamp + (this.delayLevels[Math.max(1, level) - 1] ?? 1000);
        }
        return tagsCodeOf(props);
      },
    });
    this.store.open();
    this.topics.load();
    this.offsets.load();
    const queues = this.options.queues ?? 8;
    if (this.options.autoCreateTopic !== false) {
      this.topics.ensure(AUTO_CREATE_TOPIC_KEY_TOPIC, queues, PermName.PERM_INHERIT | PermName.PERM_READ | PermName.PERM_WRITE);
    }
    this.topics.ensure(SCHEDULE_TOPIC, this.delayLevels.length, PermName.PERM_READ | PermName.PERM_WRITE);
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
    this.schedule = new ScheduleMessageService(this.store, this.clock, this.delayLevels, this.options.storeDir);
    this.schedule.start();
    this.store.onArrival((topic, queueId, maxOffset, codes) => {
      if (topic === SCHEDULE_TOPIC) this.schedule?.onArrival(queueId + 1);
      else this.pullHold.notifyMessageArriving(topic, queueId, maxOffset, codes);
    });
    this.every(10_000, () => this.consumers.scanExpired(this.clock.now()));
    this.every(this.options.flushConsumerOffsetIntervalMs ?? 5000, () => this.offsets.persist());
    log('broker %s listening on %s, store %s', this.brokerName, this.address, this.options.storeDir);
    return this.address;
  }

  private every(ms: number, fn: () => void): void {
    const tick = (): void => {
      if (this.closed) return;
      try {
        fn();
      } catch (err) {
        log('periodic task failed: %O', err);
      }
      this.timers.push(this.clock.setTimeout(tick, ms));
      if (this.timers.length > 64) this.timers = this.timers.slice(-16);
    };
    this.timers.push(this.clock.setTimeout(tick, ms));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const t of this.timers) this.clock.clearTimeout(t);
    this.options.namesrv.unregisterBroker(this.brokerName);
    this.pullHold.clear();
    await this.server.close();
    this.schedule?.close();
    if (this.store) {
      this.offsets.persist(true);
      this.store.close();
    }
  }

  /** The store, for tests and tools in this folder. */
  get messageStore(): MessageStore {
    return this.store;
  }

  private registerProcessors(): void {
    const s = this.server;
    const wrap =
      (fn: (req: RemotingCommand, conn: RemotingConnection) => RemotingCommand | null | Promise<RemotingCommand | null>) =>
      (req: RemotingCommand, conn: RemotingConnection): RemotingCommand | null | Promise<RemotingCommand | null> => {
        try {
          return fn(req, conn);
        } catch (err) {
          if (err instanceof MissingFieldError) return fail(req, ResponseCode.SYSTEM_ERROR, err.message);
          throw err;
        }
      };
    // Every send answer carries MSG_REGION and TRACE_ON: the Java client reads them without a null check.
    const traced =
      (kind: 'V1' | 'V2') =>
      (req: RemotingCommand, conn: RemotingConnection): RemotingCommand => {
        const res = wrap((r, c) => this.send(r, c, kind))(req, conn) as RemotingCommand;
        res.extFields = { ...(res.extFields ?? {}), MSG_REGION: 'DefaultRegion', TRACE_ON: 'true' };
        return res;
      };
    s.registerProcessor(RequestCode.SEND_MESSAGE, traced('V1'));
    s.registerProcessor(RequestCode.SEND_MESSAGE_V2, traced('V2'));
    s.registerProcessor(RequestCode.SEND_BATCH_MESSAGE, traced('V2'));
    s.registerProcessor(RequestCode.PULL_MESSAGE, wrap((r, c) => this.pull(r, c)));
    s.registerProcessor(RequestCode.QUERY_CONSUMER_OFFSET, wrap((r) => this.queryConsumerOffset(r)));
    s.registerProcessor(RequestCode.UPDATE_CONSUMER_OFFSET, wrap((r) => this.updateConsumerOffset(r)));
    s.registerProcessor(RequestCode.HEART_BEAT, wrap((r, c) => this.heartbeat(r, c)));
    s.registerProcessor(RequestCode.UNREGISTER_CLIENT, wrap((r, c) => this.unregisterClient(r, c)));
    s.registerProcessor(RequestCode.GET_CONSUMER_LIST_BY_GROUP, wrap((r) => this.getConsumerList(r)));
    s.registerProcessor(RequestCode.CONSUMER_SEND_MSG_BACK, wrap((r) => this.sendMessageBack(r)));
    s.registerProcessor(RequestCode.GET_MAX_OFFSET, wrap((r) => this.offsetQuery(r, 'max')));
    s.registerProcessor(RequestCode.GET_MIN_OFFSET, wrap((r) => this.offsetQuery(r, 'min')));
    s.registerProcessor(RequestCode.SEARCH_OFFSET_BY_TIMESTAMP, wrap((r) => this.offsetQuery(r, 'search')));
    s.registerProcessor(RequestCode.GET_EARLIEST_MSG_STORETIME, wrap((r) => this.earliestStoreTime(r)));
    s.registerProcessor(RequestCode.VIEW_MESSAGE_BY_ID, wrap((r) => this.viewMessageById(r)));
    s.registerProcessor(RequestCode.LOCK_BATCH_MQ, wrap((r) => this.lockBatch(r)));
    s.registerProcessor(RequestCode.UNLOCK_BATCH_MQ, wrap((r) => this.unlockBatch(r)));
    s.registerProcessor(RequestCode.CHECK_CLIENT_CONFIG, wrap((r) => this.checkClientConfig(r)));
    s.registerProcessor(RequestCode.UPDATE_AND_CREATE_TOPIC, wrap((r) => this.updateAndCreateTopic(r)));
    s.registerProcessor(RequestCode.GET_CONSUME_STATS, wrap((r) => this.getConsumeStats(r)));
    s.registerProcessor(RequestCode.GET_TOPIC_CONFIG, wrap((r) => this.getTopicConfig(r)));
    s.registerProcessor(RequestCode.GET_CONSUMER_RUNNING_INFO, wrap((r) => this.callConsumer(r)));
    // 5.x lite pull consumers use their own code for the same request
    s.registerProcessor(RequestCode.LITE_PULL_MESSAGE, wrap((r, c) => this.pull(r, c)));
  }

  // ---------------------------------------------------------------- send

  private topicNotExist(req: RemotingCommand, topic: string): RemotingCommand {
    return fail(req, ResponseCode.TOPIC_NOT_EXIST, `topic[${topic}] not exist, apply first please!${FAQ_APPLY_TOPIC}`);
  }

  /** Topic config for a send, auto-created from TBW102 (min(defaultTopicQueueNums, template queues)) when allowed. */
  private topicForSend(topic: string, defaultTopic: string, defaultQueueNums: number): TopicConfig | null {
    const existing = this.topics.get(topic);
    if (existing) return existing;
    if (topic.startsWith(RETRY_GROUP_TOPIC_PREFIX) || topic.startsWith(DLQ_GROUP_TOPIC_PREFIX)) return this.topics.ensure(topic, 1);
    if (this.options.autoCreateTopic === false) return null;
    const template = this.topics.get(defaultTopic) ?? this.topics.get(AUTO_CREATE_TOPIC_KEY_TOPIC);
    if (!template || (template.perm & PermName.PERM_INHERIT) === 0) return null;
    const n = Math.max(1, Math.min(defaultQueueNums, template.writeQueueNums));
    return this.topics.put(newTopicConfig(topic, n, template.perm & ~PermName.PERM_INHERIT));
  }

  private send(req: RemotingCommand, conn: RemotingConnection, kind: 'V1' | 'V2'): RemotingCommand {
    const f = fields(req);
    const k = kind === 'V2'
      ? { group: 'a', topic: 'b', defTopic: 'c', defNums: 'd', queueId: 'e', sysFlag: 'f', born: 'g', flag: 'h', props: 'i', recon: 'j', maxRecon: 'l', batch: 'm' }
      : { group: 'producerGroup', topic: 'topic', defTopic: 'defaultTopic', defNums: 'defaultTopicQueueNums', queueId: 'queueId', sysFlag: 'sysFlag', born: 'bornTimestamp', flag: 'flag', props: 'properties', recon: 'reconsumeTimes', maxRecon: 'maxReconsumeTimes', batch: 'batch' };
    f.str(k.group); // required, as in Java (the producer group is not used for storing)
    let topic = f.str(k.topic);
    const isBatch = req.code === RequestCode.SEND_BATCH_MESSAGE || f.bool(k.batch);
    let queueId = f.int(k.queueId);
    const sysFlag = f.int(k.sysFlag);
    const bornTimestamp = f.int(k.born);
    const flag = f.optInt(k.flag) ?? 0;
    const reconsumeTimes = f.optInt(k.recon) ?? 0;
    const properties = decodeProperties(f.optStr(k.props) ?? '');

    const bad = validateTopicName(topic);
    if (bad) return fail(req, ResponseCode.SYSTEM_ERROR, bad);
    if (NOT_ALLOWED_SEND_TOPICS.has(topic)) return fail(req, ResponseCode.NO_PERMISSION, `Sending message to topic[${topic}] is forbidden.`);
    if (!isBatch && ((sysFlag & MessageSysFlag.TRANSACTION_TYPE_MASK) === MessageSysFlag.TRANSACTION_PREPARED_TYPE || properties.TRAN_MSG === 'true')) {
      return fail(req, ResponseCode.NO_PERMISSION, `the broker[${this.brokerName}] sending transaction message is forbidden`);
    }
    const config = this.topicForSend(topic, f.optStr(k.defTopic) ?? AUTO_CREATE_TOPIC_KEY_TOPIC, f.optInt(k.defNums) ?? 4);
    if (!config) return this.topicNotExist(req, topic);
    if ((config.perm & PermName.PERM_WRITE) === 0) return fail(req, ResponseCode.NO_PERMISSION, `the topic[${topic}] sending message is forbidden`);
    const maxQueue = Math.max(config.readQueueNums, config.writeQueueNums);
    if (queueId < 0) queueId = Math.floor(Math.random() * config.writeQueueNums);
    if (queueId >= maxQueue) {
      return fail(req, ResponseCode.SYSTEM_ERROR, `request queueId[${queueId}] is illegal, ${JSON.stringify(config)} Producer: ${conn.remoteAddress}`);
    }
    const bornHost = socketAddressText(conn.remoteAddress);
    const body = req.body ?? Buffer.alloc(0);
    let inners: MessageInner[];
    const responseQueueId = queueId;

    if (isBatch) {
      if (topic.startsWith(RETRY_GROUP_TOPIC_PREFIX)) return fail(req, ResponseCode.MESSAGE_ILLEGAL, 'batch request does not support retry group ' + topic);
      if (Buffer.byteLength(topic) > 127) return fail(req, ResponseCode.MESSAGE_ILLEGAL, `message topic length too long ${topic.length}`);
      let items;
      try {
        items = decodeBatch(body, { ignoreTotalSize: true });
      } catch (err) {
        if (err instanceof ProtocolError) return fail(req, ResponseCode.MESSAGE_ILLEGAL, `malformed batch body: ${err.message}`);
        throw err;
      }
      if (items.length === 0) return fail(req, ResponseCode.MESSAGE_ILLEGAL, 'empty batch');
      inners = items.map((it) => {
        const props = it.properties;
        for (const pk in properties) setProperty(props, pk, properties[pk]!);
        props.CLUSTER = this.clusterName;
        return {
          topic, queueId, flag: it.flag, sysFlag, bornTimestamp, bornHost, reconsumeTimes: 0, preparedTransactionOffset: 0,
          body: it.body, properties: props,
        };
      });
    } else {
      if (topic.startsWith(RETRY_GROUP_TOPIC_PREFIX)) {
        // client-side fallback resend of a failed message: past the limit it goes to the DLQ
        const maxRecon = req.version >= MQVersion.V3_4_9 ? (f.optInt(k.maxRecon) ?? 16) : 16;
        if (reconsumeTimes >= maxRecon) {
          topic = DLQ_GROUP_TOPIC_PREFIX + topic.slice(RETRY_GROUP_TOPIC_PREFIX.length);
          this.topics.ensure(topic, 1);
          queueId = 0;
          delete properties.DELAY;
        }
      }
      properties.CLUSTER = this.clusterName;
      inners = [{ topic, queueId, flag, sysFlag, bornTimestamp, bornHost, reconsumeTimes, preparedTransactionOffset: 0, body, properties }];
    }
    const result = this.putWithDelay(inners);
    return this.sendResponse(req, result, responseQueueId);
  }

  /**
   * Store messages; a single message with DELAY > 0 (and not a prepared/rollback transaction) is
   * parked in SCHEDULE_TOPIC_XXXX queue level-1 with REAL_TOPIC / REAL_QID, levels clamped to the max.
   */
  private putWithDelay(inners: MessageInner[]): PutMessageResult {
    if (inners.length === 1) {
      const m = inners[0]!;
      const level = Number(m.properties.DELAY ?? '0');
      const tx = m.sysFlag & MessageSysFlag.TRANSACTION_TYPE_MASK;
      if (Number.isInteger(level) && level > 0 && tx !== MessageSysFlag.TRANSACTION_PREPARED_TYPE && tx !== MessageSysFlag.TRANSACTION_ROLLBACK_TYPE) {
        const l = Math.min(level, this.delayLevels.length);
        if (l !== level) m.properties.DELAY = String(l);
        m.properties.REAL_TOPIC = m.topic;
        m.properties.REAL_QID = String(m.queueId);
        m.topic = SCHEDULE_TOPIC;
        m.queueId = l - 1;
      }
    }
    return this.store.putMessages(inners);
  }

  private sendResponse(req: RemotingCommand, result: PutMessageResult, queueId: number): RemotingCommand {
    switch (result.status) {
      case 'PUT_OK': {
        const w = result.written;
        return ok(req, {
          extFields: {
            msgId: w.map((x) => x.msgId).join(','),
            queueId: String(queueId),
            queueOffset: String(w[0]!.queueOffset),
          },
        });
      }
      case 'MESSAGE_ILLEGAL':
      case 'PROPERTIES_SIZE_EXCEEDED':
        return fail(req, ResponseCode.MESSAGE_ILLEGAL, result.remark ?? result.status);
      default:
        return fail(req, ResponseCode.SERVICE_NOT_AVAILABLE, result.remark ?? 'service not available now');
    }
  }

  // ---------------------------------------------------------------- pull

  private pull(req: RemotingCommand, conn: RemotingConnection): RemotingCommand | Promise<RemotingCommand | null> | null {
    return this.processPull(req, conn, true);
  }

  private processPull(req: RemotingCommand, conn: RemotingConnection, allowSuspend: boolean): RemotingCommand | Promise<RemotingCommand | null> | null {
    const f = fields(req);
    const group = f.str('consumerGroup');
    const topic = f.str('topic');
    const queueId = f.int('queueId');
    const queueOffset = f.int('queueOffset');
    const maxMsgNums = f.int('maxMsgNums');
    const sysFlag = f.int('sysFlag');
    const commitOffset = f.optInt('commitOffset') ?? -1;
    const suspendMs = f.optInt('suspendTimeoutMillis') ?? 15000;
    const subVersion = f.optInt('subVersion') ?? 0;

    const config = this.topics.get(topic);
    if (!config) return this.topicNotExist(req, topic);
    if ((config.perm & PermName.PERM_READ) === 0) return fail(req, ResponseCode.NO_PERMISSION, `the topic[${topic}] pulling message is forbidden`);
    if (queueId < 0 || queueId >= config.readQueueNums) {
      return fail(
        req,
        ResponseCode.SYSTEM_ERROR,
        `queueId[${queueId}] is illegal, topic:[${topic}] topicConfig.readQueueNums:[${config.readQueueNums}] consumer:[${conn.remoteAddress}]`,
      );
    }
    let sub: SubscriptionData | null;
    if (sysFlag & PullSysFlag.FLAG_SUBSCRIPTION) {
      const expressionType = f.optStr('expressionType') ?? 'TAG';
      sub = buildSubscription(topic, f.optStr('subscription') ?? '*', expressionType, subVersion);
    } else {
      const info = this.consumers.find(group);
      if (!info) return fail(req, ResponseCode.SUBSCRIPTION_NOT_EXIST, `the consumer's group info not exist${FAQ_APPLY_TOPIC}`);
      const registered = info.subscriptions.get(topic);
      if (!registered) return fail(req, ResponseCode.SUBSCRIPTION_NOT_EXIST, `the consumer's subscription not exist${FAQ_APPLY_TOPIC}`);
      if (registered.subVersion < subVersion) {
        return fail(req, ResponseCode.SUBSCRIPTION_NOT_LATEST, `the consumer's subscription not latest`);
      }
      sub = registered;
    }
    if (sub.expressionType !== 'TAG') {
      return fail(req, ResponseCode.SYSTEM_ERROR, 'The broker does not support consumer to filter message by SQL92');
    }
    const match = tagMatcher(sub);
    const r = this.store.getMessage(topic, queueId, queueOffset, maxMsgNums, match);
    let code = PULL_STATUS_CODE[r.status];
    if ((r.status === 'NO_MATCHED_LOGIC_QUEUE' || r.status === 'NO_MESSAGE_IN_QUEUE') && queueOffset !== 0) code = ResponseCode.PULL_OFFSET_MOVED;

    // the commit piggyback happens on the first processing only, also when the request is parked
    if (allowSuspend && sysFlag & PullSysFlag.FLAG_COMMIT_OFFSET) this.offsets.commit(group, topic, queueId, commitOffset);

    if (code === ResponseCode.PULL_NOT_FOUND && allowSuspend && sysFlag & PullSysFlag.FLAG_SUSPEND) {
      return this.pullHold.hold(topic, queueId, conn, queueOffset, Math.max(0, suspendMs), match, () => {
        const again = this.processPull(req, conn, false);
        return again as RemotingCommand | null;
      });
    }
    const response = createResponse(req, code, {
      remark: r.status,
      extFields: {
        suggestWhichBrokerId: '0',
        nextBeginOffset: String(r.nextBeginOffset),
        minOffset: String(r.minOffset),
        maxOffset: String(r.maxOffset),
        topicSysFlag: '0',
        groupSysFlag: '0',
      },
      body: code === ResponseCode.SUCCESS ? (r.records.length === 1 ? r.records[0]! : Buffer.concat(r.records, r.bytes)) : null,
    });
    return response;
  }

  // ---------------------------------------------------------------- offsets

  private queryConsumerOffset(req: RemotingCommand): RemotingCommand {
    const f = fields(req);
    const group = f.str('consumerGroup');
    const topic = f.str('topic');
    const queueId = f.int('queueId');
    const stored = this.offsets.query(group, topic, queueId);
    if (stored !== undefined && stored >= 0) return ok(req, { extFields: { offset: String(stored) } });
    const zeroAllowed = (f.optStr('setZeroIfNotFound') ?? 'true').toLowerCase() !== 'false';
    // a young queue (first message still in memory) is read from its start: answer 0 (4.9/5.x)
    if (zeroAllowed && this.store.getMinOffset(topic, queueId) <= 0 && this.store.getMaxOffset(topic, queueId) > 0 && this.store.isInMemory(topic, queueId, 0)) {
      return ok(req, { extFields: { offset: '0' } });
    }
    return fail(req, ResponseCode.QUERY_NOT_FOUND, 'Not found, V3_0_6_SNAPSHOT maybe this group consumer boot first');
  }

  private updateConsumerOffset(req: RemotingCommand): RemotingCommand {
    const f = fields(req);
    this.offsets.commit(f.str('consumerGroup'), f.str('topic'), f.int('queueId'), f.int('commitOffset'));
    return ok(req);
  }

  private offsetQuery(req: RemotingCommand, what: 'max' | 'min' | 'search'): RemotingCommand {
    const f = fields(req);
    const topic = f.str('topic');
    const queueId = f.int('queueId');
    let offset: number;
    if (what === 'max') offset = this.store.getMaxOffset(topic, queueId);
    else if (what === 'min') offset = this.store.getMinOffset(topic, queueId);
    else {
      const b = f.optStr('boundaryType');
      const boundary = b === undefined ? undefined : b.toLowerCase() === 'upper' ? 'UPPER' : 'LOWER';
      offset = this.store.getOffsetByTime(topic, queueId, f.int('timestamp'), boundary);
    }
    return ok(req, { extFields: { offset: String(offset) } });
  }

  private earliestStoreTime(req: RemotingCommand): RemotingCommand {
    const f = fields(req);
    const t = this.store.getEarliestMessageTime(f.str('topic'), f.int('queueId'));
    return ok(req, { extFields: { timestamp: String(t) } });
  }

  private viewMessageById(req: RemotingCommand): RemotingCommand {
    const f = fields(req);
    const raw = f.str('offset');
    const offset = /^\d+$/.test(raw) ? Number(raw) : commitLogOffsetOfMsgId(raw);
    const rec = this.store.lookMessageByOffset(offset);
    if (!rec) return fail(req, ResponseCode.SYSTEM_ERROR, `can not find message by the offset, ${raw}`);
    return ok(req, { body: Buffer.from(rec) });
  }

  // ---------------------------------------------------------------- clients

  private heartbeat(req: RemotingCommand, conn: RemotingConnection): RemotingCommand {
    const data = parseJsonBody(req) as {
      clientID?: string;
      consumerDataSet?: {
        groupName?: string;
        consumeType?: string;
        messageModel?: string;
        consumeFromWhere?: string;
        subscriptionDataSet?: Partial<SubscriptionData>[];
      }[];
      producerDataSet?: { groupName?: string }[];
      withoutSub?: boolean;
    };
    const clientId = data.clientID ?? conn.remoteAddress;
    const now = this.clock.now();
    for (const cd of data.consumerDataSet ?? []) {
      if (!cd.groupName) continue;
      const group = cd.groupName;
      this.topics.ensure(RETRY_GROUP_TOPIC_PREFIX + group, 1);
      const subs: SubscriptionData[] = (cd.subscriptionDataSet ?? []).map((s) => {
        const built = buildSubscription(s.topic ?? '', s.subString, s.expressionType ?? 'TAG', Number(s.subVersion ?? 0));
        if (Array.isArray(s.codeSet) && s.subString !== '*') built.codeSet = s.codeSet.map(Number);
        if (Array.isArray(s.tagsSet) && s.subString !== '*') built.tagsSet = s.tagsSet.map(String);
        built.classFilterMode = s.classFilterMode === true;
        return built;
      });
      const channel: ClientChannelInfo = { conn, clientId, language: req.language, version: req.version, lastUpdate: now };
      const info = this.consumers.find(group);
      if (data.withoutSub === true && info) {
        // heartbeat v2 without subscriptions: only refresh the channel
        this.consumers.register(group, channel, cd.consumeType ?? info.consumeType, cd.messageModel ?? info.messageModel, cd.consumeFromWhere ?? info.consumeFromWhere, [...info.subscriptions.values()]);
      } else {
        this.consumers.register(group, channel, cd.consumeType ?? 'CONSUME_PASSIVELY', cd.messageModel ?? 'CLUSTERING', cd.consumeFromWhere ?? 'CONSUME_FROM_LAST_OFFSET', subs);
      }
    }
    for (const pd of data.producerDataSet ?? []) if (pd.groupName) this.consumers.registerProducer(pd.groupName, conn, clientId, now);
    return ok(req, { version: BROKER_VERSION, extFields: { IS_SUPPORT_HEART_BEAT_V2: 'true', IS_SUB_CHANGE: 'true' } });
  }

  private unregisterClient(req: RemotingCommand, conn: RemotingConnection): RemotingCommand {
    const f = fields(req);
    const pg = f.optStr('producerGroup');
    const cg = f.optStr('consumerGroup');
    if (pg) this.consumers.unregisterProducer(pg, conn);
    if (cg) this.consumers.unregister(cg, conn);
    return ok(req);
  }

  private notifyConsumerIdsChanged(group: string, channels: ClientChannelInfo[]): void {
    for (const ch of channels) {
      if (ch.conn.closed) continue;
      const notify = createRequest(RequestCode.NOTIFY_CONSUMER_IDS_CHANGED, { oneway: true, extFields: { consumerGroup: group }, version: BROKER_VERSION });
      ch.conn.invokeOneway(notify).catch((err: Error) => log('notify %s of %s failed: %s', ch.clientId, group, err.message));
    }
  }

  private getConsumerList(req: RemotingCommand): RemotingCommand {
    const group = fields(req).str('consumerGroup');
    const info = this.consumers.find(group);
    const ids = info?.clientIds() ?? [];
    if (ids.length === 0) return fail(req, ResponseCode.SYSTEM_ERROR, `no consumer for this group, ${group}`);
    return ok(req, { body: Buffer.from(JSON.stringify({ consumerIdList: ids }), 'utf8') });
  }

  private checkClientConfig(req: RemotingCommand): RemotingCommand {
    const body = parseJsonBody(req) as { subscriptionData?: { expressionType?: string } };
    const t = body.subscriptionData?.expressionType ?? 'TAG';
    if (t !== 'TAG') return fail(req, ResponseCode.SYSTEM_ERROR, 'The broker does not support consumer to filter message by SQL92');
    return ok(req);
  }

  // ---------------------------------------------------------------- retry / DLQ

  private sendMessageBack(req: RemotingCommand): RemotingCommand {
    const f = fields(req);
    const offset = f.int('offset');
    const group = f.str('group');
    let delayLevel = f.int('delayLevel');
    const rec = this.store.lookMessageByOffset(offset);
    if (!rec) return fail(req, ResponseCode.SYSTEM_ERROR, `look message by offset failed, ${offset}`);
    const orig = decodeMessage(rec, 0, { decompress: false });
    const props = orig.properties;
    if (props.RETRY_TOPIC === undefined) props.RETRY_TOPIC = orig.topic;
    const maxRecon = req.version >= MQVersion.V3_4_9 ? (f.optInt('maxReconsumeTimes') ?? 16) : 16;
    let topic = RETRY_GROUP_TOPIC_PREFIX + group;
    this.topics.ensure(topic, 1);
    if (orig.reconsumeTimes >= maxRecon || delayLevel < 0) {
      topic = DLQ_GROUP_TOPIC_PREFIX + group;
      this.topics.ensure(topic, 1);
      delete props.DELAY;
    } else {
      if (delayLevel === 0) delayLevel = 3 + orig.reconsumeTimes;
      props.DELAY = String(delayLevel);
    }
    // Like Java, the first delivery's offset msgId (the broker decodes the original as a plain
    // MessageExt, whose msgId is the offset id); the header's originMsgId is not used.
    if (!props.ORIGIN_MESSAGE_ID?.trim()) props.ORIGIN_MESSAGE_ID = this.store.offsetMsgIdOf(orig.commitLogOffset);
    const retryQueues = this.topics.get(topic)!.writeQueueNums;
    const inner: MessageInner = {
      topic,
      queueId: Math.floor(Math.random() * retryQueues),
      flag: orig.flag,
      sysFlag: orig.sysFlag,
      bornTimestamp: orig.bornTimestamp,
      bornHost: orig.bornHost,
      reconsumeTimes: orig.reconsumeTimes + 1,
      preparedTransactionOffset: 0,
      body: orig.body,
      properties: props,
    };
    const result = this.putWithDelay([inner]);
    if (result.status === 'PUT_OK') return ok(req);
    return fail(req, result.status === 'SERVICE_NOT_AVAILABLE' ? ResponseCode.SERVICE_NOT_AVAILABLE : ResponseCode.SYSTEM_ERROR, result.remark ?? result.status);
  }

  // ---------------------------------------------------------------- orderly locks

  private lockBatch(req: RemotingCommand): RemotingCommand {
    const body = parseJsonBody(req) as { consumerGroup?: string; clientId?: string; mqSet?: MessageQueueJson[] };
    const group = body.consumerGroup ?? '';
    const clientId = body.clientId ?? '';
    const now = this.clock.now();
    const maxLive = this.options.lockMaxLiveTimeMs ?? 60_000;
    let table = this.locks.get(group);
    if (!table) {
      table = new Map();
      this.locks.set(group, table);
    }
    const granted: MessageQueueJson[] = [];
    for (const mq of body.mqSet ?? []) {
      const key = mqKey(mq);
      const e = table.get(key);
      if (!e || e.clientId === clientId || now - e.lastUpdate > maxLive) {
        table.set(key, { clientId, lastUpdate: now });
        granted.push(mq);
      }
    }
    return ok(req, { body: Buffer.from(`{"lockOKMQSet":[${granted.map(mqJson).join(',')}]}`, 'utf8') });
  }

  private unlockBatch(req: RemotingCommand): RemotingCommand {
    const body = parseJsonBody(req) as { consumerGroup?: string; clientId?: string; mqSet?: MessageQueueJson[] };
    const table = this.locks.get(body.consumerGroup ?? '');
    if (table) {
      for (const mq of body.mqSet ?? []) {
        const key = mqKey(mq);
        if (table.get(key)?.clientId === body.clientId) table.delete(key);
      }
    }
    return ok(req);
  }

  // ---------------------------------------------------------------- admin

  /**
   * GET_CONSUMER_RUNNING_INFO from an admin tool: forwarded to the named client's connection (as
   * Java's Broker2Client.callClient does) and its answer relayed.
   */
  private async callConsumer(req: RemotingCommand): Promise<RemotingCommand> {
    const f = fields(req);
    const group = f.str('consumerGroup');
    const clientId = f.str('clientId');
    const channel = [...(this.consumers.find(group)?.channels.values() ?? [])].find((c) => c.clientId === clientId);
    if (!channel || channel.conn.closed) return fail(req, ResponseCode.SYSTEM_ERROR, `The Consumer <${group}> <${clientId}> not online`);
    const forward = createRequest(req.code, { extFields: { ...(req.extFields ?? {}) }, body: req.body ? Buffer.from(req.body) : null, version: BROKER_VERSION });
    try {
      const answer = await channel.conn.invoke(forward, { timeoutMs: 5000 });
      return createResponse(req, answer.code, { remark: answer.remark, body: answer.body ? Buffer.from(answer.body) : null, extFields: answer.extFields });
    } catch (err) {
      return fail(req, ResponseCode.SYSTEM_ERROR, `invoke consumer <${group}> <${clientId}> failed: ${(err as Error).message}`);
    }
  }

  /** GET_TOPIC_CONFIG (5.x admin, e.g. before consume stats): the TopicConfig JSON, keys sorted. */
  private getTopicConfig(req: RemotingCommand): RemotingCommand {
    const topic = fields(req).str('topic');
    const c = this.topics.get(topic);
    if (!c) return this.topicNotExist(req, topic);
    const json = `{"order":${c.order},"perm":${c.perm},"readQueueNums":${c.readQueueNums},"topicFilterType":${JSON.stringify(c.topicFilterType)},"topicName":${JSON.stringify(c.topicName)},"topicSysFlag":${c.topicSysFlag},"writeQueueNums":${c.writeQueueNums}}`;
    return ok(req, { body: Buffer.from(json, 'utf8') });
  }

  /**
   * GET_CONSUME_STATS (admin consumerProgress): per queue of the group's topics, the broker's max
   * offset, the committed offset (0 when none) and the store time of the last consumed message.
   * Like Java, the offset table is keyed by MessageQueue objects (fastjson's non-standard form) and
   * topics the online group no longer subscribes to are skipped.
   */
  private getConsumeStats(req: RemotingCommand): RemotingCommand {
    const f = fields(req);
    const group = f.str('consumerGroup');
    const only = f.optStr('topic');
    const topics = only ? [only] : [...this.offsets.groupOffsets(group).keys()];
    const info = this.consumers.find(group);
    const entries: string[] = [];
    for (const topic of topics.sort()) {
      const config = this.topics.get(topic);
      if (!config) continue;
      if (info && info.subscriptions.size > 0 && !info.subscriptions.has(topic)) continue;
      for (let q = 0; q < config.writeQueueNums; q++) {
        const brokerOffset = this.store.getMaxOffset(topic, q);
        const consumerOffset = Math.max(0, this.offsets.query(group, topic, q) ?? 0);
        const lastTimestamp = consumerOffset > 0 ? Math.max(0, this.store.storeTimestampAt(topic, q, consumerOffset - 1)) : 0;
        const mq = mqJson({ brokerName: this.brokerName, queueId: q, topic });
        entries.push(`${mq}:{"brokerOffset":${brokerOffset},"consumerOffset":${consumerOffset},"lastTimestamp":${lastTimestamp}}`);
      }
    }
    return ok(req, { body: Buffer.from(`{"consumeTps":0.0,"offsetTable":{${entries.join(',')}}}`, 'utf8') });
  }

  private updateAndCreateTopic(req: RemotingCommand): RemotingCommand {
    const f = fields(req);
    const topic = f.str('topic');
    const bad = validateTopicName(topic);
    if (bad) return fail(req, ResponseCode.SYSTEM_ERROR, bad);
    const read = f.optInt('readQueueNums') ?? 8;
    const config: TopicConfig = {
      topicName: topic,
      readQueueNums: read,
      writeQueueNums: f.optInt('writeQueueNums') ?? read,
      perm: f.optInt('perm') ?? PermName.PERM_READ | PermName.PERM_WRITE,
      topicFilterType: f.optStr('topicFilterType') ?? 'SINGLE_TAG',
      topicSysFlag: f.optInt('topicSysFlag') ?? 0,
      order: f.bool('order'),
    };
    this.topics.put(config);
    return ok(req);
  }
}

