/** Receives the bytes of one direction of a TCP connection, in order. */
export interface TcpStreamSink {
  data(bytes: Buffer): void;
  /** `n` bytes were not captured (lost packets, snaplen). */
  gap(n: number): void;
  /**
   * The direction is finished (FIN reached, RST, or end of capture); `reason` when it is finished
   * early by the decoder's bounds on flows (idle, evicted).
   */
  end(reason?: string): void;
}

export interface TcpStreamOptions {
  /** Out-of-order bytes held while waiting for a hole to fill. Default 8 MiB. */
  maxBufferedBytes?: number;
  /** Out-of-order segments held. Default 1024. */
  maxBufferedSegments?: number;
}

interface Held {
  seq: number;
  data: Buffer;
  missing: number;
}

/** Signed distance a - b between two 32-bit sequence numbers (RFC 1982 arithmetic). */
export function seqDiff(a: number, b: number): number {
  return (a - b) | 0;
}

/**
 * Reassembles one direction of a TCP connection: delivers bytes in sequence order once, whatever
 * the capture did (segments out of order, exact and overlapping retransmissions, sequence numbers
 * wrapping past 2^32). Out-of-order segments are copied and held up to a bound; a hole that the
 * bound, an ACK from the peer (the receiver got bytes we never saw) or the end of the flow shows to
 * be lost is reported as a gap, and delivery goes on after it.
 */
export class TcpStream {
  /** Next sequence number expected, or null before the first segment. */
  private next: number | null = null;
  private held: Held[] = [];
  private heldBytes = 0;
  private fin: number | null = null;
  private closed = false;
  private readonly maxBytes: number;
  private readonly maxSegments: number;
  /** Retransmitted bytes dropped (for statistics). */
  retransmittedBytes = 0;

  constructor(
    private readonly sink: TcpStreamSink,
    options: TcpStreamOptions = {},
  ) {
    this.maxBytes = options.maxBufferedBytes ?? 8 * 1024 * 1024;
    this.maxSegments = options.maxBufferedSegments ?? 1024;
  }

  get started(): boolean {
    return this.next !== null;
  }
  get isClosed(): boolean {
    return this.closed;
  }
  get bufferedBytes(): number {
    return this.heldBytes;
  }

  /** A SYN: the stream starts at seq + 1. */
  syn(seq: number): void {
    if (this.next === null) this.next = (seq + 1) >>> 0;
  }

  /**
   * A segment: `payload` captured bytes then `missing` uncaptured ones, starting at `seq`.
   * `fin` marks the end of the stream after this segment's bytes.
   */
  segment(seq: number, payload: Buffer, missing: number, fin: boolean): void {
    if (this.closed) return;
    const len = payload.length + missing;
    // A capture that starts mid-connection: the first segment seen fixes the stream's origin.
    if (this.next === null) this.next = seq;
    if (fin) this.fin = (seq + len) >>> 0;
    if (len > 0) {
      const d = seqDiff(seq, this.next);
      if (d + len <= 0) {
        this.retransmittedBytes += len;
      } else if (d <= 0) {
        this.deliver(payload, missing, -d);
        this.drain();
      } else {
        // Ahead of a hole: keep a copy (the packet buffer belongs to the reader).
        this.held.push({ seq, data: Buffer.from(payload), missing });
        this.heldBytes += len;
        if (this.heldBytes > this.maxBytes || this.held.length > this.maxSegments) this.skipHole();
      }
    }
    this.checkFin();
  }

  /**
   * A segment of a stream nobody reads (not RocketMQ): only move the expected sequence past it,
   * so that if the stream is read later (see StreamFramer.promote) no false gap shows up.
   */
  skip(seq: number, len: number): void {
    if (this.closed) return;
    if (this.next === null) this.next = seq;
    const end = (seq + len) >>> 0;
    if (seqDiff(end, this.next) > 0) this.next = end;
    this.held = [];
    this.heldBytes = 0;
  }

  /**
   * Let go of the out-of-order segments held (the decoder's bound on memory across flows): their
   * bytes count as lost, reported as a gap when delivery gets there. Returns the bytes released.
   */
  dropHeld(): number {
    const released = this.heldBytes;
    this.held = [];
    this.heldBytes = 0;
    return released;
  }

  /** The peer acknowledged `ack`: bytes before it that we hold no copy of will never come again. */
  peerAck(ack: number): void {
    if (this.closed || this.next === null || this.held.length === 0) return;
    if (seqDiff(ack, this.next) <= 0) return;
    this.sortHeld();
    const first = this.held[0]!;
    const upTo = seqDiff(ack, first.seq) < 0 ? ack : first.seq;
    const n = seqDiff(upTo, this.next);
    if (n > 0) {
      this.sink.gap(n);
      this.next = upTo >>> 0;
      this.drain();
      this.checkFin();
    }
  }

  /**
   * End of the flow (RST, end of capture, or `reason`: finished early by the decoder's bounds):
   * deliver what is held, reporting holes, and close.
   */
  close(reason?: string): void {
    if (this.closed) return;
    while (this.held.length > 0) this.skipHole();
    this.closed = true;
    if (reason === undefined) this.sink.end();
    else this.sink.end(reason);
  }

  private deliver(payload: Buffer, missing: number, skip: number): void {
    const len = payload.length + missing;
    if (skip < payload.length) this.sink.data(skip > 0 ? payload.subarray(skip) : payload);
    const lost = missing - Math.max(0, skip - payload.length);
    if (lost > 0) this.sink.gap(lost);
    this.next = (this.next! + (len - skip)) >>> 0;
  }

  private sortHeld(): void {
    const next = this.next!;
    this.held.sort((a, b) => seqDiff(a.seq, next) - seqDiff(b.seq, next));
  }

  /** Deliver held segments that are now in order. */
  private drain(): void {
    if (this.held.length === 0) return;
    this.sortHeld();
    let i = 0;
    for (; i < this.held.length; i++) {
      const h = this.held[i]!;
      const d = seqDiff(h.seq, this.next!);
      if (d > 0) break;
      const len = h.data.length + h.missing;
      this.heldBytes -= len;
      if (d + len > 0) this.deliver(h.data, h.missing, -d);
      else this.retransmittedBytes += len;
    }
    if (i > 0) this.held.splice(0, i);
  }

  /** Give up on the first hole: report it as a gap and carry on after it. */
  private skipHole(): void {
    this.sortHeld();
    const first = this.held[0]!;
    const d = seqDiff(first.seq, this.next!);
    if (d > 0) {
      this.sink.gap(d);
      this.next = first.seq;
    }
    this.drain();
  }

  private checkFin(): void {
    if (this.fin !== null && this.next !== null && seqDiff(this.next, this.fin) >= 0 && this.held.length === 0) {
      this.closed = true;
      this.sink.end();
    }
  }
}
