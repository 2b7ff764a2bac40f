// The `tracing` option beside the OpenTelemetry Java agent (its RocketMQ instrumentation, attached
// to the stock Java client) on a real Apache RocketMQ 5.3.3 broker: a trace started in a Node
// producer continues in a Java consumer, and one started in a Java producer continues in a Node
// consumer, both ways through the `traceparent` message property.
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import t from 'tap';
import type { MessageExt } from '../../lib/consumer/index.js';
import { PushConsumer } from '../../lib/consumer/index.js';
import { Producer } from '../../lib/producer/index.js';
import { until } from '../support/until.js';
import { startRealCluster, V5_VERSION } from './harness.js';
import { javaConsume, javaProduce } from './java-client.js';
import { agentSpans, ensureOtelAgent, otelAgentArgs } from './otel-agent.js';
import { interopReady } from './skip.js';

t.setTimeout(240_000);

const OTLP_PRODUCER = 4;
const OTLP_CONSUMER = 5;

if (await interopReady(t, [V5_VERSION])) {
  const agent = await ensureOtelAgent();
  const cluster = await startRealCluster({ version: V5_VERSION });
  t.teardown(() => cluster.stop({ graceful: false }));
  const spans = new InMemorySpanExporter();
  const tracing = {
    tracerProvider: new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] }),
    propagator: new W3CTraceContextPropagator(),
  };

  t.test('a trace started by a rocketwire producer continues in a Java consumer with the agent', async (t) => {
    const topic = 'OtelNodeToJava';
    await cluster.createTopic(topic, { queues: 2 });
    const producer = new Producer({ group: 'otel_node_pg', namesrvAddr: cluster.namesrv, tracing });
    await producer.start();
    t.teardown(() => producer.shutdown());
    const sent = await producer.send({ topic, body: 'from node' });
    const publish = spans.getFinishedSpans().find((s) => s.name === `${topic} publish`)!;
    t.ok(publish, 'the rocketwire publish span');
    const got = await javaConsume({
      namesrv: cluster.namesrv,
      topic,
      group: 'otel_java_cg',
      expect: 1,
      from: 'first',
      jvmArgs: otelAgentArgs(agent, 'java-consumer'),
    });
    t.equal(got.messages[0]?.msgId, sent.msgId);
    t.match(got.messages[0]?.properties.traceparent, /^00-/, 'Java sees the traceparent property');
    const process = agentSpans(got.stderr).find((s) => s.name === `${topic} process`);
    t.ok(process, "the agent's process span");
    t.equal(process?.kind, OTLP_CONSUMER);
    t.equal(process?.traceId, publish.spanContext().traceId, 'one trace');
    t.equal(process?.parentSpanId, publish.spanContext().spanId, 'the Java span is the child of the Node span');
    t.equal(process?.attributes['messaging.message.id'], sent.msgId, 'the agent names the same message');
  });

  t.test('a trace started by a Java producer with the agent continues in a rocketwire consumer', async (t) => {
    const topic = 'OtelJavaToNode';
    await cluster.createTopic(topic, { queues: 2 });
    const { sent, stderr } = await javaProduce({
      namesrv: cluster.namesrv,
      topic,
      count: 1,
      jvmArgs: otelAgentArgs(agent, 'java-producer'),
    });
    const javaPublish = agentSpans(stderr).find((s) => s.name === `${topic} publish`);
    t.ok(javaPublish, "the agent's publish span");
    t.equal(javaPublish?.kind, OTLP_PRODUCER);
    const got: MessageExt[] = [];
    const consumer = new PushConsumer({
      group: 'otel_node_cg',
      namesrvAddr: cluster.namesrv,
      consumeFromWhere: 'first',
      tracing,
    });
    consumer.subscribe(topic, '*');
    await consumer.start({ eachMessage: (m) => void got.push(m) });
    t.teardown(() => consumer.shutdown());
    await until(() => got.length === 1, 'the Java message', 60_000);
    t.equal(got[0]!.msgId, sent[0]!.msgId);
    t.equal(
      got[0]!.properties.traceparent?.slice(0, 52),
      `00-${javaPublish!.traceId}-${javaPublish!.spanId}`,
      `the property the agent wrote (${got[0]!.properties.traceparent}) names its span`,
    );
    const process = spans.getFinishedSpans().find((s) => s.name === `${topic} process`);
    t.ok(process, 'the rocketwire process span');
    t.equal(process?.spanContext().traceId, javaPublish?.traceId, 'one trace');
    t.equal(process?.parentSpanContext?.spanId, javaPublish?.spanId, 'the Node span is the child of the Java span');
  });
}
