import type { ConsumerInstrumentationEvents } from './events.js';
import { silentLogger, type Logger } from '../../logger.js';
import type { NameServerStatus } from '../../client/mq-client-instance.js';
import { ConsumerBrokerError, type ConsumerBrokerRequest, type UndecodableMessageError } from '../errors.js';
import { TypedEmitter } from '../../emitter.js';
import { BrokerError } from '../../remoting/index.js';

/**
 * A broker answered again (or for the first time): the `'brokerReachable'` event.
 * @category Consuming
 */
export interface BrokerReachable {
  /** The broker's name. */
  brokerName: string;
  /** The broker's address ("host:port"). */
  addr: string;
  /** The request that was answered. */
  request: ConsumerBrokerRequest;
  /** True when it answered after failures reported as `'brokerError'`. */
  recovered: boolean;
}

/**
 * The events of a PushConsumer (`consumer.on(name, listener)`). None is an `'error'` event, so a
 * consumer without listeners never throws from an emit.
 * - `undecodable`: a stored message was skipped because it cannot be decoded; once per record.
 * - `brokerError`: a request to a broker failed (every failure; the consumer retries by itself).
 * - `brokerReachable`: a broker answered for the first time (and its first pull), or again after
 *   `brokerError`s.
 * - the instrumentation events of events.ts (ConsumerEvents: rebalance, pull, flow control, …).
 * @category Consuming
 */
export interface PushConsumerEvents extends ConsumerInstrumentationEvents {
  /** A stored message cannot be decoded: sent back, left unacked or skipped (once per record; see its disposition). */
  undecodable: [error: UndecodableMessageError];
  /** A request to a broker failed (the consumer retries by itself). */
  brokerError: [error: ConsumerBrokerError];
  /** A broker answered for the first time, or again after failures. */
  brokerReachable: [info: BrokerReachable];
  /** A name server did not answer (every failure; the client moves on to the next one and retries). */
  nameServerError: [info: NameServerStatus & { error: Error }];
  /** A name server answers again after `nameServerError`s. */
  nameServerReachable: [info: { addr: string }];
  /**
   * The handler returned or resolved something that is not a status of its mode (a typo such as
   * 'CONSUME_SUCESS', a number, an object): the messages are retried as for RECONSUME_LATER, and
   * the value is logged at warn once per consumer and value.
   */
  handlerResultInvalid: [info: HandlerResultInvalid];
  /** The duplicate guard dropped a delivery whose key was consumed before (acked or committed without the handler). */
  duplicate: [
    info: {
      /** The topic of the message. */
      topic: string;
      /** The key it was recognised by (UNIQ_KEY, or the broker's msgId when it has none). */
      key: string;
      /** Its queue. */
      queueId: number;
      /** Its offset in the queue. */
      queueOffset: number;
      /** Its reconsumeTimes as delivered. */
      reconsumeTimes: number;
    },
  ];
}

/**
 * The payload of `'handlerResultInvalid'`.
 * @category Consuming
 */
export interface HandlerResultInvalid {
  /** What the handler returned (a string, or the typeof of anything else). */
  value: string;
  /** The topic of the messages. */
  topic: string;
  /** Messages of the call, retried. */
  count: number;
}

/** Skipped records remembered so that a pull repeated over the same offsets reports each once. */
const MAX_REMEMBERED_UNDECODABLE = 10_000;

/** The consumer's event emitter and the little state behind its events. Internal. */
export class ConsumerEvents {
  private readonly emitter = new TypedEmitter<PushConsumerEvents>();
  /** Where warn lines go; set by the consumer once its options are resolved. */
  logger: Logger = silentLogger;
  /** "consumer <group>", the start of every log line. */
  label = 'consumer';
  private readonly invalidResults = new Set<string>();
  private readonly reported = new Set<string>();
  /** brokerName → failing since the last answer. */
  private readonly health = new Map<string, boolean>();
  /** Brokers that answered a pull. */
  private readonly pulled = new Set<string>();

