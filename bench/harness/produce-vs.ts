// `rocketwire bench --produce-vs java,ali-ons`: rocketwire's Producer against Java's
// DefaultMQProducer (test/interop/java/ProduceBench.java) and ali-ons's Producer
// (ali-ons-peer.cts produce), sending the same number of bodies of the same size in each mode.
// Each round runs every mode, and in each mode every producer one after the other, in an order
// rotated every round; each run is a fresh client that first sends a warm-up not measured, then the
// measured messages; the rate runs from the first acknowledged send to the last.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { AdminClient } from '../../lib/admin/index.js';
import { Producer, type Message } from '../../lib/producer/index.js';
import { CliError, UsageError } from '../../lib/cli/common.js';
import { prepareJavaWith } from './lite.js';
import { runPeer, type PeerResult, type PeerRun } from './peers.js';
import { produceFloor } from './produce-floor.js';
import { measureSends } from './produce-run.js';
import { benchMachine, type BenchMachine } from './proc-stats.js';
import { benchBody, benchTemplate, type DriveMode } from './produce-driver.cjs';
import type { ProgressBar } from './progress.js';
import { NEVER_COMPRESS, newGroup, type Series } from './run.js';
import { systemClock, sleep as sleepOn } from '../../lib/clock.js';

/** A way of sending, by name: sync-N (N calls each awaiting its answer), async-N (N in flight, callback style), batch-B (batches of B). */
export interface ProduceMode extends DriveMode {
  name: string;
}

export const DEFAULT_PRODUCE_MODES = 'sync-1,sync-4,sync-16,async-64,batch-32';
/** Batches in flight in a batch-B mode, on every side (the consumer bench's default --producers). */
export const BATCH_IN_FLIGHT = 4;
/**
 * The producers --produce-vs can add; ali-ons has no batch send, so it sits out the batch modes.
 * `floor` is a bare RemotingClient sending the same frames at the same concurrency (produce-floor.ts).
 */
export const PRODUCE_PEERS = ['java', 'ali-ons', 'floor'] as const;
type ProducePeer = (typeof PRODUCE_PEERS)[number];

const MODE = /^(sync|async|batch)-(\d{1,4})$/;

export function parseProduceModes(text: string): ProduceMode[] {
  const out: ProduceMode[] = [];
  for (const name of text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const m = MODE.exec(name);
    const n = m ? Number(m[2]) : 0;
    if (!m || n < 1 || n > 1024)
      throw new UsageError(
        `--produce-modes takes sync-N, async-N and batch-N (N from 1 to 1024, comma-separated; default ${DEFAULT_PRODUCE_MODES}), got "${name}"`,
      );
    if (out.some((o) => o.name === name)) continue;
    const kind = m[1] as DriveMode['kind'];
    out.push(
      kind === 'batch' ? { name, kind, inFlight: BATCH_IN_FLIGHT, batch: n } : { name, kind, inFlight: n, batch: 1 },
    );
  }
  if (out.length === 0) throw new UsageError('--produce-modes names no mode');
  return out;
}

export function parseProducePeers(text: string): ProducePeer[] {
  const out: ProducePeer[] = [];
  for (const name of text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    if (!(PRODUCE_PEERS as readonly string[]).includes(name))
      throw new UsageError(`--produce-vs takes ${PRODUCE_PEERS.join(', ')} (comma-separated), got "${name}"`);
    if (!out.includes(name as ProducePeer)) out.push(name as ProducePeer);
  }
  if (out.length === 0) throw new UsageError(`--produce-vs takes ${PRODUCE_PEERS.join(', ')} (comma-separated)`);
  return out;
}

export interface ProduceVsOptions {
  namesrv: string;
  /** Each producer writes to `${topicBase}_${producer}`. */
  topicBase: string;
  messages: number;
  size: number;
  queues: number;
  /** Messages sent before each measured run, not measured. */
  warmup: number;
  rounds: number;
  serializeType: 'JSON' | 'ROCKETMQ';
  timeoutMs: number;
  /** false: no producer compresses bodies (--compress off); default: each over 4 KiB (all three default to it). */
  compress?: boolean;
}

/** One run of one producer in one mode. */
interface ProduceRun {
  msgsPerSec: number;
  acked: number;
  failed: number;
  seconds: number;
  /** CPU over the measured sends, per message, in µs: the producer's own process (rocketwire: the bench process). */
  cpuUsPerMsg: number;
  /** Messages the topic gained during the run (warm-up included), from the broker's max offsets. */
  stored: number;
  /** Messages acknowledged during the run, warm-up included. */
  ackedWithWarmup: number;
  error: string | null;
  series: Series;
}

