/**
 * The Java request–reply peers (java/ReplyClient.java) for the interop tests: a replier (push
 * consumer + MessageUtil.createReplyMessage + producer.send) and a requester
 * (DefaultMQProducer.request, latencies measured in the JVM).
 *
 *   const replier = await startJavaReplier({ namesrv, topic, group, count: 100 });
 *   const { replied } = await replier.done;
 *   const { replies, summary } = await javaRequester({ namesrv, topic, count: 100 });
 */
import { JavaClientError, spawnRefClient, type JavaCommonOptions, type RefClientProcess } from './java-client.js';

export interface JavaReplied {
  type: 'replied';
  requestProperties: Record<string, string>;
  replyTopic?: string;
  status?: string;
  msgId?: string;
  offsetMsgId?: string;
  error?: string;
}

export interface JavaReplier {
  readonly process: RefClientProcess;
  readonly replied: JavaReplied[];
  /** Resolves after `count` replies (or the timeout); rejects when the replier failed. */
  readonly done: Promise<{ replied: JavaReplied[]; complete: boolean }>;
  stop(): Promise<void>;
}

/** Start a Java replier of `topic`; resolves once its consumer has started. */
export async function startJavaReplier(
  o: JavaCommonOptions & { topic: string; group: string; count?: number; timeoutMs?: number },
): Promise<JavaReplier> {
  const p = await spawnRefClient(
    'replier',
    [
      '--topic',
      o.topic,
      '--group',
      o.group,
      '--count',
      String(o.count ?? 0),
      '--timeout-ms',
      String(o.timeoutMs ?? 60_000),
    ],
    { ...o, mainClass: 'ReplyClient' },
  );
  await p
    .waitFor((l) => l.type === 'started', 60_000)
    .catch(async (err) => {
      await p.stop();
      throw err;
    });
  const replied = (): JavaReplied[] => p.lines.filter((l) => l.type === 'replied') as unknown as JavaReplied[];
  const done = p.done.then(({ code, lines, stderr }) => {
    const summary = lines.find((l) => l.type === 'summary');
    const fatal = lines.find((l) => l.type === 'fatal');
    if (!summary || fatal)
      throw new JavaClientError(
        `java replier failed (exit ${code}): ${fatal ? String(fatal.error) : 'no summary'}`,
        code,
        lines,
        stderr,
      );
    return { replied: replied(), complete: summary.complete === true };
  });
  done.catch(() => undefined);
  return {
    process: p,
    get replied() {
      return replied();
    },
    done,
    stop: () => p.stop(),
  };
}

export interface JavaReply {
  type: 'reply';
  i: number;
  latencyUs: number;
  body: string;
  properties: Record<string, string>;
}

export interface JavaRequesterSummary {
  type: 'summary';
  replies: number;
  failed: number;
  medianUs?: number;
  p99Us?: number;
  maxUs?: number;
}

/** Run `count` sequential DefaultMQProducer.request calls (body "q<i>") and wait for them all. */
export async function javaRequester(
  o: JavaCommonOptions & { topic: string; count: number; timeoutMs?: number; onStarted?: (clientId: string) => void },
): Promise<{ replies: JavaReply[]; errors: string[]; summary: JavaRequesterSummary }> {
  const p = await spawnRefClient(
    'requester',
    ['--topic', o.topic, '--count', String(o.count), '--timeout-ms', String(o.timeoutMs ?? 10_000)],
    {
      ...o,
      mainClass: 'ReplyClient',
    },
  );
  const started = await p.waitFor((l) => l.type === 'started', 60_000);
  o.onStarted?.(String(started.clientId));
  const summary = await p
    .waitFor((l) => l.type === 'summary', 120_000 + o.count * (o.timeoutMs ?? 10_000))
    .catch(async (err) => {
      await p.stop();
      throw err;
    });
  const { lines } = await p.done;
  return {
    replies: lines.filter((l) => l.type === 'reply') as unknown as JavaReply[],
    errors: lines.filter((l) => l.type === 'error').map((l) => String(l.error)),
    summary: summary as unknown as JavaRequesterSummary,
  };
}
