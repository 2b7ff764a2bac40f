import createDebug from '../debug.js';
import type { FrameDecoder } from '../../protocol/internal.js';
import { nextTurn, type Clock, type ClockTimer } from '../clock.js';
import { RemotingError } from './errors.js';

const log = createDebug('rocketwire:remoting');

/** What the idle check needs of its connection (RemotingConnection has it). */
export interface IdleHost {
  readonly remoteAddress: string;
  readonly closed: boolean;
  /** Calls we are waiting for: they keep the connection open. */
  readonly inFlight: number;
  close(reason?: Error): void;
}

/**
 * The idle close of one connection (idleTimeoutMs): it is closed when nothing was read and no
 * write completed for that long. The connection calls `touch()` on every read and completed write,
 * and `stop()` when it closes.
 */
export class IdleWatch {
  /** Last byte read or write completed, on the clock. */
  lastActive: number;
  private readonly conn: IdleHost;
  private readonly decoder: FrameDecoder;
  private readonly clock: Clock;
  private readonly ms: number;
  private timer: ClockTimer | null;
  /** The idle time was reached once; closing waits for a second look after the event loop turned. */
  private suspect = false;

  constructor(conn: IdleHost, decoder: FrameDecoder, clock: Clock, ms: number) {
    this.conn = conn;
    this.decoder = decoder;
    this.clock = clock;
    this.ms = ms;
    this.lastActive = clock.now();
    this.timer = clock.setTimeout(this.check, ms);
  }

  touch(): void {
    this.lastActive = this.clock.now();
  }

  stop(): void {
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timer = null;
  }

  /**
   * The idle timer: close when nothing was read and no write completed for idleTimeoutMs. The
   * first time the idle time is reached the connection is looked at again after the event loop has
   * had a turn to read what the peer sent, and min(1 s, idleTimeoutMs) later on the clock: timers
   * run before socket reads in a turn of Node's loop, so after a stall (or a ManualClock advanced
   * by minutes in one call) bytes that arrived in time may still be unread when the timer fires.
   */
  private readonly check = (): void => {
    this.timer = null;
    if (this.conn.closed) return;
    const now = this.clock.now();
    if (this.conn.inFlight > 0) this.lastActive = now; // a call we wait for keeps it open
    const idleFor = now - this.lastActive;
    if (idleFor < this.ms) {
      this.suspect = false;
      this.timer = this.clock.setTimeout(this.check, this.ms - idleFor);
      return;
    }
    if (!this.suspect) {
      this.suspect = true;
      // One turn of the event loop (its poll phase reads the sockets), not a time.
      nextTurn(() => {
        if (!this.conn.closed && this.timer === null)
          this.timer = this.clock.setTimeout(this.check, Math.min(1000, this.ms));
      });
      return;
    }
    const addr = this.conn.remoteAddress;
    const held =
      this.decoder.pendingBytes > 0 ? ` (holding ${this.decoder.pendingBytes} bytes of a partial frame)` : '';
    log('closing %s: idle for %d ms%s', addr, idleFor, held);
    this.conn.close(new RemotingError(addr, `connection to ${addr} idle for ${idleFor} ms${held}`));
  };
}
