import type { Clock } from '../clock.js';
import createDebug from '../debug.js';
import { MAX_PROPERTIES_BYTES, ProtocolError, encodeProperties } from '../../protocol/index.js';
import type { CommitLog } from './commit-log.js';
import type { ConsumeQueue } from './consume-queue.js';
import { StorePathError, StoreWriteError } from './errors.js';
import { type MessageInner, prepareRecord, stampRecord } from './message-record.js';
import type { MessageStoreOptions, PutMessageResult } from './message-store-types.js';

const log = createDebug('rocketwire:broker');

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

/** One putMessages call, encoded and given its offsets, ready to write. */
export interface PreparedPut {
  inners: MessageInner[];
  records: Buffer[];
  codes: number[];
  cq: ConsumeQueue;
  phys: number;
  bytes: number;
  storeTimestamp: number;
  result: PutMessageResult & { status: 'PUT_OK' };
}

/**
 * The store's write path. A put (one message, or a batch's messages of one queue) is encoded and
 * given its commit-log and queue offsets at once, then its records go out in one writev: a batch
 * costs one system call, not one per record. A put never straddles two segments (reserve moves it
 * to the next), and a failed write leaves none of its records in the log and takes no queue offset.
 * Grouping the puts of several sends into one write as well did not beat noise end to end
 * (docs/benchmarks.md), so each put is written when it is made.
 */
export class StoreWriter {
  constructor(private readonly host: PutHost) {}

  /** Encode, reserve and write; all or nothing. */
  put(inners: MessageInner[]): PutMessageResult {
    const p = this.prepare(inners);
    if (p.status !== undefined) return p;
    try {
      this.host.commitLog.append(p.phys, p.records, p.storeTimestamp);
    } catch (err) {
      if (!(err instanceof StoreWriteError)) throw err;
      return { status: 'SERVICE_NOT_AVAILABLE', remark: `store write failed: ${err.message}`, written: [] };
    }
    try {
      this.host.stored(p);
    } catch (err) {
      // the records are written (recovery would index them); a failing index must not lose the answer
      log('indexing a stored put failed: %O', err);
    }
    return p.result;
  }

  private prepare(inners: MessageInner[]): (PreparedPut & { status?: undefined }) | PutMessageResult {
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
      phys = host.commitLog.reserve(bytes);
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
    const baseQueueOffset = cq.maxOffset;
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
}
