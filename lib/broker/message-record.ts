import { isIP } from 'node:net';
import { decodeProperties, encodeStoredMessage, MessageSysFlag } from '../../protocol/index.js';
import { readProperty } from '../../protocol/stored-properties.js';
import { readInt64, writeInt64 } from '../../protocol/int64.js';
import { javaStringHash } from '../../protocol/java-hash.js';
import { MessageRecordOffset } from '../../protocol/message-record.js';
import { parseIPv4 } from '../../protocol/socket-address.js';

/**
 * What the broker adds to protocol's stored-record codec
 * (docs/protocol-facts.md#stored-record; encodeStoredMessage writes a
 * record, decodeMessage reads one back): records are encoded before the store assigns their
 * offsets, then stamped in place, and a few fields are read without decoding the whole record.
 */

/**
 * The "ip:port" / "[v6]:port" text the broker stores for a peer, from "ip:port", "[v6]:port" or a
 * Node address/port pair. IPv4-mapped IPv6 addresses (::ffff:1.2.3.4, what a dual-stack socket
 * reports) become IPv4 like Java stores them; a host name becomes 0.0.0.0 (Java would have
 * resolved it) rather than failing the send; a port out of range becomes 0.
 */
export function socketAddressText(address: string, portArg?: number): string {
  let host = address;
  let port = portArg ?? 0;
  if (portArg === undefined) {
    if (address.startsWith('[')) {
      const end = address.indexOf(']');
      host = address.slice(1, end);
      port = Number(address.slice(end + 2));
    } else {
      const i = address.lastIndexOf(':');
      if (i > 0 && isIP(address) === 0) {
        host = address.slice(0, i);
        port = Number(address.slice(i + 1));
      }
    }
  }
  if (!Number.isInteger(port) || port < 0 || port > 65535) port = 0;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(host);
  if (mapped) host = mapped[1]!;
  if (parseIPv4(host)) return `${host}:${port}`;
  if (isIP(host) === 6) return `[${host}]:${port}`;
  return `0.0.0.0:${port}`;
}

/** Tag code stored in the consume queue: Java hash of TAGS, 0 when the message has no tag. */
export function tagsCodeOf(props: Readonly<Record<string, string>>): number {
  const tags = props.TAGS;
  return tags ? javaStringHash(tags) : 0;
}

/** tagsCodeOf a message, without decoding properties that were not. */
export function tagsCodeOfInner(inner: Pick<MessageInner, 'properties' | 'propertiesText'>): number {
  const tags = propertyOf(inner, 'TAGS');
  return tags ? javaStringHash(tags) : 0;
}

/** What the broker knows about a message before it is stored. */
export interface MessageInner {
  topic: string;
  queueId: number;
  flag: number;
  sysFlag: number;
  bornTimestamp: number;
  /** "ip:port" or "[v6]:port" (socketAddressText). */
  bornHost: string;
  reconsumeTimes: number;
  preparedTransactionOffset: number;
  /** Body as received (still compressed when the COMPRESSED bit is set). */
  body: Buffer;
  properties: Record<string, string>;
  /**
   * The properties string to store as it is, equal to encodeProperties(properties): set only by
   * withPropertiesText while `properties` was never read (reading them may change them).
   */
  readonly propertiesText?: string | undefined;
}

/**
 * A message whose properties are the string `text` (what encodeProperties would write for them,
 * appendProperties' result): the store writes `text` as it is, and `properties` is decoded only
 * when something reads it (a rewrite: retry, DLQ, delay, timer, transaction), after which the
 * store encodes the object instead. A class, so that every message has the same shape; its
 * accessors live on the prototype, so a copy made with `{ ...inner }` must name `properties`
 * (`{ ...inner, properties: inner.properties }`), and then carries no `propertiesText`.
 */
class SentAsText implements MessageInner {
  topic: string;
  queueId: number;
  flag: number;
  sysFlag: number;
  bornTimestamp: number;
  bornHost: string;
  reconsumeTimes: number;
  preparedTransactionOffset: number;
  body: Buffer;
  private text: string | undefined;
  private decoded: Record<string, string> | undefined = undefined;

  constructor(f: Omit<MessageInner, 'properties' | 'propertiesText'>, text: string) {
    this.topic = f.topic;
    this.queueId = f.queueId;
    this.flag = f.flag;
    this.sysFlag = f.sysFlag;
    this.bornTimestamp = f.bornTimestamp;
    this.bornHost = f.bornHost;
    this.reconsumeTimes = f.reconsumeTimes;
    this.preparedTransactionOffset = f.preparedTransactionOffset;
    this.body = f.body;
    this.text = text;
  }

  get properties(): Record<string, string> {
    if (this.decoded === undefined) {
      this.decoded = decodeProperties(this.text!);
      this.text = undefined;
    }
    return this.decoded;
  }
  set properties(value: Record<string, string>) {
    this.decoded = value;
    this.text = undefined;
  }
  get propertiesText(): string | undefined {
    return this.text;
  }
}

/** A message whose properties are stored as the string `text` (see SentAsText). */
export function withPropertiesText(
  fields: Omit<MessageInner, 'properties' | 'propertiesText'>,
  text: string,
): MessageInner {
  return new SentAsText(fields, text);
}

