/**
 * A queue of received chunks read from the front. Capture records usually lie inside one chunk and
 * are handed out as views; a record that straddles chunks is copied once, by merging just the
 * chunks it spans, so a stream is never re-concatenated on every read.
 */
export class ByteQueue {
  private chunks: Buffer[] = [];
  private head = 0; // read position in chunks[0]
  private size = 0;
  /** Bytes consumed since the start of the stream. */
  position = 0;

  get length(): number {
    return this.size;
  }

  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.chunks.push(chunk);
    this.size += chunk.length;
  }

  /** A contiguous view of the next `n` bytes (n <= length); valid until the next push or skip. */
  peek(n: number): Buffer {
    const first = this.chunks[0]!;
    if (first.length - this.head >= n) return first.subarray(this.head, this.head + n);
    // Copy just the record's bytes into a buffer of its own; the rest of the last chunk it
    // touches stays a view, so a chunk boundary costs one record copy, not one chunk copy.
    const merged = Buffer.allocUnsafe(n);
    let off = 0;
    let i = 0;
    let h = this.head;
    while (off < n) {
      const c = this.chunks[i]!;
      const take = Math.min(c.length - h, n - off);
      c.copy(merged, off, h, h + take);
      off += take;
      h += take;
      if (h === c.length) {
        i++;
        h = 0;
      }
    }
    const tail = this.chunks.slice(i);
    if (tail.length > 0 && h > 0) tail[0] = tail[0]!.subarray(h);
    this.chunks = [merged, ...tail];
    this.head = 0;
    return merged;
  }

  skip(n: number): void {
    this.size -= n;
    this.position += n;
    let h = this.head + n;
    while (this.chunks.length > 0 && h >= this.chunks[0]!.length) {
      h -= this.chunks[0]!.length;
      this.chunks.shift();
    }
    this.head = h;
  }
}
