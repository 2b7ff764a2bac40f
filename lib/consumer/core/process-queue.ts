import type { MessageExt } from './message.js';
import type { ClockTimer } from '../../clock.js';
import type { MessageQueue } from '../../../protocol/index.js';
import type { FlowControlReason } from './flow-control.js';

/** One held queue's pull state (PullRequest in Java): travels through the pull service's FIFO. */
export interface PullRequest {
  readonly messageQueue: MessageQueue;
  readonly processQueue: ProcessQueue;
  /** Offset the next pull asks for. */
  nextOffset: number;
  /** Orderly: the first pull after locking re-reads the broker's offset. */
  previouslyLocked: boolean;
  /** Broker id the broker suggested for the next pull (0 = master). */
  suggestWhichBrokerId: number;
  /** Pulls parked by flow control, by reason (stats). */
  flowControlPauses: { count: number; size: number; span: number };
  /** Clock time of the first flow-control park of the current run of parks (null when not parked); a run past a minute is logged. */
  flowParkedSinceMs: number | null;
  /** The current run of parks was logged at warn. */
  flowParkWarned: boolean;
  /** Clock time of the last pull the broker answered (any status); null before the first (health()). */
  lastAnsweredAtMs: number | null;
  /** The queue's max offset in the broker's last pull answer; −1 before the first (health()'s lag). */
  brokerMaxOffset: number;
  /** Set while the request sits parked on a timer. */
  parkTimer: ClockTimer | null;
  /**
   * Why the parked request waits, when flow control parked it: a drained cache resumes a request parked
   * for its count or size at once; one parked for the span always waits its 50 ms (see consume-pull.ts).
   */
  parkReason: FlowControlReason | null;
}

/** Java's ProcessQueue constants. */
export const PULL_MAX_IDLE_TIME_MS = 120_000;
export const REBALANCE_LOCK_MAX_LIVE_TIME_MS = 30_000;
/** Expiry cleaning looks at no more than this many head messages per queue per run. */
export const CLEAN_EXPIRED_MAX_PER_RUN = 16;

/** Where a process queue is in its life (see ProcessQueue). */
export type ProcessQueueLifecycle = 'held' | 'dropped' | 'removed';

/**
 * The local cache of one held queue (ProcessQueue in Java): pulled messages ordered by queue offset,
 * waiting for or in consumption.
 *
 * Pulls of one queue are sequential, so messages almost always arrive in increasing offset order: they
 * are appended to two parallel arrays (offsets and messages) and removed by binary search, leaving a
 * hole that the head/tail pointers skip. Holes are compacted once they make up half the array. This
 * gives O(1) append, O(log n) removal of any message, O(1) smallest/largest offset, with no per-message
 * allocation beyond the array slots.
 *
 * Lifecycle: a queue is `held` from the rebalance that assigns it, `dropped` when it is taken away
 * (pulls and handler results of it are discarded from then on), and `removed` once it left the
 * rebalance's table. Orderly queues are also `locked` while the broker lock is held and fresh. The
 * transitions (`drop`, `markUnlockFailed`, `markRemoved`, `markLocked`, `markUnlocked`, `bindPullRequest`) are
 * made by RebalancePushImpl, which owns the table; everything else reads the getters.
 */
export class ProcessQueue {
  private offsets: number[] = [];
  private msgs: (MessageExt | undefined)[] = [];
  /** Index of the first live slot (slots before are holes). */
  private head = 0;
  /** Number of live messages in the arrays (excluding the orderly "consuming" set). */
  private live = 0;
  /** Orderly only: messages taken for the running call (in offset order), still counted in msgCount. */
  private consuming: MessageExt[] = [];

  private count = 0;
  private size = 0;
  private peakSize = 0;
  private offsetMax = -1;
  private pulledAt: number;
  private consumedAt: number;
  private lifecycleValue: ProcessQueueLifecycle = 'held';
  private lockedValue = false;
  private lastLockTimestampValue = 0;
  private tryUnlockTimesValue = 0;
  /** Orderly: a consume run was dispatched for this queue and has not found the cache empty yet. */
  private dispatched = false;
  private pullRequestValue: PullRequest | null = null;

