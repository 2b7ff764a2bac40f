/**
 * The calls in flight on one connection by opaque, in two parallel arrays ordered by opaque (opaques
 * grow, so a call is almost always appended), found by binary search; an answered call leaves a
 * hole that the head and tail skip, and holes are compacted away once they are the majority.
 *
 * Why not a Map: a Map whose entries come and go (one per request) rebuilds its hash table every
 * few requests, and V8 links each retired table to its successor. Once one table has reached the
 * old generation (a connection idle while the process was busy, as under flow control), every
 * later table, and every call it held, is kept alive by its dead predecessor until the next
 * mark-compact, which promotes the current one again: the chain never ends, and the process runs
 * a mark-compact every second or two at a steady rate. Arrays have no such link.
 */
export class PendingTable<T extends { opaque: number }> {
  private opaques: number[] = [];
  private items: (T | undefined)[] = [];
  private head = 0;
  private live = 0;

  get size(): number {
    return this.live;
  }

  get(opaque: number): T | undefined {
    const i = this.search(opaque);
    return i < this.opaques.length && this.opaques[i] === opaque ? this.items[i] : undefined;
  }

  has(opaque: number): boolean {
    return this.get(opaque) !== undefined;
  }

  /** Adds `item` under its opaque, replacing a call already there with that opaque. */
  set(item: T): void {
    const opaque = item.opaque;
    const n = this.opaques.length;
    if (n === this.head || opaque > this.opaques[n - 1]!) {
      this.opaques.push(opaque);
      this.items.push(item);
      this.live++;
      return;
    }
    const i = this.search(opaque);
    if (i < n && this.opaques[i] === opaque) {
      if (this.items[i] === undefined) this.live++;
      this.items[i] = item;
      return;
    }
    this.opaques.splice(i, 0, opaque);
    this.items.splice(i, 0, item);
    this.live++;
  }

  /** Removes the call with this opaque; true when there was one. */
  delete(opaque: number): boolean {
    const i = this.search(opaque);
    if (i >= this.opaques.length || this.opaques[i] !== opaque || this.items[i] === undefined) return false;
    this.items[i] = undefined;
    this.live--;
    if (this.live === 0) {
      this.clear();
      return true;
    }
    if (i === this.head) {
      let h = i + 1;
      while (this.items[h] === undefined) h++;
      this.head = h;
    }
    let n = this.opaques.length;
    if (i === n - 1) {
      while (this.items[n - 1] === undefined) n--;
      this.opaques.length = n;
      this.items.length = n;
    }
    if (this.opaques.length - this.head - this.live > 64 && this.opaques.length - this.head > this.live * 2)
      this.compact();
    return true;
  }

  /** The calls in opaque order (a copy: deleting while iterating is safe). */
  values(): T[] {
    const out: T[] = [];
    for (let i = this.head; i < this.items.length; i++) {
      const item = this.items[i];
      if (item !== undefined) out.push(item);
    }
    return out;
  }

  clear(): void {
    this.opaques = [];
    this.items = [];
    this.head = 0;
    this.live = 0;
  }

  private compact(): void {
    const opaques: number[] = [];
    const items: T[] = [];
    for (let i = this.head; i < this.items.length; i++) {
      const item = this.items[i];
      if (item !== undefined) {
        opaques.push(this.opaques[i]!);
        items.push(item);
      }
    }
    this.opaques = opaques;
    this.items = items;
    this.head = 0;
  }

  /** First index at or after the head whose opaque is >= `opaque`. */
  private search(opaque: number): number {
    let lo = this.head;
    let hi = this.opaques.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.opaques[mid]! < opaque) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
