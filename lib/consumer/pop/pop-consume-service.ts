import createDebug from '../../debug.js';
import type { Logger } from '../../logger.js';
import {
  Operations,
  ResponseCode,
  decodeMessagesSkipping,
  inflateMessages,
  type MessageQueue,
} from '../../../protocol/internal.js';
import { assignReceiptHandles, decodeReceiptHandle, popRealTopic } from '../../../protocol/pop-extra-info.js';
import type { MessageQueueAssignment } from '../../../protocol/body/pop-bodies.js';
import { ResponseFieldError, type MQClientInstance } from '../../client/index.js';
import { BrokerError } from '../../remoting/index.js';
import type { Clock } from '../../clock.js';
import {
  ConsumeConcurrentlyStatus,
  concurrentResult,
  isThenable,
  type ConsumeConcurrentlyContext,
  type MessageListenerConcurrently,
  type MessageListenerOrderly,
} from '../core/consume-types.js';
import type { MessageExt } from '../core/message.js';
import type { ConsumerTrace } from '../../trace/trace-hooks.js';
import { UndecodableMessageError } from '../errors.js';
import type { ResolvedPopConsumeOptions } from '../core/pop-consume-options.js';
import { randomUUID } from 'node:crypto';
import { consumePoppedInOrder, type PopOrderlyHost } from './pop-orderly-consume.js';
import {
  countRound,
  refusalReason,
  roundOptions,
  type InflateStats,
  type ResolvedInflateOptions,
} from '../core/inflate.js';

const log = createDebug('rocketwire:consumer:pop');

// The push consumer in POP mode: core/pop-consume-options.ts says what it does and its options.

/** ConsumeMessagePopConcurrentlyService's popDelayLevel, seconds: the next invisible time of a failed message by reconsumeTimes. */
const POP_DELAY_LEVEL_S = [10, 30, 60, 120, 180, 240, 300, 360, 420, 480, 540, 600, 1200, 1800, 3600, 7200];
const POP_POLL_MS = 15_000;
const POP_TIMEOUT_MS = 25_000;
const BACKOFF_ERROR_MS = 1000;
const BACKOFF_THRESHOLD_MS = 50;

export interface PopConsumeHost {
  readonly consumerGroup: string;
  readonly clientId: string;
  readonly strategyName: string;
  readonly initMode: 0 | 1;
  readonly clock: Clock;
  readonly pop: ResolvedPopConsumeOptions;
  instance(): MQClientInstance | null;
  expression(topic: string): string;
  /** TAG or SQL92, as the subscription says. */
  expressionType(topic: string): string;
  listener(): MessageListenerConcurrently;
  /** A handler value that is no status (the push consumer's 'handlerResultInvalid'). */
  invalidHandlerResult(value: unknown, mq: MessageQueue, count: number): void;
  /** The consumer's logger: a failed ACK or change of invisible time is logged at warn. */
  readonly logger: Logger;
  /** Inflate bounds per body and per round (the push consumer's maxInflated… options). */
  readonly inflate: ResolvedInflateOptions;
  /** Where rounds are counted (the push consumer's stats().inflate). */
  readonly inflateStats: InflateStats;
  /** Inflated bytes a popped queue may hold before its next pop or round waits (pullThresholdSizeForQueueMiB). */
  readonly heldBytesLimit: number;
  /** The 'undecodable' event (and its warn line). */
  undecodable(err: UndecodableMessageError): void;
  /** enableTrace: SubBefore/SubAfter around each handler call, as the pull path's; null when off. */
  readonly trace?: ConsumerTrace | null;
  /** Orderly consumers: order pops, consumed as pop-orderly-consume.ts says; null for concurrent ones. */
  readonly orderly?: PopOrderlyHost | null;
}

interface PopLoop {
  mq: MessageQueue;
  stopped: boolean;
  inFlight: number;
  /** Inflated bytes of the rounds being consumed. */
  heldBytes: number;
  abort: AbortController;
  /** Order pops: the attemptId of a pop not answered yet, sent again by its retry (the broker then hands out the same messages). */
  attemptId?: string;
}

/** The pop loops of one consumer, keyed by topic, driven by the rebalance's QUERY_ASSIGNMENT answers. */
export class PopConsumeService {
  private readonly loops = new Map<string, Map<string, PopLoop>>();
  private stopped = false;

