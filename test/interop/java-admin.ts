import { spawnRefClient } from './java-client.js';
import { V5_VERSION } from './harness.js';

/** What one mqadmin command printed, and how long it took inside the shared JVM. */
export interface MqadminOutput {
  command: string;
  ms: number;
  output: string;
  /** The end of what it wrote to stderr (a failed command's stack trace). */
  stderr: string;
}

/**
 * Runs mqadmin commands (each a string of space-separated words; "-n NAMESRV" is added) in one JVM
 * (java/MqadminBatchClient.java): one start-up for the lot. Resolves to each command's stdout, in order.
 */
export async function mqadminBatch(
  namesrv: string,
  commands: string[],
  version = V5_VERSION,
  acl?: { accessKey: string; secretKey: string },
): Promise<MqadminOutput[]> {
  const p = await spawnRefClient('batch', commands, {
    namesrv,
    version,
    mainClass: 'MqadminBatchClient',
    ...(acl ? { acl } : {}),
  });
  const done = await p.done;
  const out = done.lines.filter((l) => l.type === 'mqadmin') as unknown as MqadminOutput[];
  if (out.length !== commands.length) {
    throw new Error(
      `mqadmin batch: ${out.length} of ${commands.length} commands answered (exit ${done.code}): ${done.stderr.slice(-2000)}`,
    );
  }
  return out;
}

/** The data rows of an mqadmin table: the lines after the one starting with `headerStart`, split on runs of blanks, up to the first empty line. */
export function mqadminRows(output: string, headerStart: string): string[][] {
  const lines = output.split('\n');
  const at = lines.findIndex((l) => l.trimStart().startsWith(headerStart));
  if (at < 0) return [];
  const rows: string[][] = [];
  for (const l of lines.slice(at + 1)) {
    if (l.trim() === '') break;
    rows.push(l.trim().split(/\s+/));
  }
  return rows;
}
