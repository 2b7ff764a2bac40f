// The few OpenTelemetry metrics API shapes rocketwire calls, written down structurally so that the
// package's own types never name `@opentelemetry/api`: a user without it installed type-checks
// without it, and any MeterProvider of the API (the SDK's, a vendor's) fits these shapes.

/** Label values (OpenTelemetry "attributes"). */
export type MetricAttributes = Record<string, string>;

/** What `histogram.record` is called on. */
export interface HistogramLike {
  record(value: number, attributes?: MetricAttributes): void;
}

/** The result an observable gauge's callback writes to. */
export interface ObservableResultLike {
  observe(value: number, attributes?: MetricAttributes): void;
}

export interface ObservableGaugeLike {
  addCallback(callback: (result: ObservableResultLike) => void): void;
  removeCallback(callback: (result: ObservableResultLike) => void): void;
}

/** The options rocketwire passes when it creates an instrument. */
export interface InstrumentOptionsLike {
  description?: string;
  unit?: string;
  advice?: { explicitBucketBoundaries?: number[] };
}

export interface MeterLike {
  createHistogram(name: string, options?: InstrumentOptionsLike): HistogramLike;
  createObservableGauge(name: string, options?: InstrumentOptionsLike): ObservableGaugeLike;
}

/** An OpenTelemetry MeterProvider (`@opentelemetry/api`'s interface; the SDK's MeterProvider is one). */
export interface MeterProviderLike {
  getMeter(name: string, version?: string, options?: Record<string, unknown>): MeterLike;
}
