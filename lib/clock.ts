/**
 * The one time source of the runtime: consumer, client instance, producer and broker take a Clock
 * (default `systemClock`), and every timer and timestamp of lib/ goes through it, so tests drive
 * minutes of consumer or broker time in milliseconds with a ManualClock. Timers of the system
 * clock are unref'd: sockets, not timers, keep a process alive.
 * @category Testing with the embedded broker
 */
export interface Clock {
  /** The current time, in epoch milliseconds. */
  now(): number;
  /** Calls `fn` once, `ms` milliseconds from now. */
  setTimeout(fn: () => void, ms: number): ClockTimer;
  /** Cancels a timer set by setTimeout. */
  clearTimeout(timer: ClockTimer): void;
}
/**
 * A timer handle of a Clock, to pass back to its `clearTimeout`.
 * @category Testing with the embedded broker
 */
export interface ClockTimer {
  /** A type brand that keeps other objects from passing for a timer; never present at run time. */
  readonly __clockTimer?: never;
}

/**
 * The real clock: Date.now and unref'd Node timers. The default of every `clock` option.
 * @category Testing with the embedded broker
 */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout(fn, ms) {
    // Node fires at once for delays above 2^31-1 ms; clamp (callers re-check the time when woken)
    const t = setTimeout(fn, Math.min(Math.max(0, ms), 0x7fffffff));
    t.unref?.();
    return t as unknown as ClockTimer;
  },
  clearTimeout(timer) {
    clearTimeout(timer as unknown as NodeJS.Timeout);
  },
};

interface ManualTimer extends ClockTimer {
  at: number;
  seq: number;
  fn: () => void;
  cancelled: boolean;
}

/**
 * A clock that moves only when told to. `advance(ms)` fires due timers in time order (timers
 * scheduled by a firing timer inside the window fire too).
 * @category Testing with the embedded broker
 */
export class ManualClock implements Clock {
  private time: number;
  private seq = 0;
  private timers: ManualTimer[] = [];

  constructor(start = 1_700_000_000_000) {
    this.time = start;
  }
  now(): number {
    return this.time;
  }
  setTimeout(fn: () => void, ms: number): ClockTimer {
    const t: ManualTimer = { at: this.time + Math.max(0, ms), seq: this.seq++, fn, cancelled: false };
    this.timers.push(t);
    return t;
  }
  clearTimeout(timer: ClockTimer): void {
    (timer as ManualTimer).cancelled = true;
  }
  /** Move time forward by `ms`, running every timer that falls due. */
  advance(ms: number): void {
    const end = this.time + ms;
    for (;;) {
      this.timers = this.timers.filter((t) => !t.cancelled);
      let next: ManualTimer | undefined;
      for (const t of this.timers)
        if (t.at <= end && (!next || t.at < next.at || (t.at === next.at && t.seq < next.seq))) next = t;
      if (!next) break;
      this.time = Math.max(this.time, next.at);
      next.cancelled = true;
      next.fn();
    }
    this.time = end;
  }
  /** When the earliest waiting timer falls due (epoch ms), or undefined when none waits. */
  nextTimerAt(): number | undefined {
    let at: number | undefined;
    for (const t of this.timers) if (!t.cancelled && (at === undefined || t.at < at)) at = t.at;
    return at;
  }
  /** Number of timers waiting. */
  get pending(): number {
    return this.timers.filter((t) => !t.cancelled).length;
  }
}

/** Resolves after `ms` on `clock`, or at once (without rejecting) when `signal` aborts. */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const onAbort = (): void => {
      clock.clearTimeout(t);
      resolve();
    };
    const t = clock.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Runs `fn` after one turn of the event loop (its poll phase reads the sockets): an order, not a
 * time, so it is not the clock's. The runtime's one use of setImmediate lives here with the timers.
 */
export function nextTurn(fn: () => void): void {
  setImmediate(fn);
}
