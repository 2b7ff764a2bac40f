import type { RemotingCommand } from './command.js';
import { OptionError, ProtocolError } from './errors.js';
import { decodeJsonCommand, jsonHeaderText, type HeaderEncodeOptions } from './header-json.js';
import { decodeRocketmqHeader, rocketmqHeaderLayout, writeRocketmqHeader } from './header-rocketmq.js';

/**
 * Frame layout (RemotingCommand on the wire):
 *   int32 totalLength   = 4 + headerLength + bodyLength (does not count itself)
 *   int32 headerInfo    = serializeType << 24 | headerLength (24 bits)
 *   header              JSON text (type 0) or ROCKETMQ binary (type 1)
 *   body                the rest of the frame
 * Java's decoder (LengthFieldBasedFrameDecoder) limits the whole frame, prefix included, to
 * 16 MiB (com.rocketmq.remoting.frameMaxLength).
 */
export const DEFAULT_MAX_FRAME_LENGTH = 16 * 1024 * 1024;

// The header length is a 24-bit field; anything larger would spill into the serialize type byte.
const MAX_HEADER_LENGTH = 0xffffff;

/**
 * Allocate `8 + header + tail` bytes and write the frame prefix and the header into them.
 * The header is measured first and written straight into the frame (one allocation, no copy).
 */
function encodeHead(cmd: RemotingCommand, bodyLen: number, tail: number, options?: HeaderEncodeOptions): Buffer {
  const rocketmq = cmd.serializeType === 'ROCKETMQ';
  const layout = rocketmq ? rocketmqHeaderLayout(cmd) : null;
  const text = rocketmq ? '' : jsonHeaderText(cmd, options);
  const headerLength = layout ? layout.size : Buffer.byteLength(text, 'utf8');
  if (headerLength > MAX_HEADER_LENGTH) {
    throw new ProtocolError(`header of ${headerLength} bytes exceeds the 24-bit header length field`, 4);
  }
  const total = 4 + headerLength + bodyLen;
  if (total > 0x7fffffff) throw new ProtocolError(`frame of ${total} bytes does not fit the int32 length field`, 0);
  const out = Buffer.allocUnsafe(8 + headerLength + tail);
  out.writeInt32BE(total, 0);
  out.writeInt32BE(((rocketmq ? 1 : 0) << 24) | headerLength, 4);
  if (layout) writeRocketmqHeader(cmd, layout, out, 8);
  else out.write(text, 8, headerLength, 'utf8');
  return out;
}

/**
 * Encode a frame as two parts: the 8-byte prefix plus header, and the body as given (not copied),
 * so a socket can write a large body without copying it.
 */
export function encodeCommandParts(cmd: RemotingCommand, options?: HeaderEncodeOptions): [Buffer, Buffer | null] {
  const bodyLen = cmd.body ? cmd.body.length : 0;
  const head = encodeHead(cmd, bodyLen, 0, options);
  return [head, bodyLen > 0 ? cmd.body! : null];
}

/** Encode a whole frame into one buffer. */
export function encodeCommand(cmd: RemotingCommand, options?: HeaderEncodeOptions): Buffer {
  const bodyLen = cmd.body ? cmd.body.length : 0;
  const out = encodeHead(cmd, bodyLen, bodyLen, options);
  if (bodyLen > 0) cmd.body!.copy(out, out.length - bodyLen);
  return out;
}

/**
 * Decode one whole frame (as handed out by FrameDecoder, length prefix included). The body is a
 * view into `frame`. `base` is the frame's position in its stream, used in error offsets.
 */
export function decodeCommand(frame: Buffer, base = 0): RemotingCommand {
  if (frame.length < 8) throw new ProtocolError(`frame of ${frame.length} bytes is shorter than 8`, base);
  const total = frame.readInt32BE(0);
  if (total !== frame.length - 4) {
    throw new ProtocolError(`frame length field ${total} does not match ${frame.length - 4} bytes`, base);
  }
  const info = frame.readInt32BE(4);
  const type = (info >>> 24) & 0xff;
  const headerLength = info & 0xffffff;
  if (headerLength > total - 4) {
    throw new ProtocolError(`header length ${headerLength} exceeds frame length ${total}`, base + 4);
  }
  const headerBytes = frame.subarray(8, 8 + headerLength);
  const body = frame.length > 8 + headerLength ? frame.subarray(8 + headerLength) : null;
  // JSON, the common case, builds the command in one object (no copy of the header's fields).
  if (type === 0) return decodeJsonCommand(headerBytes, base + 8, body);
  if (type !== 1) throw new ProtocolError(`unknown serialize type ${type}`, base + 4);
  return { ...decodeRocketmqHeader(headerBytes, base + 8), body } as RemotingCommand;
}

/** A straddling frame's piece this long or longer is kept as a view of its chunk; shorter ones are copied. */
const MIN_VIEW_BYTES = 4096;
/** Size of the buffers short pieces are copied into. */
const STAGING_BYTES = 16 * 1024;

