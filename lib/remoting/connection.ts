import type net from 'node:net';
import createDebug from '../debug.js';
import {
  FrameDecoder,
  OptionError,
  ProtocolError,
  RemotingFlag,
  ResponseCode,
  createResponse,
  decodeCommand,
  encodeCommandParts,
  type RemotingCommand,
  type SerializeTypeName,
} from '../../protocol/internal.js';
import { nextTurn, systemClock, type Clock, type ClockTimer } from '../clock.js';
import { TypedEmitter } from '../emitter.js';
import { optionValidator } from '../validate.js';
import type { BufferBudget } from './buffer-budget.js';
import {
  RemotingAbortError,
  RemotingBackpressureError,
  RemotingClosedError,
  RemotingError,
  RemotingUnmatchedResponsesError,
} from './errors.js';
import { formatAddress } from './address.js';
import { InFlightCalls, type Pending } from './in-flight.js';
import { EARLY_FLUSH_FRAMES, OutboundQueue } from './outbound-queue.js';
import type { ReadSlab } from './read-slab.js';
import { openSocket, type SocketOptions } from './connect.js';

const log = createDebug('rocketwire:remoting');
const logFrames = createDebug('rocketwire:frames');

/**
 * Handles a request the peer initiated. The returned command is sent back with the request's opaque
 * and the response flag set by the connection; null sends nothing (the peer times out, as with Java).
 * A throw becomes SYSTEM_ERROR with the error's message as remark. Nothing is ever sent for a oneway
 * request.
 * @category Remoting
 */
export type RequestProcessor = (
  request: RemotingCommand,
  conn: RemotingConnection,
) => Promise<RemotingCommand | null> | RemotingCommand | null;

/**
 * Runs before the processor of every request a server's connection receives (Java's server RPC
 * hook, where the broker checks ACL): a command is the answer and the processor is not called
 * (nothing is sent for a oneway request); null lets the request through.
 * @category Remoting
 */
export type RequestGate = (request: RemotingCommand, conn: RemotingConnection) => RemotingCommand | null;

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

export interface RemotingConnectionOptions {
  /** Re-encode every outgoing request in this type (the client's serialize type). Default: as the request says. */
  requestSerializeType?: SerializeTypeName;
  /** Answer requests in this type instead of the request's own type (what a 5.x broker does). */
  responseSerializeType?: SerializeTypeName;
  /** Stamped on outgoing requests when given (client defaults: JAVA, 409). */
  language?: string;
  version?: number;
  /** Largest incoming frame, prefix included (default 16 MiB, as Java's frameMaxLength). */
  maxFrameLength?: number;
  /** Per-call timeout when the call does not give one. Default 3000 ms. */
  defaultTimeoutMs?: number;
  /** Bound of the queue of frames waiting for the socket to drain. Default 64 MiB. */
  maxQueuedBytes?: number;
  /** Bound of the same queue in frames. Default 100 000. */
  maxQueuedFrames?: number;
  /** Called on every outgoing request after its opaque is set, before encoding (ACL signing). */
  beforeRequest?: (request: RemotingCommand, addr: string) => void;
  /** Looked up after the connection's own processors (the server's or client's shared table). */
  processors?: ReadonlyMap<number, RequestProcessor>;
  /** Asked before any processor runs, for every request code (the broker's access control). */
  requestGate?: RequestGate;
  /** Address to report for the peer; default the socket's remote address. */
  remoteAddress?: string;
  /**
   * Close the connection after this long without a byte read or a write completed (Java's
   * IdleStateHandler ALL_IDLE: channels idle for 120 s are closed on both sides). Calls in flight
   * keep it open. Runs on `clock`. Default: never.
   */
  idleTimeoutMs?: number;
  /** Time of call timeouts, the idle timeout and elapsed-time figures. Default systemClock. */
  clock?: Clock;
  /**
   * Close the connection (RemotingUnmatchedResponsesError) once the peer has sent this many
   * responses to opaques this connection never sent. Late answers to calls that timed out or were
   * aborted (the last 4096 of them) do not count. 0 = never close. Default 1000.
   */
  maxUnmatchedResponses?: number;
  /** Told when the connection is closed for a peer's protocol violation (maxUnmatchedResponses). */
  onPeerMisbehaved?: (err: RemotingError) => void;
  /**
   * The bytes a server holds for all its connections (RemotingServer passes one). With it the
   * connection acts as a server's end: it reports its partial input and its output to the budget,
   * stops reading while the socket cannot take more output (Java's autoRead=false on an unwritable
   * channel) or while the budget has no room for its partial frame, and answers SYSTEM_BUSY when a
   * response does not fit.
   */
  budget?: BufferBudget;
}

