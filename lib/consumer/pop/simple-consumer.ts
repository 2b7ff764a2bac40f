import createDebug from '../../debug.js';
import {
  Operations,
  PermName,
  ResponseCode,
  decodeMessagesSkipping,
  inflateMessages,
  type MessageExt,
} from '../../../protocol/internal.js';
import {
  assignReceiptHandles,
  decodeReceiptHandle,
  encodeReceiptHandle,
  popRealTopic,
  type ReceiptHandle,
} from '../../../protocol/pop-extra-info.js';
import type { BatchAck } from '../../../protocol/body/pop-bodies.js';
import { MQClientInstance, resolveInstanceName, type CallReply } from '../../client/index.js';
import { BrokerError } from '../../remoting/index.js';
import { checkMetricsOptions, type ConsumerMetrics, type MetricsOptions } from '../../metrics/index.js';
import { startConsumerMetrics } from '../core/events.js';
import { instanceHealth } from '../../client/health.js';
import type { ConsumerHealth } from '../core/health.js';
import { BrokerAddressNotFoundError, ConsumerOptionError, ConsumerStateError } from '../errors.js';
import { ConsumerEvents, type PushConsumerEvents } from '../core/consumer-events.js';
import { PopNotSupportedError, UndecodableMessageError } from '../errors.js';
import { sameEndpoint } from './proxy-endpoint.js';
import {
  intOption,
  MAX_INVISIBLE_MS,
  resolveSimpleConsumerOptions,
  type ResolvedSimpleConsumerOptions,
  type SimpleConsumerOptions,
} from './simple-consumer-options.js';
import { SimpleConsumerTrace } from './simple-consumer-trace.js';
import { countRound, newInflateStats, refusalReason, roundOptions, type InflateStats } from '../core/inflate.js';

const log = createDebug('rocketwire:consumer:pop');

/**
 * A popped message: the stored message plus what ack and changeInvisibleDuration need.
 * @category Consuming
 */
export interface ReceivedMessage extends MessageExt {
  /** The receipt handle (POP_CK), as Java builds it from the pop answer's extraInfo. */
  readonly receiptHandle: string;
  brokerName: string;
}

/**
 * What the broker said to an ack: OK, or NO_EXIST (Java's AckStatus) when the offset is no longer in the queue.
 * @category Consuming
 */
export type AckStatus = 'OK' | 'NO_EXIST';

/** The receive's RPC timeout beyond its poll time (Java: 15 s poll, 25 s timeout). */
const POP_TIMEOUT_MARGIN_MS = 10_000;

type State = 'CREATED' | 'RUNNING' | 'SHUTDOWN';

/**
 * Java's 5.x SimpleConsumer over remoting: `receive` pops messages (POP_MESSAGE) that stay invisible
 * to the group until acked (`ack`) or their invisible time ends (`changeInvisibleDuration`); the
 * broker owns the assignment and the offsets, so there is no rebalance on the client.
 * @category Consuming
 */
export class SimpleConsumer {
  private readonly o: ResolvedSimpleConsumerOptions;
  private instance: MQClientInstance | null = null;
  private state: State = 'CREATED';
  private brokerIndex = 0;
  private readonly inflight = new Set<AbortController>();
  private metrics: ConsumerMetrics | null = null;
  /** enableTrace (simple-consumer-trace.ts); null when off or not started. */
  private trace: SimpleConsumerTrace | null = null;
  private readonly metricsOptions: MetricsOptions | undefined;
  private readonly events = new ConsumerEvents();
  private readonly inflateStats = newInflateStats();
  /**
   * Popped messages a receive() could not inflate within its budget (maxInflatedBytesPerPull):
   * still invisible to the group and unacked, handed out by the next receive() calls before they
   * pop again, while their invisible time lasts (after it, the broker hands them out again).
   */
  private deferred: { msg: ReceivedMessage; invisibleUntil: number }[] = [];

  constructor(options: SimpleConsumerOptions) {
    this.o = resolveSimpleConsumerOptions(options);
    this.events.logger = this.o.logger;
    this.events.label = `simple consumer ${this.o.consumerGroup}`;
    const badMetrics = checkMetricsOptions(options.metrics);
    if (badMetrics) throw new ConsumerOptionError(badMetrics.option, badMetrics.message);
    this.metricsOptions = options.metrics;
  }

