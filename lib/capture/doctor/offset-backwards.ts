import { RequestCode, requestCodeName } from '../../../protocol/index.js';
import { requestTopicAndGroup } from '../stats.js';
import { defined, type DoctorCheck } from './check.js';
import type { Finding } from './finding.js';
import { int, isPull, queueOf, type DoctorContext, type DoctorFrame, type QueueRef } from './observe.js';
import { commitOf } from './offsets.js';

interface Seen {
  q: QueueRef;
  /** The last offset the group committed on the queue. */
  last: number;
  times: number;
  first?: {
    ms: number;
    lastMs: number;
    from: number;
    to: number;
    via: 'commit' | 'pull';
    flow: string;
    opaque: number;
    code: number;
    reset: string | null;
  };
}

/** Requests that move a group's offsets on purpose. */
const RESETS = new Set<number>([RequestCode.INVOKE_BROKER_TO_RESET_OFFSET, RequestCode.RESET_CONSUMER_CLIENT_OFFSET]);

/**
 * Offsets going backwards: on a queue, a group's commit lower than the commit before it, or a
 * pull of the group from an offset below what it had committed (the broker's stored offset went
 * back: a server-side reset, or a client restarting from an older offset).
 */
export class OffsetBackwardsCheck implements DoctorCheck {
  readonly id = 'offset-backwards';
  private readonly queues = new Map<string, Seen>();
  /** Offset resets seen, by group and topic: the likely cause, named in the summary. */
  private readonly resets = new Map<string, string>();

  frame(f: DoctorFrame): void {
    const req = f.request;
    if (f.response || !req) return;
    if (RESETS.has(req.code)) {
      const { topic, group } = requestTopicAndGroup(req.code, req.ext);
      if (topic !== undefined && group !== undefined)
        this.resets.set(`${group}\u0000${topic}`, requestCodeName(req.code));
      return;
    }
    const c = commitOf(f);
    if (c) {
      const s = this.queues.get(c.q.key);
      if (!s) {
        this.queues.set(c.q.key, { q: c.q, last: c.offset, times: 0 });
        return;
      }
      if (c.offset < s.last) this.backwards(s, f, s.last, c.offset, 'commit');
      s.last = c.offset;
      return;
    }
    if (!isPull(req.code)) return;
    const q = queueOf(req);
    const s = q ? this.queues.get(q.key) : undefined;
    const offset = int(req.ext?.queueOffset);
    if (s && offset !== null && offset >= 0 && offset < s.last) {
      this.backwards(s, f, s.last, offset, 'pull');
      // What the group reads from now on is where it stands.
      s.last = offset;
    }
  }

  private backwards(s: Seen, f: DoctorFrame, from: number, to: number, via: 'commit' | 'pull'): void {
    s.times++;
    const req = f.request!;
    if (s.first) {
      s.first.lastMs = f.ms;
      return;
    }
    const reset = this.resets.get(`${s.q.group}\u0000${s.q.topic}`) ?? null;
    s.first = { ms: f.ms, lastMs: f.ms, from, to, via, flow: req.flow, opaque: req.opaque, code: req.code, reset };
  }

  finish(ctx: DoctorContext): Finding[] {
    const out: Finding[] = [];
    for (const s of this.queues.values()) {
      if (!s.first) continue;
      const label = ctx.queueLabel(s.q);
      const d = s.first;
      const how =
        d.via === 'commit'
          ? `a commit of ${d.to} after ${d.from}`
          : `a pull from offset ${d.to} after ${d.from} was committed`;
      out.push({
        check: this.id,
        severity: 'warning',
        summary:
          `offset of group ${s.q.group} on ${label} went backwards ${s.times === 1 ? 'once' : `${s.times} times`} (first ${d.from} → ${d.to}: ${how}` +
          `${d.reset ? `; the capture shows an offset reset (${d.reset}) before it` : ''})`,
        meaning:
          'An offset reset, or a consumer that lost the queue in a rebalance (or restarted from an older stored offset) committing ' +
          'behind the one before: the messages between the two offsets will be consumed again by the group.',
        evidence: defined({
          firstMs: d.ms,
          lastMs: d.lastMs,
          flow: d.flow,
          opaque: d.opaque,
          queue: label,
          group: s.q.group,
          code: d.code,
          count: s.times,
        }),
      });
    }
    return out;
  }
}
