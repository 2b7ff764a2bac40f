import type tls from 'node:tls';
import { MQVersion, OptionError, type RemotingCommand, type SerializeTypeName } from '../../protocol/internal.js';
import { systemClock, type Clock } from '../clock.js';
import { optionValidator } from '../validate.js';
import { signRequest, type AclCredentials } from './acl.js';
import type { ConnectOptions, RemotingConnection, RequestProcessor } from './connection.js';
import type { InvokeOptions } from './connection-options.js';
import { ConnectionPool } from './connection-pool.js';
import {
  RemotingAbortError,
  RemotingClientClosedError,
  RemotingConnectError,
  RemotingTimeoutError,
  type RemotingError,
} from './errors.js';
import { RemotingObservers, requestTimeoutEvent, safely, type RemotingObserver } from './events.js';

/**
 * Options of a RemotingClient: header encoding, connections per address, timeouts, TLS, ACL, reconnection and buffer limits.
 * @category Remoting
 */
export interface RemotingClientOptions {
  /**
   * Serialize type of every request this client sends: JSON or ROCKETMQ (the binary form).
   * @default "JSON"
   */
  serializeType: SerializeTypeName;
  /**
   * Connections per address (as the Java client: one).
   * @default 1
   */
  poolSize: number;
  /**
   * Timeout of a TCP (and TLS) connect, in milliseconds.
   * @default 3000
   */
  connectTimeoutMs: number;
  /**
   * How long a call waits for a pooled connection, in milliseconds.
   * @default connectTimeoutMs + 1000
   */
  acquireTimeoutMs: number | undefined;
  /**
   * Timeout of a call that gives none, in milliseconds.
   * @default 3000
   */
  defaultTimeoutMs: number;
  /**
   * TLS: true for defaults (system CAs), or tls.connect options.
   * @default undefined (plain TCP)
   */
  tls: tls.ConnectionOptions | tls.TlsOptions | boolean | undefined;
  /**
   * Sign every request with these credentials (AclClientRPCHook).
   * @default undefined (requests are not signed)
   */
  acl: AclCredentials | undefined;
  /**
   * Called on every outgoing request (calls and oneway) once its opaque is set, before ACL signing,
   * so fields it adds are signed too (Java's RPCHook.doBeforeRequest).
   * @default undefined
   */
  rpcHook: ((request: RemotingCommand, addr: string) => void) | undefined;
  /**
   * Language stamped on requests; JAVA and OTHER are known to every broker.
   * @default "JAVA"
   */
  language: string;
  /**
   * Version stamped on requests; 409 (V4_9_8) is known to every broker.
   * @default 409
   */
  version: number;
  /**
   * Largest incoming frame, in bytes, length prefix included (as Java's frameMaxLength).
   * @default 16777216 (16 MiB)
   */
  maxFrameLength: number | undefined;
  /**
   * Bound of a connection's queue of frames waiting for the socket to drain, in bytes; a frame past
   * it fails with RemotingBackpressureError.
   * @default 67108864 (64 MiB)
   */
  maxQueuedBytes: number | undefined;
  /**
   * Bound of the same queue, in frames.
   * @default 100000
   */
  maxQueuedFrames: number | undefined;
  /**
   * First reconnect delay after a failed connect, in milliseconds, doubled per failure up to
   * maxReconnectBackoffMs.
   * @default 100
   */
  reconnectBackoffMs: number;
  /**
   * Largest reconnect delay, in milliseconds: the consumer's pull retry after an error
   * (pullTimeDelayMillsWhenException, 1 s), at which Java's client, which has no back-off, tries to
   * connect again.
   * @default 1000
   */
  maxReconnectBackoffMs: number;
  /**
   * TCP keep-alive initial delay of every socket, in milliseconds.
   * @default 30000
   */
  keepAliveDelayMs: number;
  /**
   * Close connections idle (no byte either way) this long, in milliseconds; they reopen on the next
   * call; 0 = never (Java's clientChannelMaxIdleTimeSeconds).
   * @default 120000
   */
  idleTimeoutMs: number;
  /**
   * Close a connection whose peer sent this many responses to requests never made on it (opaques
   * it never sent; late answers to calls that timed out or were aborted do not count), with
   * RemotingUnmatchedResponsesError; the next call opens a new one. 0 = never.
   * @default 1000
   */
  maxUnmatchedResponses: number;
  /**
   * Call timeouts, reconnect back-off and elapsed times run on this clock.
   * @default systemClock
   */
  clock: Clock;
}

