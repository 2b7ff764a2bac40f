import { defined, type DoctorCheck } from './check.js';
import type { Finding } from './finding.js';
import type { DoctorContext, DoctorFrame, QueueRef } from './observe.js';
import { commitOf } from './offsets.js';

interface Seen {
  q: QueueRef;
  last: number;
  times: number;
  first?: { ms: number; lastMs: number; from: number; to: number; flow: string; opaque: number; code: number };
}

/** Offsets going backwards: a group's commit on a queue lower than the commit before it. */
export class OffsetBackwardsCheck implements DoctorCheck {
  readonly id = 'offset-backwards';
  private readonly queues = new Map<string, Seen>();

  frame(f: DoctorFrame): void {
    const c = commitOf(f);
    if (!c) return;
    const s = this.queues.get(c.q.key);
    if (!s) {
      this.queues.set(c.q.key, { q: c.q, last: c.offset, times: 0 });
      return;
    }
    if (c.offset < s.last) {
      s.times++;
      const req = f.request!;
      if (!s.first) s.first = { ms: f.ms, lastMs: f.ms, from: s.last, to: c.offset, flow: req.flow, opaque: req.opaque, code: req.code };
      else s.first.lastMs = f.ms;
    }
    s.last = c.offset;
  }

  finish(ctx: DoctorContext): Finding[] {
    const out: Finding[] = [];
    for (const s of this.queues.values()) {
      if (!s.first) continue;
      const label = ctx.queueLabel(s.q);
      out.push({
        check: this.id,
        severity: 'warning',
        summary: `committed offset of group ${s.q.group} on ${label} went backwards ${s.times === 1 ? 'once' : `${s.times} times`} (first ${s.first.from} → ${s.first.to})`,
        meaning:
          'An offset reset, or a consumer that lost the queue in a rebalance (or restarted from an older stored offset) committing ' +
          'behind the one before: the messages between the two offsets will be consumed again by the group.',
        evidence: defined({ firstMs: s.first.ms, lastMs: s.first.lastMs, flow: s.first.flow, opaque: s.first.opaque, queue: label, group: s.q.group, code: s.first.code, count: s.times }),
      });
    }
    return out;
  }
}
