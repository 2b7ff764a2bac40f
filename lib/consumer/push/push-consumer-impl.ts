import createDebug from '../../debug.js';
import {
  buildSubscriptionData,
  isRetryTopic,
  queueKey,
  retryTopic,
  type ConsumeMessageDirectlyResult,
  type MessageQueue,
  type SubscriptionData,
} from '../../../protocol/internal.js';
import { checkTopicName } from '../../../protocol/resource-names.js';
import { MQClientInstance, ScheduledTask, type ConsumerInner } from '../../client/index.js';
import { ConsumeMessageConcurrentlyService } from './consume-message-concurrently-service.js';
import { ConsumeMessageOrderlyService } from './consume-message-orderly-service.js';
import type { MessageListener, MessageListenerConcurrently, MessageListenerOrderly } from '../core/consume-types.js';
import { onConsumed, pullMessage } from './consume-pull.js';
import { consumeMessageDirectly, resetOffset, runningInfo } from './consumer-admin.js';
import { ConsumerEvents } from '../core/consumer-events.js';
import { ConsumerStatsRecorder, type ConsumerStats } from '../core/consumer-stats.js';
import { consumerStats } from './push-stats.js';
import { BrokerAddressNotFoundError, ConsumerOptionError, ConsumerStateError, SendBackFailedError } from '../errors.js';
import { queueLimitsFromTopic, type FlowLimits } from '../core/flow-control.js';
import type { MessageExt } from '../core/message.js';
import {
  defaultLocalOffsetStoreDir,
  LocalFileOffsetStore,
  RemoteBrokerOffsetStore,
  type OffsetStore,
} from '../core/offset-store.js';
import {
  effectiveMaxReconsumeTimes,
  resolveConsumerOptions,
  type PushConsumerConfig,
  type PushConsumerOptions,
} from '../core/options.js';
import type { ProcessQueue } from '../core/process-queue.js';
import {
  acquireConsumerInstance,
  checkNameServerAtStart,
  consumerIdsOf,
  subscribeQueuesOf,
} from '../core/consumer-instance.js';
import { PullMessageService } from '../core/pull-message-service.js';
import { PausedQueues } from './pause.js';
import { RebalancePushImpl } from '../core/rebalance-impl.js';
import {
  buildSubscription,
  checkClientInBroker,
  checkSubscriptionExpression,
  type SubscriptionExpression,
} from '../core/sql-subscription.js';
import { createPopConsumeService, type PopConsumeService } from '../pop/pop-consume-service.js';
import { republishToRetry, sendMessageBack } from './send-back.js';
import { startConsumerTrace, type ConsumerTrace } from '../../trace/trace-hooks.js';
import { checkMetricsOptions, type ConsumerMetrics, type MetricsOptions } from '../../metrics/index.js';
import { ConsumerInstrumentation, startConsumerMetrics } from '../core/events.js';
import type { ConsumerState } from '../core/lifecycle.js';
import type { PushHost } from './push-host.js';
import type { PushConsumeService, PushRunning } from './push-running.js';

const log = createDebug('rocketwire:consumer');

type StartingParts = { -readonly [K in keyof PushRunning]?: PushRunning[K] };

/** Java's consumeTimestamp default: 30 minutes before start. */
const DEFAULT_CONSUME_TIMESTAMP_LAG_MS = 30 * 60_000;
const OFFSET_API_TIMEOUT_MS = 5000;
const ADMIN_OFFSET_TIMEOUT_MS = 6000;
const LOCK_TIMEOUT_MS = 1000;
/** 5.x RebalanceService's minInterval (rocketmq.client.rebalance.minInterval): the retry after an unbalanced round. */
const REBALANCE_MIN_INTERVAL_MS = 1000;

export type { ConsumerState };

/**
 * The push consumer's machinery (DefaultMQPushConsumerImpl): what the client instance (ConsumerInner)
 * and the consume services (ConsumeHost) talk to. Internal: users hold the thin PushConsumer, which
 * keeps this in a private field. The modules of the same folder that hold the pull path
 * (consume-pull.ts), send-backs (send-back.ts) and the broker-initiated requests (consumer-admin.ts)
 * see it through PushHost (push-host.ts); what start() makes is one PushRunning (push-running.ts).
 */
