import {
  decodeMessages,
  decodeOffsetMsgId,
  dlqTopic as dlqTopicOf,
  MessageConst,
  Operations,
  ResponseCode,
  type MessageExt,
  type Operation,
  type OperationRequest,
  type OperationRequestBody,
  type TopicRouteData,
} from '../../protocol/internal.js';
import type { CallReply, MQClientInstance, Reply } from '../client/index.js';
import { Producer } from '../producer/index.js';
import {
  DEFAULT_QUERY_MAX,
  FLAG_SUBSCRIPTION,
  TOOLS_CONSUMER_GROUP,
  type AdminClientOptions,
  type DlqResendResult,
  type FoundMessage,
} from './admin-types.js';
import { MessageNotFoundError, UnknownGroupError, UnknownTopicError, permissionError } from './errors.js';

/** What the message look-ups and the DLQ resend need of their AdminClient. */
export interface AdminMessagesHost {
  readonly instance: MQClientInstance;
  readonly options: AdminClientOptions;
  call<O extends Operation>(
    addr: string,
    op: O,
    header: OperationRequest<O>,
    body?: OperationRequestBody<O>,
  ): Promise<Reply<O>>;
  topicRoute(topic: string): Promise<TopicRouteData>;
  masters(route: TopicRouteData): Array<{ brokerName: string; addr: string }>;
  brokerNameOf(addr: string): Promise<string>;
}

/**
 * The AdminClient's message commands: look-ups by id, key and queue offset (queryMsgById,
 * queryMsgByKey, queryMsgByOffset) and the dead-letter resend.
 */
export class AdminMessages {
  constructor(private readonly host: AdminMessagesHost) {}

  /**
   * `queryMsgById`: an offset msgId (the store host and commit-log offset in hex) is looked up
   * with VIEW_MESSAGE_BY_ID on the broker it names; any other id is taken as a unique key
   * (UNIQ_KEY, what producers return as msgId) and looked up over the key index of `topic`
   * (QUERY_MESSAGE with _UNIQUE_KEY_QUERY), as DefaultMQAdminExt#viewMessage does.
   */
  async messageById(msgId: string, topic?: string): Promise<FoundMessage[]> {
    let offsetId: { storeHost: string; commitLogOffset: number } | null = null;
    try {
      offsetId = decodeOffsetMsgId(msgId);
    } catch {
      offsetId = null;
    }
    if (offsetId) {
      try {
        const r = await this.host.call(
          offsetId.storeHost,
          Operations.VIEW_MESSAGE_BY_ID,
          topic === undefined ? { offset: offsetId.commitLogOffset } : { offset: offsetId.commitLogOffset, topic },
        );
        const msgs = r.body ? decodeMessages(r.body) : [];
        if (msgs.length > 0) {
          const brokerName = await this.host.brokerNameOf(offsetId.storeHost);
          return msgs.map((m) => ({ brokerName, brokerAddr: offsetId.storeHost, message: m }));
        }
      } catch (err) {
        // a unique key can look like an offset id; fall through to the index when a topic is given
        if (topic === undefined) throw err;
      }
    }
    if (topic === undefined)
      throw new MessageNotFoundError(
        `message id ${msgId} (not an offset id: give --topic to look it up as a unique key)`,
      );
    const found = await this.query(topic, msgId, DEFAULT_QUERY_MAX, 0, Number.MAX_SAFE_INTEGER, true);
    if (found.length === 0) throw new MessageNotFoundError(`message id ${msgId} in topic ${topic}`);
    return found;
  }

  /** `queryMsgByKey`: QUERY_MESSAGE on every master of the topic, hash collisions dropped (MQAdminImpl#queryMessage). */
  async messageByKey(
    topic: string,
    key: string,
    opts: { maxNum?: number; beginTimestamp?: number; endTimestamp?: number } = {},
  ): Promise<FoundMessage[]> {
    return this.query(
      topic,
      key,
      opts.maxNum ?? DEFAULT_QUERY_MAX,
      opts.beginTimestamp ?? 0,
      opts.endTimestamp ?? Number.MAX_SAFE_INTEGER,
      false,
    );
  }

  private async query(
    topic: string,
    key: string,
    maxNum: number,
    begin: number,
    end: number,
    unique: boolean,
  ): Promise<FoundMessage[]> {
    const route = await this.host.topicRoute(topic);
    const op = Operations.QUERY_MESSAGE;
    const out: FoundMessage[] = [];
    for (const { brokerName, addr } of this.host.masters(route)) {
      const header = { topic, key, maxNum, beginTimestamp: begin, endTimestamp: end, uniqueKeyQuery: unique };
      let r: CallReply<typeof op>;
      try {
        r = await this.host.instance.call(addr, op, header, undefined, {
          timeoutMs: this.host.instance.options.mqClientApiTimeoutMs,
        });
      } catch (err) {
        throw permissionError(err, op.name, addr);
      }
      if (r.code === ResponseCode.QUERY_NOT_FOUND) continue;
      for (const m of r.body ? decodeMessages(r.body) : []) {
        if (m.topic !== topic) continue;
        const keys = (m.properties[MessageConst.PROPERTY_KEYS] ?? '').split(MessageConst.KEY_SEPARATOR);
        const matches = unique
          ? m.properties[MessageConst.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX] === key
          : keys.includes(key) || m.properties[MessageConst.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX] === key;
        if (matches) out.push({ brokerName, brokerAddr: addr, message: m });
      }
    }
    return out.sort(
      (a, b) =>
        a.message.storeTimestamp - b.message.storeTimestamp || a.message.commitLogOffset - b.message.commitLogOffset,
    );
  }

