import type { Clock, ClockTimer } from '../../clock.js';

// The figures GET_CONSUMER_RUNNING_INFO reports per topic (ConsumeStatus), computed as Java's
// ConsumerStatsManager computes them from its StatsItemSets, so that mqadmin consumerStatus, the
// RocketMQ dashboard and rocketmq-exporter read the same numbers for a rocketwire consumer as for a
// Java one. A StatsItem adds up a value and a count of calls; every 10 s (first at its creation) it
// takes a snapshot and keeps the last 7 (the "minute" window, 60 s), every 10 min the last 7 of those
// (the "hour"). A rate is (last − first snapshot value) / (their time apart): it moves only when a
// snapshot is taken, as in Java, and needs no timer per message.

const MINUTE_SAMPLE_MS = 10_000;
const HOUR_SAMPLE_MS = 10 * 60_000;
const KEEP = 7;

interface CallSnapshot {
  timestamp: number;
  times: number;
  value: number;
}

/** Java's StatsSnapshot: sum, tps and average per call over one window. */
export interface StatsSnapshot {
  sum: number;
  tps: number;
  avgpt: number;
  times: number;
}

const EMPTY: StatsSnapshot = { sum: 0, tps: 0, avgpt: 0, times: 0 };

class StatsItem {
  value = 0;
  times = 0;
  private readonly minute: CallSnapshot[] = [];
  private readonly hour: CallSnapshot[] = [];

  /** Java's samplingInSeconds / samplingInMinutes: the first snapshot is preceded by a zero one a period earlier. */
  sample(window: 'minute' | 'hour', now: number): void {
    const list = window === 'minute' ? this.minute : this.hour;
    if (list.length === 0)
      list.push({ timestamp: now - (window === 'minute' ? MINUTE_SAMPLE_MS : HOUR_SAMPLE_MS), times: 0, value: 0 });
    list.push({ timestamp: now, times: this.times, value: this.value });
    if (list.length > KEEP) list.shift();
  }

  /** Java's computeStatsData. */
  stats(window: 'minute' | 'hour'): StatsSnapshot {
    const list = window === 'minute' ? this.minute : this.hour;
    if (list.length === 0) return EMPTY;
    const first = list[0]!;
    const last = list[list.length - 1]!;
    const sum = last.value - first.value;
    const times = last.times - first.times;
    return { sum, tps: (sum * 1000) / (last.timestamp - first.timestamp), avgpt: times > 0 ? sum / times : 0, times };
  }
}

/** Java's StatsItemSet: one StatsItem per key (here the topic; Java's key is topic@group, one group per consumer). */
class StatsItemSet {
  private readonly items = new Map<string, StatsItem>();
  constructor(private readonly sampler: Sampler) {}

  add(key: string, value: number, times: number): void {
    let item = this.items.get(key);
    if (!item) {
      item = new StatsItem();
      this.items.set(key, item);
      item.value += value;
      item.times += times;
      this.sampler.start(item);
      return;
    }
    item.value += value;
    item.times += times;
  }

  stats(key: string, window: 'minute' | 'hour'): StatsSnapshot {
    return this.items.get(key)?.stats(window) ?? EMPTY;
  }
}

/** Each item's snapshots on the clock, from its creation (Java schedules them at fixed rate with no initial delay). */
class Sampler {
  private readonly timers = new Set<ClockTimer>();
  private closed = false;
  constructor(private readonly clock: Clock) {}

  start(item: StatsItem): void {
    if (this.closed) return;
    const now = this.clock.now();
    item.sample('minute', now);
    item.sample('hour', now);
    this.every(item, 'minute', MINUTE_SAMPLE_MS);
    this.every(item, 'hour', HOUR_SAMPLE_MS);
  }

  private every(item: StatsItem, window: 'minute' | 'hour', periodMs: number): void {
    const t = this.clock.setTimeout(() => {
      this.timers.delete(t);
      if (this.closed) return;
      item.sample(window, this.clock.now());
      this.every(item, window, periodMs);
    }, periodMs);
    this.timers.add(t);
  }

  close(): void {
    this.closed = true;
    for (const t of this.timers) this.clock.clearTimeout(t);
    this.timers.clear();
  }
}

/** ConsumeStatus as GET_CONSUMER_RUNNING_INFO's statusTable carries it, per subscribed topic. */
export interface ConsumeStatus {
  pullRT: number;
  pullTPS: number;
  consumeRT: number;
  consumeOKTPS: number;
  consumeFailedTPS: number;
  consumeFailedMsgs: number;
}

/** Java's ConsumerStatsManager for one consumer group. */
export class ConsumerStatsManager {
  private readonly sampler: Sampler;
  private readonly consumeOk: StatsItemSet;
  private readonly consumeRt: StatsItemSet;
  private readonly consumeFailed: StatsItemSet;
  private readonly pullTps: StatsItemSet;
  private readonly pullRt: StatsItemSet;

  constructor(clock: Clock) {
    this.sampler = new Sampler(clock);
    this.consumeOk = new StatsItemSet(this.sampler);
    this.consumeRt = new StatsItemSet(this.sampler);
    this.consumeFailed = new StatsItemSet(this.sampler);
    this.pullTps = new StatsItemSet(this.sampler);
    this.pullRt = new StatsItemSet(this.sampler);
  }

  /** A FOUND pull's round trip, in ms. */
  incPullRT(topic: string, rtMs: number): void {
    this.pullRt.add(topic, rtMs, 1);
  }
  /** Messages a FOUND pull handed to the consume service (after tag filtering). */
  incPullTPS(topic: string, msgs: number): void {
    this.pullTps.add(topic, msgs, 1);
  }
  /** One handler call's duration, in ms. */
  incConsumeRT(topic: string, rtMs: number): void {
    this.consumeRt.add(topic, rtMs, 1);
  }
  incConsumeOKTPS(topic: string, msgs: number): void {
    this.consumeOk.add(topic, msgs, 1);
  }
  incConsumeFailedTPS(topic: string, msgs: number): void {
    this.consumeFailed.add(topic, msgs, 1);
  }

  /** Java's consumeStatus(group, topic). */
  consumeStatus(topic: string): ConsumeStatus {
    let consumeRt = this.consumeRt.stats(topic, 'minute');
    if (consumeRt.sum === 0) consumeRt = this.consumeRt.stats(topic, 'hour');
    return {
      pullRT: this.pullRt.stats(topic, 'minute').avgpt,
      pullTPS: this.pullTps.stats(topic, 'minute').tps,
      consumeRT: consumeRt.avgpt,
      consumeOKTPS: this.consumeOk.stats(topic, 'minute').tps,
      consumeFailedTPS: this.consumeFailed.stats(topic, 'minute').tps,
      consumeFailedMsgs: this.consumeFailed.stats(topic, 'hour').sum,
    };
  }

  /** Stops the snapshots (consumer shutdown). */
  close(): void {
    this.sampler.close();
  }
}
