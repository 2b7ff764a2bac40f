import { mkdir, open, readFile, rename } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import createDebug from '../../debug.js';
import {
  decodeResetOffsetBody,
  encodeResetOffsetBody,
  parseFastjson,
  queueKey,
  type MessageQueue,
} from '../../../protocol/internal.js';

import { OffsetFileError } from '../errors.js';

const log = createDebug('rocketwire:consumer');

/** Java's ReadOffsetType. */
export type ReadOffsetType = 'memory' | 'store' | 'memory_then_store';

/**
 * Where a consumer keeps its progress (OffsetStore in Java). The committed offset of a queue is the
 * next offset to consume. Memory reads are synchronous because every pull reads the value.
 */
export interface OffsetStore {
  load(): Promise<void>;
  /** Sets the in-memory offset; increaseOnly keeps the maximum. Ignored while the queue's offset is frozen. */
  updateOffset(mq: MessageQueue, offset: number, increaseOnly: boolean): void;
  /** Sets the offset and ignores later updates until removeOffset (5.2+ OFFSET_ILLEGAL handling). */
  updateAndFreezeOffset(mq: MessageQueue, offset: number): void;
  /** In-memory value or −1. */
  readMemory(mq: MessageQueue): number;
  /** −1: nothing stored, −2: the store could not be read. */
  readOffset(mq: MessageQueue, type: ReadOffsetType): Promise<number>;
  /** Persists the offsets of `held` queues and forgets the others. */
  persistAll(held: readonly MessageQueue[]): Promise<void>;
  persist(mq: MessageQueue): Promise<void>;
  removeOffset(mq: MessageQueue): void;
  /** A copy of the table, optionally for one topic. */
  cloneOffsetTable(topic?: string): Map<string, { mq: MessageQueue; offset: number }>;
}

interface Entry {
  mq: MessageQueue;
  offset: number;
  frozen: boolean;
  /** False once removed from the table (a stale identity-map hit is then ignored). */
  live: boolean;
}

abstract class MemoryOffsetTable {
  protected readonly table = new Map<string, Entry>();
  /**
   * The same entries by MessageQueue object: the consume path updates the offset after every handler
   * call with the queue object it holds, and an identity lookup avoids building a string key each time.
   */
  private readonly byRef = new Map<MessageQueue, Entry>();

  private entry(mq: MessageQueue): Entry | undefined {
    const e = this.byRef.get(mq);
    if (e?.live) return e;
    const found = this.table.get(queueKey(mq));
    if (found !== undefined) this.byRef.set(mq, found);
    else this.byRef.delete(mq);
    return found;
  }

  updateOffset(mq: MessageQueue, offset: number, increaseOnly: boolean): void {
    const e = this.entry(mq);
    if (e === undefined) {
      const created = { mq, offset, frozen: false, live: true };
      this.table.set(queueKey(mq), created);
      this.byRef.set(mq, created);
      return;
    }
    if (e.frozen) return;
    if (!increaseOnly || offset > e.offset) e.offset = offset;
  }

  updateAndFreezeOffset(mq: MessageQueue, offset: number): void {
    const e = { mq, offset, frozen: true, live: true };
    const old = this.table.get(queueKey(mq));
    if (old) old.live = false;
    this.table.set(queueKey(mq), e);
    this.byRef.set(mq, e);
  }

  readMemory(mq: MessageQueue): number {
    return this.entry(mq)?.offset ?? -1;
  }

  removeOffset(mq: MessageQueue): void {
    const key = queueKey(mq);
    const e = this.table.get(key);
    if (e) e.live = false;
    this.table.delete(key);
    this.byRef.delete(mq);
  }

  cloneOffsetTable(topic?: string): Map<string, { mq: MessageQueue; offset: number }> {
    const out = new Map<string, { mq: MessageQueue; offset: number }>();
    for (const [k, e] of this.table)
      if (topic === undefined || e.mq.topic === topic) out.set(k, { mq: e.mq, offset: e.offset });
    return out;
  }
}

