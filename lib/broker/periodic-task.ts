import type { Clock, ClockTimer } from '../clock.js';

/**
 * Run `fn` every `intervalMs` on `clock` until the returned function is called (Java's
 * scheduleAtFixedDelay). A throw is handed to `onError` and does not stop the task.
 */
export function scheduleEvery(
  clock: Clock,
  intervalMs: number,
  fn: () => void,
  onError: (err: unknown) => void,
): () => void {
  let timer: ClockTimer | null = null;
  let cancelled = false;
  const tick = (): void => {
    if (cancelled) return;
    try {
      fn();
    } catch (err) {
      onError(err);
    }
    if (!cancelled) timer = clock.setTimeout(tick, intervalMs);
  };
  timer = clock.setTimeout(tick, intervalMs);
  return () => {
    cancelled = true;
    if (timer) clock.clearTimeout(timer);
  };
}

/**
 * A periodic task that keeps a timer only while it has work. `fn` runs every `intervalMs` and
 * answers whether work is left; when none is, the timer is not set again until `wake()` is called
 * (by whatever makes work: a write, a POP checkpoint). A woken task runs at the next tick of the
 * grid it ran on, so it runs when an always-armed scheduleEvery would have; only the ticks that
 * would have found nothing to do are skipped. An idle broker then holds no timer, where a clock
 * advanced by days (rocketwire/testing's TestCluster) would otherwise fire each of them every
 * interval, hundreds of thousands of times.
 */
export class OnDemandTask {
  private timer: ClockTimer | null = null;
  private stopped = false;
  /** When the task last ran (or was made): the grid of its ticks. */
  private anchor: number;

  constructor(
    private readonly clock: Clock,
    private readonly intervalMs: number,
    private readonly fn: () => boolean,
    private readonly onError: (err: unknown) => void,
  ) {
    this.anchor = clock.now();
  }

  /** There is work: make sure the task runs at its next tick. */
  wake(): void {
    if (this.timer !== null || this.stopped) return;
    const now = this.clock.now();
    const ticks = Math.floor(Math.max(0, now - this.anchor) / this.intervalMs) + 1;
    this.timer = this.clock.setTimeout(this.tick, this.anchor + ticks * this.intervalMs - now);
  }

  /** Whether a run is waiting on the clock. */
  get armed(): boolean {
    return this.timer !== null;
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    this.timer = null;
  }

  private readonly tick = (): void => {
    this.timer = null;
    if (this.stopped) return;
    this.anchor = this.clock.now();
    let more = true;
    try {
      more = this.fn();
    } catch (err) {
      // a failed run leaves its work in place: try again at the next tick
      this.onError(err);
    }
    if (more) this.wake();
  };
}
