/**
 * TS side of test/interop/java/SqlClient.java (5.x): a Java producer whose message i carries the
 * property a=i, and a Java push consumer subscribed with MessageSelector.bySql.
 */
import { JavaClientError, spawnRefClient, type JavaCommonOptions } from './java-client.js';

export async function javaSqlProduce(
  o: JavaCommonOptions & { topic: string; count: number; queue?: number },
): Promise<number> {
  const p = await spawnRefClient(
    'produce',
    ['--topic', o.topic, '--count', String(o.count), ...(o.queue !== undefined ? ['--queue', String(o.queue)] : [])],
    { ...o, mainClass: 'SqlClient' },
  );
  const { code, lines, stderr } = await p.done;
  const summary = lines.find((l) => l.type === 'summary');
  if (code !== 0 || !summary) throw new JavaClientError(`SqlClient produce failed (exit ${code})`, code, lines, stderr);
  return Number(summary.sent);
}

export interface JavaSqlConsumed {
  /** The `a` property of each message, in the order consumed (orderly). */
  a: string[];
  /** Set when start() failed: the client's response code and message. */
  refused?: { code: number; error: string };
}

export async function javaSqlConsume(
  o: JavaCommonOptions & { topic: string; group: string; sql: string; sentinel: string; timeoutMs?: number },
): Promise<JavaSqlConsumed> {
  const p = await spawnRefClient(
    'consume',
    [
      '--topic',
      o.topic,
      '--group',
      o.group,
      '--sql',
      o.sql,
      '--sentinel',
      o.sentinel,
      '--timeout-ms',
      String(o.timeoutMs ?? 60_000),
    ],
    { ...o, mainClass: 'SqlClient' },
  );
  const { code, lines, stderr } = await p.done;
  const refused = lines.find((l) => l.type === 'refused');
  if (refused) return { a: [], refused: { code: Number(refused.code), error: String(refused.error) } };
  const summary = lines.find((l) => l.type === 'summary');
  if (code !== 0 || !summary || summary.sentinelSeen !== true) {
    const fatal = lines.find((l) => l.type === 'fatal');
    throw new JavaClientError(
      `SqlClient consume failed (exit ${code})${fatal ? `: ${String(fatal.error)}` : ''}`,
      code,
      lines,
      stderr,
    );
  }
  return { a: lines.filter((l) => l.type === 'msg').map((l) => String(l.a)) };
}
