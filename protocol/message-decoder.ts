import { decompressBody, MAX_DECOMPRESSED_BODY } from './compression.js';
import { messageBodyCrc } from './crc32.js';
import { ProtocolError } from './errors.js';
import { type MessageExt, StoredMessageExt } from './message-ext.js';
import { hex8, hexUpper } from './message-id.js';
import { BLANK_MAGIC_CODE, MESSAGE_MAGIC_CODE_V1, MESSAGE_MAGIC_CODE_V2, storedMessageSize } from './message-record.js';
import { decodeProperties } from './properties.js';
import { formatIPv4, formatSocketAddress } from './socket-address.js';
import { MessageSysFlag } from './sys-flag.js';

/** How decodeMessages and decodeMessagesSkipping read a pull body of stored-message records. */
export interface DecodeMessagesOptions {
  /**
   * Decompress bodies whose sysFlag says COMPRESSED (and clear that bit).
   * @default true
   */
  decompress?: boolean;
  /**
   * Check each BODYCRC against the stored body (Java clients do not).
   * @default false
   */
  verifyCrc?: boolean;
  /**
   * Added to error offsets, in bytes, e.g. the position of `body` inside the frame or capture.
   * @default 0
   */
  baseOffset?: number;
  /**
   * Largest inflated body, in bytes: a COMPRESSED body that would inflate past it is an
   * InflatedBodyTooLargeError (decompression stops at the limit).
   * @default MAX_DECOMPRESSED_BODY (64 MiB)
   */
  maxBodyBytes?: number;
  /**
   * Added to every record's queue offset: a static topic's pull answer carries the physical offsets
   * of the broker's queue and, in `offsetDelta`, what turns them into the logic queue's offsets.
   * @default 0
   */
  queueOffsetDelta?: number;
}

// Smallest record: fixed fields with IPv4 hosts, empty body, 1-byte topic length, empty properties.
const MIN_RECORD = storedMessageSize(0, 0, 0);
const TWO_32 = 4294967296;
// Not an int32: marks the offsetMsgId prefix cache empty.
const NO_HIGH = TWO_32;

/** Per-call cache: one pull holds messages of one broker, often from one producer. */
interface HostCache {
  bornIp: number;
  bornPort: number;
  bornText: string;
  storeIp: number;
  storePort: number;
  storeText: string;
  storeHex: string;
  /** storeHex + hex of the high half of the last commit-log offset, and that half. */
  idPrefix: string;
  idHigh: number;
  /** Position and length of the last topic's bytes in the body, and its text. */
  topicAt: number;
  topicLength: number;
  topic: string;
}

function newHostCache(): HostCache {
  return {
    bornIp: 0,
    bornPort: -1,
    bornText: '',
    storeIp: 0,
    storePort: -1,
    storeText: '',
    storeHex: '',
    idPrefix: '',
    idHigh: NO_HIGH,
    topicAt: 0,
    topicLength: -1,
    topic: '',
  };
}

function i32(b: Buffer, i: number): number {
  return (b[i]! << 24) | (b[i + 1]! << 16) | (b[i + 2]! << 8) | b[i + 3]!;
}

/**
 * int64 at `i` as a number. Narrowing point: queue offsets and commit-log offsets stay far below
 * 2^53 in any real store, so we read the two halves and refuse (with a ProtocolError) values
 * outside the safe range instead of allocating a BigInt per field.
 */
function i64(b: Buffer, i: number, base: number, field: string): number {
  const hi = i32(b, i);
  if (hi > 0x1fffff || hi < -0x200000) {
    throw new ProtocolError(`stored message ${field} does not fit in 53 bits`, base + i);
  }
  return hi * TWO_32 + (i32(b, i + 4) >>> 0);
}

