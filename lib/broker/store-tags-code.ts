import { SCHEDULE_TOPIC } from '../../protocol/index.js';
import { tagsCodeOfInner } from './message-record.js';
import type { TaggedMessage } from './message-store-types.js';
import { TIMER_TOPIC, timerTagsCode } from './timer/index.js';

/**
 * The consume-queue tag code the broker stores: the Java hash of TAGS, except under
 * SCHEDULE_TOPIC_XXXX (the delivery time of the message's delay level) and the timer topic (its
 * delivery time), which the delay and timer services read back from the queue.
 */
export function brokerTagsCode(delayLevels: readonly number[]): (m: TaggedMessage, storeTimestamp: number) => number {
  return (m, storeTimestamp) => {
    if (m.topic === TIMER_TOPIC) return timerTagsCode(m.properties);
    if (m.topic === SCHEDULE_TOPIC) {
      const level = Math.min(Number(m.properties.DELAY ?? '1') || 1, delayLevels.length);
      return storeTimestamp + (delayLevels[Math.max(1, level) - 1] ?? 1000);
    }
    return tagsCodeOfInner(m);
  };
}
