import { EventEmitter } from 'node:events';
import net from 'node:net';
import tls from 'node:tls';
import createDebug from 'debug';
import {
  FrameDecoder,
  OptionError,
  ProtocolError,
  RemotingFlag,
  ResponseCode,
  createResponse,
  decodeCommand,
  encodeCommandParts,
  requestCodeName,
  type RemotingCommand,
  type SerializeTypeName,
} from '../../protocol/index.js';
import {
  RemotingAbortError,
  RemotingBackpressureError,
  RemotingClosedError,
  RemotingConnectError,
  RemotingError,
  RemotingTimeoutError,
} from './errors.js';
import { formatAddress, parseAddress } from './address.js';

const log = createDebug('rocketwire:remoting');
const logFrames = createDebug('rocketwire:frames');

/**
 * Handles a request the peer initiated. The returned command is sent back with the request's opaque
 * and the response flag set by the connection; null sends nothing (the peer times out, as with Java).
 * A throw becomes SYSTEM_ERROR with the error's message as remark. Nothing is ever sent for a oneway
 * request.
 */
export type RequestProcessor = (
  request: RemotingCommand,
  conn: RemotingConnection,
) => Promise<RemotingCommand | null> | RemotingCommand | null;

export interface InvokeOptions {
  /** Default: the connection's `defaultTimeoutMs` (3000). */
  timeoutMs?: number;
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
  /** Address to report for the peer; default the socket's remote address. */
  remoteAddress?: string;
  /**
   * Close the connection after this long without any byte read or written (Java closes channels
   * idle for 120 s on both sides). Calls in flight keep it open. Default: never.
   */
  idleTimeoutMs?: number;
}

export interface ConnectOptions extends RemotingConnectionOptions {
  /** Default 3000 ms. */
  connectTimeoutMs?: number;
  /** TLS client options; when given the connection uses TLS. Server-style TlsOptions are accepted too. */
  tls?: tls.ConnectionOptions | tls.TlsOptions;
  /** TCP keep-alive initial delay. Default 30 000 ms. */
  keepAliveDelayMs?: number;
  /** Aborts a connect attempt in progress. */
  signal?: AbortSignal;
}

export interface ConnectionStats {
  inFlight: number;
  queuedFrames: number;
  queuedBytes: number;
  framesIn: number;
  framesOut: number;
  bytesIn: number;
  unmatchedResponses: number;
  timeouts: number;
  drainWaits: number;
}

interface Pending {
  opaque: number;
  code: number;
  start: number;
  deadline: number;
  timeoutMs: number;
  resolve: (cmd: RemotingCommand) => void;
  reject: (err: Error) => void;
  signal: AbortSignal | undefined;
}

/**
 * The calls in flight on this connection that share one AbortSignal, watched by a single listener.
 * Callers pass one long-lived signal to many calls (the pull service's, for every queue's long
 * poll); a listener per call went past EventTarget's limit of 10 (MaxListenersExceededWarning) and
 * paid an addEventListener/removeEventListener pair per call.
 */
interface AbortGroup {
  readonly calls: Set<Pending>;
  readonly onAbort: () => void;
}

interface Queued {
  opaque: number;
  code: number;
  head: Buffer;
  body: Buffer | null;
  size: number;
  done: ((err?: Error) => void) | undefined;
}

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
// Call timing uses Date.now(), as Java's client does (System.currentTimeMillis): a V8 builtin, while
// performance.now() crosses into the runtime and showed up at ~5 % of a loaded profile. Timeouts are
// in milliseconds, and a wall-clock step only makes a sweep early or late once.
const DEFAULT_MAX_QUEUED_BYTES = 64 * 1024 * 1024;
const DEFAULT_MAX_QUEUED_FRAMES = 100_000;

function positive(name: string, v: number | undefined, dflt: number, min = 1): number {
  const x = v ?? dflt;
  if (!Number.isFinite(x) || x < min) throw new OptionError(name, `${name} must be a number >= ${min}, got ${v}`);
  return x;
}

/**
 * One TCP or TLS connection carrying remoting frames in both directions: calls we make (correlated
 * by opaque in one in-flight map, timed out by one sweeper timer) and requests the peer makes
 * (dispatched to processors by code). Emits 'close'(reason?) once.
 */