  /**
   * `queryMsgByOffset`: the message at one queue offset, pulled without committing by the tools
   * group (QueryMsgByOffsetSubCommand pulls with DefaultMQPullConsumer, then views it by id).
   */
  async messageByOffset(topic: string, brokerName: string, queueId: number, offset: number): Promise<FoundMessage> {
    const route = await this.host.topicRoute(topic);
    const m = this.host.masters(route).find((x) => x.brokerName === brokerName);
    if (!m) throw new UnknownTopicError(`${topic} on broker ${brokerName}`);
    const msgs = await this.pullAt(m.addr, topic, queueId, offset, 1);
    const msg = msgs.find((x) => x.queueOffset === offset);
    if (!msg) throw new MessageNotFoundError(`${topic} ${brokerName} queue ${queueId} offset ${offset}`);
    return { brokerName, brokerAddr: m.addr, message: msg };
  }

  private async pullAt(
    addr: string,
    topic: string,
    queueId: number,
    offset: number,
    max: number,
  ): Promise<MessageExt[]> {
    const r = await this.host.instance.pullMessage(
      addr,
      {
        consumerGroup: TOOLS_CONSUMER_GROUP,
        topic,
        queueId,
        queueOffset: offset,
        maxMsgNums: max,
        sysFlag: FLAG_SUBSCRIPTION,
        commitOffset: 0,
        suspendTimeoutMillis: 0,
        subscription: '*',
        subVersion: 0,
        expressionType: 'TAG',
      },
      this.host.instance.options.mqClientApiTimeoutMs,
    );
    return r.status === 'FOUND' ? r.messages : [];
  }

  // ------------------------------------------------------------------ dead letters

  /**
   * Re-send a group's dead letters (`%DLQ%<group>`) to their original topics (property
   * RETRY_TOPIC, which the broker sets when it moves a message to the retry or dead-letter topic):
   * every message of every DLQ queue from `fromOffset` (default each queue's min offset) to its max
   * is read and sent again, with its body, tags, keys and user properties, as a new message. mqadmin
   * has no such command (the Dashboard re-delivers one message to a client with
   * CONSUME_MESSAGE_DIRECTLY); this sends them through the broker again, so every consumer of the
   * topic sees them. The DLQ keeps its messages.
   */
  async dlqResend(group: string, opts: { fromOffset?: number; maxMessages?: number } = {}): Promise<DlqResendResult> {
    const dlqTopic = dlqTopicOf(group);
    let route: TopicRouteData;
    try {
      route = await this.host.topicRoute(dlqTopic);
    } catch (err) {
      if (err instanceof UnknownTopicError)
        throw new UnknownGroupError(group, `it has no dead-letter topic ${dlqTopic}`, { cause: err });
      throw err;
    }
    const result: DlqResendResult = { group, dlqTopic, read: 0, resent: {}, skipped: 0, ranges: {} };
    const limit = opts.maxMessages ?? Number.MAX_SAFE_INTEGER;
    const producer = new Producer({
      ...this.host.options,
      group: `rw_admin_dlq_resend`,
      instanceName: `admin-dlq-${process.pid}`,
    });
    await producer.start();
    try {
      for (const { brokerName, addr } of this.host.masters(route)) {
        const qd = route.queueDatas.find((q) => q.brokerName === brokerName);
        for (let queueId = 0; queueId < (qd?.readQueueNums ?? 0); queueId++) {
          const mq = { topic: dlqTopic, brokerName, queueId };
          const min = await this.host.instance.getMinOffset(addr, mq);
          const max = await this.host.instance.getMaxOffset(addr, mq);
          let at = Math.max(min, opts.fromOffset ?? min);
          const from = at;
          while (at < max && result.read < limit) {
            const msgs = await this.pullAt(addr, dlqTopic, queueId, at, Math.min(32, limit - result.read));
            if (msgs.length === 0) break;
            for (const m of msgs) {
              if (result.read >= limit) break;
              result.read++;
              at = m.queueOffset + 1;
              const original = m.properties[MessageConst.PROPERTY_RETRY_TOPIC];
              if (!original) {
                result.skipped++;
                continue;
              }
              await producer.send(resendMessage(original, m));
              result.resent[original] = (result.resent[original] ?? 0) + 1;
            }
          }
          result.ranges[`${brokerName}:${queueId}`] = [from, at];
        }
      }
    } finally {
      await producer.shutdown();
    }
    return result;
  }
}

/** Property names RocketMQ sets itself: not copied to a re-sent message. */
const SYSTEM_PROPERTIES = new Set<string>(Object.values(MessageConst));

function resendMessage(
  topic: string,
  m: MessageExt,
): { topic: string; body: Buffer; tags?: string; keys?: string; properties: Record<string, string> } {
  const properties: Record<string, string> = {};
  for (const [k, v] of Object.entries(m.properties)) if (!SYSTEM_PROPERTIES.has(k)) properties[k] = v;
  const msg: { topic: string; body: Buffer; tags?: string; keys?: string; properties: Record<string, string> } = {
    topic,
    body: m.body,
    properties,
  };
  const tags = m.properties[MessageConst.PROPERTY_TAGS];
  const keys = m.properties[MessageConst.PROPERTY_KEYS];
  if (tags) msg.tags = tags;
  if (keys) msg.keys = keys;
  return msg;
}
