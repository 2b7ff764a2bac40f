import createDebug from 'debug';

const log = createDebug('rocketwire:consumer');

/**
 * A periodic background job owned by a consumer: first run after `firstDelayMs`, then every `periodMs`
 * after the previous run ended (runs never overlap). Failures are logged. stop() clears the timer and
 * awaits a running pass, so shutdown leaves nothing behind.
 */
export class PeriodicTask {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;

  constructor(
    readonly name: string,
    private readonly periodMs: number,
    private readonly task: () => Promise<void> | void,
  ) {}

  start(firstDelayMs: number): void {
    if (this.stopped || this.timer) return;
    this.arm(firstDelayMs);
  }

  private arm(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.running = Promise.resolve()
        .then(this.task)
        .catch((err: unknown) => log('task %s failed: %s', this.name, (err as Error)?.message ?? err))
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

/** Resolves after `ms`, or at once (without rejecting) when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const onAbort = (): void => {
      clearTimeout(t);
      resolve();
    };
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
