import createDebug from 'debug';

const log = createDebug('rocketwire:client');

/**
 * A periodic background task owned by the client instance: first run after `firstDelayMs`, then every
 * `periodMs`; a run never overlaps the previous one; failures are logged, never thrown; timers are
 * unref'd so they do not keep the process alive; stop() clears the timer and waits for a running pass.
 */
export class ScheduledTask {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;

  constructor(
    readonly name: string,
    private readonly periodMs: number,
    private readonly task: () => Promise<void>,
  ) {}

  start(firstDelayMs: number): void {
    if (this.stopped || this.timer) return;
    this.arm(firstDelayMs);
  }

  private arm(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.running = this.task()
        .catch((err: unknown) => log('scheduled task %s failed: %s', this.name, (err as Error)?.message ?? err))
        .finally(() => {
          this.running = null;
          this.arm(this.periodMs);
        });
    }, delayMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.running) await this.running;
  }
}
