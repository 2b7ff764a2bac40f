/**
 * Consume modes against Java on the real broker, in one run: one Apache RocketMQ 5.3.3
 * broker (jars from Maven Central through the interop harness, the timer wheel on because its POP
 * needs it), one topic produced once, then `rocketwire bench` consumes it with rocketwire's push
 * consumer, LitePullConsumer and SimpleConsumer (POP) and with Java's DefaultMQPushConsumer,
 * DefaultLitePullConsumer and DefaultMQPushConsumer in pop mode, each round with new groups, in
 * an order rotated every round. Prints one table: msgs/s per mode and client, rocketwire ÷ Java
 * per mode, and each mode ÷ the same client's push consumer.
 *
 *   node dist/bench/e2e/consume-modes.js [--messages 100000] [--size 1024] [--queues 8] [--rounds 3] [--json]
 */
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { benchArgs } from '../harness/args.js';
import { fileURLToPath } from 'node:url';
import { startRealCluster, V5_VERSION } from '../../test/interop/harness.js';

const { values } = benchArgs('consume-modes', {
  options: {
    messages: { type: 'string', default: '100000' },
    size: { type: 'string', default: '1024' },
    queues: { type: 'string', default: '8' },
    rounds: { type: 'string', default: '3' },
    json: { type: 'boolean', default: false },
  },
});

const cli = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../bin/rocketwire.js');

/** The bench's peers for the other five consumers; rocketwire push is the bench's own rounds. */
const PEERS = ['lite', 'pop', 'java', 'java-lite', 'java-pop'];
const MODES: Array<{ mode: string; rocketwire: string; java: string }> = [
  { mode: 'push', rocketwire: 'rocketwire', java: 'java' },
  { mode: 'lite pull', rocketwire: 'lite', java: 'java-lite' },
  { mode: 'pop', rocketwire: 'pop', java: 'java-pop' },
];

interface BenchPeer {
  name: string;
  msgsPerSec: number;
  msgsPerSecRounds: number[];
  received: number;
  complete: boolean;
}
interface BenchReport {
  messages: number;
  size: number;
  queues: number;
  rounds: number;
  produceMsgsPerSec: number;
  consumeMsgsPerSec: number;
  consumeMsgsPerSecRounds: number[];
  consumed: number;
  peers: BenchPeer[];
  machine: { cpus: number; cpuModel: string; node: string };
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

async function main(): Promise<void> {
  // The full JIT for the broker (the harness's default favours boot time), and POP on.
  const cluster = await startRealCluster({
    version: V5_VERSION,
    brokers: 1,
    brokerHeapMb: 1024,
    brokerJvmArgs: ['-XX:TieredStopAtLevel=4'],
    brokerConfig: { timerWheelEnable: true },
  });
  let report: BenchReport;
  try {
    const topic = `rw_modes_bench_${Date.now().toString(36)}`;
    await cluster.createTopic(topic, { queues: Number(values.queues) });
    const args = [
      cli,
      'bench',
      '--namesrv',
      cluster.namesrv,
      '--topic',
      topic,
      '--messages',
      values.messages!,
      '--size',
      values.size!,
      '--queues',
      values.queues!,
      '--rounds',
      values.rounds!,
      '--latency-messages',
      '0',
      '--vs',
      PEERS.join(','),
      '--json',
    ];
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
      let s = '';
      child.stdout.on('data', (d: Buffer) => (s += d.toString()));
      child.once('close', (code) =>
        code === 0 ? resolve(s) : reject(new Error(`rocketwire bench exited with ${code}: ${s.trim().slice(0, 2000)}`)),
      );
    });
    report = JSON.parse(out) as BenchReport;
  } finally {
    await cluster.stop({ graceful: false });
  }
  const byName = new Map<string, { msgsPerSec: number; rounds: number[] }>(
    report.peers.map((p) => [p.name, { msgsPerSec: p.msgsPerSec, rounds: p.msgsPerSecRounds }]),
  );
  byName.set('rocketwire', { msgsPerSec: report.consumeMsgsPerSec, rounds: report.consumeMsgsPerSecRounds });
  const get = (n: string): { msgsPerSec: number; rounds: number[] } => byName.get(n) ?? { msgsPerSec: 0, rounds: [] };
  const ratio = (a: number, b: number): string => (b > 0 ? fmt(a / b, 2) : 'n/a');
  const rwPush = get('rocketwire').msgsPerSec;
  const javaPush = get('java').msgsPerSec;
  const rows = MODES.map((m) => {
    const rw = get(m.rocketwire);
    const java = get(m.java);
    return {
      mode: m.mode,
      rocketwire: rw,
      java,
      rwOverJava: java.msgsPerSec > 0 ? rw.msgsPerSec / java.msgsPerSec : 0,
    };
  });
  if (values.json) {
    process.stdout.write(JSON.stringify({ realBroker: V5_VERSION, modes: rows, bench: report }) + '\n');
    return;
  }
  const lines = [
    `consume modes: ${fmt(report.messages)} messages of ${report.size} B, ${report.queues} queues, Apache RocketMQ ${V5_VERSION} (one broker, timerWheelEnable=true); median of ${report.rounds} rounds, msgs/s first to last message`,
    '',
    table([
      [
        'mode',
        'rocketwire msgs/s',
        'rounds',
        'Java msgs/s',
        'rounds',
        'rocketwire ÷ Java',
        'rocketwire ÷ its push',
        'Java ÷ its push',
      ],
      ...rows.map((r) => [
        r.mode,
        fmt(r.rocketwire.msgsPerSec),
        r.rocketwire.rounds.map((x) => fmt(x)).join(' / '),
        fmt(r.java.msgsPerSec),
        r.java.rounds.map((x) => fmt(x)).join(' / '),
        ratio(r.rocketwire.msgsPerSec, r.java.msgsPerSec),
        ratio(r.rocketwire.msgsPerSec, rwPush),
        ratio(r.java.msgsPerSec, javaPush),
      ]),
    ]),
    '',
    `produce ${fmt(report.produceMsgsPerSec)} msgs/s; every consumer got all ${fmt(report.consumed)} messages in every round (the bench exits 1 otherwise)`,
    `machine: ${report.machine.cpus} × ${report.machine.cpuModel}, Node ${report.machine.node}`,
  ];
  process.stdout.write(lines.join('\n') + '\n');
}

main().catch((err: Error) => {
  process.stderr.write(`consume-modes bench: ${err.message}\n`);
  process.exitCode = 1;
});
