import type { RemotingCommand } from './command.js';
import { LanguageCode, languageName } from './codes.js';
import { ProtocolError } from './errors.js';
import { javaHashMapOrderShared } from './java-hash.js';
import { javaString, putField } from './header-rocketmq.js';

/** How encodeCommand and encodeCommandParts write a frame's header. */
export interface HeaderEncodeOptions {
  /**
   * Initial capacity of the java.util.HashMap that Java would hold `extFields` in; it decides the
   * key order of a JSON header (see javaHashMapOrder). 16 is what a typed header gives
   * (`makeCustomHeaderToNet`) and what 4.9 uses everywhere; 5.x's `addExtField` starts at 256.
   * Only byte-for-byte comparisons with Java care: receivers accept any order.
   * @default 16
   */
  extFieldsCapacity?: number;
}

/**
 * JSON header (serialize type 0) as fastjson 1.x writes RemotingCommand: fields sorted by name
 * (code, extFields, flag, language, opaque, remark, serializeTypeCurrentRPC, version), nulls
 * omitted, `extFields` in java.util.HashMap iteration order, control characters escaped, and the
 * text turned into bytes as Java's String.getBytes(UTF_8) does (a lone surrogate becomes '?').
 * Checked byte for byte against 4.9.8 and 5.3.3 (test/fixtures/vectors).
 */
export function encodeJsonHeader(cmd: RemotingCommand, options: HeaderEncodeOptions = {}): Buffer {
  return Buffer.from(jsonHeaderText(cmd, options), 'utf8');
}

/** The JSON header as text whose standard UTF-8 bytes are Java's (see javaString). */
export function jsonHeaderText(cmd: RemotingCommand, options: HeaderEncodeOptions = {}): string {
  // Java reads these as int32 and refuses a larger number ("parseInt error"), closing the
  // connection; wrap them as the ROCKETMQ header does (an opaque counter past 2^31 goes negative,
  // as Java's own does).
  let s = '{"code":' + (cmd.code | 0);
  if (cmd.extFields != null) {
    s += ',"extFields":{';
    const keys = javaHashMapOrderShared(Object.keys(cmd.extFields), options.extFieldsCapacity ?? 16);
    let first = true;
    for (const k of keys) {
      const v = cmd.extFields[k];
      if (v == null) continue;
      if (!first) s += ',';
      first = false;
      s += quotedKey(k) + fastjsonString(String(v));
    }
    s += '}';
  }
  s += ',"flag":' + (cmd.flag | 0);
  if (cmd.language != null) s += ',"language":' + fastjsonString(cmd.language);
  s += ',"opaque":' + (cmd.opaque | 0);
  if (cmd.remark != null) s += ',"remark":' + fastjsonString(cmd.remark);
  s += ',"serializeTypeCurrentRPC":"JSON","version":' + (cmd.version | 0) + '}';
  // Surrogate pairs never straddle the ASCII punctuation and escapes added above, so fixing lone
  // surrogates once over the whole text equals fixing each string.
  return javaString(s);
}

// A header's field names repeat on every frame of its kind: each one's `"name":` is built once.
const QUOTED_KEYS = new Map<string, string>();
const QUOTED_KEYS_MAX = 1024;
function quotedKey(k: string): string {
  let q = QUOTED_KEYS.get(k);
  if (q === undefined) {
    if (QUOTED_KEYS.size >= QUOTED_KEYS_MAX) QUOTED_KEYS.clear();
    QUOTED_KEYS.set(k, (q = fastjsonString(k) + ':'));
  }
  return q;
}

