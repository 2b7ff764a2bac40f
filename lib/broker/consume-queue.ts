import * as fs from 'node:fs';
import * as path from 'node:path';
import { readInt64, writeInt64 } from '../../protocol/int64.js';
import { storePath } from './atomic-file.js';

/** Java's consume-queue unit: commit-log offset int64, size int32, tag code int64. */
export const CQ_ENTRY_SIZE = 20;
/** Entries per in-memory chunk and per file (files are named by their first byte, as Java names them). */
const CHUNK_ENTRIES = 65536;
const CHUNK_BYTES = CHUNK_ENTRIES * CQ_ENTRY_SIZE;
/** Commit-log offset of a hole entry. */
const HOLE = -1;

/**
 * The index of one (topic, queueId): entry n locates the message with queue offset n in the
 * commit log. Entries are kept in memory in fixed chunks of 65 536 (20 bytes each, so a million
 * messages cost 20 MB) and written behind to one file per chunk,
 * `consumequeue/<topic>/<queueId>/<20-digit byte offset>` (an older store's single file 0 longer
 * than a chunk is read and split). Retention (`trimBelow`) moves the min offset past entries whose
 * records the commit log dropped and frees their chunks and files.
 * A crash can lose the unwritten tail, and a file can be damaged or deleted; the store checks the
 * entries at start and rebuilds what it cannot trust from the commit log. An entry whose record was
 * lost to damage is a hole (commit-log offset -1, size 0): its queue offset stays taken, so the
 * offsets of the messages after it do not move, and reads step over it.
 */
export class ConsumeQueue {
  readonly topic: string;
  readonly queueId: number;
  private readonly folder: string;
  /** chunks[k] holds entries [k × CHUNK_ENTRIES, …); chunks wholly below `min` are freed. */
  private chunks: (Buffer | undefined)[] = [];
  private count = 0;
  private min = 0;
  private flushed = 0;
  /** The file being written and its chunk index. */
  private fd: number | null = null;
  private fdChunk = -1;
  /** A file 0 longer than one chunk (an older store's layout), cut once its chunks have files. */
  private legacyLength = 0;

  constructor(root: string, topic: string, queueId: number) {
    this.topic = topic;
    this.queueId = queueId;
    // the topic comes from the wire or the commit log: never let it name a path outside the root
    this.folder = storePath(root, topic, String(queueId));
  }

  private fileOf(chunk: number): string {
    return path.join(this.folder, String(chunk * CHUNK_BYTES).padStart(20, '0'));
  }

  /** Logical offset the next message gets (= number of entries). */
  get maxOffset(): number {
    return this.count;
  }
  /** First offset whose record the commit log still holds (retention moves it). */
  get minOffset(): number {
    return this.min;
  }

