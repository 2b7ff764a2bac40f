import { requestCodeName } from '../../../protocol/index.js';
import { defined, duration, type DoctorCheck } from './check.js';
import type { Finding } from './finding.js';
import {
  isPull,
  pullSuspendMs,
  queueOf,
  type DoctorContext,
  type DoctorFrame,
  type SeenRequestInfo,
} from './observe.js';

/**
 * Slow responses: latency over slowResponseMs. A pull the broker may hold counts only past its
 * suspend time plus longPollMarginMs (the broker's 5 s hold check). One finding per request code.
 */
export class SlowResponseCheck implements DoctorCheck {
  readonly id = 'slow-response';
  private readonly codes = new Map<
    number,
    { first: SeenRequestInfo; firstLatency: number; lastMs: number; count: number; slowest: number; held: boolean }
  >();

  frame(f: DoctorFrame, ctx: DoctorContext): void {
    const req = f.request;
    if (!f.response || !req || f.latencyMs === null) return;
    const suspend = isPull(req.code) ? pullSuspendMs(req.ext) : null;
    const limit = suspend === null ? ctx.options.slowResponseMs : suspend + ctx.options.longPollMarginMs;
    if (f.latencyMs <= limit) return;
    const e = this.codes.get(req.code);
    if (e) {
      e.count++;
      e.lastMs = f.ms;
      e.slowest = Math.max(e.slowest, f.latencyMs);
    } else {
      this.codes.set(req.code, {
        first: req,
        firstLatency: f.latencyMs,
        lastMs: f.ms,
        count: 1,
        slowest: f.latencyMs,
        held: suspend !== null,
      });
    }
  }

  finish(ctx: DoctorContext): Finding[] {
    return [...this.codes.values()].map(({ first, firstLatency, lastMs, count, slowest, held }) => {
      const q = queueOf(first);
      const limit = held
        ? 'their suspend time plus ' + duration(ctx.options.longPollMarginMs)
        : duration(ctx.options.slowResponseMs);
      return {
        check: this.id,
        severity: 'warning',
        summary:
          `${count} ${requestCodeName(first.code)} response${count === 1 ? '' : 's'} slower than ${limit}` +
          ` (slowest ${duration(slowest)}${count > 1 ? `, first ${duration(firstLatency)}` : ''})`,
        meaning:
          'The broker (or name server) took long to answer: it is busy (disk flush, page cache misses, a full request queue), paused ' +
          "(GC, a stopped process), or the network is. Sends this slow come close to the producer's 3 s timeout and get retried, " +
          'which can store a message twice.',
        evidence: defined({
          firstMs: first.ms,
          lastMs,
          flow: first.flow,
          opaque: first.opaque,
          queue: q ? ctx.queueLabel(q) : undefined,
          group: q?.group,
          code: first.code,
          count,
        }),
      };
    });
  }
}
