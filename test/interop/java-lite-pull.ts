// TS side of test/interop/java/LitePullClient.java: Java's DefaultLitePullConsumer in subscribe mode.
import { spawnRefClient, type JavaCommonOptions, type JavaReceived, type RefClientProcess } from './java-client.js';

export interface JavaLitePullConsumer {
  readonly process: RefClientProcess;
  /** Messages polled so far. */
  readonly messages: JavaReceived[];
  /** The queues ("broker:queueId") of the topic it holds, from its last "assignment" line. */
  readonly queues: string[];
  /** SIGTERM: it commits, shuts down (persisting the offsets) and prints its summary. */
  stop(): Promise<{ received: number }>;
}

/** Starts a Java lite pull consumer (subscribe mode) and resolves once it has started. */
export async function startJavaLitePull(
  o: JavaCommonOptions & { topic: string; group: string; from?: 'first' | 'last'; timeoutMs?: number },
): Promise<JavaLitePullConsumer> {
  const args = [
    '--topic',
    o.topic,
    '--group',
    o.group,
    '--from',
    o.from ?? 'first',
    '--timeout-ms',
    String(o.timeoutMs ?? 120_000),
  ];
  const p = await spawnRefClient('subscribe', args, { ...o, mainClass: 'LitePullClient' });
  await p
    .waitFor((l) => l.type === 'started', 60_000)
    .catch(async (err) => {
      await p.stop();
      throw err;
    });
  return {
    process: p,
    get messages() {
      return p.lines.filter((l) => l.type === 'msg') as unknown as JavaReceived[];
    },
    get queues() {
      const last = p.lines.filter((l) => l.type === 'assignment').at(-1);
      return (last?.queues as string[] | undefined) ?? [];
    },
    async stop() {
      await p.stop();
      const summary = p.lines.find((l) => l.type === 'summary');
      return { received: Number(summary?.received ?? -1) };
    },
  };
}
