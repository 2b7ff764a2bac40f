import * as path from 'node:path';
import createDebug from '../../debug.js';
import { decodeMessage } from '../../../protocol/internal.js';
import type { Clock, ClockTimer } from '../../clock.js';
import { loadConfigFile, stderrWarn, writeFileAtomic, type StoreWarn } from '../atomic-file.js';
import { StoreFileFormatError } from '../errors.js';
import { unparked } from '../message-record.js';
import type { MessageStore } from '../message-store.js';
import { TimerHeap } from './timer-heap.js';
import { DEFAULT_TIMER_DELIVER_PER_TICK, DEFAULT_TIMER_MAX_IN_MEMORY, TIMER_TOPIC } from './timer-send-rules.js';

export {
  TIMER_TOPIC,
  resolveTimerSettings,
  timerTagsCode,
  transformTimerMessage,
  type TimerRefusal,
  type TimerSettings,
} from './timer-send-rules.js';

const log = createDebug('rocketwire:broker');

/**
 * The checkpoint of config/timerCheck.json. A timer is delivered when its queue offset is below
 * `deliveredBelow`, when it is listed in `delivered` (the list of the earlier format: a later
 * offset may fall due earlier; no longer written to, only kept until it is covered), or when its key
 * (delivery time, offset) is at most `deliveredUpTo`: timers are delivered in key order, so one key
 * says what was delivered however the times and offsets interleave.
 */
interface TimerCheckpoint {
  deliveredBelow: number;
  delivered: number[];
  deliveredUpTo: [number, number] | null;
  /** Delete keys (`topic+uniqKey`) of recalled timers whose delete marker is not delivered yet. */
  recalled?: string[];
}

function decodeCheckpoint(text: string): TimerCheckpoint {
  const j = JSON.parse(text) as Partial<TimerCheckpoint>;
  if (
    !Number.isSafeInteger(j.deliveredBelow) ||
    !Array.isArray(j.delivered) ||
    !j.delivered.every((n) => Number.isSafeInteger(n))
  ) {
    throw new StoreFileFormatError('not a timer checkpoint');
  }
  const upTo = j.deliveredUpTo ?? null;
  if (upTo !== null && !(Array.isArray(upTo) && upTo.length === 2 && upTo.every((n) => Number.isSafeInteger(n))))
    throw new StoreFileFormatError('not a timer checkpoint');
  const recalled = j.recalled ?? [];
  if (!Array.isArray(recalled) || !recalled.every((k) => typeof k === 'string'))
    throw new StoreFileFormatError('not a timer checkpoint');
  return { deliveredBelow: j.deliveredBelow!, delivered: j.delivered, deliveredUpTo: upTo, recalled };
}

/**
 * The delay of a clock timer that wakes up at or before `ms` from now: the largest power of two not
 * above it. Node keeps a timer list per distinct duration ever used, and its table of lists does not
 * shrink: one exact delay per timer message cost 160 bytes of heap each, for good (measured with
 * 200 000 descending times). Powers of two use at most 32 durations; the store wakes up log2(delay)
 * times for its earliest timer, re-arming each time, and one new timer that falls due before the
 * armed wake-up does not re-arm at all.
 */
export function wakeDelay(ms: number): number {
  if (!(ms > 1)) return Math.max(0, ms || 0);
  return 2 ** Math.floor(Math.log2(ms));
}

/** Timer-queue entries read per turn of the event loop when the store looks for timers to hold. */
const SCAN_PER_TICK = 8192;
/** How often the checkpoint is written while a burst of deliveries goes on. */
const PERSIST_EVERY_MS = 100;
/** Offsets that advanceDeliveredBelow steps over per checkpoint. */
const ADVANCE_PER_PERSIST = 65_536;

/** (at, offset) < (bAt, bOff): delivery time first, then store order. */
function lt(at: number, off: number, bAt: number, bOff: number): boolean {
  return at < bAt || (at === bAt && off < bOff);
}

/** A pass over the timer queue from `next` to `end` that offers the timers at or after `from` to the heap. */
interface Scan {
  next: number;
  end: number;
  fromAt: number;
  fromOff: number;
  /** The start-up pass also counts the pending timers. */
  initial: boolean;
}

