// The few OpenTelemetry trace API shapes rocketwire calls, written down structurally (as
// otel-types.ts does for metrics) so that the package's declarations never name
// `@opentelemetry/api`: any TracerProvider or propagator of the API (the SDK's, a vendor's) fits.

/** An OpenTelemetry Context (immutable; opaque here). */
export interface ContextLike {
  getValue(key: symbol): unknown;
}

/** A span's identity, as links and propagation carry it. */
export interface SpanContextLike {
  traceId: string;
  spanId: string;
  traceFlags: number;
}

export interface SpanLike {
  setAttribute(key: string, value: string | number | boolean): unknown;
  setStatus(status: { code: number; message?: string }): unknown;
  recordException(exception: Error): void;
  end(): void;
  spanContext(): SpanContextLike;
}

export interface SpanOptionsLike {
  kind?: number;
  attributes?: Record<string, string | number | boolean>;
  links?: { context: SpanContextLike }[];
}

export interface TracerLike {
  startSpan(name: string, options?: SpanOptionsLike, context?: ContextLike): SpanLike;
}

/** An OpenTelemetry TracerProvider (the SDK's BasicTracerProvider / NodeTracerProvider is one). */
export interface TracerProviderLike {
  getTracer(name: string, version?: string): TracerLike;
}

/** An OpenTelemetry TextMapPropagator (W3C trace context, B3, a composite…). */
export interface TextMapPropagatorLike {
  inject(
    context: ContextLike,
    carrier: Record<string, string>,
    setter: { set(carrier: Record<string, string>, key: string, value: string): void },
  ): void;
  extract(
    context: ContextLike,
    carrier: Record<string, string> | undefined,
    getter: {
      get(carrier: Record<string, string> | undefined, key: string): string | undefined;
      keys(carrier: Record<string, string> | undefined): string[];
    },
  ): ContextLike;
}

/** What rocketwire uses of `@opentelemetry/api`'s module. */
export interface OtelTraceApi {
  trace: {
    getTracerProvider(): TracerProviderLike;
    setSpan(context: ContextLike, span: SpanLike): ContextLike;
    getSpanContext(context: ContextLike): SpanContextLike | undefined;
  };
  context: {
    active(): ContextLike;
    with<R>(context: ContextLike, fn: () => R): R;
  };
  propagation: TextMapPropagatorLike;
}
