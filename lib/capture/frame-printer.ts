import type { DecodedFrame } from './capture-options.js';
import { describeCommand, frameContext, type FrameDescription } from './describe.js';
import type { FrameFilter } from './frame-filter.js';
import { formatFrameText } from './format-text.js';
import { frameJson, writeFrameJson } from './json-line.js';
import type { OutputBuffer } from './output-buffer.js';

/** What `rocketwire decode` prints per frame: the table, JSON lines or a msgpack stream. */
export type FrameOutputMode = 'text' | 'json' | 'msgpack';

/**
 * Writes the frames `rocketwire decode` prints into an OutputBuffer: the filter first, then the
 * frame in the output's form. One class for the CLI's own decoder and for each worker of a
 * parallel decode (lib/capture/parallel/), so both print the same bytes.
 */
export class FramePrinter {
  /** The table shows message sizes, not bodies: no base64 to compute. */
  private readonly describeOptions: { messageBodies: boolean };

  constructor(
    private readonly out: OutputBuffer,
    private readonly mode: FrameOutputMode,
    private readonly filter: FrameFilter | null,
    private readonly msgpackEncode: ((value: unknown) => Uint8Array) | null,
  ) {
    this.describeOptions = { messageBodies: mode !== 'text' };
  }

  /** A frame, or nothing when the filter drops it. */
  frame(f: DecodedFrame): void {
    let d: FrameDescription | undefined;
    if (this.filter) {
      if (this.filter.needsDescription) d = this.describe(f);
      if (!this.filter.matches(f, d)) return;
    }
    if (d === undefined && this.mode === 'json') writeFrameJson(this.out, f.cmd, frameContext(f));
    else this.emit(d ?? this.describe(f));
  }

  /** One object in the output's form (a frame's description, or the statistics as JSON). */
  emit(d: FrameDescription): void {
    if (this.mode === 'text') this.out.text(formatFrameText(d) + '\n');
    else if (this.mode === 'json') this.out.text(frameJson(d) + '\n');
    else this.out.bytes(this.msgpackEncode!(d));
  }

  private describe(f: DecodedFrame): FrameDescription {
    return describeCommand(f.cmd, frameContext(f), this.describeOptions);
  }
}
