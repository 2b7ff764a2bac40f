/**
 * The OpenTelemetry Java agent (io.opentelemetry.javaagent:opentelemetry-javaagent from Maven
 * Central, in the jar cache) for the interop test of the `tracing` option: JVM flags that attach it
 * to a RefClient run, and the spans it logged read back from that run's stderr.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { cacheDir, run } from './harness.js';

export const OTEL_AGENT_VERSION = '2.31.0';

/** The agent jar, fetched with Maven once (a no-op when it is in the cache). */
export async function ensureOtelAgent(): Promise<string> {
  const dir = join(cacheDir(), `otel-javaagent-${OTEL_AGENT_VERSION}`);
  const jar = join(dir, `opentelemetry-javaagent-${OTEL_AGENT_VERSION}.jar`);
  if (existsSync(jar)) return jar;
  mkdirSync(dir, { recursive: true });
  const { code, stderr, stdout } = await run(
    'mvn',
    [
      '-B',
      '-q',
      'org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy',
      `-Dartifact=io.opentelemetry.javaagent:opentelemetry-javaagent:${OTEL_AGENT_VERSION}`,
      `-DoutputDirectory=${dir}`,
    ],
    10 * 60_000,
    dir,
  );
  if (code !== 0 || !existsSync(jar))
    throw new Error(`maven could not fetch the OpenTelemetry Java agent ${OTEL_AGENT_VERSION}: ${stderr}${stdout}`);
  return jar;
}

/**
 * JVM flags that attach the agent and have it log every span it ends as OTLP JSON (one export per
 * line, on stderr through the agent's own logger; W3C trace context is its default propagator).
 */
export function otelAgentArgs(jar: string, service: string): string[] {
  return [
    `-javaagent:${jar}`,
    `-Dotel.service.name=${service}`,
    '-Dotel.traces.exporter=logging-otlp',
    '-Dotel.metrics.exporter=none',
    '-Dotel.logs.exporter=none',
    '-Dotel.bsp.schedule.delay=50',
  ];
}

/** A span as the agent's OTLP JSON has it (ids in hex). */
export interface AgentSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  /** OTLP's enum: 4 PRODUCER, 5 CONSUMER. */
  kind: number;
  attributes: Record<string, unknown>;
}

function attrValue(v: Record<string, unknown>): unknown {
  for (const k of ['stringValue', 'intValue', 'boolValue', 'doubleValue']) if (k in v) return v[k];
  return v;
}

/** Every span the agent logged in `output` (a process's stderr; other lines are skipped). */
export function agentSpans(output: string): AgentSpan[] {
  const out: AgentSpan[] = [];
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const n of node) visit(n);
      return;
    }
    if (node === null || typeof node !== 'object') return;
    const o = node as Record<string, unknown>;
    if (typeof o.traceId === 'string' && typeof o.spanId === 'string' && typeof o.name === 'string') {
      const attributes: Record<string, unknown> = {};
      for (const a of (o.attributes as { key: string; value: Record<string, unknown> }[] | undefined) ?? [])
        attributes[a.key] = attrValue(a.value);
      out.push({
        traceId: o.traceId,
        spanId: o.spanId,
        parentSpanId: (o.parentSpanId as string | undefined) || undefined,
        name: o.name,
        kind: Number(o.kind),
        attributes,
      });
      return;
    }
    for (const v of Object.values(o)) visit(v);
  };
  for (const line of output.split('\n')) {
    const json = line.indexOf(' - {"resource"');
    if (json < 0) continue;
    try {
      visit(JSON.parse(line.slice(json + 3)));
    } catch {
      // a line the logger split or a message that is not an export
    }
  }
  return out;
}
