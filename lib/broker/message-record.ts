import { crc32 } from 'node:zlib';
import { isIP } from 'node:net';
import { javaStringHash } from '../../protocol/index.js';

/**
 * The broker's commit-log record (what a pull response body concatenates), written and read here.
 * Private to lib/broker: the broker needs to write records with offsets it assigns and to read a
 * few fields back (send-back, schedule, recovery) without decoding whole messages.
 *
 * Layout (all big-endian; BH/SH = 8 for IPv4 hosts, 20 for IPv6, chosen by SYSFLAG 0x10 / 0x20):
 *   0 TOTALSIZE int32 (includes itself) | 4 MAGICCODE int32 | 8 BODYCRC int32 | 12 QUEUEID int32
 *   16 FLAG int32 | 20 QUEUEOFFSET int64 | 28 PHYSICALOFFSET int64 | 36 SYSFLAG int32
 *   40 BORNTIMESTAMP int64 | 48 BORNHOST BH | 48+BH STORETIMESTAMP int64 | 56+BH STOREHOST SH
 *   56+BH+SH RECONSUMETIMES int32 | PREPARED TRANSACTION OFFSET int64 | BODY int32 len + bytes
 *   TOPIC int8 len (v1) or int16 len (v2) + UTF-8 | PROPERTIES int16 len + UTF-8
 * We write magic v1 for topics up to 127 bytes and v2 above, like a 5.x broker.
 */
export const MAGIC_V1 = -626843481; // 0xDAA320A7
export const MAGIC_V2 = -626843477; // 0xDAA320AB
export const MAGIC_BLANK = -875286124; // 0xCBD43194

export const SYSFLAG_BORNHOST_V6 = 0x10;
export const SYSFLAG_STOREHOST_V6 = 0x20;

export const PROPERTY_NAME_SEPARATOR = '\u0001';
export const PROPERTY_SEPARATOR = '\u0002';

/** A parsed "ip:port" with its address bytes (4 or 16). */
export interface SocketAddress {
  ip: Buffer;
  port: number;
  text: string;
}

const TWO32 = 4294967296;

/** int64 into 8 bytes from a JS number (values are offsets/timestamps/tag codes, |v| < 2^53). */
export function writeInt64(buf: Buffer, value: number, at: number): void {
  const hi = Math.floor(value / TWO32);
  buf.writeInt32BE(hi, at);
  buf.writeUInt32BE(value - hi * TWO32, at + 4);
}
/** int64 from 8 bytes; narrowed to number because every int64 we store is below 2^53. */
export function readInt64(buf: Buffer, at: number): number {
  return buf.readInt32BE(at) * TWO32 + buf.readUInt32BE(at + 4);
}

function ipv4Bytes(ip: string): Buffer | null {
  const parts = ip.split('.');
  if (parts.length !== 4) return null;
  const b = Buffer.alloc(4);
  for (let i = 0; i < 4; i++) {
    const n = Number(parts[i]);
    if (!Number.isInteger(n) || n < 0 || n > 255) return null;
    b[i] = n;
  }
  return b;
}

function ipv6Bytes(ip: string): Buffer {
  const out = Buffer.alloc(16);
  let text = ip;
  const zone = text.indexOf('%');
  if (zone >= 0) text = text.slice(0, zone);
  // an embedded IPv4 tail (::ffff:1.2.3.4) becomes two groups
  const lastColon = text.lastIndexOf(':');
  const tail = text.slice(lastColon + 1);
  if (tail.includes('.')) {
    const v4 = ipv4Bytes(tail) ?? Buffer.alloc(4);
    text = text.slice(0, lastColon + 1) + v4.readUInt16BE(0).toString(16) + ':' + v4.readUInt16BE(2).toString(16);
  }
  const [head, rest] = text.split('::') as [string, string | undefined];
  const headGroups = head ? head.split(':') : [];
  const tailGroups = rest !== undefined && rest !== '' ? rest.split(':') : [];
  const groups =
    rest === undefined
      ? headGroups
      : [...headGroups, ...new Array<string>(8 - headGroups.length - tailGroups.length).fill('0'), ...tailGroups];
  for (let i = 0; i < 8; i++) out.writeUInt16BE(parseInt(groups[i] ?? '0', 16) & 0xffff, i * 2);
  return out;
}