  /** Adds a listener; returns its remover. */
  on<E extends keyof PushConsumerEvents>(event: E, listener: (...args: PushConsumerEvents[E]) => void): () => void {
    return this.emitter.on(event, listener);
  }
  off<E extends keyof PushConsumerEvents>(event: E, listener: (...args: PushConsumerEvents[E]) => void): void {
    this.emitter.off(event, listener);
  }
  /** Someone listens to `event` (events.ts builds no payload otherwise). */
  has(event: keyof PushConsumerEvents): boolean {
    return this.emitter.listening(event);
  }
  emit<E extends keyof PushConsumerEvents>(event: E, ...args: PushConsumerEvents[E]): void {
    this.emitter.emit(event, ...args);
  }

  /** Emits `undecodable` unless this record (by queue and offset or byte stretch) was reported already. */
  undecodable(err: UndecodableMessageError): void {
    const key = `${err.topic}@${err.brokerName}@${err.queueId}@${err.queueOffset}@${err.recordIntact ? '' : err.bytes}`;
    if (this.reported.has(key)) return;
    if (this.reported.size >= MAX_REMEMBERED_UNDECODABLE)
      this.reported.delete(this.reported.values().next().value as string);
    this.reported.add(key);
    this.logger.warn(`${this.label}: ${err.message}`);
    this.emitter.emit('undecodable', err);
  }

  brokerFailed(brokerName: string, addr: string | undefined, request: ConsumerBrokerRequest, cause: unknown): void {
    if (this.health.get(brokerName) !== true) {
      const why = cause instanceof Error ? cause.message.split('\n')[0] : String(cause);
      const broker = `broker ${brokerName}${addr !== undefined ? ` (${addr})` : ''}`;
      // A broker that answered with an error code (SYSTEM_BUSY, a refused request) is up: say so.
      this.logger.warn(
        cause instanceof BrokerError
          ? `${this.label}: ${broker} answered ${request} with an error: ${why}`
          : `${this.label}: ${broker} is not answering: ${request} failed: ${why}`,
      );
    }
    this.health.set(brokerName, true);
    if (this.emitter.listening('brokerError'))
      this.emitter.emit('brokerError', new ConsumerBrokerError(brokerName, addr, request, cause));
  }

  /** A request was answered: `brokerReachable` when it is the broker's first answer (of this kind, for pulls) or the first since a failure. */
  brokerAnswered(brokerName: string, addr: string, request: ConsumerBrokerRequest): void {
    const failing = this.health.get(brokerName);
    const firstPull = request === 'PULL_MESSAGE' && !this.pulled.has(brokerName);
    if (failing === false && !firstPull) return;
    this.health.set(brokerName, false);
    if (request === 'PULL_MESSAGE') this.pulled.add(brokerName);
    if (failing === true) this.logger.info(`${this.label}: broker ${brokerName} (${addr}) answers again`);
    this.emitter.emit('brokerReachable', { brokerName, addr, request, recovered: failing === true });
  }

  /** A name-server failure or recovery from the client instance: the two name-server events. */
  nameServerStatus(status: NameServerStatus): void {
    if (status.error) this.emitter.emit('nameServerError', status as NameServerStatus & { error: Error });
    else this.emitter.emit('nameServerReachable', { addr: status.addr });
  }

  /** A handler result that is no status: logged at warn once per value, emitted every time. */
  invalidHandlerResult(value: unknown, topic: string, count: number, expected: string): void {
    const shown = typeof value === 'string' ? value : `a value of type ${value === null ? 'null' : typeof value}`;
    if (!this.invalidResults.has(shown) && this.invalidResults.size < 100) {
      this.invalidResults.add(shown);
      this.logger.warn(
        `${this.label}: the handler returned ${typeof value === 'string' ? JSON.stringify(value) : shown}, which is not a status (${expected}); ` +
          'the messages will be retried. Return nothing (or the status constant) to acknowledge, throw to retry.',
      );
    }
    this.emitter.emit('handlerResultInvalid', { value: shown, topic, count });
  }
}
