import * as fs from 'node:fs';
import * as path from 'node:path';
import createDebug from '../debug.js';
import { decodeMessage, MessageConst } from '../../protocol/internal.js';
import { stderrWarn, type StoreWarn } from './atomic-file.js';
import type { MessageExt } from '../../protocol/message-ext.js';

const log = createDebug('rocketwire:broker');

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

/** Sizes of the index; tests make them small to see files sealed. */
export interface IndexTuning {
  /** Entries of one index file (Java's maxIndexNum, 20 M; ours 1 M = 28 MiB, the most the index holds in memory). */
  entriesPerFile?: number;
  /** Hash slots of one file (Java's maxHashSlotNum, 5 M; ours 256 Ki = 1 MiB). */
  slotsPerFile?: number;
  /** Entries held in memory before they are appended to the open file. */
  flushEntries?: number;
}

/**
 * An entry, 28 bytes little-endian: keyHash i32 (Java's String#hashCode of `topic#key`), prev i32
 * (the chain's previous entry of the same slot, index + 1; 0 ends it), size i32 (0 marks an
 * "indexed up to" entry, which is in no chain), phys f64, storeTimestamp f64. Commit-log positions
 * and ms timestamps are below 2^53, so a double holds them exactly.
 */
const ENTRY = 28;
/** A sealed file: this header, the slots (head index + 1 per slot), then the entries. */
const HEADER = 64;
const MAGIC = 0x58495752; // "RWIX"
const VERSION = 1;
const ACTIVE_SUFFIX = '.active';
const SEALED_SUFFIX = '.idx';
/** The JSON-lines index of earlier versions, which kept every key in memory: removed and rebuilt. */
const LEGACY_FILE = 'keys.idx';

interface Sealed {
  seq: number;
  file: string;
  slots: number;
  count: number;
  beginPhys: number;
  endPhys: number;
  minTs: number;
  maxTs: number;
}

/** Java's String#hashCode of `topic#key`, without building the string. */
function keyHash(topic: string, key: string): number {
  let h = 0;
  for (let i = 0; i < topic.length; i++) h = (Math.imul(h, 31) + topic.charCodeAt(i)) | 0;
  h = (Math.imul(h, 31) + 35) | 0; // '#'
  for (let i = 0; i < key.length; i++) h = (Math.imul(h, 31) + key.charCodeAt(i)) | 0;
  return h;
}

/** Java's indexKeyHashMethod and slot: |hash| (Integer.MIN_VALUE counts as 0) modulo the slots. */
function slotOf(hash: number, slots: number): number {
  return (hash === -2147483648 ? 0 : Math.abs(hash)) % slots;
}

/**
 * The key index QUERY_MESSAGE reads (Java's IndexService and IndexFile): `topic#key` for every
 * space-separated key of KEYS and for UNIQ_KEY (IndexService#buildKey), each pointing at its
 * record's commit-log position. As in Java, keys are hashed into slots whose entries chain back to
 * the previous entry of the slot, and a hash collision is answered too: the client keeps only the
 * messages whose keys match (MQAdminImpl#queryMessage; our AdminClient does the same).
 *
 * Files under `<store>/index/`: the open one, `<seq>.active`, holds its entries only, appended as
 * they come (every flush ends with an "indexed up to N" entry, records without keys included, so a
 * restart decodes none of them again); its slots live in memory and are rebuilt from the entries at
 * open. When it holds `entriesPerFile` entries it is sealed: written atomically as `<seq>.idx`
 * (header, slots, entries) and read from disk from then on, so the memory the index holds is
 * bounded by one file (Java maps every file; we read a sealed one's slot and chain with pread).
 * The files are derived data: at open, what follows the last trusted "indexed up to" entry of the
 * open file (a torn tail, damage) is cut, and every commit-log record after it is indexed again, so a
 * missing or damaged file is rebuilt from the commit log.
 */
