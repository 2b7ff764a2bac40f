import createDebug from '../../debug.js';
import {
  messageQueue,
  queueKey,
  type ConsumeMessageDirectlyResult,
  type MessageQueue,
  type SubscriptionData,
} from '../../../protocol/internal.js';
import type { ConsumerInner, MQClientInstance } from '../../client/index.js';
import { checkMetricsOptions, type ConsumerMetrics, type MetricsOptions } from '../../metrics/index.js';
import { ConsumerEvents } from '../core/consumer-events.js';
import { startConsumerMetrics } from '../core/events.js';
import type { ConsumerHealth } from '../core/health.js';
import { newInflateStats } from '../core/inflate.js';
import { ConsumerLifecycle, DEFAULT_CONSUME_TIMESTAMP_LAG_MS } from '../core/lifecycle.js';
import type { MessageExt } from '../core/message.js';
import type { OffsetStore } from '../core/offset-store.js';
import { ProcessQueue } from '../core/process-queue.js';
import { PullMessageService } from '../core/pull-message-service.js';
import { newPullRequest } from '../core/pull-request.js';
import { ConsumerOptionError, ConsumerStateError } from '../errors.js';
import { LitePullAssignment, queueKeyOf, type AssignedQueue } from './lite-pull-assignment.js';
import { LitePullBrokerCalls, type LitePullBrokerCallsHost } from './lite-pull-broker-calls.js';
import { LitePullCache, type ConsumeRequest } from './lite-pull-cache.js';
import {
  resolveLitePullConsumerOptions,
  type LitePullConsumerConfig,
  type LitePullConsumerOptions,
} from './lite-pull-options.js';
import type { LitePullRunning } from './lite-pull-running.js';
import { LitePullTask, type LitePullCounters, type LitePullTaskHost } from './lite-pull-task.js';
import { RebalanceLitePullImpl, type RebalanceLitePullOwner } from './rebalance-lite-pull-impl.js';
import { litePullHealth, litePullRunningInfo, type LitePullInfoHost } from './lite-pull-info.js';
import { optionValidator } from '../../validate.js';
import { checkClientInBroker, type SubscriptionExpression } from '../core/sql-subscription.js';
import { startConsumerTrace, traceHandedOver } from '../../trace/trace-hooks.js';
import { liteSubscription, subscribedWhileRunning } from './lite-pull-subscription.js';

const log = createDebug('rocketwire:consumer:lite');

type StartingParts = { -readonly [K in keyof LitePullRunning]?: LitePullRunning[K] };

/**
 * Lifecycle of a lite pull consumer, as Java's ServiceState.
 * @category Consuming
 */
export type LitePullConsumerState = 'CREATED' | 'STARTING' | 'RUNNING' | 'SHUTTING_DOWN' | 'SHUTDOWN';

/**
 * The lite pull consumer's machinery (DefaultLitePullConsumerImpl). Pulls run ahead of poll(): one
 * PullRequest per held queue goes round the PullMessageService (lite-pull-task.ts); each FOUND batch
 * is put in the queue's ProcessQueue and in the shared cache (LitePullCache), and poll() takes
 * batches from it. Subscribe mode rebalances with RebalanceLitePullImpl (the allocation strategies of the push
 * consumer, so it shares a group with Java's lite pull and push consumers); assign mode holds the
 * queues it was given.
 */
/** "must be a non-negative integer, got x". */
const nonNegative = optionValidator(ConsumerOptionError, { atLeast: 'non-negative' });

