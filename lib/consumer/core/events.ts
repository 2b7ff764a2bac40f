import createDebug from '../../debug.js';
import type { MessageQueue } from '../../../protocol/index.js';
import { queueKey } from '../../../protocol/internal.js';
import type { PullStatus } from '../../client/index.js';
import {
  RemotingEventRelay,
  type ConnectionEvent,
  type RemotingClientEvents,
  type RequestTimeoutEvent,
} from '../../remoting/events.js';
import type { RemotingClient } from '../../remoting/index.js';
import { ConsumerMetrics, resolveMeter, type CachedQueue, type MetricsOptions } from '../../metrics/index.js';
import type { FlowControlReason } from './flow-control.js';
import type { ProcessQueue } from './process-queue.js';
import type { PullRequest } from './pull-request.js';

const log = createDebug('rocketwire:consumer');

// Typed instrumentation events of the consumers, as KafkaJS's `consumer.events`: a constant per
// event, a documented payload each, `on()` returning the function that removes the listener. The
// consumer builds a payload only when someone listens to its event.

/**
 * The names of a PushConsumer's events: `consumer.on(ConsumerEvents.REBALANCE, (e) => …)`.
 * @category Consuming
 */
export const ConsumerEvents = {
  /** UndecodableMessageError: a stored message cannot be decoded (sent back, left unacked, passed or skipped: its disposition; once per record). */
  UNDECODABLE: 'undecodable',
  /** ConsumerBrokerError: a request to a broker failed (the consumer retries by itself). */
  BROKER_ERROR: 'brokerError',
  /** BrokerReachable: a broker answered for the first time, or again after failures. */
  BROKER_REACHABLE: 'brokerReachable',
  /** RebalanceEvent: the queues this consumer holds of a topic changed. */
  REBALANCE: 'rebalance',
  /** PullEvent: a pull was answered. */
  PULL: 'pull',
  /** FlowControlEvent: a queue's pulls stopped because its cache is over a limit. */
  FLOW_CONTROL_PAUSE: 'flowControlPause',
  /** FlowControlEvent: a queue paused by flow control pulls again. */
  FLOW_CONTROL_RESUME: 'flowControlResume',
  /** OffsetCommitEvent: an offset was sent to the broker (UPDATE_CONSUMER_OFFSET). */
  OFFSET_COMMIT: 'offsetCommit',
  /** RequestTimeoutEvent: a request of the client instance got no answer in time. */
  REQUEST_TIMEOUT: 'requestTimeout',
  /** ConnectionEvent: a connection of the client instance opened. */
  CONNECT: 'connect',
  /** ConnectionEvent: a connection of the client instance closed. */
  DISCONNECT: 'disconnect',
  /** CrashEvent: an unexpected error stopped a part of the consumer. */
  CRASH: 'crash',
} as const;

/**
 * The queues of one topic before and after a rebalance changed them.
 * @category Consuming
 */
export interface RebalanceEvent {
  /** The topic whose queues changed (its retry topic is a topic of its own). */
  topic: string;
  /** Queues held before (empty at the first rebalance). */
  before: MessageQueue[];
  /** Queues held now. */
  after: MessageQueue[];
  /** Queues in `after` and not in `before`: their pulls start. */
  added: MessageQueue[];
  /** Queues in `before` and not in `after`: their offsets are committed and their pulls stop. */
  removed: MessageQueue[];
}

/**
 * A pull's answer.
 * @category Consuming
 */
export interface PullEvent {
  /** The queue pulled. */
  queue: MessageQueue;
  /** The broker that answered. */
  brokerAddr: string;
  /** The broker's answer: FOUND, NO_NEW_MSG, NO_MATCHED_MSG or OFFSET_ILLEGAL. */
  status: PullStatus;
  /** Messages handed to the consume service (after the tag filter); 0 unless FOUND. */
  found: number;
  /** From sending the pull to its answer, in milliseconds, long-poll hold included (consumer's clock). */
  latencyMs: number;
  /** The offset the next pull asks for. */
  nextOffset: number;
}

/**
 * A queue's pulls stopped (pause) or started again (resume) by flow control.
 * @category Consuming
 */
