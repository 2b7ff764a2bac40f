import createDebug from '../debug.js';
import type { Clock, ClockTimer } from '../clock.js';
import { encodeTraceText, forEachTraceKey } from './trace-data-encoder.js';
import type { TraceSender } from './trace-producer.js';
import type { TraceContext } from './trace-types.js';

const log = createDebug('rocketwire:trace');

/** RMQ_SYS_TRACE_TOPIC, TopicValidator's default trace topic. */
export const RMQ_SYS_TRACE_TOPIC = 'RMQ_SYS_TRACE_TOPIC';
/** TraceConstants.TRACE_TOPIC_PREFIX: a CLOUD record goes to rmq_sys_TRACE_DATA_<region>. */
export const TRACE_TOPIC_PREFIX = 'rmq_sys_TRACE_DATA_';
/** Characters of a trace message's KEYS at which it is cut (Java's message properties are at most 32 767 bytes). */
const MAX_KEYS_CHARS = 16_000;

export interface TraceDispatcherOptions {
  sender: TraceSender;
  clock: Clock;
  /** Default RMQ_SYS_TRACE_TOPIC. */
  traceTopic?: string;
  /** Records per batch (Java's batchNum: 10 by default, at most 20). */
  batchNum?: number;
  /** Characters of one trace message before it is cut (Java's maxMsgSize, 128 000). */
  maxMsgSize?: number;
  /**
   * Records waiting at most; more are dropped and counted. Default 2048 × (1 + batchNum): Java holds
   * 2048 records in its traceContextQueue and, behind it, up to 2048 batches of batchNum in its
   * appenderQueue (the send threads' work queue), so that many records wait before Java drops one.
   */
  queueSize?: number;
  /** A partial batch waits at most this long (Java's flushTraceInterval, 5000 ms). */
  flushIntervalMs?: number;
  /**
   * Trace messages in flight at most (default 4, as Java's 4 send threads); the records that wait
   * meanwhile go out together when one is answered (see maxRecordsPerMessage).
   */
  maxInFlight?: number;
  /**
   * Records one trace message may carry when more than batchNum wait (a backlog behind the trace
   * messages in flight; default 1000, so that the cuts at maxMsgSize characters and at 16 000
   * characters of keys decide: about 220 Pub records, or 800 Sub records of 400 consumed messages).
   * Otherwise a batch is batchNum records, as Java's;
   * under load this is what keeps the trace stream a small fraction of the traced one: with
   * batchNum records per message a consumer (two records per message) sent one trace message per
   * five consumed, and the broker storing them bounded the consumer at 0.28 of its untraced rate.
   */
  maxRecordsPerMessage?: number;
  /**
   * A full batch waits until this long after the last trace message was sent (default 20 ms; 0
   * sends each batch at once, as Java): what arrives meanwhile goes in the same message, so a
   * producer's trace stream is one message per ~80 sends at 4 000 sends/s rather than one per 10.
   * Java's records wait up to flushIntervalMs anyway; 20 ms more is not seen by a trace reader.
   */
  lingerMs?: number;
}

export interface TraceDispatcherStats {
  /** Records accepted into the queue. */
  appended: number;
  /** Records refused because the queue was full (Java's discardCount). */
  dropped: number;
  /** Records skipped without a region (the broker reported none), as Java skips them. */
  skipped: number;
  /** Records in trace messages the broker stored. */
  sent: number;
  /** Records in trace messages that failed. */
  failed: number;
  /** Trace messages sent (stored or failed). */
  messages: number;
  /** Records waiting now. */
  queued: number;
}

/**
 * Java's AsyncTraceDispatcher: the send and consume paths only `append` a record (an array push,
 * never a throw, never an await); batches of batchNum records, or what waits after
 * flushIntervalMs, are encoded and sent by the dispatcher's own producer, grouped by the traced
 * topic (as Java's transBeanMap) and cut at maxMsgSize characters. The timers run on the injected
 * clock; the queue is bounded and what does not fit is counted as dropped.
 */
