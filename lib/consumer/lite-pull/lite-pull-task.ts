import createDebug from '../../debug.js';
import {
  buildSubscriptionData,
  decodeMessagesSkipping,
  inflateMessages,
  PullSysFlag,
  ResponseCode,
  type MessageQueue,
  type SubscriptionData,
} from '../../../protocol/internal.js';
import { BrokerError } from '../../remoting/index.js';
import { brokerNameOf, refreshOnNotLeader } from '../../client/index.js';
import type { ConsumerMetrics } from '../../metrics/index.js';
import type { ConsumerEvents } from '../core/consumer-events.js';
import { UndecodableMessageError } from '../errors.js';
import { countRound, refusedMessageError, roundOptions, type InflateStats } from '../core/inflate.js';
import {
  flowControlReason,
  PULL_TIME_DELAY_MILLS_WHEN_BROKER_FLOW_CONTROL,
  PULL_TIME_DELAY_MILLS_WHEN_CACHE_FLOW_CONTROL,
  type FlowLimits,
} from '../core/flow-control.js';
import type { ConsumerState } from '../core/lifecycle.js';
import type { PullMessageService } from '../core/pull-message-service.js';
import type { PullRequest } from '../core/pull-request.js';
import { pullTarget } from '../core/pull-target.js';
import { tagMatches } from '../core/subscription.js';
import type { LitePullAssignment, AssignedQueue } from './lite-pull-assignment.js';
import type { LitePullCache } from './lite-pull-cache.js';
import type { LitePullConsumerConfig } from './lite-pull-options.js';
import { litePullOperation } from './lite-pull-operation.js';
import type { LitePullRunning } from './lite-pull-running.js';

const log = createDebug('rocketwire:consumer:lite');

/** DefaultLitePullConsumerImpl's back-offs: a paused queue is looked at again after 1 s, a failed offset lookup after 3 s. */
export const PULL_TIME_DELAY_MILLS_WHEN_PAUSE = 1000;
export const PULL_TIME_DELAY_MILLS_ON_EXCEPTION = 3000;

/** Why a lite pull waits: the shared cache is full (pullThresholdForAll) or the queue's own limits. */
type LiteParkReason = 'all' | 'count' | 'size' | 'span' | 'pause';

/** Pulls sent, batches cached, and flow-control parks by reason (tests and the benchmark read them). */
export interface LitePullCounters {
  pulls: number;
  found: number;
  messagesPulled: number;
  parks: Record<LiteParkReason, number>;
  /** Pulls sent by request code (11 PULL_MESSAGE, 361 LITE_PULL_MESSAGE). */
  requestCodes: Record<number, number>;
  /** Inflation of compressed bodies: bytes, the most one pull inflated, budget cuts, refused messages. */
  inflate: InflateStats;
}

/** What the lite pull path reads of its consumer. */
export interface LitePullTaskHost {
  readonly config: LitePullConsumerConfig;
  readonly state: ConsumerState;
  readonly assigned: LitePullAssignment;
  readonly cache: LitePullCache;
  readonly pullService: PullMessageService;
  readonly counters: LitePullCounters;
  readonly subscriptionInner: Map<string, SubscriptionData>;
  readonly events: ConsumerEvents;
  readonly metrics: ConsumerMetrics | null;
  readonly run: LitePullRunning;
  computePullFromWhere(mq: MessageQueue): Promise<number>;
}

/**
 * The lite pull path (DefaultLitePullConsumerImpl.PullTaskImpl): one PullRequest per held queue goes
 * round the PullMessageService; flow control parks it (the shared cache's limit, the queue's count,
 * size and span, a paused queue), else it pulls and puts each FOUND batch in the queue's ProcessQueue
 * and the shared cache that poll() takes from.
 */
export class LitePullTask {
  private readonly inflight = new Set<Promise<void>>();
  private readonly parked = new Map<PullRequest, LiteParkReason>();
  private readonly limits: FlowLimits;

  constructor(private readonly host: LitePullTaskHost) {
    this.limits = {
      pullThresholdForQueue: host.config.pullThresholdForQueue,
      pullThresholdSizeForQueueMiB: host.config.pullThresholdSizeForQueueMiB,
      consumeConcurrentlyMaxSpan: host.config.consumeMaxSpan,
      orderly: false,
    };
  }

  /** Pulls in flight; shutdown waits for them. */
  settled(): Promise<unknown> {
    return Promise.allSettled([...this.inflight]);
  }

