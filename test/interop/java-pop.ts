/**
 * The Java side of the POP proofs (test/interop/java/PopClient.java): the admin call that switches
 * a group to POP (what `mqadmin setConsumeMode` sends) and Java 5.x's DefaultMQPushConsumer in
 * pop mode (clientRebalance=false).
 */
import {
  JavaClientError,
  spawnRefClient,
  type JavaCommonOptions,
  type JavaReceived,
  type RefClientProcess,
} from './java-client.js';

/** SET_MESSAGE_REQUEST_MODE (401) through DefaultMQAdminExt on each of `brokers`. */
export async function javaSetMessageRequestMode(
  o: JavaCommonOptions & {
    brokers: string[];
    topic: string;
    group: string;
    mode: 'POP' | 'PULL';
    popShareQueueNum?: number;
  },
): Promise<void> {
  const p = await spawnRefClient(
    'set-mode',
    [
      '--broker',
      o.brokers.join(','),
      '--topic',
      o.topic,
      '--group',
      o.group,
      '--mode',
      o.mode,
      ...(o.popShareQueueNum !== undefined ? ['--share', String(o.popShareQueueNum)] : []),
    ],
    { ...o, mainClass: 'PopClient' },
  );
  await p.waitFor((l) => l.type === 'mode-set', 60_000);
  await p.done;
}

/** A message as the Java pop consumer printed it, with its receipt handle. */
export interface JavaPopped extends JavaReceived {
  popCk: string | null;
}

export interface JavaPopConsumer {
  readonly process: RefClientProcess;
  readonly messages: JavaPopped[];
  readonly done: Promise<{ consumed: number; messages: JavaPopped[] }>;
  stop(): Promise<void>;
}

/** Start Java's DefaultMQPushConsumer in pop mode; resolves once started. */
export async function startJavaPopConsumer(
  o: JavaCommonOptions & { topic: string; group: string; expect?: number; timeoutMs?: number; invisibleMs?: number },
): Promise<JavaPopConsumer> {
  const p = await spawnRefClient(
    'pop-consume',
    [
      '--topic',
      o.topic,
      '--group',
      o.group,
      '--expect',
      String(o.expect ?? 0),
      '--timeout-ms',
      String(o.timeoutMs ?? 60_000),
      ...(o.invisibleMs !== undefined ? ['--invisible-ms', String(o.invisibleMs)] : []),
    ],
    { ...o, mainClass: 'PopClient' },
  );
  await p
    .waitFor((l) => l.type === 'started', 60_000)
    .catch(async (err) => {
      await p.stop();
      throw err;
    });
  const msgs = (): JavaPopped[] => p.lines.filter((l) => l.type === 'msg') as unknown as JavaPopped[];
  const done = p.done.then(({ code, lines, stderr }) => {
    const summary = lines.find((l) => l.type === 'summary');
    if (!summary) throw new JavaClientError(`java pop-consume failed (exit ${code})`, code, lines, stderr);
    return { consumed: Number(summary.consumed), messages: msgs() };
  });
  done.catch(() => undefined);
  return {
    process: p,
    get messages() {
      return msgs();
    },
    done,
    stop: () => p.stop(),
  };
}