/** The properties the key index reads (KEYS, UNIQ_KEY), without decoding properties that were not. */
export function indexedProperties(inner: MessageInner): Readonly<Record<string, string>> {
  if (inner.propertiesText === undefined) return inner.properties;
  const out: Record<string, string> = {};
  const keys = readProperty(inner.propertiesText, 'KEYS');
  const uniq = readProperty(inner.propertiesText, 'UNIQ_KEY');
  if (keys !== undefined) out.KEYS = keys;
  if (uniq !== undefined) out.UNIQ_KEY = uniq;
  return out;
}

/** One property of a message, read from its properties string when it was never decoded. */
export function propertyOf(
  inner: Pick<MessageInner, 'properties' | 'propertiesText'>,
  name: string,
): string | undefined {
  const text = inner.propertiesText;
  return text === undefined ? inner.properties[name] : readProperty(text, name);
}

/**
 * Park a message under a system topic (the delay levels' SCHEDULE_TOPIC_XXXX, the timer wheel, the
 * transaction half topic): its own topic and queue go into REAL_TOPIC / REAL_QID, as Java's brokers do.
 */
export function parkUnder(m: MessageInner, topic: string, queueId: number): void {
  m.properties.REAL_TOPIC = m.topic;
  m.properties.REAL_QID = String(m.queueId);
  m.topic = topic;
  m.queueId = queueId;
}

/** What a stored record carries besides its topic, queue and properties (a decoded MessageExt has it all). */
export type StoredFields = Omit<MessageInner, 'topic' | 'queueId' | 'properties'>;

/**
 * A stored record written again to `topic` queue `queueId` (delivered from a system topic, put back,
 * moved aside), with `properties` and what `changes` says.
 */
export function copiedTo(
  r: StoredFields,
  topic: string,
  queueId: number,
  properties: Record<string, string>,
  changes: { sysFlag?: number; preparedTransactionOffset?: number } = {},
): MessageInner {
  return {
    topic,
    queueId,
    flag: r.flag,
    sysFlag: changes.sysFlag ?? r.sysFlag,
    bornTimestamp: r.bornTimestamp,
    bornHost: r.bornHost,
    reconsumeTimes: r.reconsumeTimes,
    preparedTransactionOffset: changes.preparedTransactionOffset ?? r.preparedTransactionOffset,
    body: r.body, // encodeStoredMessage copies it into the new record before anything is written
    properties,
  };
}

/**
 * The message a parked record stands for, back on REAL_TOPIC / REAL_QID (a bad queue id is queue 0),
 * with `properties` as given (each service decides which of REAL_* / DELAY / TIMER_* it keeps) and
 * what `changes` says; null when the record has no REAL_TOPIC.
 */
export function unparked(
  r: StoredFields,
  properties: Record<string, string>,
  changes: { sysFlag?: number; preparedTransactionOffset?: number } = {},
): MessageInner | null {
  const topic = properties.REAL_TOPIC;
  if (!topic) return null;
  const queueId = Number(properties.REAL_QID ?? '0');
  return copiedTo(r, topic, Number.isInteger(queueId) && queueId >= 0 ? queueId : 0, properties, changes);
}

/**
 * Encode a record with zero offsets and store time; `stampRecord` fills them in once the store
 * assigns them (the commit-log offset depends on the sizes of the records before it). Throws
 * ProtocolError for fields the record cannot hold.
 */
export function prepareRecord(inner: MessageInner, storeHost: string, propertiesString: string): Buffer {
  return encodeStoredMessage({
    topic: inner.topic,
    queueId: inner.queueId,
    flag: inner.flag,
    queueOffset: 0,
    commitLogOffset: 0,
    sysFlag: inner.sysFlag,
    bornTimestamp: inner.bornTimestamp,
    bornHost: inner.bornHost,
    storeTimestamp: 0,
    storeHost,
    reconsumeTimes: inner.reconsumeTimes,
    preparedTransactionOffset: inner.preparedTransactionOffset,
    body: inner.body,
    properties: propertiesString,
  });
}

/** STORETIMESTAMP follows BORNHOST, whose size (8 or 20) the IPv6 bit of SYSFLAG gives. */
function storeTimestampPos(b: Buffer): number {
  const sysFlag = b.readInt32BE(MessageRecordOffset.SYSFLAG);
  return MessageRecordOffset.BORNHOST + (sysFlag & MessageSysFlag.BORNHOST_V6_FLAG ? 20 : 8);
}

/** Fill queue offset, commit-log offset and store timestamp of an encoded record. */
export function stampRecord(b: Buffer, queueOffset: number, physOffset: number, storeTimestamp: number): void {
  writeInt64(b, MessageRecordOffset.QUEUEOFFSET, queueOffset);
  writeInt64(b, MessageRecordOffset.PHYSICALOFFSET, physOffset);
  writeInt64(b, storeTimestampPos(b), storeTimestamp);
}

/** The store timestamp of a record, without decoding the rest. */
export function recordStoreTimestamp(b: Buffer): number {
  return readInt64(b, storeTimestampPos(b));
}
