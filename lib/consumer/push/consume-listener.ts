import type { ConsumerMetrics, TracingOptions } from '../../metrics/index.js';
import { checkMetricsOptions, checkTracingOptions, resolveTracing } from '../../metrics/index.js';
import type { MessageListener } from '../core/consume-types.js';
import type { ConsumerConfig } from '../core/consumer-config.js';
import { createDuplicateGuard, type DuplicateGuard } from '../core/duplicate-guard.js';
import type { ConsumerEvents } from '../core/consumer-events.js';
import type { PushConsumerOptions } from '../core/options.js';
import { ConsumerOptionError } from '../errors.js';
import { tracedListener } from '../core/traced-listener.js';

/**
 * The handler in the `tracing` option's spans (when on); resolved first thing at start, so that
 * tracing asked for without `@opentelemetry/api` fails start() before anything is acquired.
 */
export async function tracedConsumeListener(
  given: MessageListener,
  tracingOptions: TracingOptions | undefined,
  group: string,
): Promise<MessageListener> {
  const tracing = await resolveTracing(tracingOptions, group);
  if (tracing === 'unavailable') throw new ConsumerOptionError('tracing', 'needs @opentelemetry/api installed');
  return tracing ? tracedListener(tracing, given) : given;
}

/** The handler behind the duplicate guard (when on), whose drops the metrics count. */
export function guardedConsumeListener(
  listener: MessageListener,
  guard: DuplicateGuard | null,
  orderly: boolean,
  metrics: ConsumerMetrics | null,
): MessageListener {
  if (!guard) return listener;
  metrics?.observeDuplicates(() => guard.droppedByTopic);
  return guard.wrap(listener, orderly);
}

/** The `metrics` and `tracing` options checked at construction (ConsumerOptionError naming the bad one). */
export function checkInstrumentOptions(options: PushConsumerOptions): void {
  const bad = checkMetricsOptions(options.metrics) ?? checkTracingOptions(options.tracing);
  if (bad) throw new ConsumerOptionError(bad.option, bad.message);
}

/** The `duplicateGuard` option's guard, whose drops the consumer emits as 'duplicate'; null when off. */
export function consumerDuplicateGuard(
  options: PushConsumerOptions,
  config: ConsumerConfig,
  events: ConsumerEvents,
): DuplicateGuard | null {
  return createDuplicateGuard(options.duplicateGuard, config.clock, config.consumerGroup, {
    dropped: (info) => events.emit('duplicate', info),
    logger: config.logger,
    label: `consumer ${config.consumerGroup}`,
  });
}
