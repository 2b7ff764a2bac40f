import { optionValidator } from '../validate.js';
import { MessageValidationError } from './errors.js';
import type { Message } from './message.js';

/**
 * 5.x timer messages (docs/protocol-facts.md#timer-messages). Java's Message#setDelayTimeMs / #setDeliverTimeMs put
 * TIMER_DELAY_MS / TIMER_DELIVER_MS and its client checks nothing; the broker
 * (HookUtils#handleScheduleMessage) then parks the message on rmq_sys_wheel_timer until then. We
 * check what Java leaves to the broker's silence:
 *
 * * `delayMs` is an integer ≥ 0 (0 sends at once, as delayTimeLevel 0 does) and `deliverAt` an epoch
 *   ms or a Date. A past `deliverAt` is sent as is: the broker stores it at once, as for Java.
 * * Only one of the two: the broker would read TIMER_DELAY_MS and ignore TIMER_DELIVER_MS.
 * * Not with `delayTimeLevel`: the broker would drop the timer properties and use the level.
 * * No user property of the same name beside the field (the message would carry it twice).
 *
 * The broker's bound (timerMaxDelaySec, 3 days by default) is its own configuration: a longer delay
 * is its MESSAGE_ILLEGAL, not ours.
 */
export const TIMER_DELAY_MS = 'TIMER_DELAY_MS';

/** A message field's check: MessageValidationError whose message starts with the field's name. */
const fieldCheck = optionValidator((field, message) => new MessageValidationError(field, `${field} ${message}`), {
  atLeast: '≥',
});
export const TIMER_DELAY_SEC = 'TIMER_DELAY_SEC';
export const TIMER_DELIVER_MS = 'TIMER_DELIVER_MS';

/** The timer properties of `msg`, in the order Java's setters put them; [] for a plain message. */
export function timerProperties(msg: Message): Array<[string, string]> {
  const { delayMs, deliverAt } = msg;
  if (delayMs === undefined && deliverAt === undefined) return [];
  let at: number | undefined;
  if (deliverAt !== undefined) {
    at = deliverAt instanceof Date ? deliverAt.getTime() : deliverAt;
    if (typeof at !== 'number' || !Number.isSafeInteger(at) || at < 0) {
      throw new MessageValidationError(
        'deliverAt',
        `deliverAt must be an epoch time in ms (an integer ≥ 0) or a valid Date, got ${String(deliverAt)}`,
      );
    }
  }
  if (delayMs !== undefined) fieldCheck.safeIntAtLeast('delayMs', delayMs, 0);
  if (delayMs !== undefined && at !== undefined) {
    throw new MessageValidationError(
      'deliverAt',
      'set delayMs or deliverAt, not both (the broker would use TIMER_DELAY_MS and ignore TIMER_DELIVER_MS)',
    );
  }
  const field = delayMs !== undefined ? 'delayMs' : 'deliverAt';
  if ((msg.delayTimeLevel ?? 0) > 0) {
    throw new MessageValidationError(
      field,
      `${field} cannot be combined with delayTimeLevel (the broker would drop the timer and use the level)`,
    );
  }
  const props = msg.properties ?? {};
  for (const name of [TIMER_DELAY_MS, TIMER_DELAY_SEC, TIMER_DELIVER_MS]) {
    if (props[name] !== undefined)
      throw new MessageValidationError(field, `${field} cannot be combined with the property ${name}`);
  }
  if (delayMs !== undefined) return delayMs > 0 ? [[TIMER_DELAY_MS, String(delayMs)]] : [];
  return [[TIMER_DELIVER_MS, String(at)]];
}

/** Whether a message asks for a timer or a delay level (Java's canBatch refuses both). */
export function isDelayed(msg: Message): boolean {
  if ((msg.delayTimeLevel ?? 0) > 0 || msg.delayMs !== undefined || msg.deliverAt !== undefined) return true;
  const p = msg.properties;
  return (
    p !== undefined &&
    (p[TIMER_DELAY_MS] !== undefined || p[TIMER_DELAY_SEC] !== undefined || p[TIMER_DELIVER_MS] !== undefined)
  );
}
