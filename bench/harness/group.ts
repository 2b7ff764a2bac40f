/**
 * `rocketwire bench --consumers N`: one measured consume run by N consumer processes that share a
 * group and split the topic's queues by the group's rebalance — rocketwire (group-child.ts) or the
 * Java reference client (RefClient consume-bench --gate).
 *
 * A rebalance at start moves queues between processes as they join (the first holds every queue
 * until the others register). So every child gates its handler: it pulls but handles nothing until
 * the parent has seen the group settle — each process holds its share (the averaging strategy:
 * ⌊Q/N⌋ or ⌈Q/N⌉ queues), no queue is held twice and every queue is held — and written `go` to all.
 * The round's throughput runs from the first message handled by any process to the last one handled
 * by any; the message numbers each process handled are merged to check that every produced message
 * was consumed at least once and to count duplicates.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { CliError } from '../../lib/cli/common.js';
import type { ChildOptions } from './group-child.js';
import { prepareJava } from './peers.js';
import { cpuMs, peakRssMb, rssMb, TenthPeaks } from './proc-stats.js';
import { BENCH_CONSUME_THREADS, newGroup, type Series } from './run.js';
import { systemClock, sleep as sleepOn } from '../../lib/clock.js';

export interface GroupRun {
  namesrv: string;
  topic: string;
  /** Messages numbered 0 … expect-1 in the topic. */
  expect: number;
  size: number;
  /** Every queue of the topic, as "brokerName:queueId". */
  queues: string[];
  processes: number;
  consumeBatch: number;
  handlerMs: number;
  /** Handler calls at once in each process (--consume-threads); default 64 for rocketwire, Java's own 20. */
  consumeThreads?: number | undefined;
  serializeType: 'JSON' | 'ROCKETMQ';
  /** Give up when the handled count does not move for this long (and when the group does not settle in 4× this). */
  stallTimeoutMs: number;
  t0: number;
}

export interface GroupResult {
  name: string;
  processes: number;
  /** Deliveries, duplicates included. */
  received: number;
  unique: number;
  duplicates: number;
  seconds: number;
  msgsPerSec: number;
  mbPerSec: number;
  /** Spawn of the first process to the `go` (every process holds its share). */
  settleMs: number;
  /** `go` to the first message handled. */
  startupMs: number;
  /** Messages each process handled (duplicates included), in spawn order. */
  perProcess: number[];
  /** Largest peak RSS of one process (VmHWM), MiB. */
  peakRssMb: number;
  /** Largest RSS of one process while each tenth of the messages was handled, MiB (sampled every 200 ms). */
  rssMbByTenth: number[];
  /** CPU of all processes together (from /proc, whole process, start-up included), ms. */
  cpuMs: number;
  pulls: number;
  gc: { minor: number; major: number; ms: number };
  flowControlPauses: Record<string, number>;
  complete: boolean;
  series: Series;
}

interface Final {
  received?: number;
  unique?: number;
  firstTs?: number;
  lastTs?: number;
  seen?: string;
  pulls?: number;
  gc?: { minor: number; major: number; ms: number };
  flowControlPauses?: Record<string, number>;
}

interface Child {
  proc: ChildProcess;
  queues: string[] | null;
  received: number;
  unique: number;
  final: Final | null;
  stderr: string;
  peak: number;
  /** Largest RSS seen while each tenth of the group's messages was handled. */
  byTenth: TenthPeaks;
  cpu: number;
  closed: Promise<void>;
  cleanup: () => void;
}

interface Spawn {
  cmd: string;
  args: string[];
  cleanup?: () => void;
}

/** How long the split must stay the same before the group counts as settled. */
const SETTLE_HOLD_MS = 500;

const HERE = path.dirname(fileURLToPath(import.meta.url));

/** Whether the processes' holdings are the settled split of `all` among them. */
export function settled(holdings: (string[] | null)[], all: string[]): boolean {
  if (holdings.some((h) => h === null)) return false;
  const lo = Math.floor(all.length / holdings.length);
  const hi = Math.ceil(all.length / holdings.length);
  const seen = new Set<string>();
  for (const h of holdings as string[][]) {
    if (h.length < lo || h.length > hi) return false;
    for (const q of h) {
      if (seen.has(q)) return false;
      seen.add(q);
    }
  }
  return seen.size === all.length && all.every((q) => seen.has(q));
}

