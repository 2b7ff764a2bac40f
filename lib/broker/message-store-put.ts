import type { Clock } from '../clock.js';
import createDebug from '../debug.js';
import { MAX_PROPERTIES_BYTES, ProtocolError, encodeProperties } from '../../protocol/index.js';
import type { CommitLog } from './commit-log.js';
import type { ConsumeQueue } from './consume-queue.js';
import { StorePathError, StoreWriteError } from './errors.js';
import { type MessageInner, prepareRecord, stampRecord } from './message-record.js';
import type { MessageStoreOptions, PutMessageResult } from './message-store-types.js';

const log = createDebug('rocketwire:broker');

/** Puts of a turn written at once before grouping starts: as many as the answers a server sends early. */
const EARLY_PUTS = 2;

/** What the writer needs of its store. */
export interface PutHost {
  readonly commitLog: CommitLog;
  readonly clock: Clock;
  readonly storeHost: string;
  readonly maxMessageSize: number;
  readonly tagsCode: NonNullable<MessageStoreOptions['tagsCode']>;
  queue(topic: string, queueId: number, create: boolean): ConsumeQueue | undefined;
  offsetMsgIdOf(phys: number): string;
  /** After records are written: index them, wake the pulls. */
  stored(put: PreparedPut): void;
}

/** One putMessages call, encoded and given its offsets, waiting for its write. */
export interface PreparedPut {
  inners: MessageInner[];
  records: Buffer[];
  codes: number[];
  cq: ConsumeQueue;
  phys: number;
  bytes: number;
  storeTimestamp: number;
  result: PutMessageResult & { status: 'PUT_OK' };
  settle?: (r: PutMessageResult) => void;
}

/**
 * The store's write path. A put is encoded and given its commit-log and queue offsets at once;
 * the records of every put prepared in one turn of the event loop (the sends of one socket read,
 * a batch) are written together, in one writev per commit-log segment, when the turn ends (grouped
 * puts) or at once (putNow, which also writes what waits before it). Each send is answered only
 * after its records are written, as before: grouping changes how many system calls, not when a
 * send counts as stored. A failed write fails the puts from the segment run that failed on (none
 * of whose records stay in the log).
 */
export class StoreWriter {
  private pending: PreparedPut[] = [];
  /** End of the records reserved but not yet written; -1 when none wait. */
  private pendingEnd = -1;
  /** Queue offsets reserved by waiting puts, per queue. */
  private readonly reserved = new Map<ConsumeQueue, number>();

  /** Puts written at once in this turn (see putGrouped). */
  private turnPuts = 0;
  private readonly endTurn = (): void => {
    this.turnPuts = 0;
  };

  constructor(private readonly host: PutHost) {}

  /** Encode, reserve and write now (with everything waiting before it). */
  putNow(inners: MessageInner[]): PutMessageResult {
    const p = this.prepare(inners);
    if (p.status !== undefined) return p;
    this.enqueue(p);
    this.flush();
    return p.settled ?? p.result;
  }

  /**
   * Encode and reserve now; written with the other puts of this turn. The first EARLY_PUTS of a
   * turn are written at once instead: their answers leave at once (the server sends a turn's first
   * answers early, remoting/outbound-queue.ts), so the clients work on them while the rest waits.
   */
  putGrouped(inners: MessageInner[]): PutMessageResult | Promise<PutMessageResult> {
    if (this.pending.length === 0 && this.turnPuts < EARLY_PUTS) {
      if (this.turnPuts++ === 0) queueMicrotask(this.endTurn);
      return this.putNow(inners);
    }
    const p = this.prepare(inners);
    if (p.status !== undefined) return p;
    const done = new Promise<PutMessageResult>((resolve) => {
      p.settle = resolve;
    });
    if (this.pending.length === 0) queueMicrotask(() => this.flush());
    this.enqueue(p);
    return done;
  }

  private enqueue(p: PreparedPut): void {
    this.pending.push(p);
    this.pendingEnd = p.phys + p.bytes;
    this.reserved.set(p.cq, (this.reserved.get(p.cq) ?? 0) + p.records.length);
  }

