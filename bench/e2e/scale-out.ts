/**
 * Scale-out on a real cluster: do more consumer processes in one group add throughput until the
 * brokers are the limit? Starts a two-group Apache RocketMQ cluster (5.3.3 by default: name server,
 * broker-a and broker-b, jars from Maven Central through the interop harness), creates a topic with
 * --queues queues on each group, and for 1, 2 and 4 processes runs
 * `rocketwire bench --consumers N --vs java` on a topic of its own: N rocketwire processes and N
 * Java DefaultMQPushConsumer processes in one group each round (see bench/harness/group.ts).
 * Prints a table (processes × client → msgs/s median and spread over the rounds, duplicates), or
 * one JSON object with --json.
 *
 *   node dist/bench/e2e/scale-out.js [--messages 200000] [--size 1024] [--rounds 3] [--queues 8]
 *        [--processes 1,2,4] [--batch 32] [--version 5.3.3] [--warmup 1] [--json]
 *
 * --warmup 1 (default) first runs one unrecorded round with the most processes on a topic of its
 * own: freshly booted brokers are still compiling (C2) for the first minute, and without it the
 * first process count measured (1) paid for the brokers' JIT.
 */
import { spawn } from 'node:child_process';
import * as os from 'node:os';
import * as path from 'node:path';
import { benchArgs } from '../harness/args.js';
import { fileURLToPath } from 'node:url';
import { startRealCluster, V5_VERSION } from '../../test/interop/harness.js';

const { values } = benchArgs('scale-out', {
  options: {
    messages: { type: 'string', default: '200000' },
    size: { type: 'string', default: '1024' },
    rounds: { type: 'string', default: '3' },
    queues: { type: 'string', default: '8' },
    processes: { type: 'string', default: '1,2,4' },
    batch: { type: 'string', default: '32' },
    version: { type: 'string', default: V5_VERSION },
    json: { type: 'boolean', default: false },
    warmup: { type: 'string', default: '1' },
  },
});

const cli = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../bin/rocketwire.js');

interface BenchReport {
  produced: number;
  consumed: number;
  produceMsgsPerSec: number;
  consumeMsgsPerSecRounds: number[];
  consumeMsgsPerSec: number;
  duplicates: number;
  peakRssMb: number;
  consumeCpuMs: number;
  peers: Array<{
    name: string;
    received: number;
    msgsPerSec: number;
    msgsPerSecRounds: number[];
    duplicates?: number;
    peakRssMb: number;
    cpuMs: number;
    complete: boolean;
  }>;
  groupRounds?: Array<{
    name: string;
    round: number;
    msgsPerSec: number;
    duplicates: number;
    perProcess: number[];
    settleMs: number;
  }>;
}

interface Row {
  processes: number;
  client: string;
  msgsPerSec: number;
  rounds: number[];
  /** (max − min) / median of the rounds. */
  spread: number;
  consumed: number;
  duplicates: number;
  /** Messages each process handled in the median round. */
  perProcess: number[];
  settleMs: number;
  peakRssMbPerProcess: number;
  cpuMs: number;
  /** This row's msgs/s ÷ the same client's with one process. */
  scale: number;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length === 0 ? 0 : s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

const fmt = (n: number, d = 0) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

function bench(args: string[]): Promise<BenchReport> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, 'bench', ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let s = '';
    child.stdout.on('data', (d: Buffer) => (s += d.toString()));
    child.once('close', (code) => {
      try {
        const report = JSON.parse(s) as BenchReport;
        if (code === 0) resolve(report);
        else
          reject(
            new Error(
              `rocketwire bench ${args.join(' ')} exited with ${code} (consumed ${report.consumed} of ${report.produced})`,
            ),
          );
      } catch {
        reject(new Error(`rocketwire bench exited with ${code}: ${s.trim()}`));
      }
    });
  });
}

function rowsOf(processes: number, r: BenchReport): Row[] {
  const rows: Row[] = [];
  for (const client of ['rocketwire', 'java']) {
    const rounds =
      client === 'rocketwire'
        ? r.consumeMsgsPerSecRounds
        : (r.peers.find((p) => p.name === client)?.msgsPerSecRounds ?? []);
    const m = median(rounds);
    const groups = (r.groupRounds ?? []).filter((g) => g.name === client);
    const mid = groups.find((g) => g.msgsPerSec === m) ?? groups[groups.length >> 1];
    const peer = r.peers.find((p) => p.name === client);
    rows.push({
      processes,
      client,
      msgsPerSec: m,
      rounds,
      spread: m > 0 ? (Math.max(...rounds) - Math.min(...rounds)) / m : 0,
      consumed: client === 'rocketwire' ? r.consumed : (peer?.received ?? 0),
      duplicates:
        groups.length > 0
          ? Math.max(...groups.map((g) => g.duplicates))
          : client === 'rocketwire'
            ? r.duplicates
            : (peer?.duplicates ?? 0),
      perProcess: mid?.perProcess ?? [],
      settleMs: median(groups.map((g) => g.settleMs)),
      peakRssMbPerProcess: client === 'rocketwire' ? r.peakRssMb : (peer?.peakRssMb ?? 0),
      cpuMs: client === 'rocketwire' ? r.consumeCpuMs : (peer?.cpuMs ?? 0),
      scale: 0,
    });
  }
  return rows;
}