/**
 * Parse "ip:port", "[v6]:port" or a Node address/port pair. IPv4-mapped IPv6 addresses
 * (::ffff:1.2.3.4, what a dual-stack socket reports) are stored as IPv4 like Java does.
 */
export function parseSocketAddress(address: string, portArg?: number): SocketAddress {
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
  const v4 = ipv4Bytes(host);
  if (v4) return { ip: v4, port, text: `${host}:${port}` };
  if (isIP(host) === 6) return { ip: ipv6Bytes(host), port, text: `[${host}]:${port}` };
  // a host name: Java would have resolved it; store 0.0.0.0 rather than fail the send
  return { ip: Buffer.alloc(4), port, text: `0.0.0.0:${port}` };
}

/** Offset msgId: uppercase hex of store-host IP + port (int32) + commit-log offset (int64). */
export function createOffsetMsgId(storeHost: SocketAddress, physOffset: number): string {
  const b = Buffer.alloc(storeHost.ip.length + 12);
  storeHost.ip.copy(b, 0);
  b.writeInt32BE(storeHost.port, storeHost.ip.length);
  writeInt64(b, physOffset, storeHost.ip.length + 4);
  return b.toString('hex').toUpperCase();
}

/** Commit-log offset inside an offset msgId (32 hex chars for IPv4, 56 for IPv6); null if malformed. */
export function physOffsetOfMsgId(msgId: string): number | null {
  if (!/^[0-9A-Fa-f]+$/.test(msgId) || (msgId.length !== 32 && msgId.length !== 56)) return null;
  const b = Buffer.from(msgId, 'hex');
  return readInt64(b, b.length - 8);
}

/** Properties string → map, with Java's rule: skip segments shorter than 3 or with an empty name/value. */
export function decodeProperties(s: string | null | undefined): Map<string, string> {
  const out = new Map<string, string>();
  if (!s) return out;
  for (const seg of s.split(PROPERTY_SEPARATOR)) {
    if (seg.length < 3) continue;
    const i = seg.indexOf(PROPERTY_NAME_SEPARATOR);
    if (i <= 0 || i === seg.length - 1) continue;
    out.set(seg.slice(0, i), seg.slice(i + 1));
  }
  return out;
}

/** Map → properties string, 4.9.4+ style (no trailing separator). */
export function encodeProperties(props: Map<string, string>): string {
  let s = '';
  for (const [k, v] of props) {
    if (s) s += PROPERTY_SEPARATOR;
    s += k + PROPERTY_NAME_SEPARATOR + v;
  }
  return s;
}

/** Tag code stored in the consume queue: Java hash of TAGS, 0 when the message has no tag. */
export function tagsCodeOf(props: Map<string, string>): number {
  const tags = props.get('TAGS');
  return tags ? javaStringHash(tags) : 0;
}

/** What the broker knows about a message before it is stored. */
export interface MessageInner {
  topic: string;
  queueId: number;
  flag: number;
  sysFlag: number;
  bornTimestamp: number;
  bornHost: SocketAddress;
  reconsumeTimes: number;
  preparedTransactionOffset: number;
  /** Body as received (still compressed when the COMPRESSED bit is set). */
  body: Buffer;
  properties: Map<string, string>;
  /** Filled by the store when absent: Java hash of TAGS; for SCHEDULE_TOPIC_XXXX the delivery time. */
  tagsCode?: number;
}

/** Encoded properties must fit the int16 length field. */
export const MAX_PROPERTIES_BYTES = 32767;

export function encodedRecordSize(topicBytes: number, bodyLen: number, propsBytes: number, sysFlag: number): number {
  const bh = sysFlag & SYSFLAG_BORNHOST_V6 ? 20 : 8;
  const sh = sysFlag & SYSFLAG_STOREHOST_V6 ? 20 : 8;
  const tl = topicBytes > 127 ? 2 : 1;
  return 4 + 4 + 4 + 4 + 4 + 8 + 8 + 4 + 8 + bh + 8 + sh + 4 + 8 + 4 + bodyLen + tl + topicBytes + 2 + propsBytes;
}

/** A message ready to be written: its bytes with queue offset, commit-log offset and store time still to fill. */
export interface PreparedRecord {
  buf: Buffer;
  inner: MessageInner;
  tagsCode: number;
}

