import createDebug from '../../debug.js';
import {
  buildSubscriptionData,
  decodeMessagesSkipping,
  encodeConsumerRunningInfo,
  inflateMessages,
  isRetryTopic,
  messageQueue,
  queueKey,
  Operations,
  PullSysFlag,
  ResponseCode,
  type ConsumeMessageDirectlyResult,
  type MessageQueue,
  type SubscriptionData,
} from '../../../protocol/internal.js';
import { checkTopicName } from '../../../protocol/resource-names.js';
import {
  MQClientInstance,
  ScheduledTask,
  topicRouteToSubscribeQueues,
  type ConsumerInner,
} from '../../client/index.js';
import { BrokerError } from '../../remoting/index.js';
import { ConsumerEvents, UndecodableMessageError } from '../core/consumer-events.js';
import { countRound, newInflateStats, refusedMessageError, roundOptions } from '../core/inflate.js';
import { checkMetricsOptions, type ConsumerMetrics, type MetricsOptions } from '../../metrics/index.js';
import { startConsumerMetrics } from '../core/events.js';
import { BrokerAddressNotFoundError, ConsumerOptionError, ConsumerStateError } from '../errors.js';
import {
  flowControlReason,
  PULL_TIME_DELAY_MILLS_WHEN_BROKER_FLOW_CONTROL,
  PULL_TIME_DELAY_MILLS_WHEN_CACHE_FLOW_CONTROL,
  type FlowLimits,
} from '../core/flow-control.js';
import { LitePullAssignment, type AssignedQueue } from './lite-pull-assignment.js';
import { LitePullCache, type ConsumeRequest } from './lite-pull-cache.js';
import {
  resolveLitePullConsumerOptions,
  type LitePullConsumerConfig,
  type LitePullConsumerOptions,
} from './lite-pull-options.js';
import type { MessageExt } from '../core/message.js';
import {
  defaultLocalOffsetStoreDir,
  LocalFileOffsetStore,
  RemoteBrokerOffsetStore,
  type OffsetStore,
} from '../core/offset-store.js';
import { ProcessQueue } from '../core/process-queue.js';
import { processQueueInfo, subscriptionInfo } from '../core/running-info.js';
import { pullTarget } from '../core/pull-target.js';
import { instanceHealth } from '../../client/health.js';
import type { ConsumerHealth, QueueHealth } from '../core/health.js';
import {
  acquireConsumerInstance,
  checkNameServerAtStart,
  consumerIdsOf,
  subscribeQueuesOf,
} from '../core/consumer-instance.js';
import { PullMessageService } from '../core/pull-message-service.js';
import { newPullRequest, type PullRequest } from '../core/pull-request.js';
import { RebalancePushImpl } from '../core/rebalance-impl.js';
import { tagMatches } from '../core/subscription.js';

const log = createDebug('rocketwire:consumer:lite');

/** DefaultLitePullConsumerImpl's back-offs: a paused queue is looked at again after 1 s, a failed offset lookup after 3 s. */
export const PULL_TIME_DELAY_MILLS_WHEN_PAUSE = 1000;
export const PULL_TIME_DELAY_MILLS_ON_EXCEPTION = 3000;
const DEFAULT_CONSUME_TIMESTAMP_LAG_MS = 30 * 60_000;
const ADMIN_OFFSET_TIMEOUT_MS = 6000;
const REBALANCE_MIN_INTERVAL_MS = 1000;

/**
 * Lifecycle of a lite pull consumer, as Java's ServiceState.
 * @category Consuming
 */
export type LitePullConsumerState = 'CREATED' | 'STARTING' | 'RUNNING' | 'SHUTTING_DOWN' | 'SHUTDOWN';

/**
 * The request code of a lite pull. Java's 5.x client sends LITE_PULL_MESSAGE (361) whenever the lite
 * bit is set (MQClientAPIImpl.pullMessage) and 4.9's sends PULL_MESSAGE (11) with the same bit; a 4.9
 * broker does not know 361 (REQUEST_CODE_NOT_SUPPORTED). So: 361 to a broker whose heartbeat answer
 * says 5.0.0 or later, 11 to older ones and to a broker not heard from yet.
 */
export function litePullOperation(
  brokerVersion: number | undefined,
): typeof Operations.PULL_MESSAGE | typeof Operations.LITE_PULL_MESSAGE {
  return brokerVersion !== undefined && brokerVersion >= MQVersion_V5_0_0
    ? Operations.LITE_PULL_MESSAGE
    : Operations.PULL_MESSAGE;
}
/** MQVersion.Version.V5_0_0.ordinal(). */
const MQVersion_V5_0_0 = 413;

/** Why a lite pull waits: the shared cache is full (pullThresholdForAll) or the queue's own limits. */
type LiteParkReason = 'all' | 'count' | 'size' | 'span' | 'pause';

/**
 * The lite pull consumer's machinery (DefaultLitePullConsumerImpl). Pulls run ahead of poll(): one
 * PullRequest per held queue goes round the push consumer's PullMessageService; each FOUND batch is
 * put in the queue's ProcessQueue and in the shared cache (LitePullCache), and poll() takes batches
 * from it. Subscribe mode reuses the push consumer's rebalance (RebalancePushImpl, same allocation
 * strategies, so it shares a group with Java's lite pull and push consumers); assign mode holds the
 * queues it was given.
 */
