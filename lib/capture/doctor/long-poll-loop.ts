import { ResponseCode, responseCodeName } from '../../../protocol/index.js';
import { defined, duration, type DoctorCheck } from './check.js';
import type { Finding } from './finding.js';
import { isPull, pullSuspendMs, queueOf, type DoctorContext, type DoctorFrame, type QueueRef } from './observe.js';

const EMPTY = new Set<number>([
  ResponseCode.PULL_NOT_FOUND,
  ResponseCode.PULL_RETRY_IMMEDIATELY,
  ResponseCode.PULL_OFFSET_MOVED,
]);

interface Run {
  q: QueueRef;
  flow: string;
  count: number;
  firstMs: number;
  lastMs: number;
  opaque: number;
  codes: Map<number, number>;
  /** Pulls of the run without FLAG_SUSPEND, and the largest suspend time asked for. */
  unsuspended: number;
  maxSuspendMs: number;
}

/**
 * Long polls that return at once in a loop: on one queue, longPollLoopCount or more pulls in a row
 * answered without messages faster than longPollImmediateMs. A held long poll comes back after its
 * suspend time (15 s) or with messages, so a run of fast empty answers is a consumer spinning.
 */
export class LongPollLoopCheck implements DoctorCheck {
  readonly id = 'long-poll-loop';
  private readonly runs = new Map<string, Run>();
  /** The longest run of each queue and client, and how many runs made a loop. */
  private readonly worst = new Map<string, { run: Run; loops: number }>();

  frame(f: DoctorFrame, ctx: DoctorContext): void {
    const req = f.request;
    if (!f.response || !req || !isPull(req.code) || f.latencyMs === null) return;
    const q = queueOf(req);
    if (!q) return;
    const key = `${q.key}\u0000${req.src}`;
    const code = f.frame.cmd.code;
    const run = this.runs.get(key);
    if (!EMPTY.has(code) || f.latencyMs >= ctx.options.longPollImmediateMs) {
      if (run) this.close(key, run, ctx);
      return;
    }
    const suspend = pullSuspendMs(req.ext);
    if (run) {
      run.count++;
      run.lastMs = f.ms;
      run.codes.set(code, (run.codes.get(code) ?? 0) + 1);
      if (suspend === null) run.unsuspended++;
      else run.maxSuspendMs = Math.max(run.maxSuspendMs, suspend);
      return;
    }
    this.runs.set(key, {
      q,
      flow: req.flow,
      count: 1,
      firstMs: req.ms,
      lastMs: f.ms,
      opaque: req.opaque,
      codes: new Map([[code, 1]]),
      unsuspended: suspend === null ? 1 : 0,
      maxSuspendMs: suspend ?? 0,
    });
  }

  private close(key: string, run: Run, ctx: DoctorContext): void {
    this.runs.delete(key);
    if (run.count < ctx.options.longPollLoopCount) return;
    const w = this.worst.get(key);
    if (!w) this.worst.set(key, { run, loops: 1 });
    else {
      w.loops++;
      if (run.count > w.run.count) w.run = run;
    }
  }

  finish(ctx: DoctorContext): Finding[] {
    for (const [key, run] of [...this.runs]) this.close(key, run, ctx);
    return [...this.worst.values()].map(({ run, loops }) => {
      const codes = [...run.codes.entries()].sort((a, b) => b[1] - a[1]);
      const top = codes[0]![0];
      const label = ctx.queueLabel(run.q);
      let meaning: string;
      if (run.unsuspended === run.count) {
        meaning =
          "The pulls do not ask the broker to hold them (FLAG_SUSPEND is not set), so an empty queue is polled in a tight loop: CPU and network spent for nothing. Long polling is the push consumer's default; check the client.";
      } else if (top === ResponseCode.PULL_OFFSET_MOVED) {
        meaning =
          'The broker keeps answering that the pull offset is illegal (PULL_OFFSET_MOVED) and the client pulls again without adopting nextBeginOffset or correcting its stored offset.';
      } else if (top === ResponseCode.PULL_RETRY_IMMEDIATELY) {
        meaning =
          'The queue holds messages but none matches the subscription (tag or SQL92 filter): the broker answers at once and the consumer pulls again. It stops when it reaches the end of the queue; an endless run means producers keep sending messages no one in the group subscribes to.';
      } else if (run.maxSuspendMs < ctx.options.longPollImmediateMs) {
        meaning = `The pulls ask to be held at most ${duration(run.maxSuspendMs)} (suspendTimeoutMillis; the push consumer's brokerSuspendMaxTimeMs), so an empty queue is polled in a tight loop. Java sends 15000.`;
      } else {
        meaning =
          'The broker answers held pulls at once with nothing instead of holding them: long polling is off on the broker (longPollingEnable=false), or the pull offset is past what the broker can hold for.';
      }
      return {
        check: this.id,
        severity: 'warning',
        summary:
          `pulls on ${label} (group ${run.q.group}) returned at once with no messages ${run.count} times in a row over ${duration(run.lastMs - run.firstMs)}` +
          ` (${codes.map(([c, n]) => `${responseCodeName(c)} ${n}`).join(', ')})${loops > 1 ? `; ${loops} such runs` : ''}`,
        meaning,
        evidence: defined({
          firstMs: run.firstMs,
          lastMs: run.lastMs,
          flow: run.flow,
          opaque: run.opaque,
          queue: label,
          group: run.q.group,
          code: top,
          count: run.count,
        }),
      };
    });
  }
}