export interface ProduceReport {
  kind: 'produce-vs';
  broker: string;
  machine: BenchMachine;
  messages: number;
  size: number;
  queues: number;
  warmup: number;
  rounds: number;
  batchInFlight: number;
  /** The topic each producer wrote to, in every mode and round. */
  topics: Record<string, string>;
  modes: Array<{
    mode: string;
    kind: DriveMode['kind'];
    inFlight: number;
    batch: number;
    producers: Array<{
      name: string;
      /** Median of the rounds; the rounds in the order run. */
      msgsPerSec: number;
      msgsPerSecRounds: number[];
      cpuUsPerMsg: number;
      acked: number;
      failed: number;
      lost: number;
      errors: string[];
    }>;
    /** rocketwire ÷ peer of the medians; null where the peer cannot send in this mode (ali-ons: batches). */
    ratios: Record<string, number | null>;
  }>;
}

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

function median(xs: number[]): number {
  if (xs.length === 0) return 0;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Whether `peer` can send in `mode`. */
function supports(peer: string, mode: ProduceMode): boolean {
  return !(peer === 'ali-ons' && mode.kind === 'batch');
}

/** rocketwire's Producer in this process: a fresh client, the warm-up, then the measured sends. */
async function produceRocketwire(
  o: ProduceVsOptions,
  mode: ProduceMode,
  topic: string,
  progress: ProgressBar | null,
  t0: number,
): Promise<Omit<ProduceRun, 'stored'>> {
  const producer = new Producer({
    group: newGroup('rocketwire_produce_bench'),
    namesrvAddr: o.namesrv,
    serializeType: o.serializeType,
    ...(o.compress === false ? { compressMsgBodyOverHowmuch: NEVER_COMPRESS } : {}),
  });
  const template = benchTemplate(o.size);
  const send =
    mode.kind === 'batch'
      ? (i: number, n: number) => {
          const msgs: Message[] = [];
          for (let k = 0; k < n; k++) msgs.push({ topic, body: benchBody(i + k, template), tags: 'bench' });
          return producer.sendBatch(msgs);
        }
      : (i: number) => producer.send({ topic, body: benchBody(i, template), tags: 'bench' });
  try {
    await producer.start();
    const run = await measureSends(o, mode, send, `produce (rocketwire ${mode.name})`, t0, (acked) =>
      progress?.update(`produce ${mode.name} (rocketwire)`, acked, o.messages),
    );
    progress?.clear();
    return run;
  } finally {
    await producer.shutdown();
  }
}

function peerRun(o: ProduceVsOptions, topic: string, t0: number): PeerRun {
  return { namesrv: o.namesrv, topic, expect: o.messages, timeoutMs: o.timeoutMs, t0, size: o.size };
}

function fromPeer(r: PeerResult, o: ProduceVsOptions): Omit<ProduceRun, 'stored'> {
  const warmupFailed = r.warmupFailed ?? 0;
  return {
    msgsPerSec: r.msgsPerSec,
    acked: r.received,
    failed: (r.failed ?? 0) + warmupFailed,
    seconds: r.seconds,
    cpuUsPerMsg: r.received > 0 && r.measuredCpuMs !== undefined ? (r.measuredCpuMs * 1000) / r.received : 0,
    // The peers report the warm-up's failures, not its acknowledgements: every other one was acknowledged.
    ackedWithWarmup: r.received + o.warmup - warmupFailed,
    error: r.error ?? null,
    series: r.series,
  };
}

/** Java's DefaultMQProducer (5.3.3, its defaults) in its own JVM with the full JIT. */
async function produceJava(
  o: ProduceVsOptions,
  mode: ProduceMode,
  topic: string,
  t0: number,
): Promise<Omit<ProduceRun, 'stored'>> {
  if (!fs.existsSync(path.join(REPO, 'test', 'interop', 'java', 'ProduceBench.java')))
    throw new CliError('--produce-vs java needs a rocketwire clone (test/interop/java/ProduceBench.java)');
  const cp = prepareJavaWith('ProduceBench');
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'rocketwire-bench-java-produce-'));
  try {
    const r = await runPeer(
      'java',
      'java',
      [
        '-Xms256m',
        '-Xmx1g',
        `-Duser.home=${home}`,
        '-Drocketmq.client.logRoot=' + path.join(home, 'logs'),
        '-cp',
        cp,
        'ProduceBench',
        mode.kind,
        '--namesrv',
        o.namesrv,
        '--topic',
        topic,
        '--group',
        newGroup('java_produce_bench'),
        '--count',
        String(o.messages),
        '--warmup',
        String(o.warmup),
        '--size',
        String(o.size),
        '--in-flight',
        String(mode.inFlight),
        '--batch',
        String(mode.batch),
        '--progress-ms',
        '100',
        ...(o.compress === false ? ['--compress-over', String(NEVER_COMPRESS)] : []),
      ],
      peerRun(o, topic, t0),
      undefined,
      `produce (java ${mode.name})`,
    );
    return fromPeer(r, o);
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
  }
}

