import type net from 'node:net';

/** Bytes of one slab that socket reads are made into. */
export const SLAB_BYTES = 256 * 1024;
/** A read is given at least this much room: below it the next read starts a new slab. */
export const MIN_READ_BYTES = 64 * 1024;

/**
 * Rest of a frame worth reading into the frame's own buffer. A read there stops at the frame's end,
 * where a slab read could have taken the next frames too; from half a slab on, that costs fewer
 * reads than the copy it saves.
 */
export const DIRECT_READ_BYTES = SLAB_BYTES / 2;

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
  /** Where the reader wants the next read to go instead (the rest of a large frame), if anywhere. */
  private target: ((minBytes: number) => Buffer | null) | null = null;

  /** net's `onread.buffer`: where the next read goes. */
  readonly next = (): Buffer => {
    const into = this.target?.(DIRECT_READ_BYTES);
    if (into) return into;
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
    if (buf.buffer === this.slab.buffer) this.used += n;
    if (this.sink) this.sink(chunk);
    else this.early?.push(chunk);
    return true;
  };

  /**
   * Hand every chunk read so far, and from now on every chunk as it is read, to `sink`. `target`,
   * asked before each read, may name where that read goes instead of the slab (FrameDecoder's
   * readTarget: the rest of a large frame, read in place with no copy); it gets the least room
   * worth a read of its own.
   */
  attach(sink: (chunk: Buffer) => void, target?: (minBytes: number) => Buffer | null): void {
    this.sink = sink;
    this.target = target ?? null;
    const early = this.early;
    this.early = null;
    if (early) for (const chunk of early) sink(chunk);
  }
}

/** Socket options that make a TCP client socket read through `slab`. */
export function slabReadOptions(slab: ReadSlab): Pick<net.NetConnectOpts, 'onread'> {
  return { onread: { buffer: slab.next, callback: slab.onRead } };
}
