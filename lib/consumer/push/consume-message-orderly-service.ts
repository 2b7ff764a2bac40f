import createDebug from '../../debug.js';
import type { ClockTimer } from '../../clock.js';
import { resetRetryTopic, type ConsumeHost } from '../core/consume-host.js';
import {
  ConsumeOrderlyStatus,
  isThenable,
  orderlyResult,
  type ConsumeOrderlyContext,
  type MessageListenerOrderly,
} from '../core/consume-types.js';
import type { MessageExt } from '../core/message.js';
import { retryTopic, type MessageQueue } from '../../../protocol/index.js';
import type { ProcessQueue } from '../core/process-queue.js';
import { isRefused } from '../core/inflate.js';

const log = createDebug('rocketwire:consumer');

/** Java's ConsumeMessageOrderlyService constants. */
export const MAX_TIME_CONSUME_CONTINUOUSLY_MS = 60_000;
const RELOCK_DELAY_MS = 10;
const RELOCK_FAILED_DELAY_MS = 3000;

/**
 * Orderly consumption (ConsumeMessageOrderlyService): one handler call at a time per queue, always the
 * lowest cached offsets first, and at most consumeThreadMin queues consumed at once: Java runs each
 * queue's consume request on the same pool as concurrent consumption (consumeThreadMin threads over an
 * unbounded queue), and a request keeps its thread until the queue is empty, its lock is lost, it must
 * back off, or it ran 60 s. A queue whose turn has not come waits in order. In CLUSTERING a queue is consumed only while this client holds the
 * broker lock (renewed by the consumer every lockIntervalMs, expired after 30 s). Failures are retried
 * locally after suspendCurrentQueueTimeMillis; after maxReconsumeTimes they are republished with
 * RECONSUME_TIME ≥ max so the broker puts them into the DLQ. CONSUMER_SEND_MSG_BACK is never used.
 */
export class ConsumeMessageOrderlyService {
  private stopped = false;
  /** The consume run that owns each queue now; it settles when the run's last handler call ended. */
  private readonly runs = new Map<ProcessQueue, Promise<void>>();
  /** Queues waiting for one of the consumeThreadMin slots, in order (Java's executor queue). */
  private readonly waiting = new Map<ProcessQueue, MessageQueue>();
  private readonly laterTimers = new Set<ClockTimer>();
  private readonly retryTopicName: string;

  constructor(
    private readonly host: ConsumeHost,
    private readonly listener: MessageListenerOrderly,
  ) {
    this.retryTopicName = retryTopic(host.config.consumerGroup);
  }

  get inFlightCount(): number {
    return this.runs.size;
  }

  /**
   * Java's `pq.getConsumeLock().tryLock(1000 ms)` before a removed queue is unlocked: resolves true
   * at once when no run owns the queue, true when the owning run ends (the queue is dropped, so it
   * stops after its handler call in flight), false when `timeoutMs` passes on the clock first.
   */
  awaitConsumeIdle(pq: ProcessQueue, timeoutMs: number): Promise<boolean> {
    const run = this.runs.get(pq);
    if (run === undefined) return Promise.resolve(true);
    const { clock } = this.host.config;
    return new Promise<boolean>((resolve) => {
      const timer = clock.setTimeout(() => resolve(!this.runs.has(pq)), timeoutMs);
      void run.then(() => {
        clock.clearTimeout(timer);
        resolve(true);
      });
    });
  }

  submitConsumeRequest(_msgs: MessageExt[], pq: ProcessQueue, mq: MessageQueue, dispatchToConsume: boolean): void {
    if (dispatchToConsume) this.startRun(pq, mq);
  }

  private startRun(pq: ProcessQueue, mq: MessageQueue): void {
    if (this.stopped || pq.dropped || this.runs.has(pq) || this.waiting.has(pq)) return;
    if (this.runs.size >= this.host.config.consumeThreadMin) {
      this.waiting.set(pq, mq);
      return;
    }
    this.launch(pq, mq);
  }

  private launch(pq: ProcessQueue, mq: MessageQueue): void {
    const p = this.run(pq, mq)
      .catch((err: unknown) => log('orderly run of %o failed: %s', mq, (err as Error)?.message ?? err))
      .finally(() => {
        this.runs.delete(pq);
        this.next();
      });
    this.runs.set(pq, p);
  }

  /** A slot was freed: the first waiting queue that is still consumable gets it. */
  private next(): void {
    for (const [pq, mq] of this.waiting) {
      if (this.stopped || this.runs.size >= this.host.config.consumeThreadMin) return;
      this.waiting.delete(pq);
      if (!pq.dropped && !this.runs.has(pq)) this.launch(pq, mq);
    }
  }