  /** The consumer group. */
  get consumerGroup(): string {
    return this.o.consumerGroup;
  }

  /**
   * Connects and fetches the topic's route; a rejected start() releases what it acquired and may be called again.
   */
  async start(): Promise<void> {
    if (this.state !== 'CREATED')
      throw new ConsumerStateError(this.state, `cannot start a simple consumer in state ${this.state}`);
    const instance = MQClientInstance.acquire({
      ...this.o.client,
      namesrvAddr: this.o.namesrvAddr === '' ? undefined : this.o.namesrvAddr,
      instanceName: resolveInstanceName(this.o.instanceName),
      clock: this.o.clock,
    });
    this.instance = instance;
    try {
      await instance.start();
      await instance.getTopicRoute(this.o.topic, { refresh: true });
      this.metrics = await startConsumerMetrics(this.metricsOptions, instance.clientId, this.o.consumerGroup);
      if (this.o.enableTrace) this.trace = new SimpleConsumerTrace(this.o);
    } catch (err) {
      this.instance = null;
      await instance.release();
      throw err;
    }
    this.state = 'RUNNING';
  }

  /** start(), under the name Node clients use. */
  connect(): Promise<void> {
    return this.start();
  }

  /** shutdown(), under the name Node clients use. */
  close(): Promise<void> {
    return this.shutdown();
  }

  /** `await using consumer = new SimpleConsumer(…)` shuts it down at the end of the block. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.shutdown();
  }

  /** What a readiness probe needs, as plain data (no queues: the broker assigns them per receive). */
  health(): ConsumerHealth {
    const inst = instanceHealth(this.instance);
    return {
      state: this.state,
      ready: this.state === 'RUNNING' && inst.nameServer.lastAnswer !== null,
      group: this.o.consumerGroup,
      ...inst,
      queues: [],
    };
  }

  /** Aborts receives still waiting and releases the client instance. */
  async shutdown(): Promise<void> {
    if (this.state === 'SHUTDOWN') return;
    this.state = 'SHUTDOWN';
    for (const c of this.inflight) c.abort();
    const inst = this.instance;
    this.instance = null;
    const trace = this.trace;
    this.trace = null;
    await trace?.shutdown();
    if (inst) await inst.release();
  }

  private running(): MQClientInstance {
    if (this.state !== 'RUNNING' || !this.instance)
      throw new ConsumerStateError(this.state, `the simple consumer is ${this.state.toLowerCase()}`);
    return this.instance;
  }

  /** Readable brokers of the topic (name, master address), refusing a proxy. */
  private async brokers(inst: MQClientInstance): Promise<{ brokerName: string; addr: string }[]> {
    const route = await inst.getTopicRoute(this.o.topic);
    const namesrvs = inst.nameServerAddresses();
    const out: { brokerName: string; addr: string }[] = [];
    for (const q of route.queueDatas) {
      if ((q.perm & PermName.PERM_READ) === 0 || q.readQueueNums <= 0) continue;
      const addr = inst.findBrokerMasterAddress(q.brokerName);
      if (!addr) continue;
      // The 5.x proxy answers routes as the name server does, naming itself as every broker
      // (P/GetTopicRouteActivity): a broker address that is a name server address is a proxy.
      if (namesrvs.some((n) => sameEndpoint(n, addr))) throw new PopNotSupportedError(addr, 'proxy');
      out.push({ brokerName: q.brokerName, addr });
    }
    if (out.length === 0) throw new BrokerAddressNotFoundError(route.queueDatas[0]?.brokerName ?? this.o.topic);
    return out;
  }

