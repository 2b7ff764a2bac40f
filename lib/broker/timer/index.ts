export {
  TIMER_TOPIC,
  TimerMessageStore,
  resolveTimerSettings,
  transformTimerMessage,
  timerTagsCode,
  type TimerSettings,
  type TimerRefusal,
  type TimerStoreStats,
} from './timer-message-store.js';
export { timerHook } from './timer-hook.js';
export { TimerHeap } from './timer-heap.js';
