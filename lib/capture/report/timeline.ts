import { countStoredRecords, isResponse, PullSysFlag, RequestCode, requestCodeName } from '../../../protocol/index.js';
import type { DecodedFrame } from '../capture-options.js';
import { pullStatus, requestTopicAndGroup } from '../stats.js';

/**
 * At most this many time buckets: a chart of ~960 px then has bars of 4 px or more. Past it the
 * bucket width grows to the next step of BUCKET_WIDTHS and neighbours are added together, so a
 * capture of any length costs the same memory per queue.
 */
export const MAX_BUCKETS = 200;
/**
 * Bucket widths (ms, or frames for a file of raw frames), each a whole multiple of the one before
 * so that growing merges whole buckets; after the last one the width doubles.
 */
const BUCKET_WIDTHS = [
  1, 5, 10, 50, 100, 500, 1000, 5000, 10_000, 30_000, 60_000, 300_000, 600_000, 1_800_000, 3_600_000, 21_600_000,
  86_400_000,
];

/** One consumer queue over time; every array has `Timelines.buckets` entries. */
export interface QueueTimeline {
  /** Same identity as a queue of `--stats --json`: group, topic, queue id, broker address. */
  group: string;
  topic: string;
  queueId: number;
  broker: string | null;
  /** PULL_MESSAGE / LITE_PULL_MESSAGE requests sent in each bucket. */
  pulls: number[];
  /** Pull responses received in each bucket (any status). */
  answered: number[];
  /** Of them FOUND, and the messages those carried. */
  found: number[];
  messages: number[];
  /** The last offset committed in the bucket (FLAG_COMMIT_OFFSET on a pull, or UPDATE_CONSUMER_OFFSET), null if none. */
  committed: (number | null)[];
  /** The last maxOffset a pull response of the bucket carried (the queue's last offset + 1), null if none. */
  maxOffset: (number | null)[];
  /**
   * maxOffset minus the committed offset, both as last known at the end of the bucket (what
   * mqadmin consumerProgress calls the diff, brokerOffset - consumerOffset); null until both are known.
   */
  lag: (number | null)[];
}

/** Requests of one code per bucket. */
export interface CodeRate {
  code: number;
  name: string;
  requests: number[];
}

export interface Timelines {
  /** The x axis: capture time in epoch ms, or the frame number for a file of raw frames (no times). */
  unit: 'ms' | 'frame';
  /** Where bucket 0 starts, in `unit`. */
  origin: number;
  /** Width of one bucket, in `unit`. */
  bucketWidth: number;
  buckets: number;
  queues: QueueTimeline[];
  requestRates: CodeRate[];
}

type Series = { sum: boolean; values: (number | null)[] };

interface QueueRow {
  group: string;
  topic: string;
  queueId: number;
  broker: string | null;
  pulls: Series;
  answered: Series;
  found: Series;
  messages: Series;
  committed: Series;
  maxOffset: Series;
}

function int(v: string | undefined): number | null {
  if (v === undefined || !/^-?\d+$/.test(v)) return null;
  return Number(v);
}

/** The key `DecodeStats` gives a queue, so that a timeline and a `--stats` queue are matched exactly. */
export function timelineQueueKey(q: { group: string; topic: string; queueId: number; broker: string | null }): string {
  return `${q.group}\u0000${q.topic}\u0000${q.queueId}\u0000${q.broker ?? ''}`;
}

/**
 * Gathers what the HTML report draws over time from decoded frames: per consumer queue the pulls,
 * the messages they found, the committed offset and the lag; per request code the requests. The
 * totals equal those of `DecodeStats` (the report's tables come from it), read the same way: pulls
 * and commits keyed by the request's group, topic, queue and destination.
 */
export class TimelineCollector {
  private readonly queues = new Map<string, QueueRow>();
  private readonly codes = new Map<number, Series>();
  private readonly all: Series[] = [];
  private unit: 'ms' | 'frame' | null = null;
  private origin = 0;
  private widthStep = 0;
  private width = BUCKET_WIDTHS[0]!;
  private buckets = 0;
  private frameNo = 0;
  private lastX = 0;

  private series(sum: boolean): Series {
    const s: Series = { sum, values: [] };
    this.all.push(s);
    return s;
  }

  private queue(group: string, topic: string, queueId: number, broker: string | null): QueueRow {
    const key = timelineQueueKey({ group, topic, queueId, broker });
    let q = this.queues.get(key);
    if (!q) {
      q = {
        group,
        topic,
        queueId,
        broker,
        pulls: this.series(true),
        answered: this.series(true),
        found: this.series(true),
        messages: this.series(true),
        committed: this.series(false),
        maxOffset: this.series(false),
      };
      this.queues.set(key, q);
    }
    return q;
  }