export class PushConsumerImpl implements ConsumerInner, PushHost {
  readonly config: PushConsumerConfig;
  readonly recorder: ConsumerStatsRecorder;
  /** The 'undecodable', 'brokerError' and 'brokerReachable' events (PushConsumer.on). */
  readonly events = new ConsumerEvents();
  /** The instrumentation events' state (events.ts) and the metrics (lib/metrics; null when off). */
  readonly instr = new ConsumerInstrumentation(this.events, () => this.config.clock.now());
  private readonly metricsOptions: MetricsOptions | undefined;
  private readonly expressions = new Map<string, SubscriptionExpression>();
  readonly subscriptionInner = new Map<string, SubscriptionData>();
  listener: MessageListener | null = null;
  private stateValue: ConsumerState = 'CREATED';
  paused = false;
  /** POP mode (clientRebalance=false): the topics the broker hands out by pop. */
  readonly popService: PopConsumeService | null;
  /** What start() made: the client instance, offset store, consume service, trace and metrics. */
  private runningValue: PushRunning | null = null;
  /** While start() runs: what it has made so far, which a failed start's shutdown() releases. */
  private startingParts: StartingParts | null = null;
  readonly pullService: PullMessageService;
  /** pause(topicOrQueues) / resume(...): queues whose pulls are parked (pause.ts). */
  readonly pausedQueues: PausedQueues;
  readonly rebalance: RebalancePushImpl;
  private readonly tasks: ScheduledTask[] = [];
  /** Pulls sent and OFFSET_ILLEGAL handling under way; shutdown waits for them. */
  readonly inflightPulls = new Set<Promise<void>>();
  limits: FlowLimits;
  startTimestamp = 0;
  private consumeTimestampMs = 0;
  /** Round-robin index over the retry topic's queues for republished messages. */
  publishIndex = 0;
  private shutdownPromise: Promise<void> | null = null;
  /** The last rebalance threw: the next failure is not logged again, a success is (info). */
  private rebalanceFailing = false;
  private resetChain: Promise<void> = Promise.resolve();

  constructor(options: PushConsumerOptions) {
    this.config = resolveConsumerOptions(options);
    this.events.logger = this.config.logger;
    this.events.label = `consumer ${this.config.consumerGroup}`;
    const badMetrics = checkMetricsOptions(options.metrics);
    if (badMetrics) throw new ConsumerOptionError(badMetrics.option, badMetrics.message);
    this.metricsOptions = options.metrics;
    this.recorder = new ConsumerStatsRecorder(this.config.clock);
    this.pullService = new PullMessageService(
      (pr) => pullMessage(this, pr),
      this.config.clock,
      (pr, err) => this.instr.crashed('pull', err, pr.messageQueue),
    );
    this.pausedQueues = new PausedQueues(this.pullService);
    for (const [topic, expr] of Object.entries(this.config.subscriptions)) this.expressions.set(topic, expr);
    this.limits = {
      pullThresholdForQueue: this.config.pullThresholdForQueue,
      pullThresholdSizeForQueueMiB: this.config.pullThresholdSizeForQueueMiB,
      consumeConcurrentlyMaxSpan: this.config.consumeConcurrentlyMaxSpan,
      orderly: this.config.orderly,
    };
    this.popService = createPopConsumeService(this);
    const consumer = this;
    this.rebalance = new RebalancePushImpl({
      config: this.config,
      // getters: both are read when the rebalance runs, after start() made them
      get clientId() {
        return consumer.clientId;
      },
      get offsetStore() {
        return consumer.offsetStore;
      },
      subscriptionTable: () => this.subscriptionInner,
      subscribeQueues: (topic) => subscribeQueuesOf(this.run.instance, topic),
      consumerIdList: (topic) =>
        consumerIdsOf(this.run.instance, this.config.consumerGroup, topic, {
          answered: (brokerName, addr) => this.events.brokerAnswered(brokerName, addr, 'GET_CONSUMER_LIST_BY_GROUP'),
          failed: (brokerName, addr, err) =>
            this.events.brokerFailed(brokerName, addr, 'GET_CONSUMER_LIST_BY_GROUP', err),
        }),
      computePullFromWhere: (mq) => this.computePullFromWhere(mq),
      lockBatch: (brokerName, mqs) => this.lockBatch(brokerName, mqs),
      hasMaster: (brokerName) => this.instance?.findBrokerMasterAddress(brokerName) != null,
      unlockBatch: (brokerName, mqs, oneway) => this.unlockBatch(brokerName, mqs, oneway),
      dispatchPullRequests: (prs) => {
        for (const pr of prs) this.pullService.executePullRequestImmediately(pr);
      },
      messageQueueChanged: (topic) => this.messageQueueChanged(topic),
      awaitConsumeIdle: (pq, timeoutMs) =>
        this.runningValue?.consume.orderly
          ? this.runningValue.consume.service.awaitConsumeIdle(pq, timeoutMs)
          : Promise.resolve(true),
      serverAssignment: this.popService ? (topic) => this.popService!.query(topic) : undefined,
    });
  }

