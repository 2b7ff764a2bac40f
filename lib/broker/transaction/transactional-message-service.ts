import createDebug from '../../debug.js';
import { MessageSysFlag, decodeMessage, type MessageExt } from '../../../protocol/index.js';
import { copiedTo, parkUnder, type MessageInner } from '../message-record.js';
import type { MessageStore, PutMessageResult } from '../message-store.js';
import type { Clock } from '../../clock.js';
import type { ConsumerOffsetManager } from '../consumer-offset-manager.js';
import type { TopicConfigManager } from '../topic-config.js';

/** What the transaction store needs of the broker: its store, topics, offsets and clock. */
export interface TransactionStoreContext {
  readonly messageStore: MessageStore;
  readonly topics: TopicConfigManager;
  readonly offsets: ConsumerOffsetManager;
  readonly clock: Clock;
}

const log = createDebug('rocketwire:broker:transaction');

/** TopicValidator.RMQ_SYS_TRANS_HALF_TOPIC: where half messages wait, all on queue 0. */
export const TRANS_HALF_TOPIC = 'RMQ_SYS_TRANS_HALF_TOPIC';
/** TopicValidator.RMQ_SYS_TRANS_OP_HALF_TOPIC: one op record per ended half message, same queue id. */
export const TRANS_OP_HALF_TOPIC = 'RMQ_SYS_TRANS_OP_HALF_TOPIC';
/** TopicValidator.TRANS_CHECK_MAX_TIME_TOPIC: half messages checked transactionCheckMax times. */
export const TRANS_CHECK_MAX_TIME_TOPIC = 'TRANS_CHECK_MAX_TIME_TOPIC';
/** MixAll.CID_SYS_RMQ_TRANS: the group under which the check loop keeps its half and op offsets. */
export const CID_SYS_RMQ_TRANS = 'CID_RMQ_SYS_TRANS';
/** TransactionalMessageUtil.REMOVE_TAG: the tag of every op record. */
export const OP_REMOVE_TAG = 'd';

/** BrokerConfig's transaction settings (5.3.3 defaults). */
export interface TransactionSettings {
  /** How often unresolved half messages are looked at (transactionCheckInterval). Default 30 000 ms. */
  transactionCheckInterval: number;
  /** Age a half message must reach before it is checked (transactionTimeOut). Default 6000 ms. */
  transactionTimeOut: number;
  /** Checks of one half message before it goes to TRANS_CHECK_MAX_TIME_TOPIC (transactionCheckMax). Default 15. */
  transactionCheckMax: number;
  /** Refuse half messages with NO_PERMISSION (rejectTransactionMessage). Default false. */
  rejectTransactionMessage: boolean;
  /** Half messages older than this are discarded unchecked (fileReservedTime, 72 h). */
  fileReservedTimeMs: number;
  /**
   * Ended half messages remembered so that a second END_TRANSACTION of one writes nothing
   * (maxEndedHalves; not in Java, which commits a half message as often as it is told to).
   * Default 100 000.
   */
  maxEndedHalves: number;
}

export const DEFAULT_TRANSACTION_SETTINGS: Readonly<TransactionSettings> = Object.freeze({
  transactionCheckInterval: 30_000,
  transactionTimeOut: 6000,
  transactionCheckMax: 15,
  rejectTransactionMessage: false,
  fileReservedTimeMs: 72 * 3600 * 1000,
  maxEndedHalves: 100_000,
});

/** How a half message was ended: by END_TRANSACTION commit or rollback, or 'ended' when only its op record is known (read back at start). */
export type HalfEnd = 'commit' | 'rollback' | 'ended';

/** What the check loop does with a half message it decided about (AbstractTransactionalMessageCheckListener). */
export interface TransactionCheckListener {
  /** Ask a producer of the message's group (CHECK_TRANSACTION_STATE); `msg` is the re-put copy. */
  resolveHalfMsg(msg: MessageExt): void;
  /** The message was checked transactionCheckMax times or is too old: move it aside. */
  resolveDiscardMsg(msg: MessageExt): void;
}

/** A half message looked up for END_TRANSACTION, or why not. */
export type HalfLookup = { ok: true; msg: MessageExt } | { ok: false; remark: string };

/**
 * The half messages that were ended (an op record written), newest last, at most `cap`: a second
 * END_TRANSACTION of one is answered from here instead of writing the message (or the op record)
 * again. Keyed by half queue and offset, as op records name them, and by producer group and
 * transaction id, so that the check's re-put copy of a half and the half itself (the producer's
 * own late end and its answer to the check) count as one transaction. Past the cap the oldest end
 * is forgotten: a repeat of it arriving after `cap` later ends would be written again (as Java
 * does for every repeat). Transaction ids are known for the ends since start only (the op records
 * read back at start name offsets).
 */