  constructor(now: number) {
    this.pulledAt = now;
    this.consumedAt = now;
  }

  /** Messages cached, including the orderly consuming set. */
  get msgCount(): number {
    return this.count;
  }
  /**
   * Sum of body lengths of cached messages: inflated bodies count what they hold once inflated, so
   * flow control's pullThresholdSizeForQueue stops a queue that holds inflated bombs.
   */
  get msgSize(): number {
    return this.size;
  }
  /** The largest msgSize the queue reached (stats' peakCachedBytes). */
  get peakMsgSize(): number {
    return this.peakSize;
  }
  /** Offset of the last message added (−1 before any). */
  get queueOffsetMax(): number {
    return this.offsetMax;
  }
  /** When a pull of this queue last started (the 120 s idle drop reads it). */
  get lastPullTimestamp(): number {
    return this.pulledAt;
  }
  /** When a handler call of this queue last started. */
  get lastConsumeTimestamp(): number {
    return this.consumedAt;
  }
  /** A pull of this queue starts now. */
  markPulled(now: number): void {
    this.pulledAt = now;
  }
  /** A handler call of this queue starts now. */
  markConsumed(now: number): void {
    this.consumedAt = now;
  }

  get lifecycle(): ProcessQueueLifecycle {
    return this.lifecycleValue;
  }
  /** Taken away (dropped or removed): nothing pulled or consumed for it counts any more. */
  get dropped(): boolean {
    return this.lifecycleValue !== 'held';
  }
  /** Orderly: the broker granted the lock (see lastLockTimestamp for its age). */
  get locked(): boolean {
    return this.lockedValue;
  }
  get lastLockTimestamp(): number {
    return this.lastLockTimestampValue;
  }
  /** The queue's pull request, so a drained cache can resume a pull parked by flow control. */
  get pullRequest(): PullRequest | null {
    return this.pullRequestValue;
  }

  /** held → dropped (idempotent; a removed queue stays removed). */
  drop(): void {
    if (this.lifecycleValue === 'held') this.lifecycleValue = 'dropped';
  }
  /**
   * Orderly: a removal gave up because a handler call did not end within 1 s; the queue stays dropped
   * in the table until a later rebalance removes it (Java's incTryUnlockTimes).
   */
  markUnlockFailed(): void {
    this.tryUnlockTimesValue++;
  }
  /** Removals of this queue that gave up (GET_CONSUMER_RUNNING_INFO's tryUnlockTimes). */
  get tryUnlockTimes(): number {
    return this.tryUnlockTimesValue;
  }
  /** → removed: the queue left the rebalance's table; final. */
  markRemoved(): void {
    this.lifecycleValue = 'removed';
  }
  /** Orderly: LOCK_BATCH_MQ granted the lock at `now`. */
  markLocked(now: number): void {
    this.lockedValue = true;
    this.lastLockTimestampValue = now;
  }
  /** Orderly: the lock was refused or released. */
  markUnlocked(): void {
    this.lockedValue = false;
  }
  /** Ties the queue to its pull request (when the rebalance creates both). */
  bindPullRequest(pr: PullRequest): void {
    this.pullRequestValue = pr;
  }

  get isEmpty(): boolean {
    return this.count === 0;
  }

  /** Highest − lowest cached offset (0 when fewer than two are cached), consumeConcurrentlyMaxSpan's measure. */
  get maxSpan(): number {
    if (this.live === 0) return 0;
    return this.offsets[this.offsets.length - 1]! - this.offsets[this.head]!;
  }

  /** Smallest cached offset, or −1. */
  get minOffset(): number {
    return this.live === 0 ? -1 : this.offsets[this.head]!;
  }