/** Limits of a FrameDecoder. */
export interface FrameDecoderOptions {
  /**
   * Largest frame accepted, in bytes, the 4-byte length prefix included.
   * @default 16777216 (16 MiB)
   */
  maxFrameLength?: number;
}

/**
 * Streaming splitter of a TCP byte stream into frames. Frames that lie inside one chunk are handed
 * out as `subarray` views of that chunk (no copy). A frame that straddles chunks is gathered as views
 * of the chunks its bytes arrived in and joined into one buffer when its last byte arrives: every
 * byte is copied exactly once, and a header announcing 16 MiB costs what was actually received,
 * not 16 MiB (a peer that sends the head of a large frame and stops holds those bytes and no more).
 * Because it keeps views, a pushed chunk must not be written to afterwards (socket chunks never
 * are). The decoder never writes into a buffer it has handed out, so views stay valid. A declared
 * length above the limit is rejected as soon as its 4 bytes arrive.
 * After a ProtocolError, or any exception thrown by `onFrame`, the decoder stays failed (`failed`
 * holds a ProtocolError and every later push throws it): the stream cannot be resynchronised.
 */
export class FrameDecoder {
  readonly maxFrameLength: number;
  /** The straddling frame being gathered: `filled` bytes of `partialSize`, as views of its chunks. */
  private partial: Buffer[] | null = null;
  /**
   * The frame being gathered in a buffer of its own, once `readTarget` made one: its bytes land at
   * `filled`, read there by the socket (no copy) or copied from chunks pushed from elsewhere.
   */
  private whole: Buffer | null = null;
  /** The last part of `partial` when it is a buffer small pieces are copied into. */
  private staging: { buf: Buffer; used: number; index: number } | null = null;
  private filled = 0;
  private partialSize = 0;
  private readonly head = Buffer.alloc(8);
  private headFilled = 0;
  private headLengthChecked = false;
  private base = 0;
  private failure: ProtocolError | null = null;

  constructor(options: FrameDecoderOptions = {}) {
    this.maxFrameLength = options.maxFrameLength ?? DEFAULT_MAX_FRAME_LENGTH;
    if (!Number.isInteger(this.maxFrameLength) || this.maxFrameLength < 8) {
      throw new OptionError('maxFrameLength', `maxFrameLength must be an integer >= 8, got ${options.maxFrameLength}`);
    }
  }

  /** Stream bytes consumed so far. */
  get bytesRead(): number {
    return this.base;
  }
  /** Bytes held for a frame not yet complete. */
  get pendingBytes(): number {
    return this.partial || this.whole ? this.filled : this.headFilled;
  }
  /**
   * Memory held for the frame not yet complete: its bytes received so far and its staging room, or
   * its whole buffer once `readTarget` made one (0 when none).
   */
  get bufferedBytes(): number {
    if (this.whole) return this.whole.length;
    if (!this.partial) return 0;
    return this.filled + (this.staging ? this.staging.buf.length - this.staging.used : 0);
  }
  get failed(): ProtocolError | null {
    return this.failure;
  }

  /** Feed a chunk; `onFrame(frame, offset)` is called for every complete frame, in order. */
  push(chunk: Buffer, onFrame: (frame: Buffer, offset: number) => void): void {
    if (this.failure) throw this.failure;
    const n = chunk.length;
    let pos = 0;
    try {
      while (pos < n) {
        const whole = this.whole;
        if (whole !== null) {
          const take = Math.min(this.partialSize - this.filled, n - pos);
          // A read made into readTarget's buffer is already in place; a chunk from elsewhere is copied.
          if (chunk.buffer !== whole.buffer || chunk.byteOffset + pos !== whole.byteOffset + this.filled) {
            chunk.copy(whole, this.filled, pos, pos + take);
          }
          this.filled += take;
          pos += take;
          if (this.filled === this.partialSize) {
            this.whole = null;
            onFrame(whole, this.base + pos - whole.length);
          }
          continue;
        }
        if (this.partial) {
          const take = Math.min(this.partialSize - this.filled, n - pos);
          this.gather(chunk, pos, take);
          pos += take;
          if (this.filled === this.partialSize) {
            const f = Buffer.concat(this.partial, this.partialSize);
            this.partial = null;
            this.staging = null;
            const start = this.base + pos - f.length;
            onFrame(f, start);
          }
          continue;
        }
        if (this.headFilled > 0 || n - pos < 8) {
          const take = Math.min(8 - this.headFilled, n - pos);
          chunk.copy(this.head, this.headFilled, pos, pos + take);
          this.headFilled += take;
          pos += take;
          const headStart = this.base + pos - this.headFilled;
          if (this.headFilled >= 4 && !this.headLengthChecked) {
            this.checkLength(this.head.readInt32BE(0), headStart);
            this.headLengthChecked = true;
          }
          if (this.headFilled < 8) continue;
          const total = this.checkHead(this.head, 0, headStart);
          this.headFilled = 0;
          this.headLengthChecked = false;
          if (total === 4) {
            onFrame(Buffer.from(this.head), headStart);
          } else {
            this.startPartial(total + 4);
            this.gather(this.head, 0, 8);
          }
          continue;
        }
        const total = this.checkHead(chunk, pos, this.base + pos);
        const size = total + 4;
        if (n - pos >= size) {
          const start = pos;
          pos += size;
          onFrame(chunk.subarray(start, pos), this.base + start);
        } else {
          this.startPartial(size);
          this.gather(chunk, pos, n - pos);
          pos = n;
        }
      }
    } catch (err) {
      // A throw from onFrame leaves the rest of this chunk unread, so the stream cannot go on
      // either: later pushes would start in the middle of a frame.
      this.failure =
        err instanceof ProtocolError
          ? err
          : new ProtocolError(`frame handler threw; ${n - pos} unread bytes of the chunk dropped`, this.base + pos, {
              cause: err,
            });
      throw err;
    } finally {
      this.base += pos;
    }
  }

