// OpenTelemetry metrics of the RocketMQ 5.x clients, read through the SDK against the embedded
// broker: names, units, bucket boundaries, labels, counts equal to what was sent and consumed,
// failure status on a failed send and a failed handler call, the cache gauges while handlers hold
// messages, and nothing at all when no provider is set or metrics are turned off.
import t from 'tap';
import { metrics } from '@opentelemetry/api';
import { PushConsumer, pushConsumerImpl } from '../../lib/consumer/push/push-consumer.js';
import { Producer } from '../../lib/producer/index.js';
import { LitePullConsumer } from '../../lib/consumer/lite-pull/lite-pull-consumer.js';
import { SimpleConsumer } from '../../lib/consumer/pop/simple-consumer.js';
import { produce } from '../consumer/helpers.js';
import { uniqueName, until, withBroker } from '../consumer/helpers.js';
import { METRICS_MODES, gaugePoints, histogramPoints, metricsProbe } from './helpers.js';

const SEND_BUCKETS = [1, 5, 10, 20, 50, 200, 500];
const AWAIT_BUCKETS = [1, 5, 20, 100, 1000, 5000, 10000];
const PROCESS_BUCKETS = [1, 5, 10, 100, 1000, 10000, 60000];

for (const mode of METRICS_MODES)
  t.test(`send, delivery, await and process metrics with Java's names, buckets and labels (${mode})`, async (t) => {
    const broker = await withBroker();
    t.teardown(() => broker.close());
    const probe = metricsProbe(mode);
    t.teardown(() => probe.close());
    const topic = uniqueName('MetricsT');
    const group = uniqueName('metrics_cg');
    const N = 6;

    const producer = new Producer({
      namesrvAddr: broker.namesrv,
      group: uniqueName('metrics_pg'),
      metrics: { meterProvider: probe.provider },
    });
    await producer.start();
    t.teardown(() => producer.shutdown());
    for (let i = 0; i < N; i++) await producer.send({ topic, body: `m${i}` });

    // The handler fails each message's first delivery once (RECONSUME_LATER for the first call only).
    let calls = 0;
    let failedOnce = false;
    const consumer = new PushConsumer({
      consumerGroup: group,
      namesrvAddr: broker.namesrv,
      consumeFromWhere: 'first',
      metrics: { meterProvider: probe.provider },
    });
    consumer.subscribe(topic);
    await consumer.start(() => {
      calls++;
      if (!failedOnce) {
        failedOnce = true;
        return 'RECONSUME_LATER';
      }
      return 'CONSUME_SUCCESS';
    });
    t.teardown(() => consumer.shutdown());
    // N messages plus the redelivery of the failed one (from the retry topic).
    await until(() => calls >= N + 1, 'every message consumed and the failed one again', 20_000);

    const got = await probe.collect();
    const send = got.get('rocketmq_send_cost_time');
    t.ok(send, 'rocketmq_send_cost_time exported');
    t.equal(send!.descriptor.unit, 'ms');
    const sendPoints = histogramPoints(send);
    t.same(
      sendPoints.map((p) => p.attributes),
      [{ topic, client_id: producer['clientInstance'].clientId, invocation_status: 'success' }],
    );
    t.equal(sendPoints[0]!.count, N, 'one record per message sent');
    t.same(sendPoints[0]!.boundaries, SEND_BUCKETS);

    const clientId = consumer.clientId;
    const labels = { topic, client_id: clientId, consumer_group: group };
    const delivery = histogramPoints(got.get('rocketmq_delivery_latency'));
    t.equal(got.get('rocketmq_delivery_latency')!.descriptor.unit, 'ms');
    t.same(
      delivery.map((p) => p.attributes),
      [labels],
      'delivery latency labels (retried message under its own topic)',
    );
    t.ok(delivery[0]!.count >= 1 && delivery[0]!.count <= N + 1, 'one record per pull that found messages');
    t.same(delivery[0]!.boundaries, SEND_BUCKETS);

    const awaitPts = histogramPoints(got.get('rocketmq_await_time'));
    t.same(
      awaitPts.map((p) => p.attributes),
      [labels],
    );
    t.equal(awaitPts[0]!.count, N + 1, 'one await record per handler call');
    t.same(awaitPts[0]!.boundaries, AWAIT_BUCKETS);

    const proc = histogramPoints(got.get('rocketmq_process_time'));
    const byStatus = Object.fromEntries(proc.map((p) => [p.attributes.invocation_status as string, p]));
    t.same(Object.keys(byStatus).sort(), ['failure', 'success']);
    t.same(byStatus.success!.attributes, { ...labels, invocation_status: 'success' });
    t.equal(byStatus.success!.count, N, 'every message succeeded once');
    t.equal(byStatus.failure!.count, 1, 'the one failed call');
    t.same(byStatus.success!.boundaries, PROCESS_BUCKETS);
    t.equal(got.get('rocketmq_process_time')!.descriptor.unit, 'ms');
  });

