// Reading the clients' metrics the way an application does: the OpenTelemetry SDK's MeterProvider
// with an in-memory exporter behind a periodic reader that the test flushes by hand.
import { AggregatingMeterProvider } from '../../lib/metrics/aggregating-meter.js';
import type { MeterProviderLike } from '../../lib/metrics/otel-types.js';
import {
  AggregationTemporality,
  DataPointType,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
  type MetricData,
} from '@opentelemetry/sdk-metrics';

export interface MetricsProbe {
  /** What the clients get as `metrics.meterProvider`: the SDK's provider, or the aggregating one. */
  provider: MeterProviderLike;
  /** The SDK's provider the reader is registered on (the same object as `provider` in 'sdk' mode). */
  sdk: MeterProvider;
  /** Exports what was recorded so far and returns the metrics by name (the last export). */
  collect(): Promise<Map<string, MetricData>>;
  close(): Promise<void>;
}

/**
 * `sdk`: the clients record to the SDK's MeterProvider. `aggregating`: to rocketwire's
 * AggregatingMeterProvider, registered on the same kind of SDK reader as a metric producer; what
 * the exporter receives must be the same.
 */
export type MetricsMode = 'sdk' | 'aggregating';
export const METRICS_MODES: readonly MetricsMode[] = ['sdk', 'aggregating'];

export function metricsProbe(mode: MetricsMode = 'sdk'): MetricsProbe {
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const aggregating = mode === 'aggregating' ? new AggregatingMeterProvider() : null;
  // A long interval: the test decides when to export (forceFlush), never a timer.
  const reader = new PeriodicExportingMetricReader({
    exporter,
    exportIntervalMillis: 3_600_000,
    ...(aggregating ? { metricProducers: [aggregating] } : {}),
  });
  const sdk = new MeterProvider({ readers: [reader] });
  const provider = aggregating ?? sdk;
  return {
    provider,
    sdk,
    async collect() {
      exporter.reset();
      await reader.forceFlush();
      const out = new Map<string, MetricData>();
      for (const rm of exporter.getMetrics())
        for (const sm of rm.scopeMetrics) for (const m of sm.metrics) out.set(m.descriptor.name, m);
      return out;
    },
    close: () => sdk.shutdown(),
  };
}

/** A histogram's points: labels, count, boundaries. */
export function histogramPoints(
  m: MetricData | undefined,
): { attributes: Record<string, unknown>; count: number; boundaries: number[] }[] {
  if (!m || m.dataPointType !== DataPointType.HISTOGRAM) return [];
  return m.dataPoints.map((p) => ({
    attributes: { ...p.attributes },
    count: p.value.count,
    boundaries: p.value.buckets.boundaries,
  }));
}

/** A gauge's points: labels and value. */
export function gaugePoints(m: MetricData | undefined): { attributes: Record<string, unknown>; value: number }[] {
  if (!m || m.dataPointType !== DataPointType.GAUGE) return [];
  return m.dataPoints.map((p) => ({ attributes: { ...p.attributes }, value: p.value as number }));
}
