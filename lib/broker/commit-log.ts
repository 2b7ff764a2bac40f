import * as fs from 'node:fs';
import * as path from 'node:path';
import createDebug from '../debug.js';
import {
  BLANK_MAGIC_CODE,
  MESSAGE_MAGIC_CODE_V1,
  MESSAGE_MAGIC_CODE_V2,
  MessageRecordOffset,
  readInt64,
} from '../../protocol/internal.js';
import { BrokerOptionError, StoreWriteError } from './errors.js';
import { MIN_RECORD, readFully, scanSegment, writeAll, type CommitLogScan } from './commit-log-scan.js';
import { recordStoreTimestamp } from './message-record.js';

const log = createDebug('rocketwire:broker');

interface Segment {
  base: number;
  file: string;
  fd: number;
  /** Bytes written to the file. */
  length: number;
  /** End of the last valid record (before a blank filler or a cut-off tail). */
  dataEnd: number;
  /** Stretches [from, to) (commit-log offsets) that failed the record checks at open. */
  damaged: { from: number; to: number }[];
  /** In-memory copy of the written bytes (recent segments only). */
  mem: Buffer | null;
  /**
   * When it was last written, on the store's clock: the store timestamp of its last record (the
   * file's mtime when it has none). Retention's "last modified" (Java: the file's mtime).
   */
  lastWriteAt: number;
}