  /** Clears the queue's cache and makes its next pull start at `offset` (a pull in flight is discarded). */
  seek(st: AssignedQueue, offset: number): void {
    st.pq.clear();
    this.host.cache.removeQueue(st);
    st.seekOffset = offset;
    st.generation++;
    st.pullAbort?.abort();
    this.parked.delete(st.pr);
    this.host.pullService.resume(st.pr);
  }

  /** resume(): a pull parked because its queue was paused goes at once (Java: within 1 s). */
  resumePaused(pr: PullRequest): void {
    if (this.parked.get(pr) === 'pause') {
      this.parked.delete(pr);
      this.host.pullService.resume(pr);
    }
  }

  pullMessage(pr: PullRequest): void {
    const st = this.host.assigned.ofPullRequest(pr);
    const pq = pr.processQueue;
    if (!st || pq.dropped || this.host.state !== 'RUNNING') return;
    pq.markPulled(this.host.config.base.clock.now());
    if (st.paused) return this.park(pr, 'pause', PULL_TIME_DELAY_MILLS_WHEN_PAUSE);
    if (this.host.cache.size * this.host.config.pullBatchSize > this.host.config.pullThresholdForAll)
      return this.park(pr, 'all', PULL_TIME_DELAY_MILLS_WHEN_CACHE_FLOW_CONTROL);
    const reason = flowControlReason(pq, this.limits);
    if (reason !== null) return this.park(pr, reason, PULL_TIME_DELAY_MILLS_WHEN_CACHE_FLOW_CONTROL);
    const p = this.doPull(st);
    this.inflight.add(p);
    // doPull reports its own failures; a rejection here is a bug, kept visible in the debug log
    // rather than left unhandled (which would end the process).
    p.then(
      () => this.inflight.delete(p),
      (err: unknown) => {
        this.inflight.delete(p);
        log('pull of %o failed: %s', st.mq, (err as Error)?.message ?? err);
      },
    );
  }

  private park(pr: PullRequest, reason: LiteParkReason, delayMs: number): void {
    this.host.counters.parks[reason]++;
    this.parked.set(pr, reason);
    this.host.pullService.executePullRequestLater(pr, delayMs);
  }

