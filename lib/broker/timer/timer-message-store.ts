import * as path from 'node:path';
import createDebug from '../../debug.js';
import { ResponseCode, decodeMessage } from '../../../protocol/internal.js';
import type { Clock, ClockTimer } from '../../clock.js';
import { loadConfigFile, stderrWarn, writeFileAtomic, type StoreWarn } from '../atomic-file.js';
import { BrokerOptionError } from '../errors.js';
import { parkUnder, unparked, type MessageInner } from '../message-record.js';
import type { MessageStore } from '../message-store.js';

const log = createDebug('rocketwire:broker');

/** TimerMessageStore.TIMER_TOPIC: TopicValidator.SYSTEM_TOPIC_PREFIX + "wheel_timer". */
export const TIMER_TOPIC = 'rmq_sys_wheel_timer';

/** The timer settings of Java's MessageStoreConfig that the embedded broker honours. */
export interface TimerSettings {
  /** Java's default true; false answers a timer message SYSTEM_ERROR, as WHEEL_TIMER_NOT_ENABLE. */
  timerWheelEnable: boolean;
  /**
   * Java floors a delivery time to this (1000 ms by default, one of 100/200/500/1000), so a
   * message may come up to one precision early. Ours defaults to 1: delivered on its millisecond.
   */
  timerPrecisionMs: number;
  /** A delivery further ahead is MESSAGE_ILLEGAL (Java: 259 200 s = 3 days). */
  timerMaxDelaySec: number;
}

export function resolveTimerSettings(o: { timerWheelEnable?: boolean | undefined; timerPrecisionMs?: number | undefined; timerMaxDelaySec?: number | undefined }): TimerSettings {
  const int = (name: string, v: number | undefined, dflt: number, max: number): number => {
    const n = v ?? dflt;
    if (!Number.isInteger(n) || n < 1 || n > max) throw new BrokerOptionError(name, `must be an integer in [1, ${max}], got ${String(v)}`);
    return n;
  };
  return {
    timerWheelEnable: o.timerWheelEnable ?? true,
    timerPrecisionMs: int('timerPrecisionMs', o.timerPrecisionMs, 1, 60_000),
    // Java's wheel holds 7 days of slots; a longer delay is rolled. 2^31 s keeps ms below 2^53.
    timerMaxDelaySec: int('timerMaxDelaySec', o.timerMaxDelaySec, 259_200, 2 ** 31 - 1),
  };
}

/** A refusal of the send: the response code and Java's remark. */
export interface TimerRefusal {
  code: number;
  remark: string;
}

/**
 * HookUtils#handleScheduleMessage's timer part, for one message of a (non-batch) send that is not
 * a prepared or rolled-back transaction:
 * * DELAY > 0: the TIMER_* properties are dropped and the delay level applies (checkIfTimerMessage);
 * * a message that already carries TIMER_OUT_MS (a delivered one sent back) is not a timer again;
 * * TIMER_DELAY_SEC wins over TIMER_DELAY_MS, which wins over TIMER_DELIVER_MS; a value that is not
 *   a number is WHEEL_TIMER_MSG_ILLEGAL (MESSAGE_ILLEGAL);
 * * a future time more than timerMaxDelaySec ahead is MESSAGE_ILLEGAL; else it is floored to the
 *   precision (an exact multiple one slot earlier, as Java), written to TIMER_OUT_MS, and the message
 *   moves to rmq_sys_wheel_timer queue 0 with REAL_TOPIC / REAL_QID;
 * * a past or present time: stored on its topic at once, properties kept.
 */
