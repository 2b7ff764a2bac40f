import { EventEmitter } from 'node:events';
import { RocketwireError } from '../../../protocol/index.js';
import { isRetriableError } from '../../../protocol/errors.js';
import type { ConsumerInstrumentationEvents } from './events.js';
import { silentLogger, type Logger } from '../../logger.js';
import type { NameServerStatus } from '../../client/mq-client-instance.js';

/**
 * What a consumer did with a stored message it could not decode (UndecodableMessageError's
 * `disposition`):
 * - `skipped`: damaged bytes with no trustworthy record header, passed (nothing to send back);
 * - `sent-back`: push consumer, a whole record (a body over maxInflatedBodyBytes, or one that does
 *   not inflate): sent back as a failed message (retry topic, then the DLQ), as Java's path for a
 *   failed message; the offset is committed past it only once the broker took it back;
 * - `left-unacked`: POP consumers: neither acked nor handed over; the broker hands it out again
 *   when its invisible time ends and moves it to the DLQ after its retries;
 * - `passed`: lite pull consumer: reported, then passed (a lite pull consumer has no send-back).
 * @category Consuming
 */
export type UndecodableDisposition = 'skipped' | 'sent-back' | 'left-unacked' | 'passed';

/**
 * A stored message the consumer could not decode: a record whose body is flagged COMPRESSED but
 * would inflate past `maxInflatedBodyBytes` or does not inflate at all, whose length fields
 * disagree, or damaged bytes between two records of a pull. Java's consumer drops such records
 * without a word (MessageDecoder.decodes stops at the first one, and the consumer moves to the
 * pull's nextBeginOffset, losing every record after it in that pull too); this consumer keeps
 * every decodable message around it and emits this error once per record as the consumer's
 * `'undecodable'` event (and a warn line on its logger). `disposition` says what became of it:
 * a push consumer sends a whole record back as a failed message (retry topic, then DLQ), a POP
 * consumer leaves it unacked (the broker's retry, then DLQ), a lite pull consumer passes it after
 * the event; damaged bytes without a record header are skipped. No offset is committed past a
 * record that was neither consumed nor sent back, except after this event.
 * @category Errors
 */
export class UndecodableMessageError extends RocketwireError {
  override readonly name = 'UndecodableMessageError';
  override readonly errorCode = 'ERR_UNDECODABLE_MESSAGE';
  readonly topic: string;
  readonly brokerName: string;
  readonly queueId: number;
  /**
   * The record's queue offset when `recordIntact`; for damaged bytes, the first queue offset they
   * can hold (the one after the last message decoded before them, or the pull's start offset).
   */
  readonly queueOffset: number;
  /** Commit-log offset read from the record's header (intact records only). */
  readonly physOffset: number | undefined;
  /** True when one whole record (size and magic code intact) was skipped; false for damaged bytes. */
  readonly recordIntact: boolean;
  /** Bytes of the pull body the record (or the damaged stretch) takes. */
  readonly bytes: number;
  /** What was wrong, e.g. "ZLIB body cannot be decompressed: incorrect header check". */
  readonly reason: string;
  /** What the consumer did with it. */
  readonly disposition: UndecodableDisposition;
  /** The option whose limit refused it (`maxInflatedBodyBytes`), when a limit did. */
  readonly option: string | undefined;
  /** That option's value, in bytes. */
  readonly limit: number | undefined;

