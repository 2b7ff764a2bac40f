import type { CaptureProblem } from '../packet.js';
import { ITEM_BYTES, ITEM_WIDTH, type OutputMessage } from './messages.js';

/** Where merged output goes: bytes in capture order, and problems in their place among them. */
export interface MergeSink {
  bytes(b: Buffer): void;
  problem(p: CaptureProblem): void;
}

/** One batch of a source's output, read item by item. */
class Batch {
  /** Next item, and where the bytes not yet emitted start (in the pieces, end to end). */
  item = 0;
  private byte = 0;
  private piece = 0;
  private pieceStart = 0;
  readonly pieces: Buffer[];

  constructor(readonly message: OutputMessage) {
    this.pieces = message.pieces.map((p) => Buffer.from(p.buffer, p.byteOffset, p.byteLength));
  }

  get done(): boolean {
    return this.item * ITEM_WIDTH >= this.message.items.length;
  }

  /** Hands the bytes up to `end` to the sink, a view of each piece they are in. */
  emitBytes(end: number, sink: MergeSink): void {
    while (this.byte < end) {
      const p = this.pieces[this.piece]!;
      const stop = Math.min(end, this.pieceStart + p.length);
      if (stop > this.byte) sink.bytes(p.subarray(this.byte - this.pieceStart, stop - this.pieceStart));
      this.byte = stop;
      if (stop === this.pieceStart + p.length) {
        this.pieceStart += p.length;
        this.piece++;
      }
    }
  }
}

/**
 * The output of one source (a worker, or the main thread's own problems), in the order it was
 * printed, which is the order of the keys. `through`: the last packet it has finished.
 */
class Source {
  private readonly batches: Batch[] = [];
  through = 0;
  /** The least key anything it prints later can have, given `through`. */
  constructor(private readonly boundOf: (through: number) => number) {}

  add(m: OutputMessage): void {
    if (m.items.length > 0) this.batches.push(new Batch(m));
    this.through = m.through;
  }

  /** The batch whose item is next, or null when nothing is waiting. */
  head(): Batch | null {
    while (this.batches.length > 0 && this.batches[0]!.done) this.batches.shift();
    return this.batches[0] ?? null;
  }

  get bound(): number {
    return this.boundOf(this.through);
  }
}

/**
 * Merges the outputs of the workers and of the main thread into the order one decoder prints in:
 * by key, then sub (messages.ts). An item is handed on once no source can still print something
 * that goes before it: each source's output is in order, so that is when every source either has
 * an item waiting that goes after it, or has finished past its packet.
 */
export class OutputMerger {
  private readonly sources: Source[];

  /** `workerBound` and `mainBound`: the least key a worker or the main thread may print after `through`. */
  constructor(
    workers: number,
    workerBound: (through: number) => number,
    mainBound: (through: number) => number,
    private readonly sink: MergeSink,
  ) {
    this.sources = Array.from({ length: workers }, () => new Source(workerBound));
    this.sources.push(new Source(mainBound));
  }

  /** Output of source `i` (the workers first, the main thread last); merges what it can. */
  add(i: number, m: OutputMessage): void {
    this.sources[i]!.add(m);
    this.merge();
  }

  private merge(): void {
    const sources = this.sources;
    for (;;) {
      let best: Batch | null = null;
      let bestKey = Infinity;
      let bestSub = Infinity;
      for (const s of sources) {
        const b = s.head();
        if (b === null) continue;
        const items = b.message.items;
        const at = b.item * ITEM_WIDTH;
        const k = items[at]!;
        const sub = items[at + 1]!;
        if (k < bestKey || (k === bestKey && sub < bestSub)) {
          best = b;
          bestKey = k;
          bestSub = sub;
        }
      }
      if (best === null) return;
      for (const s of sources) if (s.head() === null && !(bestKey < s.bound)) return;
      const items = best.message.items;
      const at = best.item * ITEM_WIDTH;
      if (items[at + 2] === ITEM_BYTES) best.emitBytes(items[at + 3]!, this.sink);
      else this.sink.problem(best.message.problems[items[at + 3]!]!);
      best.item++;
    }
  }
}
