import type { DecodedFrame } from '../capture-options.js';
import { CaptureStateError } from '../errors.js';
import type { CaptureProblem } from '../packet.js';
import type { DoctorCheck } from './check.js';
import { DuplicateDeliveryCheck } from './duplicate-delivery.js';
import { ErrorResponseCheck } from './error-response.js';
import type { Finding } from './finding.js';
import { FlowControlStallCheck } from './flow-control-stall.js';
import { LagGrowingCheck } from './lag-growing.js';
import { LongPollLoopCheck } from './long-poll-loop.js';
import { LongPollUnansweredCheck } from './long-poll-unanswered.js';
import { DoctorContext, Pairing } from './observe.js';
import { OffsetBackwardsCheck } from './offset-backwards.js';
import { resolveDoctorOptions, type DoctorOptions } from './options.js';
import { RebalanceStormCheck } from './rebalance-storm.js';
import { SlowResponseCheck } from './slow-response.js';
import { UnansweredCheck } from './unanswered.js';

/** The ids of the doctor's checks, in the order lib/capture/README.md describes them. */
export const DOCTOR_CHECKS = [
  'long-poll-unanswered',
  'long-poll-loop',
  'lag-growing',
  'offset-backwards',
  'flow-control-stall',
  'rebalance-storm',
  'error-response',
  'unanswered',
  'slow-response',
  'duplicate-delivery',
  'flows-evicted',
] as const;

/**
 * The capture doctor fed one frame at a time, for captures too large to hold: `add` every frame
 * the CaptureDecoder hands out (during its callback: message bodies are read there and then),
 * then `finish` once. `diagnose` does both for an iterable of frames.
 */
export class CaptureDoctor {
  private readonly ctx: DoctorContext;
  private readonly pairing = new Pairing();
  private readonly checks: DoctorCheck[] = [
    new LongPollUnansweredCheck(),
    new LongPollLoopCheck(),
    new LagGrowingCheck(),
    new OffsetBackwardsCheck(),
    new FlowControlStallCheck(),
    new RebalanceStormCheck(),
    new ErrorResponseCheck(),
    new UnansweredCheck(),
    new SlowResponseCheck(),
    new DuplicateDeliveryCheck(),
  ];
  private finished: Finding[] | null = null;
  /** Frames seen. */
  frames = 0;
  /** Flows the decoder evicted past maxFlows (from its 'flow-evicted' problems): the first, the last, how many. */
  private evicted: { firstMs: number; lastMs: number; flow: string | undefined; count: number } | null = null;

  constructor(options?: DoctorOptions) {
    this.ctx = new DoctorContext(resolveDoctorOptions(options));
  }

  add(frame: DecodedFrame): void {
    if (this.finished) throw new CaptureStateError('CaptureDoctor.add after finish');
    this.frames++;
    const f = this.pairing.see(frame);
    if (frame.ts !== null) {
      this.ctx.firstMs ??= f.ms;
      this.ctx.lastMs = Math.max(this.ctx.lastMs, f.ms);
    }
    this.ctx.learn(f);
    for (const c of this.checks) c.frame(f, this.ctx);
  }

  /**
   * A problem of the decoder (pass every one): flows it evicted past maxFlows are a finding of
   * their own, 'flows-evicted', since their frames were cut and their requests left unpaired.
   */
  addProblem(p: CaptureProblem): void {
    if (p.kind !== 'flow-evicted') return;
    const ms = p.ts !== undefined ? p.ts * 1000 : this.ctx.lastMs;
    if (this.evicted === null) this.evicted = { firstMs: ms, lastMs: ms, flow: p.flow, count: 1 };
    else {
      this.evicted.count++;
      this.evicted.lastMs = Math.max(this.evicted.lastMs, ms);
    }
  }

  /**
   * The findings: errors first, then by first time seen, check and summary (the same input gives
   * the same list). `endMs`: the capture's last packet time, when later than its last frame.
   */
  finish(endMs?: number): Finding[] {
    if (this.finished) return this.finished;
    if (endMs !== undefined && Number.isFinite(endMs)) this.ctx.endAtLeast(endMs);
    const unanswered = this.pairing.unanswered();
    const all = this.checks.flatMap((c) => c.finish(this.ctx, unanswered));
    if (this.evicted !== null) all.push(evictedFinding(this.evicted));
    all.sort(
      (a, b) =>
        (a.severity === b.severity ? 0 : a.severity === 'error' ? -1 : 1) ||
        a.evidence.firstMs - b.evidence.firstMs ||
        (a.check < b.check ? -1 : a.check > b.check ? 1 : 0) ||
        (a.summary < b.summary ? -1 : a.summary > b.summary ? 1 : 0),
    );
    this.finished = all;
    return all;
  }
}

function evictedFinding(e: { firstMs: number; lastMs: number; flow: string | undefined; count: number }): Finding {
  return {
    check: 'flows-evicted',
    severity: 'warning',
    summary: `${e.count} flow${e.count === 1 ? '' : 's'} evicted: more connections were open at once than the decoder tracks (maxFlows)`,
    meaning:
      'The decoder keeps state for at most maxFlows TCP flows (decode --max-flows, default 65536) and finished the least ' +
      'recently active ones early: a frame they were inside is lost, their requests were forgotten (a later answer is unpaired) ' +
      'and the other checks saw only part of those connections. A capture of a busy broker may need a higher limit; one of ' +
      'hundreds of thousands of short flows is more often a scan or a SYN flood than RocketMQ clients.',
    evidence: {
      firstMs: e.firstMs,
      lastMs: e.lastMs,
      ...(e.flow !== undefined ? { flow: e.flow.replace(' > ', ' -> ') } : {}),
      count: e.count,
    },
  };
}

/**
 * What is wrong in a capture: decoded frames (CaptureDecoder's, in capture order) in, findings
 * out. Pure: no I/O, no clock; times are the capture's. A frame's body must still be valid when it
 * is iterated (collect frames with their bodies copied, or use CaptureDoctor from the callback).
 */
export function diagnose(frames: Iterable<DecodedFrame>, options?: DoctorOptions): Finding[] {
  const d = new CaptureDoctor(options);
  for (const f of frames) d.add(f);
  return d.finish();
}