  // ------------------------------------------------------------------ ConsumerInner (lib/client)

  get groupName(): string {
    return this.config.consumerGroup;
  }
  get messageModel(): 'CLUSTERING' | 'BROADCASTING' {
    return this.config.messageModel;
  }
  readonly consumeType = 'CONSUME_PASSIVELY' as const;
  get consumeFromWhere(): string {
    return this.config.consumeFromWhere;
  }

  subscriptions(): SubscriptionData[] {
    return [...this.subscriptionInner.values()];
  }

  /** Rebalance now (NOTIFY_CONSUMER_IDS_CHANGED, resume, subscribe after start). */
  doRebalance(): void {
    if (this.stateValue !== 'RUNNING' || this.paused) return;
    this.rebalance.doRebalance().then(
      () => {
        if (this.rebalanceFailing)
          this.config.logger.info(`consumer ${this.config.consumerGroup}: rebalance works again`);
        this.rebalanceFailing = false;
      },
      (err: unknown) => {
        log('rebalance failed: %s', (err as Error)?.message ?? err);
        // once per run of failures: the periodic rebalance repeats it every rebalanceIntervalMs
        if (!this.rebalanceFailing)
          this.config.logger.warn(
            `consumer ${this.config.consumerGroup}: rebalance failed: ${(err as Error)?.message ?? String(err)}`,
          );
        this.rebalanceFailing = true;
        this.instr.crashed('rebalance', err);
      },
    );
  }

  async persistOffsets(): Promise<void> {
    if (!this.runningValue) return;
    await this.runningValue.offsetStore.persistAll(this.rebalance.heldQueues());
  }

  // ------------------------------------------------------------------ what PushConsumer exposes

  get state(): ConsumerState {
    return this.stateValue;
  }

  /** The client id the group sees (ip@instance), known after start. */
  get clientId(): string {
    return this.runningValue?.clientId ?? '';
  }

  /** What start() made; null before start(). */
  get running(): PushRunning | null {
    return this.runningValue;
  }

  /** What start() made, for the paths that run only once started. */
  get run(): PushRunning {
    if (!this.runningValue) throw new ConsumerStateError(this.stateValue, 'the consumer is not started');
    return this.runningValue;
  }

  /** The client instance once started, else null. */
  get instance(): MQClientInstance | null {
    return this.runningValue?.instance ?? null;
  }

  get offsetStore(): OffsetStore {
    return this.run.offsetStore;
  }

  /** enableTrace: the SubBefore/SubAfter records' dispatcher (lib/trace); null when off or not started. */
  get trace(): ConsumerTrace | null {
    return this.runningValue?.trace ?? null;
  }

  /** The metrics (lib/metrics); null when off or not started. */
  get metrics(): ConsumerMetrics | null {
    return this.runningValue?.metrics ?? null;
  }

  get maxReconsumeTimes(): number {
    return effectiveMaxReconsumeTimes(this.config);
  }

  /** Subscribes to a topic with a tag expression ("*" or "TagA || TagB") or { sql }; allowed before or after start. */
  subscribe(topic: string, expression: SubscriptionExpression = '*'): this {
    if (typeof topic !== 'string' || topic === '') throw new ConsumerOptionError('topic', 'must be a non-empty string');
    const badTopic = checkTopicName(topic);
    if (badTopic) throw new ConsumerOptionError('topic', badTopic);
    expression = checkSubscriptionExpression(topic, expression, 'expression', this.config);
    this.expressions.set(topic, expression);
    if (this.stateValue === 'RUNNING') {
      this.subscriptionInner.set(topic, buildSubscription(topic, expression, this.config.clock.now()));
      this.run.instance.sendHeartbeatToAllBrokers().then(
        () => this.doRebalance(),
        (err: unknown) => log('heartbeat after subscribe failed: %s', (err as Error)?.message ?? err),
      );
    }
    return this;
  }

