import type { SubscriptionExpression } from '../core/sql-subscription.js';
import createDebug from '../../debug.js';
import {
  ConsumeConcurrentlyStatus,
  ConsumeOrderlyStatus,
  type ConsumeConcurrentlyContext,
  type ConsumeOrderlyContext,
  type AsyncConsumeResult,
  type MessageListener,
  type MessageListenerConcurrently,
  type MessageListenerOrderly,
} from '../core/consume-types.js';
import { ConsumerOptionError } from '../errors.js';
import type { ConsumerHealth } from '../core/health.js';
import { pushConsumerHealth } from './push-health.js';

const log = createDebug('rocketwire:consumer');
import type { PushConsumerEvents } from '../core/consumer-events.js';
import { ConsumerEvents } from '../core/events.js';
import type { ConsumerStats } from '../core/consumer-stats.js';
import type { MessageExt } from '../core/message.js';
import { EACH_MESSAGE, type EachMessageHolder } from '../core/traced-listener.js';
import type { MessageQueue } from '../../../protocol/index.js';
import type { PushConsumerOptions } from '../core/options.js';
import { PushConsumerImpl, type ConsumerState } from './push-consumer-impl.js';
import { pushBatches, pushMessages } from './push-iterator.js';
import type { PauseTarget } from './pause.js';
import { takeNamespace, type NamespaceOption } from '../../client/index.js';
import { consumerGroupWithNamespace, listenerWithoutNamespace, topicWithNamespace } from './consumer-namespace.js';

export type { ConsumerState } from './push-consumer-impl.js';

/**
 * The handler `start()` and `onMessage()` take: orderly when the consumer was built with
 * `orderly: true`, concurrent otherwise. One signature per consumer (rather than two overloads)
 * keeps the handler contextually typed, so a synchronous `(msgs) => 'CONSUME_SUCCESS'` stays a
 * literal (an async handler's value is checked at run time: see AsyncConsumeResult).
 */
export type PushConsumerListener<Orderly extends boolean> = boolean extends Orderly
  ? MessageListenerEither
  : Orderly extends true
    ? MessageListenerOrderly
    : MessageListenerConcurrently;

/**
 * The handler of a consumer whose `orderly` is only known at run time (a `boolean`): it gets either
 * context and may return either status. Written as a method type so that a handler typed for one of
 * the two modes is accepted too.
 */
export type MessageListenerEither = {
  listener(
    msgs: MessageExt[],
    context: ConsumeConcurrentlyContext | ConsumeOrderlyContext,
  ):
    | ConsumeConcurrentlyStatus
    | ConsumeOrderlyStatus
    | void
    | undefined
    | PromiseLike<AsyncConsumeResult<ConsumeConcurrentlyStatus | ConsumeOrderlyStatus>>;
}['listener'];

/**
 * A per-message handler, as KafkaJS's `eachMessage`: `start({ eachMessage: async (msg) => { … } })`.
 * Resolving (with anything) acknowledges the message; a throw or rejection retries it (concurrent:
 * sent back to the retry topic with the messages of its call not yet handled; orderly: the queue is
 * suspended and the message handed over again). With consumeMessageBatchMaxSize above 1 the
 * messages of one call are handled one after the other.
 * @category Consuming
 */
export interface EachMessageHandler<Orderly extends boolean> {
  /**
   * Called once per message: resolving (with anything) acknowledges it, a throw or rejection retries that
   * message only.
   */
  eachMessage(
    message: MessageExt,
    context: boolean extends Orderly
      ? ConsumeConcurrentlyContext | ConsumeOrderlyContext
      : Orderly extends true
        ? ConsumeOrderlyContext
        : ConsumeConcurrentlyContext,
  ): unknown;
}

/**
 * The batch handler under a name, as KafkaJS's `eachBatch`: the same as passing the function itself.
 * @category Consuming
 */
export interface EachBatchHandler<Orderly extends boolean> {
  /** Called per batch (up to consumeMessageBatchMaxSize messages), with the rule of the batch handler. */
  eachBatch: PushConsumerListener<Orderly>;
}

/**
 * What start() and onMessage() take: a batch handler, `{ eachMessage }` or `{ eachBatch }`.
 * @category Consuming
 */
export type PushConsumerHandler<Orderly extends boolean> =
  | PushConsumerListener<Orderly>
  | EachMessageHandler<Orderly>
  | EachBatchHandler<Orderly>;