  /**
   * The stream is over (its connection closed): let go of the partial frame's buffer at once,
   * whoever still holds the decoder. Later pushes throw.
   */
  close(): void {
    this.partial = null;
    this.whole = null;
    this.staging = null;
    this.filled = 0;
    this.headFilled = 0;
    this.failure ??= new ProtocolError('frame decoder closed', this.base);
  }

  /** Collect the frames of one chunk into an array (convenient for tests and tools). */
  pushAll(chunk: Buffer): Buffer[] {
    const out: Buffer[] = [];
    this.push(chunk, (f) => out.push(f));
    return out;
  }

  /**
   * Where the next bytes of the stream can be read so that the frame being gathered needs no copy:
   * the rest of that frame's own buffer, or null (read anywhere and push). The buffer is made once
   * an eighth of the frame has arrived, when at least `minBytes` of it are still to come; the bytes
   * gathered so far are copied into it once. A read into it must be pushed before the next call,
   * and reads no further than the frame's end, so frames after it come in later reads.
   * Memory: a peer that sends the first eighth of a frame and stops makes the decoder hold 8 times
   * what it sent, never more than the frame (at most `maxFrameLength`); without calls to this method
   * the decoder holds about what arrived, as the class comment says.
   */
  readTarget(minBytes: number): Buffer | null {
    let whole = this.whole;
    if (whole === null) {
      const parts = this.partial;
      if (parts === null || this.partialSize - this.filled < minBytes || this.filled * 8 < this.partialSize)
        return null;
      whole = Buffer.allocUnsafeSlow(this.partialSize);
      let at = 0;
      for (const part of parts) at += part.copy(whole, at);
      this.whole = whole;
      this.partial = null;
      this.staging = null;
    }
    return whole.subarray(this.filled);
  }

  /** Begin gathering a frame of `size` bytes (its bytes follow through gather). */
  private startPartial(size: number): void {
    this.partialSize = size;
    this.partial = [];
    this.filled = 0;
    this.staging = null;
  }

  /**
   * Add `take` bytes of `chunk` from `pos` to the partial frame. Pieces of at least 4 KiB are kept
   * as views; smaller ones are copied into a staging buffer of up to 16 KiB, so a peer that sends a
   * frame a byte at a time costs its bytes plus one buffer per 16 KiB, not one object per byte.
   */
  private gather(chunk: Buffer, pos: number, take: number): void {
    const parts = this.partial!;
    if (take >= MIN_VIEW_BYTES) {
      parts.push(take === chunk.length ? chunk : chunk.subarray(pos, pos + take));
      this.staging = null;
    } else {
      let st = this.staging;
      if (st === null || st.used + take > st.buf.length) {
        st = {
          buf: Buffer.allocUnsafe(Math.min(STAGING_BYTES, this.partialSize - this.filled)),
          used: 0,
          index: parts.length,
        };
        parts.push(st.buf.subarray(0, 0));
        this.staging = st;
      }
      chunk.copy(st.buf, st.used, pos, pos + take);
      st.used += take;
      parts[st.index] = st.buf.subarray(0, st.used);
    }
    this.filled += take;
  }

  private checkLength(total: number, at: number): void {
    if (total < 4) throw new ProtocolError(`frame length ${total} is below the minimum of 4`, at);
    if (total > this.maxFrameLength - 4) {
      throw new ProtocolError(
        `frame length ${total} exceeds the maximum of ${this.maxFrameLength} bytes (prefix included)`,
        at,
      );
    }
  }

  private checkHead(b: Buffer, p: number, at: number): number {
    const total = b.readInt32BE(p);
    this.checkLength(total, at);
    const info = b.readInt32BE(p + 4);
    const type = (info >>> 24) & 0xff;
    if (type !== 0 && type !== 1) throw new ProtocolError(`unknown serialize type ${type}`, at + 4);
    const headerLength = info & 0xffffff;
    if (headerLength > total - 4) {
      throw new ProtocolError(`header length ${headerLength} exceeds frame length ${total}`, at + 4);
    }
    return total;
  }
}
