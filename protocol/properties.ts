import { PropertiesLimitError } from './errors.js';
import { javaHashMapOrder } from './java-hash.js';
import { putOwn } from './own-key.js';

/**
 * The properties string of a message
 * (docs/protocol-facts.md#properties-string): `name \u0001 value \u0002 name \u0001 value …`.
 * 4.9.0–4.9.3 and 5.2.0+ end it with a `\u0002`, 4.9.4–5.1.4 do not; both parse the same.
 */
const NAME_VALUE = '\u0001';
const SEPARATOR = '\u0002';

/** Largest properties string a broker accepts: it is stored behind a signed int16 length. */
export const MAX_PROPERTIES_BYTES = 32767;

/**
 * Default of decodeProperties' `maxEntries`: twice what a stored properties string can hold (at
 * most 32 767 bytes, 4 per shortest entry "a\u0001b\u0002": 8 191), so every message a broker can
 * store decodes, while a properties string in a header (a pushed reply's, up to a 16 MiB frame)
 * cannot make millions of entries.
 */
export const MAX_PROPERTIES_ENTRIES = 16_384;

/** How encodeProperties writes a message's properties string (name\u0001value\u0002…). */
export interface EncodePropertiesOptions {
  /**
   * End with `\u0002` (4.9.0–4.9.3, 5.2.0+).
   * @default false (like 4.9.8, whose version we announce)
   */
  trailingSeparator?: boolean;
  /**
   * Write the names in the order a java.util.HashMap filled in the object's key order iterates
   * them, as Java's messageProperties2String does (a broker re-encodes properties this way).
   * @default false (the object's own key order)
   */
  javaOrder?: boolean;
}

/** Encode in the object's key order; null/undefined values are skipped like Java's. */
export function encodeProperties(
  props: Readonly<Record<string, string | null | undefined>>,
  options?: EncodePropertiesOptions,
): string {
  let s = '';
  if (options?.javaOrder) {
    for (const k of javaHashMapOrder(Object.keys(props).filter((k) => props[k] != null))) {
      s += k + NAME_VALUE + props[k] + SEPARATOR;
    }
  } else {
    for (const k in props) {
      const v = props[k];
      if (v == null) continue;
      s += k + NAME_VALUE + v + SEPARATOR;
    }
  }
  if (s.length > 0 && !options?.trailingSeparator) s = s.slice(0, -1);
  return s;
}

// Property names that nearly every message carries. Reusing these (internalized) strings instead
// of slicing a fresh name per property saves an allocation and a string-table lookup on the hot
// path of decodeMessages; any other name is sliced as usual.
const COMMON_NAMES = [
  'TAGS',
  'KEYS',
  'UNIQ_KEY',
  'WAIT',
  'CLUSTER',
  'DELAY',
  'RETRY_TOPIC',
  'REAL_TOPIC',
  'REAL_QID',
  'MIN_OFFSET',
  'MAX_OFFSET',
  'ORIGIN_MESSAGE_ID',
  'RECONSUME_TIME',
  'MAX_RECONSUME_TIMES',
  'TRAN_MSG',
  'PGROUP',
  'MSG_REGION',
  'TRACE_ON',
  'CONSUME_START_TIME',
  '__transactionId__',
];
const NAMES_BY_FIRST: (string[] | undefined)[] = [];
for (const n of COMMON_NAMES) (NAMES_BY_FIRST[n.charCodeAt(0)] ??= []).push(n);

/**
 * Java's MessageDecoder.string2messageProperties: split on \u0002; keep a segment only when it
 * has at least 3 characters and its first \u0001 is neither first nor last (empty names and empty
 * values are dropped); the value is everything after the first \u0001; a later duplicate wins.
 * More than `maxEntries` entries (default MAX_PROPERTIES_ENTRIES) is a PropertiesLimitError.
 */
export function decodeProperties(s: string, options?: { maxEntries?: number }): Record<string, string> {
  const out: Record<string, string> = {};
  const len = s.length;
  const maxEntries = options?.maxEntries ?? MAX_PROPERTIES_ENTRIES;
  let entries = 0;
  let index = 0;
  while (index < len) {
    let next = s.indexOf(SEPARATOR, index);
    if (next < 0) next = len;
    if (next - index >= 3) {
      if (++entries > maxEntries) throw new PropertiesLimitError(maxEntries, len);
      const kv = s.indexOf(NAME_VALUE, index);
      if (kv > index && kv < next - 1) {
        let name: string | undefined;
        const candidates = NAMES_BY_FIRST[s.charCodeAt(index)];
        if (candidates !== undefined) {
          for (let j = 0; j < candidates.length; j++) {
            const c = candidates[j]!;
            if (c.length === kv - index && s.startsWith(c, index)) {
              name = c;
              break;
            }
          }
        }
        if (name !== undefined) out[name] = s.slice(kv + 1, next);
        else setProperty(out, s.slice(index, kv), s.slice(kv + 1, next));
      }
    }
    index = next + 1;
  }
  return out;
}

/** Assign without letting a property named `__proto__` replace the object's prototype (see putOwn). */
export const setProperty: (target: Record<string, string>, name: string, value: string) => void = putOwn;
