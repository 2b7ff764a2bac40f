/**
 * The queue offset for a timestamp, by binary search over the store times of [min, max) (`at`).
 * `boundary` undefined = 4.9 (nearest store time, exact match wins); 'LOWER' = 5.x first offset with
 * store time ≥ ts (max if none); 'UPPER' = 5.x last offset with store time ≤ ts.
 */
export function offsetByTime(
  min: number,
  max: number,
  at: (offset: number) => number,
  ts: number,
  boundary?: 'LOWER' | 'UPPER',
): number {
  // first offset with store time >= ts
  let lo = min;
  let hi = max;
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    if (at(mid) >= ts) hi = mid;
    else lo = mid + 1;
  }
  const firstGe = lo;
  if (boundary === 'LOWER') return firstGe;
  // last offset with store time <= ts
  let lo2 = min;
  let hi2 = max;
  while (lo2 < hi2) {
    const mid = Math.floor((lo2 + hi2) / 2);
    if (at(mid) > ts) hi2 = mid;
    else lo2 = mid + 1;
  }
  const lastLe = lo2 - 1;
  if (boundary === 'UPPER') return Math.max(min, lastLe);
  if (firstGe < max && at(firstGe) === ts) return firstGe;
  if (lastLe < min) return firstGe < max ? firstGe : 0;
  if (firstGe >= max) return lastLe;
  return ts - at(lastLe) <= at(firstGe) - ts ? lastLe : firstGe;
}