export class RemotingConnection extends EventEmitter {
  readonly remoteAddress: string;
  private readonly socket: net.Socket;
  private readonly decoder: FrameDecoder;
  private readonly inflight = new Map<number, Pending>();
  private readonly abortGroups = new Map<AbortSignal, AbortGroup>();
  private readonly ownProcessors = new Map<number, RequestProcessor>();
  private readonly sharedProcessors: ReadonlyMap<number, RequestProcessor> | undefined;
  private readonly requestSerializeType: SerializeTypeName | undefined;
  private readonly responseSerializeType: SerializeTypeName | undefined;
  private readonly language: string | undefined;
  private readonly version: number | undefined;
  private readonly beforeRequest: ((request: RemotingCommand, addr: string) => void) | undefined;
  readonly defaultTimeoutMs: number;
  private readonly maxQueuedBytes: number;
  private readonly maxQueuedFrames: number;

  private queue: Queued[] = [];
  private queueHead = 0;
  private queuedBytes = 0;
  private waitingDrain = false;
  private corked = false;
  private readonly uncork = (): void => {
    this.corked = false;
    this.socket.uncork();
  };
  private sweepTimer: NodeJS.Timeout | null = null;
  private sweepAt = Infinity;
  private isClosed = false;
  private closeReason: Error | undefined;
  private socketError: Error | undefined;
  private framesIn = 0;
  private framesOut = 0;
  private unmatched = 0;
  private timeouts = 0;
  private drainWaits = 0;

  constructor(socket: net.Socket, options: RemotingConnectionOptions = {}) {
    super();
    this.socket = socket;
    this.remoteAddress =
      options.remoteAddress ?? formatAddress(socket.remoteAddress ?? 'unknown', socket.remotePort ?? 0);
    this.decoder = new FrameDecoder({ maxFrameLength: options.maxFrameLength });
    this.sharedProcessors = options.processors;
    this.requestSerializeType = options.requestSerializeType;
    this.responseSerializeType = options.responseSerializeType;
    this.language = options.language;
    this.version = options.version;
    this.beforeRequest = options.beforeRequest;
    this.defaultTimeoutMs = positive('defaultTimeoutMs', options.defaultTimeoutMs, DEFAULT_TIMEOUT_MS);
    this.maxQueuedBytes = positive('maxQueuedBytes', options.maxQueuedBytes, DEFAULT_MAX_QUEUED_BYTES, 0);
    this.maxQueuedFrames = positive('maxQueuedFrames', options.maxQueuedFrames, DEFAULT_MAX_QUEUED_FRAMES, 0);

    socket.setNoDelay(true);
    if (options.idleTimeoutMs !== undefined) {
      const idle = positive('idleTimeoutMs', options.idleTimeoutMs, 0);
      socket.setTimeout(idle);
      socket.on('timeout', () => {
        if (this.inflight.size > 0) {
          socket.setTimeout(idle); // node does not re-arm by itself without traffic
          return;
        }
        this.close(new RemotingError(this.remoteAddress, `connection to ${this.remoteAddress} idle for ${idle} ms`));
      });
    }
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('drain', () => this.onDrain());
    socket.on('error', (err) => {
      this.socketError ??= err;
      log('socket error on %s: %s', this.remoteAddress, err.message);
    });
    socket.on('close', () => {
      this.close(this.socketError ?? new RemotingError(this.remoteAddress, `connection to ${this.remoteAddress} closed by peer`));
    });
  }