  /** Removes a subscription; its queues are dropped at the next rebalance. */
  unsubscribe(topic: string): this {
    this.expressions.delete(topic);
    this.subscriptionInner.delete(topic);
    return this;
  }

  onMessage(listener: MessageListener): this {
    if (typeof listener !== 'function') throw new ConsumerOptionError('listener', 'must be a function');
    this.listener = listener;
    return this;
  }

  /** Pauses pulling and the periodic rebalance (running handler calls finish); resume() rebalances and pulls again. */
  suspend(): void {
    this.paused = true;
  }
  resume(): void {
    this.paused = false;
    this.doRebalance();
  }

  /** Client instance, routes, heartbeat, the first rebalance (awaited), pulls, then the periodic tasks. */
  async start(listener?: MessageListener): Promise<void> {
    if (listener) this.onMessage(listener);
    if (this.stateValue !== 'CREATED')
      throw new ConsumerStateError(this.stateValue, `cannot start a consumer in state ${this.stateValue}`);
    if (!this.listener)
      throw new ConsumerStateError(this.stateValue, 'no message listener: pass one to start() or onMessage()');
    if (this.expressions.size === 0)
      throw new ConsumerStateError(this.stateValue, 'no subscription: call subscribe(topic, expression) first');
    this.stateValue = 'STARTING';
    const { config } = this;
    try {
      const now = config.clock.now();
      this.startTimestamp = now;
      this.consumeTimestampMs = config.consumeTimestampMs ?? now - DEFAULT_CONSUME_TIMESTAMP_LAG_MS;
      for (const [topic, expr] of this.expressions)
        this.subscriptionInner.set(topic, buildSubscription(topic, expr, now));
      if (config.messageModel === 'CLUSTERING') {
        const rt = retryTopic(config.consumerGroup);
        this.subscriptionInner.set(rt, buildSubscriptionData(rt, '*', now));
      }
      const instance = await acquireConsumerInstance(config, this);
      try {
        await checkNameServerAtStart(instance, config, this.expressions.keys().next().value!);
      } catch (err) {
        // Nothing else was acquired yet: give the instance back and start over from CREATED, so
        // that start() may be called again once a name server is up.
        await instance.unregisterConsumer(config.consumerGroup).catch(() => undefined);
        await instance.release(config.logger);
        this.subscriptionInner.clear();
        this.stateValue = 'CREATED';
        throw err;
      }
      // What a start that fails from here on has made, for shutdown() to release.
      const parts: StartingParts = { instance, clientId: instance.clientId };
      this.startingParts = parts;
      this.instr.attach(instance.remoting);
      parts.stopNameServerEvents = instance.onNameServerStatus((s) => this.events.nameServerStatus(s));
      const offsetStore: OffsetStore =
        config.messageModel === 'CLUSTERING'
          ? new RemoteBrokerOffsetStore({
              queryConsumerOffset: (mq) => this.queryConsumerOffset(mq),
              updateConsumerOffsetOneway: (mq, offset) => this.updateConsumerOffsetOneway(mq, offset),
              warn: (m) => config.logger.warn(`consumer ${config.consumerGroup}: ${m}`),
            })
          : new LocalFileOffsetStore(
              config.offsetStoreDir ?? defaultLocalOffsetStoreDir(),
              instance.clientId,
              config.consumerGroup,
            );
      parts.offsetStore = offsetStore;
      await offsetStore.load();
      const trace = config.enableTrace ? startConsumerTrace(config) : null;
      parts.trace = trace;
      const metrics = await startConsumerMetrics(this.metricsOptions, instance.clientId, config.consumerGroup, () =>
        this.rebalance.processQueueTable.values(),
      );
      parts.metrics = metrics;
      const consume: PushConsumeService = config.orderly
        ? { orderly: true, service: new ConsumeMessageOrderlyService(this, this.listener as MessageListenerOrderly) }
        : {
            orderly: false,
            service: new ConsumeMessageConcurrentlyService(this, this.listener as MessageListenerConcurrently),
          };
      this.runningValue = {
        instance,
        clientId: instance.clientId,
        offsetStore,
        consume,
        trace,
        metrics,
        stopNameServerEvents: parts.stopNameServerEvents,
      };
      this.startingParts = null;
      await instance.start();
      await Promise.all(
        [...this.subscriptionInner.keys()].map((t) =>
          instance.getTopicRoute(t, { refresh: true }).catch((err: unknown) => {
            // A name server that answers (TOPIC_NOT_EXIST, say) is no failure: the route is polled
            // again every pollNameServerIntervalMs, as Java does.
            if (t !== retryTopic(config.consumerGroup))
              config.logger.warn(
                `consumer ${config.consumerGroup}: no route for topic ${t} yet (${(err as Error).message.split('\n')[0]}); polling for it`,
              );
          }),
        ),
      );
      await checkClientInBroker(
        instance,
        config.consumerGroup,
        this.subscriptionInner.values(),
        config.mqClientApiTimeoutMs,
      );
      await instance.sendHeartbeatToAllBrokers();
      this.stateValue = 'RUNNING';
      this.pullService.start();
      const balanced = await this.rebalance.doRebalance();
      // 5.x RebalanceService: the next round after 1 s when this one did not balance, else after the
      // interval. A suspended consumer does not rebalance (Java's tryRebalance answers "not balanced").
      const rebalanceTask = new ScheduledTask(
        'rebalance',
        config.rebalanceIntervalMs,
        async () =>
          !this.paused && (await this.rebalance.doRebalance()) ? config.rebalanceIntervalMs : REBALANCE_MIN_INTERVAL_MS,
        log,
        config.clock,
      );
      rebalanceTask.start(balanced ? config.rebalanceIntervalMs : REBALANCE_MIN_INTERVAL_MS);
      this.tasks.push(rebalanceTask);
      if (!config.orderly) {
        const sweep = new ScheduledTask(
          'cleanExpiredMsg',
          config.consumeTimeoutMs,
          () => this.cleanExpiredMsg(),
          log,
          config.clock,
        );
        sweep.start(config.consumeTimeoutMs);
        this.tasks.push(sweep);
      } else if (config.messageModel === 'CLUSTERING') {
        const locks = new ScheduledTask(
          'lockAll',
          config.lockIntervalMs,
          () => this.rebalance.lockAll(),
          log,
          config.clock,
        );
        locks.start(Math.min(1000, config.lockIntervalMs));
        this.tasks.push(locks);
      }
      log('consumer %s started as %s', config.consumerGroup, instance.clientId);
    } catch (err) {
      if (this.stateValue === 'STARTING' || this.stateValue === 'RUNNING') {
        await this.shutdown().catch(() => undefined);
      }
      throw err;
    }
  }