export class LitePullConsumerImpl implements ConsumerInner {
  readonly config: LitePullConsumerConfig;
  readonly events = new ConsumerEvents();
  private stopNameServerEvents: (() => void) | null = null;
  /** Delivery latency, await time (arrival to poll) and the cache gauges (lib/metrics); null when off. */
  metrics: ConsumerMetrics | null = null;
  private readonly metricsOptions: MetricsOptions | undefined;
  readonly consumeType = 'CONSUME_ACTIVELY' as const;
  readonly assigned = new LitePullAssignment();
  readonly cache: LitePullCache;
  readonly pullService: PullMessageService;
  readonly rebalance: RebalancePushImpl;
  private readonly expressions = new Map<string, string>();
  readonly subscriptionInner = new Map<string, SubscriptionData>();
  private mode: 'NONE' | 'SUBSCRIBE' | 'ASSIGN' = 'NONE';
  private assignedQueues: MessageQueue[] = [];
  private stateValue: LitePullConsumerState = 'CREATED';
  instance: MQClientInstance | null = null;
  private offsetStoreValue: OffsetStore | null = null;
  private readonly tasks: ScheduledTask[] = [];
  private readonly inflight = new Set<Promise<void>>();
  private readonly parked = new Map<PullRequest, LiteParkReason>();
  private readonly limits: FlowLimits;
  private nextAutoCommitDeadline = -1;
  private consumeTimestampMs = 0;
  startTimestamp = 0;
  private clientIdValue = '';
  private shutdownPromise: Promise<void> | null = null;
  /** Pulls sent, batches cached, and flow-control parks by reason (tests and the benchmark read them). */
  readonly counters = {
    pulls: 0,
    found: 0,
    messagesPulled: 0,
    parks: { all: 0, count: 0, size: 0, span: 0, pause: 0 },
    /** Pulls sent by request code (11 PULL_MESSAGE, 361 LITE_PULL_MESSAGE). */
    requestCodes: {} as Record<number, number>,
    /** Inflation of compressed bodies: bytes, the most one pull inflated, budget cuts, refused messages. */
    inflate: newInflateStats(),
  };

  constructor(options: LitePullConsumerOptions) {
    this.config = resolveLitePullConsumerOptions(options);
    this.events.logger = this.config.base.logger;
    this.events.label = `lite pull consumer ${this.config.base.consumerGroup}`;
    const badMetrics = checkMetricsOptions(options.metrics);
    if (badMetrics) throw new ConsumerOptionError(badMetrics.option, badMetrics.message);
    this.metricsOptions = options.metrics;
    const base = this.config.base;
    this.cache = new LitePullCache(base.clock);
    this.pullService = new PullMessageService((pr) => this.pullMessage(pr), base.clock);
    this.limits = {
      pullThresholdForQueue: this.config.pullThresholdForQueue,
      pullThresholdSizeForQueueMiB: this.config.pullThresholdSizeForQueueMiB,
      consumeConcurrentlyMaxSpan: this.config.consumeMaxSpan,
      orderly: false,
    };
    for (const [topic, expr] of Object.entries(base.subscriptions)) {
      // SQL92 ({ sql }) is a push-consumer subscription for now (its pulls send TAG expressions)
      if (typeof expr !== 'string')
        throw new ConsumerOptionError(
          'subscriptions',
          `${topic}: LitePullConsumer takes tag expressions; SQL92 subscriptions need a PushConsumer`,
        );
      this.subscribe(topic, expr);
    }
    const consumer = this;
    this.rebalance = new RebalancePushImpl({
      config: base,
      // getters: both are read when the rebalance runs, after start() made them
      get clientId() {
        return consumer.clientIdValue;
      },
      get offsetStore() {
        return consumer.offsetStore;
      },
      subscriptionTable: () => this.subscriptionInner,
      subscribeQueues: (topic) => subscribeQueuesOf(this.instance!, topic),
      consumerIdList: (topic) => consumerIdsOf(this.instance!, this.config.base.consumerGroup, topic),
      computePullFromWhere: (mq) => this.computePullFromWhere(mq).catch(() => -1),
      lockBatch: () => Promise.resolve([]),
      unlockBatch: () => Promise.resolve(),
      dispatchPullRequests: (prs) => {
        for (const pr of prs) {
          this.assigned.add(pr, pr.nextOffset);
          this.pullService.executePullRequestImmediately(pr);
        }
      },
      messageQueueChanged: async () => {
        // RebalanceLitePullImpl only tells the listener; queues taken away are forgotten here.
        this.assigned.prune();
      },
      awaitConsumeIdle: () => Promise.resolve(true),
    });
  }

  // ------------------------------------------------------------------ ConsumerInner

  get groupName(): string {
    return this.config.base.consumerGroup;
  }
  get messageModel(): 'CLUSTERING' | 'BROADCASTING' {
    return this.config.base.messageModel;
  }
  /** The heartbeat always says CONSUME_FROM_LAST_OFFSET, as DefaultLitePullConsumerImpl.consumeFromWhere(). */
  readonly consumeFromWhere = 'CONSUME_FROM_LAST_OFFSET';

  /** Assign mode sends no subscription (Java's subscriptionInner stays empty). */
  subscriptions(): SubscriptionData[] {
    return [...this.subscriptionInner.values()];
  }

