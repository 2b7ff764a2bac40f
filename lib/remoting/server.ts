import net from 'node:net';
import { createRequire } from 'node:module';
import type tls from 'node:tls';
import createDebug from '../debug.js';
import type { SerializeTypeName } from '../../protocol/index.js';
import type { Clock } from '../clock.js';
import { TypedEmitter } from '../emitter.js';
import { optionValidator } from '../validate.js';
import { OptionError } from '../../protocol/index.js';
import {
  BufferBudget,
  DEFAULT_MAX_BUFFERED_BYTES,
  DEFAULT_MAX_OUTPUT_BYTES_PER_CONNECTION,
  type BufferBudgetOptions,
  type BufferBudgetStats,
} from './buffer-budget.js';
import {
  RemotingConnection,
  type RemotingConnectionOptions,
  type RequestGate,
  type RequestProcessor,
} from './connection.js';

const log = createDebug('rocketwire:remoting');

export interface RemotingServerOptions extends BufferBudgetOptions {
  /**
   * Serialize type of requests this server initiates. Responses go out in the request's type unless
   * `forceSerializeType` is true (then in this type, as a 5.x broker does).
   */
  serializeType?: SerializeTypeName;
  forceSerializeType?: boolean;
  /** TLS server options (key, cert, ...); when given every accepted connection is TLS. */
  tls?: tls.TlsOptions;
  maxFrameLength?: number;
  defaultTimeoutMs?: number;
  maxQueuedBytes?: number;
  maxQueuedFrames?: number;
  /** TCP keep-alive initial delay for accepted sockets. Default 30 000 ms. */
  keepAliveDelayMs?: number;
  /** Asked before the processor of every request (the embedded broker's access control, lib/broker/acl). */
  requestGate?: RequestGate;
  /**
   * Close accepted connections when nothing was read and no write completed for this long (Java:
   * serverChannelMaxIdleTimeSeconds, 120 s; the embedded broker and name server use 120 s). 0 or
   * undefined: never.
   */
  idleTimeoutMs?: number;
  /** Clock of the idle timeout and of the timeouts of requests this server initiates. Default systemClock. */
  clock?: Clock;
}

/** The events of a RemotingServer. */
export interface RemotingServerEvents {
  /** A connection was accepted. */
  connection: [conn: RemotingConnection];
  /** An accepted connection closed. */
  disconnect: [conn: RemotingConnection];
}

/**
 * Accepts remoting connections and wraps each in a RemotingConnection that dispatches the peer's
 * requests to the processors registered here. Emits 'connection'(conn) and 'disconnect'(conn).
 */
export class RemotingServer extends TypedEmitter<RemotingServerEvents> {
  private readonly options: RemotingServerOptions;
  private readonly processors = new Map<number, RequestProcessor>();
  private readonly conns = new Set<RemotingConnection>();
  private readonly server: net.Server;
  private bound = false;
  private readonly budget: BufferBudget;

  constructor(options: RemotingServerOptions = {}) {
    super();
    this.options = { ...options };
    const check = optionValidator((option, message) => new OptionError(option, `${option} ${message}`));
    const maxBuffered = check.intAtLeast('maxBufferedBytes', options.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES, 1);
    const perConnection = check.intAtLeast(
      'maxOutputBytesPerConnection',
      options.maxOutputBytesPerConnection ?? DEFAULT_MAX_OUTPUT_BYTES_PER_CONNECTION,
      1,
    );
    if (options.idleTimeoutMs !== undefined) check.numberAtLeast('idleTimeoutMs', options.idleTimeoutMs, 0);
    this.budget = new BufferBudget(maxBuffered, perConnection);
    const onSocket = (socket: net.Socket): void => this.accept(socket);
    if (options.tls) {
      const s = (createRequire(import.meta.url)('node:tls') as typeof tls).createServer(options.tls, onSocket);
      s.on('tlsClientError', (err, socket) => {
        log('TLS handshake with %s failed: %s', socket.remoteAddress, err.message);
      });
      this.server = s;
    } else {
      this.server = net.createServer(onSocket);
    }
    this.server.on('error', (err) => log('server error: %s', err.message));
  }

  get connections(): ReadonlySet<RemotingConnection> {
    return this.conns;
  }

  /** Bytes held for all connections (partial input frames, output not yet taken by the kernel) against the bound. */
  bufferStats(): BufferBudgetStats {
    return this.budget.stats();
  }

  registerProcessor(code: number, processor: RequestProcessor): void {
    this.processors.set(code, processor);
  }

  /** Listen (default port 0 = any free port, host 127.0.0.1); resolves with the bound address. */
  listen(port = 0, host = '127.0.0.1'): Promise<{ host: string; port: number }> {
    return new Promise((resolve, reject) => {
      const onError = (err: Error): void => reject(err);
      this.server.once('error', onError);
      this.server.listen(port, host, () => {
        this.server.off('error', onError);
        this.bound = true;
        const a = this.server.address() as net.AddressInfo;
        log('listening on %s:%d', a.address, a.port);
        resolve({ host: a.address, port: a.port });
      });
    });
  }

  /** Stop accepting, close every connection (failing their in-flight calls), and wait for the listener to close. */
  close(): Promise<void> {
    for (const c of [...this.conns]) c.close();
    if (!this.bound) return Promise.resolve();
    this.bound = false;
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private accept(socket: net.Socket): void {
    socket.setKeepAlive(true, this.options.keepAliveDelayMs ?? 30_000);
    const opts: RemotingConnectionOptions = {
      processors: this.processors,
      requestGate: this.options.requestGate,
      requestSerializeType: this.options.serializeType,
      responseSerializeType: this.options.forceSerializeType ? (this.options.serializeType ?? 'JSON') : undefined,
      maxFrameLength: this.options.maxFrameLength,
      defaultTimeoutMs: this.options.defaultTimeoutMs,
      maxQueuedBytes: this.options.maxQueuedBytes,
      maxQueuedFrames: this.options.maxQueuedFrames,
      idleTimeoutMs: this.options.idleTimeoutMs ? this.options.idleTimeoutMs : undefined,
      clock: this.options.clock,
      budget: this.budget,
    };
    const conn = new RemotingConnection(socket, opts);
    this.conns.add(conn);
    log('accepted connection from %s', conn.remoteAddress);
    conn.once('close', () => {
      this.conns.delete(conn);
      this.emit('disconnect', conn);
    });
    this.emit('connection', conn);
  }
}
