// TS wrappers of TraceClient.java (message trace): Java's encoder vectors, and a Java
// producer / push consumer with enableMsgTrace.
import { join } from 'node:path';
import { jarsDir, run, V5_VERSION } from './harness.js';
import { JavaClientError, spawnRefClient, type JavaCommonOptions } from './java-client.js';

function flag(name: string, value: string | number | undefined): string[] {
  return value === undefined ? [] : [`--${name}`, String(value)];
}

/** The JSON lines `TraceClient encode` prints (the golden vectors of test/fixtures/trace/). */
export async function javaTraceVectors(o: JavaCommonOptions): Promise<string[]> {
  const p = await spawnRefClient('encode', [], { ...o, mainClass: 'TraceClient' });
  const { code, lines, stderr } = await p.done;
  if (code !== 0) throw new JavaClientError(`TraceClient encode failed (exit ${code})`, code, lines, stderr);
  return lines.map((l) => JSON.stringify(l));
}

export interface JavaTraceSent {
  msgId: string;
  offsetMsgId: string;
  status: string;
  regionId: string | null;
  traceOn: boolean;
}

/** A DefaultMQProducer with enableMsgTrace sends `count` messages (keys jkey-i) and shuts down (which flushes its trace). */
export async function javaTraceProduce(
  o: JavaCommonOptions & { topic: string; count: number; group?: string; traceTopic?: string },
): Promise<JavaTraceSent[]> {
  const p = await spawnRefClient(
    'produce',
    ['--topic', o.topic, '--count', String(o.count), ...flag('group', o.group), ...flag('trace-topic', o.traceTopic)],
    { ...o, mainClass: 'TraceClient' },
  );
  const { code, lines, stderr } = await p.done;
  if (code !== 0 || !lines.some((l) => l.type === 'done'))
    throw new JavaClientError(`TraceClient produce failed (exit ${code})`, code, lines, stderr);
  return lines.filter((l) => l.type === 'sent') as unknown as JavaTraceSent[];
}

/** A DefaultMQPushConsumer with enableMsgTrace consumes `expect` messages from the first offset and shuts down. */
export async function javaTraceConsume(
  o: JavaCommonOptions & { topic: string; group: string; expect: number; traceTopic?: string; timeoutMs?: number },
): Promise<Array<{ msgId: string; region: string | null; traceOn: string | null }>> {
  const p = await spawnRefClient(
    'consume',
    [
      '--topic',
      o.topic,
      '--group',
      o.group,
      '--expect',
      String(o.expect),
      ...flag('trace-topic', o.traceTopic),
      ...flag('timeout-ms', o.timeoutMs),
    ],
    { ...o, mainClass: 'TraceClient' },
  );
  const { code, lines, stderr } = await p.done;
  const done = lines.find((l) => l.type === 'done');
  if (code !== 0 || !done || done.complete !== true)
    throw new JavaClientError(`TraceClient consume failed (exit ${code})`, code, lines, stderr);
  return lines.filter((l) => l.type === 'msg') as never;
}

/** `mqadmin queryMsgTraceById -i <msgId>` (MQAdminStartup from the tools jar); its printed text. */
export async function mqadminQueryMsgTraceById(namesrv: string, msgId: string, traceTopic?: string): Promise<string> {
  const r = await run(
    'java',
    [
      '-Xmx256m',
      '-XX:TieredStopAtLevel=1',
      '-Drocketmq.client.logUseSlf4j=false',
      '-cp',
      join(jarsDir(V5_VERSION), '*'),
      'org.apache.rocketmq.tools.command.MQAdminStartup',
      'queryMsgTraceById',
      '-n',
      namesrv,
      '-i',
      msgId,
      ...(traceTopic ? ['-t', traceTopic] : []),
    ],
    120_000,
  );
  // MQAdminStartup exits 0 even when a command failed (docs/real-broker.md): the text is what counts.
  return `${r.stdout}\n${r.stderr}`;
}

/** The `Pub` and `Sub` rows of queryMsgTraceById's table: type, group, status. */
export function traceRows(text: string): Array<{ type: 'Pub' | 'Sub'; group: string; costMs: number; status: string }> {
  const rows: Array<{ type: 'Pub' | 'Sub'; group: string; costMs: number; status: string }> = [];
  for (const line of text.split('\n')) {
    const m = /^(Pub|Sub)\s+(\S+)\s+\S+\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\s+(\d+)ms\s+(\S+)/.exec(line);
    if (m) rows.push({ type: m[1] as 'Pub' | 'Sub', group: m[2]!, costMs: Number(m[3]), status: m[4]! });
  }
  return rows;
}
