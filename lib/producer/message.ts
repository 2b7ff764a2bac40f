import { javaHashMapOrder } from '../../protocol/index.js';

/** A message to send. */
export interface Message {
  topic: string;
  body: Buffer | Uint8Array | string;
  /** One tag (property TAGS); consumers filter on it. */
  tags?: string;
  /** Business keys (property KEYS, joined by spaces). */
  keys?: string | string[];
  /** User properties; names reserved by RocketMQ are rejected. */
  properties?: Record<string, string>;
  /** Delay level 1..18 (property DELAY); 0 or absent sends at once. */
  delayTimeLevel?: number;
  /** The user flag stored with the message. */
  flag?: number;
  /** Property WAIT: the broker answers after the store succeeded (default true). */
  waitStoreMsgOK?: boolean;
}

/** A message that fails the checks Java's Validators.checkMessage makes; `field` names the culprit. */
export class MessageValidationError extends Error {
  readonly field: string;
  constructor(field: string, message: string) {
    super(message);
    this.name = 'MessageValidationError';
    this.field = field;
  }
}

const TOPIC_RE = /^[%|a-zA-Z0-9_-]+$/;

/**
 * Property names the Java client keeps for itself (MessageConst.STRING_HASH_SET); a user property with
 * one of these names would change how the broker treats the message.
 */
const RESERVED = new Set([
  'KEYS', 'TAGS', 'WAIT', 'DELAY', 'RETRY_TOPIC', 'REAL_TOPIC', 'REAL_QID', 'TRAN_MSG', 'PGROUP', 'MIN_OFFSET',
  'MAX_OFFSET', 'BUYER_ID', 'ORIGIN_MESSAGE_ID', 'TRANSFER_FLAG', 'CORRECTION_FLAG', 'MQ2_FLAG', 'RECONSUME_TIME',
  'MSG_REGION', 'TRACE_ON', 'UNIQ_KEY', 'MAX_RECONSUME_TIMES', 'CONSUME_START_TIME', 'TRAN_PREPARED_QUEUE_OFFSET',
  'TRANSACTION_CHECK_TIMES', 'CHECK_IMMUNITY_TIME_IN_SECONDS', 'INSTANCE_ID', 'CORRELATION_ID', 'REPLY_TO_CLIENT',
  'TTL', 'ARRIVE_TIME', 'PUSH_REPLY_TIME', 'CLUSTER', 'MSG_TYPE',
]);

/** Topic rules of Java's Validators.checkTopic (4.9): non-blank, ≤ 127 characters, [%|a-zA-Z0-9_-]. */
export function validateTopic(topic: unknown, createTopicKey = 'TBW102'): string {
  if (typeof topic !== 'string' || topic.trim().length === 0) throw new MessageValidationError('topic', 'topic is blank');
  if (topic.length > 127) throw new MessageValidationError('topic', `topic "${topic.slice(0, 20)}…" is longer than 127 characters`);
  if (!TOPIC_RE.test(topic)) throw new MessageValidationError('topic', `topic "${topic}" may only contain letters, digits, %, |, _ and -`);
  if (topic === createTopicKey) throw new MessageValidationError('topic', `topic ${topic} is the auto-create template topic`);
  return topic;
}

/** The body as bytes, checked against maxMessageSize. */
export function messageBody(msg: Message, maxMessageSize: number): Buffer {
  const b = msg.body;
  if (b === undefined || b === null) throw new MessageValidationError('body', 'message body is null');
  const buf = typeof b === 'string' ? Buffer.from(b, 'utf8') : Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  if (buf.length === 0) throw new MessageValidationError('body', 'message body length is zero');
  if (buf.length > maxMessageSize) {
    throw new MessageValidationError('body', `message body size ${buf.length} exceeds the maximum ${maxMessageSize}`);
  }
  return buf;
}

/**
 * The message's properties in the order a Java Message's HashMap iterates them: Java puts TAGS, KEYS and
 * WAIT in its constructor, then user properties and DELAY, and the producer adds UNIQ_KEY last; fastjson
 * and messageProperties2String then walk the map in bucket order (javaHashMapOrder).
 */
export function messageProperties(msg: Message, uniqKey: string | undefined): Record<string, string> {
  const entries: [string, string][] = [];
  if (msg.tags !== undefined && msg.tags.length > 0) entries.push(['TAGS', msg.tags]);
  const keys = Array.isArray(msg.keys) ? msg.keys.join(' ') : msg.keys;
  if (keys !== undefined && keys.length > 0) entries.push(['KEYS', keys]);
  entries.push(['WAIT', String(msg.waitStoreMsgOK ?? true)]);
  for (const [k, v] of Object.entries(msg.properties ?? {})) {
    if (RESERVED.has(k)) throw new MessageValidationError('properties', `property name ${k} is reserved by RocketMQ`);
    if (k.length === 0 || v === undefined || v === null || String(v).length === 0) continue;
    // A value may hold \u0001 (the decoder splits name and value at the first one only, as Java does);
    // \u0002 would end the property early.
    if (/[\u0001\u0002]/.test(k) || String(v).includes('\u0002')) {
      throw new MessageValidationError('properties', `property ${k} contains a separator character`);
    }
    entries.push([k, String(v)]);
  }
  const level = msg.delayTimeLevel ?? 0;
  if (!Number.isInteger(level) || level < 0) throw new MessageValidationError('delayTimeLevel', `delay level ${level} is invalid`);
  if (level > 0) entries.push(['DELAY', String(level)]);
  if (uniqKey !== undefined) entries.push(['UNIQ_KEY', uniqKey]);
  const map = new Map(entries);
  const out: Record<string, string> = {};
  for (const k of javaHashMapOrder([...map.keys()])) out[k] = map.get(k)!;
  return out;
}