/** What the timer store holds and has done: counts for tests, stats and the hostile bench. */
export interface TimerStoreStats {
  /** Timers not yet delivered (counted from the timer queue). */
  pending: number;
  /** Timers held in memory now (≤ maxInMemory). */
  held: number;
  /** Most timers held at once since start. */
  heldPeak: number;
  maxInMemory: number;
  /** Passes over the timer queue to read back timers that were not held (the start-up pass included). */
  scans: number;
  /** Timer-queue entries read by those passes. */
  scannedEntries: number;
  /** Timers dropped from memory because the cap was reached (read back later). */
  evicted: number;
  /** Heap elements moved by inserts and removals (O(log n) each). */
  heapMoves: number;
  delivered: number;
  /** Most timers delivered in one turn of the event loop. */
  deliveredPerTickPeak: number;
}

/**
 * The embedded broker's TimerMessageStore. Messages parked on rmq_sys_wheel_timer queue 0 (their
 * consume-queue tag code is TIMER_OUT_MS) wait in delivery order; one clock timer waits for the
 * earliest, and when it falls due each due message is re-written to REAL_TOPIC / REAL_QID with
 * REAL_* removed and TIMER_ENQUEUE_MS / TIMER_DEQUEUE_MS added (TimerMessageStore#convert).
 *
 * Memory is bounded: a min-max heap (timer-heap.ts) holds at most `timerMaxInMemory` keys, the
 * earliest ones. Every undelivered timer whose key is below `bound` is held; when the heap is full
 * the largest key is dropped and `bound` falls to it. The timer queue itself is the durable record
 * (its entries carry the delivery time), so a timer not held is read back by a pass over the queue
 * when the heap drains below half the cap, a bounded number of entries per turn of the event loop,
 * as Java's roll re-reads what lies beyond its wheel. While a pass runs, only keys below `ready`
 * (the bound when it started) are delivered, so delivery stays in key order. Delivery is bounded
 * per turn as well (`timerDeliverPerTick`). The checkpoint is the largest key delivered, written
 * after each round: a restart re-reads the queue and delivers every later key (a message delivered
 * just before a crash, before the checkpoint was written, may come twice, as with Java's wheel).
 */
export class TimerMessageStore {
  private readonly file: string;
  private readonly maxInMemory: number;
  private readonly deliverPerTick: number;
  private readonly heap: TimerHeap;
  /** Every timer-queue offset below this one is delivered. */
  private deliveredBelow = 0;
  /** Offsets listed as delivered by a checkpoint of the old format (kept until covered). */
  private legacy = new Set<number>();
  /** `legacy` sorted, as the checkpoint writes it. */
  private legacyList: number[] = [];
  /** The largest key delivered: every timer with a key up to it is delivered. */
  private kAt = -Infinity;
  private kOff = -1;
  /** Every undelivered timer with a key below this one is in the heap (Infinity: all are). */
  private bAt = Infinity;
  private bOff = 0;
  /** Keys below this one may be delivered (below `bound` while a pass reads timers back). */
  private rAt = Infinity;
  private rOff = 0;
  private scan: Scan | null = null;
  /** Timer-queue offsets below this one have been looked at (held, not held, or delivered). */
  private scanned = 0;
  private timer: ClockTimer | null = null;
  private wakeAt = Infinity;
  private running = false;
  private dirty = false;
  private persistedAt = -Infinity;
  private loaded = false;
  private closed = false;
  /** Recalled timers by delete key (`realTopic+uniqKey`), until their delete marker comes due. */
  private readonly recalled = new Set<string>();
  private readonly counts = {
    pending: 0,
    heldPeak: 0,
    scans: 0,
    scannedEntries: 0,
    evicted: 0,
    delivered: 0,
    deliveredPerTickPeak: 0,
  };

  constructor(
    private readonly store: MessageStore,
    private readonly clock: Clock,
    storeDir: string,
    private readonly warn: StoreWarn = stderrWarn,
    limits: { timerMaxInMemory?: number; timerDeliverPerTick?: number } = {},
  ) {
    this.file = path.join(storeDir, 'config', 'timerCheck.json');
    this.maxInMemory = Math.max(1, limits.timerMaxInMemory ?? DEFAULT_TIMER_MAX_IN_MEMORY);
    this.deliverPerTick = Math.max(1, limits.timerDeliverPerTick ?? DEFAULT_TIMER_DELIVER_PER_TICK);
    this.heap = new TimerHeap(Math.min(this.maxInMemory, 1024));
  }

