import createDebug from '../debug.js';
import { requestCodeName, type RemotingCommand } from '../../protocol/index.js';
import type { Clock, ClockTimer } from '../clock.js';
import { RemotingAbortError, RemotingClosedError, RemotingTimeoutError } from './errors.js';
import { PendingTable } from './pending-table.js';

const log = createDebug('rocketwire:remoting');

/**
 * How many opaques of timed-out or aborted calls a connection remembers, so that their late answers
 * are told apart from answers to requests never sent (RemotingConnection's maxUnmatchedResponses).
 */
export const GONE_OPAQUES_KEPT = 4096;

/** A call waiting for its response. */
export interface Pending {
  opaque: number;
  code: number;
  start: number;
  deadline: number;
  timeoutMs: number;
  resolve: (cmd: RemotingCommand) => void;
  reject: (err: Error) => void;
  signal: AbortSignal | undefined;
}

/**
 * The calls in flight on this connection that share one AbortSignal, watched by a single listener.
 * Callers pass one long-lived signal to many calls (the pull service's, for every queue's long
 * poll); a listener per call went past EventTarget's limit of 10 (MaxListenersExceededWarning) and
 * paid an addEventListener/removeEventListener pair per call.
 */
interface AbortGroup {
  readonly calls: PendingTable<Pending>;
  readonly onAbort: () => void;
}

/**
 * The in-flight table of one connection: calls correlated by opaque in one table, timed out by one
 * sweeper timer (armed for the earliest deadline, never a timer per call), cancelled by their
 * AbortSignals. Time comes from the connection's clock: a ManualClock drives timeouts in tests.
 */
export class InFlightCalls {
  private readonly calls = new PendingTable<Pending>();
  private readonly abortGroups = new Map<AbortSignal, AbortGroup>();
  private sweepTimer: ClockTimer | null = null;
  private sweepAt = Infinity;
  /** Calls failed by the sweeper. */
  timeouts = 0;
  /**
   * Opaques of the latest calls that timed out or were aborted (insertion order, at most
   * GONE_OPAQUES_KEPT): their answers may still come, late, and are not counted as unmatched.
   */
  private readonly gone = new Set<number>();

  constructor(
    private readonly addr: string,
    private readonly clock: Clock,
  ) {}

  get size(): number {
    return this.calls.size;
  }

  has(opaque: number): boolean {
    return this.calls.has(opaque);
  }

  /** Track a call whose request has been written. */
  add(p: Pending): void {
    this.calls.set(p);
    if (p.signal) this.watchAbort(p.signal, p);
    if (p.deadline < this.sweepAt) this.armSweeper(p.deadline);
  }

  /** The call a response with this opaque answers, no longer tracked; undefined when none is waiting. */
  take(opaque: number): Pending | undefined {
    const p = this.calls.get(opaque);
    if (p === undefined) return undefined;
    this.calls.delete(opaque);
    if (p.signal) this.unwatchAbort(p);
    return p;
  }

  /**
   * A response with this opaque matched no call in flight: true when it answers a call that timed
   * out or was aborted (a late answer, which a slow peer sends), false when this connection never
   * sent that opaque (or sent it so long ago that it was forgotten).
   */
  late(opaque: number): boolean {
    return this.gone.delete(opaque);
  }

  private forget(opaque: number): void {
    this.gone.add(opaque);
    if (this.gone.size > GONE_OPAQUES_KEPT) this.gone.delete(this.gone.values().next().value!);
  }

  /** Stop the sweeper and fail every call with RemotingClosedError (cause: `reason`). */
  failAll(reason: Error | undefined): void {
    if (this.sweepTimer) this.clock.clearTimeout(this.sweepTimer);
    this.sweepTimer = null;
    this.sweepAt = Infinity;
    const now = this.clock.now();
    const pending = this.calls.values();
    this.calls.clear();
    for (const p of pending) {
      if (p.signal) this.unwatchAbort(p);
      p.reject(new RemotingClosedError(this.addr, p.opaque, p.code, now - p.start, { cause: reason }));
    }
  }

  private watchAbort(signal: AbortSignal, p: Pending): void {
    let g = this.abortGroups.get(signal);
    if (g === undefined) {
      const calls = new PendingTable<Pending>();
      const onAbort = (): void => {
        this.abortGroups.delete(signal);
        const now = this.clock.now();
        // In the order the calls were made, as one listener per call fired.
        for (const c of calls.values()) {
          if (this.calls.get(c.opaque) !== c) continue;
          this.calls.delete(c.opaque);
          this.forget(c.opaque);
          c.reject(new RemotingAbortError(this.addr, c.opaque, c.code, now - c.start, { cause: signal.reason }));
        }
      };
      g = { calls, onAbort };
      this.abortGroups.set(signal, g);
      signal.addEventListener('abort', onAbort, { once: true });
    }
    g.calls.set(p);
  }

  /** A call finished: stop watching its signal, and drop the listener once no call of ours uses it. */
  private unwatchAbort(p: Pending): void {
    const signal = p.signal!;
    const g = this.abortGroups.get(signal);
    if (g === undefined || g.calls.get(p.opaque) !== p) return;
    g.calls.delete(p.opaque);
    if (g.calls.size > 0) return;
    this.abortGroups.delete(signal);
    signal.removeEventListener('abort', g.onAbort);
  }

  private armSweeper(deadline: number): void {
    if (this.sweepTimer) this.clock.clearTimeout(this.sweepTimer);
    this.sweepAt = deadline;
    this.sweepTimer = this.clock.setTimeout(() => this.sweep(), Math.max(0, deadline - this.clock.now()) + 1);
  }

  private sweep(): void {
    this.sweepTimer = null;
    this.sweepAt = Infinity;
    const now = this.clock.now();
    let next = Infinity;
    let expired: Pending[] | null = null;
    for (const p of this.calls.values()) {
      if (p.deadline <= now) {
        (expired ??= []).push(p);
      } else if (p.deadline < next) {
        next = p.deadline;
      }
    }
    if (next !== Infinity) this.armSweeper(next);
    if (expired === null) return;
    // Fail them in deadline order, even when a stalled event loop lets several expire in one sweep.
    expired.sort((a, b) => a.deadline - b.deadline);
    for (const p of expired) {
      this.calls.delete(p.opaque);
      this.timeouts++;
      this.forget(p.opaque);
      if (p.signal) this.unwatchAbort(p);
      log('%s to %s timed out (opaque %d)', requestCodeName(p.code), this.addr, p.opaque);
      p.reject(new RemotingTimeoutError(this.addr, p.opaque, p.code, now - p.start, p.timeoutMs));
    }
  }
}