export class IndexService {
  private readonly dir: string;
  private readonly entriesPerFile: number;
  private readonly slotsPerFile: number;
  private readonly flushEntries: number;
  private readonly sealed: Sealed[] = [];
  private seq = 0;
  /** The open file's entries (grown by doubling up to entriesPerFile) and slot heads. */
  private entries: Buffer;
  private heads: Int32Array;
  private count = 0;
  /** Entries of the open file already appended to it. */
  private written = 0;
  private beginPhys = 0;
  private minTs = Number.MAX_SAFE_INTEGER;
  private maxTs = 0;
  /** Commit-log position after the last indexed record. */
  private indexedEnd = 0;
  /** The end last written as an "indexed up to" entry. */
  private writtenEnd = 0;
  private lastTimestamp = 0;
  private lastPhys = 0;
  private opened = false;

  constructor(
    storeDir: string,
    private readonly warn: StoreWarn = stderrWarn,
    tuning: IndexTuning = {},
  ) {
    this.dir = path.join(storeDir, 'index');
    this.entriesPerFile = Math.max(16, tuning.entriesPerFile ?? 1 << 20);
    this.slotsPerFile = Math.max(1, tuning.slotsPerFile ?? 1 << 18);
    this.flushEntries = Math.max(1, tuning.flushEntries ?? 4096);
    this.entries = Buffer.alloc(Math.min(this.entriesPerFile, 4096) * ENTRY);
    this.heads = new Int32Array(this.slotsPerFile);
  }

  private activeFile(): string {
    return path.join(this.dir, `${this.seq}${ACTIVE_SUFFIX}`);
  }

