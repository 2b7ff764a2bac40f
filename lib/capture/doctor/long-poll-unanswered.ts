import { requestCodeName } from '../../../protocol/index.js';
import { defined, duration, type DoctorCheck } from './check.js';
import type { Finding } from './finding.js';
import { isPull, pullSuspendMs, queueOf, type DoctorContext, type SeenRequestInfo } from './observe.js';

/**
 * Long polls that never return: a pull still unanswered when the capture ended, although the
 * capture went on past its suspend time plus the broker's check period (longPollMarginMs). One
 * finding per queue.
 */
export class LongPollUnansweredCheck implements DoctorCheck {
  readonly id = 'long-poll-unanswered';

  frame(): void {}

  finish(ctx: DoctorContext, unanswered: readonly SeenRequestInfo[]): Finding[] {
    const byQueue = new Map<
      string,
      { first: SeenRequestInfo; last: SeenRequestInfo; count: number; label: string; group: string | undefined }
    >();
    const end = ctx.endMs;
    for (const r of unanswered) {
      if (!isPull(r.code)) continue;
      const suspend = pullSuspendMs(r.ext);
      const limit = suspend === null ? ctx.options.unansweredAfterMs : suspend + ctx.options.longPollMarginMs;
      if (end - r.ms < limit) continue;
      const q = queueOf(r);
      const key = `${q?.key ?? ''}\u0000${r.flow}`;
      const e = byQueue.get(key);
      if (e) {
        e.count++;
        e.last = r;
      } else {
        byQueue.set(key, { first: r, last: r, count: 1, label: q ? ctx.queueLabel(q) : '', group: q?.group });
      }
    }
    return [...byQueue.values()].map(({ first, last, count, label, group }) => {
      const suspend = pullSuspendMs(first.ext);
      const what = `${requestCodeName(first.code)}${label ? ` on ${label}` : ''}${group ? ` (group ${group})` : ''}`;
      return {
        check: this.id,
        severity: 'error',
        summary:
          `${count === 1 ? 'a' : count} ${what} never returned: ${count === 1 ? 'it was' : 'the first was'} sent ${duration(end - first.ms)} before the capture ended` +
          ` (suspend ${suspend === null ? 'none' : duration(suspend)})`,
        meaning:
          'The broker did not answer a pull within its suspend time plus its 5 s hold check: the broker is stalled (GC pause, ' +
          'overload, a stopped process) or the connection is broken one way. The consumer waits for its 30 s pull timeout, then ' +
          'pulls again 1 s later; the queue gets no messages meanwhile.',
        evidence: defined({
          firstMs: first.ms,
          lastMs: last.ms,
          flow: first.flow,
          opaque: first.opaque,
          queue: label,
          group,
          code: first.code,
          count,
        }),
      };
    });
  }
}