  doRebalance(): void {
    if (this.stateValue !== 'RUNNING' || this.mode !== 'SUBSCRIBE') return;
    this.rebalance.doRebalance().catch((err: unknown) => log('rebalance failed: %s', (err as Error)?.message ?? err));
  }

  async persistOffsets(): Promise<void> {
    if (!this.offsetStoreValue) return;
    await this.offsetStoreValue.persistAll(this.assignment());
  }

  runningInfo(): Buffer {
    const c = this.config;
    const properties: Record<string, string> = {
      PROP_CLIENT_VERSION: 'V4_9_8',
      PROP_CONSUMER_START_TIMESTAMP: String(this.startTimestamp),
      PROP_CONSUME_TYPE: 'CONSUME_ACTIVELY',
      PROP_NAMESERVER_ADDR: c.base.namesrvAddr,
      allocateMessageQueueStrategy: c.base.allocateStrategy.name,
      autoCommit: String(c.autoCommit),
      autoCommitIntervalMillis: String(c.autoCommitIntervalMs),
      consumeMaxSpan: String(c.consumeMaxSpan),
      consumerGroup: c.base.consumerGroup,
      messageModel: c.base.messageModel,
      pollTimeoutMillis: String(c.pollTimeoutMs),
      pullBatchSize: String(c.pullBatchSize),
      pullThresholdForAll: String(c.pullThresholdForAll),
      pullThresholdForQueue: String(c.pullThresholdForQueue),
      pullThresholdSizeForQueue: String(c.pullThresholdSizeForQueueMiB),
    };
    const mqTable: [MessageQueue, Record<string, unknown>][] = this.assigned
      .queues()
      .map(({ mq, pq }) => [mq, processQueueInfo(pq, this.offsetStoreValue?.readMemory(mq) ?? -1)]);
    const subscriptionSet = this.subscriptions().map(subscriptionInfo);
    // The lite pull consumer sends no statusTable (it has no consume statistics).
    return encodeConsumerRunningInfo({ jstack: '', mqTable, properties, statusTable: {}, subscriptionSet });
  }

  /** Java's MQClientInstance answers CONSUME_MESSAGE_DIRECTLY only for push consumers. */
  consumeMessageDirectly(): Promise<ConsumeMessageDirectlyResult> {
    return Promise.reject(
      new ConsumerStateError(this.stateValue, 'a lite pull consumer has no handler to consume a message directly'),
    );
  }

  /** RESET_CONSUMER_CLIENT_OFFSET: each held queue of the topic is sought to its new offset. */
  async resetOffset(topic: string, offsets: Map<string, number>): Promise<void> {
    for (const st of this.assigned.queues()) {
      if (st.mq.topic !== topic) continue;
      const offset = offsets.get(queueKey(st.mq));
      if (offset === undefined) continue;
      this.seekNow(st, offset);
      this.offsetStore.updateOffset(st.mq, offset, false);
    }
  }

  consumerStatus(topic: string): [MessageQueue, number][] {
    if (!this.offsetStoreValue) return [];
    return [...this.offsetStoreValue.cloneOffsetTable(topic).values()].map((e) => [e.mq, e.offset]);
  }

  // ------------------------------------------------------------------ what LitePullConsumer exposes

  get state(): LitePullConsumerState {
    return this.stateValue;
  }
  get clientId(): string {
    return this.clientIdValue;
  }
  get offsetStore(): OffsetStore {
    if (!this.offsetStoreValue) throw new ConsumerStateError(this.stateValue, 'the consumer is not started');
    return this.offsetStoreValue;
  }

  private setMode(mode: 'SUBSCRIBE' | 'ASSIGN'): void {
    if (this.mode !== 'NONE' && this.mode !== mode) {
      throw new ConsumerStateError(this.stateValue, 'subscribe() and assign() are mutually exclusive on one consumer');
    }
    this.mode = mode;
  }

  subscribe(topic: string, expression = '*'): void {
    if (typeof topic !== 'string' || topic === '') throw new ConsumerOptionError('topic', 'must be a non-empty string');
    const bad = checkTopicName(topic);
    if (bad) throw new ConsumerOptionError('topic', bad);
    if (typeof expression !== 'string') throw new ConsumerOptionError('expression', 'must be a string');
    this.setMode('SUBSCRIBE');
    this.expressions.set(topic, expression);
    this.subscriptionInner.set(topic, buildSubscriptionData(topic, expression, this.config.base.clock.now()));
    if (this.stateValue === 'RUNNING') {
      this.instance!.sendHeartbeatToAllBrokers().then(
        () => this.doRebalance(),
        (err: unknown) => log('heartbeat after subscribe failed: %s', (err as Error)?.message ?? err),
      );
    }
  }

  unsubscribe(topic: string): void {
    this.expressions.delete(topic);
    this.subscriptionInner.delete(topic);
    for (const st of this.assigned.retain([], topic)) this.cache.removeQueue(st);
  }

  assign(queues: readonly MessageQueue[]): void {
    if (!Array.isArray(queues) || queues.length === 0)
      throw new ConsumerOptionError('queues', 'must be a non-empty array of message queues');
    for (const mq of queues) {
      if (!mq || typeof mq.topic !== 'string' || typeof mq.brokerName !== 'string' || !Number.isInteger(mq.queueId)) {
        throw new ConsumerOptionError('queues', 'each queue must be { topic, brokerName, queueId }');
      }
    }
    this.setMode('ASSIGN');
    this.assignedQueues = queues.map((q) => messageQueue(q.topic, q.brokerName, q.queueId));
    if (this.stateValue === 'RUNNING') this.applyAssign();
  }

