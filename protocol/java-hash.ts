/**
 * Java's String.hashCode(): h = 31*h + c over UTF-16 code units, in int32 arithmetic.
 * Used for tag codes (consume-queue filtering) and to reproduce HashMap iteration order.
 */
export function javaStringHash(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(31, h) + s.charCodeAt(i)) | 0;
  return h;
}

/**
 * The order in which a java.util.HashMap<String, ?> filled by `put` in the order of `keys` iterates
 * its entries. fastjson writes a HashMap in that order, so this is what makes our JSON headers
 * byte-identical to Java's `extFields`. Buckets are visited by index; inside a bucket the insertion
 * order holds (resizes split buckets preserving relative order). Tree bins (8+ colliding keys in a
 * 64+ table) would differ, which never happens with header-sized maps.
 *
 * `initialCapacity` is the argument of the Java constructor: 16 for `new HashMap<>()` (what
 * `makeCustomHeaderToNet` creates in 4.9 and 5.x, and `addExtField` in 4.9), 256 for the
 * `new HashMap<>(256)` that 5.x's `addExtField` creates. The bucket count is the next power of two,
 * doubled while the map holds more than 3/4 of it.
 */
export function javaHashMapOrder(keys: readonly string[], initialCapacity = 16): string[] {
  return javaHashMapOrderShared(keys, initialCapacity).slice();
}

// Headers of one request type always have the same keys in the same insertion order, so the order
// is computed once per key list (it showed at ~1 % of a consumer's and a broker's CPU, once per
// frame). Bounded: cleared when full, since ext fields may carry arbitrary user keys. The joined
// text is only a lookup hint (a key may itself contain the separator): a hit counts only when the
// stored key list equals the given one.
const ORDER_CACHE = new Map<string, { keys: readonly string[]; order: readonly string[] }>();
const ORDER_CACHE_MAX = 512;

// The last few key lists, looked up before the map: a process sends a handful of header kinds
// (pull, send, heartbeat…), and comparing a key list element by element (property names are
// interned strings) costs a few nanoseconds where joining it into a map key cost over a
// microsecond, about a quarter of a JSON header's encoding.
const RECENT_MAX = 16;
const recent: Array<{ keys: readonly string[]; capacity: number; order: readonly string[] }> = [];

/** javaHashMapOrder, cached by key list: the returned array is shared and must not be modified. */
export function javaHashMapOrderShared(keys: readonly string[], initialCapacity = 16): readonly string[] {
  for (let i = 0; i < recent.length; i++) {
    const r = recent[i]!;
    if (r.capacity === initialCapacity && sameKeys(r.keys, keys)) return r.order;
  }
  const order = javaHashMapOrderMapped(keys, initialCapacity);
  if (recent.length >= RECENT_MAX) recent.pop();
  recent.unshift({ keys: keys.slice(), capacity: initialCapacity, order });
  return order;
}

function javaHashMapOrderMapped(keys: readonly string[], initialCapacity: number): readonly string[] {
  const id = initialCapacity + '\u0000' + keys.join('\u0000');
  const hit = ORDER_CACHE.get(id);
  if (hit !== undefined && sameKeys(hit.keys, keys)) return hit.order;
  const order = computeOrder(keys, initialCapacity);
  if (ORDER_CACHE.size >= ORDER_CACHE_MAX) ORDER_CACHE.clear();
  ORDER_CACHE.set(id, { keys: keys.slice(), order });
  return order;
}

function sameKeys(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function computeOrder(keys: readonly string[], initialCapacity: number): string[] {
  let cap = 1;
  while (cap < initialCapacity && cap < 1 << 30) cap *= 2;
  while (keys.length > cap * 0.75) cap *= 2;
  const mask = cap - 1;
  const withIndex = keys.map((k, i) => {
    const h = javaStringHash(k);
    return { k, i, b: (h ^ (h >>> 16)) & mask };
  });
  withIndex.sort((a, b) => a.b - b.b || a.i - b.i);
  return withIndex.map((e) => e.k);
}
