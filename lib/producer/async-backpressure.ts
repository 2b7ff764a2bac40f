import type { Clock, ClockTimer } from '../clock.js';
import { SendBackpressureTimeoutError } from './errors.js';
import type { ResolvedSendPathOptions } from './send-path-options.js';

interface Waiter {
  n: number;
  resolve: () => void;
  timer: ClockTimer | null;
  /** Timed out: skipped when it reaches the head. */
  gone: boolean;
}

/**
 * A fair counting semaphore on the injected clock (Java's `new Semaphore(n, true)`): permits go to
 * waiters in arrival order, so a large request at the head is not starved by small ones behind it.
 * A request for more than the whole capacity takes the whole capacity: it waits until everything
 * else has settled, then runs alone, instead of waiting forever.
 */
export class FairSemaphore {
  private available: number;
  /**
   * FIFO of waiters from `head` on: tens of thousands wait in a burst, so the head moves by index
   * (Array#shift is linear) and a timed-out waiter is marked, not spliced out.
   */
  private waiters: Waiter[] = [];
  private head = 0;
  private count = 0;

  constructor(
    readonly capacity: number,
    private readonly clock: Clock,
  ) {
    this.available = capacity;
  }

  /** Permits held by running work. */
  get inUse(): number {
    return this.capacity - this.available;
  }

  /** Callers waiting for permits. */
  get waiting(): number {
    return this.count;
  }

  /** The permits a request for `n` takes. */
  cost(n: number): number {
    return Math.min(Math.max(1, n), this.capacity);
  }

  /** Takes `cost(n)` permits at once when no one waits and they are free; false otherwise. */
  tryAcquire(n: number): boolean {
    const c = this.cost(n);
    if (this.count > 0 || this.available < c) return false;
    this.available -= c;
    return true;
  }

  /** Waits up to `timeoutMs` for `cost(n)` permits; resolves false when the time ran out first. */
  acquire(n: number, timeoutMs: number): Promise<boolean> {
    if (this.tryAcquire(n)) return Promise.resolve(true);
    if (timeoutMs <= 0) return Promise.resolve(false);
    const c = this.cost(n);
    return new Promise<boolean>((resolve) => {
      const w: Waiter = { n: c, resolve: () => resolve(true), timer: null, gone: false };
      w.timer = this.clock.setTimeout(() => {
        if (w.gone) return;
        w.gone = true;
        this.count--;
        resolve(false);
        // the head leaving may let the next ones in
        this.grant();
      }, timeoutMs);
      this.waiters.push(w);
      this.count++;
    });
  }

  /** Gives back the permits of a request for `n`. */
  release(n: number): void {
    this.available += this.cost(n);
    this.grant();
  }

  private grant(): void {
    const q = this.waiters;
    while (this.head < q.length) {
      const w = q[this.head]!;
      if (!w.gone) {
        if (this.available < w.n) break;
        this.available -= w.n;
        w.gone = true;
        this.count--;
        if (w.timer) this.clock.clearTimeout(w.timer);
        w.resolve();
      }
      this.head++;
    }
    if (this.head === q.length) {
      this.waiters = [];
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > q.length) {
      this.waiters = q.slice(this.head);
      this.head = 0;
    }
  }
}

/**
 * Back-pressure of sends (Java's enableBackpressureForAsyncMode): a send takes one permit of
 * `backPressureForAsyncSendNum` and its body's bytes of `backPressureForAsyncSendSize` before it is
 * prepared, and gives them back when it settles. A caller that fires sends without awaiting them
 * therefore waits in `send()` once the limits are reached, instead of piling up messages in memory.
 */
export class AsyncBackpressure {
  readonly num: FairSemaphore;
  readonly size: FairSemaphore;

  constructor(
    options: Pick<ResolvedSendPathOptions, 'backPressureForAsyncSendNum' | 'backPressureForAsyncSendSize'>,
    private readonly clock: Clock,
  ) {
    this.num = new FairSemaphore(options.backPressureForAsyncSendNum, clock);
    this.size = new FairSemaphore(options.backPressureForAsyncSendSize, clock);
  }

  /**
   * Runs `send` holding the permits of one send of `bytes` body bytes; `send` gets the budget left
   * of `budgetMs` after the wait. Waiting longer than the budget rejects with
   * SendBackpressureTimeoutError naming the limit that was full, as Java's RemotingTooMuchRequestException.
   */
  async run<T>(topic: string, bytes: number, budgetMs: number, send: (leftMs: number) => Promise<T>): Promise<T> {
    const begin = this.clock.now();
    if (!this.num.tryAcquire(1) && !(await this.num.acquire(1, budgetMs)))
      throw new SendBackpressureTimeoutError(topic, 'backPressureForAsyncSendNum', this.num.capacity, budgetMs);
    let left = budgetMs - (this.clock.now() - begin);
    if (!this.size.tryAcquire(bytes) && !(await this.size.acquire(bytes, left))) {
      this.num.release(1);
      throw new SendBackpressureTimeoutError(topic, 'backPressureForAsyncSendSize', this.size.capacity, budgetMs);
    }
    left = budgetMs - (this.clock.now() - begin);
    try {
      return await send(left);
    } finally {
      this.size.release(bytes);
      this.num.release(1);
    }
  }
}