export interface ConnectOptions extends RemotingConnectionOptions, SocketOptions {}

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
  /** True while reading is paused (output backed up, or no room in the server's budget). */
  readingPaused: boolean;
}

/** Java's NettyRemotingAbstract answer when a request cannot be taken on (RejectedExecutionException). */
export const OVERLOAD_REMARK = '[OVERLOAD]system busy, start flow control for a while';

// Request ids: one counter for the process, like Java's RemotingCommand.requestId, kept within
// 0..2^31-1 so that it stays a positive int32 on the wire.
let opaqueCounter = 0;
function nextOpaque(): number {
  opaqueCounter = opaqueCounter >= 0x7fffffff ? 1 : opaqueCounter + 1;
  return opaqueCounter;
}
/** For tests: set the process-wide opaque counter (the next opaque is `value + 1`, wrapping at 2^31). */
export function setOpaqueCounterForTest(value: number): void {
  opaqueCounter = value;
}

const DEFAULT_TIMEOUT_MS = 3000;
// Call timing reads clock.now(), Date.now() for the system clock, as Java's client does
// (System.currentTimeMillis): a V8 builtin, while performance.now() crosses into the runtime and
// showed up at ~5 % of a loaded profile. Timeouts are in milliseconds, and a wall-clock step only
// makes a sweep early or late once. A call reads the time once.
const DEFAULT_MAX_QUEUED_BYTES = 64 * 1024 * 1024;
const DEFAULT_MAX_QUEUED_FRAMES = 100_000;
/**
 * Responses to never-sent opaques a connection takes before it is closed. A real peer sends none
 * (every late answer is recognised as such), so any number of them is a broken or hostile peer;
 * 1000 leaves room for a peer that replays a few by mistake.
 */
export const DEFAULT_MAX_UNMATCHED_RESPONSES = 1000;

/** A connection's options: errors are OptionErrors whose message starts with the option's name. */
const check = optionValidator((option, message) => new OptionError(option, `${option} ${message}`));

function positive(name: string, v: number | undefined, dflt: number, min = 1): number {
  return check.numberAtLeast(name, v ?? dflt, min);
}

/** The events of a RemotingConnection. */
export interface RemotingConnectionEvents {
  /** The connection closed (once): `reason` is why, undefined when it was closed on purpose. */
  close: [reason?: Error];
}

/**
 * One TCP or TLS connection carrying remoting frames in both directions: calls we make (correlated
 * by opaque in one in-flight map, timed out by one sweeper timer) and requests the peer makes
 * (dispatched to processors by code). Emits 'close'(reason?) once.
 */
export class RemotingConnection extends TypedEmitter<RemotingConnectionEvents> {
  readonly remoteAddress: string;
  private readonly socket: net.Socket;
  private readonly decoder: FrameDecoder;
  private readonly inflight: InFlightCalls;
  private readonly out: OutboundQueue;
  private readonly clock: Clock;
  private readonly ownProcessors = new Map<number, RequestProcessor>();
  private readonly sharedProcessors: ReadonlyMap<number, RequestProcessor> | undefined;
  private readonly requestGate: RequestGate | undefined;
  private readonly requestSerializeType: SerializeTypeName | undefined;
  private readonly responseSerializeType: SerializeTypeName | undefined;
  private readonly language: string | undefined;
  private readonly version: number | undefined;
  private readonly beforeRequest: ((request: RemotingCommand, addr: string) => void) | undefined;
  readonly defaultTimeoutMs: number;

  private isClosed = false;
  private closeReason: Error | undefined;
  private socketError: Error | undefined;
  private framesIn = 0;
  private unmatched = 0;
  private lateResponses = 0;
  private readonly maxUnmatched: number;
  private readonly onPeerMisbehaved: ((err: RemotingError) => void) | undefined;
  private busyAnswers = 0;

