import type { Clock } from '../clock.js';

/**
 * The broker's counters that mqadmin statsAll reads with VIEW_BROKER_STATS_DATA, kept as Apache's
 * BrokerStatsManager keeps them (store/stats/BrokerStatsManager, common/stats/StatsItem of 5.3.3):
 *
 * - `TOPIC_PUT_NUMS`, key `topic`: messages stored for a topic; each put request counts once as a
 *   call (a batch of 10 is sum +10, calls +1).
 * - `GROUP_GET_NUMS`, key `topic@group`: messages a group's pulls found; each such pull is one call.
 *
 * Java samples every item's running totals on timers: every 10 s into the minute window (7 samples
 * kept, so it spans 60 s), every 10 min into the hour window (7 kept) and every hour into the day
 * window (25 kept); the first sample of an item is preceded by a zero sample one interval earlier.
 * A window's `sum` is its newest sample minus its oldest, `tps` that sum per second of the span
 * between them, `avgpt` the sum per call. Until an item's first sample, and for a window never
 * sampled since the item appeared, everything is 0: a message counted a second ago shows up in the
 * minute window at the next 10-s tick, in the hour window at the next 10-min tick.
 *
 * Here the same samples are taken without timers: the ticks fall at `origin + k × interval` on
 * the broker's clock, and an item catches up on the ticks it missed whenever it is counted or
 * read (its totals did not change in between, so each missed sample holds the totals as they are).
 * An idle item costs nothing, a ManualClock drives a day of sampling in one advance, and at most
 * `keep` samples are written however long the item slept.
 */

/** The stats set of messages put per topic (BrokerStatsManager.TOPIC_PUT_NUMS). */
export const TOPIC_PUT_NUMS = 'TOPIC_PUT_NUMS';
/** The stats set of messages got per `topic@group` (BrokerStatsManager.GROUP_GET_NUMS). */
export const GROUP_GET_NUMS = 'GROUP_GET_NUMS';

/** The group a delay level's delivery counts as getting from SCHEDULE_TOPIC_XXXX (MixAll.SCHEDULE_CONSUMER_GROUP). */
export const GROUP_GET_NUMS_SCHEDULE = 'SCHEDULE_CONSUMER';

/** Items one stats set keeps; past it the least recently counted is forgotten (Java has no bound). */
export const DEFAULT_MAX_STATS_ITEMS = 10_000;

/** One window of a stats item as VIEW_BROKER_STATS_DATA answers it (Java's StatsSnapshot). */
export interface StatsWindow {
  sum: number;
  tps: number;
  avgpt: number;
  /** Calls counted in the window (StatsSnapshot.times; not in the answer). */
  times: number;
}

/** The three windows of one item. */
export interface StatsItemData {
  statsMinute: StatsWindow;
  statsHour: StatsWindow;
  statsDay: StatsWindow;
}

interface WindowRule {
  readonly intervalMs: number;
  readonly keep: number;
}

const MINUTE: WindowRule = { intervalMs: 10_000, keep: 7 };
const HOUR: WindowRule = { intervalMs: 600_000, keep: 7 };
const DAY: WindowRule = { intervalMs: 3_600_000, keep: 25 };

/** The samples of one window, oldest first: timestamp, calls and value at each tick. */
class SampleWindow {
  private readonly at: number[] = [];
  private readonly times: number[] = [];
  private readonly values: number[] = [];

  constructor(
    private readonly rule: WindowRule,
    private readonly origin: number,
    /** Index of the last tick already sampled (or passed before the item existed). */
    private lastTick: number,
  ) {}

  /** Takes the samples of the ticks from lastTick + 1 up to `now`, all holding `times` and `value`. */
  catchUp(now: number, times: number, value: number): void {
    const { intervalMs, keep } = this.rule;
    const current = Math.floor((now - this.origin) / intervalMs);
    if (current <= this.lastTick) return;
    const first = this.lastTick + 1;
    // only the last `keep` samples survive: the ticks before them (and the zero sample) would be dropped anyway
    const start = Math.max(first, current - keep + 1);
    if (start > first) {
      this.at.length = 0;
      this.times.length = 0;
      this.values.length = 0;
    } else if (this.at.length === 0) {
      this.push(this.origin + first * intervalMs - intervalMs, 0, 0);
    }
    for (let k = start; k <= current; k++) this.push(this.origin + k * intervalMs, times, value);
    this.lastTick = current;
  }

  private push(at: number, times: number, value: number): void {
    this.at.push(at);
    this.times.push(times);
    this.values.push(value);
    if (this.at.length > this.rule.keep) {
      this.at.shift();
      this.times.shift();
      this.values.shift();
    }
  }

  /** StatsItem.computeStatsData: newest minus oldest sample. */
  compute(): StatsWindow {
    const n = this.at.length;
    if (n === 0) return { sum: 0, tps: 0, avgpt: 0, times: 0 };
    const sum = this.values[n - 1]! - this.values[0]!;
    const span = this.at[n - 1]! - this.at[0]!;
    const times = this.times[n - 1]! - this.times[0]!;
    return { sum, tps: span > 0 ? (sum * 1000) / span : 0, avgpt: times > 0 ? sum / times : 0, times };
  }
}

