/**
 * The JVMs of the interop harness (name server, brokers, proxy, Java client peers): starting them
 * with the flags JDK 17 needs, stopping them, reading their output, and making sure none outlives
 * the test process: an 'exit' hook SIGKILLs them, and a small watchdog shell, fed by a pipe from
 * this process, stops them and removes their folders if this process dies without running its
 * hooks (SIGKILL, a runner's timeout).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import type * as net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A JVM the harness started: its stdout file and the promise of its exit code. */
export interface Jvm {
  name: string;
  child: ChildProcess;
  out: string;
  exited: Promise<number | null>;
}

/**
 * Spawn `java` with the harness's flags, its output appended to <procHome>/stdout.log; the process
 * is tracked (killed if the test process dies) and unref'd (it does not keep the test alive).
 */
export function startJvm(
  rocketmqHome: string,
  name: string,
  procHome: string,
  jvmArgs: string[],
  mainArgs: string[],
  classPath: string,
): Jvm {
  mkdirSync(procHome, { recursive: true });
  const out = join(procHome, 'stdout.log');
  const fd = openSync(out, 'a');
  const child = spawn(
    'java',
    [
      ...jvmArgs,
      '-XX:-OmitStackTraceInFastThrow',
      ...JDK17_FLAGS,
      `-Duser.home=${procHome}`,
      // its temporary files (Netty's self-signed certificates) go with its folder, not into /tmp
      `-Djava.io.tmpdir=${procHome}`,
      `-Drocketmq.home.dir=${rocketmqHome}`,
      '-cp',
      classPath,
      ...mainArgs,
    ],
    { stdio: ['ignore', fd, fd], cwd: procHome },
  );
  closeSync(fd);
  child.unref();
  trackProcess(child);
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code, signal) => resolve(code ?? (signal ? -1 : null)));
    child.once('error', () => resolve(-1));
  });
  return { name, child, out, exited };
}

/** SIGTERM (graceful) or SIGKILL `jvm` and wait for its exit; a graceful stop turns into SIGKILL after 20 s. */
export async function stopJvm(jvm: Jvm | null, graceful: boolean): Promise<void> {
  if (!jvm || jvm.child.exitCode !== null || jvm.child.signalCode !== null) return;
  jvm.child.kill(graceful ? 'SIGTERM' : 'SIGKILL');
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), graceful ? 20_000 : 5_000)));
  if ((await Promise.race([jvm.exited, bound])) === 'timeout') {
    jvm.child.kill('SIGKILL');
    await jvm.exited;
  }
  clearTimeout(timer);
}

/**
 * Flags for JDK 17+. 4.9 unmaps files through JDK internals (MappedFile.clean) and fails without
 * the java.nio / jdk.internal.ref / sun.nio.ch ones; 5.x needs none with our config, they are cheap
 * insurance for paths that reach the same internals.
 */
const JDK17_FLAGS = [
  '--add-opens=java.base/java.nio=ALL-UNNAMED',
  '--add-opens=java.base/sun.nio.ch=ALL-UNNAMED',
  '--add-exports=java.base/sun.nio.ch=ALL-UNNAMED',
  '--add-exports=java.base/jdk.internal.ref=ALL-UNNAMED',
  '--add-opens=java.base/jdk.internal.ref=ALL-UNNAMED',
  '--add-opens=java.base/java.lang=ALL-UNNAMED',
  '--add-opens=java.base/java.util=ALL-UNNAMED',
];

export function logbackFlag(v4: boolean, role: string): string[] {
  // 5.x: every JVM would otherwise pick the broker's configuration, the first found on the class path.
  return v4 ? [] : [`-Drmq.logback.configurationFile=rmq.${role}.logback.xml`];
}

/** Where run folders go: /dev/shm when there is one (the broker refuses writes on a disk more than 90 % full). */
export function runRoot(): string {
  try {
    if (statSync('/dev/shm').isDirectory()) return '/dev/shm';
  } catch {
    // no tmpfs here: fall back to the temp folder
  }
  return tmpdir();
}

// ---- process bookkeeping ----------------------------------------------------------------------

const liveJvms = new Set<ChildProcess>();
const liveDirs = new Set<string>();
let watchDir: string | undefined;

