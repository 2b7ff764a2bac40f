import {
  Operations,
  ResponseCode,
  createRequest,
  createResponse,
  encodeConsumeStats,
  encodeTopicConfigBody,
  type GetConsumeStatsRequestHeader,
  type MessageQueue,
  type OffsetWrapper,
  type RemotingCommand,
} from '../../../protocol/internal.js';
import type { RemotingServer } from '../../remoting/index.js';
import { BROKER_VERSION } from '../broker-version.js';
import { checkTopicConfigRequest, topicConfigFromHeader } from '../topic-config.js';
import { topicNotExist, type BrokerContext } from './broker-context.js';
import { fail, ok, registerOperation, type Answer } from './request-processor.js';

/**
 * Most queues one GET_CONSUME_STATS answer lists (about 10 MB of JSON, under the 16 MiB frame a
 * client accepts). Java has no bound; without a topic the answer covers every topic the group
 * has offsets in, and any peer can commit offsets to as many topics as there are.
 */
const MAX_CONSUME_STATS_QUEUES = 65_536;

/** How long a relayed GET_CONSUMER_RUNNING_INFO waits for the consumer. */
const CALL_CONSUMER_TIMEOUT_MS = 5000;

/**
 * AdminBrokerProcessor: queue offsets (max, min, by timestamp), earliest store time, a message by
 * commit-log offset, topic config and creation, consume stats, and consumer running info relayed
 * to the consumer (Broker2Client.callClient).
 */
export class AdminBrokerProcessor {
  constructor(private readonly ctx: BrokerContext) {}

  register(server: RemotingServer): void {
    // GET_MAX_OFFSET, GET_MIN_OFFSET and SEARCH_OFFSET_BY_TIMESTAMP answer the same header: one `offset`
    const offset = (_request: RemotingCommand, value: number): Answer => ({ header: { offset: value } });
    registerOperation(server, Operations.GET_MAX_OFFSET, ({ header: h, request }) =>
      offset(request, this.ctx.messageStore.getMaxOffset(h.topic, h.queueId)),
    );
    registerOperation(server, Operations.GET_MIN_OFFSET, ({ header: h, request }) =>
      offset(request, this.ctx.messageStore.getMinOffset(h.topic, h.queueId)),
    );
    registerOperation(server, Operations.SEARCH_OFFSET_BY_TIMESTAMP, ({ header: h, request }) => {
      const b = h.boundaryType;
      const boundary = b === undefined ? undefined : b.toLowerCase() === 'upper' ? 'UPPER' : 'LOWER';
      return offset(request, this.ctx.messageStore.getOffsetByTime(h.topic, h.queueId, h.timestamp, boundary));
    });
    registerOperation(server, Operations.GET_EARLIEST_MSG_STORETIME, ({ header: h }) => {
      const timestamp = this.ctx.messageStore.getEarliestMessageTime(h.topic, h.queueId);
      return { header: { timestamp } };
    });
    registerOperation(server, Operations.VIEW_MESSAGE_BY_ID, ({ header: h }) => {
      const rec = this.ctx.messageStore.lookMessageByOffset(h.offset);
      if (!rec) return fail(ResponseCode.SYSTEM_ERROR, `can not find message by the offset, ${h.offset}`);
      return ok({ body: Buffer.from(rec) });
    });
    registerOperation(server, Operations.UPDATE_AND_CREATE_TOPIC, ({ header: h }) => {
      const config = topicConfigFromHeader(h);
      const bad = checkTopicConfigRequest(config, this.ctx.limits.maxQueueNums);
      if (bad) return fail(ResponseCode.INVALID_PARAMETER, bad);
      this.ctx.topics.put(config);
      return ok();
    });
    registerOperation(server, Operations.GET_TOPIC_CONFIG, ({ header: h }) => {
      const c = this.ctx.topics.get(h.topic);
      if (!c) return topicNotExist(h.topic);
      return ok({ body: encodeTopicConfigBody(c) });
    });
    registerOperation(server, Operations.GET_CONSUME_STATS, ({ header }) => this.getConsumeStats(header));
    registerOperation(server, Operations.GET_CONSUMER_RUNNING_INFO, ({ header: h, request }) =>
      this.callConsumer(request, h.consumerGroup, h.clientId),
    );
  }

