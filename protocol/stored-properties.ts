import { MAX_PROPERTIES_ENTRIES } from './properties.js';

/**
 * A message's properties string read and extended where it lies, without building the object
 * decodeProperties makes: a broker stores what a producer sent plus a few names of its own, and
 * needs only a handful of values (TAGS, KEYS, DELAY, …) to do so.
 */

const NAME_VALUE = 0x01;
const SEPARATOR = 0x02;

/**
 * The value decodeProperties(text)[name] would give, found in place: the last well-formed
 * `name\u0001value` segment (a later duplicate wins, an empty value is no value). `name` holds
 * neither separator.
 */
export function readProperty(text: string, name: string): string | undefined {
  const n = name.length;
  let found: string | undefined;
  let from = 0;
  for (;;) {
    const at = text.indexOf(name, from);
    if (at < 0) return found;
    from = at + 1;
    if (at > 0 && text.charCodeAt(at - 1) !== SEPARATOR) continue;
    if (text.charCodeAt(at + n) !== NAME_VALUE) continue;
    let end = text.indexOf('\u0002', at + n + 1);
    if (end < 0) end = text.length;
    if (end > at + n + 1) found = text.slice(at + n + 1, end);
    from = end;
  }
}

/** A name encodeProperties writes where it was put (not one an object sorts first, not `__proto__`). */
function plainName(s: string, from: number, to: number): boolean {
  if (to <= from) return false;
  const c = s.charCodeAt(from);
  // integer-like keys ("7") come first in an object's key order whatever their place in the string
  if (c >= 0x30 && c <= 0x39) return false;
  return !(to - from === 9 && s.startsWith('__proto__', from));
}

const starts: number[] = [];
const ends: number[] = [];

function sameRange(s: string, a: number, b: number, len: number): boolean {
  for (let i = 0; i < len; i++) if (s.charCodeAt(a + i) !== s.charCodeAt(b + i)) return false;
  return true;
}

/**
 * What encodeProperties writes for the object decodeProperties(`text`) gives once each of `adds`
 * is assigned to it in order (a name already there keeps its place), computed without decoding:
 * `text` (less one trailing separator) followed by the added names that were not there yet.
 * Undefined when `text` is not already in the form encodeProperties writes (a segment decoding
 * drops, a name twice, a name an object would reorder, too many entries), or an added name is there
 * with another value: the caller decodes and encodes instead.
 */
export function appendProperties(text: string, adds: readonly (readonly [string, string])[]): string | undefined {
  let s = text;
  if (s.length > 0 && s.charCodeAt(s.length - 1) === SEPARATOR) s = s.slice(0, -1);
  // name ranges [start, end) of every segment (reused: one call at a time)
  starts.length = 0;
  ends.length = 0;
  let index = 0;
  const len = s.length;
  while (index < len) {
    let next = s.indexOf('\u0002', index);
    if (next < 0) next = len;
    if (next - index < 3) return undefined;
    const kv = s.indexOf('\u0001', index);
    if (kv <= index || kv >= next - 1) return undefined;
    if (!plainName(s, index, kv)) return undefined;
    const nameLen = kv - index;
    for (let j = 0; j < starts.length; j++) {
      if (ends[j]! - starts[j]! === nameLen && sameRange(s, starts[j]!, index, nameLen)) return undefined;
    }
    if (starts.length >= MAX_PROPERTIES_ENTRIES) return undefined;
    starts.push(index);
    ends.push(kv);
    index = next + 1;
  }
  let tail = '';
  const added: (readonly [string, string])[] = [];
  outer: for (const add of adds) {
    const [name, value] = add;
    if (!plainName(name, 0, name.length) || name.includes('\u0001') || name.includes('\u0002')) return undefined;
    for (let j = 0; j < starts.length; j++) {
      const st = starts[j]!;
      if (ends[j]! - st !== name.length || !s.startsWith(name, st)) continue;
      let end = s.indexOf('\u0002', ends[j]! + 1);
      if (end < 0) end = len;
      if (end - ends[j]! - 1 === value.length && s.startsWith(value, ends[j]! + 1)) continue outer;
      return undefined;
    }
    for (const a of added) {
      if (a[0] !== name) continue;
      if (a[1] === value) continue outer;
      return undefined;
    }
    added.push(add);
    tail += (tail.length > 0 || s.length > 0 ? '\u0002' : '') + name + '\u0001' + value;
  }
  return s + tail;
}