function start(name: string, s: Spawn): Child {
  const proc = spawn(s.cmd, s.args, { stdio: ['pipe', 'pipe', 'pipe'] });
  const child: Child = {
    proc,
    queues: null,
    received: 0,
    unique: 0,
    final: null,
    stderr: '',
    peak: 0,
    byTenth: new TenthPeaks(),
    cpu: 0,
    closed: new Promise<void>((resolve) => proc.once('close', () => resolve())),
    cleanup: s.cleanup ?? (() => undefined),
  };
  proc.once('error', (err) => {
    child.stderr += `could not start the ${name} consumer: ${err.message}`;
  });
  // A child that died must not take the bench down with an EPIPE on its stdin.
  proc.stdin!.on('error', () => undefined);
  proc.stderr!.on('data', (d: Buffer) => {
    child.stderr = (child.stderr + d.toString()).slice(-4000);
  });
  createInterface({ input: proc.stdout! }).on('line', (text) => {
    let line: { type?: string; queues?: string[]; received?: number; unique?: number } & Final;
    try {
      line = JSON.parse(text) as typeof line;
    } catch {
      return;
    }
    if (line.type === 'assignment' && Array.isArray(line.queues)) child.queues = line.queues;
    else if (line.type === 'progress') {
      child.received = line.received ?? child.received;
      child.unique = line.unique ?? child.unique;
    } else if (line.type === 'bench') {
      child.final = line;
      child.received = line.received ?? child.received;
      child.unique = line.unique ?? child.unique;
    }
  });
  return child;
}

function sample(c: Child, done: number, total: number): void {
  if (c.proc.pid === undefined || c.proc.exitCode !== null) return;
  c.peak = Math.max(c.peak, peakRssMb(c.proc.pid));
  c.byTenth.note(done, total, rssMb(c.proc.pid));
  c.cpu = Math.max(c.cpu, cpuMs(c.proc.pid));
}

function lastLine(c: Child): string {
  return c.stderr.trim().split('\n').slice(-1)[0] ?? '';
}

/** Runs one measured consume with `run.processes` processes made by `make(i, group)`. */
async function runGroup(
  name: string,
  prefix: string,
  run: GroupRun,
  make: (i: number, group: string) => Spawn,
): Promise<GroupResult> {
  const group = newGroup(prefix);
  const spawnedAt = performance.now();
  const children = Array.from({ length: run.processes }, (_, i) => start(name, make(i, group)));
  const poll = setInterval(() => {
    const done = children.reduce((a, c) => a + c.unique, 0);
    for (const c of children) sample(c, done, run.expect);
  }, 200);
  const series: Series = { name: `consume (${name} ×${run.processes})`, points: [] };
  try {
    // 1. Wait until the group has settled: every process holds its share.
    //    A process that rebalanced with a stale list of the group's members can hold a share that
    //    looks right for a moment, so the split must also hold still for SETTLE_HOLD_MS.
    const settleLimit = spawnedAt + Math.max(60_000, run.stallTimeoutMs * 4);
    let settledAt = 0;
    for (;;) {
      if (
        settled(
          children.map((c) => c.queues),
          run.queues,
        )
      ) {
        settledAt ||= performance.now();
        if (performance.now() - settledAt >= SETTLE_HOLD_MS) break;
      } else settledAt = 0;
      const dead = children.find((c) => c.proc.exitCode !== null || c.proc.signalCode !== null);
      if (dead) throw new CliError(`a ${name} consumer process ended before the group settled: ${lastLine(dead)}`);
      if (performance.now() > settleLimit) {
        const held = children.map((c) => (c.queues === null ? '?' : String(c.queues.length))).join('/');
        throw new CliError(
          `the ${run.processes} ${name} consumers did not split the ${run.queues.length} queues of ${run.topic} (holding ${held})`,
        );
      }
      await sleepOn(systemClock, 20);
    }
    const goAt = performance.now();
    for (const c of children) c.proc.stdin!.write('go\n');

    // 2. Consume until every message was handled once by some process and deliveries have stopped
    //    for a moment (a process may still be handling the duplicates of a late rebalance).
    const sum = (k: 'received' | 'unique') => children.reduce((a, c) => a + c[k], 0);
    let last = 0;
    let lastT = performance.now();
    let movedAt = lastT;
    for (;;) {
      await sleepOn(systemClock, 20);
      const now = performance.now();
      const got = sum('received');
      if (now - lastT >= 100) {
        series.points.push([(now - run.t0) / 1000, ((got - last) * 1000) / (now - lastT)]);
        if (got !== last) movedAt = now;
        last = got;
        lastT = now;
      }
      if (sum('unique') >= run.expect && now - movedAt >= 500) break;
      if (now - movedAt > run.stallTimeoutMs) break;
      if (children.some((c) => c.proc.exitCode !== null)) break;
    }

    // 3. Stop every process and merge what they handled.
    for (const c of children) c.proc.stdin!.end('stop\n');
    const killTimer = setTimeout(() => {
      for (const c of children) c.proc.kill('SIGKILL');
    }, 60_000);
    await Promise.all(children.map((c) => c.closed));
    clearTimeout(killTimer);
    const missing = children.find((c) => c.final === null);
    if (missing) throw new CliError(`a ${name} consumer process ended without a result: ${lastLine(missing)}`);
    const bits = new Uint8Array(Math.ceil(run.expect / 8));
    for (const c of children) {
      const b = Buffer.from(c.final!.seen ?? '', 'base64');
      for (let i = 0; i < Math.min(b.length, bits.length); i++) bits[i]! |= b[i]!;
    }
    let unique = 0;
    for (let i = 0; i < run.expect; i++) if (bits[i >> 3]! & (1 << (i & 7))) unique++;
    const received = children.reduce((a, c) => a + (c.final!.received ?? 0), 0);
    const active = children.filter((c) => (c.final!.received ?? 0) > 0);
    const firstTs = Math.min(...active.map((c) => c.final!.firstTs!));
    const lastTs = Math.max(...active.map((c) => c.final!.lastTs!));
    const seconds = active.length > 0 ? Math.max(1e-3, (lastTs - firstTs) / 1000) : 0;
    const rate = seconds > 0 ? Math.max(0, unique - 1) / seconds : 0;
    const gcs = children.map((c) => c.final!.gc ?? { minor: 0, major: 0, ms: 0 });
    const pauses: Record<string, number> = {};
    for (const c of children)
      for (const [k, v] of Object.entries(c.final!.flowControlPauses ?? {})) pauses[k] = (pauses[k] ?? 0) + v;
    return {
      name,
      processes: run.processes,
      received,
      unique,
      duplicates: received - unique,
      seconds,
      msgsPerSec: rate,
      mbPerSec: (rate * run.size) / (1024 * 1024),
      settleMs: goAt - spawnedAt,
      // firstTs is an epoch time; performance.timeOrigin + goAt is the same clock.
      startupMs: active.length > 0 ? Math.max(0, firstTs - (performance.timeOrigin + goAt)) : 0,
      perProcess: children.map((c) => c.final!.received ?? 0),
      peakRssMb: Math.max(...children.map((c) => c.peak)),
      rssMbByTenth: children[0]!.byTenth.rounded(...children.slice(1).map((c) => c.byTenth)),
      cpuMs: children.reduce((a, c) => a + c.cpu, 0),
      pulls: children.reduce((a, c) => a + (c.final!.pulls ?? 0), 0),
      gc: {
        minor: gcs.reduce((a, g) => a + g.minor, 0),
        major: gcs.reduce((a, g) => a + g.major, 0),
        ms: gcs.reduce((a, g) => a + g.ms, 0),
      },
      flowControlPauses: pauses,
      complete: unique === run.expect,
      series,
    };
  } finally {
    clearInterval(poll);
    for (const c of children) {
      if (c.proc.exitCode === null && c.proc.signalCode === null) c.proc.kill('SIGKILL');
    }
    await Promise.all(children.map((c) => c.closed));
    for (const c of children) c.cleanup();
  }
}