  /** Open a connection to "host:port" (or "[v6]:port"). Rejects with RemotingConnectError naming the address. */
  static connect(addr: string, options: ConnectOptions = {}): Promise<RemotingConnection> {
    const connectTimeoutMs = positive('connectTimeoutMs', options.connectTimeoutMs, 3000);
    let host: string;
    let port: number;
    try {
      ({ host, port } = parseAddress(addr));
    } catch (err) {
      return Promise.reject(new RemotingConnectError(addr, (err as Error).message, { cause: err }));
    }
    return new Promise((resolve, reject) => {
      const socket: net.Socket = options.tls
        ? tls.connect({
            ...(options.tls as tls.ConnectionOptions),
            host,
            port,
            servername: (options.tls as tls.ConnectionOptions).servername ?? (net.isIP(host) ? undefined : host),
          })
        : net.connect({ host, port });
      const readyEvent = options.tls ? 'secureConnect' : 'connect';
      const timer = setTimeout(() => {
        fail(new RemotingConnectError(addr, `no connection within ${connectTimeoutMs} ms`));
      }, connectTimeoutMs);
      const onError = (err: Error): void => fail(new RemotingConnectError(addr, err.message, { cause: err }));
      const onClose = (): void => fail(new RemotingConnectError(addr, 'socket closed before the connection was ready'));
      const signal = options.signal;
      const onAbort = (): void => fail(new RemotingConnectError(addr, 'connect aborted', { cause: signal?.reason }));
      if (signal?.aborted) {
        queueMicrotask(onAbort);
      } else {
        signal?.addEventListener('abort', onAbort, { once: true });
      }
      function cleanup(): void {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        socket.off('error', onError);
        socket.off('close', onClose);
        socket.off(readyEvent, onReady);
      }
      function fail(err: RemotingConnectError): void {
        cleanup();
        socket.destroy();
        log('connect to %s failed: %s', addr, err.message);
        reject(err);
      }
      function onReady(): void {
        cleanup();
        socket.setKeepAlive(true, options.keepAliveDelayMs ?? 30_000);
        log('connected to %s', addr);
        const { signal: _s, tls: _t, connectTimeoutMs: _c, keepAliveDelayMs: _k, ...connOptions } = options;
        resolve(new RemotingConnection(socket, { ...connOptions, remoteAddress: options.remoteAddress ?? addr }));
      }
      socket.once('error', onError);
      socket.once('close', onClose);
      socket.once(readyEvent, onReady);
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
      queuedFrames: this.queue.length - this.queueHead,
      queuedBytes: this.queuedBytes,
      framesIn: this.framesIn,
      framesOut: this.framesOut,
      bytesIn: this.decoder.bytesRead,
      unmatchedResponses: this.unmatched,
      timeouts: this.timeouts,
      drainWaits: this.drainWaits,
    };
  }

  registerProcessor(code: number, processor: RequestProcessor): void {
    this.ownProcessors.set(code, processor);
  }

  /** Send a request and wait for its response. Assigns `request.opaque`. */
  invoke(request: RemotingCommand, opts?: InvokeOptions): Promise<RemotingCommand> {
    const start = Date.now();
    if (this.isClosed) {
      return Promise.reject(new RemotingClosedError(this.remoteAddress, request.opaque, request.code, 0, { cause: this.closeReason }));
    }
    const signal = opts?.signal;
    if (signal?.aborted) {
      return Promise.reject(new RemotingAbortError(this.remoteAddress, request.opaque, request.code, 0, { cause: signal.reason }));
    }
    const timeoutMs = opts?.timeoutMs ?? this.defaultTimeoutMs;
    if (!(timeoutMs >= 0)) return Promise.reject(new OptionError('timeoutMs', `timeoutMs must be a number >= 0, got ${timeoutMs}`));
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
        this.writeFrame(request, undefined);
      } catch (err) {
        reject(err as Error);
        return;
      }
      this.inflight.set(opaque, p);
      if (signal) this.watchAbort(signal, p);
      if (p.deadline < this.sweepAt) this.armSweeper(p.deadline);
    });
  }

  /**
   * Send a request with the oneway flag; no response is expected. Resolves when the frame has been
   * handed to the socket (so awaiting it waits out backpressure).
   */
  invokeOneway(request: RemotingCommand): Promise<void> {
    if (this.isClosed) {
      return Promise.reject(new RemotingClosedError(this.remoteAddress, request.opaque, request.code, 0, { cause: this.closeReason }));
    }
    request.flag |= RemotingFlag.ONEWAY;
    try {
      this.prepareRequest(request, nextOpaque());
    } catch (err) {
      return Promise.reject(err as Error);
    }
    return new Promise<void>((resolve, reject) => {
      try {
        this.writeFrame(request, (err) => (err ? reject(err) : resolve()));
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
    if (this.sweepTimer) clearTimeout(this.sweepTimer);
    this.sweepTimer = null;
    this.sweepAt = Infinity;
    this.socket.destroy();
    const now = Date.now();
    const pending = [...this.inflight.values()];
    this.inflight.clear();
    for (const p of pending) {
      if (p.signal) this.unwatchAbort(p);
      p.reject(new RemotingClosedError(this.remoteAddress, p.opaque, p.code, now - p.start, { cause: reason }));
    }
    const queued = this.queue.slice(this.queueHead);
    this.queue = [];
    this.queueHead = 0;
    this.queuedBytes = 0;
    for (const q of queued) {
      q.done?.(new RemotingClosedError(this.remoteAddress, q.opaque, q.code, 0, { cause: reason }));
    }
    this.emit('close', reason);
  }

  private watchAbort(signal: AbortSignal, p: Pending): void {
    let g = this.abortGroups.get(signal);
    if (g === undefined) {
      const calls = new Set<Pending>();
      const onAbort = (): void => {
        this.abortGroups.delete(signal);
        const now = Date.now();
        // In the order the calls were made, as one listener per call fired.
        for (const c of calls) {
          if (this.inflight.get(c.opaque) !== c) continue;
          this.inflight.delete(c.opaque);
          c.reject(new RemotingAbortError(this.remoteAddress, c.opaque, c.code, now - c.start, { cause: signal.reason }));
        }
      };
      g = { calls, onAbort };
      this.abortGroups.set(signal, g);
      signal.addEventListener('abort', onAbort, { once: true });
    }
    g.calls.add(p);
  }

  /** A call finished: stop watching its signal, and drop the listener once no call of ours uses it. */
  private unwatchAbort(p: Pending): void {
    const signal = p.signal!;
    const g = this.abortGroups.get(signal);
    if (g === undefined || !g.calls.delete(p) || g.calls.size > 0) return;
    this.abortGroups.delete(signal);
    signal.removeEventListener('abort', g.onAbort);
  }

  private prepareRequest(request: RemotingCommand, opaque: number): void {
    request.opaque = opaque;
    request.flag &= ~RemotingFlag.RESPONSE;
    if (this.requestSerializeType) request.serializeType = this.requestSerializeType;
    if (this.language !== undefined) request.language = this.language;
    if (this.version !== undefined) request.version = this.version;
    if (this.beforeRequest) this.beforeRequest(request, this.remoteAddress);
  }

  /** Encode and write one frame, or queue it while the socket drains. Throws RemotingBackpressureError. */
  private writeFrame(cmd: RemotingCommand, done: ((err?: Error) => void) | undefined): void {
    const [head, body] = encodeCommandParts(cmd);
    if (logFrames.enabled) {
      logFrames('%s > %s', this.remoteAddress, describeFrame(cmd, head.length + (body ? body.length : 0)));
    }
    if (this.waitingDrain) {
      const size = head.length + (body ? body.length : 0);
      const frames = this.queue.length - this.queueHead;
      if (this.queuedBytes + size > this.maxQueuedBytes || frames + 1 > this.maxQueuedFrames) {
        throw new RemotingBackpressureError(
          this.remoteAddress,
          cmd.code,
          this.queuedBytes,
          frames,
          size,
          `${this.maxQueuedBytes} bytes / ${this.maxQueuedFrames} frames`,
        );
      }
      this.queue.push({ opaque: cmd.opaque, code: cmd.code, head, body, size, done });
      this.queuedBytes += size;
      return;
    }
    this.rawWrite(head, body);
    done?.();
  }

  private rawWrite(head: Buffer, body: Buffer | null): void {
    this.framesOut++;
    // The socket stays corked until the check phase of this event-loop turn: every frame written
    // meanwhile (all the calls that the responses of every chunk read in this poll phase release,
    // all the answers to those reads) leaves in one writev, header and body as separate buffers,
    // the body never copied. Uncorking at the end of each tick instead cost one write syscall per
    // chunk read, about a fifth of a consumer's CPU on loopback.
    if (!this.corked) {
      this.corked = true;
      this.socket.cork();
      process.nextTick(this.uncork);
    }
    let ok = this.socket.write(head);
    if (body) ok = this.socket.write(body);
    if (!ok) {
      this.waitingDrain = true;
      this.drainWaits++;
    }
  }

  private onDrain(): void {
    this.waitingDrain = false;
    while (!this.waitingDrain && this.queueHead < this.queue.length && !this.isClosed) {
      const q = this.queue[this.queueHead]!;
      this.queue[this.queueHead++] = undefined as unknown as Queued;
      this.queuedBytes -= q.size;
      this.rawWrite(q.head, q.body);
      q.done?.();
    }
    if (this.queueHead === this.queue.length) {
      this.queue = [];
      this.queueHead = 0;
    }
  }

  private armSweeper(deadline: number): void {
    if (this.sweepTimer) clearTimeout(this.sweepTimer);
    this.sweepAt = deadline;
    this.sweepTimer = setTimeout(() => this.sweep(), Math.max(0, deadline - Date.now()) + 1);
    this.sweepTimer.unref();
  }

  private sweep(): void {
    this.sweepTimer = null;
    this.sweepAt = Infinity;
    const now = Date.now();
    let next = Infinity;
    let expired: Pending[] | null = null;
    for (const p of this.inflight.values()) {
      if (p.deadline <= now) {
        (expired ??= []).push(p);
      } else if (p.deadline < next) {
        next = p.deadline;
      }
    }
    if (next !== Infinity) this.armSweeper(next);
    if (expired === null) return;
    // Fail them in deadline order, even when a stalled event loop lets several expire in one sweep.
    expired.sort((a, b) => a.deadline - b.deadline);
    for (const p of expired) {
      this.inflight.delete(p.opaque);
      this.timeouts++;
      if (p.signal) this.unwatchAbort(p);
      log('%s to %s timed out (opaque %d)', requestCodeName(p.code), this.remoteAddress, p.opaque);
      p.reject(new RemotingTimeoutError(this.remoteAddress, p.opaque, p.code, now - p.start, p.timeoutMs));
    }
  }


  private readonly onFrame = (frame: Buffer, offset: number): void => {
    this.framesIn++;
    const cmd = decodeCommand(frame, offset);
    if (logFrames.enabled) logFrames('%s < %s', this.remoteAddress, describeFrame(cmd, frame.length));
    if ((cmd.flag & RemotingFlag.RESPONSE) !== 0) {
      const p = this.inflight.get(cmd.opaque);
      if (p === undefined) {
        this.unmatched++;
        log('dropping response from %s with unknown opaque %d (code %d)', this.remoteAddress, cmd.opaque, cmd.code);
        return;
      }
      this.inflight.delete(cmd.opaque);
      if (p.signal) this.unwatchAbort(p);
      p.resolve(cmd);
    } else {
      this.dispatch(cmd);
    }
  };

  private onData(chunk: Buffer): void {
    if (this.isClosed) return;
    try {
      this.decoder.push(chunk, this.onFrame);
    } catch (err) {
      if (err instanceof ProtocolError) {
        // The stream cannot be resynchronised: drop this connection only. Calls in flight get a
        // RemotingClosedError naming the peer, with the ProtocolError as cause.
        log('corrupt frame from %s: %s', this.remoteAddress, err.message);
        this.close(err);
      } else {
        // A bug in our own code: do not let it kill the process, but keep the stream consistent by closing.
        this.close(
          new RemotingError(this.remoteAddress, `error handling data from ${this.remoteAddress}: ${(err as Error).message}`, {
            cause: err,
          }),
        );
      }
    }
  }

  private dispatch(request: RemotingCommand): void {
    const processor = this.ownProcessors.get(request.code) ?? this.sharedProcessors?.get(request.code);
    if (processor === undefined) {
      log('no processor for request code %d from %s', request.code, this.remoteAddress);
      this.answer(
        request,
        createResponse(request, ResponseCode.REQUEST_CODE_NOT_SUPPORTED, { remark: ` request type ${request.code} not supported` }),
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
    if ((request.flag & RemotingFlag.ONEWAY) !== 0 || response === null || response === undefined || this.isClosed) return;
    response.opaque = request.opaque;
    response.flag = (response.flag | RemotingFlag.RESPONSE) & ~RemotingFlag.ONEWAY;
    response.serializeType = this.responseSerializeType ?? request.serializeType;
    try {
      this.writeFrame(response, undefined);
    } catch (err) {
      log('cannot answer %d to %s: %s', request.opaque, this.remoteAddress, (err as Error).message);
    }
  }
}

function describeFrame(cmd: RemotingCommand, size: number): string {
  const kind = (cmd.flag & RemotingFlag.RESPONSE) !== 0 ? 'response' : (cmd.flag & RemotingFlag.ONEWAY) !== 0 ? 'oneway' : 'request';
  return (
    `${kind} code=${cmd.code} opaque=${cmd.opaque} ${cmd.serializeType} ${size}B` +
    (cmd.remark ? ` remark=${JSON.stringify(cmd.remark)}` : '') +
    (cmd.extFields ? ` ext=${JSON.stringify(cmd.extFields)}` : '') +
    (cmd.body ? ` body=${cmd.body.length}B` : '')
  );
}