  /**
   * Stops pulling, waits up to awaitTerminationMillisWhenShutdown for running handler calls, unlocks
   * (orderly), persists offsets, unregisters from the brokers and releases the client instance.
   */
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
    const { config } = this;
    // A start that failed half-way made only some of the parts.
    const r: StartingParts = this.runningValue ?? this.startingParts ?? {};
    await Promise.all(this.tasks.map((t) => t.stop()));
    this.popService?.shutdown();
    await this.rebalance.shutdown();
    await this.pullService.shutdown();
    await Promise.allSettled([...this.inflightPulls]);
    const wait = config.awaitTerminationMillisWhenShutdown;
    if (r.consume) await r.consume.service.shutdown(wait);
    await r.trace?.shutdown();
    if (config.orderly && config.messageModel === 'CLUSTERING' && r.instance) await this.rebalance.unlockAll();
    if (r.offsetStore)
      await r.offsetStore
        .persistAll(this.rebalance.heldQueues())
        .catch((err: unknown) => log('final offset flush failed: %s', (err as Error).message));
    this.rebalance.dropAll();
    this.recorder.close();
    r.metrics?.close();
    if (r.instance) {
      await r.instance.unregisterConsumer(config.consumerGroup).catch(() => undefined);
      await r.instance.release(config.logger);
    }
    r.stopNameServerEvents?.();
    this.instr.detach();
    this.stateValue = 'SHUTDOWN';
    log('consumer %s shut down', config.consumerGroup);
  }

  /** Queues this consumer holds now. */
  assignment(): MessageQueue[] {
    return this.rebalance.heldQueues();
  }

  /** Counters, rates and per-queue cache figures (read by the benchmark). */
  stats(): ConsumerStats {
    return consumerStats(this);
  }

  // ------------------------------------------------------------------ ConsumeHost and broker requests (other modules)

  onConsumed(pq: ProcessQueue): void {
    onConsumed(this, pq);
  }
  sendMessageBack(msg: MessageExt, delayLevel: number, brokerName: string): Promise<boolean> {
    return sendMessageBack(this, msg, delayLevel, brokerName);
  }
  invalidHandlerResult(value: unknown, mq: MessageQueue, count: number): void {
    this.events.invalidHandlerResult(
      value,
      mq.topic,
      count,
      this.config.orderly
        ? 'nothing, SUCCESS, SUSPEND_CURRENT_QUEUE_A_MOMENT, COMMIT or ROLLBACK'
        : 'nothing, CONSUME_SUCCESS or RECONSUME_LATER',
    );
  }
  republishToRetry(msg: MessageExt, reconsumeTime: number): Promise<boolean> {
    return republishToRetry(this, msg, reconsumeTime);
  }
  runningInfo(): Buffer {
    return runningInfo(this);
  }
  consumeMessageDirectly(msg: MessageExt, brokerName: string): Promise<ConsumeMessageDirectlyResult> {
    return consumeMessageDirectly(this, msg, brokerName);
  }
  resetOffset(topic: string, offsets: Map<string, number>): Promise<void> {
    // Java's MQClientInstance.resetOffset is synchronized: one reset at a time.
    const p = this.resetChain.then(() => resetOffset(this, topic, offsets));
    this.resetChain = p.catch(() => undefined);
    return p;
  }
  /** GET_CONSUMER_STATUS_FROM_CLIENT: the in-memory offsets of `topic`'s queues (Java's cloneOffsetTable). */
  consumerStatus(topic: string): [MessageQueue, number][] {
    if (!this.runningValue) return [];
    return [...this.runningValue.offsetStore.cloneOffsetTable(topic).values()].map((e) => [e.mq, e.offset]);
  }

  // ------------------------------------------------------------------ rebalance host

  private async messageQueueChanged(topic: string): Promise<void> {
    this.recorder.rebalances++;
    this.instr.rebalanced(
      topic,
      [...this.rebalance.processQueueTable.values()]
        .filter((e) => e.mq.topic === topic && !e.pq.dropped)
        .map((e) => e.mq),
    );
    const sub = this.subscriptionInner.get(topic);
    if (sub) sub.subVersion = Math.max(this.config.clock.now(), sub.subVersion + 1);
    const held = this.rebalance.processQueueTable.size;
    if (held > 0) {
      const l = queueLimitsFromTopic(this.config, this.config, held);
      this.limits = { ...this.limits, ...l };
    }
    await this.run.instance.sendHeartbeatToAllBrokers();
  }

  /** Master address, else any address of the broker (Java's findBrokerAddressInSubscribe(name, MASTER_ID, false): offsets). */
  private masterAddress(brokerName: string): string | undefined {
    return this.run.instance.findBrokerMasterAddress(brokerName) ?? this.run.instance.findBrokerAddress(brokerName);
  }

  async masterAddressOrRefresh(mq: MessageQueue): Promise<string> {
    let addr = this.masterAddress(mq.brokerName);
    if (!addr) {
      await this.run.instance.getTopicRoute(mq.topic, { refresh: true }).catch(() => undefined);
      addr = this.masterAddress(mq.brokerName);
    }
    if (!addr) throw new BrokerAddressNotFoundError(mq.brokerName);
    return addr;
  }

  private async queryConsumerOffset(mq: MessageQueue): Promise<number> {
    let addr: string | undefined;
    try {
      addr = await this.masterAddressOrRefresh(mq);
      const offset = await this.run.instance.queryConsumerOffset(
        addr,
        this.config.consumerGroup,
        mq,
        OFFSET_API_TIMEOUT_MS,
      );
      this.events.brokerAnswered(mq.brokerName, addr, 'QUERY_CONSUMER_OFFSET');
      return offset;
    } catch (err) {
      this.events.brokerFailed(mq.brokerName, addr, 'QUERY_CONSUMER_OFFSET', err);
      throw err;
    }
  }

  private async updateConsumerOffsetOneway(mq: MessageQueue, offset: number): Promise<void> {
    const addr = this.masterAddress(mq.brokerName);
    if (!addr) return;
    await this.run.instance.updateConsumerOffsetOneway(addr, this.config.consumerGroup, mq, offset);
    this.instr.offsetCommitted(mq, offset, addr);
  }

  /** §9.5: the start offset of a newly assigned queue; negative = skip it this round. */
  async computePullFromWhere(mq: MessageQueue): Promise<number> {
    const last = await this.offsetStore.readOffset(mq, 'store');
    if (last >= 0) return last;
    if (last !== -1) return -1;
    const isRetry = isRetryTopic(mq.topic);
    try {
      switch (this.config.consumeFromWhere) {
        case 'CONSUME_FROM_FIRST_OFFSET':
          return 0;
        case 'CONSUME_FROM_TIMESTAMP': {
          const addr = await this.masterAddressOrRefresh(mq);
          if (isRetry) return await this.run.instance.getMaxOffset(addr, mq, ADMIN_OFFSET_TIMEOUT_MS);
          return await this.run.instance.searchOffsetByTimestamp(
            addr,
            mq,
            this.consumeTimestampMs,
            ADMIN_OFFSET_TIMEOUT_MS,
          );
        }
        default: {
          if (isRetry) return 0;
          const addr = await this.masterAddressOrRefresh(mq);
          return await this.run.instance.getMaxOffset(addr, mq, ADMIN_OFFSET_TIMEOUT_MS);
        }
      }
    } catch (err) {
      log('start offset of %o: %s', mq, (err as Error).message);
      const request =
        this.config.consumeFromWhere === 'CONSUME_FROM_TIMESTAMP' && !isRetry
          ? 'SEARCH_OFFSET_BY_TIMESTAMP'
          : 'GET_MAX_OFFSET';
      this.events.brokerFailed(mq.brokerName, this.masterAddress(mq.brokerName), request, err);
      return -1;
    }
  }

  /**
   * Locks live on the master only (Java's lock/unlock ask findBrokerAddressInSubscribe(name, MASTER_ID,
   * true)): a slave answers LOCK_BATCH_MQ from its own lock table, so during a failover two consumers
   * could both "own" an ordered queue. Without a master the lock is not granted.
   */
  private async lockBatch(brokerName: string, mqs: MessageQueue[]): Promise<MessageQueue[]> {
    const addr = this.run.instance.findBrokerMasterAddress(brokerName);
    try {
      if (!addr) throw new BrokerAddressNotFoundError(brokerName);
      const granted = await this.run.instance.lockBatchMQ(addr, this.config.consumerGroup, mqs, LOCK_TIMEOUT_MS);
      this.events.brokerAnswered(brokerName, addr, 'LOCK_BATCH_MQ');
      return granted;
    } catch (err) {
      // An orderly queue is not pulled until locked: without this a refused lock was silent.
      this.events.brokerFailed(brokerName, addr, 'LOCK_BATCH_MQ', err);
      throw err;
    }
  }

  private async unlockBatch(brokerName: string, mqs: MessageQueue[], oneway: boolean): Promise<void> {
    const addr = this.run.instance.findBrokerMasterAddress(brokerName);
    if (!addr) return;
    await this.run.instance.unlockBatchMQ(addr, this.config.consumerGroup, mqs, oneway, LOCK_TIMEOUT_MS);
  }

  /** ConsumeHost (orderly): lock one queue again after the lock was lost. */
  async lockQueue(mq: MessageQueue): Promise<boolean> {
    try {
      const granted = await this.lockBatch(mq.brokerName, [mq]);
      const ok = granted.some((g) => queueKey(g) === queueKey(mq));
      if (ok) this.rebalance.lockGranted(mq);
      return ok;
    } catch {
      return false;
    }
  }

  // ------------------------------------------------------------------ expiry sweep (§9.7)

  private async cleanExpiredMsg(): Promise<void> {
    const timeout = this.config.consumeTimeoutMs;
    for (const { mq, pq } of [...this.rebalance.processQueueTable.values()]) {
      if (pq.dropped) continue;
      const { cleaned, offset } = await pq.cleanExpiredMsg(this.config.clock.now(), timeout, async (msg) => {
        // Java sends expired messages back with delay level 3 through the same path as failures.
        const ok = await this.sendMessageBack(msg, 3, mq.brokerName);
        if (!ok) throw new SendBackFailedError(msg.msgId);
      });
      if (cleaned > 0) {
        this.recorder.expired += cleaned;
        // Java leaves the offset to the next completed call; when every other message is already done
        // there is none, and the queue would stay committed before the expired (already retried) message.
        if (offset >= 0 && !pq.dropped) this.offsetStore.updateOffset(mq, offset, true);
        log('expired %d messages of %o', cleaned, mq);
        this.onConsumed(pq);
      }
    }
  }
}