/**
 * Register a child process (a JVM) to be stopped if this process exits while it still runs: the
 * 'exit' hook SIGKILLs it, and the watchdog stops it if this process dies without running hooks.
 */
export function trackProcess(child: ChildProcess): void {
  const dir = ensureWatchdog();
  liveJvms.add(child);
  const pidFile = join(dir, 'pids', String(child.pid));
  if (child.pid !== undefined) writeFileSync(pidFile, String(child.pid));
  child.once('exit', () => {
    liveJvms.delete(child);
    rmSync(pidFile, { force: true });
  });
}

/** Register a folder to be removed when this process exits (or dies). */
export function trackDir(path: string): void {
  const dir = ensureWatchdog();
  liveDirs.add(path);
  writeFileSync(join(dir, 'dirs', hashName(path)), path);
}

export function untrackDir(path: string): void {
  liveDirs.delete(path);
  if (watchDir) rmSync(join(watchDir, 'dirs', hashName(path)), { force: true });
}

function hashName(path: string): string {
  return Buffer.from(path).toString('base64url');
}

/**
 * One per test process: an 'exit' hook, and a shell that waits for EOF on a pipe from this process.
 * If this process dies without its hook (SIGKILL, a runner's timeout signal), the pipe closes and
 * the shell SIGTERMs the JVMs listed in <watchDir>/pids, SIGKILLs them 10 s later and removes the
 * folders listed in <watchDir>/dirs.
 */
function ensureWatchdog(): string {
  if (watchDir) return watchDir;
  const dir = mkdtempSync(join(runRoot(), 'rocketwire-watch-'));
  mkdirSync(join(dir, 'pids'));
  mkdirSync(join(dir, 'dirs'));
  watchDir = dir;
  const script =
    'read _ ; cd "$1" || exit 0; for f in pids/*; do [ -f "$f" ] && kill -TERM "$(cat "$f")" 2>/dev/null; done; ' +
    'sleep 10; for f in pids/*; do [ -f "$f" ] && kill -KILL "$(cat "$f")" 2>/dev/null; done; ' +
    'for f in dirs/*; do [ -f "$f" ] && rm -rf "$(cat "$f")"; done; cd /; rm -rf "$1"';
  const wd = spawn('sh', ['-c', script, 'rocketwire-watchdog', dir], {
    stdio: ['pipe', 'ignore', 'ignore'],
    detached: true,
  });
  wd.unref();
  (wd.stdin as unknown as net.Socket | null)?.unref?.();
  wd.on('error', () => undefined);
  process.once('exit', () => {
    for (const c of liveJvms) {
      try {
        if (c.pid !== undefined) process.kill(c.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    for (const d of liveDirs) rmSync(d, { recursive: true, force: true });
    rmSync(dir, { recursive: true, force: true });
    try {
      wd.kill('SIGKILL');
    } catch {
      // already gone
    }
  });
  return dir;
}

export function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

export function tailOf(jvms: Array<Jvm | null>, lines: number): string {
  return jvms
    .filter((j): j is Jvm => j !== null)
    .map((j) => {
      // Drop logback's own status chatter (5.x prints ~150 lines of it at boot).
      const body = readText(j.out)
        .split('\n')
        .filter((l) => !/\|-(INFO|WARN) in /.test(l))
        .slice(-lines)
        .join('\n');
      return `--- ${j.name} (${j.out}) ---\n${body}`;
    })
    .join('\n');
}

/** Poll the JVM's stdout file for `re`; fail at once if the JVM exits, or after `timeoutMs`. */
export async function waitForLine(jvm: Jvm, re: RegExp, timeoutMs: number): Promise<RegExpMatchArray> {
  const deadline = Date.now() + timeoutMs;
  let exitCode: number | null | undefined;
  void jvm.exited.then((c) => (exitCode = c));
  for (;;) {
    const m = readText(jvm.out).match(re);
    if (m) return m;
    if (exitCode !== undefined) throw new Error(`${jvm.name} exited with code ${exitCode} before it was ready`);
    if (Date.now() > deadline) throw new Error(`${jvm.name} not ready within ${timeoutMs} ms`);
    await delay(100);
  }
}

/** A fixed pause, paced for JVMs (their logs, routes and replicas): only the real-broker suites and this harness use it. */
export function delay(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
