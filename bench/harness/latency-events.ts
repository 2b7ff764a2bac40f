/**
 * Figures of the latency bench's event phases (latency.ts: a member joins the group, the broker
 * restarts), computed from every message of the phase as each process dumped it (SampleLog in
 * latency-record.ts): latency percentiles over windows of due time, when the group converged,
 * the longest silence of a consumer, and what a consumer never handled or handled twice.
 */
import type { LatencyHistogram } from './histogram.js';
import { NO_QUEUE, newHistogram, percentiles, type Percentiles, type Samples } from './latency-record.js';

/** Due time → handler percentiles of the messages due in [fromUs, toUs). */
export function windowPercentiles(all: readonly Samples[], fromUs: number, toUs: number): Percentiles {
  const h: LatencyHistogram = newHistogram();
  for (const s of all) {
    for (let i = 0; i < s.sentUs.length; i++) {
      const sent = s.sentUs[i]!;
      if (sent >= fromUs && sent < toUs) h.record((s.handledUs[i]! - sent) / 1000);
    }
  }
  return percentiles(h);
}

/**
 * When the members of one group settled after a join at `joinUs`: for each queue, its owner at the
 * end is the member that handled its latest-due message; a queue whose messages another member
 * also handled after the join moved, and it settled when the last of those was handled and the new
 * owner had handled its first. Null when no queue moved (the joining member got nothing).
 */
export function convergence(
  members: readonly Samples[],
  joinUs: number,
): { convergedUs: number | null; movedQueues: number; duplicates: number } {
  // Per queue: the member with the latest due message, and per member its first and last handled time after the join.
  const owner = new Map<number, { member: number; sent: number }>();
  const spans = members.map(() => new Map<number, { first: number; last: number }>());
  members.forEach((s, m) => {
    for (let i = 0; i < s.sentUs.length; i++) {
      const q = s.queueId[i]!;
      const o = owner.get(q);
      if (!o || s.sentUs[i]! > o.sent) owner.set(q, { member: m, sent: s.sentUs[i]! });
      const t = s.handledUs[i]!;
      if (t < joinUs) continue;
      const span = spans[m]!.get(q);
      if (!span) spans[m]!.set(q, { first: t, last: t });
      else {
        if (t < span.first) span.first = t;
        if (t > span.last) span.last = t;
      }
    }
  });
  let convergedUs: number | null = null;
  let moved = 0;
  for (const [q, o] of owner) {
    let settled: number | null = null;
    for (let m = 0; m < members.length; m++) {
      const span = spans[m]!.get(q);
      if (m === o.member || !span) continue;
      settled = Math.max(settled ?? 0, span.last, spans[o.member]!.get(q)?.first ?? 0);
    }
    if (settled !== null) {
      moved++;
      convergedUs = Math.max(convergedUs ?? 0, settled);
    }
  }
  return { convergedUs, movedQueues: moved, duplicates: duplicates(members) };
}

/** Messages handled more than once, by one member or by several (counted once per extra delivery). */
export function duplicates(members: readonly Samples[]): number {
  const seen = new Set<number>();
  let dup = 0;
  for (const s of members) {
    for (let i = 0; i < s.seq.length; i++) {
      const k = s.seq[i]!;
      if (seen.has(k)) dup++;
      else seen.add(k);
    }
  }
  return dup;
}

/** Sequences the producer had acknowledged that no member handled. */
export function lost(producer: Samples, members: readonly Samples[]): number[] {
  const handled = new Set<number>();
  for (const s of members) for (const k of s.seq) handled.add(k);
  const out: number[] = [];
  for (let i = 0; i < producer.seq.length; i++) {
    if (producer.queueId[i] !== NO_QUEUE && !handled.has(producer.seq[i]!)) out.push(producer.seq[i]!);
  }
  return out.sort((a, b) => a - b);
}

/**
 * The longest time between two messages handled one after the other (the members of a group taken
 * together), with its start and end in µs: across a broker restart, the last message handled
 * before it and the first after it. Null with fewer than two messages.
 */
export function longestGap(members: readonly Samples[]): { fromUs: number; toUs: number } | null {
  const n = members.reduce((a, s) => a + s.handledUs.length, 0);
  if (n < 2) return null;
  const t = new Float64Array(n);
  let k = 0;
  for (const s of members) {
    t.set(s.handledUs, k);
    k += s.handledUs.length;
  }
  t.sort();
  let best = { fromUs: t[0]!, toUs: t[0]! };
  for (let i = 1; i < n; i++)
    if (t[i]! - t[i - 1]! > best.toUs - best.fromUs) best = { fromUs: t[i - 1]!, toUs: t[i]! };
  return best;
}

/** The same for a producer's acknowledgements (sends that failed have no handled time and are skipped). */
export function acknowledged(producer: Samples): Samples {
  const keep: number[] = [];
  for (let i = 0; i < producer.seq.length; i++) if (producer.queueId[i] !== NO_QUEUE) keep.push(i);
  const pick = <T extends Float64Array | Uint32Array>(a: T, make: new (n: number) => T): T => {
    const b = new make(keep.length);
    for (let i = 0; i < keep.length; i++) b[i] = a[keep[i]!]!;
    return b;
  };
  return {
    sentUs: pick(producer.sentUs, Float64Array),
    handledUs: pick(producer.handledUs, Float64Array),
    queueId: pick(producer.queueId, Uint32Array),
    seq: pick(producer.seq, Uint32Array),
  };
}
