import * as path from 'node:path';
import createDebug from '../debug.js';
import {
  decodeDelayOffsetFile,
  decodeMessage,
  DELAY_LEVEL_TEXT,
  encodeDelayOffsetFile,
  SCHEDULE_TOPIC,
} from '../../protocol/internal.js';
import type { Clock, ClockTimer } from '../clock.js';
import { loadConfigFile, stderrWarn, writeFileAtomic, type StoreWarn } from './atomic-file.js';
import { unparked } from './message-record.js';
import { wakeDelay } from './timer/timer-message-store.js';
import type { MessageStore } from './message-store.js';
import { GROUP_GET_NUMS_SCHEDULE } from './broker-stats.js';

const log = createDebug('rocketwire:broker');

/** Java's default messageDelayLevel. */
export const DEFAULT_MESSAGE_DELAY_LEVEL = DELAY_LEVEL_TEXT;
export { parseDelayLevels } from '../../protocol/internal.js';

/**
 * Most delayed messages one level delivers in one turn of the event loop; the rest follow in the
 * next turns, so a million messages falling due together do not hold up other clients. Nothing is
 * held per message: a level is its queue offset and the queue's tag codes are the delivery times.
 */
export const DELAY_DELIVER_PER_TICK = 64;

/**
 * ScheduleMessageService: SCHEDULE_TOPIC_XXXX queue (level − 1) holds delayed messages in delivery
 * order; the consume-queue tag code of each is its delivery time. One timer per level waits for the
 * head; when due, the message is re-written to REAL_TOPIC / REAL_QID without DELAY. Delivered
 * offsets are persisted to config/delayOffset.json (Java's layout).
 */
export class ScheduleMessageService {
  private readonly offsets = new Map<number, number>();
  private readonly timers = new Map<number, ClockTimer>();
  private readonly file: string;
  private closed = false;
  /** Most messages one level delivered in one turn (a count for tests). */
  deliveredPerTickPeak = 0;
  private persistedAt = -Infinity;
  /** False until the file was loaded: persist() must not replace a file nobody could read. */
  private loaded = false;

  constructor(
    private readonly store: MessageStore,
    private readonly clock: Clock,
    private readonly levels: number[],
    storeDir: string,
    private readonly warn: StoreWarn = stderrWarn,
    private readonly deliverPerTick = DELAY_DELIVER_PER_TICK,
  ) {
    this.file = path.join(storeDir, 'config', 'delayOffset.json');
  }

  /** Read the file (or its .bak) and start the timers; throws ConfigFileError when neither can be read. */
  load(): void {
    const table = loadConfigFile(this.file, decodeDelayOffsetFile, this.warn);
    if (table) for (const [level, offset] of table) this.offsets.set(level, offset);
    this.loaded = true;
  }

  start(): void {
    if (!this.loaded) this.load();
    for (let level = 1; level <= this.levels.length; level++) this.pump(level);
  }

  /** A message was parked at this level. */
  onArrival(level: number): void {
    if (!this.timers.has(level)) this.pump(level);
  }

  private pump(level: number): void {
    if (this.closed) return;
    try {
      this.deliverDue(level);
    } catch (err) {
      // a damaged record must not stop the broker: log it and look again later
      log('delay level %d: delivery failed: %O', level, err);
      this.timers.set(
        level,
        this.clock.setTimeout(() => this.pump(level), 1000),
      );
    }
  }

  private deliverDue(level: number): void {
    const existing = this.timers.get(level);
    if (existing) {
      this.clock.clearTimeout(existing);
      this.timers.delete(level);
    }
    const cq = this.store.queue(SCHEDULE_TOPIC, level - 1);
    if (!cq) return;
    let offset = this.offsets.get(level) ?? 0;
    let moved = false;
    // retention removed what was parked below the queue's min offset (Java's correctDeliverOffset)
    if (offset < cq.minOffset) {
      offset = cq.minOffset;
      moved = true;
    }
    let continued = false;
    let n = 0;
    while (offset < cq.maxOffset) {
      if (n >= this.deliverPerTick) {
        // the rest in the next turn, after whatever else waits
        this.timers.set(
          level,
          this.clock.setTimeout(() => this.pump(level), 0),
        );
        continued = true;
        break;
      }
      const deliverAt = cq.tagsCodeAt(offset);
      const now = this.clock.now();
      if (deliverAt > now) {
        // a power-of-two delay (pump looks again when woken): see wakeDelay
        this.timers.set(
          level,
          this.clock.setTimeout(() => this.pump(level), wakeDelay(deliverAt - now)),
        );
        break;
      }
      const rec = this.store.lookMessageByOffset(cq.physOffsetAt(offset));
      if (rec) {
        const r = decodeMessage(rec, 0, { decompress: false });
        delete r.properties.DELAY;
        const inner = unparked(r, r.properties);
        if (inner) {
          const res = this.store.putMessages([inner]);
          if (res.status !== 'PUT_OK') {
            // the store refused (disk full?): try this message again in a second
            log('delayed delivery to %s failed: %s', inner.topic, res.remark);
            this.timers.set(
              level,
              this.clock.setTimeout(() => this.pump(level), 1000),
            );
            break;
          }
          const stats = this.store.stats;
          stats.incTopicPutNums(inner.topic);
          stats.incGroupGetNums(GROUP_GET_NUMS_SCHEDULE, SCHEDULE_TOPIC, 1);
        }
      }
      offset++;
      n++;
      this.deliveredPerTickPeak = Math.max(this.deliveredPerTickPeak, n);
      moved = true;
    }
    if (moved) {
      this.offsets.set(level, offset);
      // during a burst the file is written every 100 ms, not every turn (a crash in between
      // delivers those again; Java writes it every flushDelayOffsetInterval, 10 s)
      if (!continued || this.clock.now() - this.persistedAt >= 100) this.persist();
    }
  }

  persist(): void {
    if (!this.loaded) return;
    this.persistedAt = this.clock.now();
    try {
      writeFileAtomic(this.file, encodeDelayOffsetFile(this.offsets), false, true);
    } catch (err) {
      log('cannot write %s: %s', this.file, (err as Error).message);
    }
  }

  close(): void {
    this.closed = true;
    for (const t of this.timers.values()) this.clock.clearTimeout(t);
    this.timers.clear();
    this.persist();
  }
}
