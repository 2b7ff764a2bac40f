import { resolveTracing, type MessagingTracing } from '../metrics/index.js';
import { ProducerOptionError } from './errors.js';
import type { Message } from './message.js';
import type { ResolvedProducerOptions } from './producer-options.js';

/** The producer's spans, or null when the `tracing` option is off; refuses when asked for without `@opentelemetry/api`. */
export async function producerTracing(options: ResolvedProducerOptions): Promise<MessagingTracing | null> {
  const tracing = await resolveTracing(options.tracing, options.group);
  if (tracing === 'unavailable') throw new ProducerOptionError('tracing', 'needs @opentelemetry/api installed');
  return tracing;
}

/**
 * A send inside the `tracing` option's producer span: the message goes out with the span's context
 * in its properties, and the span ends with the send's result or error. Without tracing, the send
 * as it is.
 */
export async function tracedSend<R>(
  tracing: MessagingTracing | null,
  msg: Message,
  send: (msg: Message) => Promise<R>,
): Promise<R> {
  if (!tracing) return send(msg);
  const span = tracing.publish(msg);
  try {
    const result = await send(span.msg);
    span.end((result ?? null) as { msgId?: string } | null);
    return result;
  } catch (err) {
    span.end(null, err);
    throw err;
  }
}
