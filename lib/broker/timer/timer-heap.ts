/**
 * A min-max heap of timer keys (delivery time, timer-queue offset), ordered by time and then by
 * offset, so timers due on the same millisecond keep their store order. Both ends are O(log n):
 * the store delivers from the minimum and, when the heap is at its cap, evicts the maximum (the
 * evicted timer stays in the timer queue and is read back later). Keys live in two Float64Arrays
 * (16 bytes per timer, no object per timer); both fields are integers below 2^53.
 *
 * Levels alternate: even depths hold a minimum of their subtree, odd depths a maximum
 * (Atkinson, Sack, Santoro, Strothotte, "Min-max heaps and generalized priority queues", 1986).
 */
export class TimerHeap {
  private at: Float64Array;
  private off: Float64Array;
  private n = 0;
  /** Elements moved (swaps and placements) since creation: the cost counter the tests bound. */
  moves = 0;

  constructor(initialCapacity = 1024) {
    const c = Math.max(4, initialCapacity);
    this.at = new Float64Array(c);
    this.off = new Float64Array(c);
  }

  get size(): number {
    return this.n;
  }

  /** Bytes held by the key arrays (what the heap costs, whatever it holds). */
  get capacityBytes(): number {
    return this.at.byteLength + this.off.byteLength;
  }

  minAt(): number {
    return this.at[0]!;
  }
  minOffset(): number {
    return this.off[0]!;
  }
  /** Index of the maximum (the heap must not be empty). */
  private maxIndex(): number {
    if (this.n === 1) return 0;
    if (this.n === 2) return 1;
    return this.less(1, 2) ? 2 : 1;
  }
  maxAt(): number {
    return this.at[this.maxIndex()]!;
  }
  maxOffset(): number {
    return this.off[this.maxIndex()]!;
  }

  push(at: number, offset: number): void {
    if (this.n === this.at.length) this.grow();
    const i = this.n++;
    this.at[i] = at;
    this.off[i] = offset;
    this.moves++;
    this.pushUp(i);
  }

  /** Remove the minimum (the heap must not be empty). */
  popMin(): void {
    this.removeAt(0);
  }

  /** Remove the maximum (the heap must not be empty). */
  popMax(): void {
    this.removeAt(this.maxIndex());
  }

  /** Shrink the arrays back when they are mostly empty (after a drain), keeping `keep` slots. */
  trim(keep: number): void {
    const c = Math.max(4, keep, this.n);
    if (this.at.length <= c * 2) return;
    this.at = this.at.slice(0, c);
    this.off = this.off.slice(0, c);
  }

  private grow(): void {
    const c = this.at.length * 2;
    const at = new Float64Array(c);
    const off = new Float64Array(c);
    at.set(this.at);
    off.set(this.off);
    this.at = at;
    this.off = off;
  }

  private removeAt(i: number): void {
    const last = --this.n;
    if (i === last) return;
    this.at[i] = this.at[last]!;
    this.off[i] = this.off[last]!;
    this.moves++;
    if (isMinLevel(i)) this.pushDownMin(i);
    else this.pushDownMax(i);
  }

  private less(i: number, j: number): boolean {
    const a = this.at[i]!;
    const b = this.at[j]!;
    return a < b || (a === b && this.off[i]! < this.off[j]!);
  }

  private swap(i: number, j: number): void {
    const a = this.at[i]!;
    this.at[i] = this.at[j]!;
    this.at[j] = a;
    const o = this.off[i]!;
    this.off[i] = this.off[j]!;
    this.off[j] = o;
    this.moves++;
  }

  private pushUp(i: number): void {
    if (i === 0) return;
    const p = (i - 1) >> 1;
    if (isMinLevel(i)) {
      if (this.less(p, i)) {
        this.swap(i, p);
        this.pushUpBy(p, false);
      } else this.pushUpBy(i, true);
    } else if (this.less(i, p)) {
      this.swap(i, p);
      this.pushUpBy(p, true);
    } else this.pushUpBy(i, false);
  }

  /** Move i up through its grandparents while it is smaller (min) or larger (max) than them. */
  private pushUpBy(i: number, min: boolean): void {
    while (i > 2) {
      const g = (((i - 1) >> 1) - 1) >> 1;
      if (min ? this.less(i, g) : this.less(g, i)) {
        this.swap(i, g);
        i = g;
      } else return;
    }
  }

  private pushDownMin(i: number): void {
    for (;;) {
      const m = this.extremeBelow(i, true);
      if (m < 0) return;
      if (m > 2 * i + 2) {
        // a grandchild
        if (!this.less(m, i)) return;
        this.swap(m, i);
        const p = (m - 1) >> 1;
        if (this.less(p, m)) this.swap(m, p);
        i = m;
      } else {
        if (this.less(m, i)) this.swap(m, i);
        return;
      }
    }
  }

  private pushDownMax(i: number): void {
    for (;;) {
      const m = this.extremeBelow(i, false);
      if (m < 0) return;
      if (m > 2 * i + 2) {
        if (!this.less(i, m)) return;
        this.swap(m, i);
        const p = (m - 1) >> 1;
        if (this.less(m, p)) this.swap(m, p);
        i = m;
      } else {
        if (this.less(i, m)) this.swap(m, i);
        return;
      }
    }
  }

  /** The smallest (min) or largest of i's children and grandchildren; -1 when it has none. */
  private extremeBelow(i: number, min: boolean): number {
    const c = 2 * i + 1;
    if (c >= this.n) return -1;
    let m = c;
    if (c + 1 < this.n && (min ? this.less(c + 1, m) : this.less(m, c + 1))) m = c + 1;
    // the grandchildren are 2c+1 … 2c+4, contiguous
    const end = Math.min(this.n, 2 * c + 5);
    for (let k = 2 * c + 1; k < end; k++) if (min ? this.less(k, m) : this.less(m, k)) m = k;
    return m;
  }
}

function isMinLevel(i: number): boolean {
  // depth of index i is floor(log2(i + 1)); even depths are min levels
  return ((31 - Math.clz32(i + 1)) & 1) === 0;
}