  private readonly budget: BufferBudget | undefined;
  /** Bytes last reported to the budget. */
  private accountedIn = 0;
  private accountedOut = 0;
  /** Reading stopped because the socket cannot take more output. */
  private pausedForOutput = false;
  /** Reading stopped because the budget has no room for our partial frame. */
  private pausedForRoom = false;
  private readonly idleMs: number;
  private idleTimer: ClockTimer | null = null;
  /** Last byte read or write completed, on the clock. */
  private lastActive = 0;
  /** The idle time was reached once; closing waits for a second look after the event loop turned. */
  private idleSuspect = false;

  /**
   * `reader`: the socket reads through it (net's `onread`, see ReadSlab) and emits no 'data';
   * without it the connection listens to 'data' (server ends, TLS).
   */
  constructor(socket: net.Socket, options: RemotingConnectionOptions = {}, reader?: ReadSlab) {
    super();
    this.socket = socket;
    this.remoteAddress =
      options.remoteAddress ?? formatAddress(socket.remoteAddress ?? 'unknown', socket.remotePort ?? 0);
    this.decoder = new FrameDecoder({ maxFrameLength: options.maxFrameLength });
    this.sharedProcessors = options.processors;
    this.requestGate = options.requestGate;
    this.requestSerializeType = options.requestSerializeType;
    this.responseSerializeType = options.responseSerializeType;
    this.language = options.language;
    this.version = options.version;
    this.beforeRequest = options.beforeRequest;
    this.defaultTimeoutMs = positive('defaultTimeoutMs', options.defaultTimeoutMs, DEFAULT_TIMEOUT_MS);
    const maxQueuedBytes = positive('maxQueuedBytes', options.maxQueuedBytes, DEFAULT_MAX_QUEUED_BYTES, 0);
    const maxQueuedFrames = positive('maxQueuedFrames', options.maxQueuedFrames, DEFAULT_MAX_QUEUED_FRAMES, 0);
    this.clock = options.clock ?? systemClock;
    this.maxUnmatched = positive(
      'maxUnmatchedResponses',
      options.maxUnmatchedResponses,
      DEFAULT_MAX_UNMATCHED_RESPONSES,
      0,
    );
    this.onPeerMisbehaved = options.onPeerMisbehaved;
    this.budget = options.budget;
    this.inflight = new InFlightCalls(this.remoteAddress, this.clock);
    // A server's end (the one with a budget) counts what it flushed and sends a turn's first answers early.
    const server = this.budget !== undefined;
    this.out = new OutboundQueue(
      socket,
      this.remoteAddress,
      maxQueuedBytes,
      maxQueuedFrames,
      server ? this.onFlushed : undefined,
      server ? EARLY_FLUSH_FRAMES : 0,
    );

    socket.setNoDelay(true);
    this.idleMs = options.idleTimeoutMs === undefined ? 0 : positive('idleTimeoutMs', options.idleTimeoutMs, 0);
    if (this.idleMs > 0) {
      this.lastActive = this.clock.now();
      this.idleTimer = this.clock.setTimeout(this.onIdleCheck, this.idleMs);
    }
    if (reader) reader.attach((chunk) => this.onData(chunk));
    else socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('drain', () => {
      this.lastActive = this.idleMs > 0 ? this.clock.now() : 0;
      this.out.onDrain(this.isClosed);
      if (this.budget) this.afterOutput();
    });
    socket.on('error', (err) => {
      this.socketError ??= err;
      log('socket error on %s: %s', this.remoteAddress, err.message);
    });
    socket.on('close', () => {
      this.close(
        this.socketError ?? new RemotingError(this.remoteAddress, `connection to ${this.remoteAddress} closed by peer`),
      );
    });
  }

  /** Open a connection to "host:port" (or "[v6]:port"). Rejects with RemotingConnectError naming the address. */
  static connect(addr: string, options: ConnectOptions = {}): Promise<RemotingConnection> {
    return openSocket(addr, options).then(({ socket, slab }) => {
      const { signal: _s, tls: _t, connectTimeoutMs: _c, keepAliveDelayMs: _k, ...connOptions } = options;
      return new RemotingConnection(socket, { ...connOptions, remoteAddress: options.remoteAddress ?? addr }, slab);
    });
  }

  get closed(): boolean {
    return this.isClosed;
  }
  get inFlight(): number {
    return this.inflight.size;
  }

