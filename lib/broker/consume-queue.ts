import * as fs from 'node:fs';
import * as path from 'node:path';
import { readInt64, writeInt64 } from '../../protocol/int64.js';

/** Java's consume-queue unit: commit-log offset int64, size int32, tag code int64. */
export const CQ_ENTRY_SIZE = 20;
const CHUNK_ENTRIES = 65536;

/**
 * The index of one (topic, queueId): entry n locates the message with queue offset n in the
 * commit log. Entries are kept in memory in fixed chunks (20 bytes each, so a million messages cost
 * 20 MB) and written behind to one file `consumequeue/<topic>/<queueId>/00000000000000000000`.
 * A crash can lose the unwritten tail; the store rebuilds it from the commit log at start.
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
    this.file = path.join(root, topic, String(queueId), '00000000000000000000');
  }

  /** Logical offset the next message gets (= number of entries). */
  get maxOffset(): number {
    return this.count;
  }
  /** No retention yet: everything written is still there. */
  get minOffset(): number {
    return 0;
  }

  /** Load entries from disk, dropping any that point at or past `commitLogEnd` or are torn. */
  load(commitLogEnd: number): void {
    let data: Buffer;
    try {
      data = fs.readFileSync(this.file);
    } catch {
      return;
    }
    const n = Math.floor(data.length / CQ_ENTRY_SIZE);
    for (let i = 0; i < n; i++) {
      const at = i * CQ_ENTRY_SIZE;
      const phys = readInt64(data, at);
      const size = data.readInt32BE(at + 8);
      if (size <= 0 || phys + size > commitLogEnd) break;
      this.append(phys, size, readInt64(data, at + 12));
    }
    this.flushed = this.count;
    if (this.count * CQ_ENTRY_SIZE !== data.length) {
      // torn or stale tail: cut the file to what we trust
      try {
        fs.truncateSync(this.file, this.count * CQ_ENTRY_SIZE);
      } catch {
        // rewritten by the next flush anyway
      }
    }
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
        done += fs.writeSync(this.fd, this.chunks[chunkIndex]!, from + done, len - done, this.flushed * CQ_ENTRY_SIZE + done);
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