  private applyAssign(): void {
    for (const st of this.assigned.retain(this.assignedQueues, null)) this.cache.removeQueue(st);
    const now = this.config.base.clock.now();
    for (const mq of this.assignedQueues) {
      if (this.assigned.get(mq)) continue;
      const pq = new ProcessQueue(now);
      const pr = newPullRequest(mq, pq, -1);
      this.assigned.add(pr, -1);
      this.pullService.executePullRequestImmediately(pr);
    }
  }

  /** The consumer's health(): as the push consumer's, the lag counted from the committed offsets. */
  health(): ConsumerHealth {
    const inst = instanceHealth(this.instance);
    const queues: QueueHealth[] = this.assigned.queues().map((st) => {
      const committed = this.offsetStoreValue?.readMemory(st.mq) ?? -1;
      const max = st.pr.brokerMaxOffset;
      return {
        topic: st.mq.topic,
        brokerName: st.mq.brokerName,
        queueId: st.mq.queueId,
        lastPullAnsweredAtMs: st.pr.lastAnsweredAtMs,
        lag: max >= 0 && committed >= 0 ? Math.max(0, max - committed) : -1,
        cached: st.pq.msgCount,
        paused: st.paused,
        flowControlled: null,
      };
    });
    return {
      state: this.stateValue,
      ready: this.stateValue === 'RUNNING' && inst.nameServer.lastAnswer !== null,
      group: this.config.base.consumerGroup,
      ...inst,
      queues,
    };
  }

  /** The queues held now (subscribe mode: the rebalance's share; assign mode: those given). */
  assignment(): MessageQueue[] {
    return this.assigned.queues().map((st) => st.mq);
  }

  async start(): Promise<void> {
    if (this.stateValue !== 'CREATED')
      throw new ConsumerStateError(this.stateValue, `cannot start a consumer in state ${this.stateValue}`);
    if (this.mode === 'NONE')
      throw new ConsumerStateError(
        this.stateValue,
        'nothing to consume: call subscribe(topic, expression) or assign(queues) first',
      );
    this.stateValue = 'STARTING';
    const base = this.config.base;
    try {
      const now = base.clock.now();
      this.startTimestamp = now;
      this.consumeTimestampMs = base.consumeTimestampMs ?? now - DEFAULT_CONSUME_TIMESTAMP_LAG_MS;
      const instance = await acquireConsumerInstance(base, this);
      const firstTopic =
        this.mode === 'SUBSCRIBE' ? this.subscriptionInner.keys().next().value : this.assignedQueues[0]?.topic;
      try {
        await checkNameServerAtStart(instance, base, firstTopic ?? base.consumerGroup);
      } catch (err) {
        // Nothing else was acquired: back to CREATED, so that start() may be called again.
        await instance.unregisterConsumer(base.consumerGroup).catch(() => undefined);
        await instance.release(base.logger);
        this.stateValue = 'CREATED';
        throw err;
      }
      this.instance = instance;
      this.clientIdValue = instance.clientId;
      this.stopNameServerEvents = instance.onNameServerStatus((s) => this.events.nameServerStatus(s));
      this.offsetStoreValue =
        base.messageModel === 'CLUSTERING'
          ? new RemoteBrokerOffsetStore({
              queryConsumerOffset: (mq) =>
                this.withMaster(mq, (addr) => instance.queryConsumerOffset(addr, base.consumerGroup, mq, 5000)),
              updateConsumerOffsetOneway: async (mq, offset) => {
                const addr = this.masterAddress(mq.brokerName);
                if (addr) await instance.updateConsumerOffsetOneway(addr, base.consumerGroup, mq, offset);
              },
            })
          : new LocalFileOffsetStore(
              base.offsetStoreDir ?? defaultLocalOffsetStoreDir(),
              instance.clientId,
              base.consumerGroup,
            );
      await this.offsetStoreValue.load();
      this.metrics = await startConsumerMetrics(this.metricsOptions, instance.clientId, base.consumerGroup, () =>
        this.assigned.queues(),
      );
      await instance.start();
      const topics =
        this.mode === 'SUBSCRIBE'
          ? [...this.subscriptionInner.keys()]
          : [...new Set(this.assignedQueues.map((q) => q.topic))];
      await Promise.all(
        topics.map((t) =>
          instance.getTopicRoute(t, { refresh: true }).catch((err: unknown) => {
            base.logger.warn(
              `lite pull consumer ${base.consumerGroup}: no route for topic ${t} yet (${(err as Error).message.split('\n')[0]}); polling for it`,
            );
          }),
        ),
      );
      await instance.sendHeartbeatToAllBrokers();
      this.stateValue = 'RUNNING';
      this.pullService.start();
      if (this.mode === 'ASSIGN') {
        this.applyAssign();
      } else {
        const balanced = await this.rebalance.doRebalance();
        const task = new ScheduledTask(
          'rebalance',
          base.rebalanceIntervalMs,
          async () => ((await this.rebalance.doRebalance()) ? base.rebalanceIntervalMs : REBALANCE_MIN_INTERVAL_MS),
          log,
          base.clock,
        );
        task.start(balanced ? base.rebalanceIntervalMs : REBALANCE_MIN_INTERVAL_MS);
        this.tasks.push(task);
      }
      log('lite pull consumer %s started as %s (%s)', base.consumerGroup, this.clientIdValue, this.mode);
    } catch (err) {
      if (this.stateValue === 'STARTING' || this.stateValue === 'RUNNING') await this.shutdown().catch(() => undefined);
      throw err;
    }
  }

