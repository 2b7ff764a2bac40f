import { fastjsonString } from '../header-json.js';

/** How toJavaJson writes number map keys and non-ASCII characters. */
export interface JavaJsonOptions {
  /**
   * Write number map keys unquoted, as plain fastjson does.
   * @default false (standard JSON)
   */
  nonStandard?: boolean;
  /**
   * Escape non-ASCII characters as \uXXXX (fastjson BrowserCompatible).
   * @default false
   */
  escapeNonAscii?: boolean;
}

/**
 * A JSON writer that produces what fastjson produces for RocketMQ's bodies: object keys sorted
 * (Java bean fields are written alphabetically; String.compareTo order = JS default sort),
 * nulls/undefined omitted from objects, enums as names, empty collections as [] / {}.
 *
 * Map keys: a JS `Map` keeps its key types. With `nonStandard: true` (what plain fastjson writes
 * for ClusterInfo, consumerOffset.json, ResetOffsetBody, running info) number keys are written
 * unquoted (`{0:"addr"}`); object keys are always written as objects (`{{"brokerName":…}:5}`),
 * the only form Java reads back. Keys of a Map are sorted (numerically for numbers).
 */
export function toJavaJson(value: unknown, options: JavaJsonOptions = {}): string {
  return write(value, options.nonStandard === true, options.escapeNonAscii === true);
}

function str(s: string, ascii: boolean): string {
  const q = fastjsonString(s);
  if (!ascii) return q;
  return q.replace(/[^\u0000-\u007f]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0'));
}

function write(v: unknown, ns: boolean, ascii: boolean): string {
  switch (typeof v) {
    case 'string':
      return str(v, ascii);
    case 'number':
      return Number.isFinite(v) ? String(v) : 'null';
    case 'bigint':
      return v.toString();
    case 'boolean':
      return v ? 'true' : 'false';
    case 'undefined':
    case 'function':
    case 'symbol':
      return 'null';
  }
  if (v === null) return 'null';
  if (Array.isArray(v) || v instanceof Set) {
    let s = '[';
    let first = true;
    for (const e of v as Iterable<unknown>) {
      if (!first) s += ',';
      first = false;
      s += write(e, ns, ascii);
    }
    return s + ']';
  }
  if (Buffer.isBuffer(v) || v instanceof Uint8Array) {
    return '"' + Buffer.from(v.buffer, v.byteOffset, v.length).toString('base64') + '"';
  }
  if (v instanceof Map) {
    const entries = [...v.entries()].filter(([, x]) => x != null);
    entries.sort((a, b) => compareKeys(a[0], b[0]));
    let s = '{';
    let first = true;
    for (const [k, x] of entries) {
      if (!first) s += ',';
      first = false;
      s += writeKey(k, ns, ascii) + ':' + write(x, ns, ascii);
    }
    return s + '}';
  }
  const toJSON = (v as { toJSON?: () => unknown }).toJSON;
  if (typeof toJSON === 'function') return write(toJSON.call(v), ns, ascii);
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o).sort();
  let s = '{';
  let first = true;
  for (const k of keys) {
    const x = o[k];
    if (x == null || typeof x === 'function') continue;
    if (!first) s += ',';
    first = false;
    s += str(k, ascii) + ':' + write(x, ns, ascii);
  }
  return s + '}';
}

function writeKey(k: unknown, ns: boolean, ascii: boolean): string {
  if (typeof k === 'number' || typeof k === 'bigint') return ns ? String(k) : '"' + String(k) + '"';
  if (typeof k === 'string') return str(k, ascii);
  if (k !== null && typeof k === 'object') return write(k, ns, ascii);
  return str(String(k), ascii);
}

function compareKeys(a: unknown, b: unknown): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  const x = typeof a === 'object' && a !== null ? toJavaJson(a) : String(a);
  const y = typeof b === 'object' && b !== null ? toJavaJson(b) : String(b);
  return x < y ? -1 : x > y ? 1 : 0;
}
