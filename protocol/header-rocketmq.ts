import type { RemotingCommand } from './command.js';
import { languageByte, languageName } from './codes.js';
import { ProtocolError } from './errors.js';

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
  const remark = cmd.remark != null && cmd.remark.length > 0 ? javaUtf8(cmd.remark) : null;
  const entries: [Buffer, Buffer][] = [];
  let extLen = 0;
  if (cmd.extFields) {
    for (const [k, v] of Object.entries(cmd.extFields)) {
      if (v == null) continue;
      const kb = javaUtf8(k);
      const vb = javaUtf8(String(v));
      entries.push([kb, vb]);
      extLen += 2 + kb.length + 4 + vb.length;
    }
  }
  const size = 21 + (remark ? remark.length : 0) + extLen;
  const out = Buffer.allocUnsafe(size);
  let p = 0;
  out.writeInt16BE((cmd.code << 16) >> 16, p); p += 2;
  out.writeInt8((languageByte(cmd.language) << 24) >> 24, p); p += 1;
  out.writeInt16BE((cmd.version << 16) >> 16, p); p += 2;
  out.writeInt32BE(cmd.opaque | 0, p); p += 4;
  out.writeInt32BE(cmd.flag | 0, p); p += 4;
  if (remark) {
    out.writeInt32BE(remark.length, p); p += 4;
    remark.copy(out, p); p += remark.length;
  } else {
    out.writeInt32BE(0, p); p += 4;
  }
  out.writeInt32BE(extLen, p); p += 4;
  for (const [kb, vb] of entries) {
    out.writeInt16BE(kb.length, p); p += 2;
    kb.copy(out, p); p += kb.length;
    out.writeInt32BE(vb.length, p); p += 4;
    vb.copy(out, p); p += vb.length;
  }
  return out;
}

/** Decode a binary header held in `b`. `base` is the header's position in the stream, for errors. */
export function decodeRocketmqHeader(b: Buffer, base = 0): Omit<RemotingCommand, 'body'> {
  if (b.length < 21) throw new ProtocolError(`ROCKETMQ header of ${b.length} bytes is shorter than 21`, base);
  let p = 0;
  const code = b.readInt16BE(p); p += 2;
  const lang = b.readInt8(p); p += 1;
  const version = b.readInt16BE(p); p += 2;
  const opaque = b.readInt32BE(p); p += 4;
  const flag = b.readInt32BE(p); p += 4;
  const remarkLen = b.readInt32BE(p); p += 4;
  if (remarkLen < 0 || remarkLen > b.length - p - 4) {
    throw new ProtocolError(`ROCKETMQ header remark length ${remarkLen} exceeds the header`, base + p - 4);
  }
  const remark = remarkLen > 0 ? b.toString('utf8', p, p + remarkLen) : null;
  p += remarkLen;
  const extLen = b.readInt32BE(p); p += 4;
  if (extLen < 0 || extLen > b.length - p) {
    throw new ProtocolError(`ROCKETMQ header ext length ${extLen} exceeds the header`, base + p - 4);
  }
  let extFields: Record<string, string> | null = null;
  if (extLen > 0) {
    extFields = {};
    const end = p + extLen;
    while (p < end) {
      if (end - p < 2) throw new ProtocolError('ROCKETMQ header ext entry cut short', base + p);
      const kl = b.readInt16BE(p); p += 2;
      if (kl < 0 || kl > end - p - 4) throw new ProtocolError(`ROCKETMQ header key length ${kl} exceeds the ext section`, base + p - 2);
      const key = b.toString('utf8', p, p + kl); p += kl;
      const vl = b.readInt32BE(p); p += 4;
      if (vl < 0 || vl > end - p) throw new ProtocolError(`ROCKETMQ header value length ${vl} exceeds the ext section`, base + p - 4);
      const val = b.toString('utf8', p, p + vl); p += vl;
      if (kl > 0 && vl > 0) putField(extFields, key, val);
    }
  }
  return { code, language: languageName(lang), version, opaque, flag, remark, extFields, serializeType: 'ROCKETMQ' };
}

/**
 * Store a decoded ext field. Keys come from the network, so "__proto__" must become an own
 * property rather than replace the object's prototype.
 */
export function putField(fields: Record<string, string>, key: string, value: string): void {
  if (key === '__proto__') {
    Object.defineProperty(fields, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    fields[key] = value;
  }
}

// A lone surrogate: a high one not followed by a low one, or a low one not preceded by a high one.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
const ANY_SURROGATE = /[\ud800-\udfff]/;

/**
 * UTF-8 bytes of a string as Java's String.getBytes(UTF_8) produces them: a lone surrogate becomes
 * '?' (Node would write U+FFFD, three bytes), everything else is standard UTF-8.
 */
export function javaUtf8(s: string): Buffer {
  if (ANY_SURROGATE.test(s)) s = s.replace(LONE_SURROGATE, '?');
  return Buffer.from(s, 'utf8');
}