  /** Stops the pulls, wakes waiting polls (with nothing), persists the committed offsets, unregisters. */
  shutdown(): Promise<void> {
    this.shutdownPromise ??= this.doShutdown();
    return this.shutdownPromise;
  }

  private async doShutdown(): Promise<void> {
    if (this.stateValue === 'CREATED') {
      this.stateValue = 'SHUTDOWN';
      return;
    }
    this.stateValue = 'SHUTTING_DOWN';
    await Promise.all(this.tasks.map((t) => t.stop()));
    await this.rebalance.shutdown();
    await this.pullService.shutdown();
    await Promise.allSettled([...this.inflight]);
    this.cache.close();
    this.metrics?.close();
    // Java's shutdown persists the committed offsets; what poll() returned since the last commit is not committed.
    if (this.offsetStoreValue)
      await this.persistOffsets().catch((err: unknown) => log('final offset flush failed: %s', (err as Error).message));
    this.assigned.dropAll();
    if (this.instance) {
      await this.instance.unregisterConsumer(this.config.base.consumerGroup).catch(() => undefined);
      await this.instance.release(this.config.base.logger);
      this.stopNameServerEvents?.();
    }
    this.stateValue = 'SHUTDOWN';
  }

  private checkRunning(what: string): void {
    if (this.stateValue !== 'RUNNING')
      throw new ConsumerStateError(this.stateValue, `${what} needs a running consumer (state ${this.stateValue})`);
  }

  /**
   * Java's poll: with autoCommit, first commit everything polled so far when the interval has passed
   * (the first poll always does); then one cached batch, waiting up to `timeoutMs` for one.
   */
  async poll(timeoutMs = this.config.pollTimeoutMs): Promise<MessageExt[]> {
    this.checkRunning('poll()');
    if (!Number.isInteger(timeoutMs) || timeoutMs < 0)
      throw new ConsumerOptionError('timeoutMs', `must be a non-negative integer, got ${String(timeoutMs)}`);
    if (this.config.autoCommit) this.maybeAutoCommit();
    const req = await this.takeRequest(timeoutMs);
    if (req === null) return [];
    if (this.metrics)
      this.metrics.beforeConsume(req.msgs, this.config.base.clock.now(), this.metrics.arrivalOf(req.msgs));
    req.queue.consumeOffset = this.removeTaken(req);
    return req.msgs;
  }

  /** The next live batch, removed from its ProcessQueue but not counted as consumed (the iterators commit per message). */
  async takeRequest(timeoutMs: number): Promise<ConsumeRequest | null> {
    const clock = this.config.base.clock;
    const end = clock.now() + timeoutMs;
    for (;;) {
      const req = await this.cache.take(Math.max(0, end - clock.now()));
      if (req === null) return null;
      if (!req.queue.pq.dropped && req.generation === req.queue.generation) return req;
      if (clock.now() >= end) return null;
    }
  }

  /** Takes a polled batch out of its ProcessQueue; returns the offset after it (or the smallest still cached). */
  removeTaken(req: ConsumeRequest): number {
    const pq = req.queue.pq;
    pq.removeMessage(req.msgs);
    pq.markConsumed(this.config.base.clock.now());
    this.releaseParked();
    // Computed here rather than from removeMessage's answer: after a seek back the ProcessQueue's
    // highest offset ever cached is past what it holds now.
    return pq.msgCount > 0 ? pq.minOffset : req.msgs[req.msgs.length - 1]!.queueOffset + 1;
  }

  private maybeAutoCommit(): void {
    const now = this.config.base.clock.now();
    if (now >= this.nextAutoCommitDeadline) {
      this.commitAll();
      this.nextAutoCommitDeadline = now + this.config.autoCommitIntervalMs;
    }
  }

  /** Java's commitAll: each held queue's consume offset into the offset store (in memory). */
  commitAll(): void {
    for (const st of this.assigned.queues())
      if (st.consumeOffset !== -1) this.offsetStore.updateOffset(st.mq, st.consumeOffset, false);
  }

  async commitSync(persist: boolean): Promise<void> {
    this.checkRunning('commitSync()');
    this.commitAll();
    if (persist) await this.offsetStore.persistAll(this.assignment());
  }

  async commit(offsets: Iterable<readonly [MessageQueue, number]>, persist: boolean): Promise<void> {
    this.checkRunning('commit()');
    const mqs: MessageQueue[] = [];
    for (const [mq, offset] of offsets) {
      if (!Number.isInteger(offset) || offset < 0)
        throw new ConsumerOptionError(
          'offsets',
          `offset of ${queueKeyOf(mq)} must be a non-negative integer, got ${String(offset)}`,
        );
      const st = this.assigned.get(mq);
      if (st) {
        this.offsetStore.updateOffset(st.mq, offset, false);
        mqs.push(st.mq);
      }
    }
    if (persist && mqs.length > 0) await this.offsetStore.persistAll(mqs);
  }

