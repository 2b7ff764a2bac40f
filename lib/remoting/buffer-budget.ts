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
 *  - output of one connection: once it holds `maxOutputBytesPerConnection`, the requests it sent
 *    that need an answer are held, in arrival order, and its socket stops reading (Java turns
 *    auto-read off on a channel past Netty's high water mark and still serves what it decoded);
 *    when its output is down to half the bound (the low water mark) they run in order and the
 *    socket reads again. The peer's further requests wait in TCP meanwhile, so a connection holds
 *    at most its bound plus one answer of a request run under it, and the requests it read before
 *    reading stopped: the rest of the read in which its output passed the bound, at most 64 KiB
 *    of frames, since a write that leaves output waiting stops reading at once and a frame begun
 *    in an earlier read came before the request that passed the bound (`heldRequestBytes`). An answer that comes later (a held
 *    pull woken by a message) is written while the connection holds less than its bound or the
 *    answer fits under twice the bound; past that it is SYSTEM_BUSY, so many long-polled pulls
 *    woken at once cannot take one connection further. One answer always goes to a connection
 *    that holds nothing, whatever its size.
 *  - output of all connections: a response that does not fit in its half is replaced by
 *    SYSTEM_BUSY "[OVERLOAD]system busy, start flow control for a while", Java's answer when it
 *    cannot take a request on (its executor queue is full), and while the half is full requests
 *    are refused so before they run; clients retry them later. Responses larger than
 *    SMALL_FRAME_BYTES may use only 7/8 of the output half, so big answers to peers that do not
 *    read cannot crowd out the small ones (routes, heartbeats, send results) of everyone else.
 * The total stays under the bound plus what connections hold below their allowance and one read
 * per connection resumed. A connection that cannot make progress is closed by the idle timeout
 * (120 s, as Java), which gives its bytes back and drops its held requests; so is one that its peer
 * closed while it was paused (a paused socket does not read, so it cannot see the peer's FIN).
 */
export interface BufferBudgetOptions {
  /** Bytes held for all connections together. Default 256 MiB. */
  maxBufferedBytes?: number;
  /**
   * Output bytes one connection may hold before its requests wait and its socket stops reading (a
   * peer that does not read its responses); they run again once it holds half of it. A response is
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
  /** Times a connection's output reached its bound and its requests were held (reading paused). */
  outputPauses: number;
  /** Requests read and held now, all connections, until their connection's output drains. */
  heldRequests: number;
  /** Their frames' bytes. */
  heldRequestBytes: number;
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
  private outputPauseCount = 0;
  private held = 0;
  private heldBytes = 0;
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
  /** A connection whose requests are held runs them again once it holds no more than this. */
  get outputLowWater(): number {
    return Math.floor(this.maxOutputBytesPerConnection / 2);
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

  /**
   * May a connection that holds `connectionOutput` output bytes queue a request of its own (one the
   * server initiates) of `size` bytes?
   */
  admits(connectionOutput: number, size: number): boolean {
    if (connectionOutput > 0 && connectionOutput + size > this.maxOutputBytesPerConnection) return false;
    return this.fitsOutputHalf(size);
  }

  /**
   * May a connection that holds `connectionOutput` output bytes queue an answer of `size` bytes?
   * Requests run only while their connection holds less than its bound, so the answer of one that
   * ran just now always fits; a later answer (a long-polled pull woken) fits while the connection
   * is under its bound or under twice it with the answer.
   */
  admitsAnswer(connectionOutput: number, size: number): boolean {
    const bound = this.maxOutputBytesPerConnection;
    if (connectionOutput >= bound && connectionOutput + size > 2 * bound) return false;
    return this.fitsOutputHalf(size);
  }

  /** Should a connection that holds `connectionOutput` output bytes hold the requests it reads? */
  holdsRequests(connectionOutput: number): boolean {
    return connectionOutput >= this.maxOutputBytesPerConnection;
  }

  /** A connection's output reached its bound: it holds its requests and stopped reading. */
  outputPaused(): void {
    this.outputPauseCount++;
  }

  /** A connection holds `frames` more (or, negative, fewer) requests of `bytes` bytes. */
  changeHeld(frames: number, bytes: number): void {
    this.held += frames;
    this.heldBytes += bytes;
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
      outputPauses: this.outputPauseCount,
      heldRequests: this.held,
      heldRequestBytes: this.heldBytes,
    };
  }

  private fitsOutputHalf(size: number): boolean {
    const limit = size > SMALL_FRAME_BYTES ? this.outputLimit - (this.outputLimit >>> 3) : this.outputLimit;
    return this.output + size <= limit;
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