  /** Queues waiting for a slot (stats' consumeBacklog). */
  get backlogCount(): number {
    return this.waiting.size;
  }

  private later(pq: ProcessQueue, mq: MessageQueue, delayMs: number, relock = false): void {
    if (this.stopped) return;
    const t = this.host.config.clock.setTimeout(() => {
      this.laterTimers.delete(t);
      if (pq.dropped || this.stopped) return;
      if (!relock) {
        this.startRun(pq, mq);
        return;
      }
      this.host.lockQueue(mq).then(
        (ok) => this.later(pq, mq, ok ? RELOCK_DELAY_MS : RELOCK_FAILED_DELAY_MS),
        () => this.later(pq, mq, RELOCK_FAILED_DELAY_MS),
      );
    }, delayMs);
    this.laterTimers.add(t);
  }

  private async run(pq: ProcessQueue, mq: MessageQueue): Promise<void> {
    const { config } = this.host;
    const clustering = config.messageModel === 'CLUSTERING';
    const begin = config.clock.now();
    for (;;) {
      if (pq.dropped || this.stopped) return;
      const now = config.clock.now();
      if (clustering && (!pq.locked || pq.isLockExpired(now))) {
        this.later(pq, mq, RELOCK_DELAY_MS, true);
        return;
      }
      if (now - begin > MAX_TIME_CONSUME_CONTINUOUSLY_MS) {
        this.later(pq, mq, RELOCK_DELAY_MS);
        return;
      }
      let msgs = pq.takeMessages(config.consumeMessageBatchMaxSize, now);
      if (msgs.length === 0) return;
      const refusedAt = msgs.findIndex(isRefused);
      if (refusedAt === 0) {
        if (!(await this.sendBackRefused(msgs, pq, mq))) return;
        continue;
      }
      if (refusedAt > 0) {
        // The call takes the messages before the refused one; the refused one is next.
        pq.makeMessageToConsumeAgain(msgs.slice(refusedAt));
        msgs = msgs.slice(0, refusedAt);
      }
      resetRetryTopic(msgs, this.retryTopicName);
      const ctx: ConsumeOrderlyContext = {
        messageQueue: mq,
        autoCommit: true,
        suspendCurrentQueueTimeMs: -1,
        suspendCurrentQueueTimeMillis: -1,
      };
      let status: unknown;
      const trace = this.host.trace ? this.host.trace.before(msgs) : null;
      const metrics = this.host.metrics;
      if (metrics) metrics.beforeConsume(msgs, now, metrics.arrivalOf(msgs[0]));
      let threw = false;
      try {
        const r = this.listener(msgs, ctx);
        const value: unknown = isThenable(r) ? await r : r;
        const result = orderlyResult(value);
        status = result.status;
        if (result.invalid) this.host.invalidHandlerResult(value, mq, msgs.length);
      } catch (err) {
        log('orderly handler failed for %o: %s', mq, (err as Error)?.message ?? err);
        status = undefined;
        threw = true;
      }
      const end = config.clock.now();
      if (trace) this.host.trace!.after(trace, msgs.length, { status, threw, timedOut: false });
      this.host.metrics?.afterConsume(
        msgs,
        now,
        end,
        status === ConsumeOrderlyStatus.SUCCESS || status === ConsumeOrderlyStatus.COMMIT,
      );
      this.host.recorder.consumeRt(mq.topic, end - now);
      if (pq.dropped) return;
      const cont = await this.processConsumeResult(msgs, status, ctx, pq, mq, end);
      if (!cont) return;
    }
  }

  private async processConsumeResult(
    msgs: MessageExt[],
    status: unknown,
    ctx: ConsumeOrderlyContext,
    pq: ProcessQueue,
    mq: MessageQueue,
    now: number,
  ): Promise<boolean> {
    const stats = this.host.recorder;
    let commitOffset = -1;
    let cont = true;
    const success = status === ConsumeOrderlyStatus.SUCCESS || status === ConsumeOrderlyStatus.COMMIT;
    if (ctx.autoCommit) {
      if (success || status === ConsumeOrderlyStatus.ROLLBACK) {
        // With autoCommit Java treats COMMIT and ROLLBACK as SUCCESS (with a warning).
        stats.consumeOk(mq.topic, msgs.length, now);
        commitOffset = pq.commit();
      } else {
        stats.consumeFailed(mq.topic, msgs.length, now);
        if (await this.checkReconsumeTimes(msgs)) {
          pq.makeMessageToConsumeAgain(msgs);
          this.later(pq, mq, this.suspendTime(ctx));
          cont = false;
        } else {
          commitOffset = pq.commit();
        }
      }
    } else if (status === ConsumeOrderlyStatus.SUCCESS) {
      stats.consumeOk(mq.topic, msgs.length, now);
    } else if (status === ConsumeOrderlyStatus.COMMIT) {
      stats.consumeOk(mq.topic, msgs.length, now);
      commitOffset = pq.commit();
    } else if (status === ConsumeOrderlyStatus.ROLLBACK) {
      pq.makeMessageToConsumeAgain(msgs);
      this.later(pq, mq, this.suspendTime(ctx));
      cont = false;
    } else {
      stats.consumeFailed(mq.topic, msgs.length, now);
      if (await this.checkReconsumeTimes(msgs)) {
        pq.makeMessageToConsumeAgain(msgs);
        this.later(pq, mq, this.suspendTime(ctx));
        cont = false;
      }
    }
    if (commitOffset >= 0 && !pq.dropped) this.host.offsetStore.updateOffset(mq, commitOffset, false);
    this.host.onConsumed(pq);
    return cont;
  }

