import createDebug from '../../debug.js';
import { Operations, ResponseCode, RETRY_GROUP_TOPIC_PREFIX } from '../../../protocol/internal.js';
import { POP_ORDER_REVIVE_QUEUE, decodeReceiptHandle, popRealTopic } from '../../../protocol/pop-extra-info.js';
import type { Clock } from '../../clock.js';
import type { RemotingServer } from '../../remoting/index.js';
import type { BrokerContext } from '../processor/broker-context.js';
import { fail, ok, registerOperation, type Answer } from '../processor/request-processor.js';
import { ORDER_ACK_ILLEGAL, type ConsumerOrderInfoManager } from './consumer-order-info.js';
import { checkpointKey, type PopCheckpointTable } from './pop-checkpoints.js';
import { extraInfoRemark } from './pop-options.js';

const log = createDebug('rocketwire:broker:pop');

/**
 * AckMessageProcessor and ChangeInvisibleTimeProcessor: ACK_MESSAGE, BATCH_ACK_MESSAGE and
 * CHANGE_MESSAGE_INVISIBLETIME against the POP checkpoints and the order pops' bookkeeping.
 */
export class AckMessageProcessor {
  constructor(
    private readonly ctx: BrokerContext,
    private readonly checkpoints: PopCheckpointTable,
    private readonly orderInfo: ConsumerOrderInfoManager,
    private readonly invisibleBounds: { readonly min: number; readonly max: number },
    /** An order queue's blocked pops are woken when an ack or a change of invisible time frees it. */
    private readonly notifyArrival: (topic: string, queueId: number) => void,
  ) {}

  private get clock(): Clock {
    return this.ctx.clock;
  }

  register(server: RemotingServer): void {
    registerOperation(server, Operations.ACK_MESSAGE, ({ header }) => {
      const badExtra = extraInfoRemark(header.extraInfo);
      if (badExtra) return fail(ResponseCode.INVALID_PARAMETER, badExtra);
      const r = this.ackOne(header.consumerGroup, header.topic, header.queueId, header.extraInfo, header.offset);
      return r === null ? ok() : fail(r.code, r.remark);
    });
    registerOperation(server, Operations.BATCH_ACK_MESSAGE, ({ body }) => this.processBatchAck(body));
    registerOperation(server, Operations.CHANGE_MESSAGE_INVISIBLETIME, ({ header }) =>
      this.processChangeInvisible(header),
    );
  }

  /** Range checks of AckMessageProcessor; null when the offset is in the queue. */
  private checkAckTarget(
    topic: string,
    queueId: number,
    offset: number,
    maxInclusive: boolean,
  ): { code: number; remark: string } | null {
    const config = this.ctx.topics.get(topic);
    if (!config)
      return { code: ResponseCode.TOPIC_NOT_EXIST, remark: `topic[${topic}] not exist, apply first please!` };
    if (queueId < 0 || queueId >= config.readQueueNums) {
      return {
        code: ResponseCode.MESSAGE_ILLEGAL,
        remark: `queueId[${queueId}] is illegal, topic:[${topic}] topicConfig.readQueueNums:[${config.readQueueNums}]`,
      };
    }
    const min = this.ctx.messageStore.getMinOffset(topic, queueId);
    const max = this.ctx.messageStore.getMaxOffset(topic, queueId);
    if (offset < min || (maxInclusive ? offset > max : offset >= max)) {
      return {
        code: ResponseCode.NO_MESSAGE,
        remark: `offset is illegal, key:${topic}@${queueId}, offset:${offset}, min:${min}, max:${max}`,
      };
    }
    return null;
  }

  /** ACK_MESSAGE: mark one offset of its checkpoint acked. Answers SUCCESS also for a checkpoint already revived, as Apache does. */
  private ackOne(
    group: string,
    topic: string,
    queueId: number,
    extraInfo: string,
    offset: number,
  ): { code: number; remark: string } | null {
    const bad = this.checkAckTarget(topic, queueId, offset, true);
    if (bad) return bad;
    const rh = decodeReceiptHandle(extraInfo);
    if (rh.reviveQid === POP_ORDER_REVIVE_QUEUE)
      return this.ackOrderly(group, topic, queueId, offset, rh.popTime, rh.invisibleTime);
    if (!this.checkpoints.ack(checkpointKey(group, topic, queueId, rh.ckQueueOffset, rh.popTime), offset)) {
      log(
        'ack of %s@%s queue %d offset %d: no open checkpoint (acked or revived already)',
        topic,
        group,
        queueId,
        offset,
      );
    }
    return null;
  }

  /**
   * AckMessageProcessor#ackOrderly: an offset below the group's is acked already; otherwise the
   * group's offset moves to the first offset of the pop not acked, and a queue no longer blocked
   * wakes the pops waiting on it.
   */
  private ackOrderly(
    group: string,
    topic: string,
    queueId: number,
    offset: number,
    popTime: number,
    invisibleTime: number,
  ): { code: number; remark: string } | null {
    const old = this.ctx.offsets.query(group, topic, queueId) ?? -1;
    if (offset < old) return null;
    const now = this.clock.now();
    const next = this.orderInfo.commitAndNext(topic, group, queueId, offset, popTime, now);
    if (next === ORDER_ACK_ILLEGAL) {
      return {
        code: ResponseCode.MESSAGE_ILLEGAL,
        remark: `offset is illegal, key:${topic}@${group}@${queueId}, old:${old}, commit:${offset}, next:${next}`,
      };
    }
    if (next >= 0) {
      this.ctx.offsets.commit(group, topic, queueId, next);
      if (!this.orderInfo.checkBlock(null, topic, group, queueId, invisibleTime, now))
        this.notifyArrival(topic, queueId);
    }
    return null;
  }