export function defaultRemotingClientOptions(): RemotingClientOptions {
  return {
    serializeType: 'JSON',
    poolSize: 1,
    connectTimeoutMs: 3000,
    acquireTimeoutMs: undefined,
    defaultTimeoutMs: 3000,
    tls: undefined,
    acl: undefined,
    rpcHook: undefined,
    language: 'JAVA',
    version: MQVersion.V4_9_8,
    maxFrameLength: undefined,
    maxQueuedBytes: undefined,
    maxQueuedFrames: undefined,
    reconnectBackoffMs: 100,
    maxReconnectBackoffMs: 1_000,
    keepAliveDelayMs: 30_000,
    idleTimeoutMs: 120_000,
    maxUnmatchedResponses: 1000,
    clock: systemClock,
  };
}

/** A RemotingClient's options: errors are OptionErrors whose message starts "RemotingClient option <name>". */
const check = optionValidator(
  (option, message) => new OptionError(option, `RemotingClient option ${option} ${message}`),
);

function checkInt(name: string, v: number, min: number, max = Number.MAX_SAFE_INTEGER): void {
  check.intIn(name, v, min, max);
}

/**
 * Calls to many addresses ("host:port"), with a pool of connections per address, opened lazily
 * and reopened with back-off after failures. Requests the brokers initiate on any of these
 * connections go to the processors registered here.
 * @category Remoting
 */
export class RemotingClient {
  /** The options with every default filled in. */
  readonly options: Readonly<RemotingClientOptions>;
  private readonly pools = new Map<string, ConnectionPool>();
  private readonly processors = new Map<number, RequestProcessor>();
  private readonly connectOptions: ConnectOptions;
  private closed = false;
  private readonly observers = new RemotingObservers();
  /**
   * What the pools tell of their connections: the observers, and the client instance's hook
   * (onConnected), which is kept apart from the observers so that calls stay on the unobserved
   * path when no application listens.
   */
  private connectedHook: ((brokerAddr: string) => void) | null = null;
  private misbehavedHook: ((err: RemotingError) => void) | null = null;
  private lostHook: ((addr: string, err: Error) => void) | null = null;
  private readonly poolObserver: RemotingObserver = {
    connected: (e) => {
      const hook = this.connectedHook;
      if (hook) safely(() => hook(e.brokerAddr));
      this.observers.connected(e);
    },
    disconnected: (e) => {
      if (e.error) this.connectionLost(e.brokerAddr, e.error);
      this.observers.disconnected(e);
    },
  };