export { lostBytes, type CommitLogScan } from './commit-log-scan.js';

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
    if (this.segmentSize < 4096)
      throw new BrokerOptionError('segmentSize', `must be at least 4096, got ${this.segmentSize}`);
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
   * Open the folder and check every record of every segment (size, magic, the record's own
   * offset field, body CRC). Apache's recovery stops at the first record that fails and truncates
   * the rest; here a damaged stretch is skipped: the scan resynchronises at the next offset where a
   * whole record verifies, every intact record after the damage is kept, and only a torn tail of
   * the last segment (no valid record after it) is cut. What was found and done is returned and
   * said through `warn`.
   */
  open(warn: (line: string) => void = () => undefined): CommitLogScan {
    fs.mkdirSync(this.dir, { recursive: true });
    const names = fs
      .readdirSync(this.dir)
      .filter((n) => /^\d{20}$/.test(n))
      .sort();
    for (const name of names) {
      const file = path.join(this.dir, name);
      const fd = fs.openSync(file, 'r+');
      const length = fs.fstatSync(fd).size;
      const mtime = fs.fstatSync(fd).mtimeMs;
      this.segments.push({
        base: Number(name),
        file,
        fd,
        length,
        dataEnd: length,
        damaged: [],
        mem: null,
        lastWriteAt: mtime,
      });
    }
    const report: CommitLogScan = { records: 0, damaged: [], tornBytes: 0, lostTail: [], missing: [] };
    // segments follow each other at segmentSize steps from the first (retention removes the oldest
    // ones, so the log may start past 0): a gap is a lost file
    let expectBase = this.segments[0]?.base ?? 0;
    for (const seg of this.segments) {
      if (seg.base > expectBase) {
        report.missing.push({ from: expectBase, to: seg.base });
        warn(
          `commit log: no segment holds offsets ${expectBase}..${seg.base - 1} (${(seg.base - expectBase) / this.segmentSize} segment file(s) missing); the records in them are lost`,
        );
      }
      expectBase = seg.base + this.segmentSize;
    }
    const cached = new Set(this.segments.slice(-this.cachedSegments));
    let scratch: Buffer | null = null;
    for (let i = 0; i < this.segments.length; i++) {
      const seg = this.segments[i]!;
      const isLast = i === this.segments.length - 1;
      let buf: Buffer;
      let read: number;
      if (cached.has(seg)) {
        read = this.loadIntoMemory(seg);
        buf = seg.mem!;
      } else {
        scratch ??= Buffer.allocUnsafe(this.segmentSize);
        buf = scratch;
        read = readFully(seg.fd, buf, 0, Math.min(seg.length, this.segmentSize));
      }
      const scan = scanSegment(buf, read, seg.base, this.segmentSize);
      report.records += scan.records;
      seg.dataEnd = scan.end;
      if (scan.lastRecord >= 0) seg.lastWriteAt = recordStoreTimestamp(buf.subarray(scan.lastRecord));
      for (const d of scan.damaged) {
        seg.damaged.push(d);
        report.damaged.push({ ...d, segment: seg.file });
        if (report.damaged.length > 20) continue;
        warn(
          `commit log ${seg.file}: ${d.to - d.from} damaged bytes at offset ${d.from} (in-file ${d.from - seg.base}) ` +
            `fail the record checks; skipped them and kept every intact record after them`,
        );
      }
      const tail = read - scan.end;
      if (tail > 0 && !scan.sealed) {
        if (isLast) {
          report.tornBytes = tail;
          warn(
            `commit log ${seg.file}: cut a torn tail of ${tail} bytes at offset ${seg.base + scan.end} (no complete record after it)`,
          );
          fs.ftruncateSync(seg.fd, scan.end);
          seg.length = scan.end;
        } else {
          // what the file lost is unknown; at most the rest of the segment
          report.lostTail.push({ from: seg.base + scan.end, to: seg.base + this.segmentSize, segment: seg.file });
          warn(
            `commit log ${seg.file}: ${tail} bytes at its end (offset ${seg.base + scan.end}) are not a complete record; the segment was cut short, records after offset ${seg.base + scan.end} in it are lost`,
          );
        }
      } else if (!isLast && !scan.sealed && this.segmentSize - read >= 8) {
        // a sealed segment ends with a blank filler; a shorter one without it was truncated at a record boundary
        warn(
          `commit log ${seg.file} ends at ${read} bytes without its end-of-segment filler; if it was cut, the records after offset ${seg.base + read} in it are lost`,
        );
        report.lostTail.push({ from: seg.base + read, to: seg.base + this.segmentSize, segment: seg.file });
      }
      // a sealed segment is full: the next write opens a new one (never a record after the filler)
      if (scan.sealed) seg.length = this.segmentSize;
    }
    if (report.damaged.length > 20) {
      const bytes = report.damaged.slice(20).reduce((n, d) => n + d.to - d.from, 0);
      warn(
        `commit log: … and ${report.damaged.length - 20} more damaged stretches (${bytes} bytes), skipped the same way`,
      );
    }
    return report;
  }

  /** Reads the segment into a buffer of the segment size; returns the bytes read. */
  private loadIntoMemory(seg: Segment): number {
    const mem = Buffer.allocUnsafe(this.segmentSize);
    seg.mem = mem;
    return readFully(seg.fd, mem, 0, seg.length);
  }

  /**
   * Where a write of `size` bytes will start: the current end, or the start of a new segment when
   * that one has no room. Call, encode with that offset, then `append`.
   */
  reserve(size: number): number {
    if (size > this.segmentSize)
      throw new StoreWriteError(`record of ${size} bytes exceeds the segment size ${this.segmentSize}`);
    const last = this.segments[this.segments.length - 1];
    if (!last) return 0;
    if (last.length + size <= this.segmentSize) return last.base + last.length;
    return last.base + this.segmentSize;
  }

  /**
   * Write records at the offset `reserve` returned, in one system call (writev) whatever their
   * number. Throws StoreWriteError and leaves no partial data.
   */
  append(offset: number, records: Buffer | readonly Buffer[], writtenAt = 0): void {
    const list = Buffer.isBuffer(records) ? [records] : records;
    let total = 0;
    for (const b of list) total += b.length;
    if (this.closed) throw new StoreWriteError('commit log is closed');
    let last = this.segments[this.segments.length - 1];
    if (!last || offset >= last.base + this.segmentSize) {
      if (last) this.sealWithBlank(last);
      last = this.createSegment(offset);
    }
    const at = offset - last.base;
    if (at !== last.length)
      throw new StoreWriteError(`append at ${offset} but the log ends at ${last.base + last.length}`);
    try {
      writeAll(last.fd, list, total, at);
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      try {
        fs.ftruncateSync(last.fd, at);
      } catch {
        // the file stays longer than `length`; recovery's scan cuts it at the next start
      }
      throw new StoreWriteError(`commit log write failed: ${e.code ?? e.message}`, { cause: err, code: e.code });
    }
    if (last.mem) {
      let p = at;
      for (const b of list) p += b.copy(last.mem, p);
    }
    last.length += total;
    last.dataEnd = last.length;
    last.lastWriteAt = writtenAt;
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
      return;
    }
    // the segment is closed: were the next segment's creation to fail, no later write may land
    // after the filler, where no scan would find it
    seg.length = this.segmentSize;
  }

  private createSegment(base: number): Segment {
    const file = path.join(this.dir, segmentName(base));
    let fd: number;
    try {
      fd = fs.openSync(file, 'w+');
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      throw new StoreWriteError(`cannot create commit log segment: ${e.code ?? e.message}`, {
        cause: err,
        code: e.code,
      });
    }
    const seg: Segment = {
      base,
      file,
      fd,
      length: 0,
      dataEnd: 0,
      damaged: [],
      mem: Buffer.allocUnsafe(this.segmentSize),
      lastWriteAt: 0,
    };
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
    if (size <= 0 || at + size > seg.dataEnd) return null;
    if (seg.mem) return seg.mem.subarray(at, at + size);
    const bs = CommitLog.BLOCK_SIZE;
    const blockStart = Math.floor(at / bs) * bs;
    if (at + size <= blockStart + bs) {
      const block = this.block(seg, blockStart);
      if (block && at + size - blockStart <= block.length)
        return block.subarray(at - blockStart, at - blockStart + size);
    }
    return this.readDirect(seg, at, size);
  }

  private block(seg: Segment, blockStart: number): Buffer | null {
    const key = seg.base + blockStart;
    const hit = this.blocks.get(key);
    // a cached block shorter than a full one may have been read before later appends; re-read it
    if (hit && (hit.length === CommitLog.BLOCK_SIZE || blockStart + hit.length >= seg.dataEnd)) {
      this.blocks.delete(key);
      this.blocks.set(key, hit);
      return hit;
    }
    const len = Math.min(CommitLog.BLOCK_SIZE, seg.dataEnd - blockStart);
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

  /**
   * Cheap check before serving a consume-queue entry: the record at `offset` has that size, a
   * message magic and its own offset in its offset field (no CRC: Java checks it only on recovery).
   */
  recordHeaderOk(offset: number, size: number): boolean {
    const head = this.read(offset, MessageRecordOffset.PHYSICALOFFSET + 8);
    if (!head) return false;
    const magic = head.readInt32BE(4);
    return (
      head.readInt32BE(0) === size &&
      (magic === MESSAGE_MAGIC_CODE_V1 || magic === MESSAGE_MAGIC_CODE_V2) &&
      readInt64(head, MessageRecordOffset.PHYSICALOFFSET) === offset
    );
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

  /**
   * True when [phys, phys + size) is a place a record can be: inside one segment's valid data and
   * clear of every damaged stretch found at open (consume-queue entries are checked with this).
   */
  validRange(phys: number, size: number): boolean {
    const seg = this.findSegment(phys);
    if (!seg || size < MIN_RECORD || phys + size > seg.base + seg.dataEnd) return false;
    for (const d of seg.damaged) if (phys < d.to && phys + size > d.from) return false;
    return true;
  }

  /**
   * Walk the valid records from `from` to the end (recovery re-dispatch): damaged stretches found
   * at open are stepped over, each segment ends at its valid data.
   */
  *records(from: number): Generator<{ offset: number; record: Buffer }> {
    for (const seg of this.segments) {
      if (seg.base + seg.dataEnd <= from) continue;
      // walk from the segment's start when `from` lies inside it: `from` may not be a record start
      let offset = seg.base;
      const end = seg.base + seg.dataEnd;
      while (offset < end) {
        const d = seg.damaged.find((x) => offset >= x.from && offset < x.to);
        if (d) {
          offset = d.to;
          continue;
        }
        const rec = this.readRecordAt(offset);
        if (!rec) {
          // not a record start (a `from` inside a record, or damage after open): resynchronise
          const next = seg.damaged.find((x) => x.from > offset);
          log('commit log: no record at %d while replaying; skipping to %d', offset, next?.to ?? end);
          offset = next ? next.to : end;
          continue;
        }
        if (offset >= from) yield { offset, record: rec };
        offset += rec.length;
      }
    }
  }

  /** Number of segments, the one being written included. */
  get segmentCount(): number {
    return this.segments.length;
  }

  /** Every segment but the one being written, oldest first: what retention may delete. */
  oldSegments(): { base: number; lastWriteAt: number; file: string }[] {
    return this.segments.slice(0, -1).map((s) => ({ base: s.base, lastWriteAt: s.lastWriteAt, file: s.file }));
  }

  /**
   * Delete the oldest segment (never the one being written): its file goes, its reads end, and
   * the log's min offset moves to the next segment. False when only the newest is left.
   */
  deleteOldestSegment(): boolean {
    if (this.segments.length < 2 || this.closed) return false;
    const seg = this.segments.shift()!;
    for (const key of [...this.blocks.keys()])
      if (key >= seg.base && key < seg.base + this.segmentSize) this.blocks.delete(key);
    seg.mem = null;
    try {
      fs.closeSync(seg.fd);
    } catch {
      // already closed
    }
    try {
      fs.rmSync(seg.file, { force: true });
    } catch (err) {
      log('commit log: could not delete %s: %s', seg.file, (err as Error).message);
    }
    return true;
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
