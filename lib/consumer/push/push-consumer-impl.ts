import createDebug from '../../debug.js';
import {
  buildSubscriptionData,
  queueKey,
  retryTopic,
  type ConsumeMessageDirectlyResult,
  type MessageQueue,
  type SubscriptionData,
} from '../../../protocol/internal.js';
import { checkTopicName } from '../../../protocol/resource-names.js';
import type { ConsumerInner, MQClientInstance } from '../../client/index.js';
import { ConsumeMessageConcurrentlyService } from './consume-message-concurrently-service.js';
import { ConsumeMessageOrderlyService } from './consume-message-orderly-service.js';
import type { MessageListener, MessageListenerConcurrently, MessageListenerOrderly } from '../core/consume-types.js';
import { onConsumed, pullMessage } from './consume-pull.js';
import { consumeMessageDirectly, resetOffset, runningInfo } from './consumer-admin.js';
import { ConsumerEvents } from '../core/consumer-events.js';
import { ConsumerStatsRecorder, type ConsumerStats } from '../core/consumer-stats.js';
import { consumerStats } from './push-stats.js';
import { ConsumerOptionError, ConsumerStateError } from '../errors.js';
import { queueLimitsFromTopic, type FlowLimits } from '../core/flow-control.js';
import type { MessageExt } from '../core/message.js';
import type { OffsetStore } from '../core/offset-store.js';
import { effectiveMaxReconsumeTimes, resolveConsumerOptions, type ConsumerConfig } from '../core/consumer-config.js';
import type { PushConsumerOptions } from '../core/options.js';
import type { ProcessQueue } from '../core/process-queue.js';
import { PullMessageService } from '../core/pull-message-service.js';
import { PausedQueues } from './pause.js';
import { RebalancePushImpl } from './rebalance-push-impl.js';
import { pushRebalanceHost } from './push-rebalance-host.js';
import {
  buildSubscription,
  checkClientInBroker,
  checkSubscriptionExpression,
  type SubscriptionExpression,
} from '../core/sql-subscription.js';
import { createPopConsumeService, type PopConsumeService } from '../pop/pop-consume-service.js';
import { republishToRetry, sendMessageBack } from './send-back.js';
import type { DuplicateGuard } from '../core/duplicate-guard.js';
import { startConsumerTrace, type ConsumerTrace } from '../../trace/trace-hooks.js';
import type { ConsumerMetrics, MetricsOptions, TracingOptions } from '../../metrics/index.js';
import {
  checkInstrumentOptions,
  consumerDuplicateGuard,
  guardedConsumeListener,
  tracedConsumeListener,
} from './consume-listener.js';
import { ConsumerInstrumentation, startConsumerMetrics } from '../core/events.js';
import { ConsumerLifecycle, DEFAULT_CONSUME_TIMESTAMP_LAG_MS, type ConsumerState } from '../core/lifecycle.js';
import { PushBrokerCalls } from './push-broker-calls.js';
import { cleanExpiredMsg } from './expiry-sweep.js';
import type { PushHost } from './push-host.js';
import type { PushConsumeService, PushRunning } from './push-running.js';

const log = createDebug('rocketwire:consumer');

type StartingParts = { -readonly [K in keyof PushRunning]?: PushRunning[K] };

export type { ConsumerState };

/**
 * The push consumer's machinery (DefaultMQPushConsumerImpl): what the client instance (ConsumerInner)
 * and the consume services (ConsumeHost) talk to. Internal: users hold the thin PushConsumer, which
 * keeps this in a private field. The modules of the same folder that hold the pull path
 * (consume-pull.ts), send-backs (send-back.ts) and the broker-initiated requests (consumer-admin.ts)
 * see it through PushHost (push-host.ts); what start() makes is one PushRunning (push-running.ts).
 */
