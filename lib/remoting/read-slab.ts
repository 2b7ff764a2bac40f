import type net from 'node:net';

/** Bytes of one slab that socket reads are made into. */
export const SLAB_BYTES = 256 * 1024;
/** A read is given at least this much room: below it the next read starts a new slab. */
export const MIN_READ_BYTES = 64 * 1024;

/**
 * The buffers a client socket reads into (net's `onread`), in place of the 64 KiB buffer Node
 * allocates for every read. A broker answering pulls of 32 × 1 KiB sends ~40 KiB frames back to
 * back, so with 64 KiB reads most frames straddle two reads and are copied whole, and each read
 * is a syscall and a turn of the event loop whose pull requests go out in a write of their own.
 * Reads into a 256 KiB slab take up to four times as much at once when the socket holds it.
 *
 * Each read gets the unused tail of the current slab (at least 64 KiB of it, else a new slab), so
 * the chunks handed on never overlap and stay valid for as long as anything views them, as the
 * FrameDecoder requires: a slab is never written to where a chunk was already handed out. A slab
 * lives as long as any view of it, as Node's own read buffers do.
 */
export class ReadSlab {
  private slab: Buffer = Buffer.allocUnsafeSlow(SLAB_BYTES);
  private used = 0;
  /** Chunks read before a reader was attached (a peer may write before `connect` is seen). */
  private early: Buffer[] | null = [];
  private sink: ((chunk: Buffer) => void) | null = null;

  /** net's `onread.buffer`: where the next read goes. */
  readonly next = (): Buffer => {
    if (SLAB_BYTES - this.used < MIN_READ_BYTES) {
      this.slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
      this.used = 0;
    }
    return this.slab.subarray(this.used);
  };

  /**
   * net's `onread.callback`: `n` bytes were read into the buffer `next` returned. Returns true:
   * reading is paused and resumed with socket.pause() and resume(), never from here.
   */
  readonly onRead = (n: number, buf: Uint8Array): boolean => {
    const chunk = Buffer.from(buf.buffer, buf.byteOffset, n);
    this.used += n;
    if (this.sink) this.sink(chunk);
    else this.early?.push(chunk);
    return true;
  };

  /** Hand every chunk read so far, and from now on every chunk as it is read, to `sink`. */
  attach(sink: (chunk: Buffer) => void): void {
    this.sink = sink;
    const early = this.early;
    this.early = null;
    if (early) for (const chunk of early) sink(chunk);
  }
}

/** Socket options that make a TCP client socket read through `slab`. */
export function slabReadOptions(slab: ReadSlab): Pick<net.NetConnectOpts, 'onread'> {
  return { onread: { buffer: slab.next, callback: slab.onRead } };
}
