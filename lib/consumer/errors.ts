import { RocketwireError } from '../../protocol/index.js';

/** An option outside its allowed range or of the wrong type; `option` names it. */
export class ConsumerOptionError extends RocketwireError {
  override readonly name = 'ConsumerOptionError';
  readonly option: string;
  constructor(option: string, message: string, options?: { cause?: unknown }) {
    super(`consumer option "${option}": ${message}`, options);
    this.option = option;
  }
}

/** The consumer was used in a state that does not allow the call (e.g. start twice). */
export class ConsumerStateError extends RocketwireError {
  override readonly name = 'ConsumerStateError';
  readonly state: string;
  constructor(state: string, message: string) {
    super(message);
    this.state = state;
  }
}

/**
 * No address of the broker is known, even after refreshing the topic's route: the consumer cannot
 * pull from it, query or commit its offsets, lock its queues or send messages back to it.
 */
export class BrokerAddressNotFoundError extends RocketwireError {
  override readonly name = 'BrokerAddressNotFoundError';
  readonly brokerName: string;
  constructor(brokerName: string) {
    super(`broker ${brokerName} has no known address`);
    this.brokerName = brokerName;
  }
}

/** The retry topic %RETRY%group has no writable queue, so a failed message cannot be republished. */
export class NoRetryQueueError extends RocketwireError {
  override readonly name = 'NoRetryQueueError';
  readonly topic: string;
  constructor(topic: string) {
    super(`no writable queue for ${topic}`);
    this.topic = topic;
  }
}

/** Neither CONSUMER_SEND_MSG_BACK nor the republish to the retry topic stored the message. */
export class SendBackFailedError extends RocketwireError {
  override readonly name = 'SendBackFailedError';
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
 */
export class OffsetFileError extends RocketwireError {
  override readonly name = 'OffsetFileError';
  readonly file: string;
  constructor(file: string, detail: string) {
    super(`offsets file ${file}: ${detail}`);
    this.file = file;
  }
}