  /**
   * `msgs[0]` was refused undecoded (inflate.ts): it can never be handed to the handler, so it is
   * not retried locally as a failed message would be; it goes where an orderly message that used up
   * its retries goes, republished with RECONSUME_TIME = maxReconsumeTimes (the broker stores it in
   * the DLQ). The other messages taken are put back. True when the queue goes on; false when the
   * republish failed and the queue is suspended (tried again after suspendCurrentQueueTimeMillis,
   * the offset held at the refused message). BROADCASTING drops it as every failed message.
   */
  private async sendBackRefused(msgs: MessageExt[], pq: ProcessQueue, mq: MessageQueue): Promise<boolean> {
    const { config } = this.host;
    if (msgs.length > 1) pq.makeMessageToConsumeAgain(msgs.slice(1));
    const m = msgs[0]!;
    this.host.recorder.consumeFailed(mq.topic, 1, config.clock.now());
    if (config.messageModel !== 'BROADCASTING') {
      const max = this.host.maxReconsumeTimes;
      if (!(await this.host.republishToRetry(m, max))) {
        if (pq.dropped) return false;
        pq.makeMessageToConsumeAgain([m]);
        config.logger.warn(
          `consumer ${config.consumerGroup}: the undecodable message at ${mq.topic}@${mq.brokerName}/${mq.queueId}@${m.queueOffset} could not be ` +
            `republished towards the DLQ; the queue waits ${config.suspendCurrentQueueTimeMillis} ms and tries again`,
        );
        this.later(pq, mq, config.suspendCurrentQueueTimeMillis);
        return false;
      }
    }
    if (pq.dropped) return false;
    const commitOffset = pq.commit();
    if (commitOffset >= 0) this.host.offsetStore.updateOffset(mq, commitOffset, false);
    this.host.onConsumed(pq);
    return true;
  }

  private suspendTime(ctx: ConsumeOrderlyContext): number {
    const own = ctx.suspendCurrentQueueTimeMs >= 0 ? ctx.suspendCurrentQueueTimeMs : ctx.suspendCurrentQueueTimeMillis;
    const v = own >= 0 ? own : this.host.config.suspendCurrentQueueTimeMillis;
    return Math.min(30_000, Math.max(10, v));
  }

  /**
   * True when the batch must be retried locally. Messages that reached maxReconsumeTimes are republished
   * towards the DLQ; if that fails they are retried too.
   */
  private async checkReconsumeTimes(msgs: MessageExt[]): Promise<boolean> {
    let suspend = false;
    const max = this.host.maxReconsumeTimes;
    for (const msg of msgs) {
      if (msg.reconsumeTimes >= max) {
        msg.properties.RECONSUME_TIME = String(msg.reconsumeTimes);
        if (!(await this.host.republishToRetry(msg, msg.reconsumeTimes))) {
          suspend = true;
          msg.reconsumeTimes++;
        }
      } else {
        suspend = true;
        msg.reconsumeTimes++;
      }
    }
    if (suspend) this.host.recorder.localRetries += msgs.length;
    return suspend;
  }

  async shutdown(awaitMs: number): Promise<boolean> {
    const { clock } = this.host.config;
    this.stopped = true;
    for (const t of this.laterTimers) clock.clearTimeout(t);
    this.laterTimers.clear();
    this.waiting.clear();
    if (this.runs.size === 0) return true;
    if (awaitMs <= 0) return false;
    const runs = [...this.runs.values()];
    return new Promise<boolean>((resolve) => {
      const timer = clock.setTimeout(() => resolve(false), awaitMs);
      void Promise.allSettled(runs).then(() => {
        clock.clearTimeout(timer);
        resolve(true);
      });
    });
  }
}