  /**
   * Adds pulled messages; offsets already cached are ignored. Returns true when an orderly consume run
   * should be dispatched (something was added and no run is active), as Java's putMessage.
   */
  putMessage(msgs: readonly MessageExt[]): boolean {
    let added = 0;
    for (let i = 0; i < msgs.length; i++) {
      const msg = msgs[i]!;
      const off = msg.queueOffset;
      const n = this.offsets.length;
      if (n === this.head || off > this.offsets[n - 1]!) {
        this.offsets.push(off);
        this.msgs.push(msg);
      } else {
        // Out of order (offset reset or a re-pull): insert in place unless already present.
        const idx = this.search(off);
        if (idx < this.offsets.length && this.offsets[idx] === off && this.msgs[idx] !== undefined) continue;
        if (idx < this.offsets.length && this.offsets[idx] === off) {
          this.msgs[idx] = msg;
        } else {
          this.offsets.splice(idx, 0, off);
          this.msgs.splice(idx, 0, msg);
        }
        if (idx < this.head) this.head = idx;
      }
      this.live++;
      this.count++;
      this.size += msg.body.length;
      if (off > this.offsetMax) this.offsetMax = off;
      added++;
    }
    if (this.size > this.peakSize) this.peakSize = this.size;
    if (added > 0 && !this.dispatched) {
      this.dispatched = true;
      return true;
    }
    return false;
  }

  /**
   * Removes consumed messages and returns the offset that may be committed (Java's removeMessage):
   * −1 if the cache was empty, the smallest offset still cached, or queueOffsetMax + 1 once empty.
   * The committed offset therefore never passes a message still being consumed.
   */
  removeMessage(msgs: readonly MessageExt[]): number {
    if (this.live === 0) return -1;
    for (let i = 0; i < msgs.length; i++) this.removeOne(msgs[i]!);
    return this.live === 0 ? this.offsetMax + 1 : this.offsets[this.head]!;
  }

  /** Removes one message by offset if it is the cached instance; true when removed. */
  private removeOne(msg: MessageExt): boolean {
    const idx = this.search(msg.queueOffset);
    if (idx >= this.offsets.length || this.offsets[idx] !== msg.queueOffset) return false;
    const cached = this.msgs[idx];
    if (cached === undefined) return false;
    this.count--;
    this.size -= cached.body.length;
    this.vacate(idx);
    return true;
  }

  /**
   * Empties a live slot (removal or orderly take): moves the head or trims the tail past holes, and
   * compacts when holes are the majority so searches and memory stay proportional to the cache.
   */
  private vacate(idx: number): void {
    this.msgs[idx] = undefined;
    this.live--;
    if (this.live === 0) {
      this.offsets.length = 0;
      this.msgs.length = 0;
      this.head = 0;
      return;
    }
    if (idx === this.head) {
      let h = this.head + 1;
      while (this.msgs[h] === undefined) h++;
      this.head = h;
    }
    let n = this.offsets.length;
    if (idx === n - 1) {
      while (this.msgs[n - 1] === undefined) n--;
      this.offsets.length = n;
      this.msgs.length = n;
    }
    if (this.offsets.length - this.live > 64 && this.offsets.length > this.live * 2) this.compact();
  }

  private compact(): void {
    const offs: number[] = [];
    const ms: (MessageExt | undefined)[] = [];
    for (let i = this.head; i < this.offsets.length; i++) {
      const m = this.msgs[i];
      if (m !== undefined) {
        offs.push(this.offsets[i]!);
        ms.push(m);
      }
    }
    this.offsets = offs;
    this.msgs = ms;
    this.head = 0;
  }

  /** First index whose offset is >= off (binary search over the live range). */
  private search(off: number): number {
    let lo = this.head;
    let hi = this.offsets.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.offsets[mid]! < off) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** True when this exact message is still cached (5.x skips send-back for messages expired meanwhile). */
  contains(msg: MessageExt): boolean {
    const idx = this.search(msg.queueOffset);
    return idx < this.offsets.length && this.msgs[idx] === msg;
  }

