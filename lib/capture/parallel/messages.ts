import type { CaptureDecoderOptions } from '../capture-options.js';
import type { FrameOutputMode } from '../frame-printer.js';
import type { CaptureProblem } from '../packet.js';

/**
 * What the threads of a parallel decode say to each other, and the order of what they print.
 *
 * Everything a decode prints belongs to a place in the capture: a packet number and a phase within
 * that packet, in the order one decoder goes through a packet. Its key is `index * 4 + phase`:
 *   0  the capture clock moves (flows idle too long are finished, the least recently active first:
 *      `sub` is the number of the flow's last packet, which orders flows of different workers);
 *   1  the reader parses the packet's link, IP and TCP headers (problems only, from the main thread);
 *   2  the packet's owner reassembles it and decodes the frames it completes;
 *   3  what the reader finds after the packet (a damaged or truncated record), from the main thread.
 * The end of the input is the key after the last packet's, `sub` again the flow's last packet.
 */
export const PHASE_CLOCK = 0;
export const PHASE_PARSE = 1;
export const PHASE_OWNER = 2;
export const PHASE_READER = 3;

export function packetKey(index: number, phase: number): number {
  return index * 4 + phase;
}

/**
 * Items of a worker's output, four numbers each: key, sub, kind and value. Kind 0: bytes of the
 * output up to `value` (a position in the batch's output, its pieces end to end); kind 1: the
 * problem at `value` in the batch's problems.
 */
export const ITEM_BYTES = 0;
export const ITEM_PROBLEM = 1;
export const ITEM_WIDTH = 4;

/** Given to each worker when it starts (workerData). */
export interface WorkerSetup {
  mode: FrameOutputMode;
  filterTerms: string[];
  /** The decoder's options, with the bounds across flows shared out among the workers. */
  options: CaptureDecoderOptions;
}

/**
 * Main → worker: the packets `first` to `first + ts.length - 1`, every one's time, and the bytes of
 * those the worker owns: `own` has five numbers per packet (number, offset and length in `data`,
 * length on the wire, link type).
 */
export interface BatchMessage {
  type: 'batch';
  first: number;
  ts: Float64Array;
  own: Float64Array;
  data: Uint8Array;
}

/** Main → worker: the input ended; finish every flow, keyed `endKey`. */
export interface EndMessage {
  type: 'end';
  endKey: number;
}

/** Worker → main: what a batch (or the end) printed, through packet `through`. */
export interface OutputMessage {
  through: number;
  pieces: Uint8Array[];
  items: Float64Array;
  problems: CaptureProblem[];
}
