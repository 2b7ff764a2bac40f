import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { CliError } from '../../lib/cli/common.js';
import { cpuMs, peakRssMb } from './proc-stats.js';
import type { Series } from './run.js';

/** What a peer consumer reports: the same measure as rocketwire's (first to last message). */
export interface PeerResult {
  name: string;
  received: number;
  seconds: number;
  msgsPerSec: number;
  peakRssMb: number;
  cpuMs: number;
  complete: boolean;
  /** Deliveries beyond the first of a message (reported by the --consumers N > 1 runs). */
  duplicates?: number;
  /** Producer peers (--produce-vs): sends that failed, and the first error. */
  failed?: number;
  warmupFailed?: number;
  error?: string | null;
  /** Producer peers: CPU the peer measured itself over its measured sends (cpuMs is the whole process). */
  measuredCpuMs?: number;
  /** With --handler-ms: the mean time the peer's handler wait really took (Java measures it). */
  handlerMeanMs?: number;
  /** Traced peers (`trace`): trace records queued or in flight when the last message was handled, and dropped. */
  traceBacklog?: number;
  traceDropped?: number;
  series: Series;
}

export interface PeerRun {
  namesrv: string;
  topic: string;
  expect: number;
  timeoutMs: number;
  t0: number;
  size: number;
  /** Each handler call sleeps this long (0: a no-op handler). */
  handlerMs?: number;
  /** consumeMessageBatchMaxSize of the peer (Java only; default 1). */
  consumeBatch?: number;
  /** Handler calls at once (Java's consumeThreadMin/Max; default its own 20). */
  consumeThreads?: number | undefined;
}

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const JAVA_PEER_VERSION = '5.3.3';

function cacheDir(): string {
  return process.env.ROCKETWIRE_CACHE ?? path.join(os.homedir(), '.cache', 'rocketwire');
}

/** Compile the interop suite's reference client once per source hash; returns its classpath. */
export function prepareJava(): string {
  const src = path.join(REPO, 'test', 'interop', 'java', 'RefClient.java');
  if (!fs.existsSync(src)) throw new CliError(`--vs java needs a rocketwire clone (missing ${src})`);
  for (const tool of ['java', 'javac']) {
    if (spawnSync(tool, ['-version'], { stdio: 'ignore' }).status !== 0)
      throw new CliError(`--vs java needs ${tool} on the PATH`);
  }
  const lib = path.join(cacheDir(), `rmq-${JAVA_PEER_VERSION}`, 'lib');
  if (!fs.existsSync(path.join(lib, '.complete'))) {
    process.stderr.write(`fetching Apache RocketMQ ${JAVA_PEER_VERSION} jars from Maven Central (once)…\n`);
    const r = spawnSync('bash', [path.join(REPO, 'test', 'interop', 'fetch-jars.sh'), JAVA_PEER_VERSION], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    if (r.status !== 0)
      throw new CliError(`could not fetch the RocketMQ jars: ${r.stderr.toString().trim().split('\n').pop()}`);
  }
  const hash = createHash('sha1').update(fs.readFileSync(src)).digest('hex').slice(0, 12);
  const classes = path.join(cacheDir(), 'bench-refclient', `${JAVA_PEER_VERSION}-${hash}`);
  if (!fs.existsSync(path.join(classes, 'RefClient.class'))) {
    const tmp = `${classes}.tmp${process.pid}`;
    fs.mkdirSync(tmp, { recursive: true });
    const r = spawnSync('javac', ['-nowarn', '-encoding', 'UTF-8', '-cp', path.join(lib, '*'), '-d', tmp, src], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    if (r.status !== 0) throw new CliError(`javac RefClient.java failed: ${r.stderr.toString().trim().split('\n')[0]}`);
    fs.rmSync(classes, { recursive: true, force: true });
    fs.renameSync(tmp, classes);
  }
  return `${classes}${path.delimiter}${path.join(lib, '*')}`;
}

interface Line {
  type: string;
  received?: number;
  ts?: number;
  firstTs?: number;
  lastTs?: number;
  complete?: boolean;
  message?: string;
  /** Producer peers: first to last acknowledgement (ms, a monotonic clock), and what the first one covered. */
  spanMs?: number;
  firstCount?: number;
  failed?: number;
  warmupFailed?: number;
  cpuMs?: number;
  error?: string | null;
  /** Consumer peers with --handler-ms: the mean time a handler call's wait really took. */
  handlerMeanMs?: number;
}

/**
 * Run a peer process that prints JSON lines: progress {type:'progress',received,ts} and a final
 * {type:'bench'}. The rate is (received - 1) / (lastTs - firstTs), or, where a producer peer
 * reports its span and what its first acknowledgement covered, (received - firstCount) / spanMs.
 */
export function runPeer(
  name: string,
  cmd: string,
  args: string[],
  run: PeerRun,
  env?: NodeJS.ProcessEnv,
  seriesName = `consume (${name})`,
): Promise<PeerResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], env: env ?? process.env });
    const series: Series = { name: seriesName, points: [] };
    let lastCount = 0;
    let lastT = performance.now();
    let peak = 0;
    let cpu = 0;
    let final: Line | null = null;
    let stderr = '';
    let said = '';
    const poll = setInterval(() => {
      peak = Math.max(peak, peakRssMb(child.pid!));
      cpu = Math.max(cpu, cpuMs(child.pid!));
    }, 200);
    child.stderr!.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-4000);
    });
    const rl = createInterface({ input: child.stdout! });
    rl.on('line', (text) => {
      let line: Line;
      try {
        line = JSON.parse(text) as Line;
      } catch {
        return;
      }
      if (line.type === 'progress' && typeof line.received === 'number') {
        const now = performance.now();
        series.points.push([(now - run.t0) / 1000, ((line.received - lastCount) * 1000) / Math.max(1, now - lastT)]);
        lastCount = line.received;
        lastT = now;
      } else if (line.type === 'error' || line.type === 'fatal') {
        said = line.message ?? line.error ?? '';
      } else if (line.type === 'bench' || line.type === 'summary') {
        final = line;
        peak = Math.max(peak, peakRssMb(child.pid!));
        cpu = Math.max(cpu, cpuMs(child.pid!));
      }
    });
    const killTimer = setTimeout(() => child.kill('SIGKILL'), run.timeoutMs + 60_000);
    child.once('error', (err) => {
      clearInterval(poll);
      clearTimeout(killTimer);
      reject(new CliError(`could not start the ${name} peer: ${err.message}`));
    });
    child.once('close', () => {
      clearInterval(poll);
      clearTimeout(killTimer);
      const f = final as Line | null;
      if (!f) {
        reject(
          new CliError(
            `the ${name} peer ended without a result: ${said || (stderr.trim().split('\n').slice(-1)[0] ?? '')}`,
          ),
        );
        return;
      }
      const received = f.received ?? 0;
      const seconds =
        typeof f.spanMs === 'number' ? f.spanMs / 1000 : f.lastTs && f.firstTs ? (f.lastTs - f.firstTs) / 1000 : 0;
      resolve({
        name,
        received,
        seconds,
        msgsPerSec: seconds > 0 ? (received - (f.firstCount ?? 1)) / seconds : 0,
        peakRssMb: peak,
        cpuMs: cpu,
        complete: f.complete === true,
        ...(typeof f.failed === 'number'
          ? { failed: f.failed, warmupFailed: f.warmupFailed ?? 0, error: f.error ?? null }
          : {}),
        ...(typeof f.spanMs === 'number' && typeof f.cpuMs === 'number' ? { measuredCpuMs: f.cpuMs } : {}),
        ...(typeof f.handlerMeanMs === 'number' ? { handlerMeanMs: f.handlerMeanMs } : {}),
        series,
      });
    });
  });
}

