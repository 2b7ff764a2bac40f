import * as fs from 'node:fs';
import * as path from 'node:path';
import createDebug from 'debug';
import {
  BLANK_MAGIC_CODE,
  MESSAGE_MAGIC_CODE_V1,
  MESSAGE_MAGIC_CODE_V2,
  MessageRecordOffset,
  MessageSysFlag,
  messageBodyCrc,
  readInt64,
  storedMessageSize,
} from '../../protocol/internal.js';
import { BrokerOptionError, StoreWriteError } from './errors.js';

const log = createDebug('rocketwire:broker');

/** Smallest record: IPv4 hosts, empty body, topic and properties. */
const MIN_RECORD = storedMessageSize(0, 0, 0);

interface Segment {
  base: number;
  file: string;
  fd: number;
  /** Bytes written to the file. */
  length: number;
  /** In-memory copy of the written bytes (recent segments only). */
  mem: Buffer | null;
}

export interface CommitLogOptions {
  /** Segment file size; a record never straddles two segments. Default 64 MiB. */
  segmentSize?: number;
  /**
   * How many of the newest segments are kept in memory for reading. Default 2 (128 MiB with the
   * default size): older data is read with one system call per pull, from the page cache.
   */
  cachedSegments?: number;
}

function segmentName(base: number): string {
  return String(base).padStart(20, '0');
}

/**
 * Append-only commit log in segment files named by their base offset (20 digits, as Java names
 * them). Offsets are byte positions across the whole log. A record that does not fit in the rest of
 * a segment goes to the next one; the gap starts with a blank record (magic 0xCBD43194) so a scan
 * knows to jump. Writes are synchronous (`writeSync`) so a failed write is known before the send is
 * answered, and a partial write is cut off again. The newest segments are also kept in memory, so
 * reads of recent messages are views with no system call.
 */
export class CommitLog {
  readonly dir: string;
  readonly segmentSize: number;
  private readonly cachedSegments: number;
  private segments: Segment[] = [];
  private closed = false;
  /**
   * Blocks of older segments read from disk, most recently used last. Consumers of different
   * queues read the same stretch of the log one after another (their messages interleave), so a
   * block read once serves them all, as the page cache under Java's mmap does.
   */
  private readonly blocks = new Map<number, Buffer>();
  private static readonly BLOCK_SIZE = 1024 * 1024;
  private static readonly MAX_BLOCKS = 32;

  constructor(dir: string, options: CommitLogOptions = {}) {
    this.dir = dir;
    this.segmentSize = options.segmentSize ?? 64 * 1024 * 1024;
    this.cachedSegments = Math.max(1, options.cachedSegments ?? 2);
    if (this.segmentSize < 4096) throw new BrokerOptionError('segmentSize', `must be at least 4096, got ${this.segmentSize}`);
  }

  /** Offset the next record would get if it fits the current segment. */
  get maxOffset(): number {
    const last = this.segments[this.segments.length - 1];
    return last ? last.base + last.length : 0;
  }
  get minOffset(): number {
    return this.segments[0]?.base ?? 0;
  }

  /**
   * Open the folder and find the end of valid data: every record of the last segment is checked
   * (size, magic, offset field, body CRC); the first bad one and all after it are truncated away,
   * so a record half-written at a crash is never served.
   */
  open(): void {
    fs.mkdirSync(this.dir, { recursive: true });
    const names = fs
      .readdirSync(this.dir)
      .filter((n) => /^\d{20}$/.test(n))
      .sort();
    for (const name of names) {
      const file = path.join(this.dir, name);
      const fd = fs.openSync(file, 'r+');
      const length = fs.fstatSync(fd).size;
      this.segments.push({ base: Number(name), file, fd, length, mem: null });
    }
    // Warm the cache with the newest segments (at least one: the last), then scan the last one in
    // memory rather than reading it from disk a second time.
    let lastRead = 0;
    for (const seg of this.segments.slice(-this.cachedSegments)) lastRead = this.loadIntoMemory(seg);
    const last = this.segments[this.segments.length - 1];
    if (last) {
      const valid = scanValidLength(last.mem!, lastRead, last.base);
      if (valid < last.length) {
        log('commit log %s: truncating %d bytes of incomplete data at %d', last.file, last.length - valid, valid);
        fs.ftruncateSync(last.fd, valid);
        last.length = valid;
      }
    }
  }

  /** Reads the segment into a buffer of the segment size; returns the bytes read. */
  private loadIntoMemory(seg: Segment): number {
    const mem = Buffer.allocUnsafe(this.segmentSize);
    seg.mem = mem;
    return readFully(seg.fd, mem, 0, seg.length);
  }

