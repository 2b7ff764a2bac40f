import type { Clock } from '../../clock.js';
import type { Logger } from '../../logger.js';
import { ConsumerOptionError } from '../errors.js';
import { optionValidator } from '../../validate.js';
import {
  ConsumeConcurrentlyStatus,
  ConsumeOrderlyStatus,
  concurrentResult,
  isThenable,
  orderlyResult,
  type ConsumeConcurrentlyContext,
  type ConsumeOrderlyContext,
  type MessageListener,
  type MessageListenerConcurrently,
  type MessageListenerOrderly,
} from './consume-types.js';
import type { MessageExt } from './message.js';
import type { PushConsumerEvents } from './consumer-events.js';
import type { ConsumerStats } from './consumer-stats.js';

/**
 * Where the duplicate guard keeps the keys of consumed messages, when not in memory: a Redis
 * (`SET key 1 PX ttl` / `EXISTS key`), a table with an expiry column, anything shared by the
 * consumers of a group. Either method may answer at once or with a promise.
 * @category Consuming
 */
export interface DuplicateStore {
  /** True when `key` was added less than its ttl ago. */
  has(key: string): boolean | Promise<boolean>;
  /** Remember `key` for `ttlMs` milliseconds. */
  add(key: string, ttlMs: number): void | Promise<void>;
}

/**
 * The duplicate guard (`duplicateGuard` option, off by default): a message whose key (its
 * UNIQ_KEY, the msgId the producer gave it) was consumed within `windowMs` is not handed to the
 * handler again, but acked or committed as consumed. A key is recorded only after its handler
 * succeeded, so the retry of a failed message always runs.
 * @category Consuming
 */
export interface DuplicateGuardOptions {
  /**
   * How long a consumed key is remembered, in milliseconds (1 s – 7 days).
   * @default 600000 (10 min)
   */
  windowMs?: number;
  /**
   * Most keys the in-memory set holds; past it the oldest are forgotten first (1 – 10 000 000).
   * Ignored with `store`.
   * @default 100000
   */
  maxKeys?: number;
  /**
   * Keep the keys there instead of in memory; keys are `{group}:{UNIQ_KEY}`.
   * @default undefined (in memory)
   */
  store?: DuplicateStore;
}

/** A delivery the guard did not hand to the handler: the payload of the `'duplicate'` event (declared there). */
export type DuplicateDropped = PushConsumerEvents['duplicate'][0];

/** The guard's figures in `stats().duplicates` (declared there). */
export type DuplicateGuardStats = NonNullable<ConsumerStats['duplicates']>;

export const DEFAULT_DUPLICATE_WINDOW_MS = 600_000;
export const DEFAULT_DUPLICATE_MAX_KEYS = 100_000;

/**
 * The in-memory store: keys in insertion order with their expiry. With one window for every key
 * the oldest entry always expires first, so expired keys leave from the front and, past maxKeys,
 * the oldest are forgotten: the memory is bounded by count and by time.
 */
export class MemoryDuplicateStore implements DuplicateStore {
  private readonly keys = new Map<string, number>();

  constructor(
    private readonly clock: Clock,
    private readonly maxKeys: number,
  ) {}

  get size(): number {
    return this.keys.size;
  }

  has(key: string): boolean {
    const until = this.keys.get(key);
    return until !== undefined && until > this.clock.now();
  }

  add(key: string, ttlMs: number): void {
    const now = this.clock.now();
    this.keys.delete(key);
    this.keys.set(key, now + ttlMs);
    for (const [k, until] of this.keys) {
      if (until > now && this.keys.size <= this.maxKeys) break;
      this.keys.delete(k);
    }
  }
}

const check = optionValidator(ConsumerOptionError);

type Sync<T> = T | PromiseLike<T>;
function then<T, R>(v: Sync<T>, f: (t: T) => Sync<R>): Sync<R> {
  return isThenable<T>(v) ? Promise.resolve(v).then(f) : f(v);
}

/** What the guard reports to its consumer. */
export interface DuplicateGuardSink {
  dropped(info: DuplicateDropped): void;
  readonly logger: Logger;
  readonly label: string;
}

/** The guard of one consumer: wraps its handler (the consume services and the POP paths call the wrapped one). */
export class DuplicateGuard {
  private readonly store: DuplicateStore;
  private readonly memory: MemoryDuplicateStore | null;
  readonly windowMs: number;
  private readonly prefix: string;
  private readonly counts: DuplicateGuardStats = { dropped: 0, recorded: 0, held: 0, storeErrors: 0 };
  /** Dropped deliveries per topic (the metrics' gauge). */
  readonly droppedByTopic = new Map<string, number>();

  constructor(
    o: DuplicateGuardOptions,
    clock: Clock,
    group: string,
    private readonly sink: DuplicateGuardSink,
  ) {
    this.windowMs = check.intIn(
      'duplicateGuard.windowMs',
      o.windowMs ?? DEFAULT_DUPLICATE_WINDOW_MS,
      1000,
      7 * 86_400_000,
    );
    const maxKeys = check.intIn('duplicateGuard.maxKeys', o.maxKeys ?? DEFAULT_DUPLICATE_MAX_KEYS, 1, 10_000_000);
    if (o.store !== undefined && (typeof o.store?.has !== 'function' || typeof o.store?.add !== 'function'))
      throw check.error('duplicateGuard.store', 'must have has(key) and add(key, ttlMs) methods');
    this.memory = o.store ? null : new MemoryDuplicateStore(clock, maxKeys);
    this.store = o.store ?? this.memory!;
    this.prefix = o.store ? `${group}:` : '';
  }

