import type net from 'node:net';
import createDebug from '../debug.js';
import type { FrameDecoder, RemotingCommand } from '../../protocol/internal.js';
import type { BufferBudget } from './buffer-budget.js';
import { RemotingBackpressureError } from './errors.js';
import type { OutboundQueue } from './outbound-queue.js';

const log = createDebug('rocketwire:remoting');

/**
 * A server connection's share of the server's BufferBudget: it reports the connection's partial
 * input and buffered output to the budget, and stops reading while the socket cannot take more
 * output (Java's autoRead=false on an unwritable channel), while the connection holds requests
 * because its output reached its bound (until the output is down to the budget's low water mark
 * and `runHeld` has run them all), or while the budget has no room for the partial frame. Each
 * reason is a flag of its own: the socket reads again only when none is left. Client connections
 * have none.
 */
export class BudgetShare {
  private readonly conn: { readonly closed: boolean };
  private readonly budget: BufferBudget;
  private readonly decoder: FrameDecoder;
  private readonly out: OutboundQueue;
  private readonly socket: net.Socket;
  private readonly remoteAddress: string;
  /** Bytes last reported to the budget. */
  private accountedIn = 0;
  private accountedOut = 0;
  /** Reading stopped because the socket cannot take more output. */
  private pausedForOutput = false;
  /** Reading stopped because the budget has no room for our partial frame. */
  private pausedForRoom = false;
  /** Reading stopped because requests are held until our output drains (RequestDispatch). */
  private pausedForAnswers = false;
  /** `runHeld` is running (its answers call afterOutput again). */
  private runningHeld = false;
  private readonly runHeld: () => boolean;

  constructor(
    conn: { readonly closed: boolean },
    budget: BufferBudget,
    decoder: FrameDecoder,
    out: OutboundQueue,
    socket: net.Socket,
    remoteAddress: string,
    /** Runs the held requests while the output allows; true when none is left. */
    runHeld: () => boolean,
  ) {
    this.conn = conn;
    this.budget = budget;
    this.decoder = decoder;
    this.out = out;
    this.socket = socket;
    this.remoteAddress = remoteAddress;
    this.runHeld = runHeld;
  }

  get readingPaused(): boolean {
    return this.pausedForOutput || this.pausedForRoom || this.pausedForAnswers;
  }

  /** Requests are held until the output drains: stop reading meanwhile. */
  holdReading(): void {
    if (this.conn.closed || this.pausedForAnswers) return;
    this.pausedForAnswers = true;
    this.updateReading();
  }

  /**
   * A request we initiate must fit the budget like an answer does (NOTIFY_CONSUMER_IDS_CHANGED to a
   * consumer that does not read would otherwise pile up to the queue's own bound on every such
   * connection); one that does not is a RemotingBackpressureError.
   */
  admitRequest(cmd: RemotingCommand, size: number): void {
    const held = this.out.bufferedBytes;
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

  /**
   * Count what we hold, stop reading while the socket cannot take more output, and run the held
   * requests once the output is down to the low water mark.
   */
  afterOutput(): void {
    if (this.conn.closed) return;
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
    if (this.pausedForAnswers && !this.runningHeld && this.out.bufferedBytes <= this.budget.outputLowWater) {
      this.runningHeld = true;
      let done: boolean;
      try {
        done = this.runHeld();
      } finally {
        this.runningHeld = false;
      }
      if (done && this.pausedForAnswers) {
        this.pausedForAnswers = false;
        log('%s: held requests run, reading again', this.remoteAddress);
        this.updateReading();
      }
    }
  }

  /** Count the partial frame, and stop reading when the budget has no room for it. */
  afterInput(): void {
    if (this.conn.closed) return;
    this.account();
    const budget = this.budget;
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

  /** The connection closed: give back its share of the budget at once. */
  release(): void {
    this.budget.cancel(this.resumeForRoom);
    this.budget.change(-this.accountedIn, -this.accountedOut);
    this.accountedIn = 0;
    this.accountedOut = 0;
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
    this.budget.change(dIn, dOut);
  }

  private readonly resumeForRoom = (): void => {
    if (this.conn.closed || !this.pausedForRoom) return;
    this.pausedForRoom = false;
    this.updateReading();
  };

  private updateReading(): void {
    if (this.conn.closed) return;
    if (this.pausedForOutput || this.pausedForRoom || this.pausedForAnswers) this.socket.pause();
    else this.socket.resume();
  }
}
