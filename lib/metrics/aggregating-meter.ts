import type {
  HistogramLike,
  InstrumentOptionsLike,
  MeterLike,
  MeterProviderLike,
  MetricAttributes,
  ObservableGaugeLike,
  ObservableResultLike,
} from './otel-types.js';

// The SDK's enums, by value (sdk-metrics' DataPointType, AggregationTemporality; the API's
// ValueType): the package never imports the SDK.
const DATA_POINT_HISTOGRAM = 0;
const DATA_POINT_GAUGE = 2;
const CUMULATIVE = 1;
const VALUE_TYPE_DOUBLE = 1;

/** One exported metric, in the SDK's MetricData shape (typed loosely: the package never names the SDK). */
interface MetricDataShape {
  descriptor: unknown;
  aggregationTemporality: number;
  dataPointType: number;
  dataPoints: unknown[];
}

/**
 * The SDK's CollectionResult. Its resource and metrics are `any` on purpose: so that this class is
 * assignable to the SDK's `MetricProducer` in an application's TypeScript without a cast, while the
 * package's own types never import `@opentelemetry/sdk-metrics`.
 */
// biome-ignore lint/suspicious/noExplicitAny: `any` is what lets the SDK's MetricProducer accept it without a cast (above)
export type AggregatedCollection = { resourceMetrics: { resource: any; scopeMetrics: any[] }; errors: unknown[] };

/** OpenTelemetry's HrTime: [seconds, nanoseconds]. */
type HrTime = [number, number];

function hrTime(ms: number): HrTime {
  const s = Math.floor(ms / 1000);
  return [s, Math.round((ms - s * 1000) * 1e6)];
}

/**
 * Series of one instrument beyond this many label sets are folded into one overflow series
 * labelled `otel.metric.overflow=true`, as the SDK does at its default cardinality limit.
 */
export const AGGREGATING_CARDINALITY_LIMIT = 2000;
const OVERFLOW: MetricAttributes = { 'otel.metric.overflow': 'true' };

/** A content key of a label set (rocketwire's label sets are small; sorted so that key order does not matter). */
function contentKey(a: MetricAttributes): string {
  const keys = Object.keys(a).sort();
  let s = '';
  for (const k of keys) s += `${k}\u0000${a[k]}\u0001`;
  return s;
}

class HistogramSeries {
  readonly counts: number[];
  count = 0;
  sum = 0;
  min = Number.POSITIVE_INFINITY;
  max = Number.NEGATIVE_INFINITY;
  constructor(
    readonly attributes: MetricAttributes,
    readonly startMs: number,
    buckets: number,
  ) {
    this.counts = new Array<number>(buckets).fill(0);
  }
}

/**
 * A histogram that aggregates where it is recorded: the series is found by the attributes
 * object's identity (rocketwire's clients hand the same object for the same labels), falling back
 * to its content once per new object; a record is then a bucket search over a handful of
 * boundaries and four additions.
 */
class AggregatingHistogram implements HistogramLike {
  private readonly byObject = new Map<MetricAttributes, HistogramSeries>();
  private readonly byContent = new Map<string, HistogramSeries>();
  private readonly boundaries: readonly number[];

  constructor(
    readonly name: string,
    readonly options: InstrumentOptionsLike,
    private readonly now: () => number,
  ) {
    this.boundaries = [
      ...(options.advice?.explicitBucketBoundaries ?? [
        0, 5, 10, 25, 50, 75, 100, 250, 500, 750, 1000, 2500, 5000, 7500, 10000,
      ]),
    ];
  }

  record(value: number, attributes: MetricAttributes = {}): void {
    if (typeof value !== 'number' || !(value >= 0) || value === Number.POSITIVE_INFINITY) return;
    let s = this.byObject.get(attributes);
    if (s === undefined) s = this.seriesOf(attributes);
    const b = this.boundaries;
    let i = 0;
    while (i < b.length && value > b[i]!) i++;
    s.counts[i]!++;
    s.count++;
    s.sum += value;
    if (value < s.min) s.min = value;
    if (value > s.max) s.max = value;
  }

  private seriesOf(attributes: MetricAttributes): HistogramSeries {
    const key = contentKey(attributes);
    let s = this.byContent.get(key);
    if (s === undefined) {
      if (this.byContent.size >= AGGREGATING_CARDINALITY_LIMIT) {
        const overflowKey = contentKey(OVERFLOW);
        s = this.byContent.get(overflowKey);
        if (s === undefined)
          this.byContent.set(overflowKey, (s = new HistogramSeries(OVERFLOW, this.now(), this.boundaries.length + 1)));
      } else {
        this.byContent.set(key, (s = new HistogramSeries({ ...attributes }, this.now(), this.boundaries.length + 1)));
      }
    }
    // Identity entries are a cache: bounded, and rebuilt from the content map when cleared.
    if (this.byObject.size >= 4 * AGGREGATING_CARDINALITY_LIMIT) this.byObject.clear();
    this.byObject.set(attributes, s);
    return s;
  }

  data(endMs: number): MetricDataShape {
    const end = hrTime(endMs);
    return {
      descriptor: descriptor(this.name, this.options),
      aggregationTemporality: CUMULATIVE,
      dataPointType: DATA_POINT_HISTOGRAM,
      dataPoints: [...this.byContent.values()].map((s) => ({
        attributes: { ...s.attributes },
        startTime: hrTime(s.startMs),
        endTime: end,
        value: {
          buckets: { boundaries: [...this.boundaries], counts: [...s.counts] },
          count: s.count,
          sum: s.sum,
          ...(s.count > 0 ? { min: s.min, max: s.max } : {}),
        },
      })),
    };
  }
}