  stats(): ConnectionStats {
    return {
      inFlight: this.inflight.size,
      queuedFrames: this.out.queuedFrames,
      queuedBytes: this.out.queuedBytes,
      framesIn: this.framesIn,
      framesOut: this.out.framesOut,
      bytesIn: this.decoder.bytesRead,
      unmatchedResponses: this.unmatched,
      lateResponses: this.lateResponses,
      timeouts: this.inflight.timeouts,
      drainWaits: this.out.drainWaits,
      bufferedInputBytes: this.decoder.bufferedBytes,
      bufferedOutputBytes: this.isClosed ? 0 : this.out.bufferedBytes,
      busyAnswers: this.busyAnswers,
      readingPaused: this.pausedForOutput || this.pausedForRoom,
    };
  }

  registerProcessor(code: number, processor: RequestProcessor): void {
    this.ownProcessors.set(code, processor);
  }

  /** Send a request and wait for its response. Assigns `request.opaque`. */
  invoke(request: RemotingCommand, opts?: InvokeOptions): Promise<RemotingCommand> {
    const start = this.clock.now();
    if (this.isClosed) {
      return Promise.reject(
        new RemotingClosedError(this.remoteAddress, request.opaque, request.code, 0, { cause: this.closeReason }),
      );
    }
    const signal = opts?.signal;
    if (signal?.aborted) {
      return Promise.reject(
        new RemotingAbortError(this.remoteAddress, request.opaque, request.code, 0, { cause: signal.reason }),
      );
    }
    const timeoutMs = opts?.timeoutMs ?? this.defaultTimeoutMs;
    if (!(timeoutMs >= 0)) return Promise.reject(check.error('timeoutMs', `must be a number >= 0, got ${timeoutMs}`));
    let opaque = nextOpaque();
    while (this.inflight.has(opaque)) opaque = nextOpaque();
    request.flag &= ~RemotingFlag.ONEWAY;
    try {
      this.prepareRequest(request, opaque);
    } catch (err) {
      return Promise.reject(err as Error);
    }
    return new Promise<RemotingCommand>((resolve, reject) => {
      const p: Pending = {
        opaque,
        code: request.code,
        start,
        deadline: start + timeoutMs,
        timeoutMs,
        resolve,
        reject,
        signal,
      };
      try {
        this.writeRequest(request, undefined);
      } catch (err) {
        reject(err as Error);
        return;
      }
      this.inflight.add(p);
    });
  }

  /**
   * Send a request with the oneway flag; no response is expected. Resolves when the frame has been
   * handed to the socket (so awaiting it waits out backpressure).
   */
  invokeOneway(request: RemotingCommand): Promise<void> {
    if (this.isClosed) {
      return Promise.reject(
        new RemotingClosedError(this.remoteAddress, request.opaque, request.code, 0, { cause: this.closeReason }),
      );
    }
    request.flag |= RemotingFlag.ONEWAY;
    try {
      this.prepareRequest(request, nextOpaque());
    } catch (err) {
      return Promise.reject(err as Error);
    }
    return new Promise<void>((resolve, reject) => {
      try {
        this.writeRequest(request, (err) => (err ? reject(err) : resolve()));
      } catch (err) {
        reject(err as Error);
      }
    });
  }

  /** Close the socket and fail every call in flight with RemotingClosedError (cause: `reason`). */
  close(reason?: Error): void {
    if (this.isClosed) return;
    this.isClosed = true;
    this.closeReason = reason;
    log('closing connection to %s%s', this.remoteAddress, reason ? `: ${reason.message}` : '');
    this.socket.destroy();
    if (this.idleTimer) this.clock.clearTimeout(this.idleTimer);
    this.idleTimer = null;
    this.inflight.failAll(reason);
    this.out.failAll(reason);
    // Give back everything: the partial frame's buffer, and our share of the server's budget.
    this.decoder.close();
    if (this.budget) {
      this.budget.cancel(this.resumeForRoom);
      this.budget.change(-this.accountedIn, -this.accountedOut);
      this.accountedIn = 0;
      this.accountedOut = 0;
    }
    this.emit('close', reason);
  }

