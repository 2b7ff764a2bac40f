import {
  AUTO_CREATE_TOPIC_KEY_TOPIC,
  DLQ_GROUP_TOPIC_PREFIX,
  MQVersion,
  MessageSysFlag,
  Operations,
  PermName,
  ProtocolError,
  RETRY_GROUP_TOPIC_PREFIX,
  RequestCode,
  ResponseCode,
  SCHEDULE_TOPIC,
  SendResponseTraceFields,
  appendHeaderFields,
  decodeBatch,
  decodeMessage,
  decodeProperties,
  setProperty,
  type ConsumerSendMsgBackRequestHeader,
  type RemotingCommand,
  type SendMessageRequestHeader,
} from '../../../protocol/internal.js';
import type { RemotingConnection, RemotingServer, RequestProcessor } from '../../remoting/index.js';
import { parkUnder, propertyOf, socketAddressText, withPropertiesText, type MessageInner } from '../message-record.js';
import { appendProperties, readProperty } from '../../../protocol/stored-properties.js';
import type { PutMessageResult } from '../message-store.js';
import { NOT_ALLOWED_SEND_TOPICS, newTopicConfig, type TopicConfig } from '../topic-config.js';
import { topicNotExist, type BrokerContext } from './broker-context.js';
import { timerHook } from '../timer/timer-hook.js';
import { recallHandleFor } from './recall-message-processor.js';
import { fail, ok, operationProcessor, registerOperation, type Answer } from './request-processor.js';
import { DEFAULT_REGION_ID, stampTraceProperties } from '../trace-topic.js';
import type { DecodedBatchMessage } from '../../../protocol/batch.js';

/** Java's default maxReconsumeTimes (clients before 3.4.9 cannot send their own). */
const DEFAULT_MAX_RECONSUME_TIMES = 16;

/**
 * SendMessageProcessor: SEND_MESSAGE (V1 keys), SEND_MESSAGE_V2 and SEND_BATCH_MESSAGE (one-letter
 * keys, decoded by the rows' codecs), topic auto-creation from TBW102, delayed messages, and
 * CONSUMER_SEND_MSG_BACK (retry / DLQ), which Java also serves here.
 */
export class SendMessageProcessor {
  constructor(private readonly ctx: BrokerContext) {}

  private adds: (readonly [string, string])[] | null = null;
  /** What the broker puts into every message it stores: MSG_REGION, TRACE_ON (buildMsgContext), CLUSTER. */
  private storedAdds(): readonly (readonly [string, string])[] {
    this.adds ??= [
      ['MSG_REGION', DEFAULT_REGION_ID],
      ['TRACE_ON', 'true'],
      ['CLUSTER', this.ctx.clusterName],
    ];
    return this.adds;
  }

  register(server: RemotingServer): void {
    for (const op of [Operations.SEND_MESSAGE, Operations.SEND_MESSAGE_V2, Operations.SEND_BATCH_MESSAGE]) {
      server.registerProcessor(
        op.code,
        withTraceFields(
          operationProcessor(op, ({ header, body, request, conn }) => this.send(request, conn, header, body)),
        ),
      );
    }
    registerOperation(server, Operations.CONSUMER_SEND_MSG_BACK, ({ header, request }) =>
      this.sendMessageBack(request, header),
    );
  }

  /**
   * Topic config for a send, auto-created from TBW102 (min(defaultTopicQueueNums, template queues,
   * maxQueueNums)) when allowed; a string is the remark of an INVALID_PARAMETER answer. Java makes
   * a topic of 0 queues of a defaultTopicQueueNums ≤ 0 (TopicConfigManager#createTopicInSendMessageMethod);
   * we refuse it, naming the field.
   */
  private topicForSend(topic: string, defaultTopic: string, defaultQueueNums: number): TopicConfig | string | null {
    const topics = this.ctx.topics;
    const existing = topics.get(topic);
    if (existing) return existing;
    if (topic.startsWith(RETRY_GROUP_TOPIC_PREFIX) || topic.startsWith(DLQ_GROUP_TOPIC_PREFIX))
      return topics.ensure(topic, 1);
    if (!this.ctx.autoCreateTopic) return null;
    const template = topics.get(defaultTopic) ?? topics.get(AUTO_CREATE_TOPIC_KEY_TOPIC);
    if (!template || (template.perm & PermName.PERM_INHERIT) === 0) return null;
    if (defaultQueueNums < 1)
      return `defaultTopicQueueNums ${defaultQueueNums} is out of range, allowing only 1 to ${this.ctx.limits.maxQueueNums}`;
    const n = Math.max(1, Math.min(defaultQueueNums, template.writeQueueNums, this.ctx.limits.maxQueueNums));
    return topics.put(newTopicConfig(topic, n, template.perm & ~PermName.PERM_INHERIT));
  }

