import type { RemotingCommand } from '../../protocol/command.js';
import { ProtocolError } from '../../protocol/errors.js';
import { DEFAULT_MAX_FRAME_LENGTH, decodeCommand } from '../../protocol/frame.js';
import { decodeJsonHeader } from '../../protocol/header-json.js';
import { decodeRocketmqHeader } from '../../protocol/header-rocketmq.js';

/**
 * Where a framer is:
 *  - sync:    at a known frame boundary, splitting frames by their length;
 *  - scan:    looking for the next frame boundary (capture started mid-connection, after a gap or
 *             damage), by validating candidate headers;
 *  - ignored: the stream is not RocketMQ remoting (or cannot be resynchronised): bytes are dropped;
 *  - failed:  strict mode after damage.
 */
export type FramerState = 'sync' | 'scan' | 'ignored' | 'failed';

export interface FramerOptions {
  /** Start at a frame boundary ('sync') or look for one ('scan'). */
  start: 'sync' | 'scan';
  /**
   * How many candidate positions a scan may try before deciding the stream is not RocketMQ.
   * 1 = the stream must start with a frame; Infinity = keep looking (a known RocketMQ port).
   */
  scanLimit?: number;
  /** After damage: look for the next frame (true) or stop (false, raw frame files). */
  resync?: boolean;
  /**
   * The stream is known to be RocketMQ (default for 'sync'). When false, a 'sync' start is only a
   * guess from the port: if the first bytes are no frame, the stream is searched quietly within
   * scanLimit instead of reporting damage (HTTP on 8080 is not a damaged RocketMQ stream).
   */
  confirmed?: boolean;
  maxFrameLength?: number;
  /** How positions are named in problem texts: 'stream' (a TCP stream) or 'input' (a file of frames). */
  streamName?: 'stream' | 'input';
}

/**
 * What a problem is about, for counting: a frame the stream ended inside ('incomplete-frame'), bytes
 * dropped to keep the decoder's memory bound ('buffer-limit'); other problems have no kind.
 */
export type ProblemKind = 'incomplete-frame' | 'buffer-limit';

export interface FramerSink {
  frame(cmd: RemotingCommand, frame: Buffer, offset: number): void;
  problem(message: string, offset: number, lost: boolean, kind?: ProblemKind): void;
  /** Called once when a stream turns out not to be RocketMQ remoting. */
  ignored?(reason: string): void;
}

/** Headers longer than this are not believed while resynchronising (properties are limited to 32 KiB). */
const MAX_CANDIDATE_HEADER = 256 * 1024;
/**
 * Smallest buffer of a frame that straddles chunks. A capture hands over a packet's payload at a
 * time (1460 bytes, or 64 KiB with segmentation offload), so the buffer starts at twice what is at
 * hand and doubles as bytes arrive, up to the frame's size: memory stays within twice the bytes
 * seen even for thousands of flows each holding the first packet of a large frame.
 */
const MIN_PARTIAL_CAPACITY = 4096;
/**
 * A straddling frame this small gets its whole buffer at once: growing by doubling copied a 40 KB
 * pull result 2.6 times over (4, 8, 16, 32 KiB, then its size), where once is enough. Per flow that
 * holds at most this much more than twice the bytes seen, and maxTotalBufferedBytes bounds the sum.
 */
const WHOLE_BUFFER_MAX = 64 * 1024;

/**
 * Splits one direction of a TCP stream into remoting frames, like protocol's FrameDecoder (views
 * for frames inside one chunk, one copy for frames that straddle chunks), but able to live with
 * captures: it can be told about missing bytes (gap), start in the middle of a connection, and
 * find the next frame boundary after damage. FrameDecoder stays failed after an error on purpose
 * (a live connection must be closed); a capture decoder must go on. Like FrameDecoder, the buffer of
 * a straddling frame grows with the bytes that arrive, so memory follows the bytes seen, not the
 * lengths frame heads announce (8 000 flows each showing the head of a 16 MiB frame reserved
 * 130 GB); a frame already known to be lost (a gap inside it, or dropped by `drop`) keeps no buffer
 * at all: its remaining bytes are only counted, so the stream stays in sync.
 */
export class StreamFramer {
  private st: FramerState;
  private readonly max: number;
  private readonly resync: boolean;
  private readonly streamName: string;
  /** "stream byte" within a TCP stream, plain "byte" in a file of frames. */
  private readonly at: string;
  private scanLimit: number;
  private tried = 0;
  /** Stream offset of the next byte pushed. */
  private offset = 0;
  /** True once a frame was found: the stream is RocketMQ, so later damage is reported. */
  private recognised = false;

