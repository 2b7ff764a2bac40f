// AggregatingMeterProvider against the SDK itself: the same records into an SDK histogram and into
// the aggregating one, both exported through SDK readers, must give the same data points (bucket
// counts, count, sum, min, max, labels); gauges likewise; past the cardinality limit the extra
// label sets fold into the SDK's overflow series.
import t from 'tap';
import {
  AggregationTemporality,
  DataPointType,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
  type MetricData,
} from '@opentelemetry/sdk-metrics';
import { AGGREGATING_CARDINALITY_LIMIT, AggregatingMeterProvider } from '../../lib/metrics/aggregating-meter.js';
import type { MeterProviderLike } from '../../lib/metrics/otel-types.js';

interface Side {
  provider: MeterProviderLike;
  collect(): Promise<MetricData[]>;
}

function side(aggregating: boolean): Side {
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const agg = aggregating ? new AggregatingMeterProvider() : null;
  const reader = new PeriodicExportingMetricReader({
    exporter,
    exportIntervalMillis: 3_600_000,
    ...(agg ? { metricProducers: [agg] } : {}),
  });
  const sdk = new MeterProvider({ readers: [reader] });
  t.teardown(() => sdk.shutdown());
  return {
    provider: agg ?? sdk,
    async collect() {
      exporter.reset();
      await reader.forceFlush();
      return exporter
        .getMetrics()
        .flatMap((rm) => rm.scopeMetrics.filter((sm) => sm.scope.name === 'm').flatMap((sm) => sm.metrics));
    },
  };
}

/** What a reader of the export compares: no timestamps. */
function points(m: MetricData | undefined): unknown[] {
  if (!m) return [];
  return m.dataPoints
    .map((p) => ({ attributes: { ...p.attributes }, value: p.value }))
    .sort((a, b) => JSON.stringify(a.attributes).localeCompare(JSON.stringify(b.attributes)));
}

t.test("histograms export the same data points as the SDK's for the same records", async (t) => {
  const sdk = side(false);
  const agg = side(true);
  const boundaries = [1, 5, 10, 100, 1000, 10000, 60000];
  const labelsA = { topic: 'T', client_id: 'c', consumer_group: 'g', invocation_status: 'success' };
  const values = [0, 0, 1, 1.5, 5, 7, 10, 11, 99.5, 100, 101, 999, 1000, 1001, 60000, 60001, 123456, 3, 3, 3];
  const histograms = [sdk, agg].map((s) =>
    s.provider.getMeter('m').createHistogram('rocketmq_process_time', {
      description: 'd',
      unit: 'ms',
      advice: { explicitBucketBoundaries: boundaries },
    }),
  );
  for (const h of histograms) {
    // the same labels as a fresh object each time, as the SDK keys by content: so must the aggregating meter
    for (const v of values) h.record(v, { ...labelsA });
    const shared = { ...labelsA, invocation_status: 'failure' };
    for (const v of [2, 2000]) h.record(v, shared);
    h.record(-1, shared); // a negative value is not a histogram record (the SDK drops it too)
  }
  const [a, b] = [await sdk.collect(), await agg.collect()];
  t.equal(a.length, 1);
  t.equal(b.length, 1);
  t.equal(b[0]!.dataPointType, DataPointType.HISTOGRAM);
  t.same(b[0]!.descriptor.name, a[0]!.descriptor.name);
  t.equal(b[0]!.descriptor.unit, 'ms');
  t.equal(b[0]!.descriptor.description, 'd');
  t.equal(b[0]!.aggregationTemporality, AggregationTemporality.CUMULATIVE);
  t.same(points(b[0]), points(a[0]), "bucket counts, count, sum, min, max and labels as the SDK's");
  const ok = points(b[0]).find(
    (p) => (p as { attributes: { invocation_status: string } }).attributes.invocation_status === 'success',
  ) as { value: { count: number; buckets: { counts: number[] } } };
  t.equal(ok.value.count, values.length);
  t.same(
    ok.value.buckets.counts,
    [3, 5, 2, 3, 3, 1, 1, 2],
    'the counts themselves (a value equal to a boundary is in the bucket it closes)',
  );

  // cumulative: a second export counts everything since the start
  for (const h of histograms) h.record(4, labelsA);
  const [a2, b2] = [await sdk.collect(), await agg.collect()];
  t.same(points(b2[0]), points(a2[0]), 'the second export too');
  t.equal((points(b2[0])[1] as { value: { count: number } }).value.count, values.length + 1);
});

t.test("gauges export what their callbacks observe at collection, as the SDK's", async (t) => {
  const sdk = side(false);
  const agg = side(true);
  let cached = 5;
  const cb = (r: { observe(v: number, a?: Record<string, string>): void }): void => {
    r.observe(cached, { topic: 'A' });
    r.observe(cached * 100, { topic: 'B' });
  };
  const gauges = [sdk, agg].map((s) => {
    const g = s.provider
      .getMeter('m')
      .createObservableGauge('rocketmq_consumer_cached_messages', { description: 'd', unit: '{message}' });
    g.addCallback(cb);
    return g;
  });
  const [a, b] = [await sdk.collect(), await agg.collect()];
  t.equal(b[0]!.dataPointType, DataPointType.GAUGE);
  t.equal(b[0]!.descriptor.unit, '{message}');
  t.same(points(b[0]), points(a[0]));
  t.same(
    points(b[0]).map((p) => (p as { value: number }).value),
    [5, 500],
  );
  cached = 0;
  t.same(
    points((await agg.collect())[0]).map((p) => (p as { value: number }).value),
    [0, 0],
    'read again at the next collection',
  );
  for (const g of gauges) g.removeCallback(cb);
  t.same(points((await agg.collect())[0]), [], 'a removed callback is not called');
});

t.test('past the cardinality limit, new label sets go to the overflow series; nothing is lost', async (t) => {
  const agg = side(true);
  const h = agg.provider.getMeter('m').createHistogram('h', { advice: { explicitBucketBoundaries: [1] } });
  const n = AGGREGATING_CARDINALITY_LIMIT + 50;
  for (let i = 0; i < n; i++) h.record(1, { topic: `T${i}` });
  const got = points((await agg.collect())[0]) as Array<{
    attributes: Record<string, unknown>;
    value: { count: number };
  }>;
  t.equal(got.length, AGGREGATING_CARDINALITY_LIMIT + 1);
  t.same(got.find((p) => p.attributes['otel.metric.overflow'] !== undefined)?.value.count, 50);
  t.equal(
    got.reduce((s, p) => s + p.value.count, 0),
    n,
    'every record counted',
  );
});
