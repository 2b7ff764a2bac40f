/**
 * Bytes a server may hold for its connections together: partial input frames (FrameDecoder's
 * buffers) and output not yet taken by the kernel (the socket's buffer and the outbound queue).
 * Java's broker bounds none of this across channels (only Netty's per-channel write-buffer water
 * marks, which stop reading from an unwritable channel); a few hundred hostile connections took our
 * broker to gigabytes (issue 13). Every RemotingConnection of a RemotingServer reports what it holds
 * here; past the bound:
 *  - input: a connection holding more than INPUT_ALLOWANCE_BYTES of a partial frame stops reading
 *    until room is made (TCP's window then holds the peer back), as Java stops reading an
 *    unwritable channel. A frame that arrives in one chunk never counts, so clients that send
 *    ordinary requests are not held back.
 *  - output: a response that does not fit is replaced by SYSTEM_BUSY "[OVERLOAD]system busy, start
 *    flow control for a while", Java's answer when it cannot take a request on (its executor queue
 *    is full); clients retry it later. Responses larger than SMALL_FRAME_BYTES may use only the
 *    first 7/8 of the bound, so big answers to peers that do not read cannot crowd out the small
 *    ones (routes, heartbeats, send results) of everyone else.
 * A connection that cannot make progress is closed by the idle timeout (120 s, as Java), which
 * gives its bytes back.
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
  private used = 0;
  private peak = 0;
  private pauseCount = 0;
  /** Resume callbacks of connections waiting for room, in the order they stopped. */
  private readonly waiting = new Set<() => void>();
  busyAnswers = 0;

  constructor(maxBufferedBytes: number, maxOutputBytesPerConnection: number) {
    this.maxBufferedBytes = maxBufferedBytes;
    this.maxOutputBytesPerConnection = maxOutputBytesPerConnection;
  }

  get bufferedBytes(): number {
    return this.used;
  }
  get full(): boolean {
    return this.used >= this.maxBufferedBytes;
  }

  /** A connection holds `delta` more (or, negative, fewer) bytes. */
  change(delta: number): void {
    this.used += delta;
    if (this.used > this.peak) this.peak = this.used;
    if (delta < 0 && this.waiting.size > 0 && this.used < this.maxBufferedBytes) this.wake();
  }

  /** May a connection that holds `connectionOutput` output bytes queue a response of `size` bytes? */
  admits(connectionOutput: number, size: number): boolean {
    if (connectionOutput > 0 && connectionOutput + size > this.maxOutputBytesPerConnection) return false;
    const limit = size > SMALL_FRAME_BYTES ? this.maxBufferedBytes - (this.maxBufferedBytes >>> 3) : this.maxBufferedBytes;
    return this.used + size <= limit;
  }

  /** Should a connection holding `partialInput` bytes of a partial frame stop reading? */
  shouldPauseInput(partialInput: number): boolean {
    return partialInput > INPUT_ALLOWANCE_BYTES && this.used > this.maxBufferedBytes;
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
      bufferedBytes: this.used,
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
      if (this.used >= this.maxBufferedBytes) break;
      this.waiting.delete(resume);
      resume();
    }
  }
}