/** One counted key: running totals and the three sampled windows (Java's StatsItem). */
export class StatsItem {
  private value = 0;
  private times = 0;
  private readonly windows: readonly [SampleWindow, SampleWindow, SampleWindow];

  constructor(origin: number, createdAt: number) {
    const tickOf = (rule: WindowRule): number => Math.floor((createdAt - origin) / rule.intervalMs);
    this.windows = [
      new SampleWindow(MINUTE, origin, tickOf(MINUTE)),
      new SampleWindow(HOUR, origin, tickOf(HOUR)),
      new SampleWindow(DAY, origin, tickOf(DAY)),
    ];
  }

  private catchUp(now: number): void {
    for (const w of this.windows) w.catchUp(now, this.times, this.value);
  }

  /** Counts `value` in `times` calls at `now` (the ticks before it are sampled first). */
  add(now: number, value: number, times: number): void {
    this.catchUp(now);
    this.value += value;
    this.times += times;
  }

  /** The three windows as of `now`. */
  data(now: number): StatsItemData {
    this.catchUp(now);
    const [m, h, d] = this.windows;
    return { statsMinute: m.compute(), statsHour: h.compute(), statsDay: d.compute() };
  }

  /** Running totals since the item appeared. */
  totals(): { value: number; times: number } {
    return { value: this.value, times: this.times };
  }
}

/** A stats set (Java's StatsItemSet): items by key, the least recently counted forgotten past `maxItems`. */
class StatsItemSet {
  private readonly items = new Map<string, StatsItem>();

  constructor(
    private readonly origin: number,
    private readonly maxItems: number,
  ) {}

  add(key: string, now: number, value: number, times: number): void {
    let item = this.items.get(key);
    if (item)
      this.items.delete(key); // re-inserted below: the map's order is least recently counted first
    else {
      item = new StatsItem(this.origin, now);
      if (this.items.size >= this.maxItems) this.items.delete(this.items.keys().next().value!);
    }
    this.items.set(key, item);
    item.add(now, value, times);
  }

  get(key: string): StatsItem | undefined {
    return this.items.get(key);
  }

  get size(): number {
    return this.items.size;
  }

  deleteWhere(match: (key: string) => boolean): void {
    for (const key of [...this.items.keys()]) if (match(key)) this.items.delete(key);
  }
}

/**
 * The counters of one broker that statsAll reads (see the file comment). `origin`, the time of the
 * first sampling tick, is when the manager was made (Java: the broker's start).
 */
export class BrokerStatsManager {
  private readonly sets: ReadonlyMap<string, StatsItemSet>;

  constructor(
    private readonly clock: Clock,
    opts: { origin?: number; maxItems?: number } = {},
  ) {
    const origin = opts.origin ?? clock.now();
    const maxItems = opts.maxItems ?? DEFAULT_MAX_STATS_ITEMS;
    this.sets = new Map([
      [TOPIC_PUT_NUMS, new StatsItemSet(origin, maxItems)],
      [GROUP_GET_NUMS, new StatsItemSet(origin, maxItems)],
    ]);
  }

  /** BrokerStatsManager.incTopicPutNums: `num` messages stored for `topic` by one put. */
  incTopicPutNums(topic: string, num = 1, times = 1): void {
    this.sets.get(TOPIC_PUT_NUMS)!.add(topic, this.clock.now(), num, times);
  }

  /** BrokerStatsManager.incGroupGetNums: `num` messages of `topic` found by one pull of `group`. */
  incGroupGetNums(group: string, topic: string, num: number): void {
    this.sets.get(GROUP_GET_NUMS)!.add(`${topic}@${group}`, this.clock.now(), num, 1);
  }

  /** The item's windows now, or null when the set or the item does not exist (Java: "The stats <…> <…> not exist"). */
  view(statsName: string, statsKey: string): StatsItemData | null {
    return this.sets.get(statsName)?.get(statsKey)?.data(this.clock.now()) ?? null;
  }

  /** Items held by a set (for bounds checks). */
  itemCount(statsName: string): number {
    return this.sets.get(statsName)?.size ?? 0;
  }

  /** BrokerStatsManager.onTopicDeleted (autoDeleteUnusedStats, on by default): the topic's items go. */
  onTopicDeleted(topic: string): void {
    this.sets.get(TOPIC_PUT_NUMS)!.deleteWhere((k) => k === topic);
    this.sets.get(GROUP_GET_NUMS)!.deleteWhere((k) => k.startsWith(`${topic}@`));
  }

  /** BrokerStatsManager.onGroupDeleted (autoDeleteUnusedStats): the group's items go. */
  onGroupDeleted(group: string): void {
    this.sets.get(GROUP_GET_NUMS)!.deleteWhere((k) => k.endsWith(`@${group}`));
  }
}

/** Messages in a pull's stored records (adjacent records share a buffer; each starts with its int32 size). */
export function storedMessageCount(runs: readonly Buffer[]): number {
  let n = 0;
  for (const run of runs) {
    for (let p = 0; p + 4 <= run.length; ) {
      const size = run.readInt32BE(p);
      if (size <= 0) break;
      n++;
      p += size;
    }
  }
  return n;
}