export class LitePullConsumerImpl
  implements ConsumerInner, LitePullTaskHost, LitePullBrokerCallsHost, RebalanceLitePullOwner, LitePullInfoHost
{
  readonly config: LitePullConsumerConfig;
  readonly events = new ConsumerEvents();
  private readonly metricsOptions: MetricsOptions | undefined;
  readonly consumeType = 'CONSUME_ACTIVELY' as const;
  readonly assigned = new LitePullAssignment();
  readonly cache: LitePullCache;
  readonly pullService: PullMessageService;
  readonly rebalance: RebalanceLitePullImpl;
  readonly subscriptionInner = new Map<string, SubscriptionData>();
  private mode: 'NONE' | 'SUBSCRIBE' | 'ASSIGN' = 'NONE';
  private assignedQueues: MessageQueue[] = [];
  private readonly lifecycle: ConsumerLifecycle;
  private readonly brokerCalls: LitePullBrokerCalls;
  private readonly task: LitePullTask;
  /** What start() made: the client instance, offset store and metrics. */
  private runningValue: LitePullRunning | null = null;
  /** While start() runs: what it has made so far, which a failed start's shutdown() releases. */
  private startingParts: StartingParts | null = null;
  private nextAutoCommitDeadline = -1;
  private startTimestampValue = 0;
  /** Pulls sent, batches cached, and flow-control parks by reason (tests and the benchmark read them). */
  readonly counters: LitePullCounters = {
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
    this.lifecycle = new ConsumerLifecycle(base, log);
    this.brokerCalls = new LitePullBrokerCalls(this);
    this.task = new LitePullTask(this);
    this.pullService = new PullMessageService((pr) => this.task.pullMessage(pr), base.clock);
    for (const [topic, expr] of Object.entries(base.subscriptions)) this.subscribe(topic, expr);
    this.rebalance = new RebalanceLitePullImpl(this);
  }

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

  doRebalance(spaced = false): void {
    if (this.state !== 'RUNNING' || this.mode !== 'SUBSCRIBE') return;
    this.rebalance
      .doRebalance(spaced)
      .catch((err: unknown) => log('rebalance failed: %s', (err as Error)?.message ?? err));
  }

  async persistOffsets(): Promise<void> {
    if (!this.runningValue) return;
    await this.runningValue.offsetStore.persistAll(this.assignment());
  }

  runningInfo(): Buffer {
    return litePullRunningInfo(this);
  }

  /** Java's MQClientInstance answers CONSUME_MESSAGE_DIRECTLY only for push consumers. */
  consumeMessageDirectly(): Promise<ConsumeMessageDirectlyResult> {
    return Promise.reject(
      new ConsumerStateError(this.state, 'a lite pull consumer has no handler to consume a message directly'),
    );
  }

  /** RESET_CONSUMER_CLIENT_OFFSET: each held queue of the topic is sought to its new offset. */
  async resetOffset(topic: string, offsets: Map<string, number>): Promise<void> {
    for (const st of this.assigned.queues()) {
      if (st.mq.topic !== topic) continue;
      const offset = offsets.get(queueKey(st.mq));
      if (offset === undefined) continue;
      this.task.seek(st, offset);
      this.offsetStore.updateOffset(st.mq, offset, false);
    }
  }

  consumerStatus(topic: string): [MessageQueue, number][] {
    if (!this.runningValue) return [];
    return [...this.runningValue.offsetStore.cloneOffsetTable(topic).values()].map((e) => [e.mq, e.offset]);
  }

  get state(): LitePullConsumerState {
    return this.lifecycle.state;
  }
  /** The client id the group sees (ip@instance), known after start. */
  get clientId(): string {
    return this.runningValue?.clientId ?? '';
  }
  /** Clock time start() began (GET_CONSUMER_RUNNING_INFO). */
  get startTimestamp(): number {
    return this.startTimestampValue;
  }
  /** What start() made; null before start(). */
  get running(): LitePullRunning | null {
    return this.runningValue;
  }
  /** What start() made, for the paths that run only once started. */
  get run(): LitePullRunning {
    if (!this.runningValue) throw new ConsumerStateError(this.state, 'the consumer is not started');
    return this.runningValue;
  }
  /** The client instance once started, else null. */
  get instance(): MQClientInstance | null {
    return this.runningValue?.instance ?? null;
  }
  get offsetStore(): OffsetStore {
    return this.run.offsetStore;
  }
  /** Delivery latency, await time (arrival to poll) and the cache gauges (lib/metrics); null when off or not started. */
  get metrics(): ConsumerMetrics | null {
    return this.runningValue?.metrics ?? null;
  }

  private setMode(mode: 'SUBSCRIBE' | 'ASSIGN'): void {
    if (this.mode !== 'NONE' && this.mode !== mode) {
      throw new ConsumerStateError(this.state, 'subscribe() and assign() are mutually exclusive on one consumer');
    }
    this.mode = mode;
  }

  subscribe(topic: string, expression: SubscriptionExpression = '*'): void {
    const sd = liteSubscription(topic, expression, this.config.base);
    this.setMode('SUBSCRIBE');
    this.subscriptionInner.set(topic, sd);
    if (this.state === 'RUNNING') subscribedWhileRunning(this, sd, log);
  }

  unsubscribe(topic: string): void {
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
    if (this.state === 'RUNNING') this.applyAssign();
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
    return litePullHealth(this);
  }

  /** The queues held now (subscribe mode: the rebalance's share; assign mode: those given). */
  assignment(): MessageQueue[] {
    return this.assigned.queues().map((st) => st.mq);
  }

  async start(): Promise<void> {
    const { lifecycle } = this;
    lifecycle.checkCreated();
    if (this.mode === 'NONE')
      lifecycle.refuse('nothing to consume: call subscribe(topic, expression) or assign(queues) first');
    await lifecycle.start(
      () => this.doStart(),
      () => this.shutdown(),
    );
  }

  private async doStart(): Promise<void> {
    const { lifecycle } = this;
    const base = this.config.base;
    const now = base.clock.now();
    this.startTimestampValue = now;
    this.brokerCalls.consumeTimestampMs = base.consumeTimestampMs ?? now - DEFAULT_CONSUME_TIMESTAMP_LAG_MS;
    const firstTopic =
      this.mode === 'SUBSCRIBE' ? this.subscriptionInner.keys().next().value : this.assignedQueues[0]?.topic;
    const instance = await lifecycle.acquire(this, firstTopic ?? base.consumerGroup);
    // What a start that fails from here on has made, for shutdown() to release.
    const parts: StartingParts = { instance, clientId: instance.clientId };
    this.startingParts = parts;
    const stopNameServerEvents = instance.onNameServerStatus((s) => this.events.nameServerStatus(s));
    parts.stopNameServerEvents = stopNameServerEvents;
    const offsetStore = this.brokerCalls.newOffsetStore(instance);
    parts.offsetStore = offsetStore;
    await offsetStore.load();
    const metrics = await startConsumerMetrics(this.metricsOptions, instance.clientId, base.consumerGroup, () =>
      this.assigned.queues(),
    );
    const trace = base.enableTrace ? startConsumerTrace(base) : null;
    this.runningValue = { instance, clientId: instance.clientId, offsetStore, metrics, stopNameServerEvents, trace };
    this.startingParts = null;
    await instance.start();
    const topics =
      this.mode === 'SUBSCRIBE'
        ? [...this.subscriptionInner.keys()]
        : [...new Set(this.assignedQueues.map((q) => q.topic))];
    await lifecycle.refreshRoutes(instance, topics, (t, reason) =>
      base.logger.warn(
        `lite pull consumer ${base.consumerGroup}: no route for topic ${t} yet (${reason}); polling for it`,
      ),
    );
    // MQClientInstance.checkClientInBroker, as DefaultLitePullConsumerImpl runs it at start: a SQL92
    // subscription the broker refuses fails start() before the group's first heartbeat carries it
    await checkClientInBroker(instance, base.consumerGroup, this.subscriptionInner.values(), base.mqClientApiTimeoutMs);
    await instance.sendHeartbeatToAllBrokers();
    lifecycle.running();
    this.pullService.start();
    if (this.mode === 'ASSIGN') this.applyAssign();
    else lifecycle.scheduleRebalance(await this.rebalance.doRebalance(), () => this.rebalance.doRebalance());
    log('lite pull consumer %s started as %s (%s)', base.consumerGroup, instance.clientId, this.mode);
  }

  /** Stops the pulls, wakes waiting polls (with nothing), persists the committed offsets, unregisters. */
  shutdown(): Promise<void> {
    return this.lifecycle.shutdown(() => this.doShutdown());
  }

  private async doShutdown(): Promise<void> {
    // A start that failed half-way made only some of the parts.
    const r: StartingParts = this.runningValue ?? this.startingParts ?? {};
    await this.rebalance.shutdown();
    await this.pullService.shutdown();
    await this.task.settled();
    this.cache.close();
    r.metrics?.close();
    await r.trace?.shutdown();
    // Java's shutdown persists the committed offsets; what poll() returned since the last commit is not committed.
    if (r.offsetStore)
      await r.offsetStore
        .persistAll(this.assignment())
        .catch((err: unknown) => log('final offset flush failed: %s', (err as Error).message));
    this.assigned.dropAll();
    if (r.instance) {
      await this.lifecycle.release(r.instance);
      r.stopNameServerEvents?.();
    }
  }

  private checkRunning(what: string): void {
    if (this.state !== 'RUNNING')
      throw new ConsumerStateError(this.state, `${what} needs a running consumer (state ${this.state})`);
  }

  /**
   * Java's poll: with autoCommit, first commit everything polled so far when the interval has passed
   * (the first poll always does); then one cached batch, waiting up to `timeoutMs` for one.
   */
  async poll(timeoutMs = this.config.pollTimeoutMs): Promise<MessageExt[]> {
    this.checkRunning('poll()');
    nonNegative.intAtLeast('timeoutMs', timeoutMs, 0);
    if (this.config.autoCommit) this.maybeAutoCommit();
    const req = await this.takeRequest(timeoutMs);
    if (req === null) return [];
    if (this.metrics)
      this.metrics.beforeConsume(req.msgs, this.config.base.clock.now(), this.metrics.arrivalOf(req.msgs));
    req.queue.consumeOffset = this.removeTaken(req);
    return req.msgs;
  }

  /** The next live batch, removed from its ProcessQueue but not counted as consumed (the iterators commit per message). */
  takeRequest(timeoutMs: number): Promise<ConsumeRequest | null> {
    return this.cache.takeLive(timeoutMs);
  }

  /** Takes a polled batch out of its ProcessQueue; returns the offset after it (or the smallest still cached). */
  removeTaken(req: ConsumeRequest): number {
    const pq = req.queue.pq;
    pq.removeMessage(req.msgs);
    pq.markConsumed(this.config.base.clock.now());
    this.task.releaseParked();
    traceHandedOver(this.runningValue?.trace ?? null, req.msgs);
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
    const mqs = this.assigned.commit(offsets, this.offsetStore);
    if (persist && mqs.length > 0) await this.offsetStore.persistAll(mqs);
  }

  /** The committed offset: in memory, else the broker's (−1: none). */
  async committed(mq: MessageQueue): Promise<number> {
    this.checkRunning('committed()');
    const offset = await this.offsetStore.readOffset(mq, 'memory_then_store');
    if (offset === -2)
      throw new ConsumerStateError(
        this.state,
        `the committed offset of ${queueKeyOf(mq)} could not be read from the broker`,
      );
    return offset;
  }

  private heldOrThrow(mq: MessageQueue, what: string): AssignedQueue {
    const st = this.assigned.get(mq);
    if (!st) {
      const why = this.mode === 'SUBSCRIBE' ? ' (it may be rebalancing)' : '';
      throw new ConsumerStateError(this.state, `${what}: ${queueKeyOf(mq)} is not assigned to this consumer${why}`);
    }
    return st;
  }

  async seek(mq: MessageQueue, offset: number): Promise<void> {
    this.checkRunning('seek()');
    const st = this.heldOrThrow(mq, 'seek()');
    if (!Number.isInteger(offset)) throw new ConsumerOptionError('offset', `must be an integer, got ${String(offset)}`);
    const [min, max] = await Promise.all([this.brokerCalls.minOffset(mq), this.brokerCalls.maxOffset(mq)]);
    if (offset < min || offset > max)
      throw new ConsumerOptionError('offset', `seek offset ${offset} is outside ${min}..${max} of ${queueKeyOf(mq)}`);
    this.task.seek(st, offset);
  }

  async seekToBegin(mq: MessageQueue): Promise<void> {
    this.checkRunning('seekToBegin()');
    await this.seek(mq, await this.brokerCalls.minOffset(mq));
  }

  async seekToEnd(mq: MessageQueue): Promise<void> {
    this.checkRunning('seekToEnd()');
    await this.seek(mq, await this.brokerCalls.maxOffset(mq));
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
      if (!st?.paused) continue;
      st.paused = false;
      this.task.resumePaused(st.pr);
    }
  }

  isPaused(mq: MessageQueue): boolean {
    return this.assigned.get(mq)?.paused ?? true;
  }

  async offsetForTimestamp(mq: MessageQueue, timestampMs: number): Promise<number> {
    this.checkRunning('offsetForTimestamp()');
    nonNegative.intAtLeast('timestampMs', timestampMs, 0);
    return this.brokerCalls.offsetForTimestamp(mq, timestampMs);
  }

  async fetchMessageQueues(topic: string): Promise<MessageQueue[]> {
    this.checkRunning('fetchMessageQueues()');
    return this.brokerCalls.fetchMessageQueues(topic);
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

  /** Where a queue's first pull starts (LitePullBrokerCalls.computePullFromWhere). */
  computePullFromWhere(mq: MessageQueue): Promise<number> {
    return this.brokerCalls.computePullFromWhere(mq);
  }
}
