import * as fs from 'node:fs';
import { BrokerStatsManager } from './broker-stats.js';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import createDebug from '../debug.js';
import type { Clock } from '../clock.js';
import { TypedEmitter } from '../emitter.js';
import { CommitLog, lostBytes } from './commit-log.js';
import { OnDemandTask } from './periodic-task.js';
import { cleanExpiredSegments, diskUsedRatio, retentionSettings, type RetentionOptions } from './store-retention.js';
import { ConsumeQueue } from './consume-queue.js';
import { stderrWarn, storePath, writeFileAtomic, type StoreWarn } from './atomic-file.js';
import { storedMessageSize, createOffsetMsgId } from '../../protocol/index.js';
import { StoreWriter, type PreparedPut } from './message-store-put.js';
import { hexInt64 } from '../../protocol/message-id.js';
import {
  MAX_TRANSFER_BYTES,
  MAX_TRANSFER_COUNT,
  type ArrivalListener,
  type GetMessageResult,
  type MessageStoreOptions,
  type PutMessageResult,
} from './message-store-types.js';
import { readStoreCheckpoint, replayCommitLog } from './message-store-recovery.js';
import { offsetByTime } from './offset-by-time.js';
import { type MessageInner, recordStoreTimestamp, tagsCodeOfInner } from './message-record.js';

const log = createDebug('rocketwire:broker');

export * from './message-store-types.js';

/** Java examines at most max(16000 bytes, maxMsgNums × 20) / 20 consume-queue entries per pull. */
const MIN_FILTER_ENTRIES = 800;
/** The smallest stored record (IPv4 hosts, empty body, 1-byte topic, no properties). */
const MIN_RECORD_BYTES = storedMessageSize(0, 1, 0);

/**
 * Commit log + one consume queue per (topic, queueId). Recovery trusts the consume-queue files up
 * to the checkpoint and re-indexes every commit-log record written after it.
 */
export class MessageStore {
  readonly dir: string;
  readonly storeHost: string;
  /** Hex of the store host's bytes: the part of every offset msgId before the commit-log offset. */
  private readonly msgIdPrefix: string;
  private readonly clock: Clock;
  /** TOPIC_PUT_NUMS and GROUP_GET_NUMS of the broker that owns this store (broker-stats.ts). */
  readonly stats: BrokerStatsManager;
  private readonly commitLog: CommitLog;
  private readonly queues = new Map<string, ConsumeQueue>();
  /** A listener that throws is logged; the write and the other listeners go on. */
  private readonly arrivals = new TypedEmitter<{ arrival: Parameters<ArrivalListener> }>({
    isolate: (err) => log('arrival listener failed: %O', err),
  });
  private readonly maxMessageSize: number;
  private readonly tagsCodeFn: NonNullable<MessageStoreOptions['tagsCode']>;
  private readonly writer: StoreWriter;
  private readonly flushIntervalMs: number;
  /** The write-behind flush: armed while something written is not flushed. */
  private flushing: OnDemandTask | null = null;
  /** The retention cleaner: armed while there are segments it may delete (all but the newest). */
  private cleaning: OnDemandTask | null = null;
  private readonly retention: Required<RetentionOptions>;
  private readonly diskUsed: () => number;
  private checkpointed = -1;
  private closed = false;
  private opened = false;
  private readonly warn: StoreWarn;

  constructor(options: MessageStoreOptions) {
    this.dir = options.dir;
    this.storeHost = options.storeHost;
    this.msgIdPrefix = createOffsetMsgId(this.storeHost, 0).slice(0, -16);
    this.clock = options.clock;
    this.stats = new BrokerStatsManager(options.clock);
    this.maxMessageSize = options.maxMessageSize ?? 4 * 1024 * 1024;
    this.flushIntervalMs = options.flushIntervalMs ?? 500;
    this.tagsCodeFn = options.tagsCode ?? ((inner) => tagsCodeOfInner(inner));
    this.warn = options.warn ?? stderrWarn;
    this.commitLog = new CommitLog(path.join(this.dir, 'commitlog'), {
      segmentSize: options.segmentSize,
      cachedSegments: options.cachedSegments,
    });
    this.retention = retentionSettings(options.retention);
    this.diskUsed = options.diskUsedRatio ?? (() => diskUsedRatio(this.dir));
    this.writer = new StoreWriter({
      commitLog: this.commitLog,
      clock: this.clock,
      storeHost: this.storeHost,
      maxMessageSize: this.maxMessageSize,
      tagsCode: this.tagsCodeFn,
      queue: (topic, queueId, create) => this.queue(topic, queueId, create),
      offsetMsgIdOf: (phys) => this.offsetMsgIdOf(phys),
      stored: (put) => this.stored(put),
    });
  }