  /**
   * Where a write of `size` bytes will start: the current end, or the start of a new segment when
   * the current one has no room. Call, encode with that offset, then `append`.
   */
  reserve(size: number): number {
    if (size > this.segmentSize) throw new StoreWriteError(`record of ${size} bytes exceeds the segment size ${this.segmentSize}`);
    const last = this.segments[this.segments.length - 1];
    if (!last) return 0;
    if (last.length + size <= this.segmentSize) return last.base + last.length;
    return last.base + this.segmentSize;
  }

  /** Write bytes at the offset `reserve` returned. Throws StoreWriteError and leaves no partial data. */
  append(offset: number, data: Buffer): void {
    if (this.closed) throw new StoreWriteError('commit log is closed');
    let last = this.segments[this.segments.length - 1];
    if (!last || offset >= last.base + this.segmentSize) {
      if (last) this.sealWithBlank(last);
      last = this.createSegment(offset);
    }
    const at = offset - last.base;
    if (at !== last.length) throw new StoreWriteError(`append at ${offset} but the log ends at ${last.base + last.length}`);
    let written = 0;
    try {
      while (written < data.length) {
        written += fs.writeSync(last.fd, data, written, data.length - written, at + written);
      }
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      try {
        fs.ftruncateSync(last.fd, at);
      } catch {
        // the file stays longer than `length`; recovery's scan cuts it at the next start
      }
      throw new StoreWriteError(`commit log write failed: ${e.code ?? e.message}`, { cause: err, code: e.code });
    }
    if (last.mem) data.copy(last.mem, at);
    last.length += data.length;
  }

  private sealWithBlank(seg: Segment): void {
    const room = this.segmentSize - seg.length;
    if (room < 8) return;
    const blank = Buffer.alloc(8);
    blank.writeInt32BE(room, 0);
    blank.writeInt32BE(BLANK_MAGIC_CODE, 4);
    try {
      fs.writeSync(seg.fd, blank, 0, 8, seg.length);
    } catch {
      // a missing filler only means recovery stops scanning there, which is where the data ends anyway
    }
  }

  private createSegment(base: number): Segment {
    const file = path.join(this.dir, segmentName(base));
    let fd: number;
    try {
      fd = fs.openSync(file, 'w+');
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      throw new StoreWriteError(`cannot create commit log segment: ${e.code ?? e.message}`, { cause: err, code: e.code });
    }
    const seg: Segment = { base, file, fd, length: 0, mem: Buffer.allocUnsafe(this.segmentSize) };
    this.segments.push(seg);
    // drop the memory copy of segments that fell out of the window
    const keep = this.segments.length - this.cachedSegments;
    for (let i = 0; i < keep; i++) this.segments[i]!.mem = null;
    return seg;
  }

