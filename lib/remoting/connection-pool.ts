import { createRequire } from 'node:module';
import type { Pool } from 'generic-pool';
import createDebug from '../debug.js';
import { sleep, systemClock, type Clock } from '../clock.js';
import { RemotingConnection, type ConnectOptions } from './connection.js';
import { RemotingConnectError } from './errors.js';
import type { RemotingObserver } from './events.js';

// generic-pool (CommonJS, 18 files) is required on the first pool, when the first connection is
// made, not when `rocketwire` is imported (import cost).
let createPoolFn: typeof import('generic-pool').createPool | undefined;
function createPool<T>(...args: Parameters<typeof import('generic-pool').createPool<T>>): Pool<T> {
  createPoolFn ??= (createRequire(import.meta.url)('generic-pool') as typeof import('generic-pool')).createPool;
  return createPoolFn<T>(...args);
}

const log = createDebug('rocketwire:remoting');

export interface ConnectionPoolOptions {
  connect: ConnectOptions;
  poolSize: number;
  acquireTimeoutMs: number;
  reconnectBackoffMs: number;
  maxReconnectBackoffMs: number;
  /** Told of each connection opened and closed (RemotingClient.observe). */
  observer?: RemotingObserver;
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
/**
 * What the generic pool holds: a slot with a live connection, or an empty slot when a connect
 * attempt failed. The factory never rejects: generic-pool re-runs a rejected create at once for
 * every waiting borrower, which turns a dead address into a busy loop; an empty slot fails
 * validation instead and the next create waits out the back-off first.
 */
interface Slot {
  conn: RemotingConnection | null;
}

export class ConnectionPool {
  readonly addr: string;
  private readonly options: ConnectionPoolOptions;
  private readonly pool: Pool<Slot>;
  /**
   * Connections the pool has handed out, all live. Once the pool is full, calls take the next one in
   * turn without going through generic-pool (its acquire + validate + release costs about as much
   * CPU as the rest of a round trip); the pool is only asked while a connection is missing.
   */
  private ring: RemotingConnection[] = [];
  private next = 0;
  private readonly live = new Set<RemotingConnection>();
  private readonly waiters = new Set<(err: Error) => void>();
  private readonly closeController = new AbortController();
  private failures = 0;
  private connectAttempts = 0;
  private retryAt = 0;
  private lastError: Error | undefined;
  private closing = false;

  private readonly clock: Clock;

  constructor(addr: string, options: ConnectionPoolOptions) {
    this.addr = addr;
    this.options = options;
    this.clock = options.connect.clock ?? systemClock;
    this.pool = createPool<Slot>(
      {
        create: () => this.create(),
        destroy: async (slot) => slot.conn?.close(),
        // While closing every slot passes, so borrowers still queued inside the pool are served
        // (and released) at once instead of triggering more creates.
        validate: async (slot) => this.closing || (slot.conn !== null && !slot.conn.closed),
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
  }

  get connectionCount(): number {
    return this.live.size;
  }

  stats(): { connections: number; connectAttempts: number; consecutiveFailures: number; retryInMs: number } {
    return {
      connections: this.live.size,
      connectAttempts: this.connectAttempts,
      consecutiveFailures: this.failures,
      retryInMs: Math.max(0, this.retryAt - this.clock.now()),
    };
  }

  /** The hot path: a live connection without asking the pool, or null when the pool is not full. */
  pick(): RemotingConnection | null {
    const ring = this.ring;
    const n = ring.length;
    if (n < this.options.poolSize) return null;
    if (n === 1) return ring[0]!.closed ? null : ring[0]!;
    const c = ring[this.next]!;
    this.next = this.next + 1 >= n ? 0 : this.next + 1;
    return c.closed ? null : c;
  }

  /** A live connection: from the ring when the pool is full, otherwise from the pool (connecting when needed). */
  acquire(): Promise<RemotingConnection> {
    const c = this.pick();
    if (c !== null) return Promise.resolve(c);
    if (this.closing) return Promise.reject(new RemotingConnectError(this.addr, 'the client is closed'));
    const wait = this.retryAt - this.clock.now();
    if (wait > 0 && this.live.size === 0) {
      const why = this.lastError ? this.lastError.message : 'connect failed';
      return Promise.reject(
        new RemotingConnectError(this.addr, `${why}; next attempt in ${wait} ms`, {
          cause: this.lastError,
          retryInMs: wait,
        }),
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
        (slot) => {
          // Give it straight back: the connection is shared, not lent out exclusively.
          void this.pool.release(slot).catch(() => undefined);
          const conn = slot.conn;
          if (conn === null || conn.closed) {
            const why = this.closing ? 'the client is closed' : (this.lastError?.message ?? 'connect failed');
            fail(new RemotingConnectError(this.addr, why, { cause: this.lastError }));
            return;
          }
          if (settled) return;
          settled = true;
          this.waiters.delete(fail);
          if (!this.ring.includes(conn)) this.ring.push(conn);
          resolve(conn);
        },
        (err: Error) => {
          fail(
            new RemotingConnectError(this.addr, `no connection within ${this.options.acquireTimeoutMs} ms`, {
              cause: this.lastError ?? err,
            }),
          );
        },
      );
    });
  }

  async close(): Promise<void> {
    this.closing = true;
    this.closeController.abort(); // ends a back-off sleep at once
    const closed = new RemotingConnectError(this.addr, 'the client is closed');
    for (const w of [...this.waiters]) w(closed);
    for (const c of [...this.live]) c.close();
    this.ring = [];
    await this.pool.drain();
    await this.pool.clear();
  }

  private async create(): Promise<Slot> {
    const wait = this.retryAt - this.clock.now();
    if (wait > 0 && !this.closing) await sleep(this.clock, wait, this.closeController.signal);
    if (this.closing) return { conn: null };
    let conn: RemotingConnection;
    this.connectAttempts++;
    try {
      conn = await RemotingConnection.connect(this.addr, {
        ...this.options.connect,
        signal: this.closeController.signal,
      });
    } catch (err) {
      this.failures++;
      const delay = Math.min(
        this.options.maxReconnectBackoffMs,
        this.options.reconnectBackoffMs * 2 ** Math.min(this.failures - 1, 30),
      );
      this.retryAt = this.clock.now() + delay;
      // Keep the underlying socket error: messages built from it then name the address only once.
      this.lastError = err instanceof RemotingConnectError && err.cause instanceof Error ? err.cause : (err as Error);
      log('connect to %s failed (%d in a row), next attempt in %d ms', this.addr, this.failures, delay);
      for (const w of [...this.waiters]) w(err as Error);
      return { conn: null };
    }
    if (this.closing) {
      conn.close();
      return { conn: null };
    }
    this.failures = 0;
    this.retryAt = 0;
    this.lastError = undefined;
    this.live.add(conn);
    this.options.observer?.connected?.({ brokerAddr: this.addr });
    conn.once('close', (reason?: Error) => {
      this.live.delete(conn);
      this.options.observer?.disconnected?.({ brokerAddr: this.addr, error: reason });
      const i = this.ring.indexOf(conn);
      if (i >= 0) {
        this.ring.splice(i, 1);
        this.next = 0;
      }
    });
    return { conn };
  }
}