export class PushConsumerImpl implements ConsumerInner, PushHost {
  readonly config: ConsumerConfig;
  readonly recorder: ConsumerStatsRecorder;
  /** The 'undecodable', 'brokerError' and 'brokerReachable' events (PushConsumer.on). */
  readonly events = new ConsumerEvents();
  /** The instrumentation events' state (events.ts) and the metrics (lib/metrics; null when off). */
  readonly instr = new ConsumerInstrumentation(this.events, () => this.config.clock.now());
  private readonly metricsOptions: MetricsOptions | undefined;
  private readonly tracingOptions: TracingOptions | undefined;
  private readonly expressions = new Map<string, SubscriptionExpression>();
  readonly subscriptionInner = new Map<string, SubscriptionData>();
  private listenerValue: MessageListener | null = null;
  /** The handler the consume services call: the duplicate guard's wrapper when it is on. */
  private consumeListenerValue: MessageListener | null = null;
  /** The `duplicateGuard` option's guard; null when off. */
  readonly duplicateGuard: DuplicateGuard | null;
  private pausedValue = false;
  /** POP mode (clientRebalance=false): the topics the broker hands out by pop. */
  readonly popService: PopConsumeService | null;
  private readonly lifecycle: ConsumerLifecycle;
  /** Consumer offsets and queue locks at the masters. */
  private readonly brokerCalls: PushBrokerCalls;
  /** What start() made: the client instance, offset store, consume service, trace and metrics. */
  private runningValue: PushRunning | null = null;
  /** While start() runs: what it has made so far, which a failed start's shutdown() releases. */
  private startingParts: StartingParts | null = null;
  readonly pullService: PullMessageService;
  /** pause(topicOrQueues) / resume(...): queues whose pulls are parked (pause.ts). */
  readonly pausedQueues: PausedQueues;
  readonly rebalance: RebalancePushImpl;
  /** Pulls sent and OFFSET_ILLEGAL handling under way; shutdown waits for them. */
  readonly inflightPulls = new Set<Promise<void>>();
  private limitsValue: FlowLimits;
  private startTimestampValue = 0;
  /** Round-robin index over the retry topic's queues for republished messages. */
  publishIndex = 0;
  /** The last rebalance threw: the next failure is not logged again, a success is (info). */
  private rebalanceFailing = false;
  private resetChain: Promise<void> = Promise.resolve();

