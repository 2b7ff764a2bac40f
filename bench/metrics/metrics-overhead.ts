/**
 * What the OpenTelemetry metrics cost the hot path: produce and consume the same number of
 * messages through the embedded broker (in a child process, so that the CPU measured is the
 * client's) with metrics off (no meter provider: the API's no-op) and on (the SDK's MeterProvider
 * with a PeriodicExportingMetricReader exporting every second to an in-memory exporter), alternating
 * with the order rotated every round, and report each side's median msgs/s, client CPU per message,
 * and the on/off ratios. "On" records rocketmq_send_cost_time per send and the delivery, await and
 * process histograms per pull and handler call, and the cache gauges at each export. It is run two
 * ways: `sdk`, the clients recording to the SDK's MeterProvider, and `aggregating`, the clients
 * recording to rocketwire's AggregatingMeterProvider, registered on the same reader as a metric
 * producer (the same instruments and data points, aggregated where they are recorded).
 *
 *   node dist/bench/metrics/metrics-overhead.js [--messages N] [--rounds N] [--size BYTES] [--concurrency C]
 *     [--modes off,sdk,aggregating]
 */
import { benchArgs } from '../harness/args.js';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import { startChildBroker } from '../harness/embedded.js';
import { PushConsumer } from '../../lib/consumer/index.js';
import { Producer } from '../../lib/producer/index.js';
import { AggregatingMeterProvider } from '../../lib/metrics/aggregating-meter.js';
import { median, produceThenConsume } from '../overhead/produce-consume.js';

const { values } = benchArgs('metrics-overhead', {
  options: {
    messages: { type: 'string' },
    rounds: { type: 'string' },
    size: { type: 'string' },
    concurrency: { type: 'string' },
    modes: { type: 'string' },
  },
});
type Mode = 'off' | 'sdk' | 'aggregating';
const MODES = (values.modes ?? 'off,sdk,aggregating').split(',') as Mode[];
for (const m of MODES)
  if (m !== 'off' && m !== 'sdk' && m !== 'aggregating')
    throw new Error(`--modes: unknown mode ${m} (off, sdk, aggregating)`);
const N = Number(values.messages ?? 20000);
const ROUNDS = Number(values.rounds ?? 5);
const SIZE = Number(values.size ?? 1024);
const CONCURRENCY = Number(values.concurrency ?? 4);

interface Run {
  mode: Mode;
  produceMsgsPerSec: number;
  consumeMsgsPerSec: number;
  /** CPU time of this process (user + system) per message while producing / consuming, in ns. */
  produceCpuNsPerMsg: number;
  consumeCpuNsPerMsg: number;
  /** Data points the exporter received (a check that "on" really recorded). */
  exportedPoints: number;
}

let seq = 0;
async function once(namesrv: string, mode: Mode): Promise<Run> {
  const topic = `MetricsBench_${process.pid}_${seq++}`;
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const aggregating = mode === 'aggregating' ? new AggregatingMeterProvider() : null;
  const reader = new PeriodicExportingMetricReader({
    exporter,
    exportIntervalMillis: 1000,
    ...(aggregating ? { metricProducers: [aggregating] } : {}),
  });
  const provider = mode === 'off' ? null : new MeterProvider({ readers: [reader] });
  const metrics = provider ? { meterProvider: aggregating ?? provider } : undefined;
  const producer = new Producer({ namesrvAddr: namesrv, group: `metrics_bench_pg_${seq}`, metrics });
  await producer.start();
  const consumer = new PushConsumer({
    consumerGroup: `metrics_bench_cg_${seq}`,
    namesrvAddr: namesrv,
    consumeFromWhere: 'first',
    metrics,
  });
  const t = await produceThenConsume(producer, consumer, {
    topic,
    messages: N,
    size: SIZE,
    concurrency: CONCURRENCY,
    afterProduce: () => producer.shutdown(),
  });
  await consumer.shutdown();
  let exportedPoints = 0;
  if (provider) {
    await reader.forceFlush();
    for (const rm of exporter.getMetrics().slice(-1))
      for (const sm of rm.scopeMetrics) for (const m of sm.metrics) exportedPoints += m.dataPoints.length;
    await provider.shutdown();
  }
  return {
    mode,
    produceMsgsPerSec: Math.round((N / t.produceMs) * 1000),
    consumeMsgsPerSec: Math.round((N / t.consumeMs) * 1000),
    produceCpuNsPerMsg: Math.round((t.produceCpuUs * 1000) / N),
    consumeCpuNsPerMsg: Math.round((t.consumeCpuUs * 1000) / N),
    exportedPoints,
  };
}