  /** Read the checkpoint (or its .bak); throws ConfigFileError when neither can be read. */
  load(): void {
    const cp = loadConfigFile(this.file, decodeCheckpoint, this.warn);
    if (cp) {
      this.deliveredBelow = cp.deliveredBelow;
      for (const o of cp.delivered) if (o >= cp.deliveredBelow) this.legacy.add(o);
      this.legacyList = [...this.legacy].sort((a, b) => a - b);
      if (cp.deliveredUpTo) [this.kAt, this.kOff] = cp.deliveredUpTo;
      for (const k of cp.recalled ?? []) this.recalled.add(k);
    }
    this.scanned = this.deliveredBelow;
    this.loaded = true;
  }

  /** Start: one pass over the queue from the checkpoint finds the pending timers, then delivery runs. */
  start(): void {
    if (!this.loaded) this.load();
    const cq = this.store.queue(TIMER_TOPIC, 0);
    const end = cq?.maxOffset ?? 0;
    this.scanned = Math.max(this.scanned, end);
    // nothing is delivered before the pass has seen every timer after the checkpoint
    this.rAt = this.kAt;
    this.rOff = this.kOff + 1;
    this.scan = { next: this.deliveredBelow, end, fromAt: this.kAt, fromOff: this.kOff + 1, initial: true };
    this.run(true);
  }

  /** How many timer messages wait. */
  get waiting(): number {
    return this.counts.pending;
  }

  stats(): TimerStoreStats {
    return { ...this.counts, held: this.heap.size, maxInMemory: this.maxInMemory, heapMoves: this.heap.moves };
  }

  /**
   * RECALL_MESSAGE wrote a delete marker for `deleteKey` (`realTopic+uniqKey`): the timer it names
   * is dropped when it comes due. Java finds the marker in the same wheel slot; here the marker
   * falls due after the timer (its time is the timer's plus 1 ms), so the key is kept until then,
   * in the checkpoint written now, so that a restart still drops the timer.
   */
  recall(deleteKey: string): void {
    this.recalled.add(deleteKey);
    this.dirty = true;
    this.persist();
  }

  /** A message was written to the timer topic: index what is new and deliver what is due. */
  onArrival(): void {
    if (this.closed) return;
    this.indexArrivals();
    // a pass goes on in the store's own turns, not in the sender's
    this.run(false);
  }

  private indexArrivals(): void {
    const cq = this.store.queue(TIMER_TOPIC, 0);
    if (!cq) return;
    for (let o = Math.max(this.scanned, cq.minOffset); o < cq.maxOffset; o++) {
      if (cq.isHole(o)) continue;
      const at = cq.tagsCodeAt(o);
      this.counts.pending++;
      // a key at or below the delivered one (the clock went back): held whatever the bound, and
      // delivered at once (the broker's clock already passed its time)
      if (lt(at, o, this.bAt, this.bOff) || !lt(this.kAt, this.kOff, at, o)) this.offer(at, o);
    }
    this.scanned = Math.max(this.scanned, cq.maxOffset);
  }

  /** Hold a timer whose key is below the bound; at the cap the largest key is dropped and the bound falls to it. */
  private offer(at: number, off: number): void {
    const h = this.heap;
    if (h.size < this.maxInMemory) {
      h.push(at, off);
      if (h.size > this.counts.heldPeak) this.counts.heldPeak = h.size;
      return;
    }
    const mAt = h.maxAt();
    const mOff = h.maxOffset();
    if (lt(at, off, mAt, mOff)) {
      h.popMax();
      h.push(at, off);
      this.lowerBound(mAt, mOff);
    } else this.lowerBound(at, off);
    this.counts.evicted++;
  }

  private lowerBound(at: number, off: number): void {
    if (lt(at, off, this.bAt, this.bOff)) {
      this.bAt = at;
      this.bOff = off;
    }
    if (lt(at, off, this.rAt, this.rOff)) {
      this.rAt = at;
      this.rOff = off;
    }
  }

