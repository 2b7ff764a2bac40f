// TS wrapper of test/interop/java/TxClient.java: a stock TransactionMQProducer.
import { JavaClientError, spawnRefClient, type JavaCommonOptions } from './java-client.js';

export interface JavaTxProduceOptions extends JavaCommonOptions {
  topic: string;
  group: string;
  commit?: number;
  rollback?: number;
  check?: number;
  /** How long the producer stays up for the check-backs of the `check` messages. Default 60 000. */
  checkTimeoutMs?: number;
}

export interface JavaTxSummary {
  type: 'summary';
  sent: number;
  failed: number;
  sentMs: number;
  checked: number;
  checkCommitted: number;
  checkRolledBack: number;
  unchecked: number;
  elapsedMs: number;
}

export interface JavaTxChecked {
  type: 'checked';
  seq: number;
  body: string;
  msgId: string;
  topic: string;
  state: string;
  checkTimes: string | null;
}

/** Run TxClient produce and wait for its summary (all check-backs answered, or the timeout). */
export async function javaTxProduce(
  o: JavaTxProduceOptions,
): Promise<{ summary: JavaTxSummary; checked: JavaTxChecked[] }> {
  const args = ['--topic', o.topic, '--group', o.group];
  for (const k of ['commit', 'rollback', 'check'] as const) if (o[k] !== undefined) args.push(`--${k}`, String(o[k]));
  args.push('--check-timeout-ms', String(o.checkTimeoutMs ?? 60_000));
  const p = await spawnRefClient('produce', args, { ...o, mainClass: 'TxClient' });
  const { code, lines, stderr } = await p.done;
  const summary = lines.find((l) => l.type === 'summary') as unknown as JavaTxSummary | undefined;
  if (!summary) {
    const fatal = lines.find((l) => l.type === 'fatal' || l.type === 'error');
    throw new JavaClientError(
      `TxClient produce failed (exit ${code}): ${fatal ? String(fatal.error) : 'no summary'}`,
      code,
      lines,
      stderr,
    );
  }
  return { summary, checked: lines.filter((l) => l.type === 'checked') as unknown as JavaTxChecked[] };
}
