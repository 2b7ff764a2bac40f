import createDebug from '../debug.js';
import { systemClock, type Clock, type ClockTimer } from '../clock.js';

const clientLog = createDebug('rocketwire:client');

/**
 * A periodic background task owned by a client instance or a consumer: first run after
 * `firstDelayMs`, then every `periodMs` after the previous run ended (or the delay the run returned),
 * so runs never overlap.
 * Failures (a rejection or a synchronous throw) are logged to `log`, never thrown. Timers come
 * from the owner's clock (the system clock's are unref'd, so they do not keep the process alive;
 * a ManualClock lets tests drive the period); stop() clears the timer and waits for a running
 * pass, so shutdown leaves nothing behind.
 */
export class ScheduledTask {
  private timer: ClockTimer | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;

  constructor(
    readonly name: string,
    private readonly periodMs: number,
    /** A run may return the delay before the next one (Java's RebalanceService waits 1 s after an unbalanced round). */
    private readonly task: () => Promise<void | number> | void | number,
    /** Where failures go: the owner's namespace (default `rocketwire:client`). */
    private readonly log: (formatter: string, ...args: unknown[]) => void = clientLog,
    private readonly clock: Clock = systemClock,
  ) {}

  start(firstDelayMs: number): void {
    if (this.stopped || this.timer) return;
    this.arm(firstDelayMs);
  }

  private arm(delayMs: number): void {
    if (this.stopped) return;
    this.timer = this.clock.setTimeout(() => {
      this.timer = null;
      let next = this.periodMs;
      this.running = Promise.resolve()
        .then(() => this.task())
        .then((delay) => {
          if (typeof delay === 'number') next = delay;
        })
        .catch((err: unknown) => this.log('scheduled task %s failed: %s', this.name, (err as Error)?.message ?? err))
        .finally(() => {
          this.running = null;
          this.arm(next);
        });
    }, delayMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timer = null;
    if (this.running) await this.running;
  }
}