/**
 * int64 at `i` that a producer or a broker may set to anything (born and store timestamps, the
 * prepared-transaction offset: Java's broker stores a client's bornTimestamp as sent, and any Java
 * client may send Long.MAX_VALUE). Narrowing point: beyond 2^53 it is read as the nearest double,
 * so that such a message is still delivered; only the magnitude of an absurd timestamp survives.
 * Queue and commit-log offsets are never read this way: a rounded offset would be committed.
 */
function i64Lenient(b: Buffer, i: number): number {
  const hi = i32(b, i);
  if (hi <= 0x1fffff && hi >= -0x200000) return hi * TWO_32 + (i32(b, i + 4) >>> 0);
  return Number(b.readBigInt64BE(i));
}

// Buffer#utf8Slice is what toString('utf8', …) ends in, minus the encoding dispatch; it is not in
// @types/node, hence the cast. Invalid UTF-8 becomes U+FFFD exactly as with toString.
type Utf8Sliceable = Buffer & { utf8Slice(start: number, end: number): string };
function text(b: Buffer, start: number, end: number): string {
  return (b as Utf8Sliceable).utf8Slice(start, end);
}

/** True when b[a, a+n) and b[c, c+n) hold the same bytes. */
function sameBytes(b: Buffer, a: number, c: number, n: number): boolean {
  for (let i = 0; i < n; i++) if (b[a + i] !== b[c + i]) return false;
  return true;
}

/** The options of a body decode with their defaults, and the decode's own host-address cache. */
function decodeSettings(options: DecodeMessagesOptions | undefined): {
  decompress: number;
  verifyCrc: boolean;
  base: number;
  delta: number;
  cache: ReturnType<typeof newHostCache>;
} {
  const decompress = (options?.decompress ?? true) ? (options?.maxBodyBytes ?? MAX_DECOMPRESSED_BODY) : 0;
  return {
    decompress,
    verifyCrc: options?.verifyCrc ?? false,
    base: options?.baseOffset ?? 0,
    delta: options?.queueOffsetDelta ?? 0,
    cache: newHostCache(),
  };
}

/**
 * Decode a pull body (or any body of concatenated stored records) into messages. Bodies are
 * views into `body` unless decompressed. Any truncation or unknown magic code throws a
 * ProtocolError carrying the byte offset (Java's decoder would stop and keep what it had).
 */
export function decodeMessages(body: Buffer, options?: DecodeMessagesOptions): MessageExt[] {
  const out: MessageExt[] = [];
  const { decompress, verifyCrc, base, delta, cache } = decodeSettings(options);
  const end = body.length;
  let p = 0;
  while (p < end) {
    const m = decodeRecord(body, p, end, decompress, verifyCrc, base, cache);
    if (delta !== 0) m.queueOffset += delta;
    out.push(m);
    p += m.storeSize;
  }
  return out;
}

/**
 * A stretch of a pull body that decodeMessagesSkipping could not turn into a message: either one
 * whole record whose frame (size and magic code) is intact but whose content is not (a COMPRESSED
 * body that does not inflate, a length field that disagrees with the record size), or damaged
 * bytes between two decodable records (or up to the end of the body).
 */
export interface UndecodableRecord {
  /** Byte position of the stretch in the body (plus baseOffset). */
  position: number;
  /** Bytes skipped. */
  length: number;
  /**
   * True when the stretch is one record whose size and magic code held, so that `queueId`,
   * `queueOffset` and `commitLogOffset` are read from its own header; false for damaged bytes,
   * whose record header cannot be trusted (the fields are then absent).
   */
  recordIntact: boolean;
  queueId?: number;
  queueOffset?: number;
  commitLogOffset?: number;
  /** Why it could not be decoded: the ProtocolError's message. */
  reason: string;
  /** How many messages of the result come before this stretch. */
  messagesBefore: number;
}

/** What decodeMessagesSkipping returns: the messages it decoded, in order, and the stretches it skipped. */
export interface SkippingDecodeResult {
  messages: MessageExt[];
  undecodable: UndecodableRecord[];
}

