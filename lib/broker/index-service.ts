import * as fs from 'node:fs';
import * as path from 'node:path';
import createDebug from 'debug';
import { decodeMessage, MessageConst } from '../../protocol/internal.js';
import { stderrWarn, type StoreWarn } from './atomic-file.js';

const log = createDebug('rocketwire:broker');

/** Lines held in memory before they are appended to the index file. */
const FLUSH_LINES = 512;
/** Java's maxMsgsNumBatch for QUERY_MESSAGE (64): the most messages one answer carries. */
export const MAX_QUERY_MESSAGES = 64;
/** Java's defaultQueryMaxNum, used instead of maxNum for a unique-key query (32). */
export const UNIQUE_KEY_QUERY_MAX = 32;

/** One indexed record: its commit-log position, size and store time. */
export interface IndexEntry {
  phys: number;
  size: number;
  storeTimestamp: number;
}

/** What the store hands the index: records from a commit-log position on (MessageStore.records). */
export interface IndexSource {
  records(from: number): Iterable<{ offset: number; record: Buffer }>;
  /** The end of the commit log's data. */
  readonly commitLogEnd: number;
}

/**
 * The key index QUERY_MESSAGE reads (Java's IndexService): `topic#key` for every space-separated
 * key of KEYS and for UNIQ_KEY (S/IndexService#buildKey), each pointing at the record's commit-log
 * position. Java hashes keys into fixed-size index files and the client drops hash collisions; this
 * one keeps exact keys in memory and appends them as JSON lines to `<store>/index/keys.idx`, so
 * there are no collisions to drop, with `{"e":N}` lines saying the commit log is indexed up to N
 * (records without keys included, so a restart does not decode them again). The file is derived data: at open, a line that does not parse
 * (a torn tail after a crash, damage) ends what is trusted, the file is cut there, and every
 * commit-log record after the last trusted one is indexed again, so a missing or damaged file is
 * rebuilt from the commit log.
 */
export class IndexService {
  private readonly file: string;
  private readonly table = new Map<string, IndexEntry[]>();
  private pending: string[] = [];
  /** Commit-log position after the last indexed record. */
  private indexedEnd = 0;
  private lastTimestamp = 0;
  private lastPhys = 0;
  /** The end last written to the file as an `{"e":…}` line (or implied by its entries). */
  private writtenEnd = 0;
  /** Entries were dropped: the next flush writes the whole file again. */
  private rewrite = false;
  private opened = false;

  constructor(
    storeDir: string,
    private readonly warn: StoreWarn = stderrWarn,
  ) {
    this.file = path.join(storeDir, 'index', 'keys.idx');
  }

