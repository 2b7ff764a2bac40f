import createDebug from '../../debug.js';
import type { Logger } from '../../logger.js';
import type { Clock } from '../../clock.js';
import { Operations, type MessageQueue } from '../../../protocol/internal.js';
import { decodeReceiptHandle, popRealTopic } from '../../../protocol/pop-extra-info.js';
import type { MQClientInstance } from '../../client/index.js';
import {
  ConsumeOrderlyStatus,
  isThenable,
  orderlyResult,
  type ConsumeOrderlyContext,
  type MessageListenerOrderly,
} from '../core/consume-types.js';
import type { MessageExt } from '../core/message.js';

const log = createDebug('rocketwire:consumer:pop');

const ACK_TIMEOUT_MS = 3000;

/**
 * The push consumer's orderly POP mode (`orderly: true` with a group the broker switched to POP).
 *
 * Java's ConsumeMessagePopOrderlyService is a placeholder (its consume request does nothing, and
 * RebalancePushImpl#clientRebalance keeps an orderly Java consumer on client rebalance and pull), so
 * this follows what the broker's order pops promise (ConsumerOrderInfoManager): a queue's popped
 * messages are held by one consumer until each is acked or visible again, and what is not acked
 * comes back from the first offset not acked, with its earlier deliveries in orderCountInfo.
 *
 * Per queue of a popped batch, in queue order: a handler call of up to consumeMessageBatchMaxSize
 * messages; SUCCESS (or COMMIT) acks them one by one, in order, before the next call; a throw,
 * SUSPEND_CURRENT_QUEUE_A_MOMENT (or ROLLBACK with autoCommit off) moves that message and every
 * later one of the queue's batch to visible in suspendCurrentQueueTimeMs (CHANGE_INVISIBLETIME), so
 * the broker hands them out again, in order, to whichever consumer of the group pops next; nothing
 * after the failed message is handled before it. A message whose reconsumeTimes reached
 * maxReconsumeTimes (orderly default: unlimited) is republished towards the DLQ, as the pull-mode
 * orderly service does, and acked. When half the invisible time is gone, the rest of the queue's
 * batch gets a fresh one, so a slow handler does not let the queue go to another consumer
 * mid-batch.
 */
export interface PopOrderlyHost {
  readonly consumerGroup: string;
  readonly clock: Clock;
  readonly logger: Logger;
  listener(): MessageListenerOrderly;
  invalidHandlerResult(value: unknown, mq: MessageQueue, count: number): void;
  readonly maxReconsumeTimes: number;
  /** The consumer's suspendCurrentQueueTimeMs (10..30 000). */
  readonly suspendCurrentQueueTimeMs: number;
  readonly consumeMessageBatchMaxSize: number;
  /** The consumer's popInvisibleTimeMs: what a renewal gives the rest of a queue's batch. */
  readonly invisibleTimeMs: number;
  /**
   * CONSUMER_SEND_MSG_BACK with delay level −1 (straight to the DLQ), falling back to the
   * republish (send-back.ts); true when stored. The send-back needs no route of the retry topic,
   * which a consumer that only pops may not have yet.
   */
  sendMessageBack(msg: MessageExt, delayLevel: number, brokerName: string): Promise<boolean>;
}

/** One popped batch of one broker, as the pop loop hands it over. */
export interface PoppedBatch {
  inst: MQClientInstance;
  addr: string;
  mq: MessageQueue;
  /** When the broker hands the batch out again unless acked or renewed. */
  invisibleUntil: number;
  /** Queues of this pop that stopped (a failure, a lost ack): their later rounds are not consumed. */
  halted: Set<number>;
  stopped(): boolean;
}

/** Consume `msgs` (one round of a popped batch) queue by queue, each queue in order. */
export async function consumePoppedInOrder(
  host: PopOrderlyHost,
  pop: PoppedBatch,
  msgs: readonly MessageExt[],
): Promise<void> {
  const byQueue = new Map<number, MessageExt[]>();
  for (const m of msgs) {
    let l = byQueue.get(m.queueId);
    if (!l) byQueue.set(m.queueId, (l = []));
    l.push(m);
  }
  await Promise.all(
    [...byQueue].map(([queueId, list]) =>
      pop.halted.has(queueId)
        ? Promise.resolve()
        : consumeQueue(
            host,
            pop,
            queueId,
            list.sort((a, b) => a.queueOffset - b.queueOffset),
          ),
    ),
  );
}

