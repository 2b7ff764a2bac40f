import type { MessagingTracing, TracedMessage } from '../../metrics/index.js';
import { ConsumeConcurrentlyStatus, ConsumeOrderlyStatus } from './consume-types.js';

/** A handler's returned status that asks for the messages again: the consumer span records it as an error. */
function retryStatus(result: unknown): string | null {
  return result === ConsumeConcurrentlyStatus.RECONSUME_LATER ||
    result === ConsumeOrderlyStatus.SUSPEND_CURRENT_QUEUE_A_MOMENT
    ? String(result)
    : null;
}

/** Where a listener built from `{ eachMessage }` keeps the per-message function. */
export const EACH_MESSAGE = Symbol('rocketwire.eachMessage');

/** The per-message function of a listener built from `{ eachMessage }`, replaceable by a wrapper. */
export interface EachMessageHolder {
  each: (msg: TracedMessage, ctx: unknown) => unknown;
}

/**
 * The user's handler inside the `tracing` option's consumer spans: each call runs with its span
 * active (spans the handler makes are its children), and the span ends when the call settles.
 */
export function tracedListener<L extends (msgs: never, ctx: never) => unknown>(
  tracing: MessagingTracing,
  listener: L,
): L {
  const holder = (listener as { [EACH_MESSAGE]?: EachMessageHolder })[EACH_MESSAGE];
  if (holder) {
    // `{ eachMessage }`: a span per message around the user's function, with its own error
    const each = holder.each;
    holder.each = (msg, ctx) => tracing.process([msg], () => each(msg, ctx), retryStatus);
    return listener;
  }
  const traced = (msgs: Parameters<L>[0], ctx: Parameters<L>[1]): unknown =>
    tracing.process(msgs as never, () => listener(msgs, ctx), retryStatus);
  return traced as unknown as L;
}