  constructor(private readonly host: PopConsumeHost) {}

  /** Messages popped so far (for tests and stats). */
  consumed = 0;
  /** The most inflated bytes one popped queue held at once (tests read it). */
  peakHeldBytes = 0;

  /**
   * QUERY_ASSIGNMENT for `topic` to a broker of its route; 'POP' when the broker says POP (the loops
   * now follow the assignment), 'PULL' when it says PULL (any loops of the topic stop), null when
   * it could not answer (nothing changes: Java skips the update).
   */
  async query(topic: string): Promise<'POP' | 'PULL' | null> {
    const inst = this.host.instance();
    if (!inst || this.stopped) return null;
    const route = await inst.getTopicRoute(topic).catch(() => null);
    const brokerAddrs: string[] = [];
    for (const b of route?.brokerDatas ?? []) if (b.brokerAddrs['0']) brokerAddrs.push(b.brokerAddrs['0']);
    if (brokerAddrs.length === 0) return null;
    const addr = brokerAddrs[Math.floor(Math.random() * brokerAddrs.length)]!;
    let assignments: MessageQueueAssignment[] | null;
    try {
      const r = await inst.invoke(
        addr,
        Operations.QUERY_ASSIGNMENT,
        {},
        {
          topic,
          consumerGroup: this.host.consumerGroup,
          clientId: this.host.clientId,
          strategyName: this.host.strategyName,
          messageModel: 'CLUSTERING',
        },
        { timeoutMs: 3000 },
      );
      assignments = r.body?.messageQueueAssignments ?? null;
    } catch (err) {
      log('QUERY_ASSIGNMENT of %s to %s failed: %s', topic, addr, (err as Error).message);
      return null;
    }
    if (assignments === null) return null;
    const pop = assignments.filter((a) => a.mode === 'POP').map((a) => a.messageQueue);
    if (pop.length === 0) {
      this.update(topic, []);
      return 'PULL';
    }
    this.update(topic, pop);
    return 'POP';
  }

  private update(topic: string, mqs: MessageQueue[]): void {
    let m = this.loops.get(topic);
    if (!m) this.loops.set(topic, (m = new Map()));
    const want = new Map<string, MessageQueue>(mqs.map((mq) => [`${mq.brokerName}@${mq.queueId}`, mq]));
    for (const [k, loop] of m) {
      if (!want.has(k)) {
        loop.stopped = true;
        loop.abort.abort();
        m.delete(k);
        log('pop of %s %s stopped', topic, k);
      }
    }
    for (const [k, mq] of want) {
      if (m.has(k) || this.stopped) continue;
      const loop: PopLoop = { mq, stopped: false, inFlight: 0, heldBytes: 0, abort: new AbortController() };
      m.set(k, loop);
      log('pop of %s %s started', topic, k);
      void this.run(loop);
    }
  }

  /** Topics consumed by pop now. */
  popTopics(): string[] {
    return [...this.loops].filter(([, m]) => m.size > 0).map(([t]) => t);
  }