  private send(
    req: RemotingCommand,
    conn: RemotingConnection,
    h: SendMessageRequestHeader,
    body: Buffer,
  ): Answer | Promise<Answer> {
    // h.producerGroup is required, as in Java, although storing does not use it
    let topic = h.topic;
    const isBatch = req.code === RequestCode.SEND_BATCH_MESSAGE || h.batch === true;
    let queueId = h.queueId;
    const sysFlag = h.sysFlag;
    const reconsumeTimes = h.reconsumeTimes ?? 0;
    // A single message's properties are stored as sent plus MSG_REGION, TRACE_ON and CLUSTER, the
    // string extended where it lies (appendProperties); a string not in encodeProperties' form, or a
    // batch's header (merged into every message), is decoded and encoded as Java's broker does.
    let text = isBatch ? undefined : appendProperties(h.properties ?? '', this.storedAdds());
    let properties: Record<string, string> | undefined;
    if (text === undefined) {
      properties = decodeProperties(h.properties ?? '');
      stampTraceProperties(properties);
    }
    const prop = (name: string): string | undefined =>
      text === undefined ? properties![name] : readProperty(text, name);

    // the topic's name was checked at the request boundary (resource-names.ts): INVALID_PARAMETER
    if (NOT_ALLOWED_SEND_TOPICS.has(topic))
      return fail(ResponseCode.NO_PERMISSION, `Sending message to topic[${topic}] is forbidden.`);
    // Java: TRAN_MSG=true, except a consumer's resend of a committed message (reconsumeTimes and DELAY set, clients before 4.6.1)
    const resend = reconsumeTimes > 0 && Number(prop('DELAY') ?? '0') > 0;
    const half =
      !isBatch &&
      !resend &&
      ((sysFlag & MessageSysFlag.TRANSACTION_TYPE_MASK) === MessageSysFlag.TRANSACTION_PREPARED_TYPE ||
        prop('TRAN_MSG') === 'true');
    if (half && this.ctx.transactions.settings.rejectTransactionMessage) {
      return fail(
        ResponseCode.NO_PERMISSION,
        `the broker[${this.ctx.brokerName}] sending transaction message is forbidden`,
      );
    }
    const config = this.topicForSend(topic, h.defaultTopic, h.defaultTopicQueueNums);
    if (!config) return topicNotExist(topic);
    if (typeof config === 'string') return fail(ResponseCode.INVALID_PARAMETER, config);
    if ((config.perm & PermName.PERM_WRITE) === 0)
      return fail(ResponseCode.NO_PERMISSION, `the topic[${topic}] sending message is forbidden`);
    const maxQueue = Math.max(config.readQueueNums, config.writeQueueNums);
    // a negative queueId asks the broker to pick one (Java's randomQueueId); never a queue below 0,
    // even for a config that a damaged or older topics.json gave no write queue
    if (queueId < 0 && config.writeQueueNums > 0) queueId = Math.floor(Math.random() * config.writeQueueNums);
    if (queueId < 0 || queueId >= maxQueue) {
      return fail(
        ResponseCode.SYSTEM_ERROR,
        `request queueId[${queueId}] is illegal, ${JSON.stringify(config)} Producer: ${conn.remoteAddress}`,
      );
    }
    const bornHost = socketAddressText(conn.remoteAddress);
    const { bornTimestamp } = h;
    let inners: MessageInner[];
    const responseQueueId = queueId;

    if (isBatch) {
      if (topic.startsWith(RETRY_GROUP_TOPIC_PREFIX))
        return fail(ResponseCode.MESSAGE_ILLEGAL, 'batch request does not support retry group ' + topic);
      if (Buffer.byteLength(topic) > 127)
        return fail(ResponseCode.MESSAGE_ILLEGAL, `message topic length too long ${topic.length}`);
      let items: DecodedBatchMessage[];
      try {
        items = decodeBatch(body, { ignoreTotalSize: true, lazyProperties: true });
      } catch (err) {
        if (err instanceof ProtocolError)
          return fail(ResponseCode.MESSAGE_ILLEGAL, `malformed batch body: ${err.message}`);
        throw err;
      }
      if (items.length === 0) return fail(ResponseCode.MESSAGE_ILLEGAL, 'empty batch');
      const batchProps = properties!;
      const adds = Object.entries(batchProps);
      adds.push(['CLUSTER', this.ctx.clusterName]);
      inners = items.map((it) => {
        const fields = {
          topic,
          queueId,
          flag: it.flag,
          sysFlag,
          bornTimestamp,
          bornHost,
          reconsumeTimes: 0,
          preparedTransactionOffset: 0,
          body: it.body,
        };
        const itemText = appendProperties(it.propertiesText, adds);
        if (itemText !== undefined) return withPropertiesText(fields, itemText);
        const props = it.properties;
        for (const pk in batchProps) setProperty(props, pk, batchProps[pk]!);
        props.CLUSTER = this.ctx.clusterName;
        return { ...fields, properties: props };
      });
    } else {
      if (topic.startsWith(RETRY_GROUP_TOPIC_PREFIX)) {
        // client-side fallback resend of a failed message: past the limit it goes to the DLQ
        const maxRecon =
          req.version >= MQVersion.V3_4_9
            ? (h.maxReconsumeTimes ?? DEFAULT_MAX_RECONSUME_TIMES)
            : DEFAULT_MAX_RECONSUME_TIMES;
        if (reconsumeTimes >= maxRecon) {
          topic = DLQ_GROUP_TOPIC_PREFIX + topic.slice(RETRY_GROUP_TOPIC_PREFIX.length);
          this.ctx.topics.ensure(topic, 1);
          queueId = 0;
          // a rewrite: the properties are decoded (CLUSTER already in place) and encoded again
          if (text !== undefined) {
            properties = decodeProperties(text);
            text = undefined;
          }
          delete properties!.DELAY;
        }
      }
      const fields = {
        topic,
        queueId,
        flag: h.flag,
        sysFlag,
        bornTimestamp,
        bornHost,
        reconsumeTimes,
        preparedTransactionOffset: 0,
        body,
      };
      if (text !== undefined) inners = [withPropertiesText(fields, text)];
      else {
        properties!.CLUSTER = this.ctx.clusterName;
        inners = [{ ...fields, properties: properties! }];
      }
    }
    const inner = inners[0]!;
    // a half message waits on RMQ_SYS_TRANS_HALF_TOPIC (transaction/); the answer carries its UNIQ_KEY as transactionId
    if (half) {
      const uniqKey = propertyOf(inner, 'UNIQ_KEY');
      return sendResponse(this.ctx.transactions.prepareMessage(inner), responseQueueId, uniqKey);
    }
    const answer = (result: PutMessageResult): Answer => {
      // under the topic it was stored as: a delayed message counts for SCHEDULE_TOPIC_XXXX, as in Java
      if (result.status === 'PUT_OK') this.ctx.messageStore.stats.incTopicPutNums(inner.topic, inners.length);
      // a request (producer.request): its reply will be pushed only to the client it names (reply/)
      if (result.status === 'PUT_OK' && !isBatch && propertyOf(inner, 'CORRELATION_ID') !== undefined)
        this.ctx.replyRequests?.rememberRequest(inner.properties);
      // a parked timer message's answer carries the handle that recalls it (not a batch's)
      const recallHandle =
        isBatch || propertyOf(inner, 'TIMER_OUT_MS') === undefined
          ? undefined
          : recallHandleFor(inner.properties, this.ctx.brokerName);
      return sendResponse(result, responseQueueId, undefined, recallHandle);
    };
    // one write per send, a batch's records in one writev (message-store-put.ts)
    return answer(this.putWithDelay(inners));
  }