class AggregatingGauge implements ObservableGaugeLike {
  private readonly callbacks = new Set<(r: ObservableResultLike) => void>();
  constructor(
    readonly name: string,
    readonly options: InstrumentOptionsLike,
  ) {}
  addCallback(cb: (r: ObservableResultLike) => void): void {
    this.callbacks.add(cb);
  }
  removeCallback(cb: (r: ObservableResultLike) => void): void {
    this.callbacks.delete(cb);
  }

  /** Runs the callbacks; the last value observed per label set wins (the SDK's rule for gauges). */
  data(endMs: number, errors: unknown[]): MetricDataShape {
    const points = new Map<string, { attributes: MetricAttributes; value: number }>();
    const result: ObservableResultLike = {
      observe: (value, attributes = {}) => {
        if (typeof value === 'number' && Number.isFinite(value))
          points.set(contentKey(attributes), { attributes: { ...attributes }, value });
      },
    };
    for (const cb of this.callbacks) {
      try {
        cb(result);
      } catch (err) {
        errors.push(err);
      }
    }
    const t = hrTime(endMs);
    return {
      descriptor: descriptor(this.name, this.options),
      aggregationTemporality: CUMULATIVE,
      dataPointType: DATA_POINT_GAUGE,
      dataPoints: [...points.values()].map((p) => ({
        attributes: p.attributes,
        startTime: t,
        endTime: t,
        value: p.value,
      })),
    };
  }
}

function descriptor(name: string, o: InstrumentOptionsLike): unknown {
  return {
    name,
    description: o.description ?? '',
    unit: o.unit ?? '',
    valueType: VALUE_TYPE_DOUBLE,
    advice: o.advice ?? {},
  };
}

class AggregatingMeter implements MeterLike {
  readonly histograms = new Map<string, AggregatingHistogram>();
  readonly gauges = new Map<string, AggregatingGauge>();
  constructor(
    readonly name: string,
    readonly version: string | undefined,
    private readonly now: () => number,
  ) {}

  // One instrument per name, as the SDK hands back the same storage for a duplicate registration:
  // several clients on one provider record into the same series (their client_id tells them apart).
  createHistogram(name: string, options: InstrumentOptionsLike = {}): HistogramLike {
    let h = this.histograms.get(name);
    if (h === undefined) this.histograms.set(name, (h = new AggregatingHistogram(name, options, this.now)));
    return h;
  }

  createObservableGauge(name: string, options: InstrumentOptionsLike = {}): ObservableGaugeLike {
    let g = this.gauges.get(name);
    if (g === undefined) this.gauges.set(name, (g = new AggregatingGauge(name, options)));
    return g;
  }
}

/**
 * A MeterProvider that aggregates rocketwire's metrics where they are recorded, and an
 * OpenTelemetry SDK `MetricProducer` that hands the aggregates to a reader. Give it to the clients
 * as `metrics: { meterProvider }` and to the SDK reader as `metricProducers: [it]`:
 *
 * ```ts
 * const metrics = new AggregatingMeterProvider();
 * const reader = new PeriodicExportingMetricReader({ exporter, metricProducers: [metrics] });
 * new MeterProvider({ readers: [reader] });
 * const consumer = new PushConsumer({ consumerGroup, namesrvAddr, metrics: { meterProvider: metrics } });
 * ```
 *
 * The same instruments, names, buckets and labels as through an SDK meter, at a fraction of the
 * cost per record: the SDK hashes the label set on every `record` (about 3 µs, two records per
 * consumed message), this finds the series by the label object's identity. What differs: the
 * temporality is always cumulative (a reader asking for delta gets cumulative), and the SDK's Views
 * do not apply (these are not the SDK's instruments).
 * @category Metrics and trace
 */
export class AggregatingMeterProvider implements MeterProviderLike {
  private readonly meters = new Map<string, AggregatingMeter>();
  private readonly now: () => number;

  /** `now` (milliseconds since the epoch) is for tests; default Date.now. */
  constructor(options: { now?: () => number } = {}) {
    this.now = options.now ?? Date.now;
  }

  /** The meter the clients record to (OpenTelemetry's MeterProvider.getMeter). */
  getMeter(name: string, version?: string): MeterLike {
    const key = `${name}@${version ?? ''}`;
    let m = this.meters.get(key);
    if (m === undefined) this.meters.set(key, (m = new AggregatingMeter(name, version, this.now)));
    return m;
  }

  /**
   * The SDK's MetricProducer#collect: one ScopeMetrics per meter, a data point per label set (the
   * SDK keeps the resource of its own provider and ignores this one's, which is empty).
   */
  collect(): Promise<AggregatedCollection> {
    const end = this.now();
    const errors: unknown[] = [];
    const scopeMetrics: AggregatedCollection['resourceMetrics']['scopeMetrics'] = [];
    for (const m of this.meters.values()) {
      // as the SDK, an instrument with nothing recorded (or observed) is not exported
      const metrics = [
        ...[...m.histograms.values()].map((h) => h.data(end)),
        ...[...m.gauges.values()].map((g) => g.data(end, errors)),
      ].filter((d) => d.dataPoints.length > 0);
      if (metrics.length === 0) continue;
      scopeMetrics.push({
        scope: { name: m.name, ...(m.version !== undefined ? { version: m.version } : {}) },
        metrics,
      });
    }
    return Promise.resolve({ resourceMetrics: { resource: { attributes: {} }, scopeMetrics }, errors });
  }
}