export class EndedHalves {
  private readonly ended = new Map<string, HalfEnd>();
  private readonly byTransaction = new Map<string, HalfEnd>();
  constructor(readonly cap: number) {}

  get size(): number {
    return this.ended.size;
  }

  get(queueId: number, queueOffset: number): HalfEnd | undefined {
    return this.ended.get(`${queueId}:${queueOffset}`);
  }

  /** How the transaction `transactionKey(half)` was ended, by this half or another copy of it. */
  getTransaction(key: string | null): HalfEnd | undefined {
    return key === null ? undefined : this.byTransaction.get(key);
  }

  add(queueId: number, queueOffset: number, how: HalfEnd, txKey: string | null = null): void {
    remember(this.ended, `${queueId}:${queueOffset}`, how, this.cap);
    if (txKey !== null) remember(this.byTransaction, txKey, how, this.cap);
  }
}

function remember(map: Map<string, HalfEnd>, key: string, how: HalfEnd, cap: number): void {
  map.delete(key);
  map.set(key, how);
  while (map.size > cap) map.delete(map.keys().next().value!);
}

/** A half message's transaction: its producer group and transaction id (UNIQ_KEY), or null without them. */
export function transactionKey(half: MessageExt): string | null {
  const group = half.properties.PGROUP;
  const id = half.properties.__transactionId__ ?? half.properties.UNIQ_KEY;
  return group === undefined || id === undefined ? null : `${group}\u0001${id}`;
}

export class TransactionalMessageService {
  /** Half messages ended since start, and those the op queue's last records name (loadEnded). */
  readonly endedHalves: EndedHalves;

  constructor(
    private readonly ctx: TransactionStoreContext,
    readonly settings: TransactionSettings,
  ) {
    this.endedHalves = new EndedHalves(settings.maxEndedHalves);
  }

  /**
   * At start: the half offsets named by the last op records of each op queue (at most
   * maxEndedHalves records back), so that an END_TRANSACTION repeated across a restart is still
   * recognised. Bounded: it reads no more records than the set can hold.
   */
  loadEnded(): void {
    const store = this.ctx.messageStore;
    const opConfig = this.ctx.topics.get(TRANS_OP_HALF_TOPIC);
    if (!opConfig) return;
    for (let queueId = 0; queueId < opConfig.readQueueNums; queueId++) {
      const max = store.getMaxOffset(TRANS_OP_HALF_TOPIC, queueId);
      const from = Math.max(store.getMinOffset(TRANS_OP_HALF_TOPIC, queueId), max - this.settings.maxEndedHalves);
      this.scanOps(queueId, from, null, (op) => {
        if (op.tags !== OP_REMOVE_TAG) return;
        for (const half of removedHalves(op)) if (half >= 0) this.endedHalves.add(queueId, half, 'ended');
      });
    }
  }

  /**
   * Every op record of queue `queueId` from offset `from` to the queue's end, decoded (bodies as
   * stored); `onGap(from, to)` for a stretch of the queue that holds no record.
   */
  private scanOps(
    queueId: number,
    from: number,
    onGap: ((from: number, to: number) => void) | null,
    onOp: (op: MessageExt) => void,
  ): void {
    const store = this.ctx.messageStore;
    const max = store.getMaxOffset(TRANS_OP_HALF_TOPIC, queueId);
    let offset = from;
    while (offset < max) {
      const got = store.getMessage(TRANS_OP_HALF_TOPIC, queueId, offset, 32, null);
      if (got.status !== 'FOUND') {
        if (got.nextBeginOffset <= offset) break;
        onGap?.(offset, got.nextBeginOffset);
        offset = got.nextBeginOffset;
        continue;
      }
      for (const rec of got.records) {
        let pos = 0;
        while (pos < rec.length) {
          const op = decodeMessage(rec, pos, { decompress: false });
          pos += op.storeSize;
          onOp(op);
        }
      }
      offset = got.nextBeginOffset;
    }
  }