  // sync state: a partial frame (length known: partialSize > 0) or a partial 8-byte head. `partial`
  // holds its first `filled` bytes, or is null once the frame is known to be lost (skipped).
  private partial: Buffer | null = null;
  private partialSize = 0;
  private filled = 0;
  private partialMissing = 0;
  private partialStart = 0;
  /** A frame head that straddles chunks; allocated when first needed (most streams never need it). */
  private head: Buffer | null = null;
  private headFilled = 0;

  // scan state: bytes kept while a candidate waits for the rest of its header
  private scanBuf: Buffer | null = null;

  constructor(
    private readonly sink: FramerSink,
    options: FramerOptions,
  ) {
    this.st = options.start;
    this.max = options.maxFrameLength ?? DEFAULT_MAX_FRAME_LENGTH;
    this.resync = options.resync ?? true;
    this.streamName = options.streamName ?? 'stream';
    this.at = this.streamName === 'input' ? 'byte' : 'stream byte';
    this.scanLimit = options.scanLimit ?? Infinity;
    if (options.start === 'sync') this.recognised = options.confirmed ?? true;
  }

  get state(): FramerState {
    return this.st;
  }
  get bytesSeen(): number {
    return this.offset;
  }
  /** Memory held for this stream: the partial frame's buffer and the bytes a scan keeps. */
  get bufferedBytes(): number {
    return (this.partial ? this.partial.length : 0) + (this.scanBuf ? this.scanBuf.length : 0);
  }

  /**
   * Let go of what this stream holds (the decoder's bound on memory across flows): a partial frame
   * is reported lost and its remaining bytes are skipped (the stream stays in sync); bytes a scan
   * kept are dropped. Returns the bytes released.
   */
  drop(reason: string): number {
    const released = this.bufferedBytes;
    if (this.partial) {
      this.sink.problem(
        `frame at ${this.at} ${this.partialStart} (${this.partialSize} bytes) dropped after ${this.filled} bytes: ${reason}`,
        this.partialStart,
        true,
        'buffer-limit',
      );
      this.partial = null;
      this.partialMissing = Math.max(1, this.partialMissing);
    }
    if (this.scanBuf) {
      if (this.recognised) {
        this.sink.problem(
          `${this.scanBuf.length} bytes at ${this.at} ${this.offset - this.scanBuf.length} dropped: ${reason}`,
          this.offset - this.scanBuf.length,
          true,
          'buffer-limit',
        );
      }
      this.scanBuf = null;
    }
    return released;
  }
  /** True when frames were found in the stream (or it was declared RocketMQ). */
  get isRocketmq(): boolean {
    return this.recognised;
  }

