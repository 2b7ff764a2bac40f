import type { RemotingCommand } from './command.js';
import { ProtocolError } from './errors.js';
import { javaHashMapOrder } from './java-hash.js';

/**
 * JSON header (serialize type 0) as fastjson 1.x writes RemotingCommand: fields sorted by name
 * (code, extFields, flag, language, opaque, remark, serializeTypeCurrentRPC, version), nulls
 * omitted, `extFields` in java.util.HashMap iteration order, control characters escaped.
 */
export function encodeJsonHeader(cmd: RemotingCommand): Buffer {
  let s = '{"code":' + cmd.code;
  if (cmd.extFields != null) {
    s += ',"extFields":{';
    const keys = javaHashMapOrder(Object.keys(cmd.extFields));
    let first = true;
    for (const k of keys) {
      const v = cmd.extFields[k];
      if (v == null) continue;
      if (!first) s += ',';
      first = false;
      s += fastjsonString(k) + ':' + fastjsonString(String(v));
    }
    s += '}';
  }
  s += ',"flag":' + cmd.flag;
  if (cmd.language != null) s += ',"language":' + fastjsonString(cmd.language);
  s += ',"opaque":' + cmd.opaque;
  if (cmd.remark != null) s += ',"remark":' + fastjsonString(cmd.remark);
  s += ',"serializeTypeCurrentRPC":"JSON","version":' + cmd.version + '}';
  return Buffer.from(s, 'utf8');
}

const HEX = '0123456789ABCDEF';
// fastjson's table for double-quoted strings: short escapes for \b \t \n \f \r, " and \\,
// \u00XX (upper-case hex) for the other C0 controls and DEL; everything else is written raw.
const ESCAPES: (string | undefined)[] = [];
for (let c = 0; c < 0x20; c++) ESCAPES[c] = '\\u00' + HEX[c >> 4] + HEX[c & 15];
ESCAPES[0x08] = '\\b';
ESCAPES[0x09] = '\\t';
ESCAPES[0x0a] = '\\n';
ESCAPES[0x0c] = '\\f';
ESCAPES[0x0d] = '\\r';
ESCAPES[0x22] = '\\"';
ESCAPES[0x5c] = '\\\\';
ESCAPES[0x7f] = '\\u007F';
// eslint-disable-next-line no-control-regex
const NEEDS_ESCAPE = /[\u0000-\u001f"\\\u007f]/;

export function fastjsonString(s: string): string {
  if (!NEEDS_ESCAPE.test(s)) return '"' + s + '"';
  let out = '"';
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const e = c < 0x80 ? ESCAPES[c] : undefined;
    if (e !== undefined) {
      out += s.slice(start, i) + e;
      start = i + 1;
    }
  }
  return out + s.slice(start) + '"';
}

/** Decode a JSON header. `offset` is only used to locate errors. */
export function decodeJsonHeader(bytes: Buffer, offset = 0): Omit<RemotingCommand, 'body'> {
  let obj: unknown;
  try {
    obj = JSON.parse(bytes.toString('utf8'));
  } catch (err) {
    throw new ProtocolError(`JSON header is not valid JSON: ${(err as Error).message}`, offset, { cause: err });
  }
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) {
    throw new ProtocolError('JSON header is not an object', offset);
  }
  const o = obj as Record<string, unknown>;
  const code = intField(o, 'code', offset, true);
  let extFields: Record<string, string> | null = null;
  if (o.extFields != null) {
    if (typeof o.extFields !== 'object' || Array.isArray(o.extFields)) {
      throw new ProtocolError('JSON header field "extFields" is not an object', offset);
    }
    extFields = {};
    for (const [k, v] of Object.entries(o.extFields as Record<string, unknown>)) {
      if (v == null) continue;
      extFields[k] = typeof v === 'string' ? v : typeof v === 'object' ? JSON.stringify(v) : String(v);
    }
  }
  return {
    code,
    language: typeof o.language === 'string' ? o.language : null,
    version: intField(o, 'version', offset, false),
    opaque: intField(o, 'opaque', offset, false),
    flag: intField(o, 'flag', offset, false),
    remark: typeof o.remark === 'string' ? o.remark : o.remark == null ? null : String(o.remark),
    extFields,
    serializeType: 'JSON',
  };
}

function intField(o: Record<string, unknown>, name: string, offset: number, required: boolean): number {
  const v = o[name];
  if (v == null) {
    if (required) throw new ProtocolError(`JSON header has no "${name}"`, offset);
    return 0;
  }
  if (typeof v !== 'number' || !Number.isInteger(v) || v < -2147483648 || v > 2147483647) {
    throw new ProtocolError(`JSON header field "${name}" is not an int32: ${JSON.stringify(v)}`, offset);
  }
  return v;
}