  shutdown(): void {
    this.stopped = true;
    for (const m of this.loops.values())
      for (const loop of m.values()) {
        loop.stopped = true;
        loop.abort.abort();
      }
    this.loops.clear();
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.host.clock.setTimeout(resolve, ms));
  }

  private async run(loop: PopLoop): Promise<void> {
    while (!loop.stopped) {
      if (loop.inFlight >= this.host.pop.popThresholdForQueue || loop.heldBytes >= this.host.heldBytesLimit) {
        await this.sleep(BACKOFF_THRESHOLD_MS);
        continue;
      }
      try {
        const wait = await this.popOnce(loop);
        if (wait > 0) await this.sleep(wait);
      } catch (err) {
        if (loop.stopped) return;
        log('pop of %o failed: %s', loop.mq, (err as Error).message);
        await this.sleep(BACKOFF_ERROR_MS);
      }
    }
  }

  /** One pop and the consumption of what it brought; returns the back-off before the next (ms). */
  private async popOnce(loop: PopLoop): Promise<number> {
    const inst = this.host.instance();
    if (!inst) return BACKOFF_ERROR_MS;
    const { mq } = loop;
    const addr = inst.findBrokerMasterAddress(mq.brokerName);
    if (!addr) return BACKOFF_ERROR_MS;
    const op = Operations.POP_MESSAGE;
    const invisibleTime = this.host.pop.popInvisibleTimeMs;
    const header = {
      consumerGroup: this.host.consumerGroup,
      topic: mq.topic,
      queueId: mq.queueId,
      maxMsgNums: this.host.pop.popBatchNums,
      invisibleTime,
      pollTime: POP_POLL_MS,
      bornTime: this.host.clock.now(),
      initMode: this.host.initMode,
      expType: this.host.expressionType(mq.topic),
      exp: this.host.expression(mq.topic),
      order: !!this.host.orderly,
      bname: mq.brokerName,
      ...(this.host.orderly ? { attemptId: (loop.attemptId ??= randomUUID()) } : {}),
    };
    const reply = await inst.call(addr, op, header, undefined, {
      timeoutMs: POP_TIMEOUT_MS,
      signal: loop.abort.signal,
    });
    loop.attemptId = undefined;
    switch (reply.code) {
      case ResponseCode.POLLING_FULL:
        return BACKOFF_ERROR_MS;
      case ResponseCode.POLLING_TIMEOUT:
      case ResponseCode.PULL_NOT_FOUND:
        return 0;
    }
    const h = reply.header;
    // Bodies stay compressed here: the receipt handles are made for every message of the answer,
    // then the bodies inflate in rounds within the per-pull budget (consumeRounds).
    const { messages: msgs, undecodable } = reply.body
      ? decodeMessagesSkipping(reply.body, { decompress: false })
      : { messages: [], undecodable: [] };
    for (const u of undecodable) {
      // Damaged bytes without a trustworthy header: not handed over, not acked (redelivered by the broker).
      this.host.undecodable(
        new UndecodableMessageError({
          topic: mq.topic,
          brokerName: mq.brokerName,
          queueId: u.queueId ?? mq.queueId,
          queueOffset: u.queueOffset ?? -1,
          physOffset: u.commitLogOffset,
          recordIntact: u.recordIntact && u.queueOffset !== undefined,
          bytes: u.length,
          reason: u.reason,
          disposition: 'left-unacked',
        }),
      );
    }
    assignReceiptHandles(msgs, h, mq.brokerName, !!this.host.orderly);
    for (const m of msgs) {
      m.topic = mq.topic;
      (m as MessageExt & { brokerName?: string }).brokerName = mq.brokerName;
    }
    loop.inFlight += msgs.length;
    this.consumed += msgs.length;
    void this.consumeRounds(inst, addr, mq, loop, msgs, h.popTime + invisibleTime)
      .catch((err: unknown) => log('consuming popped messages of %o failed: %s', mq, (err as Error)?.message ?? err))
      .finally(() => {
        loop.inFlight -= msgs.length;
      });
    return 0;
  }

  /**
   * The popped messages in rounds: each round inflates what the per-pull budget allows and hands it
   * to the handler (consumeMessageBatchMaxSize 1, as Java's default: one call per message); the next
   * round starts once it was consumed and the queue's inflated bytes are under heldBytesLimit. A
   * message whose body would inflate past maxInflatedBodyBytes (or does not inflate) is refused:
   * reported, neither acked nor handed over, so the broker hands it out again when its invisible
   * time ends and moves it to the DLQ after its retries (Apache's revive path).
   */
  private async consumeRounds(
    inst: MQClientInstance,
    addr: string,
    mq: MessageQueue,
    loop: PopLoop,
    msgs: MessageExt[],
    invisibleUntil: number,
  ): Promise<void> {
    let from = 0;
    const orderly = this.host.orderly;
    const pop = { inst, addr, mq, invisibleUntil, halted: new Set<number>(), stopped: () => loop.stopped };
    while (from < msgs.length) {
      while (from > 0 && loop.heldBytes >= this.host.heldBytesLimit && !loop.stopped)
        await this.sleep(BACKOFF_THRESHOLD_MS);
      if (loop.stopped) return;
      const round = inflateMessages(msgs, from, roundOptions(this.host.inflate));
      countRound(this.host.inflateStats, round, round.end < msgs.length);
      const refused = new Set<number>();
      for (const r of round.refused) {
        refused.add(r.index);
        const m = msgs[r.index]!;
        // in order, nothing of the queue goes past a message left unacked
        if (orderly) pop.halted.add(m.queueId);
        this.host.undecodable(
          new UndecodableMessageError({
            topic: mq.topic,
            brokerName: mq.brokerName,
            queueId: m.queueId,
            queueOffset: m.queueOffset,
            physOffset: m.commitLogOffset,
            recordIntact: true,
            bytes: m.storeSize,
            reason: refusalReason(r, this.host.inflate),
            disposition: 'left-unacked',
            option: r.tooLarge ? 'maxInflatedBodyBytes' : undefined,
            limit: r.tooLarge ? this.host.inflate.maxInflatedBodyBytes : undefined,
          }),
        );
      }
      const batch: MessageExt[] = [];
      for (let i = from; i < round.end; i++) if (!refused.has(i)) batch.push(msgs[i]!);
      loop.heldBytes += round.keptBytes;
      if (loop.heldBytes > this.peakHeldBytes) this.peakHeldBytes = loop.heldBytes;
      try {
        if (orderly) await consumePoppedInOrder(orderly, pop, batch);
        else await Promise.all(batch.map((m) => this.consumeOne(inst, addr, mq, m, invisibleUntil)));
      } finally {
        loop.heldBytes -= round.keptBytes;
      }
      from = round.end;
    }
  }

  private async consumeOne(
    inst: MQClientInstance,
    addr: string,
    mq: MessageQueue,
    m: MessageExt,
    invisibleUntil: number,
  ): Promise<void> {
    // ConsumeMessagePopConcurrentlyService: a message whose invisible time already ran out is not consumed (someone else has it)
    if (this.host.clock.now() >= invisibleUntil) return;
    const ctx: ConsumeConcurrentlyContext = {
      messageQueue: { topic: mq.topic, brokerName: mq.brokerName, queueId: m.queueId },
      delayLevelWhenNextConsume: 0,
      ackIndex: 2147483647,
    };
    // The handler rule of consume-types.ts: nothing or CONSUME_SUCCESS acks, anything else is retried later.
    let status: ConsumeConcurrentlyStatus = ConsumeConcurrentlyStatus.RECONSUME_LATER;
    // ConsumeMessagePopConcurrentlyService runs the consume hooks around the handler as the pull path does
    const trace = this.host.trace ?? null;
    const before = trace ? trace.before([m]) : null;
    let threw = false;
    try {
      const r = this.host.listener()([m], ctx);
      const value: unknown = isThenable(r) ? await r : r;
      const result = concurrentResult(value);
      status = result.status;
      if (result.invalid) this.host.invalidHandlerResult(value, mq, 1);
    } catch (err) {
      threw = true;
      log('handler threw: %s', (err as Error)?.message ?? err);
    }
    if (trace) trace.after(before, 1, { status: threw ? undefined : status, threw, timedOut: false });
    const rh = decodeReceiptHandle(m.properties.POP_CK!);
    const base = {
      consumerGroup: this.host.consumerGroup,
      topic: popRealTopic(mq.topic, this.host.consumerGroup, rh.retry),
      queueId: rh.queueId,
      extraInfo: m.properties.POP_CK!,
      offset: rh.queueOffset,
      bname: rh.brokerName,
    };
    try {
      if (status === ConsumeConcurrentlyStatus.CONSUME_SUCCESS) {
        await answered(inst.call(addr, Operations.ACK_MESSAGE, base, undefined, { timeoutMs: 3000 }));
      } else {
        const level = ctx.delayLevelWhenNextConsume > 0 ? ctx.delayLevelWhenNextConsume : m.reconsumeTimes;
        const delayS = POP_DELAY_LEVEL_S[Math.min(Math.max(level, 0), POP_DELAY_LEVEL_S.length - 1)]!;
        const header = { ...base, invisibleTime: delayS * 1000 };
        await answered(
          inst.call(addr, Operations.CHANGE_MESSAGE_INVISIBLETIME, header, undefined, { timeoutMs: 3000 }),
        );
      }
    } catch (err) {
      const what = status === ConsumeConcurrentlyStatus.CONSUME_SUCCESS ? 'ACK' : 'change of invisible time';
      this.host.logger.warn(
        `consumer ${this.host.consumerGroup}: ${what} of message ${m.msgId} (${mq.topic}) at ${addr} failed: ${(err as Error).message.split('\n')[0]}; the broker hands it out again when its invisible time ends`,
      );
    }
  }
}