/** The record at `p` has a sane size and a message magic code (it may still fail to decode). */
function framedAt(b: Buffer, p: number, end: number): number {
  if (end - p < MIN_RECORD) return -1;
  const size = i32(b, p);
  const magic = i32(b, p + 4);
  if (magic !== MESSAGE_MAGIC_CODE_V1 && magic !== MESSAGE_MAGIC_CODE_V2) return -1;
  if (size < MIN_RECORD || size > end - p) return -1;
  return size;
}

/** A record at `p` that decodes and ends where the body ends or another framed record begins. */
function resyncPoint(b: Buffer, p: number, end: number, options: DecodeMessagesOptions | undefined): boolean {
  const size = framedAt(b, p, end);
  if (size < 0) return false;
  if (p + size !== end && framedAt(b, p + size, end) < 0) return false;
  try {
    decodeMessage(b.subarray(0, p + size), p, { ...options, baseOffset: 0 });
    return true;
  } catch {
    return false;
  }
}

/**
 * decodeMessages for a consumer: a record that cannot be decoded is skipped and listed instead of
 * failing the whole body. Java's MessageDecoder.decodes stops at the first record it cannot decode
 * and drops it and everything after it without a word, and the consumer moves on to the pull's
 * nextBeginOffset; here every decodable record before it is kept, and so is every one after it
 * when the framing lets us find the next record: an intact frame is stepped over by its size;
 * damaged bytes are scanned for the next position holding a record that decodes and is followed
 * by another record or the end of the body.
 */
export function decodeMessagesSkipping(body: Buffer, options?: DecodeMessagesOptions): SkippingDecodeResult {
  const messages: MessageExt[] = [];
  const undecodable: UndecodableRecord[] = [];
  const { decompress, verifyCrc, base, delta, cache } = decodeSettings(options);
  const end = body.length;
  let p = 0;
  while (p < end) {
    try {
      const m = decodeRecord(body, p, end, decompress, verifyCrc, base, cache);
      if (delta !== 0) m.queueOffset += delta;
      messages.push(m);
      p += m.storeSize;
    } catch (e) {
      // Whatever went wrong inside one record (a ProtocolError, or anything a decompressor throws),
      // it is that record's problem, not the pull's.
      const reason = e instanceof Error ? e.message : String(e);
      const size = framedAt(body, p, end);
      // An intact frame: trust its size when the next record (or the end of the body) is there.
      if (size > 0 && (p + size === end || framedAt(body, p + size, end) >= 0)) {
        const queueOffset = safeI64(body, p + 20);
        undecodable.push({
          position: base + p,
          length: size,
          recordIntact: true,
          queueId: i32(body, p + 12),
          queueOffset: queueOffset === undefined ? undefined : queueOffset + delta,
          commitLogOffset: safeI64(body, p + 28),
          reason,
          messagesBefore: messages.length,
        });
        p += size;
        continue;
      }
      let q = p + 1;
      while (q < end && !resyncPoint(body, q, end, options)) q++;
      undecodable.push({
        position: base + p,
        length: q - p,
        recordIntact: false,
        reason,
        messagesBefore: messages.length,
      });
      p = q;
    }
  }
  return { messages, undecodable };
}

/** An int64 field as a number, or undefined when it does not fit in 53 bits. */
function safeI64(b: Buffer, i: number): number | undefined {
  const hi = i32(b, i);
  if (hi > 0x1fffff || hi < -0x200000) return undefined;
  return hi * TWO_32 + (i32(b, i + 4) >>> 0);
}

/**
 * Count the stored records of a pull body by walking their size fields, without decoding them;
 * stops at a size that is not positive. Null counts as empty.
 */
export function countStoredRecords(body: Buffer | null): number {
  if (!body) return 0;
  let n = 0;
  let p = 0;
  while (p + 4 <= body.length) {
    const size = body.readInt32BE(p);
    if (size <= 0) break;
    p += size;
    n++;
  }
  return n;
}

