import { RequestCode } from '../../../protocol/index.js';
import { defined, duration, type DoctorCheck } from './check.js';
import type { Finding } from './finding.js';
import type { DoctorContext, DoctorFrame } from './observe.js';

interface Change {
  ms: number;
  flow: string;
  opaque: number;
}

/**
 * Rebalance storms: a broker sends NOTIFY_CONSUMER_IDS_CHANGED to every member of a group whenever
 * one joins or leaves. Notifications of a group closer together than rebalanceBurstMs are one
 * change; rebalanceStormCount changes or more within rebalanceStormWindowMs are a storm.
 */
export class RebalanceStormCheck implements DoctorCheck {
  readonly id = 'rebalance-storm';
  private readonly groups = new Map<string, { changes: Change[]; lastMs: number; frames: number }>();

  frame(f: DoctorFrame, ctx: DoctorContext): void {
    const cmd = f.frame.cmd;
    if (f.response || cmd.code !== RequestCode.NOTIFY_CONSUMER_IDS_CHANGED) return;
    const group = cmd.extFields?.consumerGroup;
    if (group === undefined) return;
    let g = this.groups.get(group);
    if (!g) this.groups.set(group, (g = { changes: [], lastMs: -Infinity, frames: 0 }));
    g.frames++;
    if (f.ms - g.lastMs > ctx.options.rebalanceBurstMs)
      g.changes.push({ ms: f.ms, flow: f.request!.flow, opaque: cmd.opaque });
    g.lastMs = f.ms;
  }

  finish(ctx: DoctorContext): Finding[] {
    const out: Finding[] = [];
    const { rebalanceStormCount: count, rebalanceStormWindowMs: window } = ctx.options;
    for (const [group, g] of this.groups) {
      // The window holding the most changes.
      let best = { from: 0, n: 0 };
      for (let i = 0, j = 0; j < g.changes.length; j++) {
        while (g.changes[j]!.ms - g.changes[i]!.ms > window) i++;
        if (j - i + 1 > best.n) best = { from: i, n: j - i + 1 };
      }
      if (best.n < count) continue;
      const first = g.changes[best.from]!;
      const last = g.changes[best.from + best.n - 1]!;
      out.push({
        check: this.id,
        severity: 'warning',
        summary:
          `group ${group}'s members changed ${best.n} times in ${duration(last.ms - first.ms)}` +
          ` (${g.changes.length} changes, ${g.frames} NOTIFY_CONSUMER_IDS_CHANGED in the capture)`,
        meaning:
          'Consumers of the group keep joining and leaving: restarts one after another, crashes, clients whose channel expires ' +
          '(no heartbeat for 120 s), or a client flapping between brokers. Each change makes every member rebalance at once, ' +
          'dropping and taking queues again: consumption pauses and messages not yet committed are consumed twice.',
        evidence: defined({
          firstMs: first.ms,
          lastMs: last.ms,
          flow: first.flow,
          opaque: first.opaque,
          group,
          code: RequestCode.NOTIFY_CONSUMER_IDS_CHANGED,
          count: best.n,
        }),
      });
    }
    return out;
  }
}
