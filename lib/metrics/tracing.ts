import createDebug from '../debug.js';
import type {
  ContextLike,
  OtelTraceApi,
  SpanLike,
  TextMapPropagatorLike,
  TracerLike,
  TracerProviderLike,
} from './otel-trace-types.js';

const log = createDebug('rocketwire:tracing');

/** The instrumentation scope of rocketwire's spans. */
export const TRACER_NAME = 'rocketwire';

/**
 * The `tracing` option of Producer, PushConsumer, LitePullConsumer and SimpleConsumer: OpenTelemetry
 * spans, off unless asked for. `true` uses OpenTelemetry's global tracer provider and propagator;
 * an object may name either. When on, a producer span per sent message carries its context in the
 * message's properties (`traceparent`, `tracestate`, as the OpenTelemetry Java agent's RocketMQ
 * instrumentation writes them), and a consumer span per handled message continues it. When off,
 * nothing is added to messages and no span is made.
 * @category Metrics and trace
 */
export type TracingOptions =
  | boolean
  | {
      /**
       * Spans go to this provider (e.g. the SDK's `new BasicTracerProvider(...)`).
       * @default OpenTelemetry's global tracer provider
       */
      tracerProvider?: TracerProviderLike;
      /**
       * Writes and reads the trace context in message properties.
       * @default OpenTelemetry's global propagator (W3C trace context and baggage once an SDK is registered)
       */
      propagator?: TextMapPropagatorLike;
    };

/** The option as the clients' option interfaces carry it. */
export interface TracingOption {
  /**
   * OpenTelemetry tracing (a span per sent and per handled message, context carried in message
   * properties); needs `@opentelemetry/api`.
   * @default false
   */
  tracing?: TracingOptions;
}

/** Checks the option; answers the option at fault and why, or null. */
export function checkTracingOptions(o: unknown): { option: string; message: string } | null {
  if (o === undefined || typeof o === 'boolean') return null;
  if (o === null || typeof o !== 'object')
    return { option: 'tracing', message: `must be true, false or { tracerProvider?, propagator? }, got ${String(o)}` };
  const { tracerProvider, propagator } = o as { tracerProvider?: unknown; propagator?: unknown };
  if (tracerProvider !== undefined && typeof (tracerProvider as { getTracer?: unknown })?.getTracer !== 'function')
    return { option: 'tracing.tracerProvider', message: 'must be an OpenTelemetry TracerProvider (with getTracer())' };
  if (
    propagator !== undefined &&
    (typeof (propagator as { inject?: unknown })?.inject !== 'function' ||
      typeof (propagator as { extract?: unknown })?.extract !== 'function')
  )
    return { option: 'tracing.propagator', message: 'must be an OpenTelemetry TextMapPropagator (inject, extract)' };
  return null;
}

/** A message as the spans read it: the fields of a sent Message and of a received MessageExt. */
export interface TracedMessage {
  topic: string;
  tags?: string;
  keys?: string | readonly string[];
  properties?: Record<string, string>;
  msgId?: string;
  body?: { length: number } | string;
  queueId?: number;
  queueOffset?: number;
  reconsumeTimes?: number;
}

const SPAN_KIND_PRODUCER = 3;
const SPAN_KIND_CONSUMER = 4;
const STATUS_ERROR = 2;

const propertySetter = {
  set(carrier: Record<string, string>, key: string, value: string): void {
    carrier[key] = value;
  },
};
const propertyGetter = {
  get(carrier: Record<string, string> | undefined, key: string): string | undefined {
    return carrier?.[key];
  },
  keys(carrier: Record<string, string> | undefined): string[] {
    return carrier ? Object.keys(carrier) : [];
  },
};

function bodySize(body: TracedMessage['body']): number | undefined {
  if (body === undefined) return undefined;
  return typeof body === 'string' ? Buffer.byteLength(body) : body.length;
}

function keysText(keys: TracedMessage['keys']): string | undefined {
  if (keys === undefined) return undefined;
  const s = typeof keys === 'string' ? keys : keys.join(' ');
  return s === '' ? undefined : s;
}

/** The attributes of OpenTelemetry's messaging conventions that the Java agent's spans carry too. */
function messageAttributes(
  msg: TracedMessage,
  operation: 'publish' | 'process',
  group: string,
): Record<string, string | number> {
  const a: Record<string, string | number> = {
    'messaging.system': 'rocketmq',
    'messaging.destination.name': msg.topic,
    'messaging.operation': operation,
    'messaging.operation.type': operation,
    'messaging.rocketmq.client_group': group,
  };
  if (msg.tags) a['messaging.rocketmq.message.tag'] = msg.tags;
  const keys = keysText(msg.keys);
  if (keys) a['messaging.rocketmq.message.keys'] = keys;
  if (msg.msgId) a['messaging.message.id'] = msg.msgId;
  const size = bodySize(msg.body);
  if (size !== undefined) a['messaging.message.body.size'] = size;
  if (msg.queueId !== undefined) a['messaging.rocketmq.queue_id'] = msg.queueId;
  if (msg.queueOffset !== undefined) a['messaging.rocketmq.queue_offset'] = msg.queueOffset;
  if (msg.reconsumeTimes) a['messaging.rocketmq.message.reconsume_times'] = msg.reconsumeTimes;
  return a;
}