  /** One turn: a bounded part of a pass, a bounded number of deliveries, then the next wake-up. */
  private run(scanning: boolean): void {
    if (this.closed || this.running) return;
    this.running = true;
    let next: number;
    try {
      if (this.scan && scanning) this.scanStep();
      const r = this.deliverDue();
      if (!this.scan && this.bAt !== Infinity && this.heap.size < this.maxInMemory / 2) this.startPass();
      if (r.moved) this.dirty = true;
      // during a burst the checkpoint is written every PERSIST_EVERY_MS, not every turn (a crash
      // in between delivers those again, as Java's wheel flushes every timerFlushIntervalMs)
      if (this.dirty && (!r.more || this.clock.now() - this.persistedAt >= PERSIST_EVERY_MS)) this.persist();
      if (r.retry) next = this.clock.now() + 1000;
      else if (this.scan || r.more) next = this.clock.now();
      else if (this.heap.size > 0)
        next = this.due(this.heap.minAt(), this.heap.minOffset()) ? this.clock.now() : this.heap.minAt();
      else next = Infinity;
    } finally {
      this.running = false;
    }
    this.arm(next);
  }

  /** Due: its time has come, or it is not after the delivered key (a clock that went back). */
  private due(at: number, off: number): boolean {
    return at <= this.clock.now() || !lt(this.kAt, this.kOff, at, off);
  }

  private deliverDue(): { moved: boolean; more: boolean; retry: boolean } {
    const h = this.heap;
    let n = 0;
    let retry = false;
    while (h.size > 0 && n < this.deliverPerTick) {
      const at = h.minAt();
      const off = h.minOffset();
      if (!lt(at, off, this.rAt, this.rOff) || !this.due(at, off)) break;
      try {
        if (!this.deliver(off)) {
          retry = true;
          break;
        }
      } catch (err) {
        // a damaged record must not stop the broker or the messages behind it: log it and skip it
        log('timer message at offset %d: delivery failed: %O', off, err);
      }
      h.popMin();
      n++;
      this.counts.pending--;
      this.counts.delivered++;
      if (lt(this.kAt, this.kOff, at, off)) {
        this.kAt = at;
        this.kOff = off;
      }
    }
    if (n > this.counts.deliveredPerTickPeak) this.counts.deliveredPerTickPeak = n;
    const more =
      !retry &&
      n >= this.deliverPerTick &&
      h.size > 0 &&
      lt(h.minAt(), h.minOffset(), this.rAt, this.rOff) &&
      this.due(h.minAt(), h.minOffset());
    return { moved: n > 0, more, retry };
  }

  /** Read back the timers that were not held: a pass over [deliveredBelow, scanned) for keys at or after the bound. */
  private startPass(): void {
    this.scan = { next: this.deliveredBelow, end: this.scanned, fromAt: this.bAt, fromOff: this.bOff, initial: false };
    // ready stays at the old bound until the pass is over; the new bound is what the pass cannot hold
    this.bAt = Infinity;
    this.bOff = 0;
  }

  private scanStep(): void {
    const s = this.scan!;
    const cq = this.store.queue(TIMER_TOPIC, 0);
    const end = cq ? Math.min(s.end, s.next + SCAN_PER_TICK) : s.end;
    for (let o = s.next; o < end; o++) {
      if (cq!.isHole(o)) continue;
      const at = cq!.tagsCodeAt(o);
      if (lt(at, o, s.fromAt, s.fromOff) || (this.legacy.size > 0 && this.legacy.has(o))) continue;
      if (s.initial) this.counts.pending++;
      if (lt(at, o, this.bAt, this.bOff)) this.offer(at, o);
    }
    this.counts.scannedEntries += end - s.next;
    s.next = end;
    if (end < s.end) return;
    this.scan = null;
    this.counts.scans++;
    this.rAt = this.bAt;
    this.rOff = this.bOff;
    if (this.legacy.size > 0) this.pruneLegacy();
    if (this.heap.size < this.maxInMemory / 4) this.heap.trim(this.heap.size * 2);
  }