/**
 * The baseline the "on" side cannot go below: one SDK Histogram.record with the four labels of
 * rocketmq_process_time (the SDK hashes the label set on every call), in ns, median of 5 × 100 000.
 */
function recordNs(mode: 'sdk' | 'aggregating'): number {
  const provider = new MeterProvider({
    readers: [
      new PeriodicExportingMetricReader({
        exporter: new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE),
        exportIntervalMillis: 3_600_000,
      }),
    ],
  });
  const meterProvider = mode === 'sdk' ? provider : new AggregatingMeterProvider();
  const h = meterProvider
    .getMeter('bench')
    .createHistogram('h', { advice: { explicitBucketBoundaries: [1, 5, 10, 100, 1000, 10000, 60000] } });
  const labels = {
    topic: 'MetricsBench_12345_1',
    client_id: '10.0.0.1@12345#1234567890',
    consumer_group: 'metrics_bench_cg_1',
    invocation_status: 'success',
  };
  const out: number[] = [];
  for (let r = 0; r < 5; r++) {
    const t0 = process.cpuUsage();
    for (let i = 0; i < 100_000; i++) h.record(i & 7, labels);
    const c = process.cpuUsage(t0);
    out.push(Math.round(((c.user + c.system) * 1000) / 100_000));
  }
  void provider.shutdown();
  return median(out);
}

const broker = await startChildBroker(8);
try {
  for (const m of MODES) await once(broker.namesrv, m); // warm-up, not recorded
  const runs: Run[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    // every mode runs first, middle and last equally often
    for (let i = 0; i < MODES.length; i++) {
      const mode = MODES[(r + i) % MODES.length]!;
      const run = await once(broker.namesrv, mode);
      runs.push(run);
      process.stderr.write(
        `round ${r + 1} metrics=${mode}: produce ${run.produceMsgsPerSec} msgs/s (${run.produceCpuNsPerMsg} ns CPU/msg), consume ${run.consumeMsgsPerSec} msgs/s (${run.consumeCpuNsPerMsg} ns CPU/msg)\n`,
      );
    }
  }
  const med = (mode: Mode, k: keyof Run): number =>
    median(runs.filter((x) => x.mode === mode).map((x) => x[k] as number));
  const on = MODES.filter((m) => m !== 'off');
  const per = <T>(f: (m: Mode) => T): Record<string, T> => Object.fromEntries(MODES.map((m) => [m, f(m)]));
  const ratios = (k1: keyof Run, k2: keyof Run) =>
    Object.fromEntries(
      on.map((m) => [
        m,
        { produce: +(med(m, k1) / med('off', k1)).toFixed(3), consume: +(med(m, k2) / med('off', k2)).toFixed(3) },
      ]),
    );
  console.log(
    JSON.stringify(
      {
        messages: N,
        size: SIZE,
        concurrency: CONCURRENCY,
        rounds: ROUNDS,
        medianMsgsPerSec: per((m) => ({ produce: med(m, 'produceMsgsPerSec'), consume: med(m, 'consumeMsgsPerSec') })),
        ratioOnOverOff: MODES.includes('off') ? ratios('produceMsgsPerSec', 'consumeMsgsPerSec') : null,
        medianCpuNsPerMsg: per((m) => ({
          produce: med(m, 'produceCpuNsPerMsg'),
          consume: med(m, 'consumeCpuNsPerMsg'),
        })),
        cpuRatioOnOverOff: MODES.includes('off') ? ratios('produceCpuNsPerMsg', 'consumeCpuNsPerMsg') : null,
        histogramRecordCpuNs: { sdk: recordNs('sdk'), aggregating: recordNs('aggregating') },
        loadAverage: (await import('node:os')).loadavg(),
        runs,
      },
      null,
      2,
    ),
  );
} finally {
  await broker.stop();
}