for (const mode of METRICS_MODES)
  t.test(
    `orderly consumption records await and process time per call, failure for SUSPEND_CURRENT_QUEUE_A_MOMENT (${mode})`,
    async (t) => {
      const broker = await withBroker();
      t.teardown(() => broker.close());
      const probe = metricsProbe(mode);
      t.teardown(() => probe.close());
      const topic = uniqueName('MetricsOrderly');
      await produce(broker.namesrv, topic, 4, () => ({}), { single: true });
      const consumer = new PushConsumer({
        consumerGroup: uniqueName('orderly_cg'),
        namesrvAddr: broker.namesrv,
        consumeFromWhere: 'first',
        orderly: true,
        suspendCurrentQueueTimeMillis: 10,
        metrics: { meterProvider: probe.provider },
      });
      consumer.subscribe(topic);
      let calls = 0;
      await consumer.start(() => (++calls === 1 ? 'SUSPEND_CURRENT_QUEUE_A_MOMENT' : 'SUCCESS'));
      t.teardown(() => consumer.shutdown());
      await until(() => calls >= 5, 'four messages and the suspended one again');
      const got = await probe.collect();
      t.equal(
        histogramPoints(got.get('rocketmq_await_time')).reduce((n, p) => n + p.count, 0),
        5,
        'one await record per call',
      );
      const proc = Object.fromEntries(
        histogramPoints(got.get('rocketmq_process_time')).map((p) => [
          p.attributes.invocation_status as string,
          p.count,
        ]),
      );
      t.same(proc, { success: 4, failure: 1 });
    },
  );

for (const mode of METRICS_MODES)
  t.test(`a failed send attempt is recorded with invocation_status failure (${mode})`, async (t) => {
    const broker = await withBroker();
    t.teardown(() => broker.close());
    const probe = metricsProbe(mode);
    t.teardown(() => probe.close());
    const topic = uniqueName('MetricsFail');
    const producer = new Producer({
      namesrvAddr: broker.namesrv,
      group: uniqueName('metrics_pg'),
      metrics: { meterProvider: probe.provider },
    });
    await producer.start();
    t.teardown(() => producer.shutdown());
    await producer.send({ topic, body: 'ok' });
    // A queue on a broker that does not exist: the attempt fails in the send path (NoRouteError).
    await t.rejects(
      producer.send({ topic, body: 'x' }, { queue: { topic, brokerName: 'no-such-broker', queueId: 0 } }),
    );
    await producer.sendBatch([
      { topic, body: 'b1' },
      { topic, body: 'b2' },
      { topic, body: 'b3' },
    ]);
    const points = histogramPoints((await probe.collect()).get('rocketmq_send_cost_time'));
    const byStatus = Object.fromEntries(points.map((p) => [p.attributes.invocation_status as string, p.count]));
    t.same(
      byStatus,
      { success: 4, failure: 1 },
      'one single send and the batch of three succeeded, one attempt failed',
    );
  });

