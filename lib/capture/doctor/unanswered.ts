import { requestCodeName } from '../../../protocol/index.js';
import { defined, duration, type DoctorCheck } from './check.js';
import type { Finding } from './finding.js';
import { isPull, queueOf, type DoctorContext, type SeenRequestInfo } from './observe.js';
import { requestTopicAndGroup } from '../stats.js';

/**
 * Requests never answered: a request (not oneway, not a pull: long-poll-unanswered has those)
 * without a response while the capture went on unansweredAfterMs or more after it. One finding per
 * request code and flow.
 */
export class UnansweredCheck implements DoctorCheck {
  readonly id = 'unanswered';

  frame(): void {}

  finish(ctx: DoctorContext, unanswered: readonly SeenRequestInfo[]): Finding[] {
    const end = ctx.endMs;
    const by = new Map<string, { first: SeenRequestInfo; lastMs: number; count: number }>();
    for (const r of unanswered) {
      if (isPull(r.code) || end - r.ms < ctx.options.unansweredAfterMs) continue;
      const key = `${r.code}\u0000${r.flow}`;
      const e = by.get(key);
      if (e) {
        e.count++;
        e.lastMs = r.ms;
      } else by.set(key, { first: r, lastMs: r.ms, count: 1 });
    }
    return [...by.values()].map(({ first, lastMs, count }) => {
      const q = queueOf(first);
      const { topic, group } = requestTopicAndGroup(first.code, first.ext);
      const about =
        topic !== undefined
          ? ` (topic ${topic}${group !== undefined ? `, group ${group}` : ''})`
          : group !== undefined
            ? ` (group ${group})`
            : '';
      return {
        check: this.id,
        severity: 'error',
        summary:
          `${count === 1 ? 'a' : count} ${requestCodeName(first.code)} request${count === 1 ? '' : 's'}${about} never answered` +
          ` (${count === 1 ? 'sent' : 'the first sent'} ${duration(end - first.ms)} before the capture ended)`,
        meaning:
          'No response came back on the connection: the peer is stalled (GC pause, overload, a stopped process, a full disk) or ' +
          'the connection is broken one way, or the capture lost the response (see the capture problems reported). The client ' +
          'gives up after its timeout (3 s for most requests) and retries or fails the call.',
        evidence: defined({
          firstMs: first.ms,
          lastMs,
          flow: first.flow,
          opaque: first.opaque,
          queue: q ? ctx.queueLabel(q) : undefined,
          group,
          code: first.code,
          count,
        }),
      };
    });
  }
}