  /**
   * GET_CONSUMER_RUNNING_INFO from an admin tool: forwarded to the named client's connection (as
   * Java's Broker2Client.callClient does) and its answer relayed.
   */
  private async callConsumer(req: RemotingCommand, group: string, clientId: string): Promise<RemotingCommand | Answer> {
    const channel = [...(this.ctx.consumers.find(group)?.channels.values() ?? [])].find((c) => c.clientId === clientId);
    if (!channel || channel.conn.closed)
      return fail(ResponseCode.SYSTEM_ERROR, `The Consumer <${group}> <${clientId}> not online`);
    const forward = createRequest(req.code, {
      extFields: { ...(req.extFields ?? {}) },
      body: req.body ? Buffer.from(req.body) : null,
      version: BROKER_VERSION,
    });
    try {
      const answer = await channel.conn.invoke(forward, { timeoutMs: CALL_CONSUMER_TIMEOUT_MS });
      return createResponse(req, answer.code, {
        remark: answer.remark,
        body: answer.body ? Buffer.from(answer.body) : null,
        extFields: answer.extFields,
      });
    } catch (err) {
      return fail(
        ResponseCode.SYSTEM_ERROR,
        `invoke consumer <${group}> <${clientId}> failed: ${(err as Error).message}`,
      );
    }
  }

  /**
   * GET_CONSUME_STATS (admin consumerProgress): per queue of the group's topics, the broker's max
   * offset, the committed offset (0 when none) and the store time of the last consumed message.
   * Topics the online group no longer subscribes to are skipped, as in Java.
   */
  private getConsumeStats(h: GetConsumeStatsRequestHeader): Answer {
    const group = h.consumerGroup;
    const store = this.ctx.messageStore;
    const topics = h.topic ? [h.topic] : [...this.ctx.offsets.groupOffsets(group).keys()];
    const info = this.ctx.consumers.find(group);
    const listed: Array<[string, number]> = [];
    let total = 0;
    for (const topic of topics.sort()) {
      const config = this.ctx.topics.get(topic);
      if (!config) continue;
      if (info && info.subscriptions.size > 0 && !info.subscriptions.has(topic)) continue;
      // bounded also for a topic an older topics.json gave more queues than a request may now ask for
      const queues = Math.min(config.writeQueueNums, this.ctx.limits.maxQueueNums);
      listed.push([topic, queues]);
      total += queues;
    }
    if (total > MAX_CONSUME_STATS_QUEUES) {
      return fail(
        ResponseCode.SYSTEM_ERROR,
        `the consume stats of group ${group} span ${total} queues, more than ${MAX_CONSUME_STATS_QUEUES}; ask for one topic at a time`,
      );
    }
    const offsetTable: Array<[MessageQueue, OffsetWrapper]> = [];
    for (const [topic, queues] of listed) {
      for (let q = 0; q < queues; q++) {
        const brokerOffset = store.getMaxOffset(topic, q);
        const consumerOffset = Math.max(0, this.ctx.offsets.query(group, topic, q) ?? 0);
        const lastTimestamp =
          consumerOffset > 0 ? Math.max(0, store.storeTimestampAt(topic, q, consumerOffset - 1)) : 0;
        offsetTable.push([
          { brokerName: this.ctx.brokerName, queueId: q, topic },
          { brokerOffset, consumerOffset, lastTimestamp },
        ]);
      }
    }
    return ok({ body: encodeConsumeStats({ consumeTps: 0, offsetTable }) });
  }
}