for (const mode of METRICS_MODES)
  t.test(`the cache gauges count the messages and bytes a consumer holds (${mode})`, async (t) => {
    const broker = await withBroker();
    t.teardown(() => broker.close());
    const probe = metricsProbe(mode);
    t.teardown(() => probe.close());
    const topic = uniqueName('MetricsGauge');
    const group = uniqueName('metrics_cg');
    const producer = new Producer({ namesrvAddr: broker.namesrv, group: uniqueName('metrics_pg') });
    await producer.start();
    const body = 'x'.repeat(100);
    for (let i = 0; i < 5; i++) await producer.send({ topic, body });
    await producer.shutdown();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let started = 0;
    const consumer = new PushConsumer({
      consumerGroup: group,
      namesrvAddr: broker.namesrv,
      consumeFromWhere: 'first',
      metrics: { meterProvider: probe.provider },
    });
    consumer.subscribe(topic);
    await consumer.start(async () => {
      started++;
      await gate;
      return 'CONSUME_SUCCESS';
    });
    t.teardown(() => consumer.shutdown());
    await until(() => started === 5, 'five handler calls holding their messages');
    const labels = { topic, client_id: consumer.clientId, consumer_group: group };
    let got = await probe.collect();
    t.equal(got.get('rocketmq_consumer_cached_messages')!.descriptor.unit, '{message}');
    t.equal(got.get('rocketmq_consumer_cached_bytes')!.descriptor.unit, 'By');
    const msgs = gaugePoints(got.get('rocketmq_consumer_cached_messages')).find((p) => p.attributes.topic === topic);
    const bytes = gaugePoints(got.get('rocketmq_consumer_cached_bytes')).find((p) => p.attributes.topic === topic);
    t.same(msgs, { attributes: labels, value: 5 }, "five messages cached, summed over the topic's queues");
    t.same(bytes, { attributes: labels, value: 500 }, 'their body bytes');
    release();
    await until(() => consumer.stats().messagesConsumed >= 5, 'the handlers finished');
    got = await probe.collect();
    t.equal(
      gaugePoints(got.get('rocketmq_consumer_cached_messages')).find((p) => p.attributes.topic === topic)?.value,
      0,
      'empty once consumed',
    );
  });

t.test('no provider set: nothing is built; the global provider once set; metrics: false turns it off', async (t) => {
  const broker = await withBroker();
  t.teardown(() => broker.close());
  const topic = uniqueName('MetricsGlobal');
  const noProvider = new PushConsumer({ consumerGroup: uniqueName('cg'), namesrvAddr: broker.namesrv });
  noProvider.subscribe(topic);
  await noProvider.start(() => 'CONSUME_SUCCESS');
  t.equal(
    pushConsumerImpl(noProvider).metrics,
    null,
    "the API's no-op provider: no metrics object, no per-message work",
  );
  await noProvider.shutdown();
  const plainProducer = new Producer({ namesrvAddr: broker.namesrv, group: uniqueName('pg') });
  await plainProducer.start();
  t.equal(plainProducer['instr'].metrics, null);
  t.equal(plainProducer['instr'].observed, false, 'a send is not even timed');
  await plainProducer.shutdown();

  const probe = metricsProbe();
  t.teardown(() => probe.close());
  metrics.setGlobalMeterProvider(probe.sdk);
  t.teardown(() => metrics.disable());
  const producer = new Producer({ namesrvAddr: broker.namesrv, group: uniqueName('pg') });
  await producer.start();
  await producer.send({ topic, body: 'g' });
  const off = new Producer({ namesrvAddr: broker.namesrv, group: uniqueName('pg'), metrics: false });
  await off.start();
  await off.send({ topic, body: 'not recorded' });
  t.equal(off['instr'].metrics, null, 'metrics: false ignores the global provider');
  await off.shutdown();
  await producer.shutdown();
  const points = histogramPoints((await probe.collect()).get('rocketmq_send_cost_time'));
  t.equal(
    points.reduce((n, p) => n + p.count, 0),
    1,
    'the global provider got the one send of the producer without the option',
  );
});

