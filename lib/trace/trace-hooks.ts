import { UniqKeyGenerator, type MessageExt } from '../../protocol/index.js';
import { defaultClientIp, namespaceOf, withoutNamespace, type ClientOptions } from '../client/index.js';
import { systemClock, type Clock } from '../clock.js';
import {
  AsyncTraceDispatcher,
  RMQ_SYS_TRACE_TOPIC,
  type TraceDispatcherOptions,
  type TraceDispatcherStats,
} from './async-trace-dispatcher.js';
import { TraceProducer, traceProducerGroup, type TraceSender } from './trace-producer.js';
import { ConsumeReturnType, TraceMessageType, type TraceBean, type TraceContext } from './trace-types.js';
import { TOPIC_MAX_LENGTH, isTopicOrGroupIllegal } from '../../protocol/resource-names.js';

/**
 * The trace options of a Producer or PushConsumer (Java's enableMsgTrace and customizedTraceTopic).
 * @category Metrics and trace
 */
export interface TraceOptions {
  /**
   * Write Pub (producer) or SubBefore/SubAfter (consumer) trace records.
   * @default false
   */
  enableTrace?: boolean;
  /**
   * Topic the records go to (the broker creates RMQ_SYS_TRACE_TOPIC with traceTopicEnable=true).
   * @default "RMQ_SYS_TRACE_TOPIC"
   */
  traceTopic?: string;
}

/**
 * Checks the two options; answers the option at fault and why, or null. The producer and the
 * consumer throw it as their own option error (ProducerOptionError, ConsumerOptionError).
 */
export function checkTraceOptions(o: TraceOptions): { option: 'enableTrace' | 'traceTopic'; message: string } | null {
  if (o.enableTrace !== undefined && typeof o.enableTrace !== 'boolean')
    return { option: 'enableTrace', message: `must be true or false, got ${String(o.enableTrace)}` };
  const t = o.traceTopic;
  if (t === undefined) return null;
  if (typeof t !== 'string' || t.trim().length === 0)
    return { option: 'traceTopic', message: 'must be a non-blank topic name' };
  if (t.length > TOPIC_MAX_LENGTH)
    return { option: 'traceTopic', message: `is longer than ${TOPIC_MAX_LENGTH} characters` };
  if (isTopicOrGroupIllegal(t))
    return { option: 'traceTopic', message: `"${t}" may only contain letters, digits, %, |, _ and -` };
  return null;
}

/** Java's getMsgType in the send path: TRAN_MSG=true is a half message, DELAY or __STARTDELIVERTIME a delayed one. */
export function traceMessageType(properties: string): TraceMessageType {
  if (propertyOf(properties, '__STARTDELIVERTIME') !== null || propertyOf(properties, 'DELAY') !== null)
    return TraceMessageType.Delay_Msg;
  if (propertyOf(properties, 'TRAN_MSG') === 'true') return TraceMessageType.Trans_Msg_Half;
  return TraceMessageType.Normal_Msg;
}

/** One property of an encoded properties string (name\u0001value, joined by \u0002), or null. */
export function propertyOf(properties: string, name: string): string | null {
  let from = 0;
  for (;;) {
    const i = properties.indexOf(name + '\u0001', from);
    if (i < 0) return null;
    if (i === 0 || properties.charCodeAt(i - 1) === 2) {
      const start = i + name.length + 1;
      const end = properties.indexOf('\u0002', start);
      return properties.slice(start, end < 0 ? properties.length : end);
    }
    from = i + 1;
  }
}

/** What the send path tells the producer's trace about one answered send. */
export interface SendTraceInfo {
  topic: string;
  /** The encoded properties the message was sent with (TAGS, KEYS and the message type are read from them). */
  properties: string;
  brokerAddr: string;
  bodyLength: number;
  /** When the send to this broker began (Java: the TraceContext made in sendMessageBefore). */
  beginMs: number;
  status: string;
  msgId: string;
  offsetMsgId: string;
  regionId?: string | undefined;
  traceOn?: boolean | undefined;
}

interface SessionOptions {
  client: ClientOptions;
  group: string;
  traceTopic?: string | undefined;
  /** Tests hand in their own sender and dispatcher tuning. */
  sender?: TraceSender;
  dispatcher?: Omit<TraceDispatcherOptions, 'sender' | 'clock' | 'traceTopic'>;
}

abstract class TraceSession {
  readonly dispatcher: AsyncTraceDispatcher;
  protected readonly clock: Clock;
  protected readonly group: string;