  /** The committed offset: in memory, else the broker's (−1: none). */
  async committed(mq: MessageQueue): Promise<number> {
    this.checkRunning('committed()');
    const offset = await this.offsetStore.readOffset(mq, 'memory_then_store');
    if (offset === -2)
      throw new ConsumerStateError(
        this.stateValue,
        `the committed offset of ${queueKeyOf(mq)} could not be read from the broker`,
      );
    return offset;
  }

  private heldOrThrow(mq: MessageQueue, what: string): AssignedQueue {
    const st = this.assigned.get(mq);
    if (!st) {
      const why = this.mode === 'SUBSCRIBE' ? ' (it may be rebalancing)' : '';
      throw new ConsumerStateError(
        this.stateValue,
        `${what}: ${queueKeyOf(mq)} is not assigned to this consumer${why}`,
      );
    }
    return st;
  }

  async seek(mq: MessageQueue, offset: number): Promise<void> {
    this.checkRunning('seek()');
    const st = this.heldOrThrow(mq, 'seek()');
    if (!Number.isInteger(offset)) throw new ConsumerOptionError('offset', `must be an integer, got ${String(offset)}`);
    const [min, max] = await Promise.all([this.minOffset(mq), this.maxOffset(mq)]);
    if (offset < min || offset > max)
      throw new ConsumerOptionError('offset', `seek offset ${offset} is outside ${min}..${max} of ${queueKeyOf(mq)}`);
    this.seekNow(st, offset);
  }

  /** Clears the queue's cache and makes its next pull start at `offset` (a pull in flight is discarded). */
  private seekNow(st: AssignedQueue, offset: number): void {
    st.pq.clear();
    this.cache.removeQueue(st);
    st.seekOffset = offset;
    st.generation++;
    st.pullAbort?.abort();
    this.parked.delete(st.pr);
    this.pullService.resume(st.pr);
  }

  async seekToBegin(mq: MessageQueue): Promise<void> {
    this.checkRunning('seekToBegin()');
    await this.seek(mq, await this.minOffset(mq));
  }

  async seekToEnd(mq: MessageQueue): Promise<void> {
    this.checkRunning('seekToEnd()');
    await this.seek(mq, await this.maxOffset(mq));
  }

  pause(mqs: readonly MessageQueue[]): void {
    for (const mq of mqs) {
      const st = this.assigned.get(mq);
      if (st) st.paused = true;
    }
  }

  /** Resumes the queues; a pull parked because its queue was paused goes at once (Java: within 1 s). */
  resume(mqs: readonly MessageQueue[]): void {
    for (const mq of mqs) {
      const st = this.assigned.get(mq);
      if (!st || !st.paused) continue;
      st.paused = false;
      if (this.parked.get(st.pr) === 'pause') {
        this.parked.delete(st.pr);
        this.pullService.resume(st.pr);
      }
    }
  }

  isPaused(mq: MessageQueue): boolean {
    return this.assigned.get(mq)?.paused ?? true;
  }

  async offsetForTimestamp(mq: MessageQueue, timestampMs: number): Promise<number> {
    this.checkRunning('offsetForTimestamp()');
    if (!Number.isInteger(timestampMs) || timestampMs < 0)
      throw new ConsumerOptionError('timestampMs', `must be a non-negative integer, got ${String(timestampMs)}`);
    return this.withMaster(mq, (addr) =>
      this.instance!.searchOffsetByTimestamp(addr, mq, timestampMs, ADMIN_OFFSET_TIMEOUT_MS),
    );
  }

  async fetchMessageQueues(topic: string): Promise<MessageQueue[]> {
    this.checkRunning('fetchMessageQueues()');
    const route = await this.instance!.getTopicRoute(topic, { refresh: true });
    return topicRouteToSubscribeQueues(topic, route).map((q) => messageQueue(q.topic, q.brokerName, q.queueId));
  }

  private minOffset(mq: MessageQueue): Promise<number> {
    return this.withMaster(mq, (addr) => this.instance!.getMinOffset(addr, mq, ADMIN_OFFSET_TIMEOUT_MS));
  }
  private maxOffset(mq: MessageQueue): Promise<number> {
    return this.withMaster(mq, (addr) => this.instance!.getMaxOffset(addr, mq, ADMIN_OFFSET_TIMEOUT_MS));
  }

  /** Flow-control figures of the held queues and the shared cache. */
  cacheStats(): {
    batchesCached: number;
    queues: { mq: MessageQueue; cachedMessages: number; cachedBytes: number; paused: boolean }[];
  } {
    return {
      batchesCached: this.cache.size,
      queues: this.assigned
        .queues()
        .map((st) => ({ mq: st.mq, cachedMessages: st.pq.msgCount, cachedBytes: st.pq.msgSize, paused: st.paused })),
    };
  }

  // ------------------------------------------------------------------ the pull path (PullTaskImpl)