/** The broker calls the remote store needs; the consumer resolves broker addresses. */
export interface RemoteOffsetApi {
  /** The stored offset, −1 for QUERY_NOT_FOUND; throws on any other failure. */
  queryConsumerOffset(mq: MessageQueue): Promise<number>;
  /** Oneway UPDATE_CONSUMER_OFFSET to the queue's master. */
  updateConsumerOffsetOneway(mq: MessageQueue, offset: number): Promise<void>;
  /** Where a failed offset commit is reported (once per queue until one succeeds again). */
  warn?(message: string): void;
}

/**
 * CLUSTERING offsets (RemoteBrokerOffsetStore): an increase-only table in memory, piggybacked on pulls
 * and flushed with oneway UPDATE_CONSUMER_OFFSET for the held queues every persist interval.
 */
export class RemoteBrokerOffsetStore extends MemoryOffsetTable implements OffsetStore {
  constructor(private readonly api: RemoteOffsetApi) {
    super();
  }

  async load(): Promise<void> {}

  async readOffset(mq: MessageQueue, type: ReadOffsetType): Promise<number> {
    if (type !== 'store') {
      const v = this.readMemory(mq);
      if (v >= 0 || type === 'memory') return v;
    }
    try {
      const o = await this.api.queryConsumerOffset(mq);
      if (o >= 0) this.updateOffset(mq, o, false);
      return o;
    } catch (err) {
      // 5.x: any failure other than QUERY_NOT_FOUND is −2, so the queue is skipped this round
      // (docs/protocol-facts.md#start-offset).
      log('QUERY_CONSUMER_OFFSET %o failed: %s', mq, (err as Error).message);
      return -2;
    }
  }

  async persistAll(held: readonly MessageQueue[]): Promise<void> {
    const heldKeys = new Set(held.map(queueKey));
    const sends: Promise<void>[] = [];
    for (const [key, e] of this.table) {
      if (!heldKeys.has(key)) {
        e.live = false;
        this.table.delete(key);
        continue;
      }
      sends.push(this.send(e.mq, e.offset));
    }
    await Promise.all(sends);
  }

  async persist(mq: MessageQueue): Promise<void> {
    const e = this.table.get(queueKey(mq));
    if (e) await this.send(e.mq, e.offset);
  }

  private async send(mq: MessageQueue, offset: number): Promise<void> {
    const key = queueKey(mq);
    try {
      await this.api.updateConsumerOffsetOneway(mq, offset);
      this.commitFailing.delete(key);
    } catch (err) {
      log('UPDATE_CONSUMER_OFFSET %o=%d failed: %s', mq, offset, (err as Error).message);
      if (!this.commitFailing.has(key)) {
        this.commitFailing.add(key);
        this.api.warn?.(
          `committing offset ${offset} of ${mq.topic}@${mq.brokerName}/${mq.queueId} failed: ${(err as Error).message.split('\n')[0]}; it is sent again with the next pull and flush`,
        );
      }
    }
  }
  /** Queues whose last offset commit failed (queueKey). */
  private readonly commitFailing = new Set<string>();
}

/** Java's default local store directory (rocketmq.client.localOffsetStoreDir). */
export function defaultLocalOffsetStoreDir(): string {
  return path.join(homedir(), '.rocketmq_offsets');
}

/**
 * BROADCASTING offsets (LocalFileOffsetStore): `<dir>/<clientId>/<group>/offsets.json` in Java's shape,
 * `{"offsetTable":{{"brokerName":…,"queueId":…,"topic":…}:offset}}` (object keys,
 * docs/protocol-facts.md#non-standard-json-from-fastjson), written
 * atomically (temp file, fsync, rename) with the previous file kept as `.bak`.
 */
export class LocalFileOffsetStore extends MemoryOffsetTable implements OffsetStore {
  readonly file: string;

  constructor(dir: string, clientId: string, group: string) {
    super();
    this.file = path.join(dir, clientId, group, 'offsets.json');
  }