export function transformTimerMessage(m: MessageInner, settings: TimerSettings, now: number): TimerRefusal | null {
  const p = m.properties;
  const level = Number(p.DELAY ?? '0');
  if (level > 0) {
    delete p.TIMER_DELIVER_MS;
    delete p.TIMER_DELAY_SEC;
    delete p.TIMER_DELAY_MS;
    return null;
  }
  if (m.topic === TIMER_TOPIC || p.TIMER_OUT_MS !== undefined) return null;
  if (p.TIMER_DELIVER_MS === undefined && p.TIMER_DELAY_MS === undefined && p.TIMER_DELAY_SEC === undefined) return null;
  if (!settings.timerWheelEnable) {
    return { code: ResponseCode.SYSTEM_ERROR, remark: `accurate timer message is not enabled, timerWheelEnable is ${settings.timerWheelEnable}` };
  }
  let deliverMs: number;
  if (p.TIMER_DELAY_SEC !== undefined) deliverMs = now + javaLong(p.TIMER_DELAY_SEC) * 1000;
  else if (p.TIMER_DELAY_MS !== undefined) deliverMs = now + javaLong(p.TIMER_DELAY_MS);
  else deliverMs = javaLong(p.TIMER_DELIVER_MS!);
  const maxMs = settings.timerMaxDelaySec * 1000;
  if (Number.isNaN(deliverMs)) return illegal(maxMs);
  // a delete marker (TIMER_DEL_UNIQKEY) must point at the future; deleting is not implemented here
  if (deliverMs <= now) return p.TIMER_DEL_UNIQKEY !== undefined ? illegal(maxMs) : null;
  if (deliverMs - now > maxMs) return illegal(maxMs);
  const prec = settings.timerPrecisionMs;
  if (prec > 1) deliverMs = deliverMs % prec === 0 ? deliverMs - prec : Math.floor(deliverMs / prec) * prec;
  p.TIMER_OUT_MS = String(deliverMs);
  parkUnder(m, TIMER_TOPIC, 0);
  return null;
}

function illegal(maxMs: number): TimerRefusal {
  return {
    code: ResponseCode.MESSAGE_ILLEGAL,
    remark: `timer message illegal, the delay time should not be bigger than the max delay ${maxMs}ms; or if set del msg, the delay time should be bigger than the current time`,
  };
}

/** Long.parseLong: an optional sign and decimal digits only; NaN otherwise (or beyond 2^53, which no clock reaches). */
function javaLong(s: string): number {
  if (!/^[+-]?\d{1,16}$/.test(s)) return NaN;
  return Number(s);
}

/** The consume-queue tag code of a record on the timer topic: its delivery time (as SCHEDULE_TOPIC_XXXX keeps its own). */
export function timerTagsCode(props: Readonly<Record<string, string>>): number {
  const t = Number(props.TIMER_OUT_MS ?? '0');
  return Number.isSafeInteger(t) ? t : 0;
}

/**
 * The checkpoint of config/timerCheck.json: every timer-queue offset below `deliveredBelow` is
 * delivered, and so are the ones listed in `delivered` (later offsets may fall due earlier).
 */
interface TimerCheckpoint {
  deliveredBelow: number;
  delivered: number[];
}

function decodeCheckpoint(text: string): TimerCheckpoint {
  const j = JSON.parse(text) as Partial<TimerCheckpoint>;
  if (!Number.isSafeInteger(j.deliveredBelow) || !Array.isArray(j.delivered) || !j.delivered.every((n) => Number.isSafeInteger(n))) {
    throw new Error('not a timer checkpoint');
  }
  return { deliveredBelow: j.deliveredBelow!, delivered: j.delivered };
}

interface Pending {
  at: number;
  offset: number;
}

/**
 * The embedded broker's TimerMessageStore: messages parked on rmq_sys_wheel_timer queue 0 (their
 * consume-queue tag code is TIMER_OUT_MS) are kept in memory in delivery order, one clock timer
 * waits for the earliest, and when it falls due each due message is re-written to REAL_TOPIC /
 * REAL_QID with REAL_* removed and TIMER_ENQUEUE_MS / TIMER_DEQUEUE_MS added (TimerMessageStore
 * #convert). The delivered offsets are persisted after each round, so a restart re-reads the queue
 * from the checkpoint and delivers what is left (a message delivered just before a crash may come
 * twice, as with Java's wheel).
 */
export class TimerMessageStore {
  private readonly file: string;
  private deliveredBelow = 0;
  private readonly delivered = new Set<number>();
  /** Timer-queue offsets up to this one are in `pending` or delivered. */
  private scanned = 0;
  /** Sorted by (at, offset). */
  private pending: Pending[] = [];
  private timer: ClockTimer | null = null;
  private timerAt = Infinity;
  private loaded = false;
  private closed = false;

  constructor(
    private readonly store: MessageStore,
    private readonly clock: Clock,
    storeDir: string,
    private readonly warn: StoreWarn = stderrWarn,
  ) {
    this.file = path.join(storeDir, 'config', 'timerCheck.json');
  }

