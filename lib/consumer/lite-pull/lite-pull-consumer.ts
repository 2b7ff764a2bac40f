import type { ConsumerHealth } from '../core/health.js';
import type { MessageQueue } from '../../../protocol/index.js';
import type { PushConsumerEvents } from '../core/consumer-events.js';
import { LitePullConsumerImpl, type LitePullConsumerState } from './lite-pull-consumer-impl.js';
import type { LitePullConsumerOptions } from './lite-pull-options.js';
import type { MessageExt } from '../core/message.js';
import { liteBatches, liteMessages } from './lite-pull-iterator.js';
import { takeNamespace } from '../../client/index.js';
import type { SubscriptionExpression } from '../core/sql-subscription.js';
import { consumerGroupWithNamespace, topicWithNamespace } from '../push/consumer-namespace.js';
import { iterateOut, messagesOut, queueIn, queuesIn, queuesOut } from './lite-pull-namespace.js';

export type { LitePullConsumerState } from './lite-pull-consumer-impl.js';

let implOf: (consumer: LitePullConsumer) => LitePullConsumerImpl;

/**
 * RocketMQ's lite pull consumer (DefaultLitePullConsumer): the application asks for messages with
 * `poll()` while the consumer pulls ahead of it into a bounded cache per queue. Either `subscribe()`
 * (the group's rebalance, with the push consumer's allocation strategies, so it can share a group with
 * Java lite pull consumers) or `assign()` (fixed queues, no rebalance).
 *
 * ```ts
 * const consumer = new LitePullConsumer({ consumerGroup: 'cg', namesrvAddr: '127.0.0.1:9876' });
 * consumer.subscribe('TopicTest', '*');
 * await consumer.start();
 * for (;;) {
 *   const msgs = await consumer.poll();          // up to pullBatchSize, waits up to pollTimeoutMs
 *   for (const m of msgs) handle(m);             // committed at a later poll (autoCommit), or commitSync()
 * }
 * ```
 * @category Consuming
 */
export class LitePullConsumer {
  readonly #impl: LitePullConsumerImpl;
  /** The `namespace` option (lite-pull-namespace.ts). */
  readonly #ns: string | undefined;

  static {
    implOf = (consumer) => consumer.#impl;
  }

  constructor(options: LitePullConsumerOptions) {
    const { namespace, rest } = takeNamespace(options);
    this.#ns = namespace;
    this.#impl = new LitePullConsumerImpl(consumerGroupWithNamespace(namespace, rest));
  }

  /** The consumer's state: CREATED, STARTING, RUNNING, SHUTTING_DOWN or SHUTDOWN. */
  get state(): LitePullConsumerState {
    return this.#impl.state;
  }

  /** The client id the group sees (ip@instance), known after start. */
  get clientId(): string {
    return this.#impl.clientId;
  }

  /** The consumer group. */
  get groupName(): string {
    return this.#impl.groupName;
  }

  /**
   * Subscribe mode: the topic's queues are shared with the group by the rebalance. Not with
   * assign(). `expression` is a tag expression or `{ sql }` (SQL92 over message properties: start()
   * has the broker check it, CHECK_CLIENT_CONFIG, and fails when the broker refuses it).
   */
  subscribe(topic: string, expression: SubscriptionExpression = '*'): this {
    this.#impl.subscribe(topicWithNamespace(this.#ns, topic), expression);
    return this;
  }

  /** Subscribe mode: stops consuming the topic; its queues and their cached messages are dropped at once. */
  unsubscribe(topic: string): this {
    this.#impl.unsubscribe(topicWithNamespace(this.#ns, topic));
    return this;
  }

  /** Assign mode: consume exactly these queues, no rebalance (the heartbeat carries no subscription). Not with subscribe(). */
  assign(queues: readonly MessageQueue[]): this {
    this.#impl.assign(Array.isArray(queues) ? queuesIn(this.#ns, queues) : queues);
    return this;
  }

  /** Client instance, routes, heartbeat, then the first rebalance (subscribe) or the assigned queues' pulls. */
  start(): Promise<void> {
    return this.#impl.start();
  }

  /** Stops pulling, persists the committed offsets, unregisters from the brokers. */
  shutdown(): Promise<void> {
    return this.#impl.shutdown();
  }

  /** start(), under the name Node clients use. */
  connect(): Promise<void> {
    return this.start();
  }

  /** shutdown(), under the name Node clients use. */
  close(): Promise<void> {
    return this.shutdown();
  }

  /** `await using consumer = new LitePullConsumer(…)` shuts it down at the end of the block. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.shutdown();
  }

  /** What a readiness probe needs, as plain data: state, the last name-server answer, heartbeats, the held queues. */
  health(): ConsumerHealth {
    return this.#impl.health();
  }

  /**
   * One batch of up to pullBatchSize messages of one queue, the oldest pulled, waiting up to `timeoutMs`
   * (default pollTimeoutMs, 5 s) when nothing is cached; [] when nothing came. With autoCommit, what
   * earlier polls returned is committed first once autoCommitIntervalMs has passed.
   */
  poll(timeoutMs?: number): Promise<MessageExt[]> {
    return this.#impl.poll(timeoutMs).then((msgs) => messagesOut(this.#ns, msgs));
  }