  private findSegment(offset: number): Segment | undefined {
    const segs = this.segments;
    let lo = 0;
    let hi = segs.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const s = segs[mid]!;
      if (offset < s.base) hi = mid - 1;
      else if (offset >= s.base + this.segmentSize) lo = mid + 1;
      else return s;
    }
    return undefined;
  }

  /**
   * Bytes [offset, offset + size) of one segment: a view when the segment is in memory, else a view
   * of a cached 1 MiB block, else one read. Null when out of range.
   */
  read(offset: number, size: number): Buffer | null {
    const seg = this.findSegment(offset);
    if (!seg) return null;
    const at = offset - seg.base;
    if (size <= 0 || at + size > seg.length) return null;
    if (seg.mem) return seg.mem.subarray(at, at + size);
    const bs = CommitLog.BLOCK_SIZE;
    const blockStart = Math.floor(at / bs) * bs;
    if (at + size <= blockStart + bs) {
      const block = this.block(seg, blockStart);
      if (block && at + size - blockStart <= block.length) return block.subarray(at - blockStart, at - blockStart + size);
    }
    return this.readDirect(seg, at, size);
  }

  private block(seg: Segment, blockStart: number): Buffer | null {
    const key = seg.base + blockStart;
    const hit = this.blocks.get(key);
    // a cached block shorter than a full one may have been read before later appends; re-read it
    if (hit && (hit.length === CommitLog.BLOCK_SIZE || blockStart + hit.length >= seg.length)) {
      this.blocks.delete(key);
      this.blocks.set(key, hit);
      return hit;
    }
    const len = Math.min(CommitLog.BLOCK_SIZE, seg.length - blockStart);
    const b = this.readDirect(seg, blockStart, len);
    if (!b) return null;
    this.blocks.set(key, b);
    if (this.blocks.size > CommitLog.MAX_BLOCKS) this.blocks.delete(this.blocks.keys().next().value as number);
    return b;
  }

  private readDirect(seg: Segment, at: number, size: number): Buffer | null {
    const buf = Buffer.allocUnsafe(size);
    return readFully(seg.fd, buf, at, size) === size ? buf : null;
  }

  /** True when `offset` lies in a segment kept in memory. */
  inMemory(offset: number): boolean {
    return this.findSegment(offset)?.mem != null;
  }

  /** The whole record at `offset`, or null when no record starts there. */
  readRecordAt(offset: number): Buffer | null {
    const head = this.read(offset, 8);
    if (!head) return null;
    const size = head.readInt32BE(0);
    const magic = head.readInt32BE(4);
    if ((magic !== MESSAGE_MAGIC_CODE_V1 && magic !== MESSAGE_MAGIC_CODE_V2) || size < MIN_RECORD) return null;
    const rec = this.read(offset, size);
    if (!rec || readInt64(rec, MessageRecordOffset.PHYSICALOFFSET) !== offset) return null;
    return rec;
  }

  /** Walk records from `offset` to the end (recovery re-dispatch). */
  *records(from: number): Generator<{ offset: number; record: Buffer }> {
    let offset = from;
    for (;;) {
      const seg = this.findSegment(offset);
      if (!seg) {
        const next = this.segments.find((s) => s.base > offset);
        if (!next) return;
        offset = next.base;
        continue;
      }
      if (offset - seg.base >= seg.length) {
        const next = this.segments.find((s) => s.base > seg.base);
        if (!next) return;
        offset = next.base;
        continue;
      }
      const head = this.read(offset, 8);
      if (!head || head.readInt32BE(4) === BLANK_MAGIC_CODE) {
        offset = seg.base + this.segmentSize;
        continue;
      }
      const rec = this.readRecordAt(offset);
      if (!rec) return;
      yield { offset, record: rec };
      offset += rec.length;
    }
  }

  /** fsync the newest segment. */
  flush(): void {
    const last = this.segments[this.segments.length - 1];
    if (last) {
      try {
        fs.fsyncSync(last.fd);
      } catch (err) {
        log('commit log fsync failed: %s', (err as Error).message);
      }
    }
  }

  close(): void {
    if (this.closed) return;
    this.flush();
    this.closed = true;
    for (const s of this.segments) {
      try {
        fs.closeSync(s.fd);
      } catch {
        // already closed
      }
      s.mem = null;
    }
  }
}

/** Body CRC check of a whole record (CRC-32 of the body masked with 0x7FFFFFFF, as Java stores it). */
export function recordCrcOk(rec: Buffer): boolean {
  const sysFlag = rec.readInt32BE(MessageRecordOffset.SYSFLAG);
  const bornHost = sysFlag & MessageSysFlag.BORNHOST_V6_FLAG ? 20 : 8;
  const storeHost = sysFlag & MessageSysFlag.STOREHOSTADDRESS_V6_FLAG ? 20 : 8;
  // BORNHOST, STORETIMESTAMP, STOREHOST, RECONSUMETIMES, PREPARED TRANSACTION OFFSET, then BODY.
  const p = MessageRecordOffset.BORNHOST + bornHost + 8 + storeHost + 4 + 8;
  if (p + 4 > rec.length) return false;
  const bodyLen = rec.readInt32BE(p);
  if (bodyLen < 0 || p + 4 + bodyLen > rec.length) return false;
  return messageBodyCrc(rec, p + 4, p + 4 + bodyLen) === rec.readInt32BE(MessageRecordOffset.BODYCRC);
}

/**
 * Length of the valid records at the start of a segment (`done` bytes of `buf`, the segment at
 * commit-log offset `base`): size, magic, offset field and body CRC of each are checked; the first
 * bad record, a filler or the end stops the scan.
 */
function scanValidLength(buf: Buffer, done: number, base: number): number {
  let p = 0;
  while (p + 8 <= done) {
    const size = buf.readInt32BE(p);
    const magic = buf.readInt32BE(p + 4);
    if (magic === BLANK_MAGIC_CODE) return p; // filler: the segment ends here
    if (magic !== MESSAGE_MAGIC_CODE_V1 && magic !== MESSAGE_MAGIC_CODE_V2) return p;
    if (size < MIN_RECORD || p + size > done) return p;
    if (readInt64(buf, p + MessageRecordOffset.PHYSICALOFFSET) !== base + p) return p;
    if (!recordCrcOk(buf.subarray(p, p + size))) return p;
    p += size;
  }
  return p;
}

/** Reads up to `len` bytes at file position `at` into `buf` (from 0); returns how many were read. */
function readFully(fd: number, buf: Buffer, at: number, len: number): number {
  let done = 0;
  while (done < len) {
    const n = fs.readSync(fd, buf, done, len - done, at + done);
    if (n <= 0) break;
    done += n;
  }
  return done;
}