  /**
   * The other direction of the connection turned out to be RocketMQ, so this one is too: look for
   * frames for as long as it takes, even if the probe budget made us give up.
   */
  promote(): void {
    if (this.recognised) return;
    this.scanLimit = Infinity;
    if (this.st === 'sync') this.recognised = true; // at a frame boundary: damage from now on is real
    if (this.st === 'ignored') {
      this.st = 'scan';
      this.scanBuf = null;
    }
  }

  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    if (this.st === 'sync') this.pushSync(chunk, this.offset);
    else if (this.st === 'scan') this.pushScan(chunk, this.offset);
    this.offset += chunk.length;
  }

  /** `n` bytes of the stream were not captured. */
  gap(n: number): void {
    if (n <= 0) return;
    const at = this.offset;
    this.offset += n;
    if (this.st === 'ignored' || this.st === 'failed') return;
    if (this.st === 'scan') {
      this.scanBuf = null;
      if (this.recognised) this.sink.problem(`${n} bytes missing at ${this.at} ${at}; resynchronising`, at, true);
      return;
    }
    if (!this.resync) return this.fail(`${n} bytes missing at ${this.at} ${at}`, at);
    if (this.partialSize > 0) {
      const remaining = this.partialSize - this.filled;
      if (n < remaining) {
        // The gap lies inside a frame whose length we know: skip the hole, the next frame starts on
        // time. The frame is lost, so its bytes are no longer kept.
        this.sink.problem(
          `${n} bytes missing at ${this.at} ${at}, inside the frame at byte ${this.partialStart} (${this.partialSize} bytes), which is skipped`,
          at,
          true,
        );
        this.partialMissing += n;
        this.filled += n;
        this.partial = null;
        return;
      }
      this.endPartial();
      this.sink.problem(
        `${n} bytes missing at ${this.at} ${at}: frame at byte ${this.partialStart} lost; resynchronising`,
        at,
        true,
      );
    } else {
      this.sink.problem(`${n} bytes missing at ${this.at} ${at}; resynchronising`, at, true);
    }
    this.headFilled = 0;
    this.enterScan();
  }

  /**
   * End of the stream: a frame cut short is reported ('incomplete-frame'), and so is what looks
   * like the head of a frame whose header never completed while looking for the first frame (the
   * flow's first frame never completes: without this, such a flow said nothing). `reason`: why a
   * stream that did not end is finished early (the decoder's flow bounds), added to the message.
   */
  end(reason?: string): void {
    const why = reason === undefined ? '' : `: ${reason}`;
    if (this.st === 'sync' && (this.partialSize > 0 || this.headFilled > 0)) {
      const start = this.partialSize > 0 ? this.partialStart : this.offset - this.headFilled;
      const have = this.partialSize > 0 ? this.filled : this.headFilled;
      const need = this.partialSize > 0 ? this.partialSize : 8;
      this.sink.problem(
        `${this.streamName} ends inside the frame at byte ${start} (${have} of ${need} bytes)${why}`,
        start,
        true,
        'incomplete-frame',
      );
    } else if (this.st === 'scan' && this.scanBuf && (this.scanBuf.length >= 8 || this.recognised)) {
      // The scan keeps bytes only from a position it could not decide on: with 8 bytes or more,
      // a head that passed every check (length, serialize type, header length) but whose header
      // never arrived.
      const start = this.offset - this.scanBuf.length;
      const total = this.scanBuf.length >= 4 ? this.scanBuf.readInt32BE(0) + 4 : null;
      this.sink.problem(
        `${this.streamName} ends inside what looks like a frame at byte ${start} (${this.scanBuf.length}${total !== null ? ` of ${total}` : ''} bytes, its header incomplete)${why}`,
        start,
        true,
        'incomplete-frame',
      );
    }
    this.endPartial();
    this.headFilled = 0;
    this.scanBuf = null;
  }

  private endPartial(): void {
    this.partial = null;
    this.partialSize = 0;
    this.filled = 0;
    this.partialMissing = 0;
  }

  /**
   * Begin a frame of `size` bytes with `have` at hand: a buffer of the frame's size up to
   * WHOLE_BUFFER_MAX, else of twice what is at hand (4 KiB at least), never more than the frame.
   */
  private startPartial(size: number, have: number, start: number): Buffer {
    this.partialSize = size;
    this.partialStart = start;
    this.partialMissing = 0;
    this.partial = Buffer.allocUnsafe(
      size <= WHOLE_BUFFER_MAX ? size : Math.min(size, Math.max(MIN_PARTIAL_CAPACITY, 2 * have)),
    );
    return this.partial;
  }

  private enterScan(): void {
    this.st = 'scan';
    this.scanBuf = null;
    this.tried = 0;
    if (this.recognised) this.scanLimit = Infinity;
  }

  private fail(message: string, at: number): void {
    this.st = 'failed';
    this.endPartial();
    this.scanBuf = null;
    this.sink.problem(message, at, true);
  }

  /** Damage at stream offset `at`; `rest` holds the bytes from at+1 on. */
  private damaged(message: string, at: number, rest: Buffer): void {
    if (!this.resync) return this.fail(message, at);
    if (this.recognised) this.sink.problem(`${message}; resynchronising`, at, true);
    this.endPartial();
    this.headFilled = 0;
    this.enterScan();
    this.pushScan(rest, at + 1);
  }

  private emit(frame: Buffer, at: number, rest: () => Buffer): boolean {
    let cmd: RemotingCommand;
    try {
      cmd = decodeCommand(frame, at);
    } catch (err) {
      if (!(err instanceof ProtocolError)) throw err;
      this.damaged(`damaged frame at ${this.at} ${at}: ${err.message}`, at, rest());
      return false;
    }
    this.recognised = true;
    this.sink.frame(cmd, frame, at);
    return true;
  }

  /** Checks a frame's 8-byte head; returns the total length or an error text. */
  private checkHead(b: Buffer, p: number): number | string {
    const total = b.readInt32BE(p);
    if (total < 4 || total > this.max - 4) return `frame length ${total} is out of range`;
    const type = b[p + 4]!;
    if (type !== 0 && type !== 1) return `unknown serialize type ${type}`;
    const headerLength = b.readUIntBE(p + 5, 3);
    if (headerLength > total - 4) return `header length ${headerLength} exceeds frame length ${total}`;
    return total;
  }

  private pushSync(chunk: Buffer, base: number): void {
    const n = chunk.length;
    let pos = 0;
    while (pos < n) {
      if (this.partialSize > 0) {
        const take = Math.min(this.partialSize - this.filled, n - pos);
        let f = this.partial;
        if (f) {
          if (this.filled + take > f.length) {
            const grown = Buffer.allocUnsafe(Math.min(this.partialSize, Math.max(this.filled + take, f.length * 2)));
            f.copy(grown, 0, 0, this.filled);
            this.partial = f = grown;
          }
          chunk.copy(f, this.filled, pos, pos + take);
        }
        this.filled += take;
        pos += take;
        if (this.filled < this.partialSize) return;
        const start = this.partialStart;
        const skipped = this.partialMissing > 0 || f === null; // reported when the gap was found or it was dropped
        this.endPartial();
        if (skipped) continue;
        const at = pos;
        const whole = f!;
        if (!this.emit(whole, start, () => Buffer.concat([whole.subarray(1), chunk.subarray(at)]))) return;
        continue;
      }
      if (this.headFilled > 0 || n - pos < 8) {
        const head = (this.head ??= Buffer.alloc(8));
        const take = Math.min(8 - this.headFilled, n - pos);
        chunk.copy(head, this.headFilled, pos, pos + take);
        this.headFilled += take;
        pos += take;
        if (this.headFilled < 8) return;
        const start = base + pos - 8;
        const total = this.checkHead(head, 0);
        this.headFilled = 0;
        if (typeof total === 'string') {
          return this.damaged(
            `damaged frame at ${this.at} ${start}: ${total}`,
            start,
            Buffer.concat([head.subarray(1), chunk.subarray(pos)]),
          );
        }
        if (total === 4) {
          // a frame of its 8-byte head alone: complete now, even at the end of the chunk
          const at = pos;
          if (!this.emit(Buffer.from(head), start, () => Buffer.concat([head.subarray(1), chunk.subarray(at)]))) return;
          continue;
        }
        const f = this.startPartial(total + 4, 8 + (n - pos), start);
        head.copy(f, 0);
        this.filled = 8;
        continue;
      }
      const start = base + pos;
      const total = this.checkHead(chunk, pos);
      if (typeof total === 'string') {
        return this.damaged(`damaged frame at ${this.at} ${start}: ${total}`, start, chunk.subarray(pos + 1));
      }
      const size = total + 4;
      if (n - pos >= size) {
        const p0 = pos;
        pos += size;
        if (!this.emit(chunk.subarray(p0, pos), start, () => chunk.subarray(p0 + 1))) return;
      } else {
        const f = this.startPartial(size, n - pos, start);
        chunk.copy(f, 0, pos, n);
        this.filled = n - pos;
        return;
      }
    }
  }

  /**
   * Is there a frame starting at b[p]? 1 yes, 0 no, -1 cannot tell yet (need more bytes).
   * A candidate must have a plausible length, serialize type 0 or 1, a header length that fits,
   * and a header that actually decodes (with a flag using only the request/response/oneway bits).
   */
  private candidate(b: Buffer, p: number): number {
    if (b.length - p < 8) return -1;
    // Frames are below 16 MiB, so the top byte of the length is 0: the cheapest first test.
    if (b[p] !== 0) return 0;
    const type = b[p + 4]!;
    if (type > 1) return 0;
    const total = b.readInt32BE(p);
    if (total < 8 || total > this.max - 4) return 0;
    const hl = b.readUIntBE(p + 5, 3);
    if (hl > total - 4 || hl > MAX_CANDIDATE_HEADER) return 0;
    if (type === 0 ? hl < 10 : hl < 21) return 0;
    if (b.length - p < 9) return -1;
    if (type === 0 && b[p + 8] !== 0x7b) return 0; // '{'
    if (b.length - p < 8 + hl) return -1;
    const h = b.subarray(p + 8, p + 8 + hl);
    try {
      if (type === 1) {
        // The binary header must be exactly 21 + remark + ext bytes long.
        const rl = h.readInt32BE(13);
        if (rl < 0 || 21 + rl > hl) return 0;
        const el = h.readInt32BE(17 + rl);
        if (el < 0 || 21 + rl + el !== hl) return 0;
        const head = decodeRocketmqHeader(h);
        return (head.flag & ~3) === 0 ? 1 : 0;
      }
      const head = decodeJsonHeader(h);
      return (head.flag & ~3) === 0 ? 1 : 0;
    } catch {
      return 0;
    }
  }

  private pushScan(chunk: Buffer, base: number): void {
    let buf = chunk;
    let bufBase = base;
    if (this.scanBuf) {
      buf = Buffer.concat([this.scanBuf, chunk]);
      bufBase = base - this.scanBuf.length;
      this.scanBuf = null;
    }
    let p = 0;
    const n = buf.length;
    while (p < n) {
      const r = this.candidate(buf, p);
      if (r < 0) break;
      if (r === 1) {
        if (bufBase + p > 0 && !this.recognised) {
          this.sink.problem(`first frame found at ${this.at} ${bufBase + p}`, bufBase + p, false);
        }
        this.st = 'sync';
        this.recognised = true;
        this.pushSync(buf.subarray(p), bufBase + p);
        return;
      }
      p++;
      if (++this.tried >= this.scanLimit) {
        this.st = 'ignored';
        this.sink.ignored?.(`no RocketMQ frame in the first ${this.tried} bytes`);
        return;
      }
    }
    // Keep what a candidate still needs (a copy: the chunk belongs to the reader).
    if (p < n) this.scanBuf = Buffer.from(buf.subarray(p));
  }
}
