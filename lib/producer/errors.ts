import { OptionError, RocketwireError, isRetriableError } from '../../protocol/errors.js';
import { ClientStateError } from '../client/errors.js';

/**
 * Raised for a producer option outside its range; `option` names it.
 * @category Errors
 */
export class ProducerOptionError extends OptionError {
  override readonly name = 'ProducerOptionError';
  override readonly errorCode = 'ERR_PRODUCER_OPTION';
  constructor(option: string, message: string) {
    super(option, `option ${option}: ${message}`);
  }
}

/**
 * A producer call made before `start()` resolved or after `shutdown()` (send, request, sendReply,
 * fetchPublishMessageQueues…), or a second `start()`. `state` is the producer's state at the call:
 * CREATED, RUNNING or SHUTDOWN.
 * @category Errors
 */
export class ProducerStateError extends ClientStateError {
  override readonly name = 'ProducerStateError';
  override readonly errorCode = 'ERR_PRODUCER_STATE';
}

/**
 * One failed attempt of a send.
 * @category Producing
 */
export interface SendAttemptFailure {
  /** The broker the attempt went to. */
  brokerName: string;
  /** The queue's id on that broker. */
  queueId: number;
  /** Why the attempt failed. */
  error: Error;
}

/**
 * A send that used up its attempts or its time budget. `attempts` lists each failed try in order; the
 * last error is the `cause`.
 * @category Errors
 */
export class SendFailedError extends RocketwireError {
  override readonly name = 'SendFailedError';
  override readonly errorCode = 'ERR_SEND_FAILED';
  /**
   * As the last attempt's error: the producer throws a final error itself and wraps only
   * retriable ones here, so a used-up budget or used-up retries are worth another send later.
   */
  override readonly retriable: boolean;
  readonly topic: string;
  readonly attempts: SendAttemptFailure[];
  readonly timedOut: boolean;
  constructor(topic: string, attempts: SendAttemptFailure[], elapsedMs: number, timedOut: boolean) {
    const last = attempts[attempts.length - 1];
    const why = timedOut
      ? `time budget used up after ${Math.round(elapsedMs)} ms`
      : `${attempts.length} attempt(s) in ${Math.round(elapsedMs)} ms`;
    const detail = last ? `; last: ${last.brokerName}: ${last.error.message.split('\n')[0]}` : '';
    super(`send to topic ${topic} failed: ${why}${detail}`, last ? { cause: last.error } : undefined);
    this.topic = topic;
    this.attempts = attempts;
    this.timedOut = timedOut;
    this.retriable = last === undefined ? timedOut : isRetriableError(last.error);
  }
}

/**
 * The topic has no route and no auto-create template route either.
 * @category Errors
 */
export class NoRouteError extends RocketwireError {
  override readonly name = 'NoRouteError';
  override readonly errorCode = 'ERR_NO_ROUTE';
  override readonly retriable: boolean = true;
  readonly topic: string;
  constructor(topic: string, detail: string, options?: { cause?: unknown }) {
    super(`no route for topic ${topic}: ${detail}`, options);
    this.topic = topic;
  }
}

/**
 * A message that fails the checks Java's Validators.checkMessage makes; `field` names the culprit.
 * @category Errors
 */
export class MessageValidationError extends RocketwireError {
  override readonly name = 'MessageValidationError';
  override readonly errorCode = 'ERR_MESSAGE_INVALID';
  readonly field: string;
  constructor(field: string, message: string) {
    super(message);
    this.field = field;
  }
}

/**
 * No reply came within the request's timeout (Java's RequestTimeoutException). Retriable: the
 * replier may only have been slow, but a new request is a new message it will handle again. `sendOk` says whether
 * the broker had confirmed the request message by then; `correlationId` is the request's
 * CORRELATION_ID, by which a late reply could be matched in the replier's logs.
 * @category Errors
 */
export class RequestTimeoutError extends RocketwireError {
  override readonly name = 'RequestTimeoutError';
  override readonly errorCode = 'ERR_REQUEST_TIMEOUT';
  override readonly retriable: boolean = true;
  readonly topic: string;
  readonly correlationId: string;
  readonly timeoutMs: number;
  readonly sendOk: boolean;
  constructor(topic: string, correlationId: string, timeoutMs: number, sendOk: boolean) {
    const sent = sendOk ? 'the broker stored the request' : 'the broker had not yet confirmed storing the request';
    super(
      `no reply to the request sent to topic ${topic} within ${timeoutMs} ms (${sent}; correlation id ${correlationId})`,
    );
    this.topic = topic;
    this.correlationId = correlationId;
    this.timeoutMs = timeoutMs;
    this.sendOk = sendOk;
  }
}

/**
 * With `enableBackpressureForAsyncMode`: a send waited its whole timeout for a permit because
 * `limit` (backPressureForAsyncSendNum: sends in flight, or backPressureForAsyncSendSize: their body
 * bytes) stayed full (Java's RemotingTooMuchRequestException "send message tryAcquire semaphoreAsyncNum
 * timeout"). Nothing was sent. Retriable: the sends in flight settle in time.
 * @category Errors
 */
export class SendBackpressureTimeoutError extends RocketwireError {
  override readonly name = 'SendBackpressureTimeoutError';
  override readonly errorCode = 'ERR_SEND_BACKPRESSURE_TIMEOUT';
  override readonly retriable: boolean = true;
  readonly topic: string;
  readonly limit: 'backPressureForAsyncSendNum' | 'backPressureForAsyncSendSize';
  readonly capacity: number;
  readonly timeoutMs: number;
  constructor(
    topic: string,
    limit: 'backPressureForAsyncSendNum' | 'backPressureForAsyncSendSize',
    capacity: number,
    timeoutMs: number,
  ) {
    super(
      `send to topic ${topic} waited ${timeoutMs} ms for a permit and got none: ${limit} (${capacity}) stayed full; nothing was sent`,
    );
    this.topic = topic;
    this.limit = limit;
    this.capacity = capacity;
    this.timeoutMs = timeoutMs;
  }
}
