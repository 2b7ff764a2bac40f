/**
 * Where the real Apache RocketMQ jars come from: fetch-jars.sh resolves them with Maven into
 * ${ROCKETWIRE_CACHE:-~/.cache/rocketwire}/rmq-<version>/lib (5.x: the proxy's extra jars in
 * rmq-<version>/proxy), once per machine. The interop suites, the Java peers and the benches name
 * their release with the constants below.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The newest 5.3.x and the newest 4.x whose server jars are on Maven Central (4.9.8's are not). */
export const V53_VERSION = '5.3.3';
export const V4_VERSION = '4.9.7';
/**
 * The 5.x release the real-broker suites start (and their Java peers run): 5.3.3 unless
 * ROCKETWIRE_V5_VERSION names another 5.x release, as `npm run test:matrix` does to run the feature
 * suites on 5.5.0 too.
 */
export const V5_VERSION = v5FromEnv(process.env.ROCKETWIRE_V5_VERSION);
/** The newest release whose jars all resolve from Maven Central (5.5.1's client jar is not served). */
export const V55_VERSION = '5.5.0';

/** ROCKETWIRE_V5_VERSION checked: unset or empty gives 5.3.3; anything but a 5.x.y release is refused. */
export function v5FromEnv(value: string | undefined): string {
  if (value === undefined || value === '') return V53_VERSION;
  if (!/^5\.\d+\.\d+$/.test(value)) {
    throw new Error(
      `ROCKETWIRE_V5_VERSION must be a 5.x.y RocketMQ release such as 5.5.0, not ${JSON.stringify(value)}`,
    );
  }
  return value;
}

/** The repository root (the folder holding package.json), found from this file in test/ or dist/test/. */
export function repoRoot(): string {
  let d = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    if (existsSync(join(d, 'package.json')) && existsSync(join(d, 'test', 'interop'))) return d;
    d = dirname(d);
  }
  throw new Error('cannot find the rocketwire repository root from ' + fileURLToPath(import.meta.url));
}

export function cacheDir(): string {
  return process.env.ROCKETWIRE_CACHE || join(homedir(), '.cache', 'rocketwire');
}

export function jarsDir(version: string): string {
  return join(cacheDir(), `rmq-${version}`, 'lib');
}

export function jarsPresent(version: string): boolean {
  // 5.x: the proxy's extra jars too (rmq-<version>/proxy, fetched by the same script).
  const proxyOk = version.startsWith('4.') || existsSync(join(cacheDir(), `rmq-${version}`, 'proxy', '.complete'));
  return existsSync(join(jarsDir(version), '.complete')) && proxyOk;
}

/** Run fetch-jars.sh for `versions` (a no-op for versions already fetched). Rejects with its stderr. */
export async function ensureJars(versions: string[]): Promise<void> {
  if (versions.includes('4.9.8')) {
    throw new Error(
      `RocketMQ 4.9.8's broker and name-server jars were never published to Maven Central; use ${V4_VERSION} (V4_VERSION)`,
    );
  }
  const missing = versions.filter((v) => !jarsPresent(v));
  if (missing.length === 0) return;
  const script = join(repoRoot(), 'test', 'interop', 'fetch-jars.sh');
  const { code, stderr } = await run('bash', [script, ...missing], 15 * 60_000);
  if (code !== 0 || missing.some((v) => !jarsPresent(v))) {
    throw new Error(`fetch-jars.sh ${missing.join(' ')} failed: ${stderr.trim().split('\n').pop() ?? ''}`);
  }
}

/** Run a command to completion, capturing its output (used for fetch-jars.sh and javac). */
export function run(
  cmd: string,
  args: string[],
  timeoutMs: number,
  cwd?: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], cwd });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d) => (stdout += d));
    child.stderr!.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      resolve({ code: -1, stdout, stderr: stderr + String(err) });
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
