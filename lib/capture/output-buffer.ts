// Buffer#utf8Write and #latin1Write are what write(s, offset, encoding) ends in, minus the argument
// and encoding dispatch; they are not in @types/node, hence the cast. Both return the bytes written.
type Writable = Buffer & {
  utf8Write(s: string, offset: number): number;
  latin1Write(s: string, offset: number): number;
};

/** Appended pieces smaller than this are copied: many small writes cost more than the copy. */
const APPEND_COPY_BELOW = 16 * 1024;

/**
 * Output gathered as bytes in large buffers, for `rocketwire decode`. Strings are written into the
 * buffer one piece at a time, each already flat: a line built by `+=` and encoded by
 * `Buffer.from` at flush time is a rope of thousands of pieces, and flattening and encoding it cost
 * as much as decoding the capture (about 340 MB/s against 3.5 GB/s for flat pieces, Node 20).
 * `take` hands out views of the bytes written since the last take; they are never written again
 * (writing goes on after them, or in a new buffer), so a stream may hold them as long as it likes.
 */
export class OutputBuffer {
  private buf: Writable;
  /** First byte of `buf` not yet handed out. */
  private start = 0;
  private pos = 0;
  /** Filled parts of earlier buffers, not yet handed out. */
  private sealed: Buffer[] = [];
  private sealedBytes = 0;

  constructor(private readonly chunkBytes = 1024 * 1024) {
    this.buf = Buffer.allocUnsafe(chunkBytes) as Writable;
  }

  /** Bytes written and not yet taken. */
  get length(): number {
    return this.sealedBytes + this.pos - this.start;
  }

  /** Any string, as UTF-8 (lone surrogates become U+FFFD, as Buffer.from does). */
  text(s: string): void {
    // A UTF-16 unit never takes more than 3 bytes of UTF-8.
    if (s.length * 3 > this.buf.length - this.pos) this.room(s.length * 3);
    this.pos += this.buf.utf8Write(s, this.pos);
  }

  /** A string known to be ASCII (base64, digits): copied byte for byte, no UTF-8 encoding. */
  ascii(s: string): void {
    if (s.length > this.buf.length - this.pos) this.room(s.length);
    this.pos += this.buf.latin1Write(s, this.pos);
  }

  bytes(b: Uint8Array): void {
    if (b.length > this.buf.length - this.pos) this.room(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  /**
   * Bytes someone else wrote, kept in order with the rest: small pieces are copied, large ones
   * handed out as they are at the next take (the caller must not write into them again).
   */
  append(b: Buffer): void {
    if (b.length < APPEND_COPY_BELOW) return this.bytes(b);
    if (this.pos > this.start) {
      this.sealed.push(this.buf.subarray(this.start, this.pos));
      this.sealedBytes += this.pos - this.start;
      this.start = this.pos;
    }
    this.sealed.push(b);
    this.sealedBytes += b.length;
  }

  /**
   * As take, and nothing is ever written again into the memory the pieces are in (the next write
   * starts a new buffer), so their ArrayBuffers can be transferred to another thread.
   */
  takeDetached(): Buffer[] {
    const out = this.take();
    if (this.pos > 0) {
      this.buf = Buffer.allocUnsafe(this.chunkBytes) as Writable;
      this.start = 0;
      this.pos = 0;
    }
    return out;
  }

  /** The bytes written since the last take, in order (views; no copy). */
  take(): Buffer[] {
    const out = this.sealed;
    if (this.pos > this.start) out.push(this.buf.subarray(this.start, this.pos));
    this.start = this.pos;
    this.sealed = [];
    this.sealedBytes = 0;
    return out;
  }

  /** A new buffer with room for `n` bytes; the filled part of the old one waits for take. */
  private room(n: number): void {
    if (this.pos > this.start) {
      this.sealed.push(this.buf.subarray(this.start, this.pos));
      this.sealedBytes += this.pos - this.start;
    }
    this.buf = Buffer.allocUnsafe(Math.max(this.chunkBytes, n)) as Writable;
    this.start = 0;
    this.pos = 0;
  }
}