async function consumeQueue(
  host: PopOrderlyHost,
  pop: PoppedBatch,
  queueId: number,
  msgs: MessageExt[],
): Promise<void> {
  const { mq } = pop;
  const queue: MessageQueue = { topic: mq.topic, brokerName: mq.brokerName, queueId };
  const halt = (why: string): void => {
    pop.halted.add(queueId);
    log('order pop of %s@%s/%d stopped: %s', mq.topic, mq.brokerName, queueId, why);
  };
  let i = 0;
  while (i < msgs.length) {
    // what is not acked comes back from the broker, from the first offset not acked
    if (pop.stopped()) return halt('queue no longer assigned');
    const now = host.clock.now();
    if (now >= pop.invisibleUntil) return halt('invisible time over, the broker hands the rest out again');
    if (pop.invisibleUntil - now < host.invisibleTimeMs / 2) {
      if (!(await changeInvisible(host, pop, msgs.slice(i), host.invisibleTimeMs))) return halt('renewal failed');
      pop.invisibleUntil = now + host.invisibleTimeMs;
    }
    const batch = msgs.slice(i, i + host.consumeMessageBatchMaxSize);
    const ctx: ConsumeOrderlyContext = {
      messageQueue: queue,
      autoCommit: true,
      suspendCurrentQueueTimeMs: -1,
      suspendCurrentQueueTimeMillis: -1,
    };
    let status: ConsumeOrderlyStatus = ConsumeOrderlyStatus.SUSPEND_CURRENT_QUEUE_A_MOMENT;
    try {
      const r = host.listener()(batch, ctx);
      const value: unknown = isThenable(r) ? await r : r;
      const result = orderlyResult(value);
      status = result.status;
      if (result.invalid) host.invalidHandlerResult(value, queue, batch.length);
    } catch (err) {
      log('orderly handler threw: %s', (err as Error)?.message ?? err);
    }
    const ok =
      status === ConsumeOrderlyStatus.SUCCESS ||
      status === ConsumeOrderlyStatus.COMMIT ||
      (status === ConsumeOrderlyStatus.ROLLBACK && ctx.autoCommit);
    if (ok || (await toDlq(host, mq.brokerName, batch))) {
      for (const m of batch) if (!(await ack(host, pop, m))) return halt('ack failed');
      i += batch.length;
      continue;
    }
    // back to the broker from the failed message on: the queue frees after the suspend time and
    // the next pop of the group, ours or another consumer's, starts there
    const own = ctx.suspendCurrentQueueTimeMs >= 0 ? ctx.suspendCurrentQueueTimeMs : ctx.suspendCurrentQueueTimeMillis;
    const suspendMs = Math.min(30_000, Math.max(10, own >= 0 ? own : host.suspendCurrentQueueTimeMs));
    await changeInvisible(host, pop, msgs.slice(i), suspendMs);
    return halt(`handler did not succeed (${status}); again in ${suspendMs} ms`);
  }
}

/**
 * A failed batch whose every message used up maxReconsumeTimes: republished towards the DLQ
 * (RECONSUME_TIME = its count, so the broker stores it there); true when all were stored.
 */
async function toDlq(host: PopOrderlyHost, brokerName: string, batch: readonly MessageExt[]): Promise<boolean> {
  if (!batch.every((m) => m.reconsumeTimes >= host.maxReconsumeTimes)) return false;
  for (const m of batch) {
    // the copy must not carry this pop's receipt handle (a later pop of it would keep a stale one)
    const { POP_CK: _receipt, ...properties } = m.properties;
    if (!(await host.sendMessageBack({ ...m, properties } as MessageExt, -1, brokerName))) return false;
  }
  return true;
}

function receiptHeader(host: PopOrderlyHost, mq: MessageQueue, m: MessageExt) {
  const rh = decodeReceiptHandle(m.properties.POP_CK!);
  return {
    consumerGroup: host.consumerGroup,
    topic: popRealTopic(mq.topic, host.consumerGroup, rh.retry),
    queueId: rh.queueId,
    extraInfo: m.properties.POP_CK!,
    offset: rh.queueOffset,
    bname: rh.brokerName,
  };
}

/** ACK_MESSAGE of one message; false (and a warning) when the broker did not take it. */
async function ack(host: PopOrderlyHost, pop: PoppedBatch, m: MessageExt): Promise<boolean> {
  try {
    await pop.inst.call(pop.addr, Operations.ACK_MESSAGE, receiptHeader(host, pop.mq, m), undefined, {
      timeoutMs: ACK_TIMEOUT_MS,
    });
    return true;
  } catch (err) {
    host.logger.warn(
      `consumer ${host.consumerGroup}: ACK of order-popped message ${m.msgId} (${pop.mq.topic} queue ${m.queueId} offset ${m.queueOffset}) at ${pop.addr} failed: ${(err as Error).message.split('\n')[0]}; the queue's rest waits for the broker to hand it out again`,
    );
    return false;
  }
}

/**
 * CHANGE_MESSAGE_INVISIBLETIME of each message, the last one first; false when one was not taken.
 *
 * Each change counts its time from when the broker takes it, so the messages changed later become
 * visible later. Apache's broker wakes the pops waiting on the queue when the first message of it
 * neither acked nor visible becomes visible (OrderInfo.getLockFreeTimestamp), while it keeps the
 * queue held until every one is: changed in queue order, a wake at the first one's time can find
 * the queue still held by a later one, and the waiting pop then sleeps out its poll time. Changed
 * last first, the first message is visible last, and its time is when the queue frees.
 */
async function changeInvisible(
  host: PopOrderlyHost,
  pop: PoppedBatch,
  msgs: readonly MessageExt[],
  invisibleTime: number,
): Promise<boolean> {
  for (const m of [...msgs].reverse()) {
    try {
      // an order receipt handle stays valid: the broker keeps the pop's popTime for its ack
      await pop.inst.call(
        pop.addr,
        Operations.CHANGE_MESSAGE_INVISIBLETIME,
        { ...receiptHeader(host, pop.mq, m), invisibleTime },
        undefined,
        { timeoutMs: ACK_TIMEOUT_MS },
      );
    } catch (err) {
      host.logger.warn(
        `consumer ${host.consumerGroup}: change of invisible time of order-popped message ${m.msgId} (${pop.mq.topic} queue ${m.queueId} offset ${m.queueOffset}) at ${pop.addr} failed: ${(err as Error).message.split('\n')[0]}; it comes back when its invisible time ends`,
      );
      return false;
    }
  }
  return true;
}