export interface FlowControlEvent {
  /** The queue whose pulls stopped or started again. */
  queue: MessageQueue;
  /** count: more cached messages than pullThresholdForQueue; size: more MiB than pullThresholdSizeForQueueMiB; span: consumeConcurrentlyMaxSpan. */
  reason: FlowControlReason;
  /** Messages in the queue's cache when the event was emitted. */
  cachedMessages: number;
  /** Bytes of message bodies in the queue's cache when the event was emitted. */
  cachedBytes: number;
  /** resume only: how long the queue's pulls were paused, in milliseconds. */
  pausedMs?: number;
}

/**
 * An offset the consumer sent to the broker (the periodic and final flushes).
 * @category Consuming
 */
export interface OffsetCommitEvent {
  /** The queue whose offset was sent. */
  queue: MessageQueue;
  /** The next offset to consume (what the broker stores). */
  offset: number;
  /** The broker it was sent to. */
  brokerAddr: string;
}

export type { ConnectionEvent, RequestTimeoutEvent } from '../../remoting/events.js';

/**
 * Which part an unexpected error stopped.
 * @category Consuming
 */
export type CrashedPart = 'pull' | 'rebalance';

/**
 * An unexpected error (a bug, or a user strategy or hook that threw) stopped a part: the pulls of
 * one queue (`queue` given: its pull request was lost; the queue is pulled again once a rebalance
 * drops and re-creates it), or a rebalance round (the next one runs at its period).
 * @category Consuming
 */
export interface CrashEvent {
  /** What stopped: a queue's pulls or a rebalance round. */
  part: CrashedPart;
  /** What was thrown. */
  error: unknown;
  /** part "pull": the queue whose pulls stopped. */
  queue?: MessageQueue | undefined;
}

/** The instrumentation events of a PushConsumer, by name (see ConsumerEvents); merged into PushConsumerEvents. */
export interface ConsumerInstrumentationEvents {
  /** The queues this consumer holds of a topic changed. */
  rebalance: [event: RebalanceEvent];
  /** A pull was answered. */
  pull: [event: PullEvent];
  /** A queue's pulls stopped because its cache is over a limit. */
  flowControlPause: [event: FlowControlEvent];
  /** A queue paused by flow control pulls again. */
  flowControlResume: [event: FlowControlEvent];
  /** An offset was sent to the broker (UPDATE_CONSUMER_OFFSET). */
  offsetCommit: [event: OffsetCommitEvent];
  /** A request of the client instance got no answer in time. */
  requestTimeout: [event: RequestTimeoutEvent];
  /** A connection of the client instance opened. */
  connect: [event: ConnectionEvent];
  /** A connection of the client instance closed. */
  disconnect: [event: ConnectionEvent];
  /** An unexpected error stopped a part of the consumer. */
  crash: [event: CrashEvent];
}

/** The emitter side the hooks call: emit only when `has` says someone listens. */
export interface InstrumentationEmitter {
  has(event: keyof ConsumerInstrumentationEvents): boolean;
  emit<E extends keyof ConsumerInstrumentationEvents>(event: E, ...args: ConsumerInstrumentationEvents[E]): void;
}

/**
 * The little state behind rebalance and flow-control events, and the calls the consumer's hooks
 * make. One per consumer.
 */
export class ConsumerInstrumentation {
  /** topic → queues held after the last change. */
  private readonly held = new Map<string, MessageQueue[]>();
  /** Pull requests paused by flow control, with the reason and since when. */
  private readonly paused = new WeakMap<PullRequest, { reason: FlowControlReason; since: number }>();
  /** How many are in `paused`: a pull passing flow control looks it up only when some are. */
  private pausedCount = 0;

  /** Emits; a listener that throws is logged and never reaches the consumer's own code. */
  private fire<E extends keyof ConsumerInstrumentationEvents>(
    event: E,
    ...args: ConsumerInstrumentationEvents[E]
  ): void {
    try {
      this.events.emit(event, ...args);
    } catch (err) {
      log('a %s listener threw: %s', event, (err as Error)?.message ?? err);
    }
  }