  /** poll() took a batch: a pull parked for the cache's count, size or the shared limit goes again once under it. */
  releaseParked(): void {
    if (this.parked.size === 0) return;
    const overAll = this.host.cache.size * this.host.config.pullBatchSize > this.host.config.pullThresholdForAll;
    for (const [pr, reason] of this.parked) {
      if (pr.processQueue.dropped) {
        this.parked.delete(pr);
        continue;
      }
      if (reason === 'pause' || reason === 'span' || pr.parkTimer === null) continue;
      if (reason === 'all' ? overAll : flowControlReason(pr.processQueue, this.limits) !== null) continue;
      this.parked.delete(pr);
      this.host.pullService.resume(pr);
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
    return this.host.computePullFromWhere(st.mq);
  }

  private async doPull(st: AssignedQueue): Promise<void> {
    const { pr, pq, mq } = st;
    const base = this.host.config.base;
    const instance = this.host.run.instance;
    const generation = st.generation;
    let offset: number;
    try {
      offset = await this.nextPullOffset(st);
    } catch (err) {
      log('next pull offset of %o: %s', mq, (err as Error)?.message ?? err);
      this.host.pullService.executePullRequestLater(pr, PULL_TIME_DELAY_MILLS_ON_EXCEPTION);
      return;
    }
    if (pq.dropped) return;
    if (generation !== st.generation) {
      this.host.pullService.executePullRequestImmediately(pr);
      return;
    }
    // One controller per pull, so seek() can abandon a long poll held at the broker without
    // touching the other queues' pulls (AbortSignal.any is Node 20.3+; engines say >=20).
    const abort = new AbortController();
    const onShutdown = (): void => abort.abort();
    this.host.pullService.signal.addEventListener('abort', onShutdown, { once: true });
    st.pullAbort = abort;
    const sub = this.host.subscriptionInner.get(mq.topic) ?? buildSubscriptionData(mq.topic, '*', 0);
    let addr: string | undefined;
    try {
      const target = await pullTarget(instance, pr);
      addr = target.addr;
      this.host.counters.pulls++;
      const op = litePullOperation(instance.brokerVersion(target.addr));
      this.host.counters.requestCodes[op.code] = (this.host.counters.requestCodes[op.code] ?? 0) + 1;
      // sysFlag SUSPEND | SUBSCRIPTION | LITE (0x16), commitOffset 0: a lite pull never commits through
      // the pull (DefaultLitePullConsumerImpl.pullSyncImpl).
      const result = await instance.pullMessage(
        target.addr,
        {
          consumerGroup: base.consumerGroup,
          topic: mq.topic,
          queueId: mq.queueId,
          queueOffset: offset,
          maxMsgNums: this.host.config.pullBatchSize,
          sysFlag: PullSysFlag.FLAG_SUSPEND | PullSysFlag.FLAG_SUBSCRIPTION | PullSysFlag.FLAG_LITE_PULL_MESSAGE,
          commitOffset: 0,
          suspendTimeoutMillis: base.brokerSuspendMaxTimeMs,
          subscription: sub.subString,
          // pullSyncImpl: a TAG pull sends subVersion 0, a SQL92 one the subscription's version
          subVersion: sub.expressionType === 'TAG' ? 0 : sub.subVersion,
          expressionType: sub.expressionType,
          bname: mq.brokerName,
        },
        base.pullTimeoutMs,
        abort.signal,
        op,
      );
      this.host.events.brokerAnswered(brokerNameOf(instance, mq), target.addr, 'PULL_MESSAGE');
      if (pq.dropped || this.host.pullService.signal.aborted) return;
      pr.suggestWhichBrokerId = result.suggestWhichBrokerId;
      pr.lastAnsweredAtMs = base.clock.now();
      if (result.maxOffset >= 0) pr.brokerMaxOffset = result.maxOffset;
      if (generation !== st.generation) {
        // seek() ran while this pull was in flight: what it brought is from before the seek.
        this.host.pullService.executePullRequestImmediately(pr);
        return;
      }
      let nextOffset = result.nextBeginOffset;
      if (result.status === 'FOUND' && result.bodyBytes) {
        // Bodies stay compressed until the tag filter kept them, then inflate within the pull's
        // budget; past it, the rest is pulled again from its offset.
        const { messages, undecodable } = decodeMessagesSkipping(result.bodyBytes, {
          decompress: false,
          queueOffsetDelta: result.offsetDelta,
        });
        let msgs =
          sub.tagsSet.length > 0 ? messages.filter((m) => tagMatches(sub, m.tags ?? m.properties.TAGS)) : messages;
        const round = inflateMessages(msgs, 0, roundOptions(base.inflate));
        const cut = round.end < msgs.length;
        countRound(this.host.counters.inflate, round, cut);
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
          this.host.events.undecodable(
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
            this.host.events.undecodable(refusedMessageError(mq, m, r, base.inflate, 'passed'));
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
          this.host.counters.found++;
          this.host.counters.messagesPulled += msgs.length;
          if (this.host.metrics) {
            const now = base.clock.now();
            this.host.metrics.arrived(msgs, now);
            this.host.metrics.track(msgs, now);
          }
          pq.putMessage(msgs);
          this.host.cache.put({ msgs, queue: st, generation });
        }
      } else if (result.status === 'OFFSET_ILLEGAL') {
        log('pull %o: offset %d illegal, the broker says %d', mq, offset, result.nextBeginOffset);
      }
      if (st.seekOffset === -1) st.pullOffset = nextOffset;
      this.host.pullService.executePullRequestImmediately(pr);
    } catch (err) {
      if (this.host.pullService.signal.aborted || pq.dropped) return;
      if (generation !== st.generation) {
        // Abandoned by seek(): pull again from the offset it set.
        this.host.pullService.executePullRequestImmediately(pr);
        return;
      }
      this.host.events.brokerFailed(brokerNameOf(instance, mq), addr, 'PULL_MESSAGE', err);
      // A remapped static-topic queue: the route is fetched now, so the delayed pull finds the new leader.
      void refreshOnNotLeader(instance, mq.topic, err);
      log('pull %o failed: %s', mq, (err as Error)?.message ?? err);
      const flowControl = err instanceof BrokerError && err.code === ResponseCode.FLOW_CONTROL;
      this.host.pullService.executePullRequestLater(
        pr,
        flowControl ? PULL_TIME_DELAY_MILLS_WHEN_BROKER_FLOW_CONTROL : base.pullTimeDelayMillsWhenException,
      );
    } finally {
      this.host.pullService.signal.removeEventListener('abort', onShutdown);
      if (st.pullAbort === abort) st.pullAbort = null;
    }
  }
}
