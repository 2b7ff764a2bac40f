import createDebug from '../../debug.js';
import type { ClockTimer } from '../../clock.js';
import { resetRetryTopic, type ConsumeHost } from '../core/consume-host.js';
import {
  ConsumeConcurrentlyStatus,
  concurrentResult,
  isThenable,
  type ConsumeConcurrentlyContext,
  type MessageListenerConcurrently,
} from '../core/consume-types.js';
import type { MessageExt } from '../core/message.js';
import { retryTopic, type MessageQueue } from '../../../protocol/index.js';
import type { ProcessQueue } from '../core/process-queue.js';
import type { TraceContext } from '../../trace/trace-types.js';

const log = createDebug('rocketwire:consumer');

/** Java resubmits a call whose send-back and republish both failed after 5 s. */
export const CONSUME_LATER_DELAY_MS = 5000;
/** Java's Integer.MAX_VALUE: the initial ackIndex (every message of the call acknowledged). */
export const JAVA_INT_MAX = 2147483647;

interface ConsumeRequest {
  msgs: MessageExt[];
  pq: ProcessQueue;
  mq: MessageQueue;
  /** When the pull that brought the messages was answered (−1: a local retry), for the await-time metric. */
  arrivedAt: number;
}

/**
 * Concurrent consumption (ConsumeMessageConcurrentlyService). Pulled messages are split into handler
 * calls of consumeMessageBatchMaxSize and run with bounded concurrency.
 *
 * How consumeThreadMin/Max map onto Node (there are no threads; a "thread" is a handler call in flight,
 * i.e. started and, for an async handler, not yet settled): as Java's consumeExecutor, a
 * ThreadPoolExecutor(consumeThreadMin, consumeThreadMax) over an unbounded LinkedBlockingQueue. Such a
 * pool never starts a thread past its core size (it only does when the queue refuses a task, and an
 * unbounded queue never does), so at most consumeThreadMin calls run at once and the rest wait in
 * order; consumeThreadMax is validated and reported but never takes effect. To run more calls at once,
 * raise consumeThreadMin. Synchronous handlers never fill a slot for longer than their own call.
 */
export class ConsumeMessageConcurrentlyService {
  private inFlight = 0;
  /** Send-backs of refused messages under way: shutdown lets them end, so their commit passes them. */
  private readonly sendBacks = new Set<Promise<void>>();
  private backlog: ConsumeRequest[] = [];
  private backlogHead = 0;
  private pumping = false;
  private stopped = false;
  private readonly laterTimers = new Set<ClockTimer>();
  private idleWaiters: (() => void)[] = [];
  private readonly retryTopicName: string;
  private startMs = -1;
  private startText = '';
  /**
   * Inside pump(): the clock reading taken when the previous handler call returned synchronously
   * (−1 when none), used as the start of the next call so that a run of synchronous calls costs
   * one clock read per call instead of two. The handler may move an injected clock; the next
   * call's start is read after it returned, so it stays exact.
   */
  private pumpNow = -1;

  constructor(
    private readonly host: ConsumeHost,
    private readonly listener: MessageListenerConcurrently,
  ) {
    this.retryTopicName = retryTopic(host.config.consumerGroup);
  }

  get inFlightCount(): number {
    return this.inFlight;
  }
  get backlogCount(): number {
    return this.backlog.length - this.backlogHead;
  }

  /**
   * Hands pulled messages (already in `pq`) to the handler in calls of consumeMessageBatchMaxSize.
   * All the calls are queued first and then started by one pump: the pool ends in the same state
   * as after queuing them one by one (nothing finishes in between), and a run of synchronous
   * calls shares clock readings (see pumpNow).
   */
  submitConsumeRequest(msgs: MessageExt[], pq: ProcessQueue, mq: MessageQueue, arrivedAt = -1): void {
    if (this.stopped) return;
    const batch = this.host.config.consumeMessageBatchMaxSize;
    if (msgs.length <= batch) {
      this.backlog.push({ msgs, pq, mq, arrivedAt });
    } else if (batch === 1) {
      for (let i = 0; i < msgs.length; i++) this.backlog.push({ msgs: [msgs[i]!], pq, mq, arrivedAt });
    } else {
      for (let i = 0; i < msgs.length; i += batch)
        this.backlog.push({ msgs: msgs.slice(i, i + batch), pq, mq, arrivedAt });
    }
    this.pump();
  }

