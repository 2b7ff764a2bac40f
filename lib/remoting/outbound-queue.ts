import type net from 'node:net';
import { RemotingBackpressureError, RemotingClosedError } from './errors.js';

/**
 * A server's end sends this many frames of a turn of JavaScript at once, without waiting for the
 * turn to end (see rawWrite).
 */
export const EARLY_FLUSH_FRAMES = 2;

interface Queued {
  opaque: number;
  code: number;
  head: Buffer;
  body: Buffer | null;
  size: number;
  done: ((err?: Error) => void) | undefined;
}

/**
 * The write side of one connection: frames go to the socket at once, or, while it waits for
 * 'drain' (write() returned false), into a bounded queue (`maxQueuedBytes` / `maxQueuedFrames`);
 * a frame over the bound is refused with RemotingBackpressureError and the connection stays open.
 */
export class OutboundQueue {
  private queue: Queued[] = [];
  private head = 0;
  private bytes = 0;
  private waitingDrain = false;
  private corked = false;
  /** The nextTick that ends this turn's cork is scheduled. */
  private tickScheduled = false;
  /** Frames written since the turn began; the early flush happens once, at `earlyFlushFrames`. */
  private turnFrames = 0;
  private readonly endTurn = (): void => {
    this.tickScheduled = false;
    this.turnFrames = 0;
    if (this.corked) {
      this.corked = false;
      this.socket.uncork();
    }
  };
  framesOut = 0;
  drainWaits = 0;

  /**
   * `onFlushed`, when given, runs each time a frame has left for the kernel (the socket's write
   * callback), so a server can count the bytes its connections hold (BufferBudget).
   */
  constructor(
    private readonly socket: net.Socket,
    private readonly addr: string,
    private readonly maxQueuedBytes: number,
    private readonly maxQueuedFrames: number,
    private readonly onFlushed?: () => void,
    /** Frames of a turn sent at once (a server's answers, EARLY_FLUSH_FRAMES); 0: none, all at the turn's end. */
    private readonly earlyFlushFrames = 0,
  ) {}

  get queuedFrames(): number {
    return this.queue.length - this.head;
  }
  get queuedBytes(): number {
    return this.bytes;
  }
  /** Output held in memory: the queue plus what the socket buffers for the kernel. */
  get bufferedBytes(): number {
    return this.bytes + this.socket.writableLength;
  }
  /** True while the socket pushes back (write() returned false) and frames wait for 'drain'. */
  get waitingForDrain(): boolean {
    return this.waitingDrain;
  }

  /** Write one encoded frame, or queue it while the socket drains; `done` runs once it reached the socket. */
  write(
    opaque: number,
    code: number,
    head: Buffer,
    body: Buffer | null,
    done: ((err?: Error) => void) | undefined,
  ): void {
    if (this.waitingDrain) {
      const size = head.length + (body ? body.length : 0);
      const frames = this.queue.length - this.head;
      if (this.bytes + size > this.maxQueuedBytes || frames + 1 > this.maxQueuedFrames) {
        throw new RemotingBackpressureError(
          this.addr,
          code,
          this.bytes,
          frames,
          size,
          `${this.maxQueuedBytes} bytes / ${this.maxQueuedFrames} frames`,
        );
      }
      this.queue.push({ opaque, code, head, body, size, done });
      this.bytes += size;
      return;
    }
    this.rawWrite(head, body);
    done?.();
  }

  /** The socket drained: send what waited, in order, until it pushes back again. */
  onDrain(closed: boolean): void {
    this.waitingDrain = false;
    while (!this.waitingDrain && this.head < this.queue.length && !closed) {
      const q = this.queue[this.head]!;
      this.queue[this.head++] = undefined as unknown as Queued;
      this.bytes -= q.size;
      this.rawWrite(q.head, q.body);
      q.done?.();
    }
    if (this.head === this.queue.length) {
      this.queue = [];
      this.head = 0;
    }
  }

  /** The connection closed: drop the queue, failing each waiting frame's `done`. */
  failAll(reason: Error | undefined): void {
    const queued = this.queue.slice(this.head);
    this.queue = [];
    this.head = 0;
    this.bytes = 0;
    for (const q of queued) {
      q.done?.(new RemotingClosedError(this.addr, q.opaque, q.code, 0, { cause: reason }));
    }
  }

  private rawWrite(head: Buffer, body: Buffer | null): void {
    this.framesOut++;
    // The socket stays corked until the process.nextTick queue runs, i.e. when the JavaScript that
    // wrote this frame (a chunk's responses and the calls and answers they release) has returned:
    // frames written meanwhile leave in one writev, header and body as separate buffers, the body
    // never copied (four times the round trips at 256 in flight of a write per frame).
    // A server's end sends the first `earlyFlushFrames` answers of a turn as soon as they are
    // written: the clients start on them while it works on the rest, where one writev at the end of
    // the turn made both ends take turns (the embedded broker's sends with 4 in flight: about 2.3
    // times the rate; docs/bench-log/performance-targets.md). A client's requests keep one writev per turn: sent early
    // too, a consumer's pulls cost a Java broker and the consumer more writes and reads for fewer
    // messages (10 % fewer messages a second, 20 % more CPU).
    if (!this.corked) {
      this.corked = true;
      this.socket.cork();
      if (!this.tickScheduled) {
        this.tickScheduled = true;
        process.nextTick(this.endTurn);
      }
    }
    let ok: boolean;
    if (body) {
      this.socket.write(head);
      ok = this.socket.write(body, this.onFlushed);
    } else {
      ok = this.socket.write(head, this.onFlushed);
    }
    if (++this.turnFrames === this.earlyFlushFrames) {
      this.corked = false;
      this.socket.uncork();
    }
    if (!ok) {
      this.waitingDrain = true;
      this.drainWaits++;
    }
  }
}