/** ali-ons's Producer in its own Node process (ali-ons-peer.cts produce). */
async function produceAliOns(
  o: ProduceVsOptions,
  mode: ProduceMode,
  topic: string,
  t0: number,
): Promise<Omit<ProduceRun, 'stored'>> {
  const script = path.join(path.dirname(fileURLToPath(import.meta.url)), 'ali-ons-peer.cjs');
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'rocketwire-bench-alions-produce-'));
  try {
    const r = await runPeer(
      'ali-ons',
      process.execPath,
      [
        script,
        'produce',
        o.namesrv,
        topic,
        newGroup('alions_produce_bench'),
        mode.kind,
        String(mode.inFlight),
        String(mode.batch),
        String(o.messages),
        String(o.warmup),
        String(o.size),
        String(o.timeoutMs),
        o.compress === false ? String(NEVER_COMPRESS) : '',
      ],
      peerRun(o, topic, t0),
      { ...process.env, HOME: home },
      `produce (ali-ons ${mode.name})`,
    );
    return fromPeer(r, o);
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
  }
}

/** Messages in the topic (the sum of its queues' max offsets). */
async function storedCount(admin: AdminClient, topic: string): Promise<number> {
  return (await admin.topicStatus(topic)).reduce((n, q) => n + q.maxOffset, 0);
}

/** Creates each producer's topic on every master and waits until the name server routes it. */
async function createTopics(admin: AdminClient, topics: string[], queues: number, timeoutMs = 30_000): Promise<void> {
  for (const topic of topics) {
    await admin.createOrUpdateTopic({ topic, readQueueNums: queues, writeQueueNums: queues });
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const route = await admin.topicRoute(topic).catch(() => null);
      if (route && route.queueDatas.length > 0) break;
      if (performance.now() > deadline)
        throw new CliError(`topic ${topic} has no route ${timeoutMs} ms after it was created`);
      await sleepOn(systemClock, 100);
    }
  }
}

/**
 * Runs the comparison and returns the report; `onRun` hears of each run as it ends (the CLI
 * prints a line per run on a terminal). Throws CliError when a peer cannot start.
 */
export async function runProduceComparison(
  o: ProduceVsOptions,
  peers: readonly ProducePeer[],
  modes: readonly ProduceMode[],
  broker: string,
  progress: ProgressBar | null,
  onRun: (text: string) => void = () => undefined,
): Promise<{ report: ProduceReport; series: Series[] }> {
  const producers = ['rocketwire', ...peers];
  const topics: Record<string, string> = Object.fromEntries(producers.map((p) => [p, `${o.topicBase}_${p}`]));
  const admin = new AdminClient({ namesrvAddr: o.namesrv });
  const runs = new Map<string, ProduceRun[]>();
  const series: Series[] = [];
  const t0 = performance.now();
  try {
    await createTopics(admin, Object.values(topics), o.queues);
    for (let round = 0; round < o.rounds; round++) {
      for (const mode of modes) {
        for (let k = 0; k < producers.length; k++) {
          const who = producers[(k + round) % producers.length]!;
          if (!supports(who, mode)) continue;
          const topic = topics[who]!;
          const before = await storedCount(admin, topic);
          const r =
            who === 'rocketwire'
              ? await produceRocketwire(o, mode, topic, progress, t0)
              : who === 'java'
                ? await produceJava(o, mode, topic, t0)
                : who === 'floor'
                  ? await produceFloor(o.namesrv, mode, topic, o, t0)
                  : await produceAliOns(o, mode, topic, t0);
          // The broker's max offsets follow its dispatch of the commit log, a little after the answers.
          let stored = (await storedCount(admin, topic)) - before;
          for (
            const deadline = performance.now() + 5000;
            stored < r.ackedWithWarmup && performance.now() < deadline;
          ) {
            await sleepOn(systemClock, 100);
            stored = (await storedCount(admin, topic)) - before;
          }
          const run: ProduceRun = { ...r, stored };
          const key = `${mode.name}\u0000${who}`;
          runs.set(key, [...(runs.get(key) ?? []), run]);
          series.push({ ...r.series, name: `${r.series.name} #${round + 1}` });
          onRun(
            `round ${round + 1}/${o.rounds} ${mode.name} ${who}: ${Math.round(r.msgsPerSec).toLocaleString('en-US')} msgs/s${r.failed ? `, ${r.failed} failed (${r.error})` : ''}`,
          );
        }
      }
    }
  } finally {
    await admin.close();
  }
  const report: ProduceReport = {
    kind: 'produce-vs',
    broker,
    machine: benchMachine(),
    messages: o.messages,
    size: o.size,
    queues: o.queues,
    warmup: o.warmup,
    rounds: o.rounds,
    batchInFlight: BATCH_IN_FLIGHT,
    topics,
    modes: modes.map((mode) => {
      const rows = producers
        .filter((p) => supports(p, mode))
        .map((name) => {
          const rs = runs.get(`${mode.name}\u0000${name}`) ?? [];
          return {
            name,
            msgsPerSec: median(rs.map((r) => r.msgsPerSec)),
            msgsPerSecRounds: rs.map((r) => r.msgsPerSec),
            cpuUsPerMsg: median(rs.map((r) => r.cpuUsPerMsg)),
            acked: Math.min(...rs.map((r) => r.acked)),
            failed: rs.reduce((n, r) => n + r.failed, 0),
            lost: rs.reduce((n, r) => n + Math.max(0, r.ackedWithWarmup - r.stored), 0),
            errors: [...new Set(rs.map((r) => r.error).filter((e): e is string => e !== null))],
          };
        });
      const rw = rows.find((r) => r.name === 'rocketwire')!.msgsPerSec;
      const ratios: Record<string, number | null> = {};
      for (const p of peers) {
        const row = rows.find((r) => r.name === p);
        ratios[p] = row && row.msgsPerSec > 0 ? rw / row.msgsPerSec : null;
      }
      return { mode: mode.name, kind: mode.kind, inFlight: mode.inFlight, batch: mode.batch, producers: rows, ratios };
    }),
  };
  return { report, series };
}