  constructor(o: SessionOptions, type: 'PRODUCER' | 'CONSUMER') {
    this.clock = o.client.clock ?? systemClock;
    this.group = o.group;
    const traceTopic = o.traceTopic ?? RMQ_SYS_TRACE_TOPIC;
    const sender = o.sender ?? new TraceProducer(o.client, traceProducerGroup(o.group, type));
    this.dispatcher = new AsyncTraceDispatcher({ ...o.dispatcher, sender, clock: this.clock, traceTopic });
  }

  stats(): TraceDispatcherStats {
    return this.dispatcher.stats();
  }

  /** Sends what is queued and stops the trace producer (the host calls it from its own shutdown). */
  shutdown(): Promise<void> {
    return this.dispatcher.shutdown();
  }
}

/** The producer side (SendMessageTraceHookImpl, EndTransactionTraceHookImpl). */
export class ProducerTrace extends TraceSession {
  constructor(o: SessionOptions) {
    super(o, 'PRODUCER');
  }

  /**
   * sendMessageAfter: a Pub record for a send the broker answered. As Java, nothing for a send to
   * the trace topic itself, a failed or oneway send, or an answer without MSG_REGION or with
   * TRACE_ON=false.
   */
  onSend(s: SendTraceInfo): void {
    try {
      if (s.topic.startsWith(this.dispatcher.traceTopic)) return;
      if (s.regionId === undefined || s.traceOn !== true) return;
      const now = this.clock.now();
      const bean: TraceBean = {
        topic: s.topic,
        msgId: s.msgId,
        offsetMsgId: s.offsetMsgId,
        tags: propertyOf(s.properties, 'TAGS'),
        keys: propertyOf(s.properties, 'KEYS'),
        storeHost: s.brokerAddr,
        bodyLength: s.bodyLength,
        msgType: traceMessageType(s.properties),
        retryTimes: 0,
      };
      this.dispatcher.append({
        traceType: 'Pub',
        timeStamp: s.beginMs,
        regionId: s.regionId,
        groupName: this.group,
        costTime: Math.trunc(now - s.beginMs),
        success: s.status === 'SEND_OK',
        requestId: '',
        contextCode: 0,
        traceBeans: [bean],
      });
    } catch {
      // never into the send path
    }
  }

  /**
   * EndTransactionTraceHookImpl#endTransaction, for the transactional producer: an EndTransaction
   * record (message type TransCommit, region from the message's MSG_REGION or DefaultRegion).
   */
  onEndTransaction(e: {
    topic: string;
    properties: Record<string, string>;
    brokerAddr: string;
    msgId: string;
    transactionId: string | null;
    /** COMMIT_MESSAGE, ROLLBACK_MESSAGE or UNKNOW. */
    transactionState: string;
    fromTransactionCheck: boolean;
  }): void {
    try {
      if (e.topic.startsWith(this.dispatcher.traceTopic)) return;
      const region = e.properties.MSG_REGION;
      this.dispatcher.append({
        traceType: 'EndTransaction',
        timeStamp: this.clock.now(),
        regionId: region === undefined || region === '' ? 'DefaultRegion' : region,
        groupName: this.group,
        costTime: 0,
        success: true,
        requestId: '',
        contextCode: 0,
        traceBeans: [
          {
            topic: e.topic,
            msgId: e.msgId,
            offsetMsgId: '',
            tags: e.properties.TAGS ?? null,
            keys: e.properties.KEYS ?? null,
            storeHost: e.brokerAddr,
            bodyLength: 0,
            msgType: TraceMessageType.Trans_msg_Commit,
            retryTimes: 0,
            transactionId: e.transactionId,
            transactionState: e.transactionState,
            fromTransactionCheck: e.fromTransactionCheck,
          },
        ],
      });
    } catch {
      // never into the transaction path
    }
  }
}

/** The outcome of one handler call, as the consume service saw it. */
export interface ConsumeOutcome {
  /** What the handler returned (CONSUME_SUCCESS, RECONSUME_LATER, …), undefined when it returned nothing or threw. */
  status: unknown;
  threw: boolean;
  /** The call took at least consumeTimeout. */
  timedOut: boolean;
}

/** CONSUME_SUCCESS (concurrent), SUCCESS or COMMIT (orderly): what Java's hooks count as success. */
function succeeded(status: unknown): boolean {
  return status === 'CONSUME_SUCCESS' || status === 'SUCCESS' || status === 'COMMIT';
}

/** The consumer side (ConsumeMessageTraceHookImpl). */
export class ConsumerTrace extends TraceSession {
  private readonly requestIds: UniqKeyGenerator;

  constructor(o: SessionOptions) {
    super(o, 'CONSUMER');
    this.requestIds = new UniqKeyGenerator({ ip: o.client.clientIp ?? defaultClientIp() });
  }

