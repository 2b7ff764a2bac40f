import * as fs from 'node:fs';
import * as path from 'node:path';
import createDebug from 'debug';
import type { Clock } from '../clock.js';
import { CommitLog } from './commit-log.js';
import { StoreWriteError } from './errors.js';
import { scheduleEvery } from './periodic-task.js';
import { ConsumeQueue } from './consume-queue.js';
import { readTextFile, writeFileAtomic } from './atomic-file.js';
import {
  MAX_PROPERTIES_BYTES,
  ProtocolError,
  createOffsetMsgId,
  decodeMessage,
  encodeProperties,
  type MessageExt,
} from '../../protocol/index.js';
import { hexInt64 } from '../../protocol/message-id.js';
import { type MessageInner, prepareRecord, recordStoreTimestamp, stampRecord, tagsCodeOf } from './message-record.js';

const log = createDebug('rocketwire:broker');

/** Store statuses of a read; the names are what the broker sends as the pull response remark. */
export type GetMessageStatus =
  | 'FOUND'
  | 'NO_MATCHED_MESSAGE'
  | 'MESSAGE_WAS_REMOVING'
  | 'OFFSET_FOUND_NULL'
  | 'OFFSET_OVERFLOW_BADLY'
  | 'OFFSET_OVERFLOW_ONE'
  | 'OFFSET_TOO_SMALL'
  | 'NO_MATCHED_LOGIC_QUEUE'
  | 'NO_MESSAGE_IN_QUEUE';

export interface GetMessageResult {
  status: GetMessageStatus;
  nextBeginOffset: number;
  minOffset: number;
  maxOffset: number;
  /** Stored records in queue order, adjacent ones in one buffer (views of the commit log when in memory). */
  records: Buffer[];
  bytes: number;
}

export type PutMessageStatus = 'PUT_OK' | 'MESSAGE_ILLEGAL' | 'PROPERTIES_SIZE_EXCEEDED' | 'SERVICE_NOT_AVAILABLE';

export interface PutMessageResult {
  status: PutMessageStatus;
  remark?: string;
  /** One per message written, in order. */
  written: { physOffset: number; queueOffset: number; msgId: string; storeTimestamp: number }[];
}

/** Called after messages are written and indexed (long polling, delayed delivery). */
export type ArrivalListener = (topic: string, queueId: number, maxOffset: number, tagsCodes: number[]) => void;

export interface MessageStoreOptions {
  dir: string;
  /** "ip:port" or "[v6]:port" written into every record (socketAddressText). */
  storeHost: string;
  clock: Clock;
  /** Largest body accepted (Java maxMessageSize). Default 4 MiB. */
  maxMessageSize?: number;
  segmentSize?: number;
  cachedSegments?: number;
  /** How often consume queues are written behind. Default 500 ms. */
  flushIntervalMs?: number;
  /** Consume-queue tag code of a message; SCHEDULE_TOPIC_XXXX stores the delivery time there instead. */
  tagsCode?: (topic: string, properties: Readonly<Record<string, string>>, storeTimestamp: number) => number;
}

