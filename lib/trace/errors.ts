import { RocketwireError, isRetriableError } from '../../protocol/errors.js';

/**
 * A trace message that could not be sent (no route to the trace topic, the broker refused it, …).
 * The dispatcher counts these and logs them under rocketwire:trace; it never throws them into a
 * send or a consumption.
 * @category Errors
 */
export class TraceSendError extends RocketwireError {
  override readonly name = 'TraceSendError';
  override readonly errorCode = 'ERR_TRACE_SEND';
  /** As its cause's; false when there is none (closed trace producer, no queue, no master). */
  override readonly retriable: boolean;
  readonly topic: string;
  constructor(topic: string, message: string, options?: { cause?: unknown }) {
    super(`trace topic ${topic}: ${message}`, options);
    this.topic = topic;
    this.retriable = isRetriableError(options?.cause);
  }
}