export class AsyncTraceDispatcher {
  readonly traceTopic: string;
  private readonly sender: TraceSender;
  private readonly clock: Clock;
  private readonly batchNum: number;
  private readonly maxMsgSize: number;
  private readonly queueSize: number;
  private readonly flushIntervalMs: number;
  private readonly maxInFlight: number;
  private readonly maxRecordsPerMessage: number;
  private queue: TraceContext[] = [];
  private head = 0;
  private timer: ClockTimer | null = null;
  private timerForBatch = false;
  private lastFlush: number;
  private lastSend = Number.NEGATIVE_INFINITY;
  private timerAt = 0;
  private readonly lingerMs: number;
  private inFlight = 0;
  private readonly sends = new Set<Promise<void>>();
  private closed = false;
  private readonly counters = { appended: 0, dropped: 0, skipped: 0, sent: 0, failed: 0, messages: 0 };

  constructor(options: TraceDispatcherOptions) {
    this.sender = options.sender;
    this.clock = options.clock;
    this.traceTopic = options.traceTopic ?? RMQ_SYS_TRACE_TOPIC;
    this.batchNum = Math.max(1, Math.min(options.batchNum ?? 10, 20));
    this.maxMsgSize = options.maxMsgSize ?? 128_000;
    this.queueSize = options.queueSize ?? 2048 * (1 + this.batchNum);
    this.flushIntervalMs = options.flushIntervalMs ?? 5000;
    this.maxInFlight = options.maxInFlight ?? 4;
    this.maxRecordsPerMessage = Math.max(this.batchNum, options.maxRecordsPerMessage ?? 1000);
    this.lingerMs = Math.max(0, options.lingerMs ?? 20);
    this.lastFlush = this.clock.now();
  }

  get size(): number {
    return this.queue.length - this.head;
  }

  stats(): TraceDispatcherStats {
    return { ...this.counters, queued: this.size };
  }

  /** Queues a record; false (and counted) when the queue is full or the dispatcher closed. Never throws. */
  append(ctx: TraceContext): boolean {
    if (this.closed || this.size >= this.queueSize) {
      this.counters.dropped++;
      return false;
    }
    this.queue.push(ctx);
    this.counters.appended++;
    if (this.size >= this.batchNum) {
      // A full batch goes out on the next turn, never inside the caller's send or handler call;
      // while maxInFlight trace messages are out, the first answer sends it (no timer per append).
      // (the clock is read only when a timer may change: once per batch, not per record)
      if (this.inFlight < this.maxInFlight && (!this.timerForBatch || this.size === this.maxRecordsPerMessage)) {
        const now = this.clock.now();
        const at = this.size >= this.maxRecordsPerMessage ? now : Math.max(now, this.lastSend + this.lingerMs);
        if (!this.timerForBatch || at < this.timerAt) this.arm(at - now, true);
      }
    } else if (this.timer === null) {
      this.arm(Math.max(0, this.lastFlush + this.flushIntervalMs - this.clock.now()), false);
    }
    return true;
  }

  private arm(ms: number, forBatch: boolean): void {
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    this.timerForBatch = forBatch;
    this.timerAt = this.clock.now() + ms;
    this.timer = this.clock.setTimeout(() => {
      this.timer = null;
      this.timerForBatch = false;
      this.flush(false);
    }, ms);
  }

  /**
   * Sends full batches (and, when `force` or the interval has passed, the partial last one)
   * while fewer than maxInFlight trace messages are in flight; re-arms the timer for what is left.
   */
  private flush(force: boolean): void {
    for (;;) {
      const n = this.size;
      if (n === 0) break;
      const now = this.clock.now();
      const due =
        force ||
        n >= this.maxRecordsPerMessage ||
        (n >= this.batchNum && now - this.lastSend >= this.lingerMs) ||
        now - this.lastFlush >= this.flushIntervalMs;
      if (!due || this.inFlight >= this.maxInFlight) break;
      // a backlog (records that waited behind trace messages in flight) goes out together
      const batch = this.take(n > this.batchNum ? Math.min(n, this.maxRecordsPerMessage) : this.batchNum);
      this.lastFlush = this.lastSend = now;
      this.sendBatch(batch);
    }
    if (this.size > 0 && this.timer === null && this.inFlight < this.maxInFlight) {
      const full = this.size >= this.batchNum;
      const at = full ? this.lastSend + this.lingerMs : this.lastFlush + this.flushIntervalMs;
      this.arm(Math.max(0, at - this.clock.now()), full);
    }
  }

