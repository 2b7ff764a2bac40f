import { ProtocolError } from './errors.js';
import { decodeProperties, encodeProperties, MAX_PROPERTIES_BYTES } from './properties.js';

/**
 * SEND_BATCH_MESSAGE body (docs/protocol-facts.md#batch-body): one short record per message,
 *   int32 TOTALSIZE (includes itself) | int32 MAGICCODE = 0 | int32 BODYCRC = 0 | int32 FLAG |
 *   int32 bodyLen + body | int16 propsLen + properties.
 * TOTALSIZE = 22 + bodyLen + propsLen (an earlier summary said 20; Java's encodeMessage and
 * the golden vectors say 22). Batches are never compressed; all messages share one topic.
 */
export interface BatchMessage {
  body: Uint8Array;
  flag?: number;
  /** Properties of this message (UNIQ_KEY, TAGS, KEYS, …), as a map or an encoded string. */
  properties?: string | Readonly<Record<string, string>>;
}

/** One message of a SEND_BATCH_MESSAGE body as decodeBatch reads it. */
export interface DecodedBatchMessage {
  flag: number;
  /** View into the batch body. */
  body: Buffer;
  properties: Record<string, string>;
  /** The properties string as sent (the broker appends the batch-level properties to it). */
  propertiesText: string;
}

/**
 * The SEND_BATCH_MESSAGE body of `messages`, one record each in their order; properties of more
 * than MAX_PROPERTIES_BYTES throw a ProtocolError.
 */
export function encodeBatch(messages: readonly BatchMessage[]): Buffer {
  const props: string[] = [];
  let total = 0;
  for (const m of messages) {
    const s =
      m.properties === undefined
        ? ''
        : typeof m.properties === 'string'
          ? m.properties
          : encodeProperties(m.properties);
    const n = Buffer.byteLength(s, 'utf8');
    if (n > MAX_PROPERTIES_BYTES)
      throw new ProtocolError(`batch message properties of ${n} bytes exceed ${MAX_PROPERTIES_BYTES}`, 0);
    props.push(s);
    total += 22 + m.body.length + n;
  }
  const b = Buffer.allocUnsafe(total);
  let p = 0;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    const s = props[i]!;
    const start = p;
    p += 4;
    b.writeInt32BE(0, p);
    p += 4;
    b.writeInt32BE(0, p);
    p += 4;
    b.writeInt32BE(m.flag ?? 0, p);
    p += 4;
    b.writeInt32BE(m.body.length, p);
    p += 4;
    b.set(m.body, p);
    p += m.body.length;
    const n = b.write(s, p + 2, 'utf8');
    b.writeInt16BE(n, p);
    p += 2 + n;
    b.writeInt32BE(p - start, start);
  }
  return b;
}

/** How decodeBatch reads a SEND_BATCH_MESSAGE body. */
export interface DecodeBatchOptions {
  /**
   * Added to error offsets, in bytes, e.g. the position of the body inside the frame.
   * @default 0
   */
  baseOffset?: number;
  /**
   * Walk by the body and properties lengths and ignore TOTALSIZE, as a broker does: senders
   * disagree on whether it counts the 2-byte properties length (Java's encoder does, an earlier summary
   * of the protocol said it does not).
   * @default false (the record must end where TOTALSIZE says)
   */
  ignoreTotalSize?: boolean;
  /**
   * Decode each message's properties only when its `properties` is first read (a broker that
   * stores `propertiesText` as sent never reads them).
   * @default false
   */
  lazyProperties?: boolean;
}

/** A batch message whose properties are decoded when first read (one shape for all). */
class LazyBatchMessage implements DecodedBatchMessage {
  private decoded: Record<string, string> | undefined = undefined;
  constructor(
    readonly flag: number,
    readonly body: Buffer,
    readonly propertiesText: string,
  ) {}
  get properties(): Record<string, string> {
    this.decoded ??= decodeProperties(this.propertiesText);
    return this.decoded;
  }
  set properties(value: Record<string, string>) {
    this.decoded = value;
  }
}

/**
 * The messages of a SEND_BATCH_MESSAGE body, bodies as views into it; a truncated or inconsistent
 * record throws a ProtocolError at its offset. A number for `options` is the baseOffset.
 */
export function decodeBatch(body: Buffer, options: number | DecodeBatchOptions = 0): DecodedBatchMessage[] {
  const baseOffset = typeof options === 'number' ? options : (options.baseOffset ?? 0);
  const lenient = typeof options === 'number' ? false : (options.ignoreTotalSize ?? false);
  const lazy = typeof options === 'number' ? false : (options.lazyProperties ?? false);
  const out: DecodedBatchMessage[] = [];
  let p = 0;
  while (p < body.length) {
    const start = p;
    if (body.length - p < 22) throw new ProtocolError('batch: truncated record', baseOffset + p);
    const size = body.readInt32BE(p);
    if (!lenient && (size < 22 || size > body.length - p))
      throw new ProtocolError(`batch: record size ${size} is invalid`, baseOffset + p);
    // Lenient: the record may run to the end of the body; its properties length says where it ends.
    let end = lenient ? body.length : start + size;
    p += 12; // size, magic, crc (both 0 and ignored by brokers)
    const flag = body.readInt32BE(p);
    p += 4;
    const bodyLength = body.readInt32BE(p);
    p += 4;
    if (bodyLength < 0 || bodyLength > end - p - 2)
      throw new ProtocolError(`batch: body length ${bodyLength} exceeds the record`, baseOffset + p - 4);
    const msgBody = body.subarray(p, p + bodyLength);
    p += bodyLength;
    const propsLength = body.readInt16BE(p);
    p += 2;
    if (lenient && propsLength >= 0 && propsLength <= end - p) end = p + propsLength;
    if (propsLength < 0 || propsLength !== end - p) {
      throw new ProtocolError(`batch: properties length ${propsLength} does not match the record`, baseOffset + p - 2);
    }
    const propertiesText = body.toString('utf8', p, end);
    p = end;
    out.push(
      lazy
        ? new LazyBatchMessage(flag, msgBody, propertiesText)
        : { flag, body: msgBody, properties: decodeProperties(propertiesText), propertiesText },
    );
  }
  return out;
}

/**
 * Properties a broker stores for one message of a batch: the message's own string followed by
 * the batch-level string (header `i`), with a `\u0002` between them when both are non-empty and
 * the first does not already end with one (as CommitLog's batch encoder does).
 */
export function appendBatchProperties(inner: string, batchLevel: string): string {
  if (inner.length === 0) return batchLevel;
  if (batchLevel.length === 0) return inner;
  return inner.endsWith('\u0002') ? inner + batchLevel : inner + '\u0002' + batchLevel;
}