  /**
   * Store messages; a single message with DELAY > 0 (and not a prepared/rollback transaction) is
   * parked in SCHEDULE_TOPIC_XXXX queue level-1 with REAL_TOPIC / REAL_QID, levels clamped to the max.
   */
  private putWithDelay(inners: MessageInner[]): PutMessageResult {
    if (inners.length === 1) {
      const m = inners[0]!;
      const refusal = timerHook(m, this.ctx.timerSettings, this.ctx.clock.now());
      if (refusal) return refusal;
      const level = Number(propertyOf(m, 'DELAY') ?? '0');
      const tx = m.sysFlag & MessageSysFlag.TRANSACTION_TYPE_MASK;
      if (
        Number.isInteger(level) &&
        level > 0 &&
        tx !== MessageSysFlag.TRANSACTION_PREPARED_TYPE &&
        tx !== MessageSysFlag.TRANSACTION_ROLLBACK_TYPE
      ) {
        const l = Math.min(level, this.ctx.delayLevels.length);
        if (l !== level) m.properties.DELAY = String(l);
        parkUnder(m, SCHEDULE_TOPIC, l - 1);
      }
    }
    return this.ctx.messageStore.putMessages(inners);
  }

  /**
   * CONSUMER_SEND_MSG_BACK: the consumed message (found by commit-log offset) goes to the group's
   * retry topic with a delay level, or to its DLQ past maxReconsumeTimes or for delayLevel < 0.
   */
  private sendMessageBack(req: RemotingCommand, h: ConsumerSendMsgBackRequestHeader): Answer {
    const store = this.ctx.messageStore;
    const topics = this.ctx.topics;
    let delayLevel = h.delayLevel;
    const rec = store.lookMessageByOffset(h.offset);
    if (!rec) return fail(ResponseCode.SYSTEM_ERROR, `look message by offset failed, ${h.offset}`);
    const orig = decodeMessage(rec, 0, { decompress: false });
    const props = orig.properties;
    if (props.RETRY_TOPIC === undefined) props.RETRY_TOPIC = orig.topic;
    const maxRecon =
      req.version >= MQVersion.V3_4_9
        ? (h.maxReconsumeTimes ?? DEFAULT_MAX_RECONSUME_TIMES)
        : DEFAULT_MAX_RECONSUME_TIMES;
    let topic = RETRY_GROUP_TOPIC_PREFIX + h.group;
    topics.ensure(topic, 1);
    if (orig.reconsumeTimes >= maxRecon || delayLevel < 0) {
      topic = DLQ_GROUP_TOPIC_PREFIX + h.group;
      topics.ensure(topic, 1);
      delete props.DELAY;
    } else {
      if (delayLevel === 0) delayLevel = 3 + orig.reconsumeTimes;
      props.DELAY = String(delayLevel);
    }
    // Like Java, the first delivery's offset msgId (the broker decodes the original as a plain
    // MessageExt, whose msgId is the offset id); the header's originMsgId is not used.
    if (!props.ORIGIN_MESSAGE_ID?.trim()) props.ORIGIN_MESSAGE_ID = store.offsetMsgIdOf(orig.commitLogOffset);
    const retryQueues = topics.get(topic)!.writeQueueNums;
    const inner: MessageInner = {
      topic,
      queueId: Math.floor(Math.random() * retryQueues),
      flag: orig.flag,
      sysFlag: orig.sysFlag,
      bornTimestamp: orig.bornTimestamp,
      bornHost: orig.bornHost,
      reconsumeTimes: orig.reconsumeTimes + 1,
      preparedTransactionOffset: 0,
      body: orig.body,
      properties: props,
    };
    const result = this.putWithDelay([inner]);
    // Java counts a sent-back message only when it waits under SCHEDULE_TOPIC_XXXX
    if (result.status === 'PUT_OK' && inner.topic === SCHEDULE_TOPIC)
      this.ctx.messageStore.stats.incTopicPutNums(SCHEDULE_TOPIC);
    if (result.status === 'PUT_OK') return ok();
    return fail(
      result.status === 'SERVICE_NOT_AVAILABLE' ? ResponseCode.SERVICE_NOT_AVAILABLE : ResponseCode.SYSTEM_ERROR,
      result.remark ?? result.status,
    );
  }
}

