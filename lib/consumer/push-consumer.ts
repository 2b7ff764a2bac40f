import createDebug from 'debug';
import {
  AUTO_CREATE_TOPIC_KEY_TOPIC,
  buildPullSysFlag,
  buildSubscriptionData,
  encodeConsumerRunningInfo,
  CLIENT_INNER_PRODUCER_GROUP,
  encodeProperties,
  isRetryTopic,
  messageQueueKey,
  retryTopic,
  type CMResultName,
  type ConsumeMessageDirectlyResult,
  type SubscriptionData,
  RequestCode,
  ResponseCode,
  SendMessageRequestHeaderV2,
} from '../../protocol/index.js';
import {
  MQClientInstance,
  resolveInstanceName,
  ScheduledTask,
  topicRouteToPublishQueues,
  topicRouteToSubscribeQueues,
  type ConsumerInner,
  type PullResult,
} from '../client/index.js';
import { BrokerError } from '../remoting/index.js';
import { resetRetryTopic, type ConsumeHost } from './consume-host.js';
import { ConsumeMessageConcurrentlyService, JAVA_INT_MAX } from './consume-message-concurrently-service.js';
import { ConsumeMessageOrderlyService } from './consume-message-orderly-service.js';
import {
  ConsumeConcurrentlyStatus,
  ConsumeOrderlyStatus,
  isThenable,
  type MessageListener,
  type MessageListenerConcurrently,
  type MessageListenerOrderly,
} from './consume-types.js';
import { ConsumerStatsRecorder, type ConsumerStats, type QueueStats } from './consumer-stats.js';
import { BrokerAddressNotFoundError, ConsumerStateError, NoRetryQueueError, SendBackFailedError } from './errors.js';
import {
  flowControlReason,
  PULL_TIME_DELAY_MILLS_WHEN_BROKER_FLOW_CONTROL,
  PULL_TIME_DELAY_MILLS_WHEN_CACHE_FLOW_CONTROL,
  PULL_TIME_DELAY_MILLS_WHEN_SUSPEND,
  queueLimitsFromTopic,
  type FlowLimits,
} from './flow-control.js';
import type { MessageExt } from './message.js';
import { messageQueue, type MessageQueue } from './message-queue.js';
import {
  defaultLocalOffsetStoreDir,
  LocalFileOffsetStore,
  RemoteBrokerOffsetStore,
  type OffsetStore,
} from './offset-store.js';
import { effectiveMaxReconsumeTimes, resolveConsumerOptions, type PushConsumerConfig, type PushConsumerOptions } from './options.js';
import type { ProcessQueue } from './process-queue.js';
import { PullMessageService } from './pull-message-service.js';
import type { PullRequest } from './pull-request.js';
import { RebalancePushImpl } from './rebalance-impl.js';
import { tagMatches } from './subscription.js';

const log = createDebug('rocketwire:consumer');

/** Java's consumeTimestamp default: 30 minutes before start. */
const DEFAULT_CONSUME_TIMESTAMP_LAG_MS = 30 * 60_000;
const SEND_MSG_BACK_TIMEOUT_MS = 5000;
const OFFSET_API_TIMEOUT_MS = 5000;
const ADMIN_OFFSET_TIMEOUT_MS = 6000;
const LOCK_TIMEOUT_MS = 1000;

export type ConsumerState = 'CREATED' | 'STARTING' | 'RUNNING' | 'SHUTTING_DOWN' | 'SHUTDOWN';

/**
 * RocketMQ's push consumer (DefaultMQPushConsumer + DefaultMQPushConsumerImpl): rebalances the queues of
 * its subscriptions across the group, long-polls each held queue, caches pulled messages per queue, runs
 * the handler concurrently or orderly, and commits offsets that never pass an unconsumed message.
 *
 * ```ts
 * const consumer = new PushConsumer({ consumerGroup: 'cg', namesrvAddr: '127.0.0.1:9876' });
 * consumer.subscribe('TopicTest', 'TagA || TagB');
 * await consumer.start((msgs) => { for (const m of msgs) console.log(m.body.toString()); return 'CONSUME_SUCCESS'; });
 * ...
 * await consumer.shutdown();
 * ```
 */
export class PushConsumer implements ConsumerInner, ConsumeHost {
  readonly config: PushConsumerConfig;
  readonly recorder = new ConsumerStatsRecorder();
  private readonly expressions = new Map<string, string>();
  private readonly subscriptionInner = new Map<string, SubscriptionData>();
  private listener: MessageListener | null = null;
  private stateValue: ConsumerState = 'CREATED';
  private paused = false;
  private instance: MQClientInstance | null = null;
  private offsetStoreValue: OffsetStore | null = null;
  private concurrently: ConsumeMessageConcurrentlyService | null = null;
  private orderlyService: ConsumeMessageOrderlyService | null = null;
  private readonly pullService: PullMessageService;
  private readonly rebalance: RebalancePushImpl;
  private readonly tasks: ScheduledTask[] = [];
  private readonly inflightPulls = new Set<Promise<void>>();
  private limits: FlowLimits;
  private startTimestamp = 0;
  private consumeTimestampMs = 0;
  private publishIndex = 0;
  private clientIdValue = '';
  private shutdownPromise: Promise<void> | null = null;

