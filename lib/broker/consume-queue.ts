import * as fs from 'node:fs';
import * as path from 'node:path';
import { readInt64, writeInt64 } from '../../protocol/int64.js';
import { storePath } from './atomic-file.js';

/** Java's consume-queue unit: commit-log offset int64, size int32, tag code int64. */
export const CQ_ENTRY_SIZE = 20;
const CHUNK_ENTRIES = 65536;
/** Commit-log offset of a hole entry. */
const HOLE = -1;

/**
 * The index of one (topic, queueId): entry n locates the message with queue offset n in the
 * commit log. Entries are kept in memory in fixed chunks (20 bytes each, so a million messages cost
 * 20 MB) and written behind to one file `consumequeue/<topic>/<queueId>/00000000000000000000`.
 * A crash can lose the unwritten tail, and a file can be damaged or deleted; the store checks the
 * entries at start and rebuilds what it cannot trust from the commit log. An entry whose record was
 * lost to damage is a hole (commit-log offset -1, size 0): its queue offset stays taken, so the
 * offsets of the messages after it do not move, and reads step over it.
 */
export class ConsumeQueue {
  readonly topic: string;
  readonly queueId: number;
  private readonly file: string;
  private chunks: Buffer[] = [];
  private count = 0;
  private flushed = 0;
  private fd: number | null = null;

  constructor(root: string, topic: string, queueId: number) {
    this.topic = topic;
    this.queueId = queueId;
    // the topic comes from the wire or the commit log: never let it name a path outside the root
    this.file = storePath(root, topic, String(queueId), '00000000000000000000');
  }

  /** Logical offset the next message gets (= number of entries). */
  get maxOffset(): number {
    return this.count;
  }
  /** No retention yet: everything written is still there. */
  get minOffset(): number {
    return 0;
  }

  /**
   * Load entries from disk, keeping them up to the first one that cannot be right: a zeroed or
   * torn entry, one that `valid` refuses (outside the commit log's valid data or over a damaged
   * stretch), or one whose commit-log offset does not grow (entries of one queue are appended in
   * commit-log order). The file is cut to what was kept; returns how many entries were dropped so
   * the store can rebuild them from the commit log.
   */
  load(valid: (phys: number, size: number) => boolean): { dropped: number; tornBytes: number } {
    let data: Buffer;
    try {
      data = fs.readFileSync(this.file);
    } catch {
      return { dropped: 0, tornBytes: 0 };
    }
    const n = Math.floor(data.length / CQ_ENTRY_SIZE);
    let prev = -1;
    for (let i = 0; i < n; i++) {
      const at = i * CQ_ENTRY_SIZE;
      const phys = readInt64(data, at);
      const size = data.readInt32BE(at + 8);
      const tagsCode = readInt64(data, at + 12);
      if (phys === HOLE && size === 0 && tagsCode === 0) {
        this.append(HOLE, 0, 0);
        continue;
      }
      if (size <= 0 || phys <= prev || !valid(phys, size)) break;
      prev = phys;
      this.append(phys, size, tagsCode);
    }
    this.flushed = this.count;
    const dropped = n - this.count;
    const tornBytes = data.length - n * CQ_ENTRY_SIZE;
    if (this.count * CQ_ENTRY_SIZE !== data.length) {
      // torn or untrusted tail: cut the file to what we trust
      try {
        fs.truncateSync(this.file, this.count * CQ_ENTRY_SIZE);
      } catch {
        // rewritten by the next flush anyway
      }
    }
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
    for (let i = this.count - 1; i >= 0; i--) if (!this.isHole(i)) return this.physOffsetAt(i) + this.sizeAt(i);
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
      this.chunks.push(chunk);
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
    if (this.fd === null) {
      fs.mkdirSync(path.dirname(this.file), { recursive: true });
      this.fd = fs.openSync(this.file, fs.existsSync(this.file) ? 'r+' : 'w+');
    }
    while (this.flushed < this.count) {
      const chunkIndex = Math.floor(this.flushed / CHUNK_ENTRIES);
      const chunkEnd = Math.min(this.count, (chunkIndex + 1) * CHUNK_ENTRIES);
      const from = (this.flushed % CHUNK_ENTRIES) * CQ_ENTRY_SIZE;
      const len = (chunkEnd - this.flushed) * CQ_ENTRY_SIZE;
      let done = 0;
      while (done < len) {
        done += fs.writeSync(
          this.fd,
          this.chunks[chunkIndex]!,
          from + done,
          len - done,
          this.flushed * CQ_ENTRY_SIZE + done,
        );
      }
      this.flushed = chunkEnd;
    }
  }

  close(): void {
    if (this.fd !== null) {
      try {
        fs.fsyncSync(this.fd);
        fs.closeSync(this.fd);
      } catch {
        // closing is best effort; the commit log is the source of truth
      }
      this.fd = null;
    }
  }
}
