import { DoctorOptionError } from '../errors.js';

/**
 * Thresholds of the capture doctor's checks. Every one has a default that follows the Java
 * client's and broker's own timings (lib/capture/README.md, "Doctor", says why each is what it is).
 */
export interface DoctorOptions {
  /** A response (a pull without FLAG_SUSPEND included) slower than this is slow. Default 1000 ms. */
  slowResponseMs?: number;
  /**
   * What a long poll may take beyond its suspendTimeoutMillis: the Java broker checks held pulls
   * every 5 s, so a pull may come back that much late. Past it the pull is slow, and a pull still
   * unanswered that long after its suspend time never returned. Default 5000 ms.
   */
  longPollMarginMs?: number;
  /** A request (not a pull) without an answer while the capture went on this long after it was never answered. Default 3000 ms (Java's RPC timeout). */
  unansweredAfterMs?: number;
  /** Empty pull answers in a row on one queue, each faster than longPollImmediateMs, that make a loop. Default 10. */
  longPollLoopCount?: number;
  /** An empty pull answer faster than this "returned at once" (a held long poll takes 1 s or more). Default 500 ms. */
  longPollImmediateMs?: number;
  /** How long a group's committed offset may stay put while its queue holds newer messages. Default 15000 ms (three of Java's 5 s offset flushes). */
  lagStallMs?: number;
  /** A pause this long between a pull that found messages and the next pull of the queue is a stall. Default 1000 ms. */
  flowControlGapMs?: number;
  /** Membership changes of one group (NOTIFY_CONSUMER_IDS_CHANGED bursts) within rebalanceStormWindowMs that make a storm. Default 5. */
  rebalanceStormCount?: number;
  /** Default 60000 ms. */
  rebalanceStormWindowMs?: number;
  /** Notifications of one group closer than this to the one before belong to the same change (one per client and broker). Default 1000 ms. */
  rebalanceBurstMs?: number;
  /**
   * SUBSCRIPTION_NOT_LATEST / FILTER_DATA_NOT_LATEST answers to a consumer's pulls of one queue that
   * a pull of the same consumer, group and queue answered normally within this time after the first
   * of them are not reported: the consumer pulled with a new subscription version a moment before
   * its heartbeat carried it (the Java client does so when the heartbeat after a rebalance loses its
   * tryLock) and healed by itself. Default 10000 ms (Java's 3 s pull back-off after an error, and
   * more).
   */
  transientRefusalHealMs?: number;
  /** Message ids remembered for duplicate deliveries; past it the oldest are forgotten. Default 1 000 000. */
  maxTrackedMessages?: number;
  /** End of the capture in epoch ms (the last packet's time), when later than the last frame's. */
  endMs?: number;
}

export type ResolvedDoctorOptions = Required<Omit<DoctorOptions, 'endMs'>> & { endMs: number | null };

export function defaultDoctorOptions(): ResolvedDoctorOptions {
  return {
    slowResponseMs: 1000,
    longPollMarginMs: 5000,
    unansweredAfterMs: 3000,
    longPollLoopCount: 10,
    longPollImmediateMs: 500,
    lagStallMs: 15000,
    flowControlGapMs: 1000,
    rebalanceStormCount: 5,
    rebalanceStormWindowMs: 60000,
    rebalanceBurstMs: 1000,
    transientRefusalHealMs: 10000,
    maxTrackedMessages: 1_000_000,
    endMs: null,
  };
}

const INTEGERS = new Set(['longPollLoopCount', 'rebalanceStormCount', 'maxTrackedMessages']);

/** Defaults filled in, every value checked: a number of its range, or DoctorOptionError naming it. */
export function resolveDoctorOptions(options: DoctorOptions = {}): ResolvedDoctorOptions {
  const r = defaultDoctorOptions();
  for (const [k, v] of Object.entries(options) as [keyof DoctorOptions, unknown][]) {
    if (v === undefined) continue;
    if (!(k in r)) throw new DoctorOptionError(k, 'is not a doctor option');
    if (typeof v !== 'number' || !Number.isFinite(v))
      throw new DoctorOptionError(k, `must be a finite number, got ${String(v)}`);
    if (k === 'endMs') {
      r.endMs = v;
      continue;
    }
    const min = INTEGERS.has(k) ? 1 : 0;
    if (v < min || (INTEGERS.has(k) && !Number.isInteger(v))) {
      throw new DoctorOptionError(k, `must be ${INTEGERS.has(k) ? 'an integer ' : ''}>= ${min}, got ${v}`);
    }
    (r as Record<string, number | null>)[k] = v;
  }
  return r;
}