const SEND_TRACE_FIELDS = SendResponseTraceFields.encode({ MSG_REGION: DEFAULT_REGION_ID, TRACE_ON: 'true' });

/** Every send answer carries MSG_REGION and TRACE_ON: the Java client reads them without a null check. */
function withTraceFields(processor: RequestProcessor): RequestProcessor {
  return (req, conn) => {
    const res = processor(req, conn);
    return res instanceof Promise ? res.then(addTraceFields) : addTraceFields(res);
  };
}

/** MSG_REGION and TRACE_ON added to a send answer's fields. */
export function addTraceFields(res: RemotingCommand | null): RemotingCommand | null {
  // the answer's fields were just built for it: add to them rather than copying them
  return res === null ? null : appendHeaderFields(res, SEND_TRACE_FIELDS);
}

function sendResponse(
  result: PutMessageResult,
  queueId: number,
  transactionId?: string,
  recallHandle?: string,
): Answer {
  switch (result.status) {
    case 'PUT_OK': {
      const w = result.written;
      const header = {
        msgId: w.map((x) => x.msgId).join(','),
        queueId,
        queueOffset: w[0]!.queueOffset,
        ...(transactionId === undefined ? {} : { transactionId }),
        ...(recallHandle === undefined ? {} : { recallHandle }),
      };
      return { header };
    }
    case 'MESSAGE_ILLEGAL':
    case 'PROPERTIES_SIZE_EXCEEDED':
      return fail(ResponseCode.MESSAGE_ILLEGAL, result.remark ?? result.status);
    case 'WHEEL_TIMER_NOT_ENABLE':
      return fail(ResponseCode.SYSTEM_ERROR, result.remark ?? result.status);
    default:
      return fail(ResponseCode.SERVICE_NOT_AVAILABLE, result.remark ?? 'service not available now');
  }
}