  /**
   * Pop up to `maxMessages` (1–32) messages from the next broker of the topic (round robin),
   * waiting up to awaitDurationMs for one to arrive. Each stays invisible to the group for
   * `invisibleDurationMs`: ack it before then, or it is delivered again.
   */
  async receive(maxMessages = 32, invisibleDurationMs = this.o.invisibleDurationMs): Promise<ReceivedMessage[]> {
    intOption('maxMessages', maxMessages, 32, 1, 32);
    intOption('invisibleDurationMs', invisibleDurationMs, 60_000, 1000, MAX_INVISIBLE_MS);
    const inst = this.running();
    // Messages an earlier receive popped but could not inflate within its budget come first.
    const waiting = this.takeDeferred(maxMessages);
    if (waiting !== null) return waiting;
    const brokers = await this.brokers(inst);
    const { brokerName, addr } = brokers[this.brokerIndex++ % brokers.length]!;
    const op = Operations.POP_MESSAGE;
    const header = {
      consumerGroup: this.o.consumerGroup,
      topic: this.o.topic,
      queueId: -1,
      maxMsgNums: maxMessages,
      invisibleTime: invisibleDurationMs,
      pollTime: this.o.awaitDurationMs,
      bornTime: this.o.clock.now(),
      initMode: this.o.initMode,
      expType: this.o.expType,
      exp: this.o.exp,
      order: this.o.orderly,
      bname: brokerName,
    };
    const abort = new AbortController();
    this.inflight.add(abort);
    let reply: CallReply<typeof op>;
    try {
      reply = await inst.call(addr, op, header, undefined, {
        timeoutMs: this.o.awaitDurationMs + POP_TIMEOUT_MARGIN_MS,
        signal: abort.signal,
      });
    } catch (err) {
      throw popNotSupported(err, addr, true);
    } finally {
      this.inflight.delete(abort);
    }
    // POLLING_FULL, POLLING_TIMEOUT, PULL_NOT_FOUND: nothing this time (Java's POLLING_* statuses)
    if (reply.code !== ResponseCode.SUCCESS) return [];
    const h = reply.header;
    // Bodies stay compressed until every message has its receipt handle; then they inflate within
    // the budget of one receive (maxInflatedBytesPerPull), the rest waits for the next receive().
    const { messages: msgs, undecodable } = reply.body
      ? decodeMessagesSkipping(reply.body, { decompress: false })
      : { messages: [], undecodable: [] };
    for (const u of undecodable) {
      this.events.undecodable(
        new UndecodableMessageError({
          topic: this.o.topic,
          brokerName,
          queueId: u.queueId ?? -1,
          queueOffset: u.queueOffset ?? -1,
          physOffset: u.commitLogOffset,
          recordIntact: u.recordIntact && u.queueOffset !== undefined,
          bytes: u.length,
          reason: u.reason,
          disposition: 'left-unacked',
        }),
      );
    }
    this.metrics?.arrived(msgs, this.o.clock.now());
    assignReceiptHandles(msgs, h, brokerName, this.o.orderly);
    const popped: { msg: ReceivedMessage; invisibleUntil: number }[] = [];
    for (const m of msgs) {
      const r = m as MessageExt & { receiptHandle: string; brokerName: string };
      r.receiptHandle = m.properties.POP_CK!;
      r.brokerName = brokerName;
      r.topic = this.o.userTopic;
      popped.push({ msg: r, invisibleUntil: h.popTime + h.invisibleTime });
    }
    log('popped %d from %s (%s), rest %d', popped.length, brokerName, addr, h.restNum);
    this.deferred = popped.concat(this.deferred);
    return this.takeDeferred(maxMessages) ?? [];
  }

  /**
   * Up to `max` messages of the deferred list, inflated within one budget; null when none is left
   * (those whose invisible time ended are dropped: the broker hands them out again). A refused
   * message (its body would inflate past maxInflatedBodyBytes, or does not inflate) is reported
   * and left unacked: the broker redelivers it, then moves it to the DLQ (Apache's revive path).
   */
  private takeDeferred(max: number): ReceivedMessage[] | null {
    for (;;) {
      const now = this.o.clock.now();
      const live = this.deferred.filter((d) => d.invisibleUntil > now);
      if (live.length < this.deferred.length)
        log('%d popped messages became visible again before a receive() took them', this.deferred.length - live.length);
      this.deferred = live;
      if (live.length === 0) return null;
      const take = live.slice(0, max).map((d) => d.msg);
      const round = inflateMessages(take, 0, roundOptions(this.o.inflate));
      countRound(this.inflateStats, round, round.end < take.length);
      const refused = new Set<number>();
      for (const r of round.refused) {
        refused.add(r.index);
        const m = take[r.index]!;
        this.events.undecodable(
          new UndecodableMessageError({
            topic: this.o.topic,
            brokerName: m.brokerName,
            queueId: m.queueId,
            queueOffset: m.queueOffset,
            physOffset: m.commitLogOffset,
            recordIntact: true,
            bytes: m.storeSize,
            reason: refusalReason(r, this.o.inflate),
            disposition: 'left-unacked',
            option: r.tooLarge ? 'maxInflatedBodyBytes' : undefined,
            limit: r.tooLarge ? this.o.inflate.maxInflatedBodyBytes : undefined,
          }),
        );
      }
      this.deferred = live.slice(round.end);
      const out: ReceivedMessage[] = [];
      for (let i = 0; i < round.end; i++) if (!refused.has(i)) out.push(take[i]!);
      if (out.length > 0) {
        this.trace?.handedOver(out);
        return out;
      }
    }
  }

