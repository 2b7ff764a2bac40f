/**
 * Memory through the embedded broker with commit-log retention on (not part of `npm test`):
 * `rocketwire broker` in a child process with a short fileReservedTime, a producer in this process
 * (batches of 32, a bounded lead over the consumer) and a push consumer in a second child. Every
 * million messages consumed (counted here from the numbers the consumer sends back) it prints the largest RSS of the consumer and of the broker since the
 * previous million (from /proc: VmRSS sampled every 200 ms, and VmHWM), the store's disk use and
 * its commit-log segments; then one JSON summary (lost must be 0: the lead is kept far below what
 * retention deletes).
 *
 *   npx tsc -p . && node dist/bench/soak/store-retention-soak.js [--messages 10000000] [--size 1024]
 *     [--reserved-hours 0.01] [--max-ahead 400000] [--queues 8]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { PushConsumer } from '../../lib/consumer/index.js';
import { Producer } from '../../lib/producer/index.js';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : fallback;
}

const TOPIC = 'RetentionSoak';
const messages = Number(arg('messages', '10000000'));
const size = Number(arg('size', '1024'));
const here = fileURLToPath(import.meta.url);
const root = path.resolve(path.dirname(here), '..', '..', '..');

/** VmRSS and VmHWM of a process, in MB. */
function memOf(pid: number): { rss: number; hwm: number } {
  try {
    const s = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (k: string): number => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(s)?.[1] ?? 0);
    return { rss: kb('VmRSS') / 1024, hwm: kb('VmHWM') / 1024 };
  } catch {
    return { rss: 0, hwm: 0 };
  }
}

function duMb(dir: string): number {
  let total = 0;
  const walk = (d: string): void => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else
        try {
          total += fs.statSync(p).blocks * 512;
        } catch {
          // deleted meanwhile by retention
        }
    }
  };
  walk(dir);
  return Math.round(total / 1048576);
}

/**
 * The consumer child: sends the sequence number at the start of each body to the parent over fd 3
 * (4 bytes each), so the table of what was seen lives outside the process whose memory is measured.
 */
async function consumerRole(namesrv: string): Promise<void> {
  const out = fs.createWriteStream('', { fd: 3 });
  // the parent closes the pipe when it has counted everything
  out.on('error', () => process.exit(0));
  const consumer = new PushConsumer({
    consumerGroup: 'retention_soak_cg',
    namesrvAddr: namesrv,
    subscriptions: { [TOPIC]: '*' },
    consumeFromWhere: 'first',
    persistOffsetIntervalMs: 1000,
  });
  await consumer.start((msgs) => {
    const nums = Buffer.allocUnsafe(msgs.length * 4);
    for (let i = 0; i < msgs.length; i++) {
      const m = msgs[i]!;
      nums.writeUInt32LE(Number(m.body.toString('latin1', 0, m.body.indexOf(32))), i * 4);
    }
    out.write(nums);
    return 'CONSUME_SUCCESS';
  });
  process.on('SIGTERM', () => {
    void consumer.shutdown().then(() => process.exit(0));
  });
}

function waitLine(
  child: ChildProcess,
  match: (o: Record<string, unknown>) => boolean,
): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const rl = readline.createInterface({ input: child.stdout! });
    rl.on('line', (line) => {
      try {
        const o = JSON.parse(line) as Record<string, unknown>;
        if (match(o)) resolve(o);
      } catch {
        // not a JSON line
      }
    });
    child.once('exit', (code) => reject(new Error(`child exited with ${code}`)));
  });
}