  constructor(options: PushConsumerOptions) {
    this.config = resolveConsumerOptions(options);
    this.pullService = new PullMessageService((pr) => this.pullMessage(pr), this.config.clock);
    for (const [topic, expr] of Object.entries(this.config.subscriptions)) this.expressions.set(topic, expr);
    this.limits = {
      pullThresholdForQueue: this.config.pullThresholdForQueue,
      pullThresholdSizeForQueueMiB: this.config.pullThresholdSizeForQueueMiB,
      consumeConcurrentlyMaxSpan: this.config.consumeConcurrentlyMaxSpan,
      orderly: this.config.orderly,
    };
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const self = this;
    this.rebalance = new RebalancePushImpl({
      config: this.config,
      get clientId() {
        return self.clientIdValue;
      },
      get offsetStore() {
        return self.offsetStore;
      },
      subscriptionTable: () => this.subscriptionInner,
      subscribeQueues: (topic) => this.subscribeQueues(topic),
      consumerIdList: (topic) => this.consumerIdList(topic),
      computePullFromWhere: (mq) => this.computePullFromWhere(mq),
      lockBatch: (brokerName, mqs) => this.lockBatch(brokerName, mqs),
      unlockBatch: (brokerName, mqs, oneway) => this.unlockBatch(brokerName, mqs, oneway),
      dispatchPullRequests: (prs) => {
        for (const pr of prs) this.pullService.executePullRequestImmediately(pr);
      },
      messageQueueChanged: (topic) => this.messageQueueChanged(topic),
      awaitConsumeIdle: (pq, timeoutMs) => this.orderlyService?.awaitConsumeIdle(pq, timeoutMs) ?? Promise.resolve(true),
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
    this.rebalance.doRebalance().catch((err: unknown) => log('rebalance failed: %s', (err as Error)?.message ?? err));
  }

  async persistOffsets(): Promise<void> {
    if (!this.offsetStoreValue) return;
    await this.offsetStoreValue.persistAll(this.rebalance.heldQueues());
  }

  // ------------------------------------------------------------------ public API

  get state(): ConsumerState {
    return this.stateValue;
  }

  /** The client id the group sees (ip@instance), known after start. */
  get clientId(): string {
    return this.clientIdValue;
  }

  get offsetStore(): OffsetStore {
    if (!this.offsetStoreValue) throw new ConsumerStateError(this.stateValue, 'the consumer is not started');
    return this.offsetStoreValue;
  }

  get maxReconsumeTimes(): number {
    return effectiveMaxReconsumeTimes(this.config);
  }

  /** Subscribes to a topic with a tag expression ("*" or "TagA || TagB"); allowed before or after start. */
  subscribe(topic: string, expression = '*'): this {
    if (typeof topic !== 'string' || topic === '') throw new TypeError('topic must be a non-empty string');
    this.expressions.set(topic, expression);
    if (this.stateValue === 'RUNNING') {
      this.subscriptionInner.set(topic, buildSubscriptionData(topic, expression, this.config.clock.now()));
      this.instance!.sendHeartbeatToAllBrokers().then(
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

  /** Sets the handler (concurrent, or orderly when the `orderly` option is on); start() may also take it. */
  onMessage(listener: MessageListenerConcurrently): this;
  onMessage(listener: MessageListenerOrderly): this;
  onMessage(listener: MessageListener): this {
    if (typeof listener !== 'function') throw new TypeError('the message listener must be a function');
    this.listener = listener;
    return this;
  }

  /** Pauses pulling (running handler calls finish); resume() rebalances and pulls again. */
  suspend(): void {
    this.paused = true;
  }
  resume(): void {
    this.paused = false;
    this.doRebalance();
  }

  /**
   * Starts the consumer: client instance, routes, heartbeat, then the first rebalance (awaited), pulls,
   * and the periodic rebalance, offset flush, expiry sweep and (orderly) lock renewal.
   */
  start(listener?: MessageListenerConcurrently): Promise<void>;
  start(listener: MessageListenerOrderly): Promise<void>;
  async start(listener?: MessageListener): Promise<void> {
    if (listener) this.onMessage(listener as MessageListenerConcurrently);
    if (this.stateValue !== 'CREATED') throw new ConsumerStateError(this.stateValue, `cannot start a consumer in state ${this.stateValue}`);
    if (!this.listener) throw new ConsumerStateError(this.stateValue, 'no message listener: pass one to start() or onMessage()');
    if (this.expressions.size === 0) throw new ConsumerStateError(this.stateValue, 'no subscription: call subscribe(topic, expression) first');
    this.stateValue = 'STARTING';
    const { config } = this;
    try {
      const now = config.clock.now();
      this.startTimestamp = now;
      this.consumeTimestampMs = config.consumeTimestampMs ?? now - DEFAULT_CONSUME_TIMESTAMP_LAG_MS;
      for (const [topic, expr] of this.expressions) this.subscriptionInner.set(topic, buildSubscriptionData(topic, expr, now));
      if (config.messageModel === 'CLUSTERING') {
        const rt = retryTopic(config.consumerGroup);
        this.subscriptionInner.set(rt, buildSubscriptionData(rt, '*', now));
      }
      const instanceName = config.messageModel === 'CLUSTERING' ? resolveInstanceName(config.instanceName) : (config.instanceName ?? 'DEFAULT');
      const instance = MQClientInstance.acquire({
        namesrvAddr: config.namesrvAddr,
        instanceName,
        ...(config.clientIp !== undefined ? { clientIp: config.clientIp } : {}),
        ...(config.serializeType !== undefined ? { serializeType: config.serializeType } : {}),
        ...(config.acl !== undefined ? { acl: config.acl } : {}),
        ...(config.heartbeatIntervalMs !== undefined ? { heartbeatIntervalMs: config.heartbeatIntervalMs } : {}),
        ...(config.pollNameServerIntervalMs !== undefined ? { pollNameServerIntervalMs: config.pollNameServerIntervalMs } : {}),
        ...(config.mqClientApiTimeoutMs !== undefined ? { mqClientApiTimeoutMs: config.mqClientApiTimeoutMs } : {}),
        persistOffsetIntervalMs: config.persistOffsetIntervalMs,
        clock: config.clock,
      });
      this.instance = instance;
      this.clientIdValue = instance.clientId;
      try {
        instance.registerConsumer(config.consumerGroup, this);
      } catch (err) {
        this.instance = null;
        await instance.release();
        throw err;
      }
      this.offsetStoreValue =
        config.messageModel === 'CLUSTERING'
          ? new RemoteBrokerOffsetStore({
              queryConsumerOffset: (mq) => this.queryConsumerOffset(mq),
              updateConsumerOffsetOneway: (mq, offset) => this.updateConsumerOffsetOneway(mq, offset),
            })
          : new LocalFileOffsetStore(config.offsetStoreDir ?? defaultLocalOffsetStoreDir(), instance.clientId, config.consumerGroup);
      await this.offsetStoreValue.load();
      if (config.orderly) this.orderlyService = new ConsumeMessageOrderlyService(this, this.listener as MessageListenerOrderly);
      else this.concurrently = new ConsumeMessageConcurrentlyService(this, this.listener as MessageListenerConcurrently);
      await instance.start();
      await Promise.all(
        [...this.subscriptionInner.keys()].map((t) =>
          instance.getTopicRoute(t, { refresh: true }).catch((err: unknown) => log('route of %s not available yet: %s', t, (err as Error).message)),
        ),
      );
      await instance.sendHeartbeatToAllBrokers();
      this.stateValue = 'RUNNING';
      this.pullService.start();
      await this.rebalance.doRebalance();
      const rebalanceTask = new ScheduledTask('rebalance', config.rebalanceIntervalMs, () => this.rebalance.doRebalance(), log, config.clock);
      rebalanceTask.start(config.rebalanceIntervalMs);
      this.tasks.push(rebalanceTask);
      if (!config.orderly) {
        const sweep = new ScheduledTask('cleanExpiredMsg', config.consumeTimeoutMs, () => this.cleanExpiredMsg(), log, config.clock);
        sweep.start(config.consumeTimeoutMs);
        this.tasks.push(sweep);
      } else if (config.messageModel === 'CLUSTERING') {
        const locks = new ScheduledTask('lockAll', config.lockIntervalMs, () => this.rebalance.lockAll(), log, config.clock);
        locks.start(Math.min(1000, config.lockIntervalMs));
        this.tasks.push(locks);
      }
      log('consumer %s started as %s', config.consumerGroup, this.clientIdValue);
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
    await Promise.all(this.tasks.map((t) => t.stop()));
    await this.rebalance.shutdown();
    await this.pullService.shutdown();
    await Promise.allSettled([...this.inflightPulls]);
    const wait = config.awaitTerminationMillisWhenShutdown;
    if (this.concurrently) await this.concurrently.shutdown(wait);
    if (this.orderlyService) await this.orderlyService.shutdown(wait);
    if (config.orderly && config.messageModel === 'CLUSTERING' && this.instance) await this.rebalance.unlockAll();
    if (this.offsetStoreValue) await this.persistOffsets().catch((err: unknown) => log('final offset flush failed: %s', (err as Error).message));
    this.rebalance.dropAll();
    if (this.instance) {
      await this.instance.unregisterConsumer(config.consumerGroup).catch(() => undefined);
      await this.instance.release();
    }
    this.stateValue = 'SHUTDOWN';
    log('consumer %s shut down', config.consumerGroup);
  }

  /** Queues this consumer holds now. */
  assignment(): MessageQueue[] {
    return this.rebalance.heldQueues();
  }

  /** Counters, rates and per-queue cache figures (read by the benchmark). */
  stats(): ConsumerStats {
    const now = this.config.clock.now();
    const s = this.recorder;
    const queues: QueueStats[] = [];
    for (const { mq, pq } of this.rebalance.processQueueTable.values()) {
      const pr = pq.pullRequest;
      queues.push({
        topic: mq.topic,
        brokerName: mq.brokerName,
        queueId: mq.queueId,
        cachedCount: pq.msgCount,
        cachedBytes: pq.msgSize,
        span: pq.maxSpan,
        committedOffset: this.offsetStoreValue?.readMemory(mq) ?? -1,
        pulledOffset: pr?.nextOffset ?? -1,
        flowControlPauses: { ...(pr?.flowControlPauses ?? { count: 0, size: 0, span: 0 }) },
        locked: pq.locked,
        dropped: pq.dropped,
      });
    }
    return {
      consumerGroup: this.config.consumerGroup,
      clientId: this.clientIdValue,
      pulls: s.pulls.total,
      pullsFound: s.pullsFound,
      pullErrors: s.pullErrors,
      messagesPulled: s.pulledMessages.total,
      messagesConsumed: s.consumedOk.total,
      messagesFailed: s.consumedFailed.total,
      sendBackOk: s.sendBackOk,
      sendBackFailed: s.sendBackFailed,
      republished: s.republished,
      localRetries: s.localRetries,
      expired: s.expired,
      rebalances: s.rebalances,
      flowControlPauses: { ...s.flowControl },
      pullTps: s.pulls.rate(now),
      pulledMsgTps: s.pulledMessages.rate(now),
      consumeOkTps: s.consumedOk.rate(now),
      consumeFailedTps: s.consumedFailed.rate(now),
      consumeRtMs: s.consumeRtCount === 0 ? 0 : s.consumeRtSum / s.consumeRtCount,
      consumeInFlight: this.concurrently?.inFlightCount ?? this.orderlyService?.inFlightCount ?? 0,
      consumeBacklog: this.concurrently?.backlogCount ?? 0,
      queues,
    };
  }

  /**
   * The async-iterator form: each message is acknowledged (CONSUME_SUCCESS) when the loop asks for the
   * next one; leaving the loop early (break/throw) shuts the consumer down, and the message being
   * handled then is not committed.
   */
  async *[Symbol.asyncIterator](): AsyncGenerator<MessageExt, void, undefined> {
    const ready: { msg: MessageExt; ack: (ok: boolean) => void }[] = [];
    let wake: (() => void) | null = null;
    const handler = (msgs: MessageExt[]): Promise<'CONSUME_SUCCESS' | 'RECONSUME_LATER'> => {
      let remaining = msgs.length;
      let allOk = true;
      return new Promise((resolve) => {
        for (const msg of msgs) {
          ready.push({
            msg,
            ack: (ok) => {
              if (!ok) allOk = false;
              if (--remaining === 0) resolve(allOk ? 'CONSUME_SUCCESS' : 'RECONSUME_LATER');
            },
          });
        }
        const w = wake;
        wake = null;
        w?.();
      });
    };
    if (this.stateValue === 'CREATED') await this.start(handler as MessageListenerConcurrently);
    let current: { msg: MessageExt; ack: (ok: boolean) => void } | undefined;
    try {
      for (;;) {
        while (ready.length === 0) {
          if (this.stateValue !== 'RUNNING') return;
          await new Promise<void>((resolve) => {
            wake = resolve;
          });
        }
        current = ready.shift()!;
        yield current.msg;
        current.ack(true);
        current = undefined;
      }
    } finally {
      current?.ack(false);
      await this.shutdown();
    }
  }

  // ------------------------------------------------------------------ pulling (§9.6)

  private pullMessage(pr: PullRequest): void {
    const pq = pr.processQueue;
    if (pq.dropped) return;
    const { config } = this;
    pq.lastPullTimestamp = config.clock.now();
    if (this.stateValue !== 'RUNNING' || this.paused) {
      this.pullService.executePullRequestLater(pr, PULL_TIME_DELAY_MILLS_WHEN_SUSPEND);
      return;
    }
    const reason = flowControlReason(pq, this.limits);
    if (reason !== null) {
      pr.flowControlPauses[reason]++;
      this.recorder.flowControl[reason]++;
      this.pullService.executePullRequestLater(pr, PULL_TIME_DELAY_MILLS_WHEN_CACHE_FLOW_CONTROL);
      return;
    }
    const sub = this.subscriptionInner.get(pr.messageQueue.topic);
    if (!sub) {
      this.pullService.executePullRequestLater(pr, PULL_TIME_DELAY_MILLS_WHEN_SUSPEND);
      return;
    }
    const p = this.doPull(pr, sub);
    this.inflightPulls.add(p);
    p.then(() => this.inflightPulls.delete(p));
  }

  private async doPull(pr: PullRequest, sub: SubscriptionData): Promise<void> {
    const { config } = this;
    const instance = this.instance!;
    const mq = pr.messageQueue;
    const pq = pr.processQueue;
    try {
      if (config.orderly) {
        if (config.messageModel === 'CLUSTERING' && !pq.locked) {
          this.pullService.executePullRequestLater(pr, config.pullTimeDelayMillsWhenException);
          return;
        }
        if (!pr.previouslyLocked) {
          // First pull since the lock was granted: start from the broker's committed offset (§9.6 step 5).
          const offset = await this.computePullFromWhere(mq);
          if (offset < 0) {
            this.pullService.executePullRequestLater(pr, config.pullTimeDelayMillsWhenException);
            return;
          }
          pr.previouslyLocked = true;
          pr.nextOffset = offset;
        }
      }
      let commitOffset = -1;
      if (config.messageModel === 'CLUSTERING') commitOffset = this.offsetStore.readMemory(mq);
      let target = instance.findBrokerAddressInSubscribe(mq.brokerName, pr.suggestWhichBrokerId);
      if (!target) {
        await instance.getTopicRoute(mq.topic, { refresh: true }).catch(() => undefined);
        target = instance.findBrokerAddressInSubscribe(mq.brokerName, pr.suggestWhichBrokerId);
      }
      if (!target) throw new BrokerAddressNotFoundError(mq.brokerName);
      // FLAG_SUSPEND always; FLAG_COMMIT_OFFSET only with an in-memory offset > 0 and never towards a slave.
      // Java 4.9 sends FLAG_SUBSCRIPTION only with postSubscriptionWhenPull (default off, not offered here).
      const sysFlag = buildPullSysFlag(commitOffset > 0 && !target.slave, true, false);
      const result = await instance.pullMessage(
        target.addr,
        {
          consumerGroup: config.consumerGroup,
          topic: mq.topic,
          queueId: mq.queueId,
          queueOffset: pr.nextOffset,
          maxMsgNums: config.pullBatchSize,
          sysFlag,
          commitOffset,
          suspendTimeoutMillis: config.brokerSuspendMaxTimeMs,
          subVersion: sub.subVersion,
          expressionType: 'TAG',
          bname: mq.brokerName,
        },
        config.pullTimeoutMs,
        this.pullService.signal,
      );
      if (pq.dropped) return;
      this.onPullResult(pr, sub, result);
    } catch (err) {
      if (this.pullService.signal.aborted || pq.dropped) return;
      this.recorder.pullErrors++;
      const flowControl = err instanceof BrokerError && err.code === ResponseCode.FLOW_CONTROL;
      log('pull %o failed: %s', mq, (err as Error)?.message ?? err);
      this.pullService.executePullRequestLater(
        pr,
        flowControl ? PULL_TIME_DELAY_MILLS_WHEN_BROKER_FLOW_CONTROL : config.pullTimeDelayMillsWhenException,
      );
    }
  }

  private onPullResult(pr: PullRequest, sub: SubscriptionData, result: PullResult): void {
    const { config } = this;
    const mq = pr.messageQueue;
    const pq = pr.processQueue;
    const now = config.clock.now();
    this.recorder.pulls.add(1, now);
    pr.suggestWhichBrokerId = result.suggestWhichBrokerId;
    switch (result.status) {
      case 'FOUND': {
        this.recorder.pullsFound++;
        const all = result.messages;
        pr.nextOffset = result.nextBeginOffset;
        let msgs = all;
        if (sub.tagsSet.length > 0) msgs = all.filter((m) => tagMatches(sub, m.tags ?? m.properties.TAGS));
        if (msgs.length === 0) {
          this.pullService.executePullRequestImmediately(pr);
          return;
        }
        const minText = String(result.minOffset);
        const maxText = String(result.maxOffset);
        for (let i = 0; i < msgs.length; i++) {
          const m = msgs[i]!;
          const props = m.properties;
          props.MIN_OFFSET = minText;
          props.MAX_OFFSET = maxText;
          m.brokerName = mq.brokerName;
        }
        this.recorder.pulledMessages.add(msgs.length, now);
        const dispatchToConsume = pq.putMessage(msgs);
        if (this.concurrently) this.concurrently.submitConsumeRequest(msgs, pq, mq);
        else this.orderlyService!.submitConsumeRequest(msgs, pq, mq, dispatchToConsume);
        if (config.pullIntervalMs > 0) this.pullService.executePullRequestLater(pr, config.pullIntervalMs);
        else this.pullService.executePullRequestImmediately(pr);
        return;
      }
      case 'NO_NEW_MSG':
      case 'NO_MATCHED_MSG':
        pr.nextOffset = result.nextBeginOffset;
        // Nothing cached: commit the filtered/empty range too (correctTagsOffset).
        if (pq.msgCount === 0) this.offsetStore.updateOffset(mq, pr.nextOffset, true);
        this.pullService.executePullRequestImmediately(pr);
        return;
      case 'OFFSET_ILLEGAL':
        log('pull %o: offset %d illegal, broker suggests %d', mq, pr.nextOffset, result.nextBeginOffset);
        pr.nextOffset = result.nextBeginOffset;
        this.rebalance.dropProcessQueue(pq);
        // 5.2+: freeze the corrected offset, persist it, drop the queue and rebalance at once.
        this.offsetStore.updateAndFreezeOffset(mq, pr.nextOffset);
        {
          // Tracked with the pulls so shutdown waits for it.
          const p = (async () => {
            await this.offsetStore.persist(mq);
            await this.rebalance.removeProcessQueue(mq);
            this.doRebalance();
          })().catch((err: unknown) => log('OFFSET_ILLEGAL handling of %o failed: %s', mq, (err as Error).message));
          this.inflightPulls.add(p);
          p.then(() => this.inflightPulls.delete(p));
        }
        return;
    }
  }

  /** ConsumeHost: a consume call removed messages; resume a pull parked by flow control once below the limits. */
  onConsumed(pq: ProcessQueue): void {
    const pr = pq.pullRequest;
    // Cheap check first: only a parked pull is worth re-evaluating.
    if (pr !== null && pr.parkTimer !== null && !pq.dropped && flowControlReason(pq, this.limits) === null) this.pullService.resume(pr);
  }

  // ------------------------------------------------------------------ rebalance host

  private async subscribeQueues(topic: string): Promise<MessageQueue[] | null> {
    try {
      const route = await this.instance!.getTopicRoute(topic);
      return topicRouteToSubscribeQueues(topic, route).map((q) => messageQueue(q.topic, q.brokerName, q.queueId));
    } catch (err) {
      log('route of %s: %s', topic, (err as Error).message);
      return null;
    }
  }

  private async consumerIdList(topic: string): Promise<string[] | null> {
    const instance = this.instance!;
    const route = instance.cachedTopicRoute(topic);
    if (!route || route.brokerDatas.length === 0) return null;
    const b = route.brokerDatas[Math.floor(Math.random() * route.brokerDatas.length)]!;
    const addr = instance.findBrokerAddress(b.brokerName);
    if (!addr) return null;
    try {
      return await instance.getConsumerIdList(addr, this.config.consumerGroup);
    } catch (err) {
      log('GET_CONSUMER_LIST_BY_GROUP at %s failed: %s', addr, (err as Error).message);
      return null;
    }
  }

  private async messageQueueChanged(topic: string): Promise<void> {
    this.recorder.rebalances++;
    const sub = this.subscriptionInner.get(topic);
    if (sub) sub.subVersion = Math.max(this.config.clock.now(), sub.subVersion + 1);
    const held = this.rebalance.processQueueTable.size;
    if (held > 0) {
      const l = queueLimitsFromTopic(this.config, this.config, held);
      this.limits = { ...this.limits, ...l };
    }
    await this.instance!.sendHeartbeatToAllBrokers();
  }

  private masterAddress(brokerName: string): string | undefined {
    return this.instance!.findBrokerMasterAddress(brokerName) ?? this.instance!.findBrokerAddress(brokerName);
  }

  private async masterAddressOrRefresh(mq: MessageQueue): Promise<string> {
    let addr = this.masterAddress(mq.brokerName);
    if (!addr) {
      await this.instance!.getTopicRoute(mq.topic, { refresh: true }).catch(() => undefined);
      addr = this.masterAddress(mq.brokerName);
    }
    if (!addr) throw new BrokerAddressNotFoundError(mq.brokerName);
    return addr;
  }

  private async queryConsumerOffset(mq: MessageQueue): Promise<number> {
    const addr = await this.masterAddressOrRefresh(mq);
    return this.instance!.queryConsumerOffset(addr, this.config.consumerGroup, mq, OFFSET_API_TIMEOUT_MS);
  }

  private async updateConsumerOffsetOneway(mq: MessageQueue, offset: number): Promise<void> {
    const addr = this.masterAddress(mq.brokerName);
    if (!addr) return;
    await this.instance!.updateConsumerOffsetOneway(addr, this.config.consumerGroup, mq, offset);
  }

  /** §9.5: the start offset of a newly assigned queue; negative = skip it this round. */
  private async computePullFromWhere(mq: MessageQueue): Promise<number> {
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
          if (isRetry) return await this.instance!.getMaxOffset(addr, mq, ADMIN_OFFSET_TIMEOUT_MS);
          return await this.instance!.searchOffsetByTimestamp(addr, mq, this.consumeTimestampMs, ADMIN_OFFSET_TIMEOUT_MS);
        }
        default: {
          if (isRetry) return 0;
          const addr = await this.masterAddressOrRefresh(mq);
          return await this.instance!.getMaxOffset(addr, mq, ADMIN_OFFSET_TIMEOUT_MS);
        }
      }
    } catch (err) {
      log('start offset of %o: %s', mq, (err as Error).message);
      return -1;
    }
  }

  private async lockBatch(brokerName: string, mqs: MessageQueue[]): Promise<MessageQueue[]> {
    const addr = this.masterAddress(brokerName);
    if (!addr) throw new BrokerAddressNotFoundError(brokerName);
    return this.instance!.lockBatchMQ(addr, this.config.consumerGroup, mqs, LOCK_TIMEOUT_MS);
  }

  private async unlockBatch(brokerName: string, mqs: MessageQueue[], oneway: boolean): Promise<void> {
    const addr = this.masterAddress(brokerName);
    if (!addr) return;
    await this.instance!.unlockBatchMQ(addr, this.config.consumerGroup, mqs, oneway, LOCK_TIMEOUT_MS);
  }

  /** ConsumeHost (orderly): lock one queue again after the lock was lost. */
  async lockQueue(mq: MessageQueue): Promise<boolean> {
    try {
      const granted = await this.lockBatch(mq.brokerName, [mq]);
      const ok = granted.some((g) => messageQueueKey(g) === messageQueueKey(mq));
      if (ok) this.rebalance.lockGranted(mq);
      return ok;
    } catch {
      return false;
    }
  }

  // ------------------------------------------------------------------ send-back and retry (§9.8, §9.11)

  async sendMessageBack(msg: MessageExt, delayLevel: number, brokerName: string): Promise<boolean> {
    const instance = this.instance;
    if (!instance) return false;
    try {
      const addr = this.masterAddress(brokerName);
      if (!addr) throw new BrokerAddressNotFoundError(brokerName);
      await instance.consumerSendMessageBack(
        addr,
        {
          group: this.config.consumerGroup,
          commitLogOffset: msg.commitLogOffset,
          delayLevel,
          originMsgId: msg.msgId,
          originTopic: msg.topic,
          maxReconsumeTimes: this.maxReconsumeTimes,
          brokerName,
        },
        SEND_MSG_BACK_TIMEOUT_MS,
      );
      this.recorder.sendBackOk++;
      return true;
    } catch (err) {
      this.recorder.sendBackFailed++;
      log('CONSUMER_SEND_MSG_BACK of %s failed (%s); republishing to the retry topic', msg.msgId, (err as Error).message);
      return this.republishToRetry(msg, msg.reconsumeTimes + 1);
    }
  }

  /**
   * The internal producer path (CLIENT_INNER_PRODUCER): SEND_MESSAGE_V2 of a copy to %RETRY%group with
   * RETRY_TOPIC, ORIGIN_MESSAGE_ID, delay level 3 + reconsumeTimes, and RECONSUME_TIME/MAX_RECONSUME_TIMES
   * moved into header fields j/l (a value ≥ max makes the broker store it in the DLQ).
   */
  async republishToRetry(msg: MessageExt, reconsumeTime: number): Promise<boolean> {
    const instance = this.instance;
    if (!instance) return false;
    const topic = retryTopic(this.config.consumerGroup);
    try {
      const route = await instance.getTopicRoute(topic);
      const queues = topicRouteToPublishQueues(topic, route);
      if (queues.length === 0) throw new NoRetryQueueError(topic);
      const q = queues[this.publishIndex++ % queues.length]!;
      const addr = this.masterAddress(q.brokerName);
      if (!addr) throw new BrokerAddressNotFoundError(q.brokerName);
      const props: Record<string, string> = { ...msg.properties };
      // Consumer-side bookkeeping does not travel with the copy.
      delete props.CONSUME_START_TIME;
      delete props.MIN_OFFSET;
      delete props.MAX_OFFSET;
      delete props.TRAN_MSG;
      delete props.RECONSUME_TIME;
      delete props.MAX_RECONSUME_TIMES;
      props.RETRY_TOPIC = msg.topic;
      props.ORIGIN_MESSAGE_ID = props.ORIGIN_MESSAGE_ID || msg.msgId;
      props.DELAY = String(3 + msg.reconsumeTimes);
      const req = instance.createRequest(
        RequestCode.SEND_MESSAGE_V2,
        SendMessageRequestHeaderV2.encode({
          producerGroup: CLIENT_INNER_PRODUCER_GROUP,
          topic,
          defaultTopic: AUTO_CREATE_TOPIC_KEY_TOPIC,
          defaultTopicQueueNums: 4,
          queueId: q.queueId,
          sysFlag: 0,
          bornTimestamp: this.config.clock.now(),
          flag: msg.flag ?? 0,
          properties: encodeProperties(props),
          reconsumeTimes: reconsumeTime,
          unitMode: false,
          maxReconsumeTimes: this.maxReconsumeTimes,
          batch: false,
          bname: q.brokerName,
        }),
        msg.body,
      );
      await instance.call(addr, req, SEND_MSG_BACK_TIMEOUT_MS);
      this.recorder.republished++;
      return true;
    } catch (err) {
      log('republishing %s to %s failed: %s', msg.msgId, topic, (err as Error).message);
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

  // ------------------------------------------------------------------ broker-initiated requests (§5.11)

  runningInfo(): Buffer {
    const { config } = this;
    const now = config.clock.now();
    const props: Record<string, string> = {
      PROP_CLIENT_VERSION: 'V4_9_8',
      PROP_CONSUMEORDERLY: String(config.orderly),
      PROP_CONSUMER_START_TIMESTAMP: String(this.startTimestamp),
      PROP_CONSUME_TYPE: 'CONSUME_PASSIVELY',
      PROP_NAMESERVER_ADDR: config.namesrvAddr,
      PROP_THREADPOOL_CORE_SIZE: String(config.consumeThreadMin),
      adjustThreadPoolNumsThreshold: '100000',
      allocateMessageQueueStrategy: config.allocateStrategy.name,
      awaitTerminationMillisWhenShutdown: String(config.awaitTerminationMillisWhenShutdown),
      consumeConcurrentlyMaxSpan: String(config.consumeConcurrentlyMaxSpan),
      consumeFromWhere: config.consumeFromWhere,
      consumeMessageBatchMaxSize: String(config.consumeMessageBatchMaxSize),
      consumeThreadMax: String(config.consumeThreadMax),
      consumeThreadMin: String(config.consumeThreadMin),
      consumeTimeout: String(Math.max(1, Math.round(config.consumeTimeoutMs / 60_000))),
      consumerGroup: config.consumerGroup,
      maxReconsumeTimes: String(config.maxReconsumeTimes),
      messageModel: config.messageModel,
      pullBatchSize: String(config.pullBatchSize),
      pullInterval: String(config.pullIntervalMs),
      pullThresholdForQueue: String(this.limits.pullThresholdForQueue),
      pullThresholdForTopic: String(config.pullThresholdForTopic),
      pullThresholdSizeForQueue: String(this.limits.pullThresholdSizeForQueueMiB),
      pullThresholdSizeForTopic: String(config.pullThresholdSizeForTopicMiB),
      suspendCurrentQueueTimeMillis: String(config.suspendCurrentQueueTimeMillis),
    };
    const mqTable: [MessageQueue, Record<string, unknown>][] = [];
    for (const { mq, pq } of this.rebalance.processQueueTable.values()) {
      mqTable.push([
        mq,
        {
          cachedMsgCount: pq.msgCount,
          cachedMsgMaxOffset: pq.msgCount > 0 ? pq.queueOffsetMax : 0,
          cachedMsgMinOffset: pq.msgCount > 0 ? Math.max(0, pq.minOffset) : 0,
          cachedMsgSizeInMiB: Math.floor(pq.msgSize / (1024 * 1024)),
          commitOffset: this.offsetStoreValue?.readMemory(mq) ?? -1,
          droped: pq.dropped,
          lastConsumeTimestamp: pq.lastConsumeTimestamp,
          lastLockTimestamp: pq.lastLockTimestamp,
          lastPullTimestamp: pq.lastPullTimestamp,
          locked: pq.locked,
          transactionMsgCount: 0,
          transactionMsgMaxOffset: 0,
          transactionMsgMinOffset: 0,
          tryUnlockTimes: 0,
        },
      ]);
    }
    const s = this.recorder;
    const statusTable: Record<string, Record<string, unknown>> = {};
    const rt = s.consumeRtCount === 0 ? 0 : s.consumeRtSum / s.consumeRtCount;
    for (const topic of this.subscriptionInner.keys()) {
      statusTable[topic] = {
        consumeFailedMsgs: s.consumedFailed.total,
        consumeFailedTPS: s.consumedFailed.rate(now),
        consumeOKTPS: s.consumedOk.rate(now),
        consumeRT: rt,
        pullRT: 0,
        pullTPS: s.pulledMessages.rate(now),
      };
    }
    const subscriptionSet = [...this.subscriptionInner.values()].map((d) => ({
      classFilterMode: d.classFilterMode,
      codeSet: d.codeSet,
      expressionType: d.expressionType,
      subString: d.subString,
      subVersion: d.subVersion,
      tagsSet: d.tagsSet,
      topic: d.topic,
    }));
    // Java's mqTable and statusTable are TreeMaps; the codec writes keys sorted, MessageQueue keys as objects.
    return encodeConsumerRunningInfo({ jstack: '', mqTable, properties: props, statusTable, subscriptionSet });
  }

  async consumeMessageDirectly(msg: MessageExt, brokerName: string): Promise<ConsumeMessageDirectlyResult> {
    msg.brokerName = brokerName;
    const mq = messageQueue(msg.topic, brokerName, msg.queueId);
    resetRetryTopic([msg], retryTopic(this.config.consumerGroup));
    const begin = this.config.clock.now();
    let consumeResult: CMResultName;
    let remark = '';
    try {
      let r: unknown;
      if (this.config.orderly) {
        r = (this.listener as MessageListenerOrderly)([msg], { messageQueue: mq, autoCommit: true, suspendCurrentQueueTimeMillis: -1 });
      } else {
        r = (this.listener as MessageListenerConcurrently)([msg], { messageQueue: mq, delayLevelWhenNextConsume: 0, ackIndex: JAVA_INT_MAX });
      }
      if (isThenable(r)) r = await r;
      if (r === ConsumeConcurrentlyStatus.CONSUME_SUCCESS || r === ConsumeOrderlyStatus.SUCCESS) consumeResult = 'CR_SUCCESS';
      else if (r === ConsumeConcurrentlyStatus.RECONSUME_LATER || r === ConsumeOrderlyStatus.SUSPEND_CURRENT_QUEUE_A_MOMENT) consumeResult = 'CR_LATER';
      else if (r === ConsumeOrderlyStatus.COMMIT) consumeResult = 'CR_COMMIT';
      else if (r === ConsumeOrderlyStatus.ROLLBACK) consumeResult = 'CR_ROLLBACK';
      else consumeResult = 'CR_RETURN_NULL';
    } catch (err) {
      consumeResult = 'CR_THROW_EXCEPTION';
      remark = (err as Error)?.stack ?? String(err);
    }
    return { autoCommit: true, consumeResult, order: this.config.orderly, remark, spentTimeMills: this.config.clock.now() - begin };
  }

  /** RESET_CONSUMER_CLIENT_OFFSET: drop the held queues named in `offsets`, store the new offsets, rebalance. */
  async resetOffset(topic: string, offsets: Map<string, number>): Promise<void> {
    const targets: { mq: MessageQueue; pq: ProcessQueue; offset: number }[] = [];
    for (const { mq, pq } of this.rebalance.processQueueTable.values()) {
      if (mq.topic !== topic) continue;
      const offset = offsets.get(messageQueueKey(mq));
      if (offset === undefined) continue;
      this.rebalance.dropProcessQueue(pq);
      pq.clear();
      targets.push({ mq, pq, offset });
    }
    for (const { mq, offset } of targets) {
      this.offsetStore.updateOffset(mq, offset, false);
      await this.rebalance.removeProcessQueue(mq);
    }
    log('reset %d offsets of %s', targets.length, topic);
    this.doRebalance();
  }
}