  /** Load the file, cut it at the first damaged line, and index the records the file misses. */
  open(source: IndexSource): void {
    fs.mkdirSync(path.dirname(this.file), { recursive: true });
    let text = '';
    try {
      text = fs.readFileSync(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    let good = 0;
    let damaged = false;
    while (good < text.length) {
      const nl = text.indexOf('\n', good);
      if (nl < 0) {
        damaged = true;
        break;
      }
      const line = text.slice(good, nl);
      const end = parseEndLine(line);
      const entry = end === null ? parseLine(line) : null;
      if (end === null && !entry) {
        damaged = true;
        break;
      }
      if (entry) this.put(entry.key, entry);
      else this.indexedEnd = Math.max(this.indexedEnd, end!);
      good = nl + 1;
    }
    if (damaged) {
      this.warn(`${this.file}: damaged after byte ${good}; the rest is rebuilt from the commit log`);
      fs.truncateSync(this.file, good);
    }
    if (this.indexedEnd > source.commitLogEnd) {
      // the commit log lost its tail (a torn write cut at recovery): new records will be written
      // where the lost ones were, so entries past the end go and indexing resumes at the end
      const end = source.commitLogEnd;
      let dropped = 0;
      for (const [key, list] of this.table) {
        const kept = list.filter((e) => e.phys + e.size <= end);
        dropped += list.length - kept.length;
        if (kept.length === 0) this.table.delete(key);
        else this.table.set(key, kept);
      }
      this.warn(`${this.file}: indexes commit-log data up to ${this.indexedEnd}, but the commit log ends at ${end}; ${dropped} keys of lost records dropped`);
      this.indexedEnd = end;
      this.pending.push(JSON.stringify({ e: end }));
      this.rewrite = true;
    }
    this.writtenEnd = this.indexedEnd;
    let rebuilt = 0;
    for (const { offset, record } of source.records(this.indexedEnd)) {
      let r;
      try {
        r = decodeMessage(record, 0, { decompress: false });
      } catch {
        continue;
      }
      rebuilt += this.add(r.topic, r.properties, offset, record.length, r.storeTimestamp);
    }
    if (rebuilt > 0) log('index: %d keys indexed again from the commit log', rebuilt);
    this.opened = true;
    this.flush();
  }

  /** Index one stored record; returns how many keys it added. */
  add(topic: string, properties: Readonly<Record<string, string>>, phys: number, size: number, storeTimestamp: number): number {
    if (phys < this.indexedEnd) return 0;
    const keys = new Set<string>();
    const k = properties[MessageConst.PROPERTY_KEYS];
    if (k) for (const one of k.split(MessageConst.KEY_SEPARATOR)) if (one) keys.add(one);
    const uniq = properties[MessageConst.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX];
    if (uniq) keys.add(uniq);
    for (const key of keys) {
      const entry = { key: `${topic}#${key}`, phys, size, storeTimestamp };
      this.put(entry.key, entry);
      this.pending.push(JSON.stringify({ k: entry.key, p: phys, n: size, t: storeTimestamp }));
    }
    // a record without keys still moves the end, so a restart does not scan it again
    this.indexedEnd = Math.max(this.indexedEnd, phys + size);
    if (this.opened && this.pending.length >= FLUSH_LINES) this.flush();
    return keys.size;
  }

  private put(key: string, e: IndexEntry): void {
    let list = this.table.get(key);
    if (!list) {
      list = [];
      this.table.set(key, list);
    }
    list.push({ phys: e.phys, size: e.size, storeTimestamp: e.storeTimestamp });
    this.indexedEnd = Math.max(this.indexedEnd, e.phys + e.size);
    if (e.storeTimestamp >= this.lastTimestamp) {
      this.lastTimestamp = e.storeTimestamp;
      this.lastPhys = e.phys;
    }
  }

  /**
   * The records of `topic#key` stored in [begin, end] (store time), newest first, at most `maxNum`
   * (capped at 64), with the index's last update (QueryMessageResponseHeader).
   */
  query(topic: string, key: string, maxNum: number, begin: number, end: number): { entries: IndexEntry[]; lastTimestamp: number; lastPhys: number } {
    const list = this.table.get(`${topic}#${key}`) ?? [];
    const max = Math.min(Math.max(0, maxNum), MAX_QUERY_MESSAGES);
    const entries: IndexEntry[] = [];
    for (let i = list.length - 1; i >= 0 && entries.length < max; i--) {
      const e = list[i]!;
      if (e.storeTimestamp >= begin && e.storeTimestamp <= end) entries.push(e);
    }
    return { entries, lastTimestamp: this.lastTimestamp, lastPhys: this.lastPhys };
  }

  /** Append the lines held in memory. */
  flush(): void {
    // records without keys move the end too: say how far the commit log is indexed, or every
    // start would decode every keyless record after the last key again
    if (this.indexedEnd > this.writtenEnd) {
      this.pending.push(JSON.stringify({ e: this.indexedEnd }));
      this.writtenEnd = this.indexedEnd;
    }
    if (this.pending.length === 0) return;
    if (this.rewrite) {
      this.rewrite = false;
      const all: Array<[string, IndexEntry]> = [];
      for (const [key, list] of this.table) for (const e of list) all.push([key, e]);
      all.sort((a, b) => a[1].phys - b[1].phys);
      this.pending = [...all.map(([k, e]) => JSON.stringify({ k, p: e.phys, n: e.size, t: e.storeTimestamp })), JSON.stringify({ e: this.indexedEnd })];
      try {
        fs.writeFileSync(this.file, '');
      } catch (err) {
        log('cannot rewrite %s: %s', this.file, (err as Error).message);
      }
    }
    const lines = this.pending.join('\n') + '\n';
    this.pending = [];
    try {
      fs.appendFileSync(this.file, lines);
    } catch (err) {
      // derived data: the next open indexes what the file misses from the commit log
      log('cannot append to %s: %s', this.file, (err as Error).message);
    }
  }

  close(): void {
    if (this.opened) this.flush();
  }
}

/** An `{"e":N}` line (the commit log is indexed up to N), or null for any other line. */
function parseEndLine(line: string): number | null {
  if (!line.startsWith('{"e":')) return null;
  try {
    const o = JSON.parse(line) as { e?: unknown };
    return Number.isSafeInteger(o.e) ? (o.e as number) : null;
  } catch {
    return null;
  }
}

function parseLine(line: string): { key: string; phys: number; size: number; storeTimestamp: number } | null {
  try {
    const o = JSON.parse(line) as { k?: unknown; p?: unknown; n?: unknown; t?: unknown };
    if (typeof o.k !== 'string' || !Number.isSafeInteger(o.p) || !Number.isSafeInteger(o.n) || !Number.isSafeInteger(o.t)) return null;
    return { key: o.k, phys: o.p as number, size: o.n as number, storeTimestamp: o.t as number };
  } catch {
    return null;
  }
}