/** Java's DefaultMQPushConsumer; `trace`: with enableMsgTrace (the `java-trace` peer: SubBefore/SubAfter records to RMQ_SYS_TRACE_TOPIC). */
export async function runJavaPeer(run: PeerRun, trace = false): Promise<PeerResult> {
  const cp = prepareJava();
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'rocketwire-bench-java-'));
  try {
    return await runPeer(
      trace ? 'java-trace' : 'java',
      'java',
      [
        '-Xms256m',
        '-Xmx1g',
        `-Duser.home=${home}`,
        '-Drocketmq.client.logRoot=' + path.join(home, 'logs'),
        '-cp',
        cp,
        'RefClient',
        'consume-bench',
        '--namesrv',
        run.namesrv,
        '--topic',
        run.topic,
        '--group',
        `java_bench_${Date.now().toString(36)}`,
        '--expect',
        String(run.expect),
        '--timeout-ms',
        String(run.timeoutMs),
        '--from',
        'first',
        '--progress-ms',
        '100',
        ...(run.handlerMs ? ['--handler-ms', String(run.handlerMs)] : []),
        ...(run.consumeBatch && run.consumeBatch > 1 ? ['--batch-max', String(run.consumeBatch)] : []),
        ...(run.consumeThreads ? ['--threads', String(run.consumeThreads)] : []),
        ...(trace ? ['--trace'] : []),
      ],
      run,
    );
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
  }
}

export async function runAliOnsPeer(run: PeerRun): Promise<PeerResult> {
  const script = path.join(path.dirname(fileURLToPath(import.meta.url)), 'ali-ons-peer.cjs');
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'rocketwire-bench-alions-'));
  try {
    return await runPeer(
      'ali-ons',
      process.execPath,
      [
        script,
        run.namesrv,
        run.topic,
        `alions_bench_${Date.now().toString(36)}`,
        String(run.expect),
        String(run.timeoutMs),
        String(run.handlerMs ?? 0),
      ],
      run,
      { ...process.env, HOME: home },
    );
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
  }
}

/**
 * The floors (raw-pull-peer.ts), in their own process: the same pulls with no client on top
 * (`raw-pull`), or with only the decoding of every message (`decode-pull`).
 */
export async function runPullFloorPeer(run: PeerRun, name: 'raw-pull' | 'decode-pull'): Promise<PeerResult> {
  const script = path.join(path.dirname(fileURLToPath(import.meta.url)), 'raw-pull-peer.js');
  const args = [
    script,
    run.namesrv,
    run.topic,
    `${name.replace('-', '_')}_bench_${Date.now().toString(36)}`,
    String(run.expect),
    String(run.timeoutMs),
  ];
  if (name === 'decode-pull') args.push('decode');
  return runPeer(name, process.execPath, args, run);
}
