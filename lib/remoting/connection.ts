import type net from 'node:net';
import createDebug from '../debug.js';
import {
  FrameDecoder,
  ProtocolError,
  RemotingFlag,
  decodeCommand,
  encodeCommandParts,
  type RemotingCommand,
  type SerializeTypeName,
} from '../../protocol/internal.js';
import { systemClock, type Clock } from '../clock.js';
import { TypedEmitter } from '../emitter.js';
import type { BufferBudget } from './buffer-budget.js';
import { BudgetShare } from './budget-share.js';
import {
  DEFAULT_MAX_QUEUED_BYTES,
  DEFAULT_MAX_QUEUED_FRAMES,
  DEFAULT_MAX_UNMATCHED_RESPONSES,
  DEFAULT_TIMEOUT_MS,
  check,
  positive,
  type ConnectionStats,
  type InvokeOptions,
} from './connection-options.js';
import { RemotingAbortError, RemotingClosedError, RemotingError, RemotingUnmatchedResponsesError } from './errors.js';
import { formatAddress } from './address.js';
import { describeFrame, logFrames } from './frame-log.js';
import { IdleWatch } from './idle-watch.js';
import { InFlightCalls, type Pending } from './in-flight.js';
import { keepReadingWhenPeerGone } from './keep-reading.js';
import { nextOpaque } from './opaque.js';
import { EARLY_FLUSH_FRAMES, OutboundQueue } from './outbound-queue.js';
import type { ReadSlab } from './read-slab.js';
import { openSocket, type SocketOptions } from './connect.js';
import { RequestDispatch } from './request-dispatch.js';

const log = createDebug('rocketwire:remoting');

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
   * channel) or while the budget has no room for its partial frame, holds the peer's requests (and
   * stops reading) while its output is at the budget's per-connection bound, and answers
   * SYSTEM_BUSY when a response does not fit the server's output half.
   */
  budget?: BufferBudget;
}

export interface ConnectOptions extends RemotingConnectionOptions, SocketOptions {}

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
  private readonly serving: RequestDispatch<RemotingConnection>;
  private readonly requestSerializeType: SerializeTypeName | undefined;
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
  /** A server's end only (the one with a budget). */
  private readonly share: BudgetShare | undefined;
  /** With idleTimeoutMs only. */
  private readonly idle: IdleWatch | null = null;

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
    this.requestSerializeType = options.requestSerializeType;
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
    const budget = options.budget;
    this.inflight = new InFlightCalls(this.remoteAddress, this.clock);
    // A server's end (the one with a budget) counts what it flushed and sends a turn's first answers early.
    const server = budget !== undefined;
    this.out = new OutboundQueue(
      socket,
      this.remoteAddress,
      maxQueuedBytes,
      maxQueuedFrames,
      server ? this.onFlushed : undefined,
      server ? EARLY_FLUSH_FRAMES : 0,
    );
    this.share = server
      ? new BudgetShare(this, budget, this.decoder, this.out, socket, this.remoteAddress, () => this.serving.runHeld())
      : undefined;
    this.serving = new RequestDispatch<RemotingConnection>({
      conn: this,
      remoteAddress: this.remoteAddress,
      budget,
      out: this.out,
      requestGate: options.requestGate,
      ownProcessors: this.ownProcessors,
      sharedProcessors: options.processors,
      responseSerializeType: options.responseSerializeType,
      write: (cmd, head, body) => this.writeParts(cmd, head, body, undefined),
      holdReading: () => this.share!.holdReading(),
    });

    socket.setNoDelay(true);
    if (server)
      keepReadingWhenPeerGone(socket, (err) => {
        this.socketError ??= err;
        log('%s is gone (%s): reading what it sent before', this.remoteAddress, err.message);
      });
    const idleMs = options.idleTimeoutMs === undefined ? 0 : positive('idleTimeoutMs', options.idleTimeoutMs, 0);
    if (idleMs > 0) this.idle = new IdleWatch(this, this.decoder, this.clock, idleMs);
    if (reader)
      reader.attach(
        (chunk) => this.onData(chunk),
        (minBytes) => (this.isClosed ? null : this.decoder.readTarget(minBytes)),
      );
    else socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('drain', () => {
      if (this.idle !== null) this.idle.touch();
      this.out.onDrain(this.isClosed);
      if (this.share !== undefined) this.share.afterOutput();
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
      busyAnswers: this.serving.busyAnswers,
      heldRequests: this.serving.heldRequests,
      readingPaused: this.share?.readingPaused === true,
    };
  }

  registerProcessor(code: number, processor: RequestProcessor): void {
    this.ownProcessors.set(code, processor);
  }

  /** Send a request and wait for its response. Assigns `request.opaque`. */
  invoke(request: RemotingCommand, opts?: InvokeOptions): Promise<RemotingCommand> {
    // Call timing reads clock.now(), Date.now() for the system clock, as Java's client does
    // (System.currentTimeMillis): a V8 builtin, while performance.now() crosses into the runtime and
    // showed up at ~5 % of a loaded profile. Timeouts are in milliseconds, and a wall-clock step only
    // makes a sweep early or late once. A call reads the time once.
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
    if (this.idle !== null) this.idle.stop();
    this.inflight.failAll(reason);
    this.out.failAll(reason);
    // Give back everything: the partial frame's buffer, the requests held for the output to drain,
    // and our share of the server's budget.
    this.decoder.close();
    this.serving.dropHeld();
    if (this.share !== undefined) this.share.release();
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

  /**
   * A request we initiate. On a server's connection it must fit the budget like an answer does
   * (BudgetShare.admitRequest); one that does not is a RemotingBackpressureError.
   */
  private writeRequest(cmd: RemotingCommand, done: ((err?: Error) => void) | undefined): void {
    const [head, body] = encodeCommandParts(cmd);
    if (this.share !== undefined) this.share.admitRequest(cmd, head.length + (body ? body.length : 0));
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
      if (this.idle !== null && !this.out.waitingForDrain) this.idle.touch();
      if (this.share !== undefined) this.share.afterOutput();
    }
  }

  /** A frame left for the kernel (socket write callback; server side only). */
  private readonly onFlushed = (): void => {
    if (this.isClosed) return;
    if (this.idle !== null) this.idle.touch();
    this.share!.afterOutput();
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
      this.serving.dispatch(cmd, frame.length);
    }
  };

  private onData(chunk: Buffer): void {
    if (this.isClosed) return;
    if (this.idle !== null) this.idle.touch();
    try {
      this.decoder.push(chunk, this.onFrame);
      if (this.share !== undefined) this.share.afterInput();
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
}