function fail(span: SpanLike, err: unknown): void {
  if (err instanceof Error) span.recordException(err);
  span.setStatus({ code: STATUS_ERROR, message: err instanceof Error ? err.message : String(err) });
}

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return v !== null && typeof v === 'object' && typeof (v as { then?: unknown }).then === 'function';
}

/** What a handler's result says about success: a thrown or rejected call, or a retry status. */
export type OutcomeOf = (result: unknown) => string | null;

/**
 * The spans of one client: a producer span per sent message, a consumer span per handled message
 * (Java agent's shapes: "<topic> publish" PRODUCER, "<topic> process" CONSUMER as the child of the
 * context the message carries; a batch handler call gets a "multiple_sources receive" span with a
 * "process" child per message, each linked to its producer).
 */
export class MessagingTracing {
  constructor(
    private readonly api: OtelTraceApi,
    private readonly tracer: TracerLike,
    private readonly propagator: TextMapPropagatorLike,
    private readonly group: string,
  ) {}

  /**
   * Starts the producer span of `msg` and returns the message to send (its properties with the
   * span's context) and the function that ends the span with the send's outcome.
   */
  publish<M extends TracedMessage>(msg: M): { msg: M; end(result: { msgId?: string } | null, err?: unknown): void } {
    const parent = this.api.context.active();
    const span = this.tracer.startSpan(
      `${msg.topic} publish`,
      { kind: SPAN_KIND_PRODUCER, attributes: messageAttributes(msg, 'publish', this.group) },
      parent,
    );
    const properties: Record<string, string> = { ...msg.properties };
    this.propagator.inject(this.api.trace.setSpan(parent, span), properties, propertySetter);
    return {
      msg: { ...msg, properties },
      end: (result, err) => {
        if (err !== undefined) fail(span, err);
        else if (result?.msgId) span.setAttribute('messaging.message.id', result.msgId);
        span.end();
      },
    };
  }

  /** The context a received message carries, or the active one when it carries none. */
  private extracted(msg: TracedMessage): ContextLike {
    return this.propagator.extract(this.api.context.active(), msg.properties, propertyGetter);
  }

  /**
   * Runs a handler call inside its consumer span(s) and ends them when it settles; returns what the
   * handler returned (a promise stays a promise). `outcome` names a failure the result reports
   * without throwing (a RECONSUME_LATER status).
   */
  process<R>(msgs: readonly TracedMessage[], run: () => R, outcome: OutcomeOf): R {
    if (msgs.length === 0) return run();
    const spans: SpanLike[] = [];
    let active: ContextLike;
    if (msgs.length === 1) {
      const msg = msgs[0] as TracedMessage;
      const span = this.tracer.startSpan(
        `${msg.topic} process`,
        { kind: SPAN_KIND_CONSUMER, attributes: messageAttributes(msg, 'process', this.group) },
        this.extracted(msg),
      );
      spans.push(span);
      active = this.api.trace.setSpan(this.api.context.active(), span);
    } else {
      const receive = this.tracer.startSpan(
        'multiple_sources receive',
        {
          kind: SPAN_KIND_CONSUMER,
          attributes: { 'messaging.system': 'rocketmq', 'messaging.operation.type': 'receive' },
        },
        this.api.context.active(),
      );
      spans.push(receive);
      active = this.api.trace.setSpan(this.api.context.active(), receive);
      for (const msg of msgs) {
        const link = this.api.trace.getSpanContext(this.extracted(msg));
        spans.push(
          this.tracer.startSpan(
            `${msg.topic} process`,
            {
              kind: SPAN_KIND_CONSUMER,
              attributes: messageAttributes(msg, 'process', this.group),
              links: link ? [{ context: link }] : [],
            },
            active,
          ),
        );
      }
    }
    const endAll = (err: unknown, failed: string | null): void => {
      for (const s of spans) {
        if (err !== undefined) fail(s, err);
        else if (failed !== null) s.setStatus({ code: STATUS_ERROR, message: failed });
        s.end();
      }
    };
    let result: R;
    try {
      result = this.api.context.with(active, run);
    } catch (err) {
      endAll(err, null);
      throw err;
    }
    if (isThenable(result)) {
      (result as PromiseLike<unknown>).then(
        (v) => endAll(undefined, outcome(v)),
        (err: unknown) => endAll(err ?? new Error('handler rejected'), null),
      );
      return result;
    }
    endAll(undefined, outcome(result));
    return result;
  }
}

let api: Promise<OtelTraceApi | null> | null = null;

function loadApi(): Promise<OtelTraceApi | null> {
  api ??= import('@opentelemetry/api').then(
    (m) => m as unknown as OtelTraceApi,
    (err: unknown) => {
      log('@opentelemetry/api is not available: %s', (err as Error)?.message ?? err);
      return null;
    },
  );
  return api;
}

/**
 * The tracing of a client, or null when the option is off. Resolves to the string 'unavailable'
 * when tracing was asked for but `@opentelemetry/api` cannot be loaded: the client turns that into
 * its own option error at start, so a user who asked for spans learns why there are none.
 */
export async function resolveTracing(
  options: TracingOptions | undefined,
  group: string,
): Promise<MessagingTracing | null | 'unavailable'> {
  if (options === undefined || options === false) return null;
  const otel = await loadApi();
  if (!otel) return 'unavailable';
  const o = options === true ? {} : options;
  const provider = o.tracerProvider ?? otel.trace.getTracerProvider();
  const propagator = o.propagator ?? otel.propagation;
  return new MessagingTracing(otel, provider.getTracer(TRACER_NAME), propagator, group);
}
