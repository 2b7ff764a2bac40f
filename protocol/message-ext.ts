/**
 * A stored message as a consumer receives it (MessageExt in Java), decoded from the commit-log
 * record of docs/protocol-facts.md#stored-record. `body` is a view into the pull response body unless it
 * was decompressed.
 * @category Consuming
 */
export interface MessageExt {
  /**
   * The message's topic (a retry topic's messages carry their original topic here once the consumer has
   * restored it).
   */
  topic: string;
  /** The queue's id on the broker that stored it. */
  queueId: number;
  /** The producer's user flag. */
  flag: number;
  /** Logical offset in the consume queue: what consumers commit and pull by. */
  queueOffset: number;
  /** Physical byte offset in the commit log: used by msgIds, send-back and view-by-id. */
  commitLogOffset: number;
  /** MessageSysFlag bits; COMPRESSED is cleared once the body has been decompressed. */
  sysFlag: number;
  /** When the producer created the message, in epoch milliseconds. */
  bornTimestamp: number;
  /** "ip:port" or "[v6]:port" */
  bornHost: string;
  /** When the broker stored it, in epoch milliseconds. */
  storeTimestamp: number;
  /** "ip:port" or "[v6]:port" of the broker that stored the message. */
  storeHost: string;
  /** How many times it has been redelivered for a retry (0 on the first delivery). */
  reconsumeTimes: number;
  /** Transactional messages: the commit-log offset of the half message; 0 otherwise. */
  preparedTransactionOffset: number;
  /** CRC-32 (masked 0x7FFFFFFF) of the body as stored, i.e. before decompression. */
  bodyCRC: number;
  /** Size of the whole stored record, including its own 4 length bytes. */
  storeSize: number;
  /** Every property of the message, system ones included (see userProperties for the producer's own). */
  properties: Record<string, string>;
  /** The body, decompressed. */
  body: Buffer;
  /** UNIQ_KEY when the producer set one, else offsetMsgId. */
  msgId: string;
  /** The broker's message id: store host and commit-log offset (what the broker looks messages up by). */
  offsetMsgId: string;
  /** Property TAGS, if any. */
  tags?: string | undefined;
  /**
   * The message's keys, as the producer gave them (`send({ keys: ['a', 'b'] })`); stored as the KEYS
   * property, space-joined (`properties.KEYS`). Empty when there are none.
   */
  readonly keys: readonly string[];
  /**
   * The properties the producer set, without the system ones RocketMQ adds or reserves (UNIQ_KEY,
   * TAGS, KEYS, WAIT, MIN_OFFSET, CONSUME_START_TIME, …: the names of Java's
   * MessageConst.STRING_HASH_SET, SYSTEM_PROPERTY_NAMES here). Computed on first access (a getter:
   * a copy made with `{ ...msg }` does not have it). `properties` keeps every property.
   */
  readonly userProperties: Readonly<Record<string, string>>;
  /** Set by the consumer: the broker name of the queue the message was pulled from. */
  brokerName?: string | undefined;
}

/** A MessageExt's own fields: what a decoder or a test provides (keys and userProperties are derived). */
export type MessageExtInit = Omit<MessageExt, 'keys' | 'userProperties'>;

const NO_KEYS: readonly string[] = Object.freeze([]);

/**
 * The MessageExt the decoders hand out: plain own fields, and `userProperties` derived from
 * `properties` on access (nothing is computed for a consumer that never reads it).
 *
 * Every field is an own data property, made when the message is decoded: that is what makes
 * `Object.keys(msg)`, `{ ...msg }`, `structuredClone(msg)` and `console.log(msg)` show them all. A
 * field computed on first read would have to be an own accessor for those to see it, and V8 makes
 * an own accessor per object at about 150 ns (Object.defineProperty), more than the whole field costs
 * to decode; a getter on the prototype is free but invisible to all four.
 */
export class StoredMessageExt implements MessageExt {
  topic: string;
  queueId: number;
  flag: number;
  queueOffset: number;
  commitLogOffset: number;
  sysFlag: number;
  bornTimestamp: number;
  bornHost: string;
  storeTimestamp: number;
  storeHost: string;
  reconsumeTimes: number;
  preparedTransactionOffset: number;
  bodyCRC: number;
  storeSize: number;
  properties: Record<string, string>;
  body: Buffer;
  msgId: string;
  offsetMsgId: string;
  tags: string | undefined;
  // An own field, not a getter: `{ ...msg }` keeps it (a shared empty array when there are none).
  readonly keys: readonly string[];
  brokerName: string | undefined;
  #user: Record<string, string> | undefined = undefined;

  // Positional, so that the decoder makes one object per message rather than an init object too.
  constructor(
    topic: string,
    queueId: number,
    flag: number,
    queueOffset: number,
    commitLogOffset: number,
    sysFlag: number,
    bornTimestamp: number,
    bornHost: string,
    storeTimestamp: number,
    storeHost: string,
    reconsumeTimes: number,
    preparedTransactionOffset: number,
    bodyCRC: number,
    storeSize: number,
    properties: Record<string, string>,
    body: Buffer,
    msgId: string,
    offsetMsgId: string,
    tags: string | undefined,
    brokerName: string | undefined,
  ) {
    this.topic = topic;
    this.queueId = queueId;
    this.flag = flag;
    this.queueOffset = queueOffset;
    this.commitLogOffset = commitLogOffset;
    this.sysFlag = sysFlag;
    this.bornTimestamp = bornTimestamp;
    this.bornHost = bornHost;
    this.storeTimestamp = storeTimestamp;
    this.storeHost = storeHost;
    this.reconsumeTimes = reconsumeTimes;
    this.preparedTransactionOffset = preparedTransactionOffset;
    this.bodyCRC = bodyCRC;
    this.storeSize = storeSize;
    this.properties = properties;
    this.body = body;
    this.msgId = msgId;
    this.offsetMsgId = offsetMsgId;
    this.tags = tags;
    this.keys = splitKeys(properties.KEYS);
    this.brokerName = brokerName;
  }