  /** The lowest-offset cached message (not counting the orderly consuming set). */
  firstMessage(): MessageExt | undefined {
    return this.live === 0 ? undefined : this.msgs[this.head];
  }

  /** Cached messages in offset order (for stats, CONSUME_MESSAGE_DIRECTLY lookups and tests). */
  *messages(): IterableIterator<MessageExt> {
    for (let i = this.head; i < this.msgs.length; i++) {
      const m = this.msgs[i];
      if (m !== undefined) yield m;
    }
  }

  /**
   * Expiry cleaning (concurrent mode): up to 16 times, if the head message started consumption more
   * than `timeoutMs` ago, send it back (delay level 3) and drop it from the cache if it is still the head.
   * Stops at the first head that has not expired or never started. `sendBack` failures keep the message.
   * Returns how many were removed and the offset the last removal allows to commit (−1 if none).
   */
  async cleanExpiredMsg(
    now: number,
    timeoutMs: number,
    sendBack: (msg: MessageExt) => Promise<void>,
  ): Promise<{ cleaned: number; offset: number }> {
    let cleaned = 0;
    let offset = -1;
    const loop = Math.min(this.live, CLEAN_EXPIRED_MAX_PER_RUN);
    for (let i = 0; i < loop; i++) {
      if (this.dropped) break;
      const msg = this.firstMessage();
      if (msg === undefined) break;
      const started = msg.properties.CONSUME_START_TIME;
      if (started === undefined || now - Number(started) <= timeoutMs) break;
      try {
        await sendBack(msg);
      } catch {
        break;
      }
      if (this.firstMessage() === msg) {
        offset = this.removeMessage([msg]);
        cleaned++;
      }
    }
    return { cleaned, offset };
  }

  // ---- orderly ----

  /** Orderly: moves the lowest `batchSize` cached messages into the consuming set and returns them. */
  takeMessages(batchSize: number, now: number): MessageExt[] {
    this.consumedAt = now;
    const out: MessageExt[] = [];
    while (out.length < batchSize && this.live > 0) {
      const m = this.msgs[this.head]!;
      this.consuming.push(m);
      out.push(m);
      this.vacate(this.head);
    }
    if (out.length === 0) this.dispatched = false;
    return out;
  }

  /** Orderly: the consuming set succeeded; returns highest consumed offset + 1, or −1 if nothing was taken. */
  commit(): number {
    if (this.consuming.length === 0) return -1;
    const last = this.consuming[this.consuming.length - 1]!.queueOffset;
    for (const m of this.consuming) {
      this.count--;
      this.size -= m.body.length;
    }
    this.consuming = [];
    return last + 1;
  }

  /** Orderly: puts messages of a failed call back into the cache to be consumed again, in order. */
  makeMessageToConsumeAgain(msgs: readonly MessageExt[]): void {
    for (const m of msgs) {
      const idx = this.consuming.indexOf(m);
      if (idx >= 0) this.consuming.splice(idx, 1);
      this.count--;
      this.size -= m.body.length;
    }
    const max = this.offsetMax;
    this.putMessageBack(msgs);
    this.offsetMax = max;
  }

  private putMessageBack(msgs: readonly MessageExt[]): void {
    const wasConsuming = this.dispatched;
    this.putMessage(msgs);
    this.dispatched = wasConsuming;
  }

  /** Orderly: offsets in the consuming set. */
  get consumingCount(): number {
    return this.consuming.length;
  }

  /** Drops everything (used when the queue is removed). */
  clear(): void {
    this.offsets = [];
    this.msgs = [];
    this.head = 0;
    this.live = 0;
    this.consuming = [];
    this.count = 0;
    this.size = 0;
  }

  isPullExpired(now: number): boolean {
    return now - this.pulledAt > PULL_MAX_IDLE_TIME_MS;
  }

  isLockExpired(now: number): boolean {
    return now - this.lastLockTimestamp > REBALANCE_LOCK_MAX_LIVE_TIME_MS;
  }
}
