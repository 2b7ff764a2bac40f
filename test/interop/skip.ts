/**
 * Whether the interop suite can run here: it needs java and javac, and the RocketMQ jars (fetched
 * with mvn the first time). Without them a test file is skipped with one line saying why, unless
 * ROCKETWIRE_REQUIRE_JAVA=1 (set by .ci/run), which turns the skip into a failure.
 *
 *   import t from 'tap';
 *   import { interopReady } from './skip.js';
 *   if (await interopReady(t, ['5.3.3'])) { ...tests... }
 */
import { spawnSync } from 'node:child_process';
import { ensureGoClient } from './go-client.js';
import { ensureJars, jarsPresent } from './harness.js';
import { ensureRefClient } from './java-client.js';

interface PlanTap {
  plan(n: number, comment?: string): void;
  fail(message: string): unknown;
}

function onPath(cmd: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
}

const reasons = new Map<string, Promise<string | null>>();

/** null when the suite can run for `versions`, else the reason it cannot. Fetches jars and compiles RefClient. */
export function interopSkipReason(versions: string[]): Promise<string | null> {
  const key = versions.join(' ');
  let r = reasons.get(key);
  if (!r) {
    r = check(versions);
    reasons.set(key, r);
  }
  return r;
}

async function check(versions: string[]): Promise<string | null> {
  for (const cmd of ['java', 'javac']) if (!onPath(cmd)) return `${cmd} not found`;
  if (versions.some((v) => !jarsPresent(v)) && !onPath('mvn'))
    return 'mvn not found (needed once to fetch the RocketMQ jars)';
  try {
    await ensureJars(versions);
    for (const v of versions) await ensureRefClient(v);
  } catch (err) {
    return (err as Error).message.split('\n')[0]!;
  }
  return null;
}

/**
 * true when the file's interop tests should run. Otherwise plans 0 tests with the reason (one
 * "skip" line), or, with ROCKETWIRE_REQUIRE_JAVA=1, fails with it.
 */
export async function interopReady(t: PlanTap, versions: string[]): Promise<boolean> {
  const reason = await interopSkipReason(versions);
  if (reason === null) return true;
  if (process.env.ROCKETWIRE_REQUIRE_JAVA === '1') {
    t.fail(`real-broker interop required (ROCKETWIRE_REQUIRE_JAVA=1) but unavailable: ${reason}`);
  } else {
    t.plan(0, `real-broker interop skipped: ${reason} (set ROCKETWIRE_REQUIRE_JAVA=1 to make this fail)`);
  }
  return false;
}

let goReason: Promise<string | null> | undefined;

/** null when the Go client program (test/interop/go) builds here, else the reason it cannot. */
export function goSkipReason(): Promise<string | null> {
  goReason ??= onPath('go')
    ? ensureGoClient().then(
        () => null,
        (err: Error) => err.message.split('\n')[0]!,
      )
    : Promise.resolve('go not found');
  return goReason;
}

/**
 * true when the file's Go client tests should run. Otherwise plans 0 tests with the reason, or, with
 * ROCKETWIRE_REQUIRE_GO=1 (set by .ci/run, as ROCKETWIRE_REQUIRE_JAVA), fails with it.
 */
export async function goReady(t: PlanTap): Promise<boolean> {
  const reason = await goSkipReason();
  if (reason === null) return true;
  if (process.env.ROCKETWIRE_REQUIRE_GO === '1') {
    t.fail(`Go client interop required (ROCKETWIRE_REQUIRE_GO=1) but unavailable: ${reason}`);
  } else {
    t.plan(0, `Go client interop skipped: ${reason} (set ROCKETWIRE_REQUIRE_GO=1 to make this fail)`);
  }
  return false;
}