  /** TransactionalMessageBridge#parseHalfMessageInner, then put. */
  prepareMessage(inner: MessageInner): PutMessageResult {
    const props = inner.properties;
    const uniq = props.UNIQ_KEY;
    if (uniq) props.__transactionId__ = uniq;
    // properties named: a message stored as sent keeps them behind an accessor a spread does not copy
    const half = {
      ...inner,
      properties: inner.properties,
      sysFlag: resetTransactionValue(inner.sysFlag, MessageSysFlag.TRANSACTION_NOT_TYPE),
    };
    parkUnder(half, TRANS_HALF_TOPIC, 0);
    this.ctx.topics.ensure(TRANS_HALF_TOPIC, 1);
    const result = this.ctx.messageStore.putMessages([half]);
    if (result.status === 'PUT_OK') this.ctx.messageStore.stats.incTopicPutNums(TRANS_HALF_TOPIC);
    return result;
  }

  /** The half message stored at `commitLogOffset` (getHalfMessageByOffset). */
  halfMessageByOffset(commitLogOffset: number): HalfLookup {
    const rec = this.ctx.messageStore.lookMessageByOffset(commitLogOffset);
    if (!rec) return { ok: false, remark: 'Find prepared transaction message failed' };
    return { ok: true, msg: decodeMessage(rec, 0, { decompress: false }) };
  }

  /**
   * deletePrepareMessage: the op record saying the half message at its queue offset is ended,
   * remembered in `endedHalves` as `how`.
   */
  deletePrepareMessage(half: MessageExt, how: HalfEnd = 'ended'): boolean {
    this.endedHalves.add(half.queueId, half.queueOffset, how, transactionKey(half));
    this.ctx.topics.ensure(TRANS_OP_HALF_TOPIC, 1);
    const store = this.ctx.messageStore;
    const now = this.ctx.clock.now();
    const res = store.putMessages([
      {
        topic: TRANS_OP_HALF_TOPIC,
        queueId: half.queueId,
        flag: 0,
        sysFlag: 0,
        bornTimestamp: now,
        bornHost: store.storeHost,
        reconsumeTimes: 0,
        preparedTransactionOffset: 0,
        body: Buffer.from(`${half.queueOffset},`, 'utf8'),
        properties: { TAGS: OP_REMOVE_TAG, WAIT: 'false' },
      },
    ]);
    if (res.status !== 'PUT_OK')
      log('op record for half offset %d failed: %s', half.queueOffset, res.remark ?? res.status);
    return res.status === 'PUT_OK';
  }

  /** Whether a half queue holds messages past its check offset: all a check round looks at. */
  hasHalvesToCheck(): boolean {
    const halfConfig = this.ctx.topics.get(TRANS_HALF_TOPIC);
    if (!halfConfig) return false;
    const store = this.ctx.messageStore;
    for (let queueId = 0; queueId < halfConfig.readQueueNums; queueId++) {
      const halfOffset =
        this.ctx.offsets.query(CID_SYS_RMQ_TRANS, TRANS_HALF_TOPIC, queueId) ??
        store.getMinOffset(TRANS_HALF_TOPIC, queueId);
      if (halfOffset < store.getMaxOffset(TRANS_HALF_TOPIC, queueId)) return true;
    }
    return false;
  }