  private pullMessage(pr: PullRequest): void {
    const st = this.assigned.ofPullRequest(pr);
    const pq = pr.processQueue;
    if (!st || pq.dropped || this.stateValue !== 'RUNNING') return;
    pq.markPulled(this.config.base.clock.now());
    if (st.paused) return this.park(pr, 'pause', PULL_TIME_DELAY_MILLS_WHEN_PAUSE);
    if (this.cache.size * this.config.pullBatchSize > this.config.pullThresholdForAll)
      return this.park(pr, 'all', PULL_TIME_DELAY_MILLS_WHEN_CACHE_FLOW_CONTROL);
    const reason = flowControlReason(pq, this.limits);
    if (reason !== null) return this.park(pr, reason, PULL_TIME_DELAY_MILLS_WHEN_CACHE_FLOW_CONTROL);
    const p = this.doPull(st);
    this.inflight.add(p);
    p.then(() => this.inflight.delete(p));
  }

  private park(pr: PullRequest, reason: LiteParkReason, delayMs: number): void {
    this.counters.parks[reason]++;
    this.parked.set(pr, reason);
    this.pullService.executePullRequestLater(pr, delayMs);
  }

  /** poll() took a batch: a pull parked for the cache's count, size or the shared limit goes again once under it. */
  private releaseParked(): void {
    if (this.parked.size === 0) return;
    const overAll = this.cache.size * this.config.pullBatchSize > this.config.pullThresholdForAll;
    for (const [pr, reason] of this.parked) {
      if (pr.processQueue.dropped) {
        this.parked.delete(pr);
        continue;
      }
      if (reason === 'pause' || reason === 'span' || pr.parkTimer === null) continue;
      if (reason === 'all' ? overAll : flowControlReason(pr.processQueue, this.limits) !== null) continue;
      this.parked.delete(pr);
      this.pullService.resume(pr);
    }
  }

  private async nextPullOffset(st: AssignedQueue): Promise<number> {
    if (st.seekOffset !== -1) {
      const offset = st.seekOffset;
      st.consumeOffset = offset;
      st.seekOffset = -1;
      return offset;
    }
    if (st.pullOffset !== -1) return st.pullOffset;
    return this.computePullFromWhere(st.mq);
  }

  private async doPull(st: AssignedQueue): Promise<void> {
    const { pr, pq, mq } = st;
    const base = this.config.base;
    const instance = this.instance!;
    const generation = st.generation;
    let offset: number;
    try {
      offset = await this.nextPullOffset(st);
    } catch (err) {
      log('next pull offset of %o: %s', mq, (err as Error)?.message ?? err);
      this.pullService.executePullRequestLater(pr, PULL_TIME_DELAY_MILLS_ON_EXCEPTION);
      return;
    }
    if (pq.dropped) return;
    if (generation !== st.generation) {
      this.pullService.executePullRequestImmediately(pr);
      return;
    }
    // One controller per pull, so seek() can abandon a long poll held at the broker without
    // touching the other queues' pulls (AbortSignal.any is Node 20.3+; engines say >=20).
    const abort = new AbortController();
    const onShutdown = (): void => abort.abort();
    this.pullService.signal.addEventListener('abort', onShutdown, { once: true });
    st.pullAbort = abort;
    const sub = this.subscriptionInner.get(mq.topic) ?? buildSubscriptionData(mq.topic, '*', 0);
    let addr: string | undefined;
    try {
      const target = await pullTarget(instance, pr);
      addr = target.addr;
      this.counters.pulls++;
      const op = litePullOperation(instance.brokerVersion(target.addr));
      this.counters.requestCodes[op.code] = (this.counters.requestCodes[op.code] ?? 0) + 1;
      // sysFlag SUSPEND | SUBSCRIPTION | LITE (0x16), commitOffset 0: a lite pull never commits through
      // the pull (DefaultLitePullConsumerImpl.pullSyncImpl); TAG subscriptions send subVersion 0.
      const result = await instance.pullMessage(
        target.addr,
        {
          consumerGroup: base.consumerGroup,
          topic: mq.topic,
          queueId: mq.queueId,
          queueOffset: offset,
          maxMsgNums: this.config.pullBatchSize,
          sysFlag: PullSysFlag.FLAG_SUSPEND | PullSysFlag.FLAG_SUBSCRIPTION | PullSysFlag.FLAG_LITE_PULL_MESSAGE,
          commitOffset: 0,
          suspendTimeoutMillis: base.brokerSuspendMaxTimeMs,
          subscription: sub.subString,
          subVersion: 0,
          expressionType: 'TAG',
          bname: mq.brokerName,
        },
        base.pullTimeoutMs,
        abort.signal,
        op,
      );
      this.events.brokerAnswered(mq.brokerName, target.addr, 'PULL_MESSAGE');
      if (pq.dropped || this.pullService.signal.aborted) return;
      pr.suggestWhichBrokerId = result.suggestWhichBrokerId;
      pr.lastAnsweredAtMs = base.clock.now();
      if (result.maxOffset >= 0) pr.brokerMaxOffset = result.maxOffset;
      if (generation !== st.generation) {
        // seek() ran while this pull was in flight: what it brought is from before the seek.
        this.pullService.executePullRequestImmediately(pr);
        return;
      }
      let nextOffset = result.nextBeginOffset;
      if (result.status === 'FOUND' && result.bodyBytes) {
        // Bodies stay compressed until the tag filter kept them, then inflate within the pull's
        // budget; past it, the rest is pulled again from its offset.
        const { messages, undecodable } = decodeMessagesSkipping(result.bodyBytes, { decompress: false });
        let msgs =
          sub.tagsSet.length > 0 ? messages.filter((m) => tagMatches(sub, m.tags ?? m.properties.TAGS)) : messages;
        const round = inflateMessages(msgs, 0, roundOptions(base.inflate));
        const cut = round.end < msgs.length;
        countRound(this.counters.inflate, round, cut);
        let cutIndex = messages.length;
        if (cut) {
          nextOffset = msgs[round.end]!.queueOffset;
          cutIndex = messages.indexOf(msgs[round.end]!);
          msgs = msgs.slice(0, round.end);
        }
        // Reported before anything after them is cached: the consumer moves past them only then.
        for (const u of undecodable) {
          if (u.messagesBefore > cutIndex) break;
          const exact = u.recordIntact && u.queueOffset !== undefined;
          this.events.undecodable(
            new UndecodableMessageError({
              topic: mq.topic,
              brokerName: mq.brokerName,
              queueId: mq.queueId,
              queueOffset: exact
                ? u.queueOffset!
                : u.messagesBefore > 0
                  ? messages[u.messagesBefore - 1]!.queueOffset + 1
                  : offset,
              physOffset: u.commitLogOffset,
              recordIntact: exact,
              bytes: u.length,
              reason: u.reason,
              disposition: 'passed',
            }),
          );
        }
        if (round.refused.length > 0) {
          const refused = new Set<number>();
          for (const r of round.refused) {
            const m = msgs[r.index]!;
            refused.add(r.index);
            this.events.undecodable(refusedMessageError(mq, m, r, base.inflate, 'passed'));
          }
          msgs = msgs.filter((_, i) => !refused.has(i));
        }
        if (msgs.length > 0 && st.seekOffset === -1) {
          const minText = String(result.minOffset);
          const maxText = String(result.maxOffset);
          for (const m of msgs) {
            m.properties.MIN_OFFSET = minText;
            m.properties.MAX_OFFSET = maxText;
            m.brokerName = mq.brokerName;
          }
          this.counters.found++;
          this.counters.messagesPulled += msgs.length;
          if (this.metrics) {
            const now = base.clock.now();
            this.metrics.arrived(msgs, now);
            this.metrics.track(msgs, now);
          }
          pq.putMessage(msgs);
          this.cache.put({ msgs, queue: st, generation });
        }
      } else if (result.status === 'OFFSET_ILLEGAL') {
        log('pull %o: offset %d illegal, the broker says %d', mq, offset, result.nextBeginOffset);
      }
      if (st.seekOffset === -1) st.pullOffset = nextOffset;
      this.pullService.executePullRequestImmediately(pr);
    } catch (err) {
      if (this.pullService.signal.aborted || pq.dropped) return;
      if (generation !== st.generation) {
        // Abandoned by seek(): pull again from the offset it set.
        this.pullService.executePullRequestImmediately(pr);
        return;
      }
      this.events.brokerFailed(mq.brokerName, addr, 'PULL_MESSAGE', err);
      log('pull %o failed: %s', mq, (err as Error)?.message ?? err);
      const flowControl = err instanceof BrokerError && err.code === ResponseCode.FLOW_CONTROL;
      this.pullService.executePullRequestLater(
        pr,
        flowControl ? PULL_TIME_DELAY_MILLS_WHEN_BROKER_FLOW_CONTROL : base.pullTimeDelayMillsWhenException,
      );
    } finally {
      this.pullService.signal.removeEventListener('abort', onShutdown);
      if (st.pullAbort === abort) st.pullAbort = null;
    }
  }

