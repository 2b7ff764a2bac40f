/**
 * `npm run test:matrix`'s runner: each suite run of features.ts, one after another (each boots its
 * own real cluster; two at once would only slow both), as `node dist/test/interop/<suite>.test.js`
 * with its environment and ROCKETWIRE_REQUIRE_JAVA=1 (a suite that cannot run fails, never skips),
 * then test/matrix/results.json: each run's top-level tests and each cell's outcome. render.ts
 * makes docs/compatibility.md from it.
 *
 *   node dist/test/matrix/run-matrix.js [--only SUBSTRING...]
 *
 * --only runs the runs whose id contains one of the substrings and keeps the others' results from
 * the file (to rerun one suite after a fix). Each run's TAP output goes to
 * ${TMPDIR}/rocketwire-matrix/<id>.tap for reading after.
 */
import { spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '../support/maven-jars.js';
import { FEATURES, RUNS, COLUMNS, type SuiteRun } from './features.js';
import { cellResult, readResults, resultsFile, type MatrixResults, type RunResult } from './results.js';
import { parseTap } from './tap-results.js';

/** Far above any suite's own timeout: only a hung process reaches it. */
const RUN_LIMIT_MS = 20 * 60_000;

function runSuite(run: SuiteRun, logDir: string): Promise<RunResult> {
  const file = join(repoRoot(), 'dist', 'test', 'interop', `${run.suite}.test.js`);
  const log = join(logDir, `${run.id}.tap`);
  const started = process.hrtime.bigint();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [file], {
      cwd: repoRoot(),
      env: { ...process.env, ...run.env, ROCKETWIRE_REQUIRE_JAVA: '1', TAP_TIMEOUT: String(RUN_LIMIT_MS / 1000) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out = createWriteStream(log);
    let text = '';
    child.stdout!.on('data', (d: Buffer) => {
      text += d.toString();
      out.write(d);
    });
    child.stderr!.on('data', (d: Buffer) => out.write(d));
    const limit = setTimeout(() => child.kill('SIGKILL'), RUN_LIMIT_MS);
    child.on('close', (code, signal) => {
      clearTimeout(limit);
      out.end();
      const seconds = Math.round(Number(process.hrtime.bigint() - started) / 1e9);
      const tap = parseTap(text);
      resolve({
        id: run.id,
        suite: `test/interop/${run.suite}.test.ts`,
        env: run.env,
        exit: code ?? signal ?? 'unknown',
        seconds,
        tests: tap.tests,
        fileFailures: tap.fileFailures,
        ...(tap.skipped ? { skipped: tap.skipped } : {}),
      });
    });
  });
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const only = args[0] === '--only' ? args.slice(1) : [];
  if (args.length > 0 && only.length === 0) {
    process.stderr.write('usage: run-matrix [--only SUBSTRING...]\n');
    process.exit(2);
  }
  const chosen = only.length > 0 ? RUNS.filter((r) => only.some((s) => r.id.includes(s))) : RUNS;
  if (chosen.length === 0)
    throw new Error(`no run matches ${only.join(', ')}; runs: ${RUNS.map((r) => r.id).join(', ')}`);
  const kept = only.length > 0 && existsSync(resultsFile()) ? readResults().runs : [];
  const logDir = join(tmpdir(), 'rocketwire-matrix');
  mkdirSync(logDir, { recursive: true });

  const fresh: RunResult[] = [];
  for (const run of chosen) {
    process.stderr.write(`matrix: ${run.id} ...\n`);
    const r = await runSuite(run, logDir);
    const bad = r.tests.filter((t) => !t.ok).length;
    process.stderr.write(
      `matrix: ${run.id}: ${r.tests.length - bad}/${r.tests.length} top-level tests passed, exit ${r.exit}, ${r.seconds} s (${join(logDir, `${run.id}.tap`)})\n`,
    );
    fresh.push(r);
  }
  const runs = RUNS.map((r) => fresh.find((f) => f.id === r.id) ?? kept.find((k) => k.id === r.id)).filter(
    (r): r is RunResult => r !== undefined,
  );
  const results: MatrixResults = {
    date: new Date().toISOString().slice(0, 10),
    wallSeconds: runs.reduce((s, r) => s + r.seconds, 0),
    runs,
    cells: FEATURES.flatMap((f) => COLUMNS.map((c) => cellResult(f.key, c, f.cells[c], runs))),
  };
  writeFileSync(resultsFile(), JSON.stringify(results, null, 2) + '\n');
  const failed = results.cells.filter((c) => c.outcome === 'fail');
  process.stderr.write(
    `matrix: ${results.cells.length} cells, ${failed.length} failed; suites ran for ${results.wallSeconds} s; wrote ${resultsFile()}\n`,
  );
  // the results are written either way (the page shows a failure with its cause); the exit code tells CI
  if (failed.length > 0) process.exitCode = 1;
}

await main();
