import { javaHashMapOrder } from '../../protocol/java-hash.js';
import { MessageValidationError } from './errors.js';
import type { Message } from './message.js';
import { instanceIdOf } from './producer-namespace.js';
import { timerProperties } from './timer-message.js';

/*
 * A Message as it goes on the wire: its body checked against maxMessageSize, its properties
 * (user, timer, namespace instance id) encoded in the order Java's messageProperties2String writes them.
 */

/**
 * Property names the Java client keeps for itself (MessageConst.STRING_HASH_SET); a user property with
 * one of these names would change how the broker treats the message.
 */
const RESERVED = new Set([
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
  'MSG_REGION',
  'TRACE_ON',
  'UNIQ_KEY',
  'MAX_RECONSUME_TIMES',
  'CONSUME_START_TIME',
  'TRAN_PREPARED_QUEUE_OFFSET',
  'TRANSACTION_CHECK_TIMES',
  'CHECK_IMMUNITY_TIME_IN_SECONDS',
  'INSTANCE_ID',
  'CORRELATION_ID',
  'REPLY_TO_CLIENT',
  'TTL',
  'ARRIVE_TIME',
  'PUSH_REPLY_TIME',
  'CLUSTER',
  'MSG_TYPE',
]);

/** The body as bytes, checked against maxMessageSize. */
export function messageBody(msg: Message, maxMessageSize: number): Buffer {
  const b = msg.body;
  if (b === undefined || b === null)
    throw new MessageValidationError('body', `message body is missing (got ${String(b)})`);
  const buf =
    typeof b === 'string'
      ? Buffer.from(b, 'utf8')
      : Buffer.isBuffer(b)
        ? b
        : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  if (buf.length === 0) throw new MessageValidationError('body', 'message body length is zero');
  if (buf.length > maxMessageSize) {
    throw new MessageValidationError('body', `message body size ${buf.length} exceeds the maximum ${maxMessageSize}`);
  }
  return buf;
}

/** Property names and values in the order Java's Message puts them into its HashMap. */
function collectProperties(
  msg: Message,
  uniqKey: string | undefined,
  system?: Readonly<Record<string, string>>,
): { names: string[]; values: string[] } {
  const names: string[] = [];
  const values: string[] = [];
  if (msg.tags !== undefined && msg.tags.length > 0) {
    names.push('TAGS');
    values.push(msg.tags);
  }
  const keys = Array.isArray(msg.keys) ? msg.keys.join(' ') : msg.keys;
  if (keys !== undefined && keys.length > 0) {
    names.push('KEYS');
    values.push(keys);
  }
  names.push('WAIT');
  values.push(String(msg.waitStoreMsgOK ?? true));
  if (msg.properties !== undefined) {
    for (const [k, v] of Object.entries(msg.properties)) {
      if (RESERVED.has(k)) throw new MessageValidationError('properties', `property name ${k} is reserved by RocketMQ`);
      if (k.length === 0 || v === undefined || v === null || String(v).length === 0) continue;
      // A value may hold \u0001 (the decoder splits name and value at the first one only, as Java does);
      // \u0002 would end the property early.
      if (/[\u0001\u0002]/.test(k) || String(v).includes('\u0002')) {
        throw new MessageValidationError('properties', `property ${k} contains a separator character`);
      }
      names.push(k);
      values.push(String(v));
    }
  }
  const level = msg.delayTimeLevel ?? 0;
  if (!Number.isInteger(level) || level < 0)
    throw new MessageValidationError('delayTimeLevel', `delay level ${level} is invalid`);
  if (level > 0) {
    names.push('DELAY');
    values.push(String(level));
  }
  // reserved properties the producer itself sets (request–reply), put before UNIQ_KEY as Java does
  for (const k in system) {
    names.push(k);
    values.push(system[k]!);
  }
  for (const [k, v] of timerProperties(msg)) {
    names.push(k);
    values.push(v);
  }
  if (uniqKey !== undefined) {
    names.push('UNIQ_KEY');
    values.push(uniqKey);
  }
  const instanceId = instanceIdOf(msg);
  if (instanceId !== undefined) {
    names.push('INSTANCE_ID');
    values.push(instanceId);
  }
  return { names, values };
}

/**
 * The properties string
 * (docs/protocol-facts.md#properties-string) of a message as a 4.9.8 Java producer writes it: Java puts TAGS, KEYS and
 * WAIT in Message's constructor, then user properties and DELAY, and the producer adds UNIQ_KEY last;
 * messageProperties2String then walks the HashMap in bucket order (javaHashMapOrder), with no trailing
 * separator.
 */
export function encodeMessageProperties(
  msg: Message,
  uniqKey: string | undefined,
  system?: Readonly<Record<string, string>>,
): string {
  const { names, values } = collectProperties(msg, uniqKey, system);
  const perm = hashMapPermutation(names);
  let s = '';
  for (let j = 0; j < perm.length; j++) {
    const i = perm[j]!;
    s += (j === 0 ? '' : '\u0002') + names[i] + '\u0001' + values[i];
  }
  return s;
}

/** The same properties as a map (in iteration order for string keys). */
export function messageProperties(msg: Message, uniqKey: string | undefined): Record<string, string> {
  const { names, values } = collectProperties(msg, uniqKey);
  const out: Record<string, string> = {};
  for (const i of hashMapPermutation(names)) out[names[i]!] = values[i]!;
  return out;
}

/**
 * Positions of `names` in HashMap iteration order. Messages of one application mostly carry the same
 * property names, so the order is computed once per name list (the cache is bounded).
 */
const permutations = new Map<string, number[]>();
function hashMapPermutation(names: readonly string[]): number[] {
  const sig = names.join('\u0001');
  let perm = permutations.get(sig);
  if (!perm) {
    const index = new Map(names.map((n, i) => [n, i] as const));
    perm = javaHashMapOrder(names).map((n) => index.get(n)!);
    if (permutations.size >= 256) permutations.clear();
    permutations.set(sig, perm);
  }
  return perm;
}