  /** Widen the buckets until index `i` fits, merging whole buckets. */
  private grow(i: number): number {
    while (i >= MAX_BUCKETS) {
      const next = this.widthStep + 1 < BUCKET_WIDTHS.length ? BUCKET_WIDTHS[this.widthStep + 1]! : this.width * 2;
      const k = next / this.width;
      for (const s of this.all) {
        const out: (number | null)[] = [];
        for (let j = 0; j < s.values.length; j++) {
          const v = s.values[j];
          if (v === undefined || v === null) continue;
          const o = Math.floor(j / k);
          // A 'last' series keeps the latest value: later buckets come later in the loop.
          out[o] = s.sum ? (out[o] ?? 0) + v : v;
        }
        s.values = out;
      }
      this.buckets = Math.ceil(this.buckets / k);
      i = Math.floor(i / k);
      this.width = next;
      this.widthStep++;
    }
    return i;
  }

  private bucket(f: DecodedFrame): number {
    let x: number;
    if (this.unit === null) {
      this.unit = f.ts === null ? 'frame' : 'ms';
      this.origin = f.ts === null ? 0 : Math.floor(f.ts * 1000);
    }
    if (this.unit === 'frame') x = this.frameNo;
    else x = f.ts === null ? this.lastX : f.ts * 1000;
    this.lastX = x;
    // A frame a little out of order before the first one counts in the first bucket.
    const i = this.grow(Math.max(0, Math.floor((x - this.origin) / this.width)));
    if (i + 1 > this.buckets) this.buckets = i + 1;
    return i;
  }

  add(f: DecodedFrame): void {
    const b = this.bucket(f);
    this.frameNo++;
    const cmd = f.cmd;
    const put = (s: Series, v: number): void => {
      s.values[b] = s.sum ? (s.values[b] ?? 0) + v : v;
    };
    if (!isResponse(cmd)) {
      let rate = this.codes.get(cmd.code);
      if (!rate) {
        rate = this.series(true);
        this.codes.set(cmd.code, rate);
      }
      put(rate, 1);
      const ext = cmd.extFields;
      const { topic, group } = requestTopicAndGroup(cmd.code, ext);
      if (!ext || group === undefined || topic === undefined) return;
      const queueId = int(ext.queueId);
      if (queueId === null) return;
      if (cmd.code === RequestCode.PULL_MESSAGE || cmd.code === RequestCode.LITE_PULL_MESSAGE) {
        const q = this.queue(group, topic, queueId, f.dst);
        put(q.pulls, 1);
        const sysFlag = int(ext.sysFlag) ?? 0;
        const commitOffset = int(ext.commitOffset);
        if ((sysFlag & PullSysFlag.FLAG_COMMIT_OFFSET) !== 0 && commitOffset !== null && commitOffset >= 0)
          put(q.committed, commitOffset);
      } else if (cmd.code === RequestCode.UPDATE_CONSUMER_OFFSET) {
        const commitOffset = int(ext.commitOffset);
        if (commitOffset !== null) put(this.queue(group, topic, queueId, f.dst).committed, commitOffset);
      }
      return;
    }
    const req = f.request;
    if (!req || (req.code !== RequestCode.PULL_MESSAGE && req.code !== RequestCode.LITE_PULL_MESSAGE)) return;
    const { topic, group } = requestTopicAndGroup(req.code, req.extFields);
    const queueId = int(req.extFields?.queueId);
    if (topic === undefined || group === undefined || queueId === null) return;
    const q = this.queue(group, topic, queueId, req.dst);
    put(q.answered, 1);
    if (pullStatus(cmd.code) === 'FOUND') {
      put(q.found, 1);
      put(q.messages, countStoredRecords(cmd.body));
    }
    const max = int(cmd.extFields?.maxOffset);
    if (max !== null) put(q.maxOffset, max);
  }

  toJSON(): Timelines {
    const n = this.buckets;
    const dense = (s: Series): number[] => Array.from({ length: n }, (_, i) => s.values[i] ?? 0);
    const sparse = (s: Series): (number | null)[] => Array.from({ length: n }, (_, i) => s.values[i] ?? null);
    const queues = [...this.queues.values()].map((q): QueueTimeline => {
      const committed = sparse(q.committed);
      const maxOffset = sparse(q.maxOffset);
      const lag: (number | null)[] = [];
      let c: number | null = null;
      let m: number | null = null;
      for (let i = 0; i < n; i++) {
        c = committed[i] ?? c;
        m = maxOffset[i] ?? m;
        lag.push(c !== null && m !== null ? m - c : null);
      }
      return {
        group: q.group,
        topic: q.topic,
        queueId: q.queueId,
        broker: q.broker,
        pulls: dense(q.pulls),
        answered: dense(q.answered),
        found: dense(q.found),
        messages: dense(q.messages),
        committed,
        maxOffset,
        lag,
      };
    });
    const requestRates = [...this.codes.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([code, s]) => ({ code, name: requestCodeName(code), requests: dense(s) }));
    return { unit: this.unit ?? 'ms', origin: this.origin, bucketWidth: this.width, buckets: n, queues, requestRates };
  }
}
