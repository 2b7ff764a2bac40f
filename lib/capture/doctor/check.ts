import type { Finding } from './finding.js';
import type { DoctorContext, DoctorFrame, SeenRequestInfo } from './observe.js';

/** One check of the capture doctor: sees every frame in capture order, then says what it found. */
export interface DoctorCheck {
  /** The Finding.check id of what it reports. */
  readonly id: string;
  frame(f: DoctorFrame, ctx: DoctorContext): void;
  /** `unanswered`: requests still waiting for an answer at the end of the capture, oldest first. */
  finish(ctx: DoctorContext, unanswered: readonly SeenRequestInfo[]): Finding[];
}

/** "350 ms", "2.41 s". */
export function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  return `${(ms / 1000).toFixed(ms < 10000 ? 2 : 1)} s`;
}

/** Drop undefined members, so that evidence objects carry only what is known (exactOptionalPropertyTypes). */
export function defined<T extends object>(o: T): { [K in keyof T]: Exclude<T[K], undefined> } {
  const r = {} as Record<string, unknown>;
  for (const [k, v] of Object.entries(o)) if (v !== undefined && v !== '') r[k] = v;
  return r as { [K in keyof T]: Exclude<T[K], undefined> };
}