  constructor(options: Partial<RemotingClientOptions> = {}) {
    const o = { ...defaultRemotingClientOptions() };
    for (const [k, v] of Object.entries(options)) if (v !== undefined) (o as Record<string, unknown>)[k] = v;
    checkInt('poolSize', o.poolSize, 1, 1024);
    checkInt('connectTimeoutMs', o.connectTimeoutMs, 1);
    checkInt('defaultTimeoutMs', o.defaultTimeoutMs, 1);
    checkInt('reconnectBackoffMs', o.reconnectBackoffMs, 0);
    checkInt('maxReconnectBackoffMs', o.maxReconnectBackoffMs, o.reconnectBackoffMs);
    checkInt('version', o.version, 0, 0xffff);
    checkInt('idleTimeoutMs', o.idleTimeoutMs, 0);
    checkInt('maxUnmatchedResponses', o.maxUnmatchedResponses, 0);
    if (o.acquireTimeoutMs !== undefined) checkInt('acquireTimeoutMs', o.acquireTimeoutMs, 1);
    check.oneOf('serializeType', o.serializeType, ['JSON', 'ROCKETMQ']);
    if (o.acl && (!o.acl.accessKey || !o.acl.secretKey)) throw check.error('acl', 'needs accessKey and secretKey');
    this.options = Object.freeze(o);
    const acl = o.acl;
    const hook = o.rpcHook;
    const beforeRequest =
      hook && acl
        ? (req: RemotingCommand, addr: string) => {
            hook(req, addr);
            signRequest(req, acl);
          }
        : acl
          ? (req: RemotingCommand) => void signRequest(req, acl)
          : hook;
    this.connectOptions = {
      requestSerializeType: o.serializeType,
      language: o.language,
      version: o.version,
      connectTimeoutMs: o.connectTimeoutMs,
      defaultTimeoutMs: o.defaultTimeoutMs,
      tls: o.tls === true ? {} : o.tls === false ? undefined : o.tls,
      maxFrameLength: o.maxFrameLength,
      maxQueuedBytes: o.maxQueuedBytes,
      maxQueuedFrames: o.maxQueuedFrames,
      keepAliveDelayMs: o.keepAliveDelayMs,
      idleTimeoutMs: o.idleTimeoutMs > 0 ? o.idleTimeoutMs : undefined,
      processors: this.processors,
      beforeRequest,
      clock: o.clock,
      maxUnmatchedResponses: o.maxUnmatchedResponses,
      onPeerMisbehaved: (err) => {
        const hook = this.misbehavedHook;
        if (hook) safely(() => hook(err));
      },
    };
  }

  /** Answers requests the peers send with this code (e.g. CHECK_TRANSACTION_STATE) with `processor`. */
  registerProcessor(code: number, processor: RequestProcessor): void {
    this.processors.set(code, processor);
  }

  /**
   * Sends `request` to `addr` and resolves with its response; rejects with a RemotingError (timeout, connect,
   * closed, abort, backpressure).
   */
  invoke(addr: string, request: RemotingCommand, opts?: InvokeOptions): Promise<RemotingCommand> {
    if (this.observers.set.size > 0) return this.invokeObserved(addr, request, opts);
    const pool = this.poolFor(addr);
    const c = pool.pick();
    if (c !== null) return c.invoke(request, opts);
    return this.invokeSlow(pool, request, opts);
  }

  /** Sends `request` to `addr` with the oneway flag: resolves once written, no response comes. */
  invokeOneway(addr: string, request: RemotingCommand): Promise<void> {
    const pool = this.poolFor(addr);
    const c = pool.pick();
    if (c !== null) return c.invokeOneway(request);
    return this.acquireFrom(pool).then((conn) => conn.invokeOneway(request));
  }

  /** Calls `hook` with the address of every connection opened (one hook: the client instance's heartbeat on a new connection). */
  onConnected(hook: ((brokerAddr: string) => void) | null): void {
    this.connectedHook = hook;
  }

  /**
   * Calls `hook` when a connection is closed because its peer broke the protocol (today:
   * RemotingUnmatchedResponsesError): the client instance logs it through its logger.
   */
  onPeerMisbehaved(hook: ((err: RemotingError) => void) | null): void {
    this.misbehavedHook = hook;
  }

  /**
   * Calls `hook` when a connection to an address closes for a reason other than our own close()
   * (peer closed, reset, idle, protocol breach) and when a call finds no connection (refused,
   * connect timeout, or the back-off after such a failure): the client instance's fast route
   * refresh. Never while the client is closing.
   */
  onConnectionLost(hook: ((addr: string, err: Error) => void) | null): void {
    this.lostHook = hook;
  }

  private connectionLost(addr: string, err: Error): void {
    const hook = this.lostHook;
    if (hook && !this.closed) safely(() => hook(addr, err));
  }

  /** pool.acquire(), telling the lost-connection hook of a failure (the slow path only: the hot path never fails here). */
  private acquireFrom(pool: ConnectionPool): Promise<RemotingConnection> {
    const p = pool.acquire();
    if (this.lostHook === null) return p;
    return p.catch((err: unknown) => {
      if (err instanceof RemotingConnectError) this.connectionLost(pool.addr, err);
      throw err;
    });
  }