  private processBatchAck(body: {
    brokerName: string;
    acks: Array<{
      consumerGroup: string;
      topic: string;
      retry: '0' | '1' | '2';
      startOffset: number;
      queueId: number;
      reviveQueueId: number;
      popTime: number;
      invisibleTime: number;
      bits: number[];
    }>;
  }): Answer {
    if (body.acks.length === 0) return fail(ResponseCode.NO_MESSAGE, 'empty batch ack');
    for (const a of body.acks) {
      const topic = popRealTopic(a.topic, a.consumerGroup, a.retry);
      const key = checkpointKey(a.consumerGroup, topic, a.queueId, a.startOffset, a.popTime);
      // AckMessageProcessor#processRequest: bits out of [min, max] are skipped without a word
      for (const bit of a.bits) {
        const offset = a.startOffset + bit;
        if (this.checkAckTarget(topic, a.queueId, offset, true)) continue;
        if (a.reviveQueueId === POP_ORDER_REVIVE_QUEUE) {
          // Apache answers a batch's order acks with the last one's result
          const bad = this.ackOrderly(a.consumerGroup, topic, a.queueId, offset, a.popTime, a.invisibleTime);
          if (bad) return fail(bad.code, bad.remark);
        } else this.checkpoints.ack(key, offset);
      }
    }
    return ok();
  }

  private processChangeInvisible(h: {
    consumerGroup: string;
    topic: string;
    queueId: number;
    extraInfo: string;
    offset: number;
    invisibleTime: number;
  }): Answer {
    const bad = this.checkAckTarget(h.topic, h.queueId, h.offset, false);
    if (bad) return fail(bad.code, bad.remark);
    const badExtra = extraInfoRemark(h.extraInfo);
    if (badExtra) return fail(ResponseCode.INVALID_PARAMETER, badExtra);
    // 0 is fine (visible again now: a Java popDelayLevel of 0 s sends it); a negative or huge time is not
    const max = this.invisibleBounds.max;
    if (!(h.invisibleTime >= 0 && h.invisibleTime <= max)) {
      return fail(
        ResponseCode.INVALID_PARAMETER,
        `invisibleTime ${h.invisibleTime} is outside [0, ${max}] ms (the broker option maxPopInvisibleTimeMs)`,
      );
    }
    const rh = decodeReceiptHandle(h.extraInfo);
    const now = this.clock.now();
    if (rh.reviveQid === POP_ORDER_REVIVE_QUEUE) {
      // ChangeInvisibleTimeProcessor#processChangeInvisibleTimeForOrder: the message's own next
      // visible time; the receipt keeps its popTime, its invisible time counts from that
      const old = this.ctx.offsets.query(h.consumerGroup, h.topic, h.queueId) ?? -1;
      let visibleAt = rh.popTime + rh.invisibleTime;
      if (h.offset >= old) {
        visibleAt = now + h.invisibleTime;
        this.orderInfo.updateNextVisibleTime(h.topic, h.consumerGroup, h.queueId, h.offset, rh.popTime, visibleAt);
        // a change to 0 can free the queue now: no timer of OrderLockRelease would wake its pops
        if (!this.orderInfo.checkBlock(null, h.topic, h.consumerGroup, h.queueId, rh.invisibleTime, now))
          this.notifyArrival(h.topic, h.queueId);
      }
      return { header: { popTime: rh.popTime, invisibleTime: visibleAt - rh.popTime, reviveQid: rh.reviveQid } };
    }
    const prefix = `${RETRY_GROUP_TOPIC_PREFIX}${h.consumerGroup}_`;
    const originTopic = h.topic.startsWith(prefix) ? h.topic.slice(prefix.length) : h.topic;
    // a change in the pop's own millisecond of its first offset would give the new checkpoint the
    // old one's key (group, topic, queue, start offset, popTime): the old one, with every other
    // message of the pop, was replaced and then acked. The new one starts a millisecond later.
    let popTime = now;
    while (this.checkpoints.get(checkpointKey(h.consumerGroup, h.topic, h.queueId, h.offset, popTime))) popTime++;
    // Apache writes the new checkpoint first, then acks the old one (ChangeInvisibleTimeProcessor)
    this.checkpoints.add({
      group: h.consumerGroup,
      topic: h.topic,
      originTopic,
      queueId: h.queueId,
      startOffset: h.offset,
      popTime,
      invisibleTime: h.invisibleTime,
      reviveQid: rh.reviveQid,
      offsets: [h.offset],
      acked: new Set(),
    });
    this.checkpoints.ack(checkpointKey(h.consumerGroup, h.topic, h.queueId, rh.ckQueueOffset, rh.popTime), h.offset);
    return { header: { popTime, invisibleTime: h.invisibleTime, reviveQid: rh.reviveQid } };
  }
}