  constructor(f: {
    topic: string;
    brokerName: string;
    queueId: number;
    queueOffset: number;
    physOffset?: number | undefined;
    recordIntact: boolean;
    bytes: number;
    reason: string;
    disposition?: UndecodableDisposition;
    option?: string | undefined;
    limit?: number | undefined;
  }) {
    const where = `${f.topic} ${f.brokerName}/${f.queueId}`;
    const disposition = f.disposition ?? 'skipped';
    const at = `${where}@${f.queueOffset}${f.physOffset !== undefined ? ` (commit-log offset ${f.physOffset})` : ''}`;
    let message: string;
    if (!f.recordIntact)
      message = `skipped ${f.bytes} damaged bytes of ${where} from queue offset ${f.queueOffset} on: ${f.reason}`;
    else if (disposition === 'sent-back')
      message = `sent back the undecodable message at ${at} (retry topic, then DLQ): ${f.reason}`;
    else if (disposition === 'left-unacked')
      message = `left the undecodable message at ${at} unacked (the broker redelivers it, then moves it to the DLQ): ${f.reason}`;
    else if (disposition === 'passed') message = `passed the undecodable message at ${at}: ${f.reason}`;
    else message = `skipped the undecodable message at ${at}: ${f.reason}`;
    super(message);
    this.topic = f.topic;
    this.brokerName = f.brokerName;
    this.queueId = f.queueId;
    this.queueOffset = f.queueOffset;
    this.physOffset = f.physOffset;
    this.recordIntact = f.recordIntact;
    this.bytes = f.bytes;
    this.reason = f.reason;
    this.disposition = disposition;
    this.option = f.option;
    this.limit = f.limit;
  }
}

/**
 * Requests whose failure the consumer reports with a ConsumerBrokerError.
 * @category Consuming
 */
export type ConsumerBrokerRequest =
  | 'PULL_MESSAGE'
  | 'GET_CONSUMER_LIST_BY_GROUP'
  | 'QUERY_CONSUMER_OFFSET'
  | 'GET_MAX_OFFSET'
  | 'SEARCH_OFFSET_BY_TIMESTAMP'
  | 'LOCK_BATCH_MQ';

/**
 * A request of the consumer to a broker failed: the broker refused the connection, did not answer
 * in time, answered garbage or an error code. The consumer retries on its own (a pull after
 * pullTimeDelayMillsWhenException, the rest at the next rebalance); this error is the consumer's
 * `'brokerError'` event, emitted for every failure, so that an application can say what is wrong.
 * `cause` is the remoting or broker error.
 * @category Errors
 */
export class ConsumerBrokerError extends RocketwireError {
  override readonly name = 'ConsumerBrokerError';
  override readonly errorCode = 'ERR_CONSUMER_BROKER_REQUEST';
  /** As its cause's (a timeout or lost connection is; a refusal such as NO_PERMISSION is not). */
  override readonly retriable: boolean;
  readonly brokerName: string;
  /** The address asked, when one was known. */
  readonly addr: string | undefined;
  readonly request: ConsumerBrokerRequest;
  constructor(brokerName: string, addr: string | undefined, request: ConsumerBrokerRequest, cause: unknown) {
    const why = cause instanceof Error ? cause.message : String(cause);
    super(`${request} to broker ${brokerName}${addr !== undefined ? ` (${addr})` : ''} failed: ${why.split('\n')[0]}`, {
      cause,
    });
    this.brokerName = brokerName;
    this.addr = addr;
    this.request = request;
    this.retriable = isRetriableError(cause);
  }
}

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
  private readonly emitter = new EventEmitter();
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

  on<E extends keyof PushConsumerEvents>(event: E, listener: (...args: PushConsumerEvents[E]) => void): void {
    this.emitter.on(event, listener as (...args: unknown[]) => void);
  }
  off<E extends keyof PushConsumerEvents>(event: E, listener: (...args: PushConsumerEvents[E]) => void): void {
    this.emitter.off(event, listener as (...args: unknown[]) => void);
  }
  /** Someone listens to `event` (events.ts builds no payload otherwise). */
  has(event: keyof PushConsumerEvents): boolean {
    return this.emitter.listenerCount(event) > 0;
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
      this.logger.warn(
        `${this.label}: broker ${brokerName}${addr !== undefined ? ` (${addr})` : ''} is not answering: ${request} failed: ${why}`,
      );
    }
    this.health.set(brokerName, true);
    if (this.emitter.listenerCount('brokerError') > 0)
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
