import { defined, duration, type DoctorCheck } from './check.js';
import type { Finding } from './finding.js';
import type { DoctorContext, DoctorFrame, QueueRef } from './observe.js';
import { commitOf, queueEndKey, queueEndOf } from './offsets.js';

interface Stretch {
  offset: number;
  sinceMs: number;
  lastMs: number;
  commits: number;
  flow: string;
  opaque: number;
  /** The queue's known end when the stretch began, and the largest seen during it. */
  endAtStart: number | null;
  end: number | null;
}

/**
 * Lag growing: a group's committed offset on a queue stays where it is (commit after commit) for
 * lagStallMs or longer while the queue is known to hold messages past it.
 */
export class LagGrowingCheck implements DoctorCheck {
  readonly id = 'lag-growing';
  private readonly ends = new Map<string, number>();
  private readonly stretches = new Map<string, { q: QueueRef; s: Stretch }>();
  private readonly found = new Map<string, { q: QueueRef; s: Stretch; times: number }>();

  frame(f: DoctorFrame, ctx: DoctorContext): void {
    const end = queueEndOf(f);
    if (end) {
      const before = this.ends.get(end.key);
      if (before === undefined || end.maxOffset > before) this.ends.set(end.key, end.maxOffset);
      return;
    }
    const c = commitOf(f);
    if (!c) return;
    const queueEnd = this.ends.get(queueEndKey(c.q.topic, c.q.queueId, c.q.broker)) ?? null;
    const cur = this.stretches.get(c.q.key);
    if (cur && c.offset <= cur.s.offset) {
      // Not advancing (a lower one is offset-backwards' business; the stretch goes on from the lower offset).
      cur.s.offset = c.offset;
      cur.s.lastMs = f.ms;
      cur.s.commits++;
      if (queueEnd !== null && (cur.s.end === null || queueEnd > cur.s.end)) cur.s.end = queueEnd;
      return;
    }
    if (cur) this.close(cur.q, cur.s, ctx);
    this.stretches.set(c.q.key, {
      q: c.q,
      s: {
        offset: c.offset,
        sinceMs: f.ms,
        lastMs: f.ms,
        commits: 1,
        flow: f.request!.flow,
        opaque: f.request!.opaque,
        endAtStart: queueEnd,
        end: queueEnd,
      },
    });
  }

  private close(q: QueueRef, s: Stretch, ctx: DoctorContext): void {
    if (s.commits < 2 || s.lastMs - s.sinceMs < ctx.options.lagStallMs || s.end === null || s.end <= s.offset) return;
    const had = this.found.get(q.key);
    if (!had) this.found.set(q.key, { q, s, times: 1 });
    else {
      had.times++;
      if (s.lastMs - s.sinceMs > had.s.lastMs - had.s.sinceMs) had.s = s;
    }
  }

  finish(ctx: DoctorContext): Finding[] {
    for (const { q, s } of this.stretches.values()) this.close(q, s, ctx);
    return [...this.found.values()].map(({ q, s, times }) => {
      const label = ctx.queueLabel(q);
      const lagStart = s.endAtStart === null ? null : Math.max(0, s.endAtStart - s.offset);
      const lag = s.end! - s.offset;
      return {
        check: this.id,
        severity: 'error',
        summary:
          `committed offset of group ${q.group} on ${label} stayed at ${s.offset} for ${duration(s.lastMs - s.sinceMs)} (${s.commits} commits)` +
          ` while the queue held messages up to ${s.end! - 1}: lag ${lagStart === null || lagStart === lag ? lag : `${lagStart} → ${lag}`}` +
          `${times > 1 ? `; ${times} such stretches` : ''}`,
        meaning:
          'The group pulls but does not finish the messages of this queue: the offset a consumer commits is the smallest it still has ' +
          'in process, so one handler call that blocks or keeps failing (an orderly consumer retrying a message) holds it back. ' +
          "The lag grows until flow control stops the pulls. Look at the consumer's handlers (consumer status, thread dump).",
        evidence: defined({
          firstMs: s.sinceMs,
          lastMs: s.lastMs,
          flow: s.flow,
          opaque: s.opaque,
          queue: label,
          group: q.group,
          count: s.commits,
        }),
      };
    });
  }
}