  get userProperties(): Readonly<Record<string, string>> {
    if (this.#user === undefined) {
      const out: Record<string, string> = {};
      for (const [k, v] of Object.entries(this.properties)) if (!SYSTEM_PROPERTY_NAMES.has(k)) out[k] = v;
      this.#user = out;
    }
    return this.#user;
  }

  /** JSON.stringify(msg) shows userProperties too. */
  toJSON(): Record<string, unknown> {
    return { ...(this as object), userProperties: this.userProperties };
  }
}

/** A MessageExt from its fields (decoders, the reply path, tests). */
export function createMessageExt(m: MessageExtInit): MessageExt {
  return new StoredMessageExt(
    m.topic,
    m.queueId,
    m.flag,
    m.queueOffset,
    m.commitLogOffset,
    m.sysFlag,
    m.bornTimestamp,
    m.bornHost,
    m.storeTimestamp,
    m.storeHost,
    m.reconsumeTimes,
    m.preparedTransactionOffset,
    m.bodyCRC,
    m.storeSize,
    m.properties,
    m.body,
    m.msgId,
    m.offsetMsgId,
    m.tags,
    m.brokerName,
  );
}

/**
 * KEYS split on spaces, empty pieces dropped (what `keys` holds). Most messages carry one key or
 * single-spaced ones, which a plain split handles without the filter's second array.
 */
function splitKeys(k: string | undefined): readonly string[] {
  if (k === undefined || k === '') return NO_KEYS;
  if (k.indexOf(' ') < 0) return [k];
  if (k.indexOf('  ') < 0 && k.charCodeAt(0) !== 32 && k.charCodeAt(k.length - 1) !== 32) return k.split(' ');
  return k.split(' ').filter((s) => s !== '');
}

/**
 * The property names RocketMQ treats as the system's (Java's MessageConst.STRING_HASH_SET, as in
 * apache/rocketmq 5.5.0): userProperties leaves them out.
 */
export const SYSTEM_PROPERTY_NAMES: ReadonlySet<string> = new Set([
  'TRACE_ON',
  'MSG_REGION',
  'KEYS',
  'TAGS',
  'WAIT',
  'DELAY',
  'RETRY_TOPIC',
  'REAL_TOPIC',
  'REAL_QID',
  'TRAN_MSG',
  'PGROUP',
  'MIN_OFFSET',
  'MAX_OFFSET',
  'BUYER_ID',
  'ORIGIN_MESSAGE_ID',
  'TRANSFER_FLAG',
  'CORRECTION_FLAG',
  'MQ2_FLAG',
  'RECONSUME_TIME',
  'UNIQ_KEY',
  'MAX_RECONSUME_TIMES',
  'CONSUME_START_TIME',
  'POP_CK',
  'POP_CK_OFFSET',
  '1ST_POP_TIME',
  'TRAN_PREPARED_QUEUE_OFFSET',
  'DUP_INFO',
  'EXTEND_UNIQ_INFO',
  'INSTANCE_ID',
  'CORRELATION_ID',
  'REPLY_TO_CLIENT',
  'TTL',
  'ARRIVE_TIME',
  'PUSH_REPLY_TIME',
  'CLUSTER',
  'MSG_TYPE',
  'INNER_MULTI_QUEUE_OFFSET',
  'TIMER_DELAY_SEC',
  'TIMER_DELIVER_MS',
  'TIMER_ENQUEUE_MS',
  'TIMER_DEQUEUE_MS',
  'TIMER_ROLL_TIMES',
  'TIMER_OUT_MS',
  'TIMER_DEL_UNIQKEY',
  'TIMER_DELAY_LEVEL',
  '__BORNHOST',
  'BORN_TIMESTAMP',
]);

/** What the broker writes into a commit-log record (encodeStoredMessage). */
export interface StoredMessageInit {
  topic: string;
  queueId: number;
  flag?: number;
  queueOffset: number;
  commitLogOffset: number;
  /** MessageSysFlag bits; the two IPv6 host bits are set from the host addresses. */
  sysFlag?: number;
  bornTimestamp: number;
  /** "ip:port" or "[v6]:port" */
  bornHost: string;
  storeTimestamp: number;
  /** "ip:port" or "[v6]:port": the broker's reachable address (the offsetMsgId is derived from it). */
  storeHost: string;
  reconsumeTimes?: number;
  preparedTransactionOffset?: number;
  /** The body as stored (already compressed when sysFlag says so). */
  body: Uint8Array;
  /** A properties string (docs/protocol-facts.md#properties-string) or a map encoded in key order. */
  properties?: string | Readonly<Record<string, string>>;
  /** 1 or 2; default 2 only when the topic is longer than 127 UTF-8 bytes, as 5.x brokers do. */
  magic?: 1 | 2;
  /** Default: computed from `body`. */
  bodyCRC?: number;
}