  /**
   * 'undecodable' (a popped message that cannot be decoded, e.g. a body over maxInflatedBodyBytes:
   * left unacked, so the broker redelivers it and then moves it to the DLQ; also logged at warn).
   * Returns the function that removes the listener.
   */
  on(event: 'undecodable', listener: (...args: PushConsumerEvents['undecodable']) => void): () => void {
    return this.events.on(event, listener);
  }

  /**
   * Inflation figures (bytes inflated, the most one receive inflated, budget cuts, refused
   * messages) and how many popped messages wait for the next receive().
   */
  stats(): { inflate: InflateStats; deferred: number } {
    return { inflate: { ...this.inflateStats }, deferred: this.deferred.length };
  }

  private brokerAddr(inst: MQClientInstance, brokerName: string): string {
    const addr = inst.findBrokerMasterAddress(brokerName);
    if (!addr) throw new BrokerAddressNotFoundError(brokerName);
    return addr;
  }

  /**
   * ACK_MESSAGE for one message; BATCH_ACK_MESSAGE (5.1.3+) per broker for several, grouped by
   * checkpoint as Java's batchAckMessageAsync does. OK, or NO_EXIST when the broker no longer has
   * the offset; any other answer is a BrokerError.
   */
  async ack(message: ReceivedMessage | readonly ReceivedMessage[]): Promise<AckStatus> {
    const inst = this.running();
    const list = Array.isArray(message) ? (message as readonly ReceivedMessage[]) : [message as ReceivedMessage];
    if (list.length === 0) return 'OK';
    if (list.length === 1) {
      const rh = decodeReceiptHandle(list[0]!.receiptHandle);
      const addr = this.brokerAddr(inst, rh.brokerName);
      const op = Operations.ACK_MESSAGE;
      const header = {
        consumerGroup: this.o.consumerGroup,
        topic: popRealTopic(this.o.topic, this.o.consumerGroup, rh.retry),
        queueId: rh.queueId,
        extraInfo: list[0]!.receiptHandle,
        offset: rh.queueOffset,
        bname: rh.brokerName,
      };
      const acked = await this.ackStatus(
        inst.call(addr, op, header, undefined, { timeoutMs: this.o.ackTimeoutMs }),
        addr,
        op.code,
      );
      if (acked === 'OK') this.trace?.acked(list);
      return acked;
    }
    const byBroker = new Map<string, Map<string, BatchAck>>();
    for (const m of list) {
      const rh = decodeReceiptHandle(m.receiptHandle);
      let acks = byBroker.get(rh.brokerName);
      if (!acks) byBroker.set(rh.brokerName, (acks = new Map()));
      const key = `${rh.retry}@${rh.queueId}@${rh.ckQueueOffset}@${rh.popTime}`;
      let a = acks.get(key);
      if (!a) {
        a = {
          consumerGroup: this.o.consumerGroup,
          topic: this.o.topic,
          retry: rh.retry,
          startOffset: rh.ckQueueOffset,
          queueId: rh.queueId,
          reviveQueueId: rh.reviveQid,
          popTime: rh.popTime,
          invisibleTime: rh.invisibleTime,
          bits: [],
        };
        acks.set(key, a);
      }
      a.bits.push(rh.queueOffset - rh.ckQueueOffset);
    }
    let status: AckStatus = 'OK';
    await Promise.all(
      [...byBroker].map(async ([brokerName, acks]) => {
        const addr = this.brokerAddr(inst, brokerName);
        const op = Operations.BATCH_ACK_MESSAGE;
        const reply = inst.call(
          addr,
          op,
          {},
          { brokerName, acks: [...acks.values()] },
          { timeoutMs: this.o.ackTimeoutMs },
        );
        if ((await this.ackStatus(reply, addr, op.code)) === 'NO_EXIST') status = 'NO_EXIST';
      }),
    );
    if (status === 'OK') this.trace?.acked(list);
    return status;
  }