  /**
   * One round of TransactionalMessageServiceImpl#check over every half queue: ended half messages
   * are stepped over, ones checked transactionCheckMax times (or older than fileReservedTime) are
   * discarded, the walk stops at the first message stored after the round began or younger than
   * transactionTimeOut (or its CHECK_IMMUNITY_TIME_IN_SECONDS), and every other one is re-put with
   * TRANSACTION_CHECK_TIMES + 1 and handed to `listener.resolveHalfMsg`. The half and op offsets
   * then move past what was decided.
   */
  check(listener: TransactionCheckListener): void {
    const store = this.ctx.messageStore;
    const halfConfig = this.ctx.topics.get(TRANS_HALF_TOPIC);
    if (!halfConfig) return;
    const startTime = this.ctx.clock.now();
    for (let queueId = 0; queueId < halfConfig.readQueueNums; queueId++) {
      const halfMax = store.getMaxOffset(TRANS_HALF_TOPIC, queueId);
      const halfOffset =
        this.ctx.offsets.query(CID_SYS_RMQ_TRANS, TRANS_HALF_TOPIC, queueId) ??
        store.getMinOffset(TRANS_HALF_TOPIC, queueId);
      const opOffset =
        this.ctx.offsets.query(CID_SYS_RMQ_TRANS, TRANS_OP_HALF_TOPIC, queueId) ??
        store.getMinOffset(TRANS_OP_HALF_TOPIC, queueId);
      if (halfOffset >= halfMax) continue;
      const ops = this.readOps(queueId, opOffset, halfOffset);
      let i = halfOffset;
      while (i < halfMax) {
        const opOff = ops.removeMap.get(i);
        if (opOff !== undefined) {
          ops.removeMap.delete(i);
          ops.settle(opOff, i);
          i++;
          continue;
        }
        const got = store.getMessage(TRANS_HALF_TOPIC, queueId, i, 1, null);
        if (got.status !== 'FOUND' || got.records.length === 0) {
          // a hole (a record lost to damage): step over it, as Java does an illegal offset
          if (got.nextBeginOffset > i) {
            i = got.nextBeginOffset;
            continue;
          }
          break;
        }
        const msg = decodeMessage(got.records[0]!, 0, { decompress: false });
        if (msg.queueOffset !== i) {
          i = msg.queueOffset;
          continue;
        }
        const copy = msg.properties.TRANSACTION_CHECK_TIMES !== undefined;
        if (this.needDiscard(msg) || startTime - msg.bornTimestamp > this.settings.fileReservedTimeMs) {
          listener.resolveDiscardMsg(msg);
          i++;
          continue;
        }
        // stored during this round: next round
        if (msg.storeTimestamp >= startTime) break;
        const age = this.ctx.clock.now() - msg.bornTimestamp;
        const immunityText = msg.properties.CHECK_IMMUNITY_TIME_IN_SECONDS;
        let immunity = this.settings.transactionTimeOut;
        if (immunityText !== undefined) {
          immunity = checkImmunityTimeMs(immunityText, this.settings.transactionTimeOut);
          if (age < immunity) {
            // Java: moved to the end of the queue (the copy remembers the original's offset), so
            // that younger messages behind it are still checked on time
            if (this.immunityPutBack(msg, ops)) {
              i++;
              continue;
            }
            break;
          }
        } else if (age >= 0 && age < immunity) {
          break;
        }
        // A copy whose check is younger than transactionTimeOut waits: its producer may still be
        // answering. Java re-checks a copy every round until the op record is read (its copies
        // keep the original born time), which commits twice when an answer takes longer than
        // transactionCheckInterval (30 s by default, so it rarely shows there).
        const sinceCheck = this.ctx.clock.now() - msg.storeTimestamp;
        if (copy && sinceCheck >= 0 && sinceCheck < this.settings.transactionTimeOut) break;
        // Java's isNeedCheck. A message exactly at its immunity (age === immunity on a millisecond
        // clock) is not due yet: Java looks at the same offset again, so the next round does too.
        // Stepping past it committed the check offset beyond it, and it was never checked.
        if (!(age > immunity || age <= -1)) break;
        const checked = this.putBackHalfMsg(msg);
        if (!checked) break;
        listener.resolveHalfMsg(checked);
        i++;
      }
      if (i !== halfOffset) this.ctx.offsets.commit(CID_SYS_RMQ_TRANS, TRANS_HALF_TOPIC, queueId, i);
      const newOpOffset = ops.nextOpOffset();
      if (newOpOffset !== opOffset)
        this.ctx.offsets.commit(CID_SYS_RMQ_TRANS, TRANS_OP_HALF_TOPIC, queueId, newOpOffset);
    }
  }

  /**
   * TRANSACTION_CHECK_TIMES: absent → 1; at transactionCheckMax → discard; else + 1 (written into
   * the copy the round re-puts, so it counts the checks sent).
   */
  private needDiscard(msg: MessageExt): boolean {
    const text = msg.properties.TRANSACTION_CHECK_TIMES;
    let times = 1;
    if (text !== undefined) {
      times = parseJavaInt(text);
      if (times >= this.settings.transactionCheckMax) return true;
      times++;
    }
    msg.properties.TRANSACTION_CHECK_TIMES = String(times);
    return false;
  }

  /** renewHalfMessageInner + put: the copy that is checked, with its new offsets. */
  private putBackHalfMsg(msg: MessageExt, extra?: Record<string, string>): MessageExt | null {
    const properties = { ...msg.properties, ...extra };
    const res = this.ctx.messageStore.putMessages([copiedTo(msg, msg.topic, msg.queueId, properties)]);
    const w = res.written[0];
    if (res.status !== 'PUT_OK' || !w) {
      log('putting half message %s back failed: %s', msg.properties.UNIQ_KEY, res.remark ?? res.status);
      return null;
    }
    return {
      ...msg,
      properties,
      queueOffset: w.queueOffset,
      commitLogOffset: w.physOffset,
      storeTimestamp: w.storeTimestamp,
      offsetMsgId: w.msgId,
    };
  }