/** Per pull, like Java's store reading from memory: at most 32 messages / 256 KiB (first always taken). */
export const MAX_TRANSFER_COUNT = 32;
export const MAX_TRANSFER_BYTES = 256 * 1024;
/** Java examines at most max(16000 bytes, maxMsgNums × 20) / 20 consume-queue entries per pull. */
const MIN_FILTER_ENTRIES = 800;

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
  private readonly commitLog: CommitLog;
  private readonly queues = new Map<string, ConsumeQueue>();
  private readonly listeners: ArrivalListener[] = [];
  private readonly maxMessageSize: number;
  private readonly tagsCodeFn: NonNullable<MessageStoreOptions['tagsCode']>;
  private readonly flushIntervalMs: number;
  private stopFlushing: (() => void) | null = null;
  private checkpointed = -1;
  private closed = false;

  constructor(options: MessageStoreOptions) {
    this.dir = options.dir;
    this.storeHost = options.storeHost;
    this.msgIdPrefix = createOffsetMsgId(this.storeHost, 0).slice(0, -16);
    this.clock = options.clock;
    this.maxMessageSize = options.maxMessageSize ?? 4 * 1024 * 1024;
    this.flushIntervalMs = options.flushIntervalMs ?? 500;
    this.tagsCodeFn = options.tagsCode ?? ((_t, props) => tagsCodeOf(props));
    this.commitLog = new CommitLog(path.join(this.dir, 'commitlog'), {
      segmentSize: options.segmentSize,
      cachedSegments: options.cachedSegments,
    });
  }

  private get checkpointFile(): string {
    return path.join(this.dir, 'checkpoint.json');
  }
  private get cqRoot(): string {
    return path.join(this.dir, 'consumequeue');
  }

  open(): void {
    fs.mkdirSync(this.dir, { recursive: true });
    this.commitLog.open();
    const end = this.commitLog.maxOffset;
    let topics: string[] = [];
    try {
      topics = fs.readdirSync(this.cqRoot);
    } catch {
      // no consume queues yet
    }
    for (const topic of topics) {
      let ids: string[] = [];
      try {
        ids = fs.readdirSync(path.join(this.cqRoot, topic));
      } catch {
        continue;
      }
      for (const id of ids) {
        if (!/^\d+$/.test(id)) continue;
        const cq = new ConsumeQueue(this.cqRoot, topic, Number(id));
        cq.load(end);
        this.queues.set(`${topic}@${id}`, cq);
      }
    }
    let from = 0;
    const cp = readTextFile(this.checkpointFile);
    if (cp) {
      try {
        const v = (JSON.parse(cp) as { dispatched?: number }).dispatched;
        if (typeof v === 'number' && v >= 0 && v <= end) from = v;
      } catch {
        // unreadable checkpoint: re-index everything
      }
    }
    let replayed = 0;
    for (const { offset, record } of this.commitLog.records(from)) {
      let r: MessageExt;
      try {
        r = decodeMessage(record, 0, { decompress: false });
      } catch {
        break;
      }
      const cq = this.queue(r.topic, r.queueId, true)!;
      if (cq.maxOffset > r.queueOffset) continue;
      if (cq.maxOffset < r.queueOffset) {
        log('recovery: %s@%d jumps from %d to %d; entries lost', r.topic, r.queueId, cq.maxOffset, r.queueOffset);
        continue;
      }
      cq.append(offset, r.storeSize, this.tagsCodeFn(r.topic, r.properties, r.storeTimestamp));
      replayed++;
    }
    if (replayed) log('recovery: re-indexed %d messages after offset %d', replayed, from);
    this.stopFlushing = scheduleEvery(this.clock, this.flushIntervalMs, () => this.flush(false), (err) => log('flush failed: %O', err));
  }

  /** Write consume queues behind and record how far the commit log is indexed on disk. */
  flush(sync: boolean): void {
    try {
      const dispatched = this.commitLog.maxOffset;
      if (dispatched === this.checkpointed && !sync) return;
      for (const cq of this.queues.values()) cq.flush();
      if (sync) this.commitLog.flush();
      writeFileAtomic(this.checkpointFile, JSON.stringify({ dispatched }), sync);
      this.checkpointed = dispatched;
    } catch (err) {
      log('flush failed: %s', (err as Error).message);
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.stopFlushing?.();
    this.flush(true);
    for (const cq of this.queues.values()) cq.close();
    this.commitLog.close();
  }

  onArrival(listener: ArrivalListener): void {
    this.listeners.push(listener);
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
   * in one write. All or nothing.
   */
  putMessages(inners: MessageInner[]): PutMessageResult {
    if (this.closed) return { status: 'SERVICE_NOT_AVAILABLE', remark: 'store is shut down', written: [] };
    const first = inners[0];
    if (!first) return { status: 'MESSAGE_ILLEGAL', remark: 'no message', written: [] };
    const now = this.clock.now();
    const bufs: Buffer[] = [];
    // Tag codes (Java hash of TAGS; for SCHEDULE_TOPIC_XXXX the delivery time), one per record.
    const codes: number[] = [];
    let total = 0;
    for (const inner of inners) {
      if (inner.body.length > this.maxMessageSize) {
        return { status: 'MESSAGE_ILLEGAL', remark: `message body size ${inner.body.length} exceeds the maximum ${this.maxMessageSize}`, written: [] };
      }
      const props = encodeProperties(inner.properties);
      if (Buffer.byteLength(props, 'utf8') > MAX_PROPERTIES_BYTES) {
        return { status: 'PROPERTIES_SIZE_EXCEEDED', remark: `message properties exceed ${MAX_PROPERTIES_BYTES} bytes`, written: [] };
      }
      let buf;
      try {
        buf = prepareRecord(inner, this.storeHost, props);
      } catch (err) {
        if (err instanceof ProtocolError) return { status: 'MESSAGE_ILLEGAL', remark: err.message, written: [] };
        throw err;
      }
      bufs.push(buf);
      codes.push(this.tagsCodeFn(inner.topic, inner.properties, now));
      total += buf.length;
    }
    let phys: number;
    try {
      phys = this.commitLog.reserve(total);
    } catch (err) {
      return { status: 'MESSAGE_ILLEGAL', remark: (err as Error).message, written: [] };
    }
    const cq = this.queue(first.topic, first.queueId, true)!;
    const baseQueueOffset = cq.maxOffset;
    const written: PutMessageResult['written'] = [];
    let p = phys;
    for (let i = 0; i < bufs.length; i++) {
      const buf = bufs[i]!;
      stampRecord(buf, baseQueueOffset + i, p, now);
      written.push({ physOffset: p, queueOffset: baseQueueOffset + i, msgId: this.offsetMsgIdOf(p), storeTimestamp: now });
      p += buf.length;
    }
    const data = bufs.length === 1 ? bufs[0]! : Buffer.concat(bufs, total);
    try {
      this.commitLog.append(phys, data);
    } catch (err) {
      if (err instanceof StoreWriteError) return { status: 'SERVICE_NOT_AVAILABLE', remark: `store write failed: ${err.message}`, written: [] };
      throw err;
    }
    for (let i = 0; i < bufs.length; i++) cq.append(written[i]!.physOffset, bufs[i]!.length, codes[i]!);
    for (const l of this.listeners) {
      try {
        l(first.topic, first.queueId, cq.maxOffset, codes);
      } catch (err) {
        log('arrival listener failed: %O', err);
      }
    }
    return { status: 'PUT_OK', written };
  }

  getMaxOffset(topic: string, queueId: number): number {
    return this.queue(topic, queueId)?.maxOffset ?? 0;
  }
  getMinOffset(topic: string, queueId: number): number {
    return this.queue(topic, queueId)?.minOffset ?? 0;
  }

  /**
   * Read up to `maxMsgNums` messages from `offset`, keeping those whose consume-queue tag code
   * `match` accepts. Follows DefaultMessageStore.getMessage's statuses and nextBeginOffset rules.
   */
  getMessage(topic: string, queueId: number, offset: number, maxMsgNums: number, match: ((tagsCode: number) => boolean) | null): GetMessageResult {
    const cq = this.queue(topic, queueId);
    if (!cq) {
      return { status: 'NO_MATCHED_LOGIC_QUEUE', nextBeginOffset: 0, minOffset: 0, maxOffset: 0, records: [], bytes: 0 };
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
      if (match && !match(cq.tagsCodeAt(i))) continue;
      picked.push({ phys: cq.physOffsetAt(i), size });
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
      if (last && last.phys + last.size === p.phys && Math.floor(last.phys / seg) === Math.floor(p.phys / seg)) last.size += p.size;
      else runs.push({ phys: p.phys, size: p.size });
    }
    const out: Buffer[] = [];
    for (const r of runs) {
      const b = this.commitLog.read(r.phys, r.size);
      if (b) out.push(b);
    }
    return out;
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
    if (!cq || offset < cq.minOffset || offset >= cq.maxOffset) return -1;
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
    const min = cq.minOffset;
    const max = cq.maxOffset;
    const at = (o: number): number => this.storeTimestampAt(topic, queueId, o);
    // first offset with store time >= ts
    let lo = min;
    let hi = max;
    while (lo < hi) {
      const mid = Math.floor((lo + hi) / 2);
      if (at(mid) >= ts) hi = mid;
      else lo = mid + 1;
    }
    const firstGe = lo;
    if (boundary === 'LOWER') return firstGe;
    // last offset with store time <= ts
    let lo2 = min;
    let hi2 = max;
    while (lo2 < hi2) {
      const mid = Math.floor((lo2 + hi2) / 2);
      if (at(mid) > ts) hi2 = mid;
      else lo2 = mid + 1;
    }
    const lastLe = lo2 - 1;
    if (boundary === 'UPPER') return Math.max(min, lastLe);
    if (firstGe < max && at(firstGe) === ts) return firstGe;
    if (lastLe < min) return firstGe < max ? firstGe : 0;
    if (firstGe >= max) return lastLe;
    return ts - at(lastLe) <= at(firstGe) - ts ? lastLe : firstGe;
  }
}
