// The package's entry points are esbuild bundles of dist/ (dist/pkg, `npm run bundle`, part of
// `npm run build`), and a program that imports 'rocketwire' by the package's self-reference runs
// those bundles, exactly as an installed package would. `npx tsc` alone does not rebuild them, so a
// test that runs such programs (the examples, the README's first program) first makes sure they are
// there and not older than what tsc wrote; otherwise it would run yesterday's code, or fail to
// import. Two test files may ask at once (tap runs two jobs): a lock directory makes one of them
// bundle while the other waits.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { until } from '../support/until.js';

/** The files package.json's exports point at (their `default` condition). */
export function exportedFiles(root: string): string[] {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as {
    exports?: Record<string, unknown>;
  };
  const out: string[] = [];
  for (const target of Object.values(pkg.exports ?? {})) {
    const file = typeof target === 'string' ? target : (target as { default?: string }).default;
    if (typeof file === 'string' && file.endsWith('.js')) out.push(path.join(root, file));
  }
  return out;
}

/** Newest modification time of the .js files under `dir`, skipping `skip` (the bundles' own folder). */
function newestJs(dir: string, skip: string): number {
  let newest = 0;
  if (!fs.existsSync(dir)) return newest;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (p === skip) continue;
    if (entry.isDirectory()) newest = Math.max(newest, newestJs(p, skip));
    else if (entry.name.endsWith('.js')) newest = Math.max(newest, fs.statSync(p).mtimeMs);
  }
  return newest;
}

/** Why the bundles must be (re)built, or null when they are there and newer than tsc's output. */
export function bundlesStale(root: string): string | null {
  const files = exportedFiles(root).filter((f) => f.includes(`${path.sep}dist${path.sep}pkg${path.sep}`));
  if (files.length === 0) return null; // the exports point at tsc's output itself: nothing to bundle
  const missing = files.find((f) => !fs.existsSync(f));
  if (missing) return `${path.relative(root, missing)} is missing`;
  const built = Math.min(...files.map((f) => fs.statSync(f).mtimeMs));
  const dist = path.join(root, 'dist');
  const compiled = Math.max(
    newestJs(path.join(dist, 'lib'), path.join(dist, 'pkg')),
    newestJs(path.join(dist, 'protocol'), path.join(dist, 'pkg')),
  );
  return compiled > built ? 'tsc wrote files after the last bundle' : null;
}

function run(cmd: string, args: string[], cwd: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (output += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (output += s));
    child.on('close', (code) => resolve({ code, output }));
  });
}

/**
 * Runs `npm run bundle` when the bundles are missing or older than tsc's output; returns what it
 * did, for the test's log. Throws with npm's output when bundling fails.
 */
export async function ensureBundles(root: string): Promise<string> {
  const lock = path.join(root, 'dist', '.bundle.lock');
  let upToDate = false;
  // Another test may be bundling: wait for its lock to go (a lock left by a killed run is older than
  // any bundling takes).
  await until(
    () => {
      if (bundlesStale(root) === null) return (upToDate = true);
      try {
        fs.mkdirSync(lock);
        return true;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        const age = Date.now() - fs.statSync(lock).mtimeMs;
        if (age > 120_000) fs.rmSync(lock, { recursive: true, force: true });
        return false;
      }
    },
    `the lock ${lock}`,
    120_000,
    20,
  );
  if (upToDate) return 'the bundles are up to date';
  try {
    const why = bundlesStale(root);
    if (why === null) return 'the bundles are up to date';
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const { code, output } = await run(npm, ['run', '--silent', 'bundle'], root);
    if (code !== 0) throw new Error(`npm run bundle exited ${code}: ${output}`);
    return `bundled (${why})`;
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}