  private prepareRequest(request: RemotingCommand, opaque: number): void {
    request.opaque = opaque;
    request.flag &= ~RemotingFlag.RESPONSE;
    if (this.requestSerializeType) request.serializeType = this.requestSerializeType;
    // The ROCKETMQ header's code is an int16: a code that does not fit (POP's 200050…) would
    // arrive truncated (Java sends 3442 and is answered REQUEST_CODE_NOT_SUPPORTED), so it always
    // travels with a JSON header, whose code is a JSON number.
    if (request.code > 32767 || request.code < -32768) request.serializeType = 'JSON';
    if (this.language !== undefined) request.language = this.language;
    if (this.version !== undefined) request.version = this.version;
    if (this.beforeRequest) this.beforeRequest(request, this.remoteAddress);
  }

  /** Encode and write one frame, or queue it while the socket drains. Throws RemotingBackpressureError. */
  private writeFrame(cmd: RemotingCommand, done: ((err?: Error) => void) | undefined): void {
    const [head, body] = encodeCommandParts(cmd);
    this.writeParts(cmd, head, body, done);
  }

  /**
   * A request we initiate. On a server's connection it must fit the budget like an answer does
   * (NOTIFY_CONSUMER_IDS_CHANGED to a consumer that does not read would otherwise pile up to the
   * queue's own bound on every such connection); one that does not is a RemotingBackpressureError.
   */
  private writeRequest(cmd: RemotingCommand, done: ((err?: Error) => void) | undefined): void {
    const [head, body] = encodeCommandParts(cmd);
    if (this.budget) {
      const held = this.out.bufferedBytes;
      const size = head.length + (body ? body.length : 0);
      if (!this.budget.admits(held, size)) {
        throw new RemotingBackpressureError(
          this.remoteAddress,
          cmd.code,
          held,
          this.out.queuedFrames,
          size,
          `${this.budget.maxOutputBytesPerConnection} bytes per connection, ${this.budget.maxOutputBytes} for all of the server's`,
        );
      }
    }
    this.writeParts(cmd, head, body, done);
  }

  private writeParts(
    cmd: RemotingCommand,
    head: Buffer,
    body: Buffer | null,
    done: ((err?: Error) => void) | undefined,
  ): void {
    if (logFrames.enabled) {
      logFrames('%s > %s', this.remoteAddress, describeFrame(cmd, head.length + (body ? body.length : 0)));
    }
    try {
      this.out.write(cmd.opaque, cmd.code, head, body, done);
    } finally {
      if (this.idleMs > 0 && !this.out.waitingForDrain) this.lastActive = this.clock.now();
      if (this.budget) this.afterOutput();
    }
  }

  /** A frame left for the kernel (socket write callback; server side only). */
  private readonly onFlushed = (): void => {
    if (this.isClosed) return;
    if (this.idleMs > 0) this.lastActive = this.clock.now();
    this.afterOutput();
  };

  /** Server side: count what we hold, and stop reading while the socket cannot take more output. */
  private afterOutput(): void {
    if (this.isClosed) return;
    this.account();
    const unwritable = this.out.waitingForDrain;
    if (unwritable !== this.pausedForOutput) {
      this.pausedForOutput = unwritable;
      if (unwritable)
        log(
          '%s does not read its responses (%d bytes buffered): reading paused',
          this.remoteAddress,
          this.out.bufferedBytes,
        );
      this.updateReading();
    }
  }

  /** Report to the budget what this connection holds now: partial input and buffered output. */
  private account(): void {
    const input = this.decoder.bufferedBytes;
    const output = this.out.bufferedBytes;
    const dIn = input - this.accountedIn;
    const dOut = output - this.accountedOut;
    if (dIn === 0 && dOut === 0) return;
    this.accountedIn = input;
    this.accountedOut = output;
    this.budget!.change(dIn, dOut);
  }

  private readonly resumeForRoom = (): void => {
    if (this.isClosed || !this.pausedForRoom) return;
    this.pausedForRoom = false;
    this.updateReading();
  };

  private updateReading(): void {
    if (this.isClosed) return;
    if (this.pausedForOutput || this.pausedForRoom) this.socket.pause();
    else this.socket.resume();
  }

