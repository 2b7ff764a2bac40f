import createDebug from '../../debug.js';
import type { Clock, ClockTimer } from '../../clock.js';
import type { PullRequest } from './pull-request.js';

const log = createDebug('rocketwire:consumer');

/**
 * The pull driver (PullMessageService): a FIFO of pull requests drained by one owned async loop, which
 * starts each pull without waiting for it (pulls of different queues are in flight at once; a queue has
 * at most one because its request is only re-queued when its pull finished). Delayed re-queues use one
 * timer per parked request; a parked request can be resumed early (flow control released).
 */
export class PullMessageService {
  private queue: PullRequest[] = [];
  private head = 0;
  private wake: (() => void) | null = null;
  private readonly timers = new Set<ClockTimer>();
  private loop: Promise<void> | null = null;
  private readonly abort = new AbortController();

  constructor(
    private readonly pullMessage: (pr: PullRequest) => void,
    private readonly clock: Clock,
    /** A request's handling threw: that queue is no longer pulled (the consumer's 'crash' event). */
    private readonly onCrash?: (pr: PullRequest, err: unknown) => void,
  ) {}

  get signal(): AbortSignal {
    return this.abort.signal;
  }

  start(): void {
    this.loop ??= this.run();
  }

  executePullRequestImmediately(pr: PullRequest): void {
    if (this.abort.signal.aborted) return;
    this.queue.push(pr);
    const w = this.wake;
    if (w) {
      this.wake = null;
      w();
    }
  }

  executePullRequestLater(pr: PullRequest, delayMs: number): void {
    if (this.abort.signal.aborted) return;
    if (pr.parkTimer) {
      this.clock.clearTimeout(pr.parkTimer);
      this.timers.delete(pr.parkTimer);
    }
    const t = this.clock.setTimeout(() => {
      this.timers.delete(t);
      pr.parkTimer = null;
      this.executePullRequestImmediately(pr);
    }, delayMs);
    pr.parkTimer = t;
    this.timers.add(t);
  }

  /** Resumes a parked request now (no-op if it is not parked). */
  resume(pr: PullRequest): void {
    const t = pr.parkTimer;
    if (!t) return;
    this.clock.clearTimeout(t);
    this.timers.delete(t);
    pr.parkTimer = null;
    this.executePullRequestImmediately(pr);
  }

  private async run(): Promise<void> {
    const signal = this.abort.signal;
    while (!signal.aborted) {
      if (this.head === this.queue.length) {
        this.queue = [];
        this.head = 0;
        await new Promise<void>((resolve) => {
          this.wake = resolve;
        });
        continue;
      }
      const pr = this.queue[this.head]!;
      this.queue[this.head++] = undefined as unknown as PullRequest;
      try {
        this.pullMessage(pr);
      } catch (err) {
        // A bug in one request's handling must not stop the loop that drives every queue.
        log('pull request of %o failed: %s', pr.messageQueue, (err as Error)?.message ?? err);
        this.onCrash?.(pr, err);
      }
    }
  }

  /** Stops the loop and every parked timer; pulls already sent are the caller's to abort (see signal). */
  async shutdown(): Promise<void> {
    this.abort.abort();
    for (const t of this.timers) this.clock.clearTimeout(t);
    this.timers.clear();
    const w = this.wake;
    this.wake = null;
    w?.();
    await this.loop;
  }
}
