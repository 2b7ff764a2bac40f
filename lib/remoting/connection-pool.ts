import { createPool, type Pool } from 'generic-pool';
import createDebug from 'debug';
import { RemotingConnection, type ConnectOptions } from './connection.js';
import { RemotingConnectError } from './errors.js';

const log = createDebug('rocketwire:remoting');

export interface ConnectionPoolOptions {
  connect: ConnectOptions;
  poolSize: number;
  acquireTimeoutMs: number;
  reconnectBackoffMs: number;
  maxReconnectBackoffMs: number;
}

/**
 * The connections to one address. Connections are multiplexed (many calls in flight on each), so a
 * borrowed connection goes back to the pool as soon as the call is written: the pool chooses and
 * validates connections (testOnBorrow drops closed ones), it does not hand out exclusive use.
 *
 * Reconnect back-off: after a failed connect the address is not tried again before
 * `reconnectBackoffMs * 2^(failures-1)` (capped) has passed; callers arriving meanwhile fail at once
 * with RemotingConnectError (retryInMs set) instead of hammering a dead broker.
 */
export class ConnectionPool {
  readonly addr: string;
  private readonly options: ConnectionPoolOptions;
  private readonly pool: Pool<RemotingConnection>;
  /** With pool size 1 the one live connection is used directly; the pool is only asked when it is gone. */
  cached: RemotingConnection | null = null;
  private readonly live = new Set<RemotingConnection>();
  private readonly waiters = new Set<(err: Error) => void>();
  private readonly backoffTimers = new Set<{ timer: NodeJS.Timeout; resolve: () => void }>();
  private failures = 0;
  private retryAt = 0;
  private lastError: Error | undefined;
  private closing = false;

  constructor(addr: string, options: ConnectionPoolOptions) {
    this.addr = addr;
    this.options = options;
    this.pool = createPool<RemotingConnection>(
      {
        create: () => this.create(),
        destroy: async (conn) => conn.close(),
        validate: async (conn) => !conn.closed,
      },
      {
        max: options.poolSize,
        // min = max so that a pool of N really opens N connections (a multiplexed connection is
        // always "available", so the pool would otherwise never grow past one).
        min: options.poolSize,
        testOnBorrow: true,
        acquireTimeoutMillis: options.acquireTimeoutMs,
        fifo: true,
        autostart: false,
      },
    );
    this.pool.on('factoryCreateError', (err) => log('connect to %s failed: %s', addr, (err as Error).message));
  }

  get connectionCount(): number {
    return this.live.size;
  }

  /** A live connection: the cached one, or one from the pool (connecting when there is none). */
  acquire(): Promise<RemotingConnection> {
    const c = this.cached;
    if (c !== null && !c.closed) return Promise.resolve(c);
    if (this.closing) return Promise.reject(new RemotingConnectError(this.addr, 'the client is closed'));
    const wait = this.retryAt - Date.now();
    if (wait > 0 && this.live.size === 0) {
      const why = this.lastError ? this.lastError.message : 'connect failed';
      return Promise.reject(
        new RemotingConnectError(this.addr, `${why}; next attempt in ${wait} ms`, { cause: this.lastError, retryInMs: wait }),
      );
    }
    return new Promise<RemotingConnection>((resolve, reject) => {
      let settled = false;
      const fail = (err: Error): void => {
        if (settled) return;
        settled = true;
        this.waiters.delete(fail);
        reject(err);
      };
      this.waiters.add(fail);
      this.pool.acquire().then(
        (conn) => {
          // Give it straight back: the connection is shared, not lent out exclusively.
          void this.pool.release(conn).catch(() => undefined);
          if (settled) return;
          settled = true;
          this.waiters.delete(fail);
          if (this.options.poolSize === 1 && !conn.closed) this.cached = conn;
          resolve(conn);
        },
        (err: Error) => {
          fail(
            err instanceof RemotingConnectError
              ? err
              : new RemotingConnectError(this.addr, `no connection within ${this.options.acquireTimeoutMs} ms`, {
                  cause: this.lastError ?? err,
                }),
          );
        },
      );
    });
  }

  async close(): Promise<void> {
    this.closing = true;
    for (const b of this.backoffTimers) {
      clearTimeout(b.timer);
      b.resolve();
    }
    this.backoffTimers.clear();
    const closed = new RemotingConnectError(this.addr, 'the client is closed');
    for (const w of [...this.waiters]) w(closed);
    for (const c of [...this.live]) c.close();
    this.cached = null;
    await this.pool.drain();
    await this.pool.clear();
  }

  private async create(): Promise<RemotingConnection> {
    // generic-pool calls create again right after a failure while callers wait; waiting out the
    // back-off here is what keeps a dead address from being retried in a tight loop.
    const wait = this.retryAt - Date.now();
    if (wait > 0) await this.sleep(wait);
    if (this.closing) throw new RemotingConnectError(this.addr, 'the client is closed');
    let conn: RemotingConnection;
    try {
      conn = await RemotingConnection.connect(this.addr, this.options.connect);
    } catch (err) {
      this.failures++;
      const delay = Math.min(
        this.options.maxReconnectBackoffMs,
        this.options.reconnectBackoffMs * 2 ** Math.min(this.failures - 1, 30),
      );
      this.retryAt = Date.now() + delay;
      this.lastError = err as Error;
      log('connect to %s failed (%d in a row), next attempt in %d ms', this.addr, this.failures, delay);
      for (const w of [...this.waiters]) w(err as Error);
      throw err;
    }
    if (this.closing) {
      conn.close();
      throw new RemotingConnectError(this.addr, 'the client is closed');
    }
    this.failures = 0;
    this.retryAt = 0;
    this.lastError = undefined;
    this.live.add(conn);
    conn.once('close', () => {
      this.live.delete(conn);
      if (this.cached === conn) this.cached = null;
    });
    return conn;
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const entry = {
        timer: setTimeout(() => {
          this.backoffTimers.delete(entry);
          resolve();
        }, ms),
        resolve,
      };
      entry.timer.unref();
      this.backoffTimers.add(entry);
    });
  }
}
