// TS side of test/interop/java/TimerClient.java (timer messages and namespaces).
import { spawnRefClient, type RefClientProcess } from './java-client.js';

export interface JavaTimerSent {
  msgId: string;
  sendTime: number;
  topic: string;
  status: string;
  /** The send result's recall handle ('' when the broker gave none). */
  recallHandle: string;
}

/** A recall the Java producer made (`recallEvery`): the broker's answer, or the exception it threw. */
export interface JavaRecall {
  type: 'recalled' | 'recall-failed';
  msgId: string;
  answer?: string;
  error?: string;
}

export interface JavaTimerReceived {
  msgId: string;
  receiveTime: number;
  topic: string;
  body: string;
  properties: Record<string, string>;
}

/** Java producer: `count` messages with setDelayTimeMs(delayMs) (or none), in the namespace if given. */
export async function javaTimerProduce(o: {
  namesrv: string;
  topic: string;
  count: number;
  delayMs?: number;
  namespace?: string;
  namespaceV2?: string;
  /** Recall messages 0, K, 2K… right after sending them (their lines land in `recalls`). */
  recallEvery?: number;
  /** Client version (default 5.3.3). */
  version?: string;
  recalls?: JavaRecall[];
}): Promise<JavaTimerSent[]> {
  const args = ['--topic', o.topic, '--count', String(o.count)];
  if (o.recallEvery !== undefined) args.push('--recall-every', String(o.recallEvery));
  if (o.delayMs !== undefined) args.push('--delay-ms', String(o.delayMs));
  if (o.namespace !== undefined) args.push('--namespace', o.namespace);
  if (o.namespaceV2 !== undefined) args.push('--namespace-v2', o.namespaceV2);
  const p = await spawnRefClient('produce', args, {
    namesrv: o.namesrv,
    mainClass: 'TimerClient',
    ...(o.version ? { version: o.version } : {}),
  });
  const { code, lines, stderr } = await p.done;
  o.recalls?.push(
    ...(lines.filter((l) => l.type === 'recalled' || l.type === 'recall-failed') as unknown as JavaRecall[]),
  );
  if (code !== 0)
    throw new Error(`TimerClient produce exited ${code}: ${JSON.stringify(lines.slice(-2))} ${stderr.slice(-400)}`);
  return lines.filter((l) => l.type === 'sent') as unknown as JavaTimerSent[];
}

/** Java push consumer (from the first offset), ready once it holds `queues` (default 2) queues of the topic; `received` fills as messages come. */
export async function startJavaTimerConsumer(o: {
  namesrv: string;
  topic: string;
  group: string;
  namespace?: string;
  namespaceV2?: string;
  queues?: number;
}): Promise<{ proc: RefClientProcess; received: () => JavaTimerReceived[] }> {
  const args = ['--topic', o.topic, '--group', o.group, '--timeout-ms', '120000', '--queues', String(o.queues ?? 2)];
  if (o.namespace !== undefined) args.push('--namespace', o.namespace);
  if (o.namespaceV2 !== undefined) args.push('--namespace-v2', o.namespaceV2);
  const proc = await spawnRefClient('consume', args, { namesrv: o.namesrv, mainClass: 'TimerClient' });
  await proc.waitFor((l) => l.type === 'ready', 60_000);
  return { proc, received: () => proc.lines.filter((l) => l.type === 'received') as unknown as JavaTimerReceived[] };
}