  stats(): DuplicateGuardStats {
    return { ...this.counts, held: this.memory?.size ?? 0 };
  }

  private keyOf(m: MessageExt): string {
    return m.properties.UNIQ_KEY || m.msgId;
  }

  /** The messages not consumed before (a store that fails lets the message through: handled rather than lost). */
  private fresh(msgs: MessageExt[]): Sync<MessageExt[]> {
    const answers: Sync<boolean>[] = msgs.map((m) => {
      try {
        const r = this.store.has(this.prefix + this.keyOf(m));
        return isThenable<boolean>(r) ? Promise.resolve(r).catch((err: unknown) => this.storeFailed('has', err)) : r;
      } catch (err) {
        return this.storeFailed('has', err);
      }
    });
    const pick = (seen: boolean[]): MessageExt[] => {
      const out: MessageExt[] = [];
      msgs.forEach((m, i) => {
        if (!seen[i]) {
          out.push(m);
          return;
        }
        this.counts.dropped++;
        this.droppedByTopic.set(m.topic, (this.droppedByTopic.get(m.topic) ?? 0) + 1);
        this.sink.dropped({
          topic: m.topic,
          key: this.keyOf(m),
          queueId: m.queueId,
          queueOffset: m.queueOffset,
          reconsumeTimes: m.reconsumeTimes,
        });
      });
      return out;
    };
    return answers.some(isThenable) ? Promise.all(answers).then(pick) : pick(answers as boolean[]);
  }

  private record(msgs: readonly MessageExt[]): Sync<void> {
    const pending: Promise<void>[] = [];
    for (const m of msgs) {
      try {
        const r = this.store.add(this.prefix + this.keyOf(m), this.windowMs);
        this.counts.recorded++;
        if (isThenable(r)) pending.push(Promise.resolve(r).catch((err: unknown) => void this.storeFailed('add', err)));
      } catch (err) {
        this.storeFailed('add', err);
      }
    }
    if (pending.length > 0) return Promise.all(pending).then(() => undefined);
  }

  private storeFailed(op: 'has' | 'add', err: unknown): false {
    this.counts.storeErrors++;
    this.sink.logger.warn(
      `${this.sink.label}: duplicate store ${op}() failed (${(err as Error)?.message ?? String(err)}); ` +
        (op === 'has' ? 'the message is handled' : 'the message is not recorded and may be handled again'),
    );
    return false;
  }

  /** The handler with the guard around it (the mode decides what counts as success). */
  wrap(listener: MessageListener, orderly: boolean): MessageListener {
    return orderly
      ? this.wrapOrderly(listener as MessageListenerOrderly)
      : this.wrapConcurrently(listener as MessageListenerConcurrently);
  }

  private wrapConcurrently(listener: MessageListenerConcurrently): MessageListenerConcurrently {
    return ((msgs: MessageExt[], ctx: ConsumeConcurrentlyContext) =>
      then(this.fresh(msgs), (fresh) => {
        if (fresh.length === 0) return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        const all = fresh.length === msgs.length;
        const inner: ConsumeConcurrentlyContext = all
          ? ctx
          : {
              messageQueue: ctx.messageQueue,
              delayLevelWhenNextConsume: ctx.delayLevelWhenNextConsume,
              ackIndex: ctx.ackIndex,
            };
        return then(listener(fresh, inner), (value) => {
          const r = concurrentResult(value);
          if (!all) {
            // the handler's ackIndex counts in what it was given: the duplicates dropped count as consumed
            ctx.delayLevelWhenNextConsume = inner.delayLevelWhenNextConsume;
            const last = fresh[Math.min(inner.ackIndex, fresh.length - 1)];
            ctx.ackIndex = last === undefined || inner.ackIndex < 0 ? -1 : msgs.indexOf(last);
          }
          if (r.status !== ConsumeConcurrentlyStatus.CONSUME_SUCCESS || r.invalid) return value;
          const done = fresh.slice(0, Math.max(0, Math.min(inner.ackIndex, fresh.length - 1) + 1));
          return then(this.record(done), () => value);
        });
      })) as MessageListenerConcurrently;
  }

  private wrapOrderly(listener: MessageListenerOrderly): MessageListenerOrderly {
    return ((msgs: MessageExt[], ctx: ConsumeOrderlyContext) =>
      then(this.fresh(msgs), (fresh) => {
        if (fresh.length === 0) return ConsumeOrderlyStatus.SUCCESS;
        return then(listener(fresh, ctx), (value) => {
          const r = orderlyResult(value);
          const ok =
            !r.invalid &&
            (r.status === ConsumeOrderlyStatus.SUCCESS ||
              r.status === ConsumeOrderlyStatus.COMMIT ||
              (r.status === ConsumeOrderlyStatus.ROLLBACK && ctx.autoCommit));
          return ok ? then(this.record(fresh), () => value) : value;
        });
      })) as MessageListenerOrderly;
  }
}

/** The guard the `duplicateGuard` option asks for, or null (off). */
export function createDuplicateGuard(
  option: boolean | DuplicateGuardOptions | undefined,
  clock: Clock,
  group: string,
  sink: DuplicateGuardSink,
): DuplicateGuard | null {
  if (option === undefined || option === false) return null;
  if (option !== true && (typeof option !== 'object' || option === null))
    throw check.error('duplicateGuard', 'must be true, false or { windowMs, maxKeys, store }');
  return new DuplicateGuard(option === true ? {} : option, clock, group, sink);
}