  /** Queues held now. */
  assignment(): MessageQueue[] {
    return queuesOut(this.#ns, this.#impl.assignment());
  }

  /** Readable queues of a topic from its route (fresh from the name server). */
  fetchMessageQueues(topic: string): Promise<MessageQueue[]> {
    return this.#impl.fetchMessageQueues(topicWithNamespace(this.#ns, topic)).then((qs) => queuesOut(this.#ns, qs));
  }

  /**
   * Restarts a held queue at `offset` (min ≤ offset ≤ max, else ConsumerOptionError): its cached
   * messages are dropped and its next pull starts there; the next commit of it stores `offset` until
   * poll() returns more.
   */
  seek(mq: MessageQueue, offset: number): Promise<void> {
    return this.#impl.seek(queueIn(this.#ns, mq), offset);
  }

  /** Restarts a held queue at its first offset (the broker's min offset), as seek(). */
  seekToBegin(mq: MessageQueue): Promise<void> {
    return this.#impl.seekToBegin(queueIn(this.#ns, mq));
  }

  /** Restarts a held queue at its end (the broker's max offset), as seek(). */
  seekToEnd(mq: MessageQueue): Promise<void> {
    return this.#impl.seekToEnd(queueIn(this.#ns, mq));
  }

  /** Stops pulling these held queues (what is cached can still be polled); they stay assigned. */
  pause(queues: readonly MessageQueue[]): this {
    this.#impl.pause(queuesIn(this.#ns, queues));
    return this;
  }

  /** Pulls these paused queues again. */
  resume(queues: readonly MessageQueue[]): this {
    this.#impl.resume(queuesIn(this.#ns, queues));
    return this;
  }

  /** True for a paused held queue, and (as Java) for a queue that is not held. */
  isPaused(mq: MessageQueue): boolean {
    return this.#impl.isPaused(queueIn(this.#ns, mq));
  }

  /** The committed offset of a queue: in memory, else the broker's; −1 when there is none. */
  committed(mq: MessageQueue): Promise<number> {
    return this.#impl.committed(queueIn(this.#ns, mq));
  }

  /**
   * Commits what poll() has returned on every held queue. Java's commitSync() only updates the
   * in-memory offsets, which reach the broker every persistOffsetIntervalMs and at shutdown;
   * `persist: true` also sends them now (oneway UPDATE_CONSUMER_OFFSET).
   */
  commitSync(opts: { persist?: boolean } = {}): Promise<void> {
    return this.#impl.commitSync(opts.persist ?? false);
  }

  /** Commits the given offsets (the next offset to consume) of held queues; `persist` as commitSync. */
  commit(offsets: Iterable<readonly [MessageQueue, number]>, opts: { persist?: boolean } = {}): Promise<void> {
    const ns = this.#ns;
    const wrapped = ns ? Array.from(offsets, ([mq, o]) => [queueIn(ns, mq), o] as const) : offsets;
    return this.#impl.commit(wrapped, opts.persist ?? false);
  }

  /** The offset of the first message stored at or after `timestampMs` (SEARCH_OFFSET_BY_TIMESTAMP). */
  offsetForTimestamp(mq: MessageQueue, timestampMs: number): Promise<number> {
    return this.#impl.offsetForTimestamp(queueIn(this.#ns, mq), timestampMs);
  }

  /**
   * Async iteration over single messages with backpressure: nothing is polled while the loop body
   * runs, so the pulls stop at the flow-control limits. A message is committed (in memory, persisted
   * every persistOffsetIntervalMs and at shutdown) once the loop asks for the next one; `break`, a
   * throw or `return` shut the consumer down, leaving the message being handled and everything after
   * it uncommitted, so they are delivered again.
   */
  messages(): AsyncGenerator<MessageExt, void, undefined> {
    return iterateOut(this.#ns, liteMessages(this.#impl));
  }

  /** As messages(), one polled batch (up to pullBatchSize, of one queue) at a time, committed when the loop moves past it. */
  batches(): AsyncGenerator<MessageExt[], void, undefined> {
    return iterateOut(this.#ns, liteBatches(this.#impl));
  }

  /** `for await (const msg of consumer)`: the same as messages(). */
  [Symbol.asyncIterator](): AsyncGenerator<MessageExt, void, undefined> {
    return this.messages();
  }

  /**
   * 'undecodable' (a stored message that cannot be decoded, e.g. a body over maxInflatedBodyBytes:
   * reported with its queue and offset, then passed), 'brokerError', 'brokerReachable',
   * 'nameServerError' and 'nameServerReachable' (see PushConsumerEvents).
   */
  on<E extends 'undecodable' | 'brokerError' | 'brokerReachable' | 'nameServerError' | 'nameServerReachable'>(
    event: E,
    listener: (...args: PushConsumerEvents[E]) => void,
  ): () => void {
    return this.#impl.events.on(event, listener);
  }

  /** Removes a listener added with on(). */
  off<E extends keyof PushConsumerEvents>(event: E, listener: (...args: PushConsumerEvents[E]) => void): this {
    this.#impl.events.off(event, listener);
    return this;
  }
}

/** Internal (tests, bench and this folder): the implementation behind a lite pull consumer. Not exported by the package. */
export function litePullConsumerImpl(consumer: LitePullConsumer): LitePullConsumerImpl {
  return implOf(consumer);
}
