import createDebug from '../debug.js';
import type { Clock, ClockTimer } from '../clock.js';

const log = createDebug('rocketwire:producer');

/** Java's LatencyFaultToleranceImpl wakes its detector every 3 s. */
export const DETECTOR_PERIOD_MS = 3000;

/** A broker's fault record (Java's FaultItem). */
export interface FaultItem {
  readonly brokerName: string;
  /** The latency of the last send to it, in milliseconds. */
  currentLatencyMs: number;
  /** The broker is avoided until this time (epoch ms). */
  availableAt: number;
  /** False after a connection failure while the detector runs, until a probe answers. */
  reachable: boolean;
  /** The detector probes this broker no earlier than this time. */
  nextCheckAt: number;
}

/** What the detector needs from the producer: a broker's address and a probe of it. */
export interface FaultDetectorHost {
  /** The broker's master address, or undefined when the routes no longer name it (its record is dropped). */
  resolve(brokerName: string): string | undefined;
  /** True when the broker answered a cheap request within `timeoutMs`. */
  detect(brokerName: string, addr: string, timeoutMs: number): Promise<boolean>;
}

/**
 * The fault table of the brokers a producer sends to (Java's LatencyFaultToleranceImpl): per broker,
 * until when it is avoided and whether it is reachable; and the detector that probes the faulty
 * brokers and marks them reachable again. A broker with no record is available and reachable.
 */
export class LatencyFaultTolerance {
  private readonly items = new Map<string, FaultItem>();
  private timer: ClockTimer | null = null;
  private round: Promise<void> | null = null;
  private stopped = false;

  constructor(
    private readonly clock: Clock,
    private readonly detectTimeoutMs: number,
    private readonly detectIntervalMs: number,
  ) {}

  /** Records a send's outcome: `notAvailableMs` > 0 pushes the broker's availability back, never forward. */
  updateFaultItem(brokerName: string, latencyMs: number, notAvailableMs: number, reachable: boolean): void {
    let item = this.items.get(brokerName);
    if (!item) {
      item = { brokerName, currentLatencyMs: latencyMs, availableAt: 0, reachable, nextCheckAt: 0 };
      this.items.set(brokerName, item);
    }
    item.currentLatencyMs = latencyMs;
    const until = this.clock.now() + notAvailableMs;
    if (notAvailableMs > 0 && until > item.availableAt) {
      item.availableAt = until;
      log('broker %s isolated for %d ms (last send took %d ms)', brokerName, notAvailableMs, latencyMs);
    }
    item.reachable = reachable;
    if (!reachable) log('broker %s unreachable: avoided until a probe answers', brokerName);
  }

  isAvailable(brokerName: string): boolean {
    const item = this.items.get(brokerName);
    return item === undefined || this.clock.now() >= item.availableAt;
  }

  isReachable(brokerName: string): boolean {
    return this.items.get(brokerName)?.reachable ?? true;
  }

  /** A copy of the records, for tests and diagnostics. */
  snapshot(): FaultItem[] {
    return [...this.items.values()].map((i) => ({ ...i }));
  }

  /**
   * One detector round (Java's detectByOneRound): each record due for a check is probed; a broker
   * the routes no longer name is forgotten, one that answers is reachable again. Its isolation time
   * is left as it is: only a send's outcome moves that.
   */
  async detectByOneRound(host: FaultDetectorHost): Promise<void> {
    const probes: Promise<void>[] = [];
    for (const [name, item] of this.items) {
      const now = this.clock.now();
      if (now < item.nextCheckAt) continue;
      item.nextCheckAt = now + this.detectIntervalMs;
      const addr = host.resolve(name);
      if (addr === undefined) {
        this.items.delete(name);
        continue;
      }
      probes.push(
        host.detect(name, addr, this.detectTimeoutMs).then(
          (ok) => {
            if (ok && !item.reachable) {
              item.reachable = true;
              log('broker %s (%s) answers again: reachable', name, addr);
            }
          },
          () => undefined,
        ),
      );
    }
    await Promise.all(probes);
  }

  /** Runs a detector round every 3 s on the clock until stopDetector(); a round never overlaps the next. */
  startDetector(host: FaultDetectorHost): void {
    this.stopped = false;
    const tick = (): void => {
      this.timer = null;
      if (this.stopped) return;
      this.round = this.detectByOneRound(host)
        .catch((err: unknown) => log('fault detector round failed: %s', (err as Error).message))
        .finally(() => {
          this.round = null;
          if (!this.stopped) this.timer = this.clock.setTimeout(tick, DETECTOR_PERIOD_MS);
        });
    };
    this.timer = this.clock.setTimeout(tick, DETECTOR_PERIOD_MS);
  }

  /** Stops the detector and waits for a round that is running. */
  async stopDetector(): Promise<void> {
    this.stopped = true;
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timer = null;
    await this.round;
  }
}