/** Encode a record with zero offsets; `stampRecord` fills them in when the store assigns them. */
export function prepareRecord(inner: MessageInner, storeHost: SocketAddress, propertiesString: string): PreparedRecord {
  let sysFlag = inner.sysFlag & ~(SYSFLAG_BORNHOST_V6 | SYSFLAG_STOREHOST_V6);
  if (inner.bornHost.ip.length === 16) sysFlag |= SYSFLAG_BORNHOST_V6;
  if (storeHost.ip.length === 16) sysFlag |= SYSFLAG_STOREHOST_V6;
  const topic = Buffer.from(inner.topic, 'utf8');
  const props = Buffer.from(propertiesString, 'utf8');
  const size = encodedRecordSize(topic.length, inner.body.length, props.length, sysFlag);
  const b = Buffer.allocUnsafe(size);
  b.writeInt32BE(size, 0);
  b.writeInt32BE(topic.length > 127 ? MAGIC_V2 : MAGIC_V1, 4);
  b.writeInt32BE(crc32(inner.body) & 0x7fffffff, 8);
  b.writeInt32BE(inner.queueId, 12);
  b.writeInt32BE(inner.flag | 0, 16);
  writeInt64(b, 0, 20);
  writeInt64(b, 0, 28);
  b.writeInt32BE(sysFlag, 36);
  writeInt64(b, inner.bornTimestamp, 40);
  let p = 48;
  p += inner.bornHost.ip.copy(b, p);
  b.writeInt32BE(inner.bornHost.port, p);
  p += 4;
  writeInt64(b, 0, p); // store timestamp
  p += 8;
  p += storeHost.ip.copy(b, p);
  b.writeInt32BE(storeHost.port, p);
  p += 4;
  b.writeInt32BE(inner.reconsumeTimes, p);
  p += 4;
  writeInt64(b, inner.preparedTransactionOffset, p);
  p += 8;
  b.writeInt32BE(inner.body.length, p);
  p += 4;
  p += inner.body.copy(b, p);
  if (topic.length > 127) {
    b.writeInt16BE(topic.length, p);
    p += 2;
  } else {
    b.writeInt8(topic.length, p);
    p += 1;
  }
  p += topic.copy(b, p);
  b.writeInt16BE(props.length, p);
  p += 2;
  props.copy(b, p);
  const tagsCode = inner.tagsCode ?? tagsCodeOf(inner.properties);
  return { buf: b, inner, tagsCode };
}

function storeTimestampPos(sysFlag: number): number {
  return 48 + (sysFlag & SYSFLAG_BORNHOST_V6 ? 20 : 8);
}

/** Fill queue offset, commit-log offset and store timestamp of an encoded record. */
export function stampRecord(b: Buffer, queueOffset: number, physOffset: number, storeTimestamp: number): void {
  writeInt64(b, queueOffset, 20);
  writeInt64(b, physOffset, 28);
  writeInt64(b, storeTimestamp, storeTimestampPos(b.readInt32BE(36)));
}

/** The fields of a stored record the broker reads back. */
export interface RecordView {
  size: number;
  queueId: number;
  flag: number;
  queueOffset: number;
  physOffset: number;
  sysFlag: number;
  bornTimestamp: number;
  bornHost: SocketAddress;
  storeTimestamp: number;
  storeHost: SocketAddress;
  reconsumeTimes: number;
  preparedTransactionOffset: number;
  bodyCrc: number;
  body: Buffer;
  topic: string;
  propertiesString: string;
}

function readHost(b: Buffer, p: number, v6: boolean): SocketAddress {
  const len = v6 ? 16 : 4;
  const ip = Buffer.from(b.subarray(p, p + len));
  const port = b.readInt32BE(p + len);
  const text = v6 ? `[${ipv6Text(ip)}]:${port}` : `${ip[0]}.${ip[1]}.${ip[2]}.${ip[3]}:${port}`;
  return { ip, port, text };
}

function ipv6Text(ip: Buffer): string {
  const g: string[] = [];
  for (let i = 0; i < 16; i += 2) g.push(ip.readUInt16BE(i).toString(16));
  return g.join(':');
}

/** Thrown when bytes are not a complete, well-formed record. */
export class CorruptRecordError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CorruptRecordError';
  }
}