  private prepare(
    inners: MessageInner[],
  ): (PreparedPut & { status?: undefined; settled?: PutMessageResult }) | PutMessageResult {
    const first = inners[0];
    if (!first) return { status: 'MESSAGE_ILLEGAL', remark: 'no message', written: [] };
    const host = this.host;
    const now = host.clock.now();
    const records: Buffer[] = [];
    // tag codes (Java hash of TAGS; for SCHEDULE_TOPIC_XXXX the delivery time), one per record
    const codes: number[] = [];
    let bytes = 0;
    for (const inner of inners) {
      if (inner.body.length > host.maxMessageSize) {
        return {
          status: 'MESSAGE_ILLEGAL',
          remark: `message body size ${inner.body.length} exceeds the maximum ${host.maxMessageSize}`,
          written: [],
        };
      }
      // a message stored as sent keeps its properties string: no decode, no encode
      const props = inner.propertiesText ?? encodeProperties(inner.properties);
      if (props.length > MAX_PROPERTIES_BYTES / 3 && Buffer.byteLength(props, 'utf8') > MAX_PROPERTIES_BYTES) {
        return {
          status: 'PROPERTIES_SIZE_EXCEEDED',
          remark: `message properties exceed ${MAX_PROPERTIES_BYTES} bytes`,
          written: [],
        };
      }
      let record: Buffer;
      try {
        record = prepareRecord(inner, host.storeHost, props);
      } catch (err) {
        if (err instanceof ProtocolError) return { status: 'MESSAGE_ILLEGAL', remark: err.message, written: [] };
        throw err;
      }
      records.push(record);
      codes.push(host.tagsCode(inner, now));
      bytes += record.length;
    }
    let phys: number;
    try {
      phys = host.commitLog.reserve(bytes, this.pendingEnd < 0 ? undefined : this.pendingEnd);
    } catch (err) {
      return { status: 'MESSAGE_ILLEGAL', remark: (err as Error).message, written: [] };
    }
    let cq: ConsumeQueue;
    try {
      cq = host.queue(first.topic, first.queueId, true)!;
    } catch (err) {
      if (err instanceof StorePathError) return { status: 'MESSAGE_ILLEGAL', remark: err.message, written: [] };
      throw err;
    }
    const baseQueueOffset = cq.maxOffset + (this.reserved.get(cq) ?? 0);
    const written: PutMessageResult['written'] = [];
    let p = phys;
    for (let i = 0; i < records.length; i++) {
      const record = records[i]!;
      stampRecord(record, baseQueueOffset + i, p, now);
      written.push({
        physOffset: p,
        queueOffset: baseQueueOffset + i,
        msgId: host.offsetMsgIdOf(p),
        storeTimestamp: now,
      });
      p += record.length;
    }
    return { inners, records, codes, cq, phys, bytes, storeTimestamp: now, result: { status: 'PUT_OK', written } };
  }

  /** Write every waiting put: one append per commit-log segment the group spans. */
  flush(): void {
    const group = this.pending;
    if (group.length === 0) return;
    this.pending = [];
    this.pendingEnd = -1;
    this.reserved.clear();
    const segment = this.host.commitLog.segmentSize;
    let failure: string | null = null;
    for (let i = 0; i < group.length; ) {
      // a run of puts in one segment (a put never straddles two: reserve moved it to the next)
      const segBase = Math.floor(group[i]!.phys / segment);
      let j = i;
      const bufs: Buffer[] = [];
      while (j < group.length && Math.floor(group[j]!.phys / segment) === segBase) {
        for (const r of group[j]!.records) bufs.push(r);
        j++;
      }
      if (failure === null) {
        try {
          this.host.commitLog.append(group[i]!.phys, bufs, group[j - 1]!.storeTimestamp);
        } catch (err) {
          if (!(err instanceof StoreWriteError)) throw err;
          failure = `store write failed: ${err.message}`;
        }
      }
      for (let k = i; k < j; k++) {
        const put = group[k]!;
        if (failure !== null) {
          const r: PutMessageResult = { status: 'SERVICE_NOT_AVAILABLE', remark: failure, written: [] };
          (put as { settled?: PutMessageResult }).settled = r;
          put.settle?.(r);
          continue;
        }
        try {
          this.host.stored(put);
        } catch (err) {
          // the records are written (recovery would index them); a failing index must not lose the answer
          log('indexing a stored put failed: %O', err);
        }
        put.settle?.(put.result);
      }
      i = j;
    }
  }
}
