import { RocketwireError } from '../../protocol/index.js';

/**
 * A trace message that could not be sent (no route to the trace topic, the broker refused it, …).
 * The dispatcher counts these and logs them under rocketwire:trace; it never throws them into a
 * send or a consumption.
 */
export class TraceSendError extends RocketwireError {
  override readonly name = 'TraceSendError';
  readonly topic: string;
  constructor(topic: string, message: string, options?: { cause?: unknown }) {
    super(`trace topic ${topic}: ${message}`, options);
    this.topic = topic;
  }
}
