// Runs every examples/*.mjs against one embedded broker, so that none of them rots: each must exit 0
// and print the line its first comment promises (`// expect: <line>`). The scripts import
// 'rocketwire', 'rocketwire/capture' and 'rocketwire/protocol', which resolve by self-reference to
// the bundles the package exports (rebuilt first when tsc's output is newer: bundles.ts), so they
// run exactly as a user's program would; each finds the broker through NAMESRV_ADDR. Each runs as a
// service does (until SIGTERM or SIGINT) but also stops by itself once it has done what it shows,
// which is what is checked here.
import * as fs from 'node:fs';
import * as path from 'node:path';
import t from 'tap';
import { startBroker } from '../../lib/broker/index.js';
import { repoRoot } from '../api/api-report.js';
import { ensureBundles } from './bundles.js';
import { runNode, type NodeRun } from './run-node.js';

const examplesDir = path.join(repoRoot(), 'examples');
/** Scripts run at once: the machine is small and each script is a client of the same broker. */
const PARALLEL = 3;
/** Only a safety net for a script that hangs (it is then reported as killed, never as slow). */
const KILL_AFTER_MS = 90_000;

interface Run extends NodeRun {
  file: string;
  expect: string | null;
}

/** The `// expect: …` text of a script's first line, or null when the line is missing. */
export function expectedLine(source: string): string | null {
  const first = source.split('\n', 1)[0] ?? '';
  const m = /^\/\/ expect: (.+?)\s*$/.exec(first);
  return m ? m[1]! : null;
}

async function runScript(file: string, namesrv: string): Promise<Run> {
  const source = fs.readFileSync(path.join(examplesDir, file), 'utf8');
  const expect = expectedLine(source);
  // NAMESRV_ADDR is what the scripts read, as Java's clients and mqadmin do.
  const run = await runNode(path.join(examplesDir, file), {
    cwd: examplesDir,
    env: { NAMESRV_ADDR: namesrv },
    killAfterMs: KILL_AFTER_MS,
  });
  return { file, expect, ...run };
}

/** Runs `files` at most `limit` at a time, results in the order of `files`. */
async function runAll(files: string[], namesrv: string, limit: number): Promise<Run[]> {
  const results: Run[] = new Array(files.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < files.length) {
      const i = next++;
      results[i] = await runScript(files[i]!, namesrv);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, files.length) }, worker));
  return results;
}

t.test('every example runs against the embedded broker and prints what it promises', async (t) => {
  const files = fs
    .readdirSync(examplesDir)
    .filter((f) => f.endsWith('.mjs'))
    .sort();
  t.ok(files.length >= 13, `examples/ has its scripts (${files.join(', ')})`);

  // What the examples need of a broker: SQL92 (enablePropertyFilter, off by default as Apache's),
  // and a transaction check-back within seconds rather than Apache's 6 s + 30 s.
  t.comment(await ensureBundles(repoRoot()));
  const broker = await startBroker({
    enablePropertyFilter: true,
    transactionCheckInterval: 500,
    transactionTimeOut: 500,
  });
  t.teardown(() => broker.close());

  const runs = await runAll(files, broker.namesrv, PARALLEL);
  for (const r of runs) {
    t.test(r.file, async (t) => {
      const diag = { stdout: r.stdout.slice(-4000), stderr: r.stderr.slice(-4000) };
      t.not(r.expect, null, 'its first line is a `// expect: <line>` comment');
      t.equal(r.signal, null, 'it ended by itself', diag);
      t.equal(r.code, 0, 'it exits 0', diag);
      if (r.expect !== null) t.ok(r.stdout.split('\n').includes(r.expect), `it prints "${r.expect}"`, diag);
    });
  }
});

// The examples are services: SIGTERM in the middle of their work must shut them down cleanly and at
// once (exit 0, no timer left to wait for), not kill them. retry-dlq.mjs is stopped while it waits
// for its message's retries (it prints "attempt 1" first; the retries take seconds).
t.test('an example told to stop by SIGTERM shuts down cleanly, at once', async (t) => {
  t.comment(await ensureBundles(repoRoot()));
  const broker = await startBroker({});
  t.teardown(() => broker.close());
  const started = Date.now();
  const run = await runNode(path.join(examplesDir, 'retry-dlq.mjs'), {
    cwd: examplesDir,
    env: { NAMESRV_ADDR: broker.namesrv },
    killAfterMs: KILL_AFTER_MS,
    signalAfter: { output: /^attempt 1:/m, signal: 'SIGTERM' },
  });
  const diag = { stdout: run.stdout.slice(-4000), stderr: run.stderr.slice(-4000) };
  t.match(run.stdout, /^attempt 1:/m, 'it was at work when the signal came', diag);
  t.equal(run.signal, null, 'the signal did not kill it: it shut down by itself', diag);
  t.equal(run.code, 0, 'it exits 0', diag);
  t.notMatch(run.stdout, /went to %DLQ%/, 'it stopped before finishing its work', diag);
  t.equal(run.stderr, '', 'nothing on stderr', diag);
  t.ok(
    Date.now() - started < 20_000,
    `it ended soon after the signal (${Date.now() - started} ms in all), not at a 30 s timeout`,
    diag,
  );
});

t.test('expectedLine reads the first line only', async (t) => {
  t.equal(expectedLine('// expect: sent 5 messages\nconsole.log(1);\n'), 'sent 5 messages');
  t.equal(expectedLine('// a comment\n// expect: late\n'), null, 'not on the first line: missing');
  t.equal(expectedLine('// expect: trailing spaces   \r\n'), 'trailing spaces');
});