/** Decode the single record at `offset` (e.g. a VIEW_MESSAGE_BY_ID or CONSUME_MESSAGE_DIRECTLY body). */
export function decodeMessage(buf: Buffer, offset = 0, options?: DecodeMessagesOptions): MessageExt {
  const { decompress, verifyCrc, base, cache } = decodeSettings(options);
  return decodeRecord(buf, offset, buf.length, decompress, verifyCrc, base, cache);
}

/**
 * `decompress` is the largest inflated body (maxBodyBytes), or 0 to leave COMPRESSED bodies as they
 * are stored.
 */
function decodeRecord(
  b: Buffer,
  start: number,
  limit: number,
  decompress: number,
  verifyCrc: boolean,
  base: number,
  cache: HostCache,
): MessageExt {
  if (limit - start < 8) throw new ProtocolError('stored message: truncated record header', base + start);
  const storeSize = i32(b, start);
  const magic = i32(b, start + 4);
  if (magic !== MESSAGE_MAGIC_CODE_V1 && magic !== MESSAGE_MAGIC_CODE_V2) {
    const what =
      magic === BLANK_MAGIC_CODE ? 'blank commit-log filler' : `unknown magic code 0x${(magic >>> 0).toString(16)}`;
    throw new ProtocolError(`stored message: ${what}`, base + start + 4);
  }
  if (storeSize < MIN_RECORD)
    throw new ProtocolError(`stored message: record size ${storeSize} is too small`, base + start);
  if (storeSize > limit - start) {
    throw new ProtocolError(`stored message: record of ${storeSize} bytes truncated to ${limit - start}`, base + start);
  }
  const end = start + storeSize;
  const bodyCRC = i32(b, start + 8);
  const queueId = i32(b, start + 12);
  const flag = i32(b, start + 16);
  const queueOffset = i64(b, start + 20, base, 'queue offset');
  const commitLogOffset = i64(b, start + 28, base, 'commit-log offset');
  let sysFlag = i32(b, start + 36);
  const bornTimestamp = i64Lenient(b, start + 40);
  let p = start + 48;

  const bornV6 = (sysFlag & MessageSysFlag.BORNHOST_V6_FLAG) !== 0;
  const storeV6 = (sysFlag & MessageSysFlag.STOREHOSTADDRESS_V6_FLAG) !== 0;
  // Both IPv6 hosts add 24 bytes over the minimum; re-check so the fixed reads below stay inside.
  if ((bornV6 || storeV6) && storeSize < MIN_RECORD + (bornV6 ? 12 : 0) + (storeV6 ? 12 : 0)) {
    throw new ProtocolError(`stored message: record size ${storeSize} is too small for IPv6 hosts`, base + start);
  }
  let bornHost: string;
  if (!bornV6) {
    const ip = i32(b, p);
    const port = i32(b, p + 4);
    if (ip !== cache.bornIp || port !== cache.bornPort) {
      cache.bornIp = ip;
      cache.bornPort = port;
      cache.bornText = formatIPv4(b, p) + ':' + port;
    }
    bornHost = cache.bornText;
    p += 8;
  } else {
    bornHost = formatSocketAddress(b, p, 16);
    p += 20;
  }
  const storeTimestamp = i64Lenient(b, p);
  p += 8;
  let storeHost: string;
  let storeHex: string;
  if (!storeV6) {
    const ip = i32(b, p);
    const port = i32(b, p + 4);
    if (ip !== cache.storeIp || port !== cache.storePort) {
      cache.storeIp = ip;
      cache.storePort = port;
      cache.storeText = formatIPv4(b, p) + ':' + port;
      cache.storeHex = hexUpper(b, p, p + 8);
      cache.idHigh = NO_HIGH;
    }
    storeHost = cache.storeText;
    storeHex = cache.storeHex;
    p += 8;
  } else {
    storeHost = formatSocketAddress(b, p, 16);
    storeHex = hexUpper(b, p, p + 20);
    p += 20;
  }
  const reconsumeTimes = i32(b, p);
  const preparedTransactionOffset = i64Lenient(b, p + 4);
  p += 12;

  const bodyLength = i32(b, p);
  p += 4;
  if (bodyLength < 0 || bodyLength > end - p - 3) {
    throw new ProtocolError(`stored message: body length ${bodyLength} exceeds the record`, base + p - 4);
  }
  const bodyStart = p;
  p += bodyLength;

  let topicLength: number;
  if (magic === MESSAGE_MAGIC_CODE_V1) {
    topicLength = (b[p]! << 24) >> 24; // signed int8, as Java reads it
    p += 1;
  } else {
    if (end - p < 4) throw new ProtocolError('stored message: truncated topic length', base + p);
    topicLength = ((b[p]! << 24) >> 16) | b[p + 1]!;
    p += 2;
  }
  if (topicLength < 0 || topicLength > end - p - 2) {
    throw new ProtocolError(`stored message: topic length ${topicLength} exceeds the record`, base + p - 1);
  }
  // A pull body holds one topic: reuse the previous record's string when the bytes are equal.
  let topic: string;
  if (topicLength === cache.topicLength && sameBytes(b, p, cache.topicAt, topicLength)) {
    topic = cache.topic;
  } else {
    topic = text(b, p, p + topicLength);
    cache.topicAt = p;
    cache.topicLength = topicLength;
    cache.topic = topic;
  }
  p += topicLength;

  const propertiesLength = ((b[p]! << 24) >> 16) | b[p + 1]!;
  p += 2;
  if (propertiesLength < 0 || propertiesLength !== end - p) {
    throw new ProtocolError(
      `stored message: properties length ${propertiesLength} does not match the ${end - p} bytes left in the record`,
      base + p - 2,
    );
  }
  const properties = propertiesLength > 0 ? decodeProperties(text(b, p, end)) : {};

  if (verifyCrc) {
    const crc = messageBodyCrc(b, bodyStart, bodyStart + bodyLength);
    if (crc !== bodyCRC) {
      throw new ProtocolError(`stored message: body CRC ${crc} differs from stored ${bodyCRC}`, base + start + 8);
    }
  }
  let msgBody = b.subarray(bodyStart, bodyStart + bodyLength);
  if (decompress > 0 && (sysFlag & MessageSysFlag.COMPRESSED_FLAG) !== 0) {
    msgBody = decompressBody(msgBody, sysFlag, base + bodyStart, decompress);
    sysFlag &= ~MessageSysFlag.COMPRESSED_FLAG;
  }

  // storeHex + the offset's 16 hex digits. The store host and the high half of the offset are the
  // same for a whole pull, so only the low 8 digits are made per message.
  const high = i32(b, start + 28);
  let offsetMsgId: string;
  if (storeV6) {
    offsetMsgId = storeHex + hex8(high) + hex8(i32(b, start + 32));
  } else {
    if (high !== cache.idHigh) {
      cache.idHigh = high;
      cache.idPrefix = storeHex + hex8(high);
    }
    offsetMsgId = cache.idPrefix + hex8(i32(b, start + 32));
  }
  const uniq = properties.UNIQ_KEY;
  return new StoredMessageExt(
    topic,
    queueId,
    flag,
    queueOffset,
    commitLogOffset,
    sysFlag,
    bornTimestamp,
    bornHost,
    storeTimestamp,
    storeHost,
    reconsumeTimes,
    preparedTransactionOffset,
    bodyCRC,
    storeSize,
    properties,
    msgBody,
    uniq !== undefined ? uniq : offsetMsgId,
    offsetMsgId,
    properties.TAGS,
    undefined,
  );
}