  constructor(
    private readonly events: InstrumentationEmitter,
    /** The consumer's clock, read only when an event needs a time. */
    private readonly now: () => number,
  ) {}

  /** The queues of `topic` changed; `after` is what is held now. */
  rebalanced(topic: string, after: MessageQueue[]): void {
    const before = this.held.get(topic) ?? [];
    this.held.set(topic, after);
    if (!this.events.has('rebalance')) return;
    const was = new Set(before.map(queueKey));
    const now = new Set(after.map(queueKey));
    this.fire('rebalance', {
      topic,
      before,
      after,
      added: after.filter((q) => !was.has(queueKey(q))),
      removed: before.filter((q) => !now.has(queueKey(q))),
    });
  }

  pulled(pr: PullRequest, brokerAddr: string, status: PullStatus, found: number, latencyMs: number): void {
    if (!this.events.has('pull')) return;
    this.fire('pull', { queue: pr.messageQueue, brokerAddr, status, found, latencyMs, nextOffset: pr.nextOffset });
  }

  /** Flow control parked `pr`'s pull: a pause event the first time, not at each 50 ms re-check. */
  flowControlled(pr: PullRequest, reason: FlowControlReason): void {
    if (this.pausedCount > 0 && this.paused.has(pr)) return;
    if (!this.events.has('flowControlPause') && !this.events.has('flowControlResume')) return;
    this.paused.set(pr, { reason, since: this.now() });
    this.pausedCount++;
    const pq = pr.processQueue;
    if (this.events.has('flowControlPause'))
      this.fire('flowControlPause', {
        queue: pr.messageQueue,
        reason,
        cachedMessages: pq.msgCount,
        cachedBytes: pq.msgSize,
      });
  }

  /** `pr` passed flow control: a resume event when it had been paused. */
  flowReleased(pr: PullRequest): void {
    if (this.pausedCount === 0) return;
    const p = this.paused.get(pr);
    if (p === undefined) return;
    this.paused.delete(pr);
    this.pausedCount--;
    const now = this.now();
    const pq = pr.processQueue;
    if (this.events.has('flowControlResume')) {
      this.fire('flowControlResume', {
        queue: pr.messageQueue,
        reason: p.reason,
        cachedMessages: pq.msgCount,
        cachedBytes: pq.msgSize,
        pausedMs: now - p.since,
      });
    }
  }

  offsetCommitted(queue: MessageQueue, offset: number, brokerAddr: string): void {
    if (this.events.has('offsetCommit')) this.fire('offsetCommit', { queue, offset, brokerAddr });
  }

  crashed(part: CrashedPart, error: unknown, queue?: MessageQueue): void {
    if (this.events.has('crash')) this.fire('crash', { part, error, queue });
  }

  private readonly relay = new RemotingEventRelay(
    (event) => this.events.has(event),
    // The emitter's map has these three entries with the same payloads (RemotingClientEvents).
    (event, ...args) =>
      (this.fire as (e: keyof RemotingClientEvents, ...a: unknown[]) => void).call(this, event, ...args),
  );

  /** At start: connect, disconnect and requestTimeout come from the client instance's remoting client. */
  attach(remoting: RemotingClient): void {
    this.relay.attach(remoting);
  }

  /** on() was called: start observing the remoting client if that event is one of its. */
  listening(): void {
    this.relay.listening();
  }

  /** At shutdown, once the last requests are done. */
  detach(): void {
    this.relay.detach();
  }
}

/** The consumer's metrics (lib/metrics), or null when metrics are off; gauges read `table` at collection. */
export async function startConsumerMetrics(
  options: MetricsOptions | undefined,
  clientId: string,
  consumerGroup: string,
  table?: () => Iterable<{ mq: MessageQueue; pq: ProcessQueue }>,
): Promise<ConsumerMetrics | null> {
  const meter = await resolveMeter(options);
  if (!meter) return null;
  const cached = table
    ? function* (): Iterable<CachedQueue> {
        for (const { mq, pq } of table())
          if (!pq.dropped) yield { topic: mq.topic, messages: pq.msgCount, bytes: pq.msgSize };
      }
    : undefined;
  return new ConsumerMetrics(meter, clientId, consumerGroup, cached);
}