  /** Load the files, cut the open one after its last trusted end, and index the records the files miss. */
  open(source: IndexSource): void {
    fs.mkdirSync(this.dir, { recursive: true });
    const legacy = path.join(this.dir, LEGACY_FILE);
    if (fs.existsSync(legacy)) {
      fs.rmSync(legacy, { force: true });
      log('index: %s of an earlier version removed; the index is rebuilt from the commit log', legacy);
    }
    const names = fs.readdirSync(this.dir);
    const seqs = (suffix: string) =>
      names
        .filter((n) => n.endsWith(suffix) && /^\d+$/.test(n.slice(0, -suffix.length)))
        .map((n) => Number(n.slice(0, -suffix.length)))
        .sort((a, b) => a - b);
    const end = source.commitLogEnd;
    let trusted = 0;
    for (const seq of seqs(SEALED_SUFFIX)) {
      const file = path.join(this.dir, `${seq}${SEALED_SUFFIX}`);
      const s = readSealedHeader(file, seq);
      // retention deleted the files before the first one left: it starts where the log was then
      if (s && this.sealed.length === 0 && trusted === 0) trusted = s.beginPhys;
      // a file out of order, damaged, or past the end of a commit log that lost its tail: it and
      // every later one go, and their records are indexed again
      if (!s || s.beginPhys !== trusted || s.endPhys > end) {
        this.warn(
          s && s.endPhys > end
            ? `${file}: indexes commit-log data up to ${s.endPhys}, but the commit log ends at ${end}; the keys after ${trusted} are indexed again`
            : `${file}: damaged; the rest is rebuilt from the commit log`,
        );
        for (const later of [...seqs(SEALED_SUFFIX), ...seqs(ACTIVE_SUFFIX)])
          if (later >= seq) {
            fs.rmSync(path.join(this.dir, `${later}${SEALED_SUFFIX}`), { force: true });
            fs.rmSync(path.join(this.dir, `${later}${ACTIVE_SUFFIX}`), { force: true });
          }
        break;
      }
      this.sealed.push(s);
      trusted = s.endPhys;
      this.seq = seq + 1;
      this.lastTimestamp = Math.max(this.lastTimestamp, s.maxTs);
    }
    // an open file sealed before a crash removed it, or one older than the last sealed file
    for (const seq of seqs(ACTIVE_SUFFIX))
      if (seq < this.seq) fs.rmSync(path.join(this.dir, `${seq}${ACTIVE_SUFFIX}`), { force: true });
    this.beginPhys = trusted;
    this.indexedEnd = trusted;
    this.loadActive(end);
    this.writtenEnd = this.indexedEnd;
    let rebuilt = 0;
    for (const { offset, record } of source.records(this.indexedEnd)) {
      let r: MessageExt;
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

  /**
   * Retention: sealed files whose every entry points below the commit log's new min offset are
   * deleted (Java's IndexService#deleteExpiredFile); the open file never is.
   */
  deleteBelow(minPhys: number): number {
    let n = 0;
    while (this.sealed.length > 0 && this.sealed[0]!.endPhys <= minPhys) {
      const s = this.sealed.shift()!;
      fs.rmSync(s.file, { force: true });
      n++;
    }
    return n;
  }

  /** The open file's entries up to its last "indexed up to" entry that the commit log still covers. */
  private loadActive(commitLogEnd: number): void {
    const file = this.activeFile();
    let data: Buffer;
    try {
      data = fs.readFileSync(file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      return;
    }
    const n = Math.floor(data.length / ENTRY);
    let good = 0; // entries trusted: up to and including the last valid end entry
    let goodEnd = this.beginPhys;
    let lastPhys = this.beginPhys;
    let damaged = data.length % ENTRY !== 0;
    let lost = false;
    for (let i = 0; i < n; i++) {
      const o = i * ENTRY;
      const size = data.readInt32LE(o + 8);
      const phys = data.readDoubleLE(o + 12);
      const prev = data.readInt32LE(o + 4);
      if (!Number.isSafeInteger(phys) || phys < lastPhys || size < 0 || prev < 0 || prev > i) {
        damaged = true;
        break;
      }
      if (size === 0) {
        if (phys > commitLogEnd) {
          lost = true;
          break;
        }
        good = i + 1;
        goodEnd = phys;
      } else if (phys + size > commitLogEnd) {
        lost = true;
        break;
      }
      lastPhys = phys;
    }
    if (good < n) damaged = damaged || !lost;
    if (lost)
      this.warn(
        `${file}: indexes commit-log data past ${goodEnd}, but the commit log ends at ${commitLogEnd}; the keys after ${goodEnd} are indexed again`,
      );
    else if (damaged) this.warn(`${file}: damaged after byte ${good * ENTRY}; the rest is rebuilt from the commit log`);
    if (good * ENTRY !== data.length) fs.truncateSync(file, good * ENTRY);
    this.ensureCapacity(good);
    data.copy(this.entries, 0, 0, good * ENTRY);
    for (let i = 0; i < good; i++) {
      const o = i * ENTRY;
      if (this.entries.readInt32LE(o + 8) === 0) continue;
      const ts = this.entries.readDoubleLE(o + 20);
      this.heads[slotOf(this.entries.readInt32LE(o), this.slotsPerFile)] = i + 1;
      this.noteTimestamp(ts, this.entries.readDoubleLE(o + 12));
    }
    this.count = good;
    this.written = good;
    this.indexedEnd = goodEnd;
  }

  private ensureCapacity(n: number): void {
    if (n * ENTRY <= this.entries.length) return;
    let cap = this.entries.length / ENTRY;
    while (cap < n) cap *= 2;
    const grown = Buffer.alloc(Math.min(cap, this.entriesPerFile) * ENTRY);
    this.entries.copy(grown, 0, 0, this.count * ENTRY);
    this.entries = grown;
  }

  private noteTimestamp(ts: number, phys: number): void {
    if (ts < this.minTs) this.minTs = ts;
    if (ts > this.maxTs) this.maxTs = ts;
    if (ts >= this.lastTimestamp) {
      this.lastTimestamp = ts;
      this.lastPhys = phys;
    }
  }

  private push(hash: number, size: number, phys: number, ts: number): void {
    this.ensureCapacity(this.count + 1);
    const o = this.count * ENTRY;
    const e = this.entries;
    e.writeInt32LE(hash, o);
    e.writeInt32LE(0, o + 4);
    e.writeInt32LE(size, o + 8);
    e.writeDoubleLE(phys, o + 12);
    e.writeDoubleLE(ts, o + 20);
    this.count++;
    if (size > 0) {
      const slot = slotOf(hash, this.slotsPerFile);
      e.writeInt32LE(this.heads[slot]!, o + 4);
      this.heads[slot] = this.count;
      this.noteTimestamp(ts, phys);
    }
  }

  /** Index one stored record; returns how many keys it added. */
  add(
    topic: string,
    properties: Readonly<Record<string, string>>,
    phys: number,
    size: number,
    storeTimestamp: number,
  ): number {
    if (phys < this.indexedEnd) return 0;
    const k = properties[MessageConst.PROPERTY_KEYS];
    const uniq = properties[MessageConst.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX];
    let keys: string[];
    if (!k) keys = uniq ? [uniq] : [];
    else if (k.indexOf(MessageConst.KEY_SEPARATOR) < 0) keys = uniq && uniq !== k ? [k, uniq] : [k];
    else {
      const set = new Set<string>();
      for (const one of k.split(MessageConst.KEY_SEPARATOR)) if (one) set.add(one);
      if (uniq) set.add(uniq);
      keys = [...set];
    }
    // one record's keys stay in one file, and the file ends with an "indexed up to" entry
    if (this.count + keys.length + 1 > this.entriesPerFile) this.seal();
    for (const key of keys) this.push(keyHash(topic, key), size, phys, storeTimestamp);
    // a record without keys still moves the end, so a restart does not scan it again
    this.indexedEnd = Math.max(this.indexedEnd, phys + size);
    if (this.opened && this.count - this.written >= this.flushEntries) this.flush();
    return keys.length;
  }

  /** Write the open file as a sealed one (header, slots, entries) and start the next. */
  private seal(): void {
    this.flush();
    const file = path.join(this.dir, `${this.seq}${SEALED_SUFFIX}`);
    const header = Buffer.alloc(HEADER);
    const s: Sealed = {
      seq: this.seq,
      file,
      slots: this.slotsPerFile,
      count: this.count,
      beginPhys: this.beginPhys,
      endPhys: this.indexedEnd,
      minTs: this.count > 0 ? this.minTs : 0,
      maxTs: this.maxTs,
    };
    header.writeUInt32LE(MAGIC, 0);
    header.writeUInt32LE(VERSION, 4);
    header.writeUInt32LE(s.seq, 8);
    header.writeUInt32LE(s.slots, 12);
    header.writeUInt32LE(s.count, 16);
    header.writeDoubleLE(s.beginPhys, 24);
    header.writeDoubleLE(s.endPhys, 32);
    header.writeDoubleLE(s.minTs, 40);
    header.writeDoubleLE(s.maxTs, 48);
    const slots = Buffer.from(this.heads.buffer, this.heads.byteOffset, this.heads.byteLength);
    const tmp = `${file}.tmp`;
    try {
      const fd = fs.openSync(tmp, 'w');
      try {
        fs.writevSync(fd, [header, slots, this.entries.subarray(0, this.count * ENTRY)]);
        fs.fsyncSync(fd);
      } finally {
        fs.closeSync(fd);
      }
      fs.renameSync(tmp, file);
      fs.rmSync(this.activeFile(), { force: true });
      this.sealed.push(s);
    } catch (err) {
      // derived data: the next open indexes what the files miss from the commit log
      log('cannot seal %s: %s', file, (err as Error).message);
    }
    this.seq++;
    this.beginPhys = this.indexedEnd;
    this.count = 0;
    this.written = 0;
    this.heads.fill(0);
    this.minTs = Number.MAX_SAFE_INTEGER;
    this.maxTs = 0;
    if (this.entries.length > 4096 * ENTRY * 16) this.entries = Buffer.alloc(4096 * ENTRY);
  }

  /**
   * The records of `topic#key` (and of any key of the same hash) stored in [begin, end] (store
   * time), newest first, at most `maxNum` (capped at 64), with the index's last update
   * (QueryMessageResponseHeader).
   */
  query(
    topic: string,
    key: string,
    maxNum: number,
    begin: number,
    end: number,
  ): { entries: IndexEntry[]; lastTimestamp: number; lastPhys: number } {
    const hash = keyHash(topic, key);
    const max = Math.min(Math.max(0, maxNum), MAX_QUERY_MESSAGES);
    const out: IndexEntry[] = [];
    const take = (read: (i: number) => Buffer | null, head: number): void => {
      for (let i = head; i > 0 && out.length < max; ) {
        const e = read(i - 1);
        if (!e) return;
        const ts = e.readDoubleLE(20);
        if (e.readInt32LE(0) === hash && ts >= begin && ts <= end)
          out.push({ phys: e.readDoubleLE(12), size: e.readInt32LE(8), storeTimestamp: ts });
        const prev = e.readInt32LE(4);
        if (prev >= i) return; // a chain only goes back
        i = prev;
      }
    };
    if (this.count > 0 && this.maxTs >= begin && this.minTs <= end) {
      take((i) => this.entries.subarray(i * ENTRY, (i + 1) * ENTRY), this.heads[slotOf(hash, this.slotsPerFile)]!);
    }
    for (let j = this.sealed.length - 1; j >= 0 && out.length < max; j--) {
      const s = this.sealed[j]!;
      if (s.count === 0 || s.maxTs < begin || s.minTs > end) continue;
      let fd: number;
      try {
        fd = fs.openSync(s.file, 'r');
      } catch (err) {
        log('cannot read %s: %s', s.file, (err as Error).message);
        continue;
      }
      try {
        const slot = Buffer.alloc(4);
        if (fs.readSync(fd, slot, 0, 4, HEADER + slotOf(hash, s.slots) * 4) !== 4) continue;
        const buf = Buffer.alloc(ENTRY);
        const entriesAt = HEADER + s.slots * 4;
        take(
          (i) => (i < s.count && fs.readSync(fd, buf, 0, ENTRY, entriesAt + i * ENTRY) === ENTRY ? buf : null),
          slot.readInt32LE(0),
        );
      } finally {
        fs.closeSync(fd);
      }
    }
    return { entries: out, lastTimestamp: this.lastTimestamp, lastPhys: this.lastPhys };
  }

  /** Append the entries held in memory, ended by an "indexed up to" entry. */
  flush(): void {
    if (this.indexedEnd > this.writtenEnd || this.count > this.written) {
      // (add keeps room for it: a record's keys and this entry always fit the open file)
      // records without keys move the end too: say how far the commit log is indexed, or every
      // start would decode every keyless record after the last key again
      this.push(0, 0, this.indexedEnd, 0);
      this.writtenEnd = this.indexedEnd;
    }
    if (this.count === this.written) return;
    try {
      fs.appendFileSync(this.activeFile(), this.entries.subarray(this.written * ENTRY, this.count * ENTRY));
    } catch (err) {
      // derived data: the next open indexes what the file misses from the commit log
      log('cannot append to %s: %s', this.activeFile(), (err as Error).message);
    }
    this.written = this.count;
  }

  close(): void {
    if (this.opened) this.flush();
  }
}

/** A sealed file's header, or null when the file is not one (damaged, cut, another format). */
function readSealedHeader(file: string, seq: number): Sealed | null {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return null;
  }
  try {
    const h = Buffer.alloc(HEADER);
    if (fs.readSync(fd, h, 0, HEADER, 0) !== HEADER) return null;
    if (h.readUInt32LE(0) !== MAGIC || h.readUInt32LE(4) !== VERSION || h.readUInt32LE(8) !== seq) return null;
    const s: Sealed = {
      seq,
      file,
      slots: h.readUInt32LE(12),
      count: h.readUInt32LE(16),
      beginPhys: h.readDoubleLE(24),
      endPhys: h.readDoubleLE(32),
      minTs: h.readDoubleLE(40),
      maxTs: h.readDoubleLE(48),
    };
    if (s.slots < 1 || fs.fstatSync(fd).size !== HEADER + s.slots * 4 + s.count * ENTRY) return null;
    if (!Number.isSafeInteger(s.beginPhys) || !Number.isSafeInteger(s.endPhys) || s.endPhys < s.beginPhys) return null;
    return s;
  } finally {
    fs.closeSync(fd);
  }
}