  /** Starts waiting calls while the pool rule allows; iterative so synchronous handlers never recurse. */
  private pump(): void {
    if (this.pumping) return;
    this.pumping = true;
    this.pumpNow = -1;
    try {
      const min = this.host.config.consumeThreadMin;
      while (this.backlogHead < this.backlog.length && this.inFlight < min) {
        const req = this.backlog[this.backlogHead]!;
        this.backlog[this.backlogHead++] = undefined as unknown as ConsumeRequest;
        if (this.backlogHead === this.backlog.length) {
          this.backlog = [];
          this.backlogHead = 0;
        } else if (this.backlogHead > 1024 && this.backlogHead * 2 > this.backlog.length) {
          this.backlog = this.backlog.slice(this.backlogHead);
          this.backlogHead = 0;
        }
        this.inFlight++;
        this.run(req);
      }
    } finally {
      this.pumping = false;
      this.pumpNow = -1;
    }
  }

  private release(): void {
    this.inFlight--;
    if (this.backlogHead < this.backlog.length) this.pump();
    if (this.inFlight === 0 && this.idleWaiters.length > 0) {
      const w = this.idleWaiters;
      this.idleWaiters = [];
      for (const f of w) f();
    }
  }

  private run(req: ConsumeRequest): void {
    const { msgs, pq, mq } = req;
    if (pq.dropped) {
      this.release();
      return;
    }
    resetRetryTopic(msgs, this.retryTopicName);
    const begin = this.pumpNow >= 0 ? this.pumpNow : this.host.config.clock.now();
    this.pumpNow = -1;
    // One string for the whole call; expiry cleaning reads it back (CONSUME_START_TIME). Calls
    // started in the same millisecond share it.
    if (begin !== this.startMs) {
      this.startMs = begin;
      this.startText = String(begin);
    }
    const startText = this.startText;
    for (let i = 0; i < msgs.length; i++) msgs[i]!.properties.CONSUME_START_TIME = startText;
    const ctx: ConsumeConcurrentlyContext = { messageQueue: mq, delayLevelWhenNextConsume: 0, ackIndex: JAVA_INT_MAX };
    const trace = this.host.trace ? this.host.trace.before(msgs) : null;
    this.host.metrics?.beforeConsume(msgs, begin, req.arrivedAt);
    let result: unknown;
    let threw = false;
    try {
      result = this.listener(msgs, ctx);
    } catch (err) {
      log('handler threw for %d messages of %o: %s', msgs.length, mq, (err as Error)?.message ?? err);
      result = undefined;
      threw = true;
    }
    if (isThenable(result)) {
      result.then(
        (status) => this.finish(req, ctx, status, begin, trace),
        (err: unknown) => {
          log('handler rejected for %d messages of %o: %s', msgs.length, mq, (err as Error)?.message ?? err);
          this.finish(req, ctx, undefined, begin, trace, true);
        },
      );
      return;
    }
    this.finish(req, ctx, result, begin, trace, threw);
  }

