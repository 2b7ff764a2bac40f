/**
 * Decoding captured RocketMQ traffic: pcap and pcapng files (tcpdump, tshark, Wireshark) or raw
 * stream bytes, reassembled per TCP flow and decoded into remoting frames paired by opaque.
 *
 * @module rocketwire/capture
 */
// The `rocketwire/capture` entry point (package.json `exports`): the decoder, its records and
// their text/JSON forms. Kept out of `rocketwire` so that an application that only produces and
// consumes never loads the decoder (import cost). test/api/api-report.txt lists what is
// exported here; it imports each file it needs, not lib/capture/index.ts (the folder's own index
// for the CLI and the tests), so the filter and statistics are not loaded with it.
export { CaptureDecoder } from './capture-decoder.js';
export { CaptureOptionError } from './errors.js';
export type {
  CaptureCounters,
  CaptureDecoderOptions,
  CaptureDecoderHandlers,
  DecodedFrame,
  SeenRequest,
  InputFormat,
} from './capture-options.js';
export type { CaptureProblem } from './packet.js';
export {
  describeCommand,
  frameContext,
  type FrameDescription,
  type MessageDescription,
  type FrameContext,
  type DescribeOptions,
} from './describe.js';
export { frameJson } from './json-line.js';