const HEX = '0123456789ABCDEF';
// fastjson's escaping of double-quoted strings (same in 1.2.69 and 1.2.83, as the vectors show):
// short escapes for \b \t \n \f \r, " and \\; \u00XX (upper-case hex) for the other C0 controls
// and for DEL and the C1 controls U+007F..U+009F; \u2028 and \u2029 (JavaScript line breaks);
// everything else, '/' and other non-ASCII included, is written raw.
const ESCAPES: (string | undefined)[] = [];
for (let c = 0; c < 0x20; c++) ESCAPES[c] = '\\u00' + HEX[c >> 4] + HEX[c & 15];
for (let c = 0x7f; c < 0xa0; c++) ESCAPES[c] = '\\u00' + HEX[c >> 4] + HEX[c & 15];
ESCAPES[0x08] = '\\b';
ESCAPES[0x09] = '\\t';
ESCAPES[0x0a] = '\\n';
ESCAPES[0x0c] = '\\f';
ESCAPES[0x0d] = '\\r';
ESCAPES[0x22] = '\\"';
ESCAPES[0x5c] = '\\\\';
const NEEDS_ESCAPE = /[\u0000-\u001f"\\\u007f-\u009f\u2028\u2029]/;

export function fastjsonString(s: string): string {
  if (!NEEDS_ESCAPE.test(s)) return '"' + s + '"';
  let out = '"';
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const e = c < 0xa0 ? ESCAPES[c] : c === 0x2028 ? '\\u2028' : c === 0x2029 ? '\\u2029' : undefined;
    if (e !== undefined) {
      out += s.slice(start, i) + e;
      start = i + 1;
    }
  }
  return out + s.slice(start) + '"';
}

/** Decode a JSON header. `offset` is only used to locate errors. */
export function decodeJsonHeader(bytes: Buffer, offset = 0): Omit<RemotingCommand, 'body'> {
  const { body: _body, ...head } = decodeJsonCommand(bytes, offset, null);
  return head;
}

/**
 * decodeJsonHeader plus the frame's body, built as one object: decodeCommand's hot path, so the
 * header's fields are never copied into a second object to add the body.
 */
export function decodeJsonCommand(bytes: Buffer, offset: number, body: Buffer | null): RemotingCommand {
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
    extFields = stringFields(o.extFields as Record<string, unknown>);
  }
  return {
    code,
    language: jsonLanguage(o.language),
    version: intField(o, 'version', offset, false),
    opaque: intField(o, 'opaque', offset, false),
    flag: intField(o, 'flag', offset, false),
    remark: typeof o.remark === 'string' ? o.remark : o.remark == null ? null : String(o.remark),
    extFields,
    serializeType: 'JSON',
    body,
  };
}

/**
 * extFields with every value as a string (objects as JSON) and null/undefined dropped. A record
 * whose values are all strings already (JSON.parse's on every decoded frame, a typed header's
 * encode() on every request) is returned as is, not copied.
 */
export function stringFields(ext: Record<string, unknown>): Record<string, string> {
  let allStrings = true;
  for (const k in ext) {
    if (typeof ext[k] !== 'string') {
      allStrings = false;
      break;
    }
  }
  if (allStrings) return ext as Record<string, string>;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(ext)) {
    if (v == null) continue;
    putField(out, k, typeof v === 'string' ? v : typeof v === 'object' ? JSON.stringify(v) : String(v));
  }
  return out;
}

/**
 * As Java reads `language`: absent means JAVA (the field's initial value); a name or an ordinal
 * (fastjson reads enums both ways, and LanguageCode's ordinals are its codes) that LanguageCode
 * does not know becomes null.
 */
function jsonLanguage(v: unknown): string | null {
  if (v === undefined) return 'JAVA';
  if (typeof v === 'string') return Object.hasOwn(LanguageCode, v) ? v : null;
  if (typeof v === 'number') return languageName(v);
  return null;
}

function intField(o: Record<string, unknown>, name: string, offset: number, required: boolean): number {
  const v = o[name];
  if (v == null) {
    if (required) throw new ProtocolError(`JSON header has no "${name}"`, offset);
    return 0;
  }
  // fastjson also fills an int field from a string of digits, so a peer may send "code":"11".
  const n = typeof v === 'string' && /^-?\d{1,10}$/.test(v) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < -2147483648 || n > 2147483647) {
    throw new ProtocolError(`JSON header field "${name}" is not an int32: ${JSON.stringify(v)}`, offset);
  }
  return n;
}