async function main(): Promise<void> {
  const counts = values.processes!.split(',').map((s) => Number(s.trim()));
  // The full JIT for the brokers: the harness's default favours boot time over throughput.
  const cluster = await startRealCluster({
    version: values.version!,
    brokers: 2,
    brokerHeapMb: 1024,
    brokerJvmArgs: ['-XX:TieredStopAtLevel=4'],
  });
  const rows: Row[] = [];
  const produce: Record<number, number> = {};
  try {
    const common = [
      '--namesrv',
      cluster.namesrv,
      '--messages',
      values.messages!,
      '--size',
      values.size!,
      '--queues',
      values.queues!,
      '--batch',
      values.batch!,
      '--vs',
      'java',
      '--latency-messages',
      '0',
      '--json',
    ];
    if (values.warmup !== '0') {
      const topic = `rw_scale_warmup_${Date.now().toString(36)}`;
      await cluster.createTopic(topic, { queues: Number(values.queues) });
      process.stderr.write(`scale-out: warm-up round (not recorded) on ${topic}…\n`);
      await bench([...common, '--topic', topic, '--rounds', '1', '--consumers', String(Math.max(...counts))]);
    }
    for (const n of counts) {
      // A topic per process count: every bench run produces its own messages numbered from 0.
      const topic = `rw_scale_${n}_${Date.now().toString(36)}`;
      const route = await cluster.createTopic(topic, { queues: Number(values.queues) });
      if (route.queueDatas.length !== 2)
        throw new Error(`topic ${topic} is on ${route.queueDatas.length} broker group(s), not 2`);
      process.stderr.write(`scale-out: ${n} process(es) per client on ${topic}…\n`);
      const report = await bench([...common, '--topic', topic, '--rounds', values.rounds!, '--consumers', String(n)]);
      produce[n] = report.produceMsgsPerSec;
      rows.push(...rowsOf(n, report));
    }
  } finally {
    await cluster.stop({ graceful: false });
  }
  for (const r of rows) {
    const one = rows.find((x) => x.client === r.client && x.processes === Math.min(...counts));
    r.scale = one && one.msgsPerSec > 0 ? r.msgsPerSec / one.msgsPerSec : 0;
  }
  const cpus = os.cpus();
  const machine = `${cpus.length} × ${cpus[0]?.model.trim() ?? 'unknown'}, ${Math.round(os.totalmem() / 2 ** 30)} GB, Node ${process.versions.node}`;
  const queues = Number(values.queues) * 2;
  const table = [
    [
      'processes',
      'client',
      'msgs/s (median)',
      'rounds msgs/s',
      'spread',
      '× 1 process',
      'consumed',
      'duplicates',
      'per process (median round)',
      'settle ms',
    ],
    ...rows.map((r) => [
      String(r.processes),
      r.client,
      fmt(r.msgsPerSec),
      r.rounds.map((x) => fmt(x)).join(' / '),
      `${fmt(r.spread * 100)} %`,
      fmt(r.scale, 2),
      fmt(r.consumed),
      fmt(r.duplicates),
      r.perProcess.map((x) => fmt(x)).join(' + '),
      r.processes > 1 ? fmt(r.settleMs) : '-',
    ]),
  ];
  const widths = table[0]!.map((_, i) => Math.max(...table.map((row) => row[i]!.length)));
  // With --json the table goes to stderr, so that one run gives both.
  (values.json ? process.stderr : process.stdout).write(
    `scale-out on Apache RocketMQ ${values.version}, 2 broker groups × ${values.queues} queues, ${fmt(Number(values.messages))} × ${values.size} B, ${values.rounds} rounds\n\n` +
      table
        .map((row) => row.map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  '))
        .join('\n') +
      `\n\nmachine: ${machine}\n`,
  );
  if (values.json) {
    process.stdout.write(
      JSON.stringify({
        realBroker: values.version,
        brokerGroups: 2,
        queues,
        messages: Number(values.messages),
        size: Number(values.size),
        rounds: Number(values.rounds),
        brokerBootMs: cluster.bootMs.brokers,
        produceMsgsPerSec: produce,
        machine,
        rows,
      }) + '\n',
    );
  }
}

main().catch((err: Error) => {
  process.stderr.write(`scale-out bench: ${err.message}\n`);
  process.exitCode = 1;
});
