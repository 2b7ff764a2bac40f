import { OptionError, RocketwireError } from '../../protocol/index.js';
import { ClientStateError } from '../client/errors.js';

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
