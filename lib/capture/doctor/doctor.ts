import type { DecodedFrame } from '../capture-decoder.js';
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

  constructor(options?: DoctorOptions) {
    this.ctx = new DoctorContext(resolveDoctorOptions(options));
  }

  add(frame: DecodedFrame): void {
    if (this.finished) throw new Error('CaptureDoctor.add after finish');
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
   * The findings: errors first, then by first time seen, check and summary (the same input gives
   * the same list). `endMs`: the capture's last packet time, when later than its last frame.
   */
  finish(endMs?: number): Finding[] {
    if (this.finished) return this.finished;
    if (endMs !== undefined && Number.isFinite(endMs)) this.ctx.endAtLeast(endMs);
    const unanswered = this.pairing.unanswered();
    const all = this.checks.flatMap((c) => c.finish(this.ctx, unanswered));
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
