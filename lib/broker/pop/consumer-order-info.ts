import * as path from 'node:path';
import createDebug from '../../debug.js';
import { ProtocolError } from '../../../protocol/index.js';
import { orderCountOffsetKey, type OrderCountEntry, type PopRetryMark } from '../../../protocol/pop-extra-info.js';
import { loadConfigFile, stderrWarn, writeFileAtomic, type StoreWarn } from '../atomic-file.js';
import { Unsaved } from '../unsaved.js';

const log = createDebug('rocketwire:broker:pop');

/**
 * The last order pop of one queue by one group (Apache's ConsumerOrderInfoManager.OrderInfo):
 * the offsets it handed out, when they become visible again, which were acked, and how often each
 * offset was handed out before (the reconsumeTimes of a redelivery).
 */
export interface OrderInfo {
  popTime: number;
  invisibleTime: number;
  /** The popped queue offsets, ascending (Apache keeps the first and the distances to it). */
  offsets: number[];
  /** Offsets whose invisible time CHANGE_INVISIBLETIME moved: their own next visible time. */
  nextVisibleTime: Record<string, number>;
  /** How many times each offset was handed out before this pop (only counts above 0). */
  consumedCount: Record<string, number>;
  /** Indexes into `offsets` that were acked (Apache's commitOffsetBit). */
  acked: number[];
  attemptId: string | null;
  lastConsumeTimestamp: number;
}

interface OrderInfoFile {
  table: Record<string, Record<string, OrderInfo>>;
}

function decodeFile(text: string): Map<string, Map<number, OrderInfo>> {
  const o = JSON.parse(text) as OrderInfoFile;
  if (!o || typeof o.table !== 'object' || o.table === null)
    throw new ProtocolError('consumerOrderInfo.json: no "table" object', 0);
  const out = new Map<string, Map<number, OrderInfo>>();
  for (const [key, queues] of Object.entries(o.table)) {
    const qs = new Map<number, OrderInfo>();
    for (const [qid, info] of Object.entries(queues)) {
      if (
        !Number.isSafeInteger(info.popTime) ||
        !Number.isSafeInteger(info.invisibleTime) ||
        !Array.isArray(info.offsets) ||
        !Array.isArray(info.acked)
      ) {
        throw new ProtocolError(`consumerOrderInfo.json: table["${key}"]["${qid}"] is not an order info`, 0);
      }
      qs.set(Number(qid), {
        ...info,
        nextVisibleTime: info.nextVisibleTime ?? {},
        consumedCount: info.consumedCount ?? {},
        attemptId: info.attemptId ?? null,
      });
    }
    out.set(key, qs);
  }
  return out;
}

/** What commitAndNext answers besides an offset to commit (Apache's -1 and -2). */
export const ORDER_ACK_ILLEGAL = -1;
export const ORDER_ACK_NO_COMMIT = -2;

/**
 * Order pops (POP_MESSAGE with order=true) as Apache's ConsumerOrderInfoManager keeps them: per
 * topic@group and queue, the last pop's offsets. While one of them is neither acked nor visible
 * again, the queue is blocked: no pop of the group gets any message of it (but a pop with the same
 * attemptId, a client's retry of that very pop). The group's offset stays at the first offset
 * not acked, so when the invisible time ends the next pop hands out the same messages again, in
 * order, with their counts. Persisted to `<store>/config/consumerOrderInfo.json` (Apache's file)
 * with the checkpoints.
 */
export class ConsumerOrderInfoManager {
  readonly file: string;
  private table = new Map<string, Map<number, OrderInfo>>();
  /** Changes not yet written (the owner wakes its persist task on them). */
  readonly unsaved = new Unsaved();
  private loaded = false;
  /**
   * Told after every change of a queue's order state (a pop, an ack, a change of invisible time),
   * so the broker can wake the pops waiting on it when it frees (order-lock-release.ts).
   */
  onChange: ((topic: string, group: string, queueId: number) => void) | null = null;

  constructor(
    storeDir: string,
    private readonly warn: StoreWarn = stderrWarn,
  ) {
    this.file = path.join(storeDir, 'config', 'consumerOrderInfo.json');
  }

  load(): void {
    this.table = loadConfigFile(this.file, decodeFile, this.warn) ?? new Map();
    this.loaded = true;
  }

  get(topic: string, group: string, queueId: number): OrderInfo | undefined {
    return this.table.get(`${topic}@${group}`)?.get(queueId);
  }

  /**
   * A pop handed out `offsets` of the queue: they replace the queue's last pop, an offset handed
   * out again counting one more (unless it is the same attempt). Returns the orderCountInfo
   * entries of the answer: one per offset handed out before, then the queue's smallest count (the
   * entry old clients read).
   */
  update(
    attemptId: string | null,
    retry: PopRetryMark,
    topic: string,
    group: string,
    queueId: number,
    popTime: number,
    invisibleTime: number,
    offsets: readonly number[],
    now: number,
  ): OrderCountEntry[] {
    const key = `${topic}@${group}`;
    let qs = this.table.get(key);
    if (!qs) this.table.set(key, (qs = new Map()));
    const prev = qs.get(queueId);
    const info: OrderInfo = {
      popTime,
      invisibleTime,
      offsets: [...offsets],
      nextVisibleTime: {},
      consumedCount: {},
      acked: [],
      attemptId,
      lastConsumeTimestamp: now,
    };
    if (prev) {
      if (prev.attemptId !== null && prev.attemptId === attemptId) info.consumedCount = prev.consumedCount;
      else {
        const before = new Set(prev.offsets);
        for (const o of info.offsets)
          if (before.has(o)) info.consumedCount[String(o)] = (prev.consumedCount[String(o)] ?? 0) + 1;
      }
    }
    qs.set(queueId, info);
    this.unsaved.mark();
    this.onChange?.(topic, group, queueId);
    const entries: OrderCountEntry[] = [];
    let min = Number.MAX_SAFE_INTEGER;
    const counted = Object.entries(info.consumedCount);
    for (const [o, n] of counted) {
      entries.push({ retry, key: orderCountOffsetKey(queueId, Number(o)), count: n });
      min = Math.min(min, n);
    }
    // consumedCount holds only offsets handed out before: one missing means a new message (count 0)
    if (counted.length !== info.offsets.length) min = 0;
    entries.push({ retry, key: String(queueId), count: min });
    return entries;
  }

