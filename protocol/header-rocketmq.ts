import type { RemotingCommand } from './command.js';
import { languageByte, languageName } from './codes.js';
import { ProtocolError } from './errors.js';
import { putOwn } from './own-key.js';

/**
 * ROCKETMQ binary header (serialize type 1), all integers big-endian:
 *   int16 code | int8 language | int16 version | int32 opaque | int32 flag |
 *   int32 remarkLength + remark | int32 extLength + { int16 keyLen, key, int32 valLen, val }*
 * Empty strings read as absent (null), as Java 4.9.4+ and 5.x do.
 * Ext entries are written in the order of `extFields`: Java writes a FastCodesHeader's fields
 * (pull request/response, send V2, send response) in declaration order, which is the order our
 * typed header encoders produce, and other maps in HashMap order, which no receiver depends on.
 */
export function encodeRocketmqHeader(cmd: RemotingCommand): Buffer {
  const layout = rocketmqHeaderLayout(cmd);
  const out = Buffer.allocUnsafe(layout.size);
  writeRocketmqHeader(cmd, layout, out, 0);
  return out;
}

/**
 * Sizes of a ROCKETMQ header computed ahead of writing, so the frame encoder can allocate the
 * whole frame once and write the header straight into it.
 */
export interface RocketmqHeaderLayout {
  readonly size: number;
  readonly remark: string | null;
  readonly remarkBytes: number;
  readonly extBytes: number;
  /** Flattened ext entries: key, key bytes, value, value bytes, … (strings already Java-safe). */
  readonly entries: (string | number)[];
}

export function rocketmqHeaderLayout(cmd: RemotingCommand): RocketmqHeaderLayout {
  const remark = cmd.remark != null && cmd.remark.length > 0 ? javaString(cmd.remark) : null;
  const remarkBytes = remark === null ? 0 : Buffer.byteLength(remark, 'utf8');
  const entries: (string | number)[] = [];
  let extBytes = 0;
  if (cmd.extFields) {
    for (const k in cmd.extFields) {
      if (!Object.hasOwn(cmd.extFields, k)) continue;
      const v = cmd.extFields[k];
      if (v == null) continue;
      const ks = javaString(k);
      const vs = javaString(String(v));
      const kl = Buffer.byteLength(ks, 'utf8');
      const vl = Buffer.byteLength(vs, 'utf8');
      entries.push(ks, kl, vs, vl);
      extBytes += 2 + kl + 4 + vl;
    }
  }
  return { size: 21 + remarkBytes + extBytes, remark, remarkBytes, extBytes, entries };
}

/** Write the header laid out by rocketmqHeaderLayout at `pos`; returns the position after it. */
export function writeRocketmqHeader(
  cmd: RemotingCommand,
  layout: RocketmqHeaderLayout,
  out: Buffer,
  pos: number,
): number {
  let p = pos;
  out.writeInt16BE((cmd.code << 16) >> 16, p);
  p += 2;
  out.writeInt8((languageByte(cmd.language) << 24) >> 24, p);
  p += 1;
  out.writeInt16BE((cmd.version << 16) >> 16, p);
  p += 2;
  out.writeInt32BE(cmd.opaque | 0, p);
  p += 4;
  out.writeInt32BE(cmd.flag | 0, p);
  p += 4;
  out.writeInt32BE(layout.remarkBytes, p);
  p += 4;
  if (layout.remark !== null) p += out.write(layout.remark, p, layout.remarkBytes, 'utf8');
  out.writeInt32BE(layout.extBytes, p);
  p += 4;
  const e = layout.entries;
  for (let i = 0; i < e.length; i += 4) {
    const kl = e[i + 1] as number;
    const vl = e[i + 3] as number;
    out.writeInt16BE(kl, p);
    p += 2;
    p += out.write(e[i] as string, p, kl, 'utf8');
    out.writeInt32BE(vl, p);
    p += 4;
    p += out.write(e[i + 2] as string, p, vl, 'utf8');
  }
  return p;
}

/** Decode a binary header held in `b`. `base` is the header's position in the stream, for errors. */
export function decodeRocketmqHeader(b: Buffer, base = 0): Omit<RemotingCommand, 'body'> {
  if (b.length < 21) throw new ProtocolError(`ROCKETMQ header of ${b.length} bytes is shorter than 21`, base);
  let p = 0;
  const code = b.readInt16BE(p);
  p += 2;
  const lang = b.readInt8(p);
  p += 1;
  const version = b.readInt16BE(p);
  p += 2;
  const opaque = b.readInt32BE(p);
  p += 4;
  const flag = b.readInt32BE(p);
  p += 4;
  const remarkLen = b.readInt32BE(p);
  p += 4;
  if (remarkLen < 0 || remarkLen > b.length - p - 4) {
    throw new ProtocolError(`ROCKETMQ header remark length ${remarkLen} exceeds the header`, base + p - 4);
  }
  const remark = remarkLen > 0 ? b.toString('utf8', p, p + remarkLen) : null;
  p += remarkLen;
  const extLen = b.readInt32BE(p);
  p += 4;
  if (extLen < 0 || extLen > b.length - p) {
    throw new ProtocolError(`ROCKETMQ header ext length ${extLen} exceeds the header`, base + p - 4);
  }
  let extFields: Record<string, string> | null = null;
  if (extLen > 0) {
    extFields = {};
    const end = p + extLen;
    while (p < end) {
      if (end - p < 2) throw new ProtocolError('ROCKETMQ header ext entry cut short', base + p);
      const kl = b.readInt16BE(p);
      p += 2;
      if (kl < 0 || kl > end - p - 4)
        throw new ProtocolError(`ROCKETMQ header key length ${kl} exceeds the ext section`, base + p - 2);
      const key = b.toString('utf8', p, p + kl);
      p += kl;
      const vl = b.readInt32BE(p);
      p += 4;
      if (vl < 0 || vl > end - p)
        throw new ProtocolError(`ROCKETMQ header value length ${vl} exceeds the ext section`, base + p - 4);
      const val = b.toString('utf8', p, p + vl);
      p += vl;
      if (kl > 0 && vl > 0) putField(extFields, key, val);
    }
  }
  return { code, language: languageName(lang), version, opaque, flag, remark, extFields, serializeType: 'ROCKETMQ' };
}

/** Store a decoded ext field ("__proto__" becomes an own property: see putOwn). */
export const putField: (fields: Record<string, string>, key: string, value: string) => void = putOwn;

// A lone surrogate: a high one not followed by a low one, or a low one not preceded by a high one.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
const ANY_SURROGATE = /[\ud800-\udfff]/;

/**
 * The string whose standard UTF-8 bytes are what Java's String.getBytes(UTF_8) gives: Java writes
 * '?' for a lone surrogate where Node would write U+FFFD (three bytes).
 */
export function javaString(s: string): string {
  return ANY_SURROGATE.test(s) ? s.replace(LONE_SURROGATE, '?') : s;
}

/** UTF-8 bytes of a string as Java's String.getBytes(UTF_8) produces them. */
export function javaUtf8(s: string): Buffer {
  return Buffer.from(javaString(s), 'utf8');
}