  /**
   * Reads the file, else its `.bak` (a crash between the two renames of a write leaves only the
   * `.bak`). A main file that cannot be read while its `.bak` can is moved aside to
   * `.unreadable`, so the next write does not rename it over the good `.bak`. When files exist but
   * none reads: OffsetFileError, and nothing is overwritten.
   */
  async load(): Promise<void> {
    const bad: string[] = [];
    for (const f of [this.file, this.file + '.bak']) {
      let text: string;
      try {
        text = await readFile(f, 'utf8');
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
        bad.push(`${path.basename(f)}: ${(err as Error).message}`);
        continue;
      }
      const entries = parseOffsetsFile(text);
      if (entries === null) {
        log('offsets file %s is unreadable, trying the backup', f);
        bad.push(`${path.basename(f)} does not parse`);
        continue;
      }
      for (const { mq, offset } of entries) this.updateOffset(mq, offset, false);
      if (f !== this.file && bad.length > 0) {
        await rename(this.file, `${this.file}.unreadable`).catch((err: unknown) =>
          log('cannot move %s aside: %s', this.file, (err as Error).message),
        );
      }
      return;
    }
    if (bad.length > 0) throw new OffsetFileError(this.file, `${bad.join('; ')}; fix or remove the files to start`);
  }

  async readOffset(mq: MessageQueue, type: ReadOffsetType): Promise<number> {
    if (type !== 'store') {
      const v = this.readMemory(mq);
      if (v >= 0 || type === 'memory') return v;
    }
    // The file was loaded at start; what it held is in memory.
    const v = this.readMemory(mq);
    return v >= 0 ? v : -1;
  }

  async persistAll(held: readonly MessageQueue[]): Promise<void> {
    if (held.length === 0) return;
    const heldKeys = new Set(held.map(queueKey));
    const entries = [...this.table].filter(([k]) => heldKeys.has(k)).map(([, e]) => e);
    await this.write(entries);
  }

  async persist(mq: MessageQueue): Promise<void> {
    // Java's LocalFileOffsetStore.persist(mq) is a no-op; persistAll writes the whole file.
    void mq;
  }

  /** Java's LocalFileOffsetStore.removeOffset is a no-op: the file's value must survive a rebalance. */
  override removeOffset(mq: MessageQueue): void {
    void mq;
  }

  private writing: Promise<void> = Promise.resolve();

  private write(entries: Entry[]): Promise<void> {
    // Serialize writers so two flushes never interleave renames.
    this.writing = this.writing
      .then(() => writeAtomically(this.file, formatOffsetsFile(entries)))
      .catch((err: unknown) => {
        log('writing %s failed: %s', this.file, (err as Error).message);
      });
    return this.writing;
  }
}

/**
 * Java's OffsetSerializeWrapper as fastjson writes it: MessageQueue objects as map keys, the same
 * shape as RESET_CONSUMER_CLIENT_OFFSET's ResetOffsetBody, so protocol's codec writes it.
 */
export function formatOffsetsFile(entries: readonly { mq: MessageQueue; offset: number }[]): string {
  return encodeResetOffsetBody({ offsetTable: entries.map(({ mq, offset }) => [mq, offset]) }).toString('utf8');
}

/**
 * Reads the non-standard offsets file (compact or pretty-printed) with protocol's codec, a real
 * tokenizer (a regex over the text misread names holding quotes, braces or colons); null when it
 * is not one.
 */
export function parseOffsetsFile(text: string): { mq: MessageQueue; offset: number }[] | null {
  try {
    const o = parseFastjson(text) as { offsetTable?: unknown } | null;
    if (typeof o !== 'object' || o === null || typeof o.offsetTable !== 'object' || o.offsetTable === null) return null;
    const entries = decodeResetOffsetBody(Buffer.from(text, 'utf8')).offsetTable;
    if (entries.some(([, offset]) => !Number.isSafeInteger(offset))) return null;
    return entries.map(([mq, offset]) => ({ mq, offset }));
  } catch {
    return null;
  }
}

/** Temp file + fsync + rename (the old file becomes .bak), so a crash leaves either version, never half of one. */
export async function writeAtomically(file: string, content: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  const tmp = `${file}.tmp`;
  const fh = await open(tmp, 'w');
  try {
    await fh.writeFile(content, 'utf8');
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(file, `${file}.bak`).catch(() => undefined);
  await rename(tmp, file);
}
