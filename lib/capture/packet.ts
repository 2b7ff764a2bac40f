/** One packet record read from a capture file. */
export interface CapturedPacket {
  /** 1-based packet number, as Wireshark counts them. */
  index: number;
  /** Seconds since the epoch, rounded to microseconds. */
  ts: number;
  /** LINKTYPE_* value of the interface the packet came from. */
  linkType: number;
  /** Captured bytes: a view that is only valid during the callback. */
  data: Buffer;
  /** Length of the packet on the wire; more than data.length when the snaplen cut it. */
  origLen: number;
  /** Byte position of the record in the capture file. */
  fileOffset: number;
}

/**
 * Something that could not be decoded. `lost` says whether data was lost (the CLI then exits
 * non-zero); other problems are informational.
 * @category Capture
 */
export interface CaptureProblem {
  /** What went wrong, as one line. */
  message: string;
  /** Whether data was lost (frames may be missing), or only something could not be decoded. */
  lost: boolean;
  /** Packet number the problem was found in, when there is one. */
  packet?: number;
  /** Byte position in the input (file offset, or stream offset within a flow when `flow` is set). */
  offset?: number;
  /** The TCP flow ("src > dst") the problem is in, when there is one. */
  flow?: string;
  /**
   * For counting: 'incomplete-frame' when a stream (or the input) ended inside a frame, including a
   * flow whose first frame never completed; 'buffer-limit' when bytes were dropped to keep the
   * decoder under its memory bound (CaptureDecoderOptions.maxTotalBufferedBytes); 'flow-evicted'
   * when a flow was finished early because more flows were open than CaptureDecoderOptions.maxFlows
   * (the least recently active one goes; a frame it was inside is reported as 'incomplete-frame'
   * with the reason).
   */
  kind?: 'incomplete-frame' | 'buffer-limit' | 'flow-evicted';
  /** Capture time (seconds since the epoch) of the packet that caused a 'flow-evicted' problem. */
  ts?: number;
}

export type PacketHandler = (p: CapturedPacket) => void;
export type ProblemHandler = (p: CaptureProblem) => void;

/** A streaming capture-file reader: feed it chunks, then end(). */
export interface RecordReader {
  push(chunk: Buffer): void;
  /** Signals end of input; reports a record cut short. */
  end(): void;
  /** True after a fatal problem: nothing more will be read. */
  readonly failed: boolean;
}