/** N rocketwire push consumer processes (group-child.ts) in one group. */
export function consumeRocketwireGroup(run: GroupRun): Promise<GroupResult> {
  const script = path.join(HERE, 'group-child.js');
  return runGroup('rocketwire', 'rocketwire_bench', run, (_i, group) => {
    const o: ChildOptions = {
      namesrv: run.namesrv,
      topic: run.topic,
      group,
      expect: run.expect,
      consumeBatch: run.consumeBatch,
      handlerMs: run.handlerMs,
      consumeThreads: run.consumeThreads ?? BENCH_CONSUME_THREADS,
      serializeType: run.serializeType,
    };
    return { cmd: process.execPath, args: [script, JSON.stringify(o)] };
  });
}

/** N Java reference push consumers (RefClient consume-bench --gate) in one group. */
export function consumeJavaGroup(run: GroupRun): Promise<GroupResult> {
  const cp = prepareJava();
  return runGroup('java', 'java_bench', run, (_i, group) => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'rocketwire-bench-java-'));
    return {
      cmd: 'java',
      args: [
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
        group,
        '--expect',
        String(run.expect),
        '--timeout-ms',
        String(Math.max(600_000, run.stallTimeoutMs * 10)),
        '--from',
        'first',
        '--progress-ms',
        '100',
        '--gate',
        // The same work as rocketwire's processes: the handler's wait, the batch size, the calls at once.
        ...(run.handlerMs > 0 ? ['--handler-ms', String(run.handlerMs)] : []),
        ...(run.consumeBatch > 1 ? ['--batch-max', String(run.consumeBatch)] : []),
        ...(run.consumeThreads ? ['--threads', String(run.consumeThreads)] : []),
      ],
      cleanup: () => fs.rmSync(home, { recursive: true, force: true }),
    };
  });
}