  // ------------------------------------------------------------------ rebalance host and broker calls

  private masterAddress(brokerName: string): string | undefined {
    return this.instance!.findBrokerMasterAddress(brokerName) ?? this.instance!.findBrokerAddress(brokerName);
  }

  private async withMaster<T>(mq: MessageQueue, call: (addr: string) => Promise<T>): Promise<T> {
    let addr = this.masterAddress(mq.brokerName);
    if (!addr) {
      await this.instance!.getTopicRoute(mq.topic, { refresh: true }).catch(() => undefined);
      addr = this.masterAddress(mq.brokerName);
    }
    if (!addr) throw new BrokerAddressNotFoundError(mq.brokerName);
    return call(addr);
  }

  /**
   * RebalanceLitePullImpl.computePullFromWhereWithException: the committed offset (memory first, then
   * the broker), else where consumeFromWhere says. Throws when the broker cannot be asked.
   */
  async computePullFromWhere(mq: MessageQueue): Promise<number> {
    const last = await this.offsetStore.readOffset(mq, 'memory_then_store');
    if (last >= 0) return last;
    if (last !== -1)
      throw new ConsumerStateError(this.stateValue, `the committed offset of ${queueKeyOf(mq)} could not be read`);
    const retry = isRetryTopic(mq.topic);
    switch (this.config.base.consumeFromWhere) {
      case 'CONSUME_FROM_FIRST_OFFSET':
        return 0;
      case 'CONSUME_FROM_TIMESTAMP':
        if (retry) return this.maxOffset(mq);
        return this.withMaster(mq, (addr) =>
          this.instance!.searchOffsetByTimestamp(addr, mq, this.consumeTimestampMs, ADMIN_OFFSET_TIMEOUT_MS),
        );
      default:
        return retry ? 0 : this.maxOffset(mq);
    }
  }
}

function queueKeyOf(mq: MessageQueue): string {
  return `${mq.topic}/${mq.brokerName}/${mq.queueId}`;
}
