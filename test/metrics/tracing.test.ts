// The `tracing` option: a PRODUCER span per sent message whose context travels in the message's
// properties (traceparent, as the OpenTelemetry Java agent's RocketMQ instrumentation writes it),
// and a CONSUMER span per handled message that continues it, active while the handler runs. Off by
// default: then nothing is added to messages.
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import t, { type Test } from 'tap';
import { startBroker, type EmbeddedBroker } from '../../lib/broker/index.js';
import { PushConsumer } from '../../lib/consumer/push/push-consumer.js';
import type { MessageExt } from '../../lib/consumer/core/message.js';
import { Producer } from '../../lib/producer/index.js';
import { ConsumerOptionError } from '../../lib/consumer/errors.js';
import { until } from '../support/until.js';

context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());

let n = 0;
const uniq = (p: string): string => `${p}_${process.pid}_${n++}`;

function provider(): { tracerProvider: BasicTracerProvider; spans: InMemorySpanExporter } {
  const spans = new InMemorySpanExporter();
  return { tracerProvider: new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] }), spans };
}

async function clients(
  t: Test,
  broker: EmbeddedBroker,
  tracing: ConstructorParameters<typeof Producer>[0]['tracing'],
  handler: (msg: MessageExt) => unknown,
): Promise<{ producer: Producer; topic: string; group: string }> {
  const topic = uniq('TraceT');
  const group = uniq('cg');
  const producer = new Producer({ group: uniq('pg'), namesrvAddr: broker.namesrv, tracing, instanceName: uniq('p') });
  await producer.start();
  t.teardown(() => producer.shutdown());
  await producer.send({ topic, body: 'warm-up' }); // the topic exists before the consumer looks it up
  const consumer = new PushConsumer({
    group,
    namesrvAddr: broker.namesrv,
    consumeFromWhere: 'first',
    tracing,
    instanceName: uniq('c'),
  });
  consumer.subscribe(topic, '*');
  await consumer.start({ eachMessage: handler });
  t.teardown(() => consumer.shutdown());
  return { producer, topic, group };
}

const byName = (spans: ReadableSpan[], name: string): ReadableSpan[] => spans.filter((s) => s.name === name);

t.test('tracing', async (t) => {
  const broker = await startBroker();
  t.teardown(() => broker.close());

  t.test('off by default: no property added, no span', async (t) => {
    const got: MessageExt[] = [];
    const { producer, topic } = await clients(t, broker, undefined, (m) => void got.push(m));
    await producer.send({ topic, body: 'plain', properties: { a: '1' } });
    await until(() => got.some((m) => String(m.body) === 'plain'), 'the message');
    const msg = got.find((m) => String(m.body) === 'plain')!;
    t.equal(msg.properties.traceparent, undefined);
    t.same(msg.userProperties, { a: '1' });
  });

  t.test('a producer span, carried in traceparent, continued by the consumer span', async (t) => {
    const { tracerProvider, spans } = provider();
    const tracing = { tracerProvider, propagator: new W3CTraceContextPropagator() };
    const got: MessageExt[] = [];
    const inner = tracerProvider.getTracer('app');
    const { producer, topic, group } = await clients(t, broker, tracing, (m) => {
      got.push(m);
      // what the handler does is a child of the consumer span
      inner.startSpan('handler work').end();
    });
    const parent = inner.startSpan('checkout');
    const sent = await context.with(trace.setSpan(context.active(), parent), () =>
      producer.send({ topic, body: 'traced', tags: 'TagA', keys: ['k1'] }),
    );
    parent.end();
    await until(() => got.some((m) => String(m.body) === 'traced'), 'the message');
    await until(() => byName(spans.getFinishedSpans(), 'handler work').length >= 2, 'the handler spans');
    const finished = spans.getFinishedSpans();
    const publish = byName(finished, `${topic} publish`).find(
      (s) => s.attributes['messaging.message.id'] === sent.msgId,
    );
    t.ok(publish, 'a publish span with the message id');
    t.equal(publish!.kind, 3, 'PRODUCER');
    t.equal(publish!.parentSpanContext?.spanId, parent.spanContext().spanId, 'child of the active span at send');
    t.match(publish!.attributes, {
      'messaging.system': 'rocketmq',
      'messaging.destination.name': topic,
      'messaging.operation': 'publish',
      'messaging.rocketmq.message.tag': 'TagA',
      'messaging.rocketmq.message.keys': 'k1',
    });
    const msg = got.find((m) => String(m.body) === 'traced')!;
    const traceId = publish!.spanContext().traceId;
    t.equal(msg.properties.traceparent, `00-${traceId}-${publish!.spanContext().spanId}-01`, 'W3C traceparent');
    const process = byName(finished, `${topic} process`).find(
      (s) => s.attributes['messaging.message.id'] === msg.msgId,
    );
    t.ok(process, 'a process span with the message id');
    t.equal(process!.kind, 4, 'CONSUMER');
    t.equal(process!.spanContext().traceId, traceId, 'same trace');
    t.equal(process!.parentSpanContext?.spanId, publish!.spanContext().spanId, 'child of the publish span');
    t.match(process!.attributes, { 'messaging.rocketmq.client_group': group, 'messaging.operation': 'process' });
    const work = byName(finished, 'handler work').find((s) => s.spanContext().traceId === traceId);
    t.equal(work?.parentSpanContext?.spanId, process!.spanContext().spanId, 'handler spans nest under process');
  });

  t.test('a handler that throws ends its span with the error', async (t) => {
    const { tracerProvider, spans } = provider();
    const tracing = { tracerProvider, propagator: new W3CTraceContextPropagator() };
    const { producer, topic } = await clients(t, broker, tracing, (m) => {
      if (String(m.body) === 'flaky') throw new Error('payment service down');
    });
    const sent = await producer.send({ topic, body: 'flaky' });
    const failed = (): ReadableSpan | undefined =>
      byName(spans.getFinishedSpans(), `${topic} process`).find(
        (s) => s.attributes['messaging.message.id'] === sent.msgId,
      );
    await until(() => failed() !== undefined, 'the span of the failed call');
    t.equal(failed()!.status.code, 2, 'ERROR');
    t.equal(failed()!.status.message, 'payment service down');
    t.ok(
      failed()!.events.some((e) => e.name === 'exception'),
      'the exception is recorded',
    );
  });

  t.test('tracing: true uses the global provider and propagator', async (t) => {
    const { tracerProvider, spans } = provider();
    trace.setGlobalTracerProvider(tracerProvider);
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    t.teardown(() => {
      trace.disable();
      propagation.disable();
    });
    const got: MessageExt[] = [];
    const { producer, topic } = await clients(t, broker, true, (m) => void got.push(m));
    await producer.send({ topic, body: 'global' });
    await until(() => got.some((m) => String(m.body) === 'global'), 'the message');
    t.match(got.find((m) => String(m.body) === 'global')!.properties.traceparent, /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    await until(() => byName(spans.getFinishedSpans(), `${topic} process`).length >= 2, 'the process spans');
  });

  t.test('a bad option is refused at construction', async (t) => {
    t.throws(
      () => new PushConsumer({ group: 'g', namesrvAddr: broker.namesrv, tracing: { tracerProvider: {} as never } }),
      ConsumerOptionError,
    );
    t.throws(() => new Producer({ group: 'g', namesrvAddr: broker.namesrv, tracing: 'yes' as never }), {
      name: 'ProducerOptionError',
      option: 'tracing',
    });
  });
});