  /** OrderInfo.needBlock: some offset of the last pop is neither acked nor visible again at `now`. */
  checkBlock(
    attemptId: string | null,
    topic: string,
    group: string,
    queueId: number,
    invisibleTime: number,
    now: number,
  ): boolean {
    const info = this.get(topic, group, queueId);
    if (!info || info.offsets.length === 0) return false;
    if (info.attemptId !== null && info.attemptId === attemptId) return false;
    if (info.invisibleTime <= 0) info.invisibleTime = invisibleTime;
    const acked = new Set(info.acked);
    for (let i = 0; i < info.offsets.length; i++) {
      if (acked.has(i)) continue;
      const visibleAt = info.nextVisibleTime[String(info.offsets[i])] ?? info.popTime + info.invisibleTime;
      if (now < visibleAt) return true;
    }
    return false;
  }

  /**
   * An ack of `queueOffset` from the pop at `popTime`: the offset to commit next (the first one of
   * the pop not acked, or past the last), ORDER_ACK_NO_COMMIT for an ack of an older pop of the
   * queue, ORDER_ACK_ILLEGAL for an offset that pop did not hand out.
   */
  commitAndNext(
    topic: string,
    group: string,
    queueId: number,
    queueOffset: number,
    popTime: number,
    now: number,
  ): number {
    const qs = this.table.get(`${topic}@${group}`);
    const info = qs?.get(queueId);
    if (!qs || !info) {
      log('order ack %s@%s queue %d offset %d: no order info', topic, group, queueId, queueOffset);
      return queueOffset + 1;
    }
    if (info.offsets.length === 0) return ORDER_ACK_ILLEGAL;
    if (popTime !== info.popTime) return ORDER_ACK_NO_COMMIT;
    const i = info.offsets.indexOf(queueOffset);
    if (i < 0) return ORDER_ACK_ILLEGAL;
    if (!info.acked.includes(i)) info.acked.push(i);
    info.lastConsumeTimestamp = now;
    this.unsaved.mark();
    this.onChange?.(topic, group, queueId);
    const acked = new Set(info.acked);
    for (let k = 0; k < info.offsets.length; k++) if (!acked.has(k)) return info.offsets[k]!;
    return info.offsets[info.offsets.length - 1]! + 1;
  }

  /** CHANGE_INVISIBLETIME of an order-popped message: its own next visible time (the pop's popTime must match). */
  updateNextVisibleTime(
    topic: string,
    group: string,
    queueId: number,
    queueOffset: number,
    popTime: number,
    nextVisibleTime: number,
  ): void {
    const info = this.get(topic, group, queueId);
    if (!info || info.popTime !== popTime) {
      log(
        'order change invisible %s@%s queue %d offset %d: no order info of pop %d',
        topic,
        group,
        queueId,
        queueOffset,
        popTime,
      );
      return;
    }
    info.nextVisibleTime[String(queueOffset)] = nextVisibleTime;
    this.unsaved.mark();
    this.onChange?.(topic, group, queueId);
  }

  /**
   * When the queue's last order pop stops holding it: the latest next visible time of its offsets
   * not acked, when that is still to come (checkBlock answers true until then); `now` when it
   * holds nothing; null when the queue has no order state.
   *
   * Apache's OrderInfo.getLockFreeTimestamp answers the first offset not acked and not visible yet
   * instead. When a consumer moves a batch's offsets one CHANGE_INVISIBLETIME at a time, each
   * later one becomes visible a little later than the first: a wake at the first one's time finds
   * the queue still held, and the waiting pops then wait out their whole poll time.
   */
  lockFreeTime(topic: string, group: string, queueId: number, now: number): number | null {
    const info = this.get(topic, group, queueId);
    if (!info || info.offsets.length === 0 || info.invisibleTime <= 0) return null;
    const acked = new Set(info.acked);
    let free = now;
    for (let i = 0; i < info.offsets.length; i++) {
      if (acked.has(i)) continue;
      const visibleAt = info.nextVisibleTime[String(info.offsets[i])] ?? info.popTime + info.invisibleTime;
      if (visibleAt > free) free = visibleAt;
    }
    return free;
  }

  /** Every queue with order state, as (topic, group, queueId). */
  *queues(): Generator<[topic: string, group: string, queueId: number]> {
    for (const [key, qs] of this.table) {
      // topic names cannot hold '@' (Apache's TOPIC_GROUP_SEPARATOR), so the first one splits
      const at = key.indexOf('@');
      for (const queueId of qs.keys()) yield [key.slice(0, at), key.slice(at + 1), queueId];
    }
  }

  persist(force = false): void {
    if (!this.loaded || (!this.unsaved.value && !force)) return;
    const table: OrderInfoFile['table'] = {};
    for (const [key, qs] of this.table) {
      const o: Record<string, OrderInfo> = {};
      for (const [qid, info] of qs) o[String(qid)] = info;
      table[key] = o;
    }
    try {
      writeFileAtomic(this.file, JSON.stringify({ table }), true, true);
      this.unsaved.clear();
    } catch (err) {
      log('cannot write %s: %s', this.file, (err as Error).message);
    }
  }
}