/** The batch listener behind a handler given in any of its three shapes. */
function toListener(handler: unknown, orderly: boolean): MessageListener | undefined {
  if (handler === undefined || typeof handler === 'function') return handler as MessageListener | undefined;
  if (handler === null || typeof handler !== 'object') return handler as MessageListener;
  const h = handler as { eachMessage?: unknown; eachBatch?: unknown };
  if (typeof h.eachBatch === 'function' && h.eachMessage === undefined) return h.eachBatch as MessageListener;
  const each = h.eachMessage;
  if (typeof each !== 'function' || h.eachBatch !== undefined) {
    throw new ConsumerOptionError('handler', 'must be a function, { eachMessage } or { eachBatch }');
  }
  // the `tracing` option wraps the per-message function, so each message gets its own span (traced-listener.ts)
  const holder: EachMessageHolder = { each: each as EachMessageHolder['each'] };
  if (orderly) {
    const listener = async (msgs: MessageExt[], ctx: ConsumeOrderlyContext) => {
      // A throw suspends the queue: the whole call is handed over again, in order.
      for (const m of msgs) await holder.each(m, ctx);
      return ConsumeOrderlyStatus.SUCCESS;
    };
    return Object.assign(listener, { [EACH_MESSAGE]: holder }) as MessageListener;
  }
  const listener = async (msgs: MessageExt[], ctx: ConsumeConcurrentlyContext) => {
    for (let i = 0; i < msgs.length; i++) {
      try {
        await holder.each(msgs[i]!, ctx);
      } catch (err) {
        log('eachMessage threw for %s: %s', msgs[i]!.msgId, (err as Error)?.message ?? err);
        // the ones before it are acknowledged; it and those not yet handled go back for a retry
        ctx.ackIndex = i - 1;
        return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
      }
    }
    return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
  };
  return Object.assign(listener, { [EACH_MESSAGE]: holder }) as MessageListener;
}

let implOf: (consumer: PushConsumer<boolean>) => PushConsumerImpl;

/**
 * RocketMQ's push consumer (DefaultMQPushConsumer): rebalances the queues of its subscriptions across
 * the group, long-polls each held queue, caches pulled messages per queue, runs the handler
 * concurrently or orderly, and commits offsets that never pass an unconsumed message. The machinery
 * (DefaultMQPushConsumerImpl) sits in a private field; this class is what users hold.
 *
 * ```ts
 * const consumer = new PushConsumer({ consumerGroup: 'cg', namesrvAddr: '127.0.0.1:9876' });
 * consumer.subscribe('TopicTest', 'TagA || TagB');
 * await consumer.start(async (msgs) => { for (const m of msgs) console.log(m.body.toString()); return 'CONSUME_SUCCESS'; });
 * ...
 * await consumer.shutdown();
 * ```
 * @category Consuming
 */
export class PushConsumer<Orderly extends boolean = false> {
  readonly #impl: PushConsumerImpl;
  /** The `namespace` option (consumer-namespace.ts). */
  readonly #namespace: string | undefined;

  static {
    implOf = (consumer) => consumer.#impl;
  }

  constructor(options: PushConsumerOptions & { orderly?: Orderly } & NamespaceOption) {
    const { namespace, rest } = takeNamespace(options);
    this.#namespace = namespace;
    this.#impl = new PushConsumerImpl(consumerGroupWithNamespace(namespace, rest));
  }