/**
 * A call whose answer, whatever its code or header, ends the matter: the broker hands the message
 * out again when its invisible time ends either way, so only a call that got no answer is worth a
 * warning.
 */
async function answered(reply: Promise<unknown>): Promise<void> {
  try {
    await reply;
  } catch (err) {
    if (!(err instanceof BrokerError) && !(err instanceof ResponseFieldError)) throw err;
  }
}

/** What createPopConsumeService reads of the push consumer (PushConsumerImpl, structurally). */
interface PushConsumerLike {
  readonly config: {
    consumerGroup: string;
    orderly: boolean;
    messageModel: string;
    consumeFromWhere: string;
    clock: Clock;
    allocateStrategy: { name: string };
    subscriptions: Record<string, unknown>;
    pop: ResolvedPopConsumeOptions;
    logger: Logger;
    inflate: ResolvedInflateOptions;
    pullThresholdSizeForQueueMiB: number;
    suspendCurrentQueueTimeMillis: number;
    consumeMessageBatchMaxSize: number;
  };
  readonly maxReconsumeTimes: number;
  sendMessageBack(msg: MessageExt, delayLevel: number, brokerName: string): Promise<boolean>;
  readonly recorder: { readonly inflate: InflateStats };
  readonly events: { undecodable(err: UndecodableMessageError): void };
  invalidHandlerResult(value: unknown, mq: MessageQueue, count: number): void;
  readonly instance: MQClientInstance | null;
  readonly clientId: string;
  readonly listener: unknown;
  readonly consumeListener: unknown;
  readonly subscriptionInner: Map<string, { subString: string; expressionType?: string }>;
  readonly trace: ConsumerTrace | null;
}