  private get checkpointFile(): string {
    return path.join(this.dir, 'checkpoint.json');
  }
  private get cqRoot(): string {
    return path.join(this.dir, 'consumequeue');
  }

  /**
   * Open the commit log (every record checked, damage skipped: CommitLog.open), then the consume
   * queues: entries are trusted up to the first one that cannot be right, a queue shorter than the
   * checkpoint recorded (a file deleted or cut) is rebuilt, and every record after the checkpoint
   * is indexed again. What was repaired is said through `warn`.
   */
  open(): void {
    fs.mkdirSync(this.dir, { recursive: true });
    // wall time of the recovery, for its report line only (not a timed rule: the clock does not apply)
    const started = performance.now();
    const warn = this.warn;
    const cp = readStoreCheckpoint(this.checkpointFile, this.warn);
    const scan = this.commitLog.open(warn);
    const end = this.commitLog.maxOffset;
    let from = Math.min(cp.dispatched, end);
    let repaired = lostBytes(scan) > scan.tornBytes || cp.unreadable;
    const shortBy = Math.max(0, cp.dispatched - end);
    if (shortBy > 0) {
      warn(
        `commit log ends at ${end} but the checkpoint recorded data up to ${cp.dispatched}: ${shortBy} bytes of indexed messages are gone`,
      );
      repaired = true;
    }
    // at most this many queue offsets can have lost their record
    const holeBudget = Math.ceil((lostBytes(scan) + shortBy) / MIN_RECORD_BYTES) + 1;
    let topics: string[] = [];
    try {
      topics = fs.readdirSync(this.cqRoot);
    } catch {
      // no consume queues yet
    }
    const valid = (phys: number, size: number): boolean => this.commitLog.validRange(phys, size);
    for (const topic of topics) {
      let ids: string[] = [];
      try {
        ids = fs.readdirSync(path.join(this.cqRoot, topic));
      } catch {
        continue;
      }
      for (const id of ids) {
        if (!/^\d+$/.test(id)) continue;
        let cq: ConsumeQueue;
        try {
          cq = new ConsumeQueue(this.cqRoot, topic, Number(id));
        } catch (err) {
          warn(`consume queue folder ${path.join(this.cqRoot, topic, id)} ignored: ${(err as Error).message}`);
          continue;
        }
        const { dropped } = cq.load(valid, this.commitLog.minOffset);
        const key = `${topic}@${id}`;
        this.queues.set(key, cq);
        const expected = cp.queues?.get(key);
        if (dropped > 0) {
          warn(
            `consume queue ${key}: entry ${cq.maxOffset} is damaged or points at a record the commit log no longer holds intact; re-indexing it and the ${dropped - 1} entries after it from the commit log`,
          );
        } else if (expected !== undefined && cq.maxOffset < expected) {
          warn(
            `consume queue ${key} has ${cq.maxOffset} entries where the checkpoint recorded ${expected}; rebuilding the rest from the commit log`,
          );
        } else continue;
        repaired = true;
        from = Math.min(from, cq.indexedEnd);
      }
    }
    for (const [key, expected] of cp.queues ?? []) {
      if (this.queues.has(key) || expected === 0) continue;
      warn(
        `consume queue ${key} is missing (the checkpoint recorded ${expected} entries); rebuilding it from the commit log`,
      );
      repaired = true;
      from = 0;
    }
    const replayed = replayCommitLog(
      {
        commitLog: this.commitLog,
        queues: this.queues,
        queue: (topic, queueId, create) => this.queue(topic, queueId, create),
        tagsCode: this.tagsCodeFn,
        warn: this.warn,
      },
      from,
      cp.queues,
      holeBudget,
    );
    if (repaired || replayed.holes > 0) {
      warn(
        `recovery: indexed ${replayed.indexed} messages from commit-log offset ${from}` +
          (replayed.holes ? `, ${replayed.holes} queue offsets lost to damaged records are skipped` : '') +
          ` (${scan.records} records verified, ${Math.round(performance.now() - started)} ms)`,
      );
    } else if (replayed.indexed) log('recovery: re-indexed %d messages after offset %d', replayed.indexed, from);
    this.opened = true;
    // a flush writes only when the log grew since the last (or no checkpoint was written yet)
    this.flushing = new OnDemandTask(
      this.clock,
      this.flushIntervalMs,
      () => {
        this.flush(false);
        return this.checkpointed !== this.commitLog.maxOffset;
      },
      (err) => log('flush failed: %O', err),
    );
    this.flushing.wake();
    if (this.retention.fileReservedTime > 0) {
      this.cleaning = new OnDemandTask(
        this.clock,
        this.retention.cleanResourceInterval,
        () => {
          this.cleanExpiredSegments();
          return this.commitLog.segmentCount > 1;
        },
        (err) => log('retention failed: %O', err),
      );
      if (this.commitLog.segmentCount > 1) this.cleaning.wake();
    }
  }