  /** The consumer's state: CREATED, STARTING, RUNNING, SHUTTING_DOWN or SHUTDOWN. */
  get state(): ConsumerState {
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

  /** The `orderly` option: the handler is orderly (one call at a time per queue) when true. */
  get orderly(): Orderly {
    return this.#impl.config.orderly as Orderly;
  }

  /**
   * Subscribes to a topic with a tag expression ("*" or "TagA || TagB"), or with `{ sql }`, a SQL92
   * filter the broker evaluates on message properties (it needs enablePropertyFilter=true; start()
   * fails with SqlFilterRefusedError otherwise); allowed before or after start.
   */
  subscribe(topic: string, expression: SubscriptionExpression = '*'): this {
    this.#impl.subscribe(topicWithNamespace(this.#namespace, topic), expression);
    return this;
  }

  /** Removes a subscription; its queues are dropped at the next rebalance. */
  unsubscribe(topic: string): this {
    this.#impl.unsubscribe(topicWithNamespace(this.#namespace, topic));
    return this;
  }

  /** Sets the handler (concurrent, or orderly when the `orderly` option is on); start() may also take it. */
  // The handler's type is read from `this` (a method type parameter bound to the consumer's Orderly)
  // rather than from two overloads that differ only in the handler: the handler gets the context of
  // the consumer's mode (no implicit any; ctx.autoCommit only when orderly), a concurrent consumer
  // refuses orderly statuses and handlers, and PushConsumer<false> and <true> stay assignable to
  // PushConsumer<boolean> (the class parameter appears only in the `orderly` getter).
  onMessage<O extends boolean>(this: PushConsumer<O>, handler: PushConsumerHandler<O>): PushConsumer<O> {
    this.#impl.onMessage(
      listenerWithoutNamespace(this.#namespace, toListener(handler, this.#impl.config.orderly) as MessageListener),
    );
    return this;
  }

  /**
   * Starts the consumer: client instance, routes, heartbeat, then the first rebalance (awaited), pulls,
   * and the periodic rebalance, offset flush, expiry sweep and (orderly) lock renewal.
   */
  start<O extends boolean>(this: PushConsumer<O>, handler?: PushConsumerHandler<O>): Promise<void> {
    let listener: MessageListener | undefined;
    try {
      listener = toListener(handler, this.#impl.config.orderly);
    } catch (err) {
      return Promise.reject(err as Error);
    }
    return this.#impl.start(listenerWithoutNamespace(this.#namespace, listener));
  }

  /** start(), under the name node-postgres and the MongoDB driver use. */
  connect<O extends boolean>(this: PushConsumer<O>, handler?: PushConsumerHandler<O>): Promise<void> {
    return this.start(handler);
  }

  /**
   * Stops pulling, waits up to awaitTerminationMsWhenShutdown for running handler calls, unlocks
   * (orderly), persists offsets, unregisters from the brokers and releases the client instance.
   */
  shutdown(): Promise<void> {
    return this.#impl.shutdown();
  }

  /** shutdown(), under the name Node clients use. */
  close(): Promise<void> {
    return this.shutdown();
  }

  /** `await using consumer = new PushConsumer(…)` shuts it down at the end of the block. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.shutdown();
  }

  /** What a readiness probe needs, as a plain object (health.ts). */
  health(): ConsumerHealth {
    return pushConsumerHealth(this.#impl);
  }

  /** Pauses pulling and the periodic rebalance (running handler calls finish); resume() rebalances and pulls again. */
  suspend(): void {
    this.#impl.suspend();
  }
  /** Without an argument: the end of suspend(). With topics or queues: the end of pause(target) for them. */
  resume(target?: PauseTarget): void {
    if (target === undefined) this.#impl.resume();
    else this.#impl.pausedQueues.resume(target);
  }

  /** Queues this consumer holds now. */
  assignment(): MessageQueue[] {
    return this.#impl.assignment();
  }

  /** Counters, rates and per-queue cache figures (read by the benchmark). */
  stats(): ConsumerStats {
    return this.#impl.stats();
  }

  /**
   * Listens to an event of the consumer (see PushConsumerEvents): `'undecodable'`
   * (UndecodableMessageError: a stored message that cannot be decoded, e.g. a body over
   * maxInflatedBodyBytes, was sent back to the retry topic, or damaged bytes were skipped; once per
   * record), `'brokerError'` (ConsumerBrokerError: a request to a broker failed; the consumer
   * retries by itself) and `'brokerReachable'` (a broker answered first, or again after failures),
   * and the instrumentation events named by ConsumerEvents (events.ts). Returns the function that
   * removes this listener.
   */
  on<E extends keyof PushConsumerEvents>(event: E, listener: (...args: PushConsumerEvents[E]) => void): () => void {
    const remove = this.#impl.events.on(event, listener);
    this.#impl.instr.listening();
    return remove;
  }

  /** The events' names, as KafkaJS's `consumer.events`: `consumer.on(consumer.events.REBALANCE, …)`. */
  get events(): typeof ConsumerEvents {
    return ConsumerEvents;
  }

  /** Removes a listener added with on(). */
  off<E extends keyof PushConsumerEvents>(event: E, listener: (...args: PushConsumerEvents[E]) => void): this {
    this.#impl.events.off(event, listener);
    return this;
  }

  /**
   * Async iteration (starts the consumer with its own handler): each message is consumed
   * (CONSUME_SUCCESS) when the loop asks for the next one, so a slow loop body holds the pulls at the
   * flow-control limits. `break`, `return` or a throw shut the consumer down; the message being
   * handled and those not yet taken are not committed and are delivered again (push-iterator.ts).
   */
  messages(): AsyncGenerator<MessageExt, void, undefined> {
    return pushMessages(this.#impl, (l) => listenerWithoutNamespace(this.#namespace, l));
  }

  /** As messages(), one handler call's messages (up to consumeMessageBatchMaxSize) at a time. */
  batches(): AsyncGenerator<MessageExt[], void, undefined> {
    return pushBatches(this.#impl, (l) => listenerWithoutNamespace(this.#namespace, l));
  }

  /** `for await (const msg of consumer)`: the same as messages(). */
  [Symbol.asyncIterator](): AsyncGenerator<MessageExt, void, undefined> {
    return this.messages();
  }

  /**
   * Stops pulling a topic's queues or single queues (KafkaJS's pause): they stay assigned, their
   * cached messages are still consumed, and their pull requests wait until resume(target).
   */
  pause(target: PauseTarget): this {
    this.#impl.pausedQueues.pause(target);
    return this;
  }

  /** Topics and queues paused with pause(). */
  paused(): { topics: string[]; queues: MessageQueue[] } {
    return this.#impl.pausedQueues.paused();
  }
}

/** Internal (tests and this folder): the implementation behind a consumer. Not exported by the package. */
export function pushConsumerImpl(consumer: PushConsumer<boolean>): PushConsumerImpl {
  return implOf(consumer);
}
