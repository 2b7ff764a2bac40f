import { OptionError } from '../../protocol/internal.js';
import { optionValidator } from '../validate.js';

/**
 * Options of one request: its timeout and a signal that aborts it (RemotingAbortError).
 * @category Remoting
 */
export interface InvokeOptions {
  /**
   * Timeout of this request, in milliseconds.
   * @default the client's defaultTimeoutMs (3000)
   */
  timeoutMs?: number;
  /**
   * Aborts the request: it rejects with RemotingAbortError (the answer, if it comes, is dropped).
   * @default undefined (not abortable)
   */
  signal?: AbortSignal;
}

export interface ConnectionStats {
  inFlight: number;
  queuedFrames: number;
  queuedBytes: number;
  framesIn: number;
  framesOut: number;
  bytesIn: number;
  /** Responses to opaques this connection never sent (counted towards maxUnmatchedResponses). */
  unmatchedResponses: number;
  /** Late responses: answers to calls that had timed out or been aborted (not counted as unmatched). */
  lateResponses: number;
  timeouts: number;
  drainWaits: number;
  /** Bytes held for a partial incoming frame (its buffer's size). */
  bufferedInputBytes: number;
  /** Output not yet taken by the kernel: queued frames plus the socket's own buffer. */
  bufferedOutputBytes: number;
  /** Requests answered SYSTEM_BUSY because the response did not fit (server side). */
  busyAnswers: number;
  /** Requests read and held until the output drains below the per-connection bound (server side). */
  heldRequests: number;
  /** True while reading is paused (output backed up or at its bound, or no room in the server's budget). */
  readingPaused: boolean;
}

/** Java's NettyRemotingAbstract answer when a request cannot be taken on (RejectedExecutionException). */
export const OVERLOAD_REMARK = '[OVERLOAD]system busy, start flow control for a while';

export const DEFAULT_TIMEOUT_MS = 3000;
export const DEFAULT_MAX_QUEUED_BYTES = 64 * 1024 * 1024;
export const DEFAULT_MAX_QUEUED_FRAMES = 100_000;
/**
 * Responses to never-sent opaques a connection takes before it is closed. A real peer sends none
 * (every late answer is recognised as such), so any number of them is a broken or hostile peer;
 * 1000 leaves room for a peer that replays a few by mistake.
 */
export const DEFAULT_MAX_UNMATCHED_RESPONSES = 1000;

/** A connection's options: errors are OptionErrors whose message starts with the option's name. */
export const check = optionValidator((option, message) => new OptionError(option, `${option} ${message}`));

export function positive(name: string, v: number | undefined, dflt: number, min = 1): number {
  return check.numberAtLeast(name, v ?? dflt, min);
}