  /**
   * Load entries from disk, keeping them up to the first one that cannot be right: a zeroed or
   * torn entry, one that `valid` refuses (outside the commit log's valid data or over a damaged
   * stretch), or one whose commit-log offset does not grow (entries of one queue are appended in
   * commit-log order). The file is cut to what was kept; returns how many entries were dropped so
   * the store can rebuild them from the commit log.
   */
  load(valid: (phys: number, size: number) => boolean, minPhys = 0): { dropped: number; tornBytes: number } {
    let names: string[];
    try {
      names = fs
        .readdirSync(this.folder)
        .filter((n) => /^\d{20}$/.test(n))
        .sort();
    } catch {
      return { dropped: 0, tornBytes: 0 };
    }
    let dropped = 0;
    let tornBytes = 0;
    let prev = -1;
    let broken = false;
    for (const name of names) {
      const file = path.join(this.folder, name);
      const first = Number(name) / CQ_ENTRY_SIZE;
      if (broken || !Number.isInteger(first) || first % CHUNK_ENTRIES !== 0 || (this.count > 0 && first > this.count)) {
        // after a break, or a file that does not continue the queue: what it holds is rebuilt
        dropped += Math.floor(fileSize(file) / CQ_ENTRY_SIZE);
        rmQuiet(file);
        continue;
      }
      if (this.count === 0 && first > 0) {
        // retention removed the files before this one
        this.count = first;
        this.min = first;
        this.flushed = first;
      }
      let data: Buffer;
      try {
        data = fs.readFileSync(file);
      } catch {
        continue;
      }
      if (first === 0 && data.length > CHUNK_BYTES) this.legacyLength = data.length;
      const n = Math.floor(data.length / CQ_ENTRY_SIZE);
      // a later file of an older store's split repeats entries file 0 already gave
      let kept = Math.min(n, this.count - first);
      for (let i = kept; i < n; i++) {
        const at = i * CQ_ENTRY_SIZE;
        const phys = readInt64(data, at);
        const size = data.readInt32BE(at + 8);
        const tagsCode = readInt64(data, at + 12);
        const hole = phys === HOLE && size === 0 && tagsCode === 0;
        if (!hole) {
          if (size <= 0 || phys <= prev) break;
          // below minPhys its record went with a cleaned commit-log segment: kept, below the min offset
          if (phys >= minPhys && !valid(phys, size)) break;
          prev = phys;
        }
        this.append(hole ? HOLE : phys, hole ? 0 : size, hole ? 0 : tagsCode);
        kept++;
      }
      this.flushed = this.count;
      dropped += n - kept;
      tornBytes += data.length - n * CQ_ENTRY_SIZE;
      if (kept < n || data.length !== n * CQ_ENTRY_SIZE) {
        // torn or untrusted tail: cut the file to what we trust; later files are rebuilt
        try {
          fs.truncateSync(file, kept * CQ_ENTRY_SIZE);
        } catch {
          // rewritten by the next flush anyway
        }
        broken = true;
      }
    }
    if (minPhys > 0) this.trimBelow(minPhys);
    if (this.legacyLength > 0) this.flushed = Math.min(this.flushed, CHUNK_ENTRIES);
    return { dropped, tornBytes };
  }

  /** A hole: a queue offset whose record was lost (see the class comment). */
  appendHole(): void {
    this.append(HOLE, 0, 0);
  }

  /** True when the entry at `offset` is a hole. */
  isHole(offset: number): boolean {
    return this.sizeAt(offset) <= 0;
  }

  /** Commit-log offset just after the last record this queue indexes (0 when none). */
  get indexedEnd(): number {
    for (let i = this.count - 1; i >= this.min; i--) if (!this.isHole(i)) return this.physOffsetAt(i) + this.sizeAt(i);
    return 0;
  }

  append(physOffset: number, size: number, tagsCode: number): void {
    const chunkIndex = Math.floor(this.count / CHUNK_ENTRIES);
    const at = (this.count % CHUNK_ENTRIES) * CQ_ENTRY_SIZE;
    let chunk = this.chunks[chunkIndex];
    if (!chunk) {
      // the newest chunk starts small and doubles, so the many queues holding a handful of
      // messages (retry topics, auto-created queues) do not cost 1.3 MB each
      chunk = Buffer.allocUnsafe(16 * CQ_ENTRY_SIZE);
      this.chunks[chunkIndex] = chunk;
    } else if (at >= chunk.length) {
      const grown = Buffer.allocUnsafe(Math.min(CHUNK_ENTRIES * CQ_ENTRY_SIZE, chunk.length * 2));
      chunk.copy(grown, 0, 0, at);
      chunk = grown;
      this.chunks[chunkIndex] = grown;
    }
    writeInt64(chunk, at, physOffset);
    chunk.writeInt32BE(size, at + 8);
    writeInt64(chunk, at + 12, tagsCode);
    this.count++;
  }