  /**
   * checkPrepareQueueOffset: a message still inside its immunity time is done when an op record
   * names the offset it was first stored at (TRAN_PREPARED_QUEUE_OFFSET), else it is put back
   * with that offset. False when the put failed or the property is unreadable.
   */
  private immunityPutBack(msg: MessageExt, ops: OpRecords): boolean {
    const text = msg.properties.TRAN_PREPARED_QUEUE_OFFSET;
    if (text !== undefined) {
      const prepared = parseJavaInt(text);
      if (prepared === -1) return false;
      if (ops.allEnded.has(prepared)) return true;
    }
    return this.putBackHalfMsg(msg, { TRAN_PREPARED_QUEUE_OFFSET: text ?? String(msg.queueOffset) }) !== null;
  }

  /** Op records of queue `queueId` from `opOffset`: which half offsets they end. */
  private readOps(queueId: number, opOffset: number, miniOffset: number): OpRecords {
    const ops = new OpRecords(opOffset);
    this.scanOps(
      queueId,
      opOffset,
      (from, to) => {
        for (let o = from; o < to; o++) ops.done.push(o);
      },
      (op) => {
        const halves = new Set<number>();
        if (op.tags === OP_REMOVE_TAG) {
          for (const half of removedHalves(op)) {
            ops.allEnded.add(half);
            if (half < miniOffset) continue;
            ops.removeMap.set(half, op.queueOffset);
            halves.add(half);
          }
        } else {
          log('op record at %d has tag %s, not "d"', op.queueOffset, op.tags);
        }
        if (halves.size > 0) ops.pending.set(op.queueOffset, halves);
        else ops.done.push(op.queueOffset);
      },
    );
    return ops;
  }
}

/** The half offsets an op record ends: 5.x bodies list offsets each followed by ","; up to 5.0.0 one offset and no comma. */
function removedHalves(op: MessageExt): number[] {
  const out: number[] = [];
  for (const part of op.body.toString('utf8').split(',')) if (part.length > 0) out.push(parseJavaInt(part));
  return out;
}

/** What the op records read in one round say (fillOpRemoveMap's removeMap, opMsgMap, doneOpOffset). */
class OpRecords {
  /** Half offset → the op record that ended it. */
  readonly removeMap = new Map<number, number>();
  /** Op record → half offsets it ends that the walk has not passed yet. */
  readonly pending = new Map<number, Set<number>>();
  /** Op records all of whose halves are passed. */
  readonly done: number[] = [];
  /** Every half offset any op record read names. */
  readonly allEnded = new Set<number>();
  constructor(private readonly opOffset: number) {}

  settle(opOffset: number, half: number): void {
    const set = this.pending.get(opOffset);
    if (!set) return;
    set.delete(half);
    if (set.size === 0) {
      this.pending.delete(opOffset);
      this.done.push(opOffset);
    }
  }

  /** calculateOpOffset: past the op records that are done, up to the first that is not. */
  nextOpOffset(): number {
    const done = new Set(this.done);
    let o = this.opOffset;
    while (done.has(o)) o++;
    return o;
  }
}

/** MessageSysFlag.resetTransactionValue. */
export function resetTransactionValue(sysFlag: number, type: number): number {
  return (sysFlag & ~MessageSysFlag.TRANSACTION_TYPE_MASK) | type;
}

/** Integer.parseInt, or −1 when it fails (TransactionalMessageServiceImpl#getInt / getLong). */
function parseJavaInt(s: string): number {
  return /^[+-]?\d+$/.test(s) && Number.isSafeInteger(Number(s)) ? Number(s) : -1;
}

/**
 * The check loop's reading of CHECK_IMMUNITY_TIME_IN_SECONDS (TransactionalMessageServiceImpl#
 * getImmunityTime): seconds × 1000, or transactionTimeOut when it does not parse.
 */
export function checkImmunityTimeMs(text: string, transactionTimeOut: number): number {
  const v = parseJavaInt(text);
  return v === -1 ? transactionTimeOut : v * 1000;
}

/**
 * EndTransactionProcessor's reading (TransactionalMessageUtil#getImmunityTime): seconds × 1000,
 * at least transactionTimeOut; 0 when it does not parse.
 */
export function endImmunityTimeMs(text: string, transactionTimeOut: number): number {
  const v = /^[+-]?\d+$/.test(text) ? Number(text) * 1000 : 0;
  return Math.max(v, transactionTimeOut);
}
