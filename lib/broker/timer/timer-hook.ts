import { MessageSysFlag, ResponseCode } from '../../../protocol/internal.js';
import { propertyOf, type MessageInner } from '../message-record.js';
import type { PutMessageResult } from '../message-store.js';
import { transformTimerMessage, type TimerSettings } from './timer-message-store.js';

/**
 * The send path's timer hook (HookUtils#handleScheduleMessage, timer part): only messages that are
 * not a prepared or rolled-back transaction half; a refusal as the store's put result.
 */
export function timerHook(m: MessageInner, settings: TimerSettings, now: number): PutMessageResult | null {
  const tx = m.sysFlag & MessageSysFlag.TRANSACTION_TYPE_MASK;
  if (tx === MessageSysFlag.TRANSACTION_PREPARED_TYPE || tx === MessageSysFlag.TRANSACTION_ROLLBACK_TYPE) return null;
  // without a timer property the rules change nothing: leave properties stored as sent undecoded
  if (
    propertyOf(m, 'TIMER_DELIVER_MS') === undefined &&
    propertyOf(m, 'TIMER_DELAY_MS') === undefined &&
    propertyOf(m, 'TIMER_DELAY_SEC') === undefined
  )
    return null;
  const refusal = transformTimerMessage(m, settings, now);
  if (!refusal) return null;
  return {
    status: refusal.code === ResponseCode.SYSTEM_ERROR ? 'WHEEL_TIMER_NOT_ENABLE' : 'MESSAGE_ILLEGAL',
    remark: refusal.remark,
    written: [],
  };
}