  /**
   * Tells `observer` of connections opened and closed and of calls that timed out, until the
   * returned function is called (the consumers' and producer's connect/disconnect/requestTimeout events).
   */
  observe(observer: RemotingObserver): () => void {
    this.observers.set.add(observer);
    return () => void this.observers.set.delete(observer);
  }

  private async invokeObserved(addr: string, request: RemotingCommand, opts?: InvokeOptions): Promise<RemotingCommand> {
    const pool = this.poolFor(addr);
    const c = pool.pick();
    try {
      return await (c !== null ? c.invoke(request, opts) : this.invokeSlow(pool, request, opts));
    } catch (err) {
      if (err instanceof RemotingTimeoutError) this.observers.timedOut(requestTimeoutEvent(err));
      throw err;
    }
  }

  /** Number of open connections to `addr` (for tests and stats). */
  connectionCount(addr: string): number {
    return this.pools.get(addr)?.connectionCount ?? 0;
  }

  /** Per-address connection figures: open connections, connect attempts, failures in a row, back-off left. */
  stats(): Record<string, ReturnType<ConnectionPool['stats']>> {
    const out: Record<string, ReturnType<ConnectionPool['stats']>> = {};
    for (const [addr, p] of this.pools) out[addr] = p.stats();
    return out;
  }

  /** Close every connection (failing calls in flight) and stop reconnecting. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const pools = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(pools.map((p) => p.close()));
  }

  private async invokeSlow(
    pool: ConnectionPool,
    request: RemotingCommand,
    opts?: InvokeOptions,
  ): Promise<RemotingCommand> {
    const clock = this.options.clock;
    const start = clock.now();
    const signal = opts?.signal;
    if (signal?.aborted) {
      throw new RemotingAbortError(pool.addr, request.opaque, request.code, 0, { cause: signal.reason });
    }
    const acquiring = this.acquireFrom(pool);
    let conn: RemotingConnection;
    if (signal) {
      // The caller may give up while we are still connecting; the connect itself goes on for others.
      let onAbort: (() => void) | undefined;
      const aborted = new Promise<never>((_, reject) => {
        onAbort = () =>
          reject(
            new RemotingAbortError(pool.addr, request.opaque, request.code, clock.now() - start, {
              cause: signal.reason,
            }),
          );
        signal.addEventListener('abort', onAbort, { once: true });
      });
      acquiring.catch(() => undefined);
      try {
        conn = await Promise.race([acquiring, aborted]);
      } finally {
        signal.removeEventListener('abort', onAbort!);
      }
    } else {
      conn = await acquiring;
    }
    // The time spent connecting counts against the call's timeout, as in the Java client.
    const timeoutMs = opts?.timeoutMs ?? this.options.defaultTimeoutMs;
    const elapsed = clock.now() - start;
    if (elapsed >= timeoutMs) {
      throw new RemotingTimeoutError(pool.addr, request.opaque, request.code, elapsed, timeoutMs);
    }
    if (opts?.signal?.aborted) {
      throw new RemotingAbortError(pool.addr, request.opaque, request.code, elapsed, { cause: opts.signal.reason });
    }
    return conn.invoke(request, { timeoutMs: Math.max(1, Math.floor(timeoutMs - elapsed)), signal: opts?.signal });
  }

  private poolFor(addr: string): ConnectionPool {
    let p = this.pools.get(addr);
    if (p === undefined) {
      if (this.closed) throw new RemotingClientClosedError(addr);
      const o = this.options;
      p = new ConnectionPool(addr, {
        connect: this.connectOptions,
        poolSize: o.poolSize,
        acquireTimeoutMs: o.acquireTimeoutMs ?? o.connectTimeoutMs + 1000,
        reconnectBackoffMs: o.reconnectBackoffMs,
        maxReconnectBackoffMs: o.maxReconnectBackoffMs,
        observer: this.poolObserver,
      });
      this.pools.set(addr, p);
    }
    return p;
  }
}