  /** Commit-log offset of entry `offset`. */
  physOffsetAt(offset: number): number {
    const chunk = this.chunks[Math.floor(offset / CHUNK_ENTRIES)]!;
    return readInt64(chunk, (offset % CHUNK_ENTRIES) * CQ_ENTRY_SIZE);
  }
  sizeAt(offset: number): number {
    const chunk = this.chunks[Math.floor(offset / CHUNK_ENTRIES)]!;
    return chunk.readInt32BE((offset % CHUNK_ENTRIES) * CQ_ENTRY_SIZE + 8);
  }
  tagsCodeAt(offset: number): number {
    const chunk = this.chunks[Math.floor(offset / CHUNK_ENTRIES)]!;
    return readInt64(chunk, (offset % CHUNK_ENTRIES) * CQ_ENTRY_SIZE + 12);
  }

  /** Write entries not yet on disk. Throws on an I/O error (the caller logs and retries later). */
  flush(): void {
    if (this.flushed === this.count) return;
    while (this.flushed < this.count) {
      const chunkIndex = Math.floor(this.flushed / CHUNK_ENTRIES);
      const chunkEnd = Math.min(this.count, (chunkIndex + 1) * CHUNK_ENTRIES);
      const from = (this.flushed % CHUNK_ENTRIES) * CQ_ENTRY_SIZE;
      const len = (chunkEnd - this.flushed) * CQ_ENTRY_SIZE;
      const chunk = this.chunks[chunkIndex];
      // a chunk freed by retention before it was written needs no file
      if (chunk) {
        const fd = this.fileFor(chunkIndex);
        let done = 0;
        while (done < len) done += fs.writeSync(fd, chunk, from + done, len - done, from + done);
      }
      this.flushed = chunkEnd;
    }
    if (this.legacyLength > 0 && this.flushed > CHUNK_ENTRIES) {
      // every entry past the first chunk now has its own file: file 0 keeps only its chunk
      fs.truncateSync(this.fileOf(0), CHUNK_BYTES);
      this.legacyLength = 0;
    }
  }

  private fileFor(chunk: number): number {
    if (this.fd !== null && this.fdChunk === chunk) return this.fd;
    this.closeFile();
    fs.mkdirSync(this.folder, { recursive: true });
    const file = this.fileOf(chunk);
    this.fd = fs.openSync(file, fs.existsSync(file) ? 'r+' : 'w+');
    this.fdChunk = chunk;
    return this.fd;
  }

  private closeFile(): void {
    if (this.fd === null) return;
    try {
      fs.fsyncSync(this.fd);
      fs.closeSync(this.fd);
    } catch {
      // closing is best effort; the commit log is the source of truth
    }
    this.fd = null;
    this.fdChunk = -1;
  }

  /**
   * Retention: the commit log now starts at `minPhys`; entries whose records lay before it (and
   * holes among them) fall below the min offset, and chunks wholly below it are freed with their
   * files (never the chunk being written). Returns how many entries fell below.
   */
  trimBelow(minPhys: number): number {
    const before = this.min;
    while (this.min < this.count) {
      const phys = this.physOffsetAt(this.min);
      if (phys !== HOLE && phys >= minPhys) break;
      this.min++;
    }
    this.freeBelowMin();
    return this.min - before;
  }

  private freeBelowMin(): void {
    // the chunk of the last entry keeps its file, whose length says where the queue ends
    const last = this.count > 0 ? Math.floor((this.count - 1) / CHUNK_ENTRIES) : 0;
    const below = Math.min(Math.floor(this.min / CHUNK_ENTRIES), last);
    for (let k = 0; k < below; k++) {
      if (!this.chunks[k]) continue;
      this.chunks[k] = undefined;
      if (k * CHUNK_ENTRIES < this.flushed || this.legacyLength > 0) {
        if (this.fdChunk === k) this.closeFile();
        if (k > 0 || this.legacyLength === 0) rmQuiet(this.fileOf(k));
      }
    }
  }

  close(): void {
    this.closeFile();
  }
}

function fileSize(file: string): number {
  try {
    return fs.statSync(file).size;
  } catch {
    return 0;
  }
}

function rmQuiet(file: string): void {
  try {
    fs.rmSync(file, { force: true });
  } catch {
    // a file left behind holds entries below the min offset; the next load skips them
  }
}