  /** Read the checkpoint (or its .bak); throws ConfigFileError when neither can be read. */
  load(): void {
    const cp = loadConfigFile(this.file, decodeCheckpoint, this.warn);
    if (cp) {
      this.deliveredBelow = cp.deliveredBelow;
      for (const o of cp.delivered) if (o >= cp.deliveredBelow) this.delivered.add(o);
    }
    this.scanned = this.deliveredBelow;
    this.loaded = true;
  }

  start(): void {
    if (!this.loaded) this.load();
    this.onArrival();
  }

  /** How many timer messages wait. */
  get waiting(): number {
    return this.pending.length;
  }

  /** A message was written to the timer topic: index what is new and deliver what is due. */
  onArrival(): void {
    if (this.closed) return;
    const cq = this.store.queue(TIMER_TOPIC, 0);
    if (cq) {
      const from = Math.max(this.scanned, cq.minOffset);
      for (let o = from; o < cq.maxOffset; o++) {
        if (!this.delivered.has(o)) insertSorted(this.pending, { at: cq.tagsCodeAt(o), offset: o });
      }
      this.scanned = Math.max(this.scanned, cq.maxOffset);
    }
    this.pump();
  }

  private pump(): void {
    if (this.closed) return;
    let retry = false;
    let moved = false;
    while (this.pending.length > 0 && this.pending[0]!.at <= this.clock.now()) {
      const head = this.pending[0]!;
      try {
        if (!this.deliver(head.offset)) {
          retry = true;
          break;
        }
      } catch (err) {
        // a damaged record must not stop the broker or the messages behind it: log it and skip it
        log('timer message at offset %d: delivery failed: %O', head.offset, err);
      }
      this.pending.shift();
      this.markDelivered(head.offset);
      moved = true;
    }
    if (moved) this.persist();
    this.arm(retry ? this.clock.now() + 1000 : (this.pending[0]?.at ?? Infinity));
  }

  private arm(at: number): void {
    if (at === this.timerAt && this.timer) return;
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timer = null;
    this.timerAt = at;
    if (at === Infinity) return;
    this.timer = this.clock.setTimeout(() => {
      this.timer = null;
      this.timerAt = Infinity;
      this.pump();
    }, Math.max(0, at - this.clock.now()));
  }

  /** Re-write one timer record to its real topic; false when the store refused (tried again in a second). */
  private deliver(offset: number): boolean {
    const cq = this.store.queue(TIMER_TOPIC, 0)!;
    const rec = this.store.lookMessageByOffset(cq.physOffsetAt(offset));
    if (!rec) return true;
    const r = decodeMessage(rec, 0, { decompress: false });
    const props = r.properties;
    const inner = unparked(r, props);
    if (!inner) return true;
    delete props.REAL_TOPIC;
    delete props.REAL_QID;
    props.TIMER_ENQUEUE_MS = String(r.storeTimestamp);
    props.TIMER_DEQUEUE_MS = String(this.clock.now());
    const res = this.store.putMessages([inner]);
    if (res.status !== 'PUT_OK') {
      log('timer delivery to %s failed: %s', inner.topic, res.remark);
      return false;
    }
    return true;
  }

  private markDelivered(offset: number): void {
    this.delivered.add(offset);
    while (this.delivered.has(this.deliveredBelow)) {
      this.delivered.delete(this.deliveredBelow);
      this.deliveredBelow++;
    }
  }

  persist(): void {
    if (!this.loaded) return;
    try {
      const cp: TimerCheckpoint = { deliveredBelow: this.deliveredBelow, delivered: [...this.delivered].sort((a, b) => a - b) };
      writeFileAtomic(this.file, JSON.stringify(cp), false, true);
    } catch (err) {
      log('cannot write %s: %s', this.file, (err as Error).message);
    }
  }

  close(): void {
    this.closed = true;
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timer = null;
    this.persist();
  }
}

function insertSorted(list: Pending[], p: Pending): void {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const m = list[mid]!;
    if (m.at < p.at || (m.at === p.at && m.offset < p.offset)) lo = mid + 1;
    else hi = mid;
  }
  list.splice(lo, 0, p);
}