async function main(): Promise<void> {
  const data = fs.mkdtempSync(path.join(os.tmpdir(), 'rocketwire-retention-soak-'));
  const broker = spawn(
    process.execPath,
    [
      path.join(root, 'bin', 'rocketwire.js'),
      'broker',
      ...['--namesrv-port', '0', '--broker-port', '0', '--data', data, '--queues', arg('queues', '8')],
      ...['--file-reserved-time', arg('reserved-hours', '0.01'), '--disk-max-used-space-ratio', '1'],
      ...['--clean-resource-interval', '1000'],
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const ready = await waitLine(broker, (o) => o.event === 'ready');
  const namesrv = String(ready.namesrv);
  const consumer = spawn(
    process.execPath,
    [here, '--role', 'consumer', '--namesrv', namesrv, '--messages', String(messages)],
    { stdio: ['ignore', 'ignore', 'inherit', 'pipe'] },
  );
  const seen = new Uint8Array(messages);
  let consumed = 0;
  let deliveries = 0;
  let rest = Buffer.alloc(0);
  (consumer.stdio[3] as NodeJS.ReadableStream).on('data', (chunk: Buffer) => {
    const buf = rest.length > 0 ? Buffer.concat([rest, chunk]) : chunk;
    const whole = buf.length - (buf.length % 4);
    for (let i = 0; i < whole; i += 4) {
      const n = buf.readUInt32LE(i);
      deliveries++;
      if (seen[n] === 0) {
        seen[n] = 1;
        consumed++;
      }
    }
    rest = Buffer.from(buf.subarray(whole));
  });
  const producer = new Producer({ group: 'retention_soak_pg', namesrvAddr: namesrv });
  await producer.start();
  const peak = { consumer: 0, broker: 0 };
  const sampler = setInterval(() => {
    peak.consumer = Math.max(peak.consumer, memOf(consumer.pid!).rss);
    peak.broker = Math.max(peak.broker, memOf(broker.pid!).rss);
  }, 200);
  const rows: Record<string, number>[] = [];
  const started = performance.now();
  let nextRow = 1_000_000;
  const report = (): void => {
    while (consumed >= nextRow) {
      const row = {
        million: nextRow / 1_000_000,
        seconds: Math.round((performance.now() - started) / 1000),
        consumerRssMb: Math.round(peak.consumer),
        brokerRssMb: Math.round(peak.broker),
        consumerHwmMb: Math.round(memOf(consumer.pid!).hwm),
        brokerHwmMb: Math.round(memOf(broker.pid!).hwm),
        diskMb: duMb(data),
        segments: fs.readdirSync(path.join(data, 'commitlog')).length,
      };
      rows.push(row);
      process.stderr.write(`${JSON.stringify(row)}\n`);
      peak.consumer = 0;
      peak.broker = 0;
      nextRow += 1_000_000;
    }
  };
  const maxAhead = Number(arg('max-ahead', '400000'));
  const pad = Buffer.alloc(size, 0x78);
  let seq = 0;
  const lanes = 4;
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      while (seq < messages) {
        while (seq - consumed > maxAhead) {
          report();
          await new Promise((r) => setTimeout(r, 20));
        }
        // another lane may have produced the last message while this one waited
        if (seq >= messages) break;
        const batch = [];
        for (let k = 0; k < 32 && seq < messages; k++) {
          const body = Buffer.from(pad);
          body.write(`${seq++} `, 0, 'latin1');
          batch.push({ topic: TOPIC, body });
        }
        await producer.sendBatch(batch);
        report();
      }
    }),
  );
  const deadline = performance.now() + 120_000;
  while (consumed < messages && performance.now() < deadline) {
    report();
    await new Promise((r) => setTimeout(r, 100));
  }
  report();
  clearInterval(sampler);
  const summary = {
    messages,
    size,
    reservedHours: Number(arg('reserved-hours', '0.01')),
    seconds: Math.round((performance.now() - started) / 1000),
    consumed,
    deliveries,
    lost: messages - consumed,
    consumerHwmMb: Math.round(memOf(consumer.pid!).hwm),
    brokerHwmMb: Math.round(memOf(broker.pid!).hwm),
    diskMbAtEnd: duMb(data),
    rows,
  };
  await producer.shutdown();
  // the consumer commits its offsets and leaves before its broker goes
  consumer.kill('SIGTERM');
  await new Promise((r) => consumer.once('exit', r));
  broker.kill('SIGTERM');
  await new Promise((r) => broker.once('exit', r));
  fs.rmSync(data, { recursive: true, force: true });
  process.stdout.write(`${JSON.stringify(summary, null, 1)}\n`);
}

if (arg('role', '') === 'consumer') void consumerRole(arg('namesrv', ''));
else
  main().catch((err) => {
    process.stderr.write(`${(err as Error).stack ?? err}\n`);
    process.exit(1);
  });
