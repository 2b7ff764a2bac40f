// Reading the clients' metrics the way an application does: the OpenTelemetry SDK's MeterProvider
// with an in-memory exporter behind a periodic reader that the test flushes by hand.
import {
  AggregationTemporality,
  DataPointType,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
  type MetricData,
} from '@opentelemetry/sdk-metrics';

export interface MetricsProbe {
  provider: MeterProvider;
  /** Exports what was recorded so far and returns the metrics by name (the last export). */
  collect(): Promise<Map<string, MetricData>>;
  close(): Promise<void>;
}

export function metricsProbe(): MetricsProbe {
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  // A long interval: the test decides when to export (forceFlush), never a timer.
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
  const provider = new MeterProvider({ readers: [reader] });
  return {
    provider,
    async collect() {
      exporter.reset();
      await reader.forceFlush();
      const out = new Map<string, MetricData>();
      for (const rm of exporter.getMetrics()) for (const sm of rm.scopeMetrics) for (const m of sm.metrics) out.set(m.descriptor.name, m);
      return out;
    },
    close: () => provider.shutdown(),
  };
}

/** A histogram's points: labels, count, boundaries. */
export function histogramPoints(m: MetricData | undefined): { attributes: Record<string, unknown>; count: number; boundaries: number[] }[] {
  if (!m || m.dataPointType !== DataPointType.HISTOGRAM) return [];
  return m.dataPoints.map((p) => ({ attributes: { ...p.attributes }, count: p.value.count, boundaries: p.value.buckets.boundaries }));
}

/** A gauge's points: labels and value. */
export function gaugePoints(m: MetricData | undefined): { attributes: Record<string, unknown>; value: number }[] {
  if (!m || m.dataPointType !== DataPointType.GAUGE) return [];
  return m.dataPoints.map((p) => ({ attributes: { ...p.attributes }, value: p.value as number }));
}
