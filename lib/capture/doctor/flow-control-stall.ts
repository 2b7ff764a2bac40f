import { ResponseCode } from '../../../protocol/index.js';
import { defined, duration, type DoctorCheck } from './check.js';
import type { Finding } from './finding.js';
import { isPull, queueOf, type DoctorContext, type DoctorFrame, type QueueRef } from './observe.js';

interface QueueState {
  q: QueueRef;
  client: string;
  flow: string;
  /** The last pull answer that found messages, while no next pull has gone out. */
  found: { ms: number; opaque: number } | null;
  pauses: number;
  longestMs: number;
  totalMs: number;
  first: { ms: number; opaque: number } | null;
  lastMs: number;
  atEnd: boolean;
}

/**
 * Flow-control stalls, inferred from the gaps: a pull of a queue that found messages, then no next
 * pull of that queue from the same client for flowControlGapMs or more. The push consumer pulls
 * again at once after messages unless its process queue is over a limit, where it retries every
 * 50 ms until the cache drains; the capture shows only the gap.
 */
export class FlowControlStallCheck implements DoctorCheck {
  readonly id = 'flow-control-stall';
  private readonly queues = new Map<string, QueueState>();
  /** Last request each client sent, to tell a consumer still pausing from one that went away. */
  private readonly lastRequestMs = new Map<string, number>();

  frame(f: DoctorFrame, ctx: DoctorContext): void {
    const req = f.request;
    if (!req) return;
    if (!f.response && req.src !== null) {
      this.lastRequestMs.set(req.src, f.ms);
    }
    if (!isPull(req.code)) return;
    const q = queueOf(req);
    if (!q) return;
    const key = `${q.key}\u0000${req.src}`;
    let s = this.queues.get(key);
    if (!f.response) {
      if (s?.found) {
        const gap = f.ms - s.found.ms;
        if (gap >= ctx.options.flowControlGapMs) this.pause(s, s.found, gap, f.ms);
        s.found = null;
      }
      return;
    }
    if (f.frame.cmd.code !== ResponseCode.SUCCESS) return;
    if (!s) {
      s = {
        q,
        client: req.src ?? '',
        flow: req.flow,
        found: null,
        pauses: 0,
        longestMs: 0,
        totalMs: 0,
        first: null,
        lastMs: 0,
        atEnd: false,
      };
      this.queues.set(key, s);
    }
    s.found = { ms: f.ms, opaque: req.opaque };
  }

  private pause(s: QueueState, from: { ms: number; opaque: number }, gap: number, until: number): void {
    s.pauses++;
    s.totalMs += gap;
    s.longestMs = Math.max(s.longestMs, gap);
    s.first ??= from;
    s.lastMs = until;
  }

  finish(ctx: DoctorContext): Finding[] {
    const out: Finding[] = [];
    for (const s of this.queues.values()) {
      if (s.found) {
        // No next pull by the end: a stall only if the client was still sending afterwards.
        const alive = this.lastRequestMs.get(s.client) ?? -Infinity;
        const gap = ctx.endMs - s.found.ms;
        if (gap >= ctx.options.flowControlGapMs && alive - s.found.ms >= ctx.options.flowControlGapMs) {
          this.pause(s, s.found, gap, ctx.endMs);
          s.atEnd = true;
        }
      }
      if (s.pauses === 0) continue;
      const label = ctx.queueLabel(s.q);
      out.push({
        check: this.id,
        severity: 'warning',
        summary:
          `pulls of ${label} (group ${s.q.group}) paused ${s.pauses === 1 ? 'once' : `${s.pauses} times`} right after finding messages` +
          ` (longest ${duration(s.longestMs)}, ${duration(s.totalMs)} in all${s.atEnd ? '; still paused when the capture ended' : ''})`,
        meaning:
          'The consumer held back its next pull although the broker had just returned messages: its cache of the queue is over a ' +
          'flow-control limit (pullThresholdForQueue 1000 messages, pullThresholdSizeForQueue 100 MiB, or a span of 2000 offsets) and ' +
          'it retries every 50 ms until the cache drains. Handlers are slower than the queue fills, or one is blocked; add consume ' +
          'threads or fix the handler. (A pullInterval above 0 makes such gaps on purpose.)',
        evidence: defined({
          firstMs: s.first!.ms,
          lastMs: s.lastMs,
          flow: s.flow,
          opaque: s.first!.opaque,
          queue: label,
          group: s.q.group,
          count: s.pauses,
        }),
      });
    }
    return out;
  }
}