  /**
   * One look of the retention cleaner (cleanExpiredSegments; run every cleanResourceInterval on
   * the store's clock): expired segments deleted, then every consume queue's min offset moved past
   * the records that went (their pulls answer OFFSET_TOO_SMALL → PULL_OFFSET_MOVED, as Java's) and
   * `onTrimmed` told (the key index drops its files). Returns how many segments went.
   */
  cleanExpiredSegments(): number {
    if (this.closed || !this.opened) return 0;
    return cleanExpiredSegments(
      {
        commitLog: this.commitLog,
        clock: this.clock,
        diskUsed: this.diskUsed,
        trimmed: (min) => {
          for (const cq of this.queues.values()) cq.trimBelow(min);
          this.onTrimmed?.(min);
          // the checkpoint lists queue lengths, not min offsets: nothing to record
        },
      },
      this.retention,
    );
  }

  /** Called after retention deleted segments, with the commit log's new min offset. */
  onTrimmed: ((minOffset: number) => void) | null = null;

  /** Where the commit log's data starts (moves with retention). */
  get commitLogMinOffset(): number {
    return this.commitLog.minOffset;
  }

  /** Write consume queues behind and record how far the commit log is indexed on disk. */
  flush(sync: boolean): void {
    try {
      const dispatched = this.commitLog.maxOffset;
      if (dispatched === this.checkpointed && !sync) return;
      for (const cq of this.queues.values()) cq.flush();
      if (sync) this.commitLog.flush();
      const queues: Record<string, number> = {};
      for (const [key, cq] of this.queues) queues[key] = cq.maxOffset;
      writeFileAtomic(this.checkpointFile, JSON.stringify({ dispatched, queues }), sync);
      this.checkpointed = dispatched;
    } catch (err) {
      log('flush failed: %s', (err as Error).message);
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    // a store whose open() failed has nothing to write, and must not replace the checkpoint
    if (!this.opened) return;
    this.flushing?.stop();
    this.cleaning?.stop();
    this.flush(true);
    for (const cq of this.queues.values()) cq.close();
    this.commitLog.close();
  }

  /** Calls `listener` after every write (the held pulls' and POPs' wake-up); returns its remover. */
  onArrival(listener: ArrivalListener): () => void {
    return this.arrivals.on('arrival', listener);
  }

  /** Called for every record written, with its commit-log position (the key index of index-service.ts). */
  onStored: ((inner: MessageInner, physOffset: number, size: number, storeTimestamp: number) => void) | null = null;

  /** Drop a topic's consume queues and their files (DELETE_TOPIC_IN_BROKER); its commit-log records stay until the log is cleaned. */
  deleteTopic(topic: string): void {
    for (const [key, cq] of this.queues) {
      if (cq.topic !== topic) continue;
      cq.close();
      this.queues.delete(key);
    }
    fs.rmSync(storePath(this.cqRoot, topic), { recursive: true, force: true });
    // the checkpoint must stop listing the queues, or the next open would rebuild them from the log
    this.flush(true);
  }

  /** Where the next record goes: the end of the commit log's data. */
  get commitLogEnd(): number {
    return this.commitLog.maxOffset;
  }

  /** Every intact commit-log record from `from` on (to rebuild derived indexes). */
  records(from: number): Iterable<{ offset: number; record: Buffer }> {
    return this.commitLog.records(from);
  }

  /** The queue of (topic, queueId); created when `create` is set. */
  queue(topic: string, queueId: number, create = false): ConsumeQueue | undefined {
    const key = `${topic}@${queueId}`;
    let cq = this.queues.get(key);
    if (!cq && create) {
      cq = new ConsumeQueue(this.cqRoot, topic, queueId);
      this.queues.set(key, cq);
    }
    return cq;
  }

  /** Topics that have at least one consume queue (used to restore topic configs after a restart). */
  queueIdsByTopic(): Map<string, number> {
    const m = new Map<string, number>();
    for (const cq of this.queues.values()) m.set(cq.topic, Math.max(m.get(cq.topic) ?? 0, cq.queueId + 1));
    return m;
  }

  /**
   * Write messages of one (topic, queueId) as consecutive records with consecutive queue offsets,
   * in one write (a batch's records in one writev). All or nothing.
   */
  putMessages(inners: MessageInner[]): PutMessageResult {
    if (this.closed) return { status: 'SERVICE_NOT_AVAILABLE', remark: 'store is shut down', written: [] };
    return this.writer.put(inners);
  }

  /** Records just written: into their queue, the key index, and the pulls waiting for them. */
  private stored(put: PreparedPut): void {
    const { cq, records, codes, inners, result, storeTimestamp } = put;
    const written = result.written;
    for (let i = 0; i < records.length; i++) cq.append(written[i]!.physOffset, records[i]!.length, codes[i]!);
    if (this.onStored)
      for (let i = 0; i < records.length; i++)
        this.onStored(inners[i]!, written[i]!.physOffset, records[i]!.length, storeTimestamp);
    this.arrivals.emit('arrival', cq.topic, cq.queueId, cq.maxOffset, codes);
    this.flushing?.wake();
    if (this.cleaning && this.commitLog.segmentCount > 1) this.cleaning.wake();
  }

  getMaxOffset(topic: string, queueId: number): number {
    return this.queue(topic, queueId)?.maxOffset ?? 0;
  }
  getMinOffset(topic: string, queueId: number): number {
    return this.queue(topic, queueId)?.minOffset ?? 0;
  }

  /**
   * Read up to `maxMsgNums` messages from `offset`, keeping those whose consume-queue tag code
   * `match` accepts (and, for a property filter, whose record `matchRecord` accepts). Follows
   * DefaultMessageStore.getMessage's statuses and nextBeginOffset rules. When `matchRecord`
   * answers null (its pull's evaluation budget is spent) the scan stops before that record, as a
   * scan that reached its last entry would: nextBeginOffset is the record, so nothing is skipped.
   */
  getMessage(
    topic: string,
    queueId: number,
    offset: number,
    maxMsgNums: number,
    match: ((tagsCode: number) => boolean) | null,
    matchRecord: ((record: Buffer) => boolean | null) | null = null,
  ): GetMessageResult {
    const cq = this.queue(topic, queueId);
    if (!cq) {
      return {
        status: 'NO_MATCHED_LOGIC_QUEUE',
        nextBeginOffset: 0,
        minOffset: 0,
        maxOffset: 0,
        records: [],
        bytes: 0,
      };
    }
    const minOffset = cq.minOffset;
    const maxOffset = cq.maxOffset;
    const base = { minOffset, maxOffset, records: [] as Buffer[], bytes: 0 };
    if (maxOffset === 0) return { ...base, status: 'NO_MESSAGE_IN_QUEUE', nextBeginOffset: 0 };
    if (offset < minOffset) return { ...base, status: 'OFFSET_TOO_SMALL', nextBeginOffset: minOffset };
    if (offset === maxOffset) return { ...base, status: 'OFFSET_OVERFLOW_ONE', nextBeginOffset: offset };
    if (offset > maxOffset) return { ...base, status: 'OFFSET_OVERFLOW_BADLY', nextBeginOffset: maxOffset };

    const limit = Math.min(maxOffset, offset + Math.max(MIN_FILTER_ENTRIES, maxMsgNums));
    const wanted = Math.max(1, Math.min(maxMsgNums, MAX_TRANSFER_COUNT));
    const picked: { phys: number; size: number }[] = [];
    let bytes = 0;
    let i = offset;
    for (; i < limit; i++) {
      const size = cq.sizeAt(i);
      if (picked.length >= wanted || (picked.length > 0 && bytes + size > MAX_TRANSFER_BYTES)) break;
      // a hole (its record was lost to damage) is stepped over like a filtered-out message
      if (size <= 0) continue;
      if (match && !match(cq.tagsCodeAt(i))) continue;
      const phys = cq.physOffsetAt(i);
      if (!this.commitLog.recordHeaderOk(phys, size)) {
        this.warnOnce(
          phys,
          `${topic}@${queueId} offset ${i}: the commit log holds no intact record at ${phys} (damaged since start-up?); skipped`,
        );
        continue;
      }
      // isMatchedByCommitLog (SQL92): the record's properties, read where it lies
      if (matchRecord) {
        const m = matchRecord(this.commitLog.read(phys, size) ?? Buffer.alloc(0));
        if (m === null) break;
        if (!m) continue;
      }
      picked.push({ phys, size });
      bytes += size;
    }
    if (picked.length === 0) return { ...base, status: 'NO_MATCHED_MESSAGE', nextBeginOffset: i };
    const records = this.readMany(picked);
    if (records.length === 0) return { ...base, status: 'MESSAGE_WAS_REMOVING', nextBeginOffset: i };
    // a run could vanish only with retention, which this store does not do; count what is served
    bytes = 0;
    for (const r of records) bytes += r.length;
    return { status: 'FOUND', nextBeginOffset: i, minOffset, maxOffset, records, bytes };
  }

  /**
   * Records at the given places, with records that follow each other in the commit log (a batch,
   * a single-queue topic) coalesced into one buffer: views of memory segments or of cached disk
   * blocks, so a pull whose messages form one run is served with no copy at all.
   */
  private readMany(picked: { phys: number; size: number }[]): Buffer[] {
    const seg = this.commitLog.segmentSize;
    const runs: { phys: number; size: number }[] = [];
    for (const p of picked) {
      const last = runs[runs.length - 1];
      if (last && last.phys + last.size === p.phys && Math.floor(last.phys / seg) === Math.floor(p.phys / seg))
        last.size += p.size;
      else runs.push({ phys: p.phys, size: p.size });
    }
    const out: Buffer[] = [];
    for (const r of runs) {
      const b = this.commitLog.read(r.phys, r.size);
      if (b) out.push(b);
    }
    return out;
  }

  private readonly warned = new Set<number>();
  private warnOnce(phys: number, line: string): void {
    if (this.warned.has(phys) || this.warned.size > 10_000) return;
    this.warned.add(phys);
    this.warn(line);
  }

  /** True when the message at a queue offset is still in the in-memory window (a "young" queue). */
  isInMemory(topic: string, queueId: number, offset: number): boolean {
    const cq = this.queue(topic, queueId);
    if (!cq || offset < cq.minOffset || offset >= cq.maxOffset) return false;
    return this.commitLog.inMemory(cq.physOffsetAt(offset));
  }

  /** The offset msgId of the record at commit-log offset `phys` (createOffsetMsgId, host part computed once). */
  offsetMsgIdOf(phys: number): string {
    return this.msgIdPrefix + hexInt64(phys);
  }

  /** The record whose commit-log offset is `phys` (send-back, view by id), or null. */

  lookMessageByOffset(phys: number): Buffer | null {
    if (!Number.isSafeInteger(phys) || phys < 0) return null;
    return this.commitLog.readRecordAt(phys);
  }

  /** Store timestamp of the message at a queue offset, or -1. */
  storeTimestampAt(topic: string, queueId: number, offset: number): number {
    const cq = this.queue(topic, queueId);
    if (!cq || offset < cq.minOffset || offset >= cq.maxOffset || cq.isHole(offset)) return -1;
    const rec = this.commitLog.read(cq.physOffsetAt(offset), cq.sizeAt(offset));
    return rec ? recordStoreTimestamp(rec) : -1;
  }

  getEarliestMessageTime(topic: string, queueId: number): number {
    return this.storeTimestampAt(topic, queueId, this.getMinOffset(topic, queueId));
  }

  /**
   * Queue offset for a timestamp. `boundary` undefined = 4.9 (nearest store time, exact match
   * wins, 0 when empty); 'LOWER' = 5.x first offset with store time ≥ ts (max offset if none);
   * 'UPPER' = 5.x last offset with store time ≤ ts.
   */
  getOffsetByTime(topic: string, queueId: number, ts: number, boundary?: 'LOWER' | 'UPPER'): number {
    const cq = this.queue(topic, queueId);
    if (!cq || cq.maxOffset === 0) return 0;
    return offsetByTime(cq.minOffset, cq.maxOffset, (o) => this.storeTimestampAt(topic, queueId, o), ts, boundary);
  }
}
