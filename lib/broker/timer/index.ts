export { TIMER_TOPIC, TimerMessageStore, resolveTimerSettings, transformTimerMessage, timerTagsCode, type TimerSettings, type TimerRefusal } from './timer-message-store.js';
export { timerHook } from './timer-hook.js';