for (const mode of METRICS_MODES)
  t.test(
    `LitePullConsumer: delivery latency per pull, await time per poll; SimpleConsumer: delivery latency per receive (${mode})`,
    async (t) => {
      const broker = await withBroker();
      t.teardown(() => broker.close());
      const probe = metricsProbe(mode);
      t.teardown(() => probe.close());
      const topic = uniqueName('MetricsLite');
      await produce(broker.namesrv, topic, 4, () => ({}), { single: true });
      const group = uniqueName('lite_cg');
      const lite = new LitePullConsumer({
        consumerGroup: group,
        namesrvAddr: broker.namesrv,
        consumeFromWhere: 'first',
        metrics: { meterProvider: probe.provider },
      });
      lite.subscribe(topic);
      await lite.start();
      let got = 0;
      let polls = 0;
      while (got < 4) {
        const batch = await lite.poll(1000);
        if (batch.length > 0) polls++;
        got += batch.length;
      }
      await lite.shutdown();
      let m = await probe.collect();
      const labels = { topic, client_id: lite.clientId, consumer_group: group };
      const delivery = histogramPoints(m.get('rocketmq_delivery_latency'));
      t.same(
        delivery.map((p) => p.attributes),
        [labels],
      );
      t.ok(delivery[0]!.count >= 1 && delivery[0]!.count <= 4, 'one per pull that found messages');
      const awaitPts = histogramPoints(m.get('rocketmq_await_time'));
      t.equal(awaitPts[0]!.count, polls, 'one per poll that returned messages');
      t.notOk(m.has('rocketmq_process_time'), 'no handler, no process time');

      const popTopic = uniqueName('MetricsPop');
      await produce(broker.namesrv, popTopic, 3, () => ({}), { single: true });
      const popGroup = uniqueName('pop_cg');
      const simple = new SimpleConsumer({
        namesrvAddr: broker.namesrv,
        consumerGroup: popGroup,
        topic: popTopic,
        initMode: 'MIN',
        awaitDurationMs: 0,
        metrics: { meterProvider: probe.provider },
      });
      await simple.start();
      t.teardown(() => simple.shutdown());
      let received = 0;
      let receives = 0;
      for (let i = 0; i < 20 && received < 3; i++) {
        const r = await simple.receive(32, 60_000);
        if (r.length > 0) receives++;
        received += r.length;
      }
      t.equal(received, 3);
      m = await probe.collect();
      const popDelivery = histogramPoints(m.get('rocketmq_delivery_latency')).find(
        (p) => p.attributes.topic === popTopic,
      );
      t.match(
        popDelivery,
        { attributes: { topic: popTopic, consumer_group: popGroup }, count: receives },
        "one per receive that brought messages, as Java's SimpleConsumer",
      );
    },
  );

t.test('a bad metrics option names it', async (t) => {
  t.throws(
    () => new Producer({ namesrvAddr: '127.0.0.1:9876', group: 'pg', metrics: { meterProvider: {} as never } }),
    { name: 'ProducerOptionError', option: 'metrics.meterProvider' },
  );
  t.throws(() => new Producer({ namesrvAddr: '127.0.0.1:9876', group: 'pg', metrics: 'on' as never }), {
    name: 'ProducerOptionError',
    option: 'metrics',
  });
  t.throws(
    () =>
      new PushConsumer({ consumerGroup: 'cg', namesrvAddr: '127.0.0.1:9876', metrics: { meterProvider: 42 as never } }),
    { name: 'ConsumerOptionError', option: 'metrics.meterProvider' },
  );
});