  /**
   * consumeMessageBefore: one SubBefore record for the call's messages (those whose TRACE_ON is not
   * "false"), region from MSG_REGION. Returns the record for `after`, or null.
   */
  before(msgs: readonly MessageExt[]): TraceContext | null {
    try {
      const beans: TraceBean[] = [];
      let regionId: string | null = '';
      for (const m of msgs) {
        if (m.properties.TRACE_ON === 'false') continue;
        beans.push({
          topic: anyNamespaceStripped(m.topic),
          msgId: m.msgId,
          offsetMsgId: '',
          tags: m.tags ?? null,
          keys: m.properties.KEYS ?? null,
          storeHost: '',
          bodyLength: m.storeSize,
          msgType: TraceMessageType.Normal_Msg,
          retryTimes: m.reconsumeTimes,
        });
        regionId = m.properties.MSG_REGION ?? null;
      }
      if (beans.length === 0) return null;
      const now = this.clock.now();
      const ctx: TraceContext = {
        traceType: 'SubBefore',
        timeStamp: now,
        regionId,
        groupName: anyNamespaceStripped(this.group),
        costTime: 0,
        success: true,
        requestId: this.requestIds.next(now),
        contextCode: 0,
        traceBeans: beans,
      };
      this.dispatcher.append(ctx);
      return ctx;
    } catch {
      return null;
    }
  }

  /** consumeMessageAfter: the SubAfter record, cost per message, success, and ConsumeReturnType as contextCode. */
  after(before: TraceContext | null, msgCount: number, outcome: ConsumeOutcome): void {
    if (before === null) return;
    try {
      const now = this.clock.now();
      let code: ConsumeReturnType;
      if (outcome.status === undefined || outcome.status === null)
        code = outcome.threw ? ConsumeReturnType.EXCEPTION : ConsumeReturnType.RETURNNULL;
      else if (outcome.timedOut) code = ConsumeReturnType.TIME_OUT;
      else if (succeeded(outcome.status)) code = ConsumeReturnType.SUCCESS;
      else code = ConsumeReturnType.FAILED;
      this.dispatcher.append({
        traceType: 'SubAfter',
        timeStamp: now,
        regionId: before.regionId,
        groupName: before.groupName,
        costTime: Math.trunc((now - before.timeStamp) / Math.max(1, msgCount)),
        success: succeeded(outcome.status),
        requestId: before.requestId,
        contextCode: code,
        accessChannel: 'LOCAL',
        traceBeans: before.traceBeans,
      });
    } catch {
      // never into the consume path
    }
  }
}

/**
 * NamespaceUtil.withoutNamespace(resource), as ConsumeMessageTraceHookImpl writes group and topic:
 * whatever namespace the name carries is left out, so a namespaced consumer's records name the
 * group and topic as its code does.
 */
function anyNamespaceStripped(resource: string): string {
  return withoutNamespace(namespaceOf(resource), resource);
}

/**
 * A consumer without a handler (DefaultLitePullConsumerImpl#poll, and the SimpleConsumer's receive):
 * the hooks run back to back around the hand-over, as Java's lite pull consumer runs them. SubBefore
 * then SubAfter with success true and no return type (contextCode 0, SUCCESS), cost 0 per message.
 */
export function traceHandedOver(trace: ConsumerTrace | null, msgs: readonly MessageExt[]): void {
  if (trace === null || msgs.length === 0) return;
  const before = trace.before(msgs);
  trace.after(before, msgs.length, { status: 'CONSUME_SUCCESS', threw: false, timedOut: false });
}

/** The consumer's trace from its resolved configuration (the connection options its trace producer shares). */
export function startConsumerTrace(c: {
  consumerGroup: string;
  namesrvAddr: string;
  clientIp?: string | undefined;
  serializeType?: 'JSON' | 'ROCKETMQ' | undefined;
  acl?: ClientOptions['acl'] | undefined;
  mqClientApiTimeoutMs?: number | undefined;
  clock: Clock;
  traceTopic?: string | undefined;
}): ConsumerTrace {
  const client: ClientOptions = { namesrvAddr: c.namesrvAddr, clock: c.clock };
  if (c.clientIp !== undefined) client.clientIp = c.clientIp;
  if (c.serializeType !== undefined) client.serializeType = c.serializeType;
  if (c.acl !== undefined) client.acl = c.acl;
  if (c.mqClientApiTimeoutMs !== undefined) client.mqClientApiTimeoutMs = c.mqClientApiTimeoutMs;
  return new ConsumerTrace({ client, group: c.consumerGroup, traceTopic: c.traceTopic });
}
