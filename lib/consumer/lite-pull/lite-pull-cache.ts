import type { Clock, ClockTimer } from '../../clock.js';
import type { AssignedQueue } from './lite-pull-assignment.js';
import type { MessageExt } from '../core/message.js';

/** One pulled batch waiting for poll() (Java's ConsumeRequest), stamped with its queue's seek generation. */
export interface ConsumeRequest {
  readonly msgs: MessageExt[];
  readonly queue: AssignedQueue;
  readonly generation: number;
}

interface Waiter {
  resolve(req: ConsumeRequest | null): void;
  timer: ClockTimer | null;
}

/**
 * The pull-ahead cache shared by every queue of a lite pull consumer (Java's consumeRequestCache, a
 * LinkedBlockingQueue): pulls put batches in, poll() takes the oldest. A poll() that finds it empty
 * waits on a promise woken by the next put or by its timer on the clock; it never spins. Its size is
 * what pullThresholdForAll is checked against.
 */
export class LitePullCache {
  private items: ConsumeRequest[] = [];
  private head = 0;
  private readonly waiters: Waiter[] = [];
  private closed = false;

  constructor(private readonly clock: Clock) {}

  get size(): number {
    return this.items.length - this.head;
  }

  put(req: ConsumeRequest): void {
    if (this.closed) return;
    const w = this.waiters.shift();
    if (w !== undefined) {
      if (w.timer) this.clock.clearTimeout(w.timer);
      w.resolve(req);
      return;
    }
    this.items.push(req);
  }

  /** The oldest batch, waiting up to `timeoutMs` for one; null when none came (or the cache was closed). */
  take(timeoutMs: number): Promise<ConsumeRequest | null> {
    if (this.head < this.items.length) {
      const req = this.items[this.head]!;
      this.items[this.head++] = undefined as unknown as ConsumeRequest;
      if (this.head > 1024 && this.head * 2 > this.items.length) {
        this.items = this.items.slice(this.head);
        this.head = 0;
      }
      return Promise.resolve(req);
    }
    if (this.closed || timeoutMs <= 0) return Promise.resolve(null);
    return new Promise((resolve) => {
      const w: Waiter = { resolve, timer: null };
      w.timer = this.clock.setTimeout(() => {
        const i = this.waiters.indexOf(w);
        if (i >= 0) this.waiters.splice(i, 1);
        resolve(null);
      }, timeoutMs);
      this.waiters.push(w);
    });
  }

  /** Removes the batches of one queue (seek, queue taken away). */
  removeQueue(queue: AssignedQueue): void {
    const kept = this.items.slice(this.head).filter((r) => r.queue !== queue);
    this.items = kept;
    this.head = 0;
  }

  /** Wakes every waiting poll() with null and refuses further batches (shutdown). */
  close(): void {
    this.closed = true;
    for (const w of this.waiters.splice(0)) {
      if (w.timer) this.clock.clearTimeout(w.timer);
      w.resolve(null);
    }
    this.items = [];
    this.head = 0;
  }

  /** The next batch of a queue neither dropped nor sought since, waiting up to `timeoutMs`; null when none came. */
  async takeLive(timeoutMs: number): Promise<ConsumeRequest | null> {
    const { clock } = this;
    const end = clock.now() + timeoutMs;
    for (;;) {
      const req = await this.take(Math.max(0, end - clock.now()));
      if (req === null) return null;
      if (!req.queue.pq.dropped && req.generation === req.queue.generation) return req;
      if (clock.now() >= end) return null;
    }
  }
}