  /** Re-write one timer record to its real topic; false when the store refused (tried again in a second). */
  private deliver(offset: number): boolean {
    const cq = this.store.queue(TIMER_TOPIC, 0)!;
    const rec = this.store.lookMessageByOffset(cq.physOffsetAt(offset));
    if (!rec) return true;
    const r = decodeMessage(rec, 0, { decompress: false });
    const props = r.properties;
    const inner = unparked(r, props);
    if (!inner) return true;
    // a delete marker is never delivered (Java's doPut refuses it); its timer is gone by now
    if (props.TIMER_DEL_UNIQKEY !== undefined) {
      if (this.recalled.delete(props.TIMER_DEL_UNIQKEY)) this.dirty = true;
      return true;
    }
    if (this.recalled.has(`${inner.topic}+${props.UNIQ_KEY}`)) return true;
    if (inner.topic === TIMER_TOPIC) {
      // a record sent straight to the timer topic naming it as its real topic would come back
      // at once, for ever: dropped
      this.warn(`timer message at offset ${offset} names ${TIMER_TOPIC} as its real topic: dropped`);
      return true;
    }
    delete props.REAL_TOPIC;
    delete props.REAL_QID;
    props.TIMER_ENQUEUE_MS = String(r.storeTimestamp);
    props.TIMER_DEQUEUE_MS = String(this.clock.now());
    const res = this.store.putMessages([inner]);
    if (res.status !== 'PUT_OK') {
      log('timer delivery to %s failed: %s', inner.topic, res.remark);
      return false;
    }
    this.store.stats.incTopicPutNums(inner.topic);
    return true;
  }

  /** Wake up by `at`: an earlier wake-up already armed stays (it re-arms then). */
  private arm(at: number): void {
    if (this.closed || at === Infinity) return;
    if (this.timer && this.wakeAt <= at) return;
    if (this.timer) this.clock.clearTimeout(this.timer);
    const step = wakeDelay(at - this.clock.now());
    this.wakeAt = this.clock.now() + step;
    this.timer = this.clock.setTimeout(() => {
      this.timer = null;
      this.wakeAt = Infinity;
      this.run(true);
    }, step);
  }

  /** Step deliveredBelow over what is delivered (a bounded number of offsets per checkpoint). */
  private advanceDeliveredBelow(): void {
    const cq = this.store.queue(TIMER_TOPIC, 0);
    if (!cq) return;
    const limit = Math.min(this.scanned, cq.maxOffset, this.deliveredBelow + ADVANCE_PER_PERSIST);
    let o = this.deliveredBelow;
    while (o < limit && (cq.isHole(o) || !lt(this.kAt, this.kOff, cq.tagsCodeAt(o), o) || this.legacy.has(o))) o++;
    this.deliveredBelow = o;
  }

  /** Forget the old-format offsets that deliveredBelow or the delivered key now cover. */
  private pruneLegacy(): void {
    const cq = this.store.queue(TIMER_TOPIC, 0);
    for (const o of this.legacy) {
      if (o < this.deliveredBelow || (cq && o < cq.maxOffset && !lt(this.kAt, this.kOff, cq.tagsCodeAt(o), o)))
        this.legacy.delete(o);
    }
    this.legacyList = [...this.legacy].sort((a, b) => a - b);
  }

  persist(): void {
    if (!this.loaded) return;
    // a held timer at or below the delivered key (the clock went back) is not delivered yet: the
    // previous checkpoint stays until it is
    if (this.heap.size > 0 && !lt(this.kAt, this.kOff, this.heap.minAt(), this.heap.minOffset())) return;
    this.advanceDeliveredBelow();
    this.dirty = false;
    this.persistedAt = this.clock.now();
    try {
      const cp: TimerCheckpoint = {
        deliveredBelow: this.deliveredBelow,
        delivered: this.legacyList,
        deliveredUpTo: this.kAt === -Infinity ? null : [this.kAt, this.kOff],
        ...(this.recalled.size > 0 ? { recalled: [...this.recalled] } : {}),
      };
      writeFileAtomic(this.file, JSON.stringify(cp), false, true);
    } catch (err) {
      log('cannot write %s: %s', this.file, (err as Error).message);
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timer = null;
    this.persist();
  }
}