  constructor(options: PushConsumerOptions) {
    this.config = resolveConsumerOptions(options);
    this.events.logger = this.config.logger;
    this.events.label = `consumer ${this.config.consumerGroup}`;
    checkInstrumentOptions(options);
    this.metricsOptions = options.metrics;
    this.tracingOptions = options.tracing;
    this.recorder = new ConsumerStatsRecorder(this.config.clock);
    this.lifecycle = new ConsumerLifecycle(this.config, log);
    this.brokerCalls = new PushBrokerCalls(this);
    this.pullService = new PullMessageService(
      (pr) => pullMessage(this, pr),
      this.config.clock,
      (pr, err) => this.instr.crashed('pull', err, pr.messageQueue),
    );
    this.pausedQueues = new PausedQueues(this.pullService);
    for (const [topic, expr] of Object.entries(this.config.subscriptions)) this.expressions.set(topic, expr);
    this.limitsValue = {
      pullThresholdForQueue: this.config.pullThresholdForQueue,
      pullThresholdSizeForQueueMiB: this.config.pullThresholdSizeForQueueMiB,
      consumeConcurrentlyMaxSpan: this.config.consumeConcurrentlyMaxSpan,
      orderly: this.config.orderly,
    };
    this.duplicateGuard = consumerDuplicateGuard(options, this.config, this.events);
    const pop = createPopConsumeService(this);
    this.popService = pop;
    this.rebalance = new RebalancePushImpl(
      pushRebalanceHost(this, this.brokerCalls, pop, (topics) => this.rebalanceRoundChanged(topics)),
    );
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

  /** Rebalance now (resume, subscribe after start, a new connection) or `spaced` (NOTIFY_CONSUMER_IDS_CHANGED). */
  doRebalance(spaced = false): void {
    if (this.lifecycle.state !== 'RUNNING' || this.paused) return;
    this.rebalance.doRebalance(spaced).then(
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
    return this.lifecycle.state;
  }

  /** The client id the group sees (ip@instance), known after start. */
  get clientId(): string {
    return this.runningValue?.clientId ?? '';
  }

  /** The handler given to start() or onMessage(); null before. */
  get listener(): MessageListener | null {
    return this.listenerValue;
  }
  /** The handler as the consume services call it (with the duplicate guard around it when on); null before start. */
  get consumeListener(): MessageListener | null {
    return this.consumeListenerValue;
  }
  /** suspend() was called and resume() not yet. */
  get paused(): boolean {
    return this.pausedValue;
  }
  /** The flow-control limits in force (per-topic limits divide among the queues held). */
  get limits(): FlowLimits {
    return this.limitsValue;
  }
  /** Clock time start() began (GET_CONSUMER_RUNNING_INFO). */
  get startTimestamp(): number {
    return this.startTimestampValue;
  }

  /** What start() made; null before start(). */
  get running(): PushRunning | null {
    return this.runningValue;
  }

  /** What start() made, for the paths that run only once started. */
  get run(): PushRunning {
    if (!this.runningValue) throw new ConsumerStateError(this.lifecycle.state, 'the consumer is not started');
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
    if (this.lifecycle.state === 'RUNNING') {
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
    this.listenerValue = listener;
    return this;
  }

  /** Pauses pulling and the periodic rebalance (running handler calls finish); resume() rebalances and pulls again. */
  suspend(): void {
    this.pausedValue = true;
  }
  resume(): void {
    this.pausedValue = false;
    this.doRebalance();
  }

  /** Client instance, routes, heartbeat, the first rebalance (awaited), pulls, then the periodic tasks. */
  async start(listener?: MessageListener): Promise<void> {
    if (listener) this.onMessage(listener);
    const { lifecycle } = this;
    lifecycle.checkCreated();
    const handler = this.listener ?? lifecycle.refuse('no message listener: pass one to start() or onMessage()');
    if (this.expressions.size === 0) lifecycle.refuse('no subscription: call subscribe(topic, expression) first');
    await lifecycle.start(
      () => this.doStart(handler),
      () => this.shutdown(),
    );
  }

  private async doStart(given: MessageListener): Promise<void> {
    const { config, lifecycle } = this;
    const traced = await tracedConsumeListener(given, this.tracingOptions, config.consumerGroup);
    const now = config.clock.now();
    this.startTimestampValue = now;
    this.brokerCalls.consumeTimestampMs = config.consumeTimestampMs ?? now - DEFAULT_CONSUME_TIMESTAMP_LAG_MS;
    for (const [topic, expr] of this.expressions)
      this.subscriptionInner.set(topic, buildSubscription(topic, expr, now));
    const retry = retryTopic(config.consumerGroup);
    if (config.messageModel === 'CLUSTERING') this.subscriptionInner.set(retry, buildSubscriptionData(retry, '*', now));
    const instance = await lifecycle.acquire(this, this.expressions.keys().next().value!, () =>
      this.subscriptionInner.clear(),
    );
    // What a start that fails from here on has made, for shutdown() to release.
    const parts: StartingParts = { instance, clientId: instance.clientId };
    this.startingParts = parts;
    this.instr.attach(instance.remoting);
    parts.stopNameServerEvents = instance.onNameServerStatus((s) => this.events.nameServerStatus(s));
    const offsetStore = this.brokerCalls.newOffsetStore(instance);
    parts.offsetStore = offsetStore;
    await offsetStore.load();
    const trace = config.enableTrace ? startConsumerTrace(config) : null;
    parts.trace = trace;
    const metrics = await startConsumerMetrics(this.metricsOptions, instance.clientId, config.consumerGroup, () =>
      this.rebalance.processQueueTable.values(),
    );
    parts.metrics = metrics;
    // what the consume services and the POP paths call: the handler in its spans, behind the guard
    const listener = guardedConsumeListener(traced, this.duplicateGuard, config.orderly, metrics);
    this.consumeListenerValue = listener;
    const consume: PushConsumeService = config.orderly
      ? { orderly: true, service: new ConsumeMessageOrderlyService(this, listener as MessageListenerOrderly) }
      : {
          orderly: false,
          service: new ConsumeMessageConcurrentlyService(this, listener as MessageListenerConcurrently),
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
    await lifecycle.refreshRoutes(instance, this.subscriptionInner.keys(), (t, reason) => {
      if (t !== retry)
        config.logger.warn(`consumer ${config.consumerGroup}: no route for topic ${t} yet (${reason}); polling for it`);
    });
    await checkClientInBroker(
      instance,
      config.consumerGroup,
      this.subscriptionInner.values(),
      config.mqClientApiTimeoutMs,
    );
    await instance.sendHeartbeatToAllBrokers();
    lifecycle.running();
    this.pullService.start();
    // A suspended consumer does not rebalance (Java's tryRebalance answers "not balanced").
    lifecycle.scheduleRebalance(
      await this.rebalance.doRebalance(),
      async () => !this.paused && (await this.rebalance.doRebalance()),
    );
    if (!config.orderly) {
      lifecycle.schedule('cleanExpiredMsg', config.consumeTimeoutMs, config.consumeTimeoutMs, () =>
        cleanExpiredMsg(this),
      );
    } else if (config.messageModel === 'CLUSTERING') {
      lifecycle.schedule('lockAll', config.lockIntervalMs, Math.min(1000, config.lockIntervalMs), () =>
        this.rebalance.lockAll(),
      );
    }
    log('consumer %s started as %s', config.consumerGroup, instance.clientId);
  }

  /**
   * Stops pulling, waits up to awaitTerminationMillisWhenShutdown for running handler calls, unlocks
   * (orderly), persists offsets, unregisters from the brokers and releases the client instance.
   */
  shutdown(): Promise<void> {
    return this.lifecycle.shutdown(() => this.doShutdown());
  }

  private async doShutdown(): Promise<void> {
    const { config } = this;
    // A start that failed half-way made only some of the parts.
    const r: StartingParts = this.runningValue ?? this.startingParts ?? {};
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
    if (r.instance) await this.lifecycle.release(r.instance);
    r.stopNameServerEvents?.();
    this.instr.detach();
    log('consumer %s shut down', config.consumerGroup);
  }

  /** Queues this consumer holds now. */
  assignment(): MessageQueue[] {
    return this.rebalance.heldQueues();
  }

  /** Counters, rates and per-queue cache figures (read by the benchmark). */
  stats(): ConsumerStats {
    const s = consumerStats(this);
    if (this.duplicateGuard) s.duplicates = this.duplicateGuard.stats();
    return s;
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

  /**
   * After a round that changed `topics`' queues, before its new pulls (Java's messageQueueChanged, once
   * a round): their new subVersions, per-queue limits, and one heartbeat that carries them. The
   * versions change only now, so a pull of a queue already held never carries one the broker has
   * not been sent (it would be answered SUBSCRIPTION_NOT_LATEST) for longer than this heartbeat.
   */
  private async rebalanceRoundChanged(topics: string[]): Promise<void> {
    const now = this.config.clock.now();
    for (const topic of topics) {
      const sub = this.subscriptionInner.get(topic);
      if (sub) sub.subVersion = Math.max(now, sub.subVersion + 1);
    }
    const held = this.rebalance.processQueueTable.size;
    if (held > 0) this.limitsValue = { ...this.limits, ...queueLimitsFromTopic(this.config, this.config, held) };
    // with heartbeat V2 every broker gets the full data (the new subVersions), as Java's isRebalance
    await this.run.instance.sendHeartbeatToAllBrokers(true);
  }

  /** docs/protocol-facts.md#start-offset: the start offset of a newly assigned queue; negative = skip it this round. */
  computePullFromWhere(mq: MessageQueue): Promise<number> {
    return this.brokerCalls.computePullFromWhere(mq);
  }

  /** ConsumeHost (orderly): lock one queue again after the lock was lost. */
  async lockQueue(mq: MessageQueue): Promise<boolean> {
    try {
      const granted = await this.brokerCalls.lockBatch(mq.brokerName, [mq]);
      const ok = granted.some((g) => queueKey(g) === queueKey(mq));
      if (ok) this.rebalance.lockGranted(mq);
      return ok;
    } catch {
      return false;
    }
  }
}