  /**
   * The idle timer: close when nothing was read and no write completed for idleTimeoutMs. The
   * first time the idle time is reached the connection is looked at again after the event loop has
   * had a turn to read what the peer sent, and min(1 s, idleTimeoutMs) later on the clock: timers
   * run before socket reads in a turn of Node's loop, so after a stall (or a ManualClock advanced
   * by minutes in one call) bytes that arrived in time may still be unread when the timer fires.
   */
  private readonly onIdleCheck = (): void => {
    this.idleTimer = null;
    if (this.isClosed) return;
    const now = this.clock.now();
    if (this.inflight.size > 0) this.lastActive = now; // a call we wait for keeps it open
    const idleFor = now - this.lastActive;
    if (idleFor < this.idleMs) {
      this.idleSuspect = false;
      this.idleTimer = this.clock.setTimeout(this.onIdleCheck, this.idleMs - idleFor);
      return;
    }
    if (!this.idleSuspect) {
      this.idleSuspect = true;
      // One turn of the event loop (its poll phase reads the sockets), not a time.
      nextTurn(() => {
        if (!this.isClosed && this.idleTimer === null)
          this.idleTimer = this.clock.setTimeout(this.onIdleCheck, Math.min(1000, this.idleMs));
      });
      return;
    }
    const held =
      this.decoder.pendingBytes > 0 ? ` (holding ${this.decoder.pendingBytes} bytes of a partial frame)` : '';
    log('closing %s: idle for %d ms%s', this.remoteAddress, idleFor, held);
    this.close(
      new RemotingError(this.remoteAddress, `connection to ${this.remoteAddress} idle for ${idleFor} ms${held}`),
    );
  };

  private readonly onFrame = (frame: Buffer, offset: number): void => {
    // A chunk can hold more frames after the one that made us close: they are not looked at.
    if (this.isClosed) return;
    this.framesIn++;
    const cmd = decodeCommand(frame, offset);
    if (logFrames.enabled) logFrames('%s < %s', this.remoteAddress, describeFrame(cmd, frame.length));
    if ((cmd.flag & RemotingFlag.RESPONSE) !== 0) {
      const p = this.inflight.take(cmd.opaque);
      if (p === undefined) {
        if (this.inflight.late(cmd.opaque)) {
          this.lateResponses++;
          log(
            'dropping late response from %s: opaque %d (code %d) timed out or was aborted',
            this.remoteAddress,
            cmd.opaque,
            cmd.code,
          );
          return;
        }
        this.unmatched++;
        log('dropping response from %s with unknown opaque %d (code %d)', this.remoteAddress, cmd.opaque, cmd.code);
        if (this.maxUnmatched > 0 && this.unmatched >= this.maxUnmatched) {
          const err = new RemotingUnmatchedResponsesError(this.remoteAddress, this.maxUnmatched, cmd.opaque, cmd.code);
          this.close(err);
          if (this.onPeerMisbehaved) {
            try {
              this.onPeerMisbehaved(err);
            } catch {
              // the listener's failure is not the connection's concern
            }
          }
        }
        return;
      }
      p.resolve(cmd);
    } else {
      this.dispatch(cmd);
    }
  };

  private onData(chunk: Buffer): void {
    if (this.isClosed) return;
    if (this.idleMs > 0) this.lastActive = this.clock.now();
    try {
      this.decoder.push(chunk, this.onFrame);
      if (this.budget) this.afterInput();
    } catch (err) {
      if (err instanceof ProtocolError) {
        // The stream cannot be resynchronised: drop this connection only. Calls in flight get a
        // RemotingClosedError naming the peer, with the ProtocolError as cause.
        log('corrupt frame from %s: %s', this.remoteAddress, err.message);
        this.close(err);
      } else {
        // A bug in our own code: do not let it kill the process, but keep the stream consistent by closing.
        this.close(
          new RemotingError(
            this.remoteAddress,
            `error handling data from ${this.remoteAddress}: ${(err as Error).message}`,
            {
              cause: err,
            },
          ),
        );
      }
    }
  }

  /** Server side: count the partial frame, and stop reading when the budget has no room for it. */
  private afterInput(): void {
    if (this.isClosed) return;
    this.account();
    const budget = this.budget!;
    if (!this.pausedForRoom && budget.shouldPauseInput(this.decoder.bufferedBytes)) {
      this.pausedForRoom = true;
      log(
        '%s: %d bytes buffered across connections, over %d: reading paused',
        this.remoteAddress,
        budget.bufferedBytes,
        budget.maxBufferedBytes,
      );
      budget.waitForRoom(this.resumeForRoom);
      this.updateReading();
    }
  }