  private finish(
    req: ConsumeRequest,
    ctx: ConsumeConcurrentlyContext,
    value: unknown,
    begin: number,
    trace: TraceContext | null = null,
    threw = false,
  ): void {
    const now = this.host.config.clock.now();
    let status: ConsumeConcurrentlyStatus = ConsumeConcurrentlyStatus.RECONSUME_LATER;
    if (!threw) {
      const r = concurrentResult(value);
      status = r.status;
      if (r.invalid) this.host.invalidHandlerResult(value, req.mq, req.msgs.length);
    }
    if (trace)
      this.host.trace!.after(trace, req.msgs.length, {
        status: threw ? undefined : status,
        threw,
        timedOut: now - begin >= this.host.config.consumeTimeoutMs,
      });
    this.host.metrics?.afterConsume(req.msgs, begin, now, status === ConsumeConcurrentlyStatus.CONSUME_SUCCESS);
    if (this.pumping) this.pumpNow = now;
    this.host.recorder.consumeRt(req.mq.topic, now - begin);
    req.pq.markConsumed(now);
    if (req.pq.dropped) {
      // The queue was taken away while the handler ran: Java discards the result (no offset, no send-back).
      this.release();
      return;
    }
    const p = this.processConsumeResult(req, ctx, status === ConsumeConcurrentlyStatus.CONSUME_SUCCESS, now);
    if (p === null) this.release();
    else
      p.then(
        () => this.release(),
        (err: unknown) => {
          log('processing a consume result failed: %s', (err as Error)?.message ?? err);
          this.release();
        },
      );
  }

  /**
   * Java's processConsumeResult. Returns null when everything was done synchronously (the common case:
   * all messages succeeded), else a promise for the send-backs.
   */
  private processConsumeResult(
    req: ConsumeRequest,
    ctx: ConsumeConcurrentlyContext,
    success: boolean,
    now: number,
  ): Promise<void> | null {
    const { msgs, pq, mq } = req;
    const n = msgs.length;
    let ackIndex = ctx.ackIndex;
    if (success) {
      if (ackIndex >= n) ackIndex = n - 1;
    } else {
      ackIndex = -1;
    }
    const okCount = Math.max(0, ackIndex + 1);
    const stats = this.host.recorder;
    if (success) stats.consumeOk(mq.topic, okCount, now);
    stats.consumeFailed(mq.topic, n - okCount, now);
    if (ackIndex >= n - 1) {
      this.commit(msgs, pq, mq);
      return null;
    }
    if (this.host.config.messageModel === 'BROADCASTING') {
      for (let i = ackIndex + 1; i < n; i++) {
        const m = msgs[i]!;
        log('BROADCASTING: dropping failed message %s (topic %s, queue offset %d)', m.msgId, m.topic, m.queueOffset);
      }
      this.commit(msgs, pq, mq);
      return null;
    }
    return this.sendBackFailed(msgs, ackIndex, ctx.delayLevelWhenNextConsume, pq, mq);
  }

  private async sendBackFailed(
    msgs: MessageExt[],
    ackIndex: number,
    delayLevel: number,
    pq: ProcessQueue,
    mq: MessageQueue,
  ): Promise<void> {
    const failedLocally: MessageExt[] = [];
    for (let i = Math.max(0, ackIndex + 1); i < msgs.length; i++) {
      const msg = msgs[i]!;
      // 5.x: a message the expiry sweep already sent back and removed is not sent again.
      if (!pq.contains(msg)) continue;
      const ok = await this.host.sendMessageBack(msg, delayLevel, mq.brokerName);
      if (!ok) {
        msg.reconsumeTimes++;
        failedLocally.push(msg);
      }
    }
    if (failedLocally.length > 0) {
      this.host.config.logger.warn(
        `consumer ${this.host.config.consumerGroup}: ${failedLocally.length} failed message(s) of ${mq.topic}@${mq.brokerName}/${mq.queueId} ` +
          `could not be sent back to the broker nor republished to the retry topic; consuming them again here in ${CONSUME_LATER_DELAY_MS / 1000} s`,
      );
      const keep = new Set(failedLocally);
      const done = msgs.filter((m) => !keep.has(m));
      this.host.recorder.localRetries += failedLocally.length;
      this.submitConsumeRequestLater(failedLocally, pq, mq);
      this.commit(done, pq, mq);
    } else {
      this.commit(msgs, pq, mq);
    }
  }