  /** The ack's answer: SUCCESS is OK, NO_MESSAGE (the row's answer) NO_EXIST; any other code throws. */
  private async ackStatus(
    reply: Promise<{ readonly code: number }>,
    addr: string,
    requestCode: number,
  ): Promise<AckStatus> {
    let code: number;
    let remark: string | null = null;
    try {
      ({ code } = await reply);
    } catch (err) {
      if (!(err instanceof BrokerError)) throw err;
      ({ code, remark } = err);
    }
    if (code === ResponseCode.SUCCESS) return 'OK';
    if (code === ResponseCode.NO_MESSAGE) return 'NO_EXIST';
    if (code === ResponseCode.REQUEST_CODE_NOT_SUPPORTED)
      throw new PopNotSupportedError(addr, 'request-code-not-supported', {
        cause: new BrokerError(code, remark, { addr, requestCode }),
      });
    throw new BrokerError(code, remark, { addr, requestCode });
  }

  /**
   * CHANGE_MESSAGE_INVISIBLETIME: the message stays invisible for `invisibleDurationMs` from now.
   * Returns the message with its new receipt handle (the old one no longer acks it), built as
   * Java's changeInvisibleTimeAsync builds it: `offset popTime' it' rq' r broker qid offset`.
   */
  async changeInvisibleDuration(message: ReceivedMessage, invisibleDurationMs: number): Promise<ReceivedMessage> {
    intOption('invisibleDurationMs', invisibleDurationMs, 60_000, 1000, MAX_INVISIBLE_MS);
    const inst = this.running();
    const rh = decodeReceiptHandle(message.receiptHandle);
    const addr = this.brokerAddr(inst, rh.brokerName);
    const op = Operations.CHANGE_MESSAGE_INVISIBLETIME;
    const header = {
      consumerGroup: this.o.consumerGroup,
      topic: popRealTopic(this.o.topic, this.o.consumerGroup, rh.retry),
      queueId: rh.queueId,
      extraInfo: message.receiptHandle,
      offset: rh.queueOffset,
      invisibleTime: invisibleDurationMs,
      bname: rh.brokerName,
    };
    let reply: CallReply<typeof op>;
    try {
      reply = await inst.call(addr, op, header, undefined, { timeoutMs: this.o.ackTimeoutMs });
    } catch (err) {
      throw popNotSupported(err, addr, false);
    }
    // Only SUCCESS changes it (Java's processChangeInvisibleTimeResponse): NO_MESSAGE, the
    // message gone, fails as any other code does.
    if (reply.code !== ResponseCode.SUCCESS)
      throw new BrokerError(reply.code, reply.remark, { addr, requestCode: op.code });
    const h = reply.header;
    const next: ReceiptHandle = {
      ckQueueOffset: rh.queueOffset,
      popTime: h.popTime,
      invisibleTime: h.invisibleTime,
      reviveQid: h.reviveQid,
      retry: rh.retry,
      brokerName: rh.brokerName,
      queueId: rh.queueId,
      queueOffset: rh.queueOffset,
    };
    const receiptHandle = encodeReceiptHandle(next);
    const moved = { ...message, properties: { ...message.properties, POP_CK: receiptHandle }, receiptHandle };
    this.trace?.moved(message, moved);
    return moved;
  }
}

/**
 * A broker without POP (4.x) answers REQUEST_CODE_NOT_SUPPORTED: that BrokerError becomes
 * PopNotSupportedError (with it as cause when `withCause`); any other error is returned as it is.
 */
function popNotSupported(err: unknown, addr: string, withCause: boolean): unknown {
  if (!(err instanceof BrokerError) || err.code !== ResponseCode.REQUEST_CODE_NOT_SUPPORTED) return err;
  return new PopNotSupportedError(addr, 'request-code-not-supported', withCause ? { cause: err } : undefined);
}