  private take(n: number): TraceContext[] {
    const end = Math.min(this.queue.length, this.head + n);
    const batch = this.queue.slice(this.head, end);
    this.head = end;
    if (this.head === this.queue.length) {
      this.queue = [];
      this.head = 0;
    } else if (this.head > 1024) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    return batch;
  }

  /** AsyncDataSendTask#sendTraceData: group by traced topic and trace topic, encode, cut at maxMsgSize. */
  private sendBatch(batch: TraceContext[]): void {
    const groups: Array<{ topic: string; traceTopic: string; records: TraceContext[] }> = [];
    let last: (typeof groups)[number] | undefined;
    for (const ctx of batch) {
      if (ctx.regionId === null || ctx.traceBeans.length === 0) {
        this.counters.skipped++;
        continue;
      }
      const traceTopic = ctx.accessChannel === 'CLOUD' ? TRACE_TOPIC_PREFIX + ctx.regionId : this.traceTopic;
      const topic = ctx.traceBeans[0]!.topic;
      // the records of a batch mostly share one traced topic: the last group first, no key string per record
      if (last === undefined || last.topic !== topic || last.traceTopic !== traceTopic) {
        last = groups.find((g) => g.topic === topic && g.traceTopic === traceTopic);
        if (last === undefined) groups.push((last = { topic, traceTopic, records: [] }));
      }
      last.records.push(ctx);
    }
    for (const g of groups) {
      let data = '';
      let keys = new Set<string>();
      let keysChars = 0;
      let count = 0;
      const addKey = (k: string): void => {
        if (keys.has(k)) return;
        keys.add(k);
        keysChars += k.length + 1;
      };
      for (const ctx of g.records) {
        let text: string;
        try {
          text = encodeTraceText(ctx);
          forEachTraceKey(ctx, addKey);
        } catch (err) {
          this.counters.skipped++;
          log('a trace record could not be encoded: %s', (err as Error)?.message ?? err);
          continue;
        }
        data += text;
        count++;
        // the KEYS property of a message is bounded (the properties are at most 32 767 bytes):
        // a message of many records is cut when its keys near half of that
        if (data.length >= this.maxMsgSize || keysChars >= MAX_KEYS_CHARS) {
          this.sendOne(g.traceTopic, data, keys, count);
          data = '';
          keys = new Set();
          keysChars = 0;
          count = 0;
        }
      }
      if (count > 0) this.sendOne(g.traceTopic, data, keys, count);
    }
  }

  private sendOne(topic: string, data: string, keys: Set<string>, records: number): void {
    this.inFlight++;
    this.counters.messages++;
    let p: Promise<void>;
    try {
      p = this.sender.send(topic, data, [...keys]);
    } catch (err) {
      p = Promise.reject(err);
    }
    const done = p
      .then(
        () => {
          this.counters.sent += records;
        },
        (err: unknown) => {
          this.counters.failed += records;
          log('sending %d trace records to %s failed: %s', records, topic, (err as Error)?.message ?? err);
        },
      )
      .finally(() => {
        this.inFlight--;
        this.sends.delete(done);
        if (!this.closed) this.flush(false);
      });
    this.sends.add(done);
  }

  /** Sends what waits now (all of it, batch by batch) and waits for the trace messages in flight. */
  async flushAll(): Promise<void> {
    while (this.size > 0 || this.sends.size > 0) {
      if (this.timer !== null) {
        this.clock.clearTimeout(this.timer);
        this.timer = null;
        this.timerForBatch = false;
      }
      this.flush(true);
      if (this.sends.size > 0) await Promise.race(this.sends);
    }
  }

  /** Java's shutdown: flush everything, then stop the trace producer. Appends after this are dropped. */
  async shutdown(): Promise<void> {
    if (this.closed) return;
    await this.flushAll();
    this.closed = true;
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    this.timer = null;
    await this.sender
      .close()
      .catch((err: unknown) => log('closing the trace producer failed: %s', (err as Error)?.message ?? err));
  }
}