  /**
   * Messages refused undecoded (their body would inflate past maxInflatedBodyBytes, or does not
   * inflate): never handed to the handler, sent back at once as failed messages (delay level 0:
   * the retry topic, then the DLQ after maxReconsumeTimes), and removed from the cache, so that the
   * committed offset passes them, only once the broker took them. A send-back that fails is tried
   * again in 5 s, as a failed call's local retry is. BROADCASTING drops them as it drops every
   * failed message (the 'undecodable' event said so).
   */
  sendBackRefused(msgs: MessageExt[], pq: ProcessQueue, mq: MessageQueue): void {
    if (this.stopped || pq.dropped) return;
    this.host.recorder.consumeFailed(mq.topic, msgs.length, this.host.config.clock.now());
    if (this.host.config.messageModel === 'BROADCASTING') {
      this.commit(msgs, pq, mq);
      return;
    }
    const p = (async () => {
      const failed: MessageExt[] = [];
      for (const m of msgs) {
        if (!pq.contains(m)) continue;
        if (!(await this.host.sendMessageBack(m, 0, mq.brokerName))) failed.push(m);
        if (pq.dropped) return;
      }
      this.commit(failed.length === 0 ? msgs : msgs.filter((m) => !failed.includes(m)), pq, mq);
      if (failed.length === 0 || this.stopped) return;
      this.host.config.logger.warn(
        `consumer ${this.host.config.consumerGroup}: ${failed.length} undecodable message(s) of ${mq.topic}@${mq.brokerName}/${mq.queueId} ` +
          `could not be sent back to the broker nor republished to the retry topic; trying again in ${CONSUME_LATER_DELAY_MS / 1000} s (the offset waits for them)`,
      );
      const t = this.host.config.clock.setTimeout(() => {
        this.laterTimers.delete(t);
        if (!pq.dropped) this.sendBackRefused(failed, pq, mq);
      }, CONSUME_LATER_DELAY_MS);
      this.laterTimers.add(t);
    })();
    const tracked = p
      .catch((err: unknown) =>
        log('sending back refused messages of %o failed: %s', mq, (err as Error)?.message ?? err),
      )
      .finally(() => this.sendBacks.delete(tracked));
    this.sendBacks.add(tracked);
  }

  private commit(msgs: MessageExt[], pq: ProcessQueue, mq: MessageQueue): void {
    const offset = pq.removeMessage(msgs);
    if (offset >= 0 && !pq.dropped) this.host.offsetStore.updateOffset(mq, offset, true);
    this.host.onConsumed(pq);
  }

  private submitConsumeRequestLater(msgs: MessageExt[], pq: ProcessQueue, mq: MessageQueue): void {
    if (this.stopped) return;
    const t = this.host.config.clock.setTimeout(() => {
      this.laterTimers.delete(t);
      if (!pq.dropped) this.submitConsumeRequest(msgs, pq, mq);
    }, CONSUME_LATER_DELAY_MS);
    this.laterTimers.add(t);
  }

  /**
   * Stops taking calls; lets the send-backs of refused messages under way end (each bounded by its
   * request timeout), so the offsets persisted next pass them; waits up to `awaitMs` for running
   * handler calls. Resolves true when none is left.
   */
  async shutdown(awaitMs: number): Promise<boolean> {
    const { clock } = this.host.config;
    this.stopped = true;
    for (const t of this.laterTimers) clock.clearTimeout(t);
    this.laterTimers.clear();
    // only when there are some: awaiting nothing would still set the awaitMs timer a turn late, after
    // a ManualClock advanced right after this call
    if (this.sendBacks.size > 0) await Promise.all([...this.sendBacks]);
    this.backlog = [];
    this.backlogHead = 0;
    if (this.inFlight === 0) return true;
    if (awaitMs <= 0) return false;
    return new Promise<boolean>((resolve) => {
      const timer = clock.setTimeout(() => resolve(false), awaitMs);
      this.idleWaiters.push(() => {
        clock.clearTimeout(timer);
        resolve(true);
      });
    });
  }
}
