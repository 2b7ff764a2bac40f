import { OptionError, ResponseCode, RocketwireError } from '../../protocol/index.js';
import { isRetriableError } from '../../protocol/errors.js';
import { ClientStateError } from '../client/errors.js';
import { BrokerError } from '../remoting/index.js';

/**
 * A consumer option outside its allowed range or of the wrong type; `option` names it. An OptionError, as the producer's and client's are.
 * @category Errors
 */
export class ConsumerOptionError extends OptionError {
  override readonly name = 'ConsumerOptionError';
  override readonly errorCode = 'ERR_CONSUMER_OPTION';
  constructor(option: string, message: string, options?: { cause?: unknown }) {
    super(option, `consumer option "${option}": ${message}`, options);
  }
}

/**
 * The consumer was used in a state that does not allow the call (e.g. start twice).
 * @category Errors
 */
export class ConsumerStateError extends ClientStateError {
  override readonly name = 'ConsumerStateError';
  override readonly errorCode = 'ERR_CONSUMER_STATE';
}

/**
 * No address of the broker is known, even after refreshing the topic's route: the consumer cannot
 * pull from it, query or commit its offsets, lock its queues or send messages back to it.
 */
export class BrokerAddressNotFoundError extends RocketwireError {
  override readonly name = 'BrokerAddressNotFoundError';
  override readonly errorCode = 'ERR_BROKER_ADDRESS_NOT_FOUND';
  override readonly retriable: boolean = true;
  readonly brokerName: string;
  constructor(brokerName: string) {
    super(`broker ${brokerName} has no known address`);
    this.brokerName = brokerName;
  }
}

/** The retry topic %RETRY%group has no writable queue, so a failed message cannot be republished. */
export class NoRetryQueueError extends RocketwireError {
  override readonly name = 'NoRetryQueueError';
  override readonly errorCode = 'ERR_NO_RETRY_QUEUE';
  override readonly retriable: boolean = true;
  readonly topic: string;
  constructor(topic: string) {
    super(`no writable queue for ${topic}`);
    this.topic = topic;
  }
}

/** Neither CONSUMER_SEND_MSG_BACK nor the republish to the retry topic stored the message. */
export class SendBackFailedError extends RocketwireError {
  override readonly name = 'SendBackFailedError';
  override readonly errorCode = 'ERR_SEND_BACK_FAILED';
  override readonly retriable: boolean = true;
  readonly msgId: string;
  constructor(msgId: string) {
    super(`message ${msgId} could not be sent back`);
    this.msgId = msgId;
  }
}

/**
 * The BROADCASTING offsets file and its `.bak` exist but neither can be read. The consumer does
 * not start (as Java's LocalFileOffsetStore.load throws): starting empty would consume from the
 * start policy and the next flush would overwrite the only copy of the offsets.
 * @category Errors
 */
export class OffsetFileError extends RocketwireError {
  override readonly name = 'OffsetFileError';
  override readonly errorCode = 'ERR_OFFSET_FILE';
  readonly file: string;
  constructor(file: string, detail: string) {
    super(`offsets file ${file}: ${detail}`);
    this.file = file;
  }
}

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
 * The broker refused a SQL92 subscription at start (CHECK_CLIENT_CONFIG), or could not be asked.
 * `propertyFilterDisabled` is true when the broker runs without enablePropertyFilter; `code` and
 * `remark` are its answer (undefined when the request failed on the way).
 * @category Errors
 */
export class SqlFilterRefusedError extends RocketwireError {
  override readonly name = 'SqlFilterRefusedError';
  override readonly errorCode = 'ERR_SQL_FILTER_REFUSED';
  /** False when the broker answered (its refusal stands); as the cause's when it could not be asked. */
  override readonly retriable: boolean;
  readonly topic: string;
  readonly brokerAddr: string;
  readonly code: number | undefined;
  readonly remark: string | undefined;
  readonly propertyFilterDisabled: boolean;
  constructor(topic: string, brokerAddr: string, cause: unknown) {
    const be = cause instanceof BrokerError ? cause : null;
    const disabled =
      be !== null &&
      be.code === ResponseCode.SYSTEM_ERROR &&
      (be.remark ?? '').startsWith('The broker does not support consumer to filter');
    const why = be
      ? `${be.remark ?? `code ${be.code}`}${disabled ? ' (start the broker with enablePropertyFilter=true)' : ''}`
      : `CHECK_CLIENT_CONFIG failed: ${(cause as Error)?.message ?? String(cause)}`;
    super(`broker ${brokerAddr} refuses the SQL92 subscription of topic ${topic}: ${why}`, { cause });
    this.topic = topic;
    this.brokerAddr = brokerAddr;
    this.code = be?.code;
    this.remark = be?.remark ?? undefined;
    this.propertyFilterDisabled = disabled;
    this.retriable = be === null && isRetriableError(cause);
  }
}

/**
 * The peer cannot serve POP over remoting: a 5.x proxy (its route lists itself as every broker,
 * and its remoting POP path does not work, see docs/protocol-facts.md#the-5x-proxy), or a broker that answers
 * REQUEST_CODE_NOT_SUPPORTED (a 4.x broker, or a POP code that arrived truncated).
 * @category Errors
 */
export class PopNotSupportedError extends RocketwireError {
  override readonly name = 'PopNotSupportedError';
  override readonly errorCode = 'ERR_POP_NOT_SUPPORTED';
  readonly addr: string;
  readonly reason: 'proxy' | 'request-code-not-supported';
  constructor(addr: string, reason: 'proxy' | 'request-code-not-supported', options?: { cause?: unknown }) {
    super(
      reason === 'proxy'
        ? `${addr} is a RocketMQ proxy: POP over remoting does not work through the 5.x proxy; point the consumer at the brokers' name server`
        : `${addr} does not support POP (REQUEST_CODE_NOT_SUPPORTED): POP needs a 5.x broker`,
      options,
    );
    this.addr = addr;
    this.reason = reason;
  }
}
