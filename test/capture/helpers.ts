import {
  CaptureDecoder,
  describeCommand,
  frameContext,
  type CaptureDecoderOptions,
  type CaptureProblem,
  type FrameDescription,
} from '../../lib/capture/index.js';

export interface Decoded {
  frames: FrameDescription[];
  problems: CaptureProblem[];
  lost: CaptureProblem[];
  decoder: CaptureDecoder;
}

/** Decode a whole input fed in chunks of `chunk` bytes (to exercise records that straddle reads). */
export function decodeAll(input: Buffer, chunk = 4096, options: CaptureDecoderOptions = {}): Decoded {
  const frames: FrameDescription[] = [];
  const problems: CaptureProblem[] = [];
  const decoder = new CaptureDecoder(
    {
      frame: (f) => {
        frames.push(describeCommand(f.cmd, frameContext(f)));
      },
      problem: (p) => problems.push(p),
    },
    options,
  );
  for (let i = 0; i < input.length; i += chunk) decoder.push(input.subarray(i, i + chunk));
  decoder.end();
  return { frames, problems, lost: problems.filter((p) => p.lost), decoder };
}

/** "REQ PULL_MESSAGE #1" style summaries, easy to compare. */
export function summary(frames: FrameDescription[]): string[] {
  return frames.map(
    (f) =>
      `${f.kind === 'request' ? 'REQ' : 'RSP'} ${f.name} #${f.opaque}${f.requestCode !== undefined ? ' for ' + f.requestCode : ''}${f.messages ? ' msgs=' + f.messages.length : ''}`,
  );
}