/**
 * The POP service of a push consumer, or null when it rebalances on the client: clientRebalance on
 * (the default) or BROADCASTING, as Java's RebalancePushImpl#clientRebalance. Java keeps orderly
 * consumers on client rebalance too (its pop-orderly service is unfinished); here an orderly one
 * pops with order=true (pop-orderly-consume.ts).
 */
export function createPopConsumeService(c: PushConsumerLike): PopConsumeService | null {
  const { config } = c;
  if (config.pop.clientRebalance || config.messageModel !== 'CLUSTERING') return null;
  const orderly: PopOrderlyHost | null = config.orderly
    ? {
        consumerGroup: config.consumerGroup,
        clock: config.clock,
        logger: config.logger,
        listener: () => (c.consumeListener ?? c.listener) as MessageListenerOrderly,
        invalidHandlerResult: (value, mq, count) => c.invalidHandlerResult(value, mq, count),
        get maxReconsumeTimes() {
          return c.maxReconsumeTimes;
        },
        suspendCurrentQueueTimeMs: config.suspendCurrentQueueTimeMillis,
        consumeMessageBatchMaxSize: config.consumeMessageBatchMaxSize,
        invisibleTimeMs: config.pop.popInvisibleTimeMs,
        sendMessageBack: (msg, level, brokerName) => c.sendMessageBack(msg, level, brokerName),
      }
    : null;
  return new PopConsumeService({
    consumerGroup: config.consumerGroup,
    get clientId() {
      return c.clientId;
    },
    strategyName: config.allocateStrategy.name,
    initMode: config.consumeFromWhere === 'CONSUME_FROM_FIRST_OFFSET' ? 0 : 1,
    clock: config.clock,
    pop: config.pop,
    instance: () => c.instance,
    expression: (topic) => {
      const given = config.subscriptions[topic];
      return c.subscriptionInner.get(topic)?.subString ?? (typeof given === 'string' ? given : '*');
    },
    expressionType: (topic) => c.subscriptionInner.get(topic)?.expressionType ?? 'TAG',
    listener: () => (c.consumeListener ?? c.listener) as MessageListenerConcurrently,
    invalidHandlerResult: (value, mq, count) => c.invalidHandlerResult(value, mq, count),
    logger: config.logger,
    inflate: config.inflate,
    inflateStats: c.recorder.inflate,
    heldBytesLimit: config.pullThresholdSizeForQueueMiB * 1024 * 1024,
    undecodable: (err) => c.events.undecodable(err),
    get trace() {
      return c.trace;
    },
    orderly,
  });
}
