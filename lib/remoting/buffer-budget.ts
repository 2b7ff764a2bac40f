/**
 * Bytes a server may hold for its connections together: partial input frames (FrameDecoder's
 * buffers) and output not yet taken by the kernel (the socket's buffer and the outbound queue).
 * Java's broker bounds none of this across channels (only Netty's per-channel write-buffer water
 * marks, which stop reading from an unwritable channel); a few hundred hostile connections took our
 * broker to gigabytes. Every RemotingConnection of a RemotingServer reports what it holds
 * here. Half of the bound is for input, half for output, so peers that hold half frames cannot stop
 * the answers of everyone else, nor peers that do not read stop everyone's requests:
 *  - input: past its half, a connection holding more than INPUT_ALLOWANCE_BYTES of a partial frame
 *    stops reading until room is made (TCP's window then holds the peer back), as Java stops
 *    reading an unwritable channel. A frame that arrives in one chunk never counts, so clients
 *    that send ordinary requests are not held back.
 *  - output: a response that does not fit in its half is replaced by SYSTEM_BUSY "[OVERLOAD]system
 *    busy, start flow control for a while", Java's answer when it cannot take a request on (its
 *    executor queue is full); clients retry it later. Responses larger than SMALL_FRAME_BYTES may
 *    use only 7/8 of the output half, so big answers to peers that do not read cannot crowd out the
 *    small ones (routes, heartbeats, send results) of everyone else.
 * The total stays under the bound plus what connections hold below their allowance and one read
 * per connection resumed. A connection that cannot make progress is closed by the idle timeout
 * (120 s, as Java), which gives its bytes back; so is one that its peer closed while it was paused
 * (a paused socket does not read, so it cannot see the peer's FIN).
 */
export interface BufferBudgetOptions {
  /** Bytes held for all connections together. Default 256 MiB. */
  maxBufferedBytes?: number;
  /**
   * Output bytes one connection may hold (a peer that does not read its responses). A response is
   * always let through to a connection that holds nothing, whatever its size. Default 16 MiB.
   */
  maxOutputBytesPerConnection?: number;
}

export const DEFAULT_MAX_BUFFERED_BYTES = 256 * 1024 * 1024;
export const DEFAULT_MAX_OUTPUT_BYTES_PER_CONNECTION = 16 * 1024 * 1024;
/** Partial-frame bytes a connection may hold before the global bound can pause its reading. */
export const INPUT_ALLOWANCE_BYTES = 64 * 1024;
/** Responses up to this size may use the whole bound; larger ones only 7/8 of it. */
export const SMALL_FRAME_BYTES = 64 * 1024;

export interface BufferBudgetStats {
  /** Bytes held now, input and output, all connections. */
  bufferedBytes: number;
  /** Of which partial input frames. */
  inputBytes: number;
  /** Of which output the kernel has not taken. */
  outputBytes: number;
  maxBufferedBytes: number;
  /** Most bytes held at any time. */
  peakBufferedBytes: number;
  /** Connections waiting for room to read. */
  pausedConnections: number;
  /** Times a connection was paused for room. */
  pauses: number;
  /** Requests answered SYSTEM_BUSY because their response did not fit. */
  busyAnswers: number;
}

export class BufferBudget {
  readonly maxBufferedBytes: number;
  readonly maxOutputBytesPerConnection: number;
  private input = 0;
  private output = 0;
  private readonly inputLimit: number;
  private readonly outputLimit: number;
  private peak = 0;
  private pauseCount = 0;
  /** Resume callbacks of connections waiting for room, in the order they stopped. */
  private readonly waiting = new Set<() => void>();
  busyAnswers = 0;

  constructor(maxBufferedBytes: number, maxOutputBytesPerConnection: number) {
    this.maxBufferedBytes = maxBufferedBytes;
    this.maxOutputBytesPerConnection = maxOutputBytesPerConnection;
    this.inputLimit = Math.ceil(maxBufferedBytes / 2);
    this.outputLimit = maxBufferedBytes - this.inputLimit;
  }

  get bufferedBytes(): number {
    return this.input + this.output;
  }
  /** The output half of the bound. */
  get maxOutputBytes(): number {
    return this.outputLimit;
  }
  /** No room for more output: requests that need an answer are refused before they run. */
  get outputFull(): boolean {
    return this.output >= this.outputLimit;
  }

  /** A connection holds `input` / `output` more (or, negative, fewer) bytes. */
  change(input: number, output: number): void {
    this.input += input;
    this.output += output;
    const used = this.input + this.output;
    if (used > this.peak) this.peak = used;
    if (input < 0 && this.waiting.size > 0 && this.input < this.inputLimit) this.wake();
  }

  /** May a connection that holds `connectionOutput` output bytes queue a response of `size` bytes? */
  admits(connectionOutput: number, size: number): boolean {
    if (connectionOutput > 0 && connectionOutput + size > this.maxOutputBytesPerConnection) return false;
    const limit = size > SMALL_FRAME_BYTES ? this.outputLimit - (this.outputLimit >>> 3) : this.outputLimit;
    return this.output + size <= limit;
  }

  /** Should a connection holding `partialInput` bytes of a partial frame stop reading? */
  shouldPauseInput(partialInput: number): boolean {
    return partialInput > INPUT_ALLOWANCE_BYTES && this.input > this.inputLimit;
  }

  /** Call `resume` once the budget has room again. */
  waitForRoom(resume: () => void): void {
    if (this.waiting.has(resume)) return;
    this.pauseCount++;
    this.waiting.add(resume);
  }

  /** The connection closed: it waits no longer. */
  cancel(resume: () => void): void {
    this.waiting.delete(resume);
  }

  stats(): BufferBudgetStats {
    return {
      bufferedBytes: this.input + this.output,
      inputBytes: this.input,
      outputBytes: this.output,
      maxBufferedBytes: this.maxBufferedBytes,
      peakBufferedBytes: this.peak,
      pausedConnections: this.waiting.size,
      pauses: this.pauseCount,
      busyAnswers: this.busyAnswers,
    };
  }

  private wake(): void {
    // Oldest first. A resumed connection reads at most a chunk before it is counted again, so the
    // bound is overshot by at most one chunk (64 KiB) per resumed connection.
    for (const resume of this.waiting) {
      if (this.input >= this.inputLimit) break;
      this.waiting.delete(resume);
      resume();
    }
  }
}