/** Read a whole record starting at `b[0]`; checks sizes and magic, not the CRC. */
export function readRecord(b: Buffer): RecordView {
  if (b.length < 4) throw new CorruptRecordError('record shorter than 4 bytes');
  const size = b.readInt32BE(0);
  if (size < 91 || size > b.length) throw new CorruptRecordError(`record size ${size} out of range`);
  const magic = b.readInt32BE(4);
  if (magic !== MAGIC_V1 && magic !== MAGIC_V2) throw new CorruptRecordError(`bad magic ${magic}`);
  const sysFlag = b.readInt32BE(36);
  const bornV6 = (sysFlag & SYSFLAG_BORNHOST_V6) !== 0;
  const storeV6 = (sysFlag & SYSFLAG_STOREHOST_V6) !== 0;
  let p = 48;
  const bornHost = readHost(b, p, bornV6);
  p += bornV6 ? 20 : 8;
  const storeTimestamp = readInt64(b, p);
  p += 8;
  const storeHost = readHost(b, p, storeV6);
  p += storeV6 ? 20 : 8;
  const reconsumeTimes = b.readInt32BE(p);
  p += 4;
  const preparedTransactionOffset = readInt64(b, p);
  p += 8;
  const bodyLen = b.readInt32BE(p);
  p += 4;
  if (bodyLen < 0 || p + bodyLen > size) throw new CorruptRecordError('body length out of range');
  const body = b.subarray(p, p + bodyLen);
  p += bodyLen;
  let topicLen: number;
  if (magic === MAGIC_V2) {
    topicLen = b.readInt16BE(p);
    p += 2;
  } else {
    topicLen = b.readInt8(p);
    p += 1;
  }
  if (topicLen < 0 || p + topicLen + 2 > size) throw new CorruptRecordError('topic length out of range');
  const topic = b.toString('utf8', p, p + topicLen);
  p += topicLen;
  const propsLen = b.readInt16BE(p);
  p += 2;
  if (propsLen < 0 || p + propsLen !== size) throw new CorruptRecordError('properties length does not end the record');
  const propertiesString = b.toString('utf8', p, p + propsLen);
  return {
    size,
    queueId: b.readInt32BE(12),
    flag: b.readInt32BE(16),
    queueOffset: readInt64(b, 20),
    physOffset: readInt64(b, 28),
    sysFlag,
    bornTimestamp: readInt64(b, 40),
    bornHost,
    storeTimestamp,
    storeHost,
    reconsumeTimes,
    preparedTransactionOffset,
    bodyCrc: b.readInt32BE(8),
    body,
    topic,
    propertiesString,
  };
}

/** The store timestamp of a record, without decoding the rest. */
export function recordStoreTimestamp(b: Buffer): number {
  return readInt64(b, storeTimestampPos(b.readInt32BE(36)));
}

/**
 * One message of a SEND_BATCH_MESSAGE body: TOTALSIZE, MAGIC 0, CRC 0, FLAG, int32 BODY length +
 * bytes, int16 PROPERTIES length + bytes.
 */
export interface BatchItem {
  flag: number;
  body: Buffer;
  propertiesString: string;
}

/** Split a batch body; throws CorruptRecordError on a malformed one. */
export function decodeBatchBody(body: Buffer): BatchItem[] {
  // Like Java's MessageDecoder.decodeMessage, walk by the field lengths and ignore TOTALSIZE (senders
  // disagree on whether it counts the 2-byte properties length).
  const out: BatchItem[] = [];
  let p = 0;
  while (p < body.length) {
    if (body.length - p < 22) throw new CorruptRecordError('truncated batch item');
    const flag = body.readInt32BE(p + 12);
    const bodyLen = body.readInt32BE(p + 16);
    if (bodyLen < 0 || p + 22 + bodyLen > body.length) throw new CorruptRecordError('batch item body length out of range');
    const b = body.subarray(p + 20, p + 20 + bodyLen);
    const propsLen = body.readInt16BE(p + 20 + bodyLen);
    const end = p + 22 + bodyLen + propsLen;
    if (propsLen < 0 || end > body.length) throw new CorruptRecordError('batch item properties length out of range');
    const props = body.toString('utf8', p + 22 + bodyLen, end);
    out.push({ flag, body: b, propertiesString: props });
    p = end;
  }
  return out;
}
