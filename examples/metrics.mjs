// expect: metrics: rocketmq_await_time rocketmq_consumer_cached_bytes rocketmq_consumer_cached_messages rocketmq_delivery_latency rocketmq_process_time rocketmq_send_cost_time
// OpenTelemetry metrics of a producer and a push consumer (the RocketMQ 5.x clients' instruments),
// read with the SDK's MeterProvider and an in-memory exporter. Any exporter works the same way
// (OTLP, Prometheus); `metrics: { meterProvider }` may be left out once a global provider is set
// with metrics.setGlobalMeterProvider(). The consumer records to rocketwire's
// AggregatingMeterProvider, registered on the same reader: the same instruments and data points,
// at a bucket increment per record instead of the SDK's ~3 µs (two records per consumed message).
//
//   NAMESRV_ADDR=127.0.0.1:9876 node examples/metrics.mjs
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import {
  AggregatingMeterProvider,
  ConsumeConcurrentlyStatus,
  ConsumerEvents,
  Producer,
  PushConsumer,
} from 'rocketwire';

const namesrvAddr = process.env.NAMESRV_ADDR ?? '127.0.0.1:9876';
const topic = `ExampleMetrics_${process.pid}`;
const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
const aggregating = new AggregatingMeterProvider();
const reader = new PeriodicExportingMetricReader({
  exporter,
  exportIntervalMillis: 60_000,
  metricProducers: [aggregating],
});
const meterProvider = new MeterProvider({ readers: [reader] });

const stopped = new Promise((resolve) => {
  process.once('SIGTERM', resolve);
  process.once('SIGINT', resolve);
});

const producer = new Producer({ namesrvAddr, group: 'example_metrics_pg', metrics: { meterProvider } });
const consumer = new PushConsumer({
  group: 'example_metrics_cg',
  namesrvAddr,
  consumeFromWhere: 'first',
  metrics: { meterProvider: aggregating },
});
try {
  await producer.start();
  for (let i = 0; i < 3; i++) await producer.send({ topic, body: `hello ${i}` });

  consumer.subscribe(topic);
  const stopLogging = consumer.on(ConsumerEvents.REBALANCE, (e) =>
    console.log(`rebalance: ${e.topic} now ${e.after.length} queues`),
  );
  let consumed = 0;
  const allConsumed = new Promise((resolve) => {
    consumer.onMessage((msgs) => {
      consumed += msgs.length;
      if (consumed >= 3) resolve('done');
      return ConsumeConcurrentlyStatus.CONSUME_SUCCESS; // the same as returning nothing
    });
  });
  await consumer.start();
  // A service would run until stopped and export every minute; this one stops once it has consumed.
  const outcome = await Promise.race([allConsumed, stopped]);
  stopLogging();

  if (outcome === 'done') {
    await reader.forceFlush();
    const names = new Set();
    for (const rm of exporter.getMetrics())
      for (const sm of rm.scopeMetrics) for (const m of sm.metrics) names.add(m.descriptor.name);
    console.log(`metrics: ${[...names].sort().join(' ')}`);
  }
} finally {
  await consumer.shutdown();
  await producer.shutdown();
  await meterProvider.shutdown();
}