/** Why the run must exit 1: failed sends, acknowledged messages not in the topic, runs short of the count. */
export function produceProblems(r: ProduceReport): string[] {
  const out: string[] = [];
  for (const m of r.modes) {
    for (const p of m.producers) {
      if (p.failed > 0)
        out.push(`${p.name} ${m.mode}: ${p.failed} sends failed${p.errors[0] ? ` (${p.errors[0]})` : ''}`);
      else if (p.acked < r.messages) out.push(`${p.name} ${m.mode}: ${p.acked} of ${r.messages} sends acknowledged`);
      if (p.lost > 0) out.push(`${p.name} ${m.mode}: ${p.lost} acknowledged messages are not in ${r.topics[p.name]}`);
    }
  }
  return out;
}

function fmt(n: number, digits = 0): string {
  return n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows
    .map((r) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  '))
    .join('\n');
}

export function produceSummary(r: ProduceReport): string {
  const names = ['rocketwire', ...Object.keys(r.topics).filter((n) => n !== 'rocketwire')];
  const peers = names.slice(1);
  const cell = (m: ProduceReport['modes'][number], name: string) => m.producers.find((p) => p.name === name);
  const head = ['mode', 'in flight'];
  for (const n of names) head.push(`${n} msgs/s`, 'rounds');
  for (const p of peers) head.push(`rocketwire ÷ ${p}`);
  const rows = [head];
  for (const m of r.modes) {
    const row = [m.mode, m.kind === 'batch' ? `${m.inFlight} × ${m.batch}` : String(m.inFlight)];
    for (const n of names) {
      const c = cell(m, n);
      row.push(c ? fmt(c.msgsPerSec) : 'n/a', c ? c.msgsPerSecRounds.map((x) => fmt(x)).join(' / ') : '');
    }
    for (const p of peers) row.push(m.ratios[p] != null ? fmt(m.ratios[p]!, 2) : 'n/a');
    rows.push(row);
  }
  const cpuRows = [['mode', ...names.map((n) => `${n} µs CPU/msg`)]];
  for (const m of r.modes)
    cpuRows.push([m.mode, ...names.map((n) => (cell(m, n) ? fmt(cell(m, n)!.cpuUsPerMsg, 1) : 'n/a'))]);
  const lines = [
    `rocketwire bench --produce-vs ${peers.join(',')}: ${fmt(r.messages)} messages of ${r.size} B per producer and mode after ${fmt(r.warmup)} not measured, ${r.queues} queues, broker ${r.broker}; median of ${r.rounds} round(s), msgs/s from the first to the last acknowledged send`,
    '',
    table(rows),
    '',
    table(cpuRows),
    '',
    `CPU of the measured sends: rocketwire the bench process, the peers their own process (Java: every JVM thread, GC included).`,
    `Each producer wrote to a topic of its own, in every mode and round: ${names.map((n) => r.topics[n]).join(', ')}.` +
      (peers.includes('ali-ons') && r.modes.some((m) => m.kind === 'batch') ? ' ali-ons has no batch send (n/a).' : ''),
    '',
    `machine: ${r.machine.cpus} × ${r.machine.cpuModel}, ${r.machine.memoryGb} GB, Node ${r.machine.node}`,
  ];
  return lines.join('\n') + '\n';
}