  private dispatch(request: RemotingCommand): void {
    // A peer that does not read its responses, or a server out of room: refuse before doing the
    // work, as Java's rejectRequest does (oneway requests, which produce no output, still run).
    if (this.budget && (request.flag & RemotingFlag.ONEWAY) === 0) {
      const held = this.out.bufferedBytes;
      if (held >= this.budget.maxOutputBytesPerConnection || this.budget.outputFull) {
        this.answerBusy(request, held);
        return;
      }
    }
    if (this.requestGate) {
      const refusal = this.requestGate(request, this);
      if (refusal !== null) {
        this.answer(request, refusal);
        return;
      }
    }
    const processor = this.ownProcessors.get(request.code) ?? this.sharedProcessors?.get(request.code);
    if (processor === undefined) {
      log('no processor for request code %d from %s', request.code, this.remoteAddress);
      this.answer(
        request,
        createResponse(request, ResponseCode.REQUEST_CODE_NOT_SUPPORTED, {
          remark: ` request type ${request.code} not supported`,
        }),
      );
      return;
    }
    let result: Promise<RemotingCommand | null> | RemotingCommand | null;
    try {
      result = processor(request, this);
    } catch (err) {
      this.answerError(request, err);
      return;
    }
    if (result !== null && typeof (result as Promise<unknown>).then === 'function') {
      (result as Promise<RemotingCommand | null>).then(
        (r) => this.answer(request, r),
        (err) => this.answerError(request, err),
      );
    } else {
      this.answer(request, result as RemotingCommand | null);
    }
  }

  private answerError(request: RemotingCommand, err: unknown): void {
    const message = err instanceof Error ? err.message : String(err);
    log('processor for code %d from %s failed: %s', request.code, this.remoteAddress, message);
    this.answer(request, createResponse(request, ResponseCode.SYSTEM_ERROR, { remark: message }));
  }

  private answer(request: RemotingCommand, response: RemotingCommand | null): void {
    if ((request.flag & RemotingFlag.ONEWAY) !== 0 || response === null || response === undefined || this.isClosed)
      return;
    response.opaque = request.opaque;
    response.flag = (response.flag | RemotingFlag.RESPONSE) & ~RemotingFlag.ONEWAY;
    response.serializeType = this.responseSerializeType ?? request.serializeType;
    try {
      const [head, body] = encodeCommandParts(response);
      if (this.budget) {
        const held = this.out.bufferedBytes;
        if (!this.budget.admits(held, head.length + (body ? body.length : 0))) {
          this.answerBusy(request, held);
          return;
        }
      }
      this.writeParts(response, head, body, undefined);
    } catch (err) {
      log('cannot answer %d to %s: %s', request.opaque, this.remoteAddress, (err as Error).message);
    }
  }

  /** SYSTEM_BUSY in place of a response that does not fit (nothing for a oneway request). */
  private answerBusy(request: RemotingCommand, held: number): void {
    if ((request.flag & RemotingFlag.ONEWAY) !== 0 || this.isClosed) return;
    this.busyAnswers++;
    this.budget!.busyAnswers++;
    log(
      'answering SYSTEM_BUSY to code %d from %s: %d bytes buffered for it, %d for all connections',
      request.code,
      this.remoteAddress,
      held,
      this.budget!.bufferedBytes,
    );
    const busy = createResponse(request, ResponseCode.SYSTEM_BUSY, { remark: OVERLOAD_REMARK });
    busy.opaque = request.opaque;
    busy.flag = (busy.flag | RemotingFlag.RESPONSE) & ~RemotingFlag.ONEWAY;
    busy.serializeType = this.responseSerializeType ?? request.serializeType;
    try {
      this.writeFrame(busy, undefined);
    } catch (err) {
      log('cannot answer %d to %s: %s', request.opaque, this.remoteAddress, (err as Error).message);
    }
  }
}

function describeFrame(cmd: RemotingCommand, size: number): string {
  const kind =
    (cmd.flag & RemotingFlag.RESPONSE) !== 0
      ? 'response'
      : (cmd.flag & RemotingFlag.ONEWAY) !== 0
        ? 'oneway'
        : 'request';
  return (
    `${kind} code=${cmd.code} opaque=${cmd.opaque} ${cmd.serializeType} ${size}B` +
    (cmd.remark ? ` remark=${JSON.stringify(cmd.remark)}` : '') +
    (cmd.extFields ? ` ext=${JSON.stringify(cmd.extFields)}` : '') +
    (cmd.body ? ` body=${cmd.body.length}B` : '')
  );
}
