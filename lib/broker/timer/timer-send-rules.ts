import { ResponseCode } from '../../../protocol/internal.js';
import { brokerOptionCheck } from '../option-check.js';
import { parkUnder, type MessageInner } from '../message-record.js';

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
  /**
   * Most timers held in memory (the earliest ones, 16 bytes each); the rest stay in the timer
   * queue and are read back as the held ones are delivered. Not a Java setting: Java keeps its
   * wheel and timer log in files.
   */
  timerMaxInMemory: number;
  /** Most timers delivered in one turn of the event loop before the store yields to other work. */
  timerDeliverPerTick: number;
}

/** Default of timerMaxInMemory: 100 000 timers, 1.6 MB of keys. */
export const DEFAULT_TIMER_MAX_IN_MEMORY = 100_000;
/** Default of timerDeliverPerTick. */
export const DEFAULT_TIMER_DELIVER_PER_TICK = 64;

export function resolveTimerSettings(o: {
  timerWheelEnable?: boolean | undefined;
  timerPrecisionMs?: number | undefined;
  timerMaxDelaySec?: number | undefined;
  timerMaxInMemory?: number | undefined;
  timerDeliverPerTick?: number | undefined;
}): TimerSettings {
  const int = (name: string, v: number | undefined, dflt: number, max: number): number =>
    brokerOptionCheck.intIn(name, v ?? dflt, 1, max);
  return {
    timerWheelEnable: o.timerWheelEnable ?? true,
    timerPrecisionMs: int('timerPrecisionMs', o.timerPrecisionMs, 1, 60_000),
    // Java's wheel holds 7 days of slots; a longer delay is rolled. 2^31 s keeps ms below 2^53.
    timerMaxDelaySec: int('timerMaxDelaySec', o.timerMaxDelaySec, 259_200, 2 ** 31 - 1),
    timerMaxInMemory: int('timerMaxInMemory', o.timerMaxInMemory, DEFAULT_TIMER_MAX_IN_MEMORY, 2 ** 26),
    timerDeliverPerTick: int('timerDeliverPerTick', o.timerDeliverPerTick, DEFAULT_TIMER_DELIVER_PER_TICK, 1 << 20),
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
  if (p.TIMER_DELIVER_MS === undefined && p.TIMER_DELAY_MS === undefined && p.TIMER_DELAY_SEC === undefined)
    return null;
  if (!settings.timerWheelEnable) {
    return {
      code: ResponseCode.SYSTEM_ERROR,
      remark: `accurate timer message is not enabled, timerWheelEnable is ${settings.timerWheelEnable}`,
    };
  }
  let deliverMs: number;
  if (p.TIMER_DELAY_SEC !== undefined) deliverMs = now + javaLong(p.TIMER_DELAY_SEC) * 1000;
  else if (p.TIMER_DELAY_MS !== undefined) deliverMs = now + javaLong(p.TIMER_DELAY_MS);
  else deliverMs = javaLong(p.TIMER_DELIVER_MS!);
  const maxMs = settings.timerMaxDelaySec * 1000;
  if (Number.isNaN(deliverMs)) return illegal(maxMs);
  // a delete marker (TIMER_DEL_UNIQKEY, RECALL_MESSAGE) must point at the future
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
