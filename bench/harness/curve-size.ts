/**
 * `rocketwire bench --curve size`: what a message costs as its body grows, against the cost of its
 * bytes alone. Each point creates a topic of 8 queues, fills it with bodies of that size (the
 * bench's filler: "rocketwire-bench-" repeated, the message's number in the first 8 bytes, so it
 * compresses well), and consumes it once from the first offset with a new rocketwire PushConsumer
 * group (defaults, a no-op handler) in this process, then (--vs java) with Java's
 * DefaultMQPushConsumer in a JVM of its own. The floor, measured in the same point: the same body
 * bytes over a loopback TCP connection, written by a child process in writes as large as a pull
 * answer, read here and each read copied into a preallocated buffer of that size.
 */
import { spawn } from 'node:child_process';
import * as net from 'node:net';
import * as path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { AdminClient } from '../../lib/admin/index.js';
import { CliError } from '../../lib/cli/common.js';
import { ConsumeConcurrentlyStatus, PushConsumer, type MessageExt } from '../../lib/consumer/index.js';
import { renderCurveSvg, type ChartSeries } from './chart.js';
import { fmt } from './curve.js';
import { runJavaPeer } from './peers.js';
import { produce, UniqueCount, type BenchOptions, untilCounted } from './run.js';

const MIB = 1024 * 1024;
export const SIZE_CURVE_QUEUES = 8;
export const DEFAULT_SIZE_POINTS = [128, 1024, 16_384, 65_536, MIB, 4 * MIB];
/** A pull answer holds at most 32 messages and, past its first message, 256 KiB (both brokers). */
const PULL_MESSAGES = 32;
const PULL_BYTES = 256 * 1024;
/** The floor's transfer is repeated this many times (a short transfer on a shared machine is noisy); medians are reported. */
const FLOOR_RUNS = 5;

export interface SizeCurveOptions {
  namesrv: string;
  points: number[];
  /** false: no body is compressed (compressMsgBodyOverHowmuch past every body). */
  compress: boolean;
  java: boolean;
  /** The messages of a point: about `mib` MiB of bodies, within [minMessages, maxMessages], and never over `capMib` MiB. */
  mib: number;
  minMessages: number;
  maxMessages: number;
  capMib: number;
  prefix: string;
  log: (line: string) => void;
}

/**
 * About 256 MiB of bodies a point, so that the consumer's start (routes, rebalance, offsets: a few
 * ms of CPU) weighs little per message even where a point is a fraction of a second.
 */
export const SIZE_RULE = { mib: 256, minMessages: 2000, maxMessages: 200_000, capMib: 256 };

export interface SizeSide {
  received: number;
  complete: boolean;
  msgsPerSec: number;
  /** MiB of bodies (uncompressed) per second. */
  mbPerSec: number;
  cpuUsPerMsg: number;
  cpuUsPerMib: number;
  /** rocketwire: CPU from before start() until the first message was handled (counted in cpuUsPerMsg). */
  startCpuMs?: number;
}

export interface SizeFloor {
  /** Bytes of one write of the writer (a pull answer's worth). */
  chunkBytes: number;
  bytes: number;
  mbPerSec: number;
  /** The reading process's CPU (this one) per MiB read and copied. */
  cpuUsPerMib: number;
}

export interface SizePoint {
  size: number;
  messages: number;
  bodyMib: number;
  compressed: boolean;
  rocketwire: SizeSide;
  java?: SizeSide & { peakRssMb: number };
  floor: SizeFloor;
  /** rocketwire MB/s ÷ the floor's. */
  ofFloor: number;
  /** rocketwire's CPU per message less the floor's CPU for the same bytes. */
  cpuAboveFloorUsPerMsg: number;
  /** rocketwire MB/s ÷ Java's. */
  ofJava?: number;
}

/** How many messages a point of `size`-byte bodies sends. */
export function sizePointMessages(
  size: number,
  o: Pick<SizeCurveOptions, 'mib' | 'minMessages' | 'maxMessages' | 'capMib'>,
): number {
  const n = Math.min(o.maxMessages, Math.max(o.minMessages, Math.ceil((o.mib * MIB) / size)));
  return Math.max(1, Math.min(n, Math.floor((o.capMib * MIB) / size)));
}

/** The floor writer's write size: a pull answer of `size`-byte bodies. */
export function floorChunk(size: number): number {
  return Math.max(size, Math.min(PULL_MESSAGES * size, PULL_BYTES));
}

export async function runSizeCurve(o: SizeCurveOptions): Promise<SizePoint[]> {
  const admin = new AdminClient({ namesrvAddr: o.namesrv, mqClientApiTimeoutMs: 10_000 });
  const out: SizePoint[] = [];
  try {
    for (const size of o.points) {
      const topic = `${o.prefix}_size${size}`;
      await admin.createOrUpdateTopic({ topic, readQueueNums: SIZE_CURVE_QUEUES, writeQueueNums: SIZE_CURVE_QUEUES });
      const want = sizePointMessages(size, o);
      o.log(`size ${size}: filling ${want} messages (${((want * size) / MIB).toFixed(1)} MiB of bodies)…`);
      const messages = await fill(o, topic, size, want);
      o.log(`size ${size}: rocketwire…`);
      const rocketwire = await consumeRocketwire(o, topic, size, messages);
      let java: SizePoint['java'];
      if (o.java) {
        o.log(`size ${size}: java…`);
        const j = await runJavaPeer({
          namesrv: o.namesrv,
          topic,
          expect: messages,
          timeoutMs: 180_000,
          t0: performance.now(),
          size,
        });
        const mib = (j.received * size) / MIB;
        java = {
          received: j.received,
          complete: j.complete,
          msgsPerSec: j.msgsPerSec,
          mbPerSec: (j.msgsPerSec * size) / MIB,
          cpuUsPerMsg: (j.cpuMs * 1000) / Math.max(1, j.received),
          cpuUsPerMib: (j.cpuMs * 1000) / Math.max(1e-9, mib),
          peakRssMb: j.peakRssMb,
        };
      }
      o.log(`size ${size}: floor…`);
      const floor = await measureFloor(messages * size, floorChunk(size));
      out.push({
        size,
        messages,
        bodyMib: (messages * size) / MIB,
        compressed: o.compress && size >= 4096,
        rocketwire,
        ...(java ? { java, ofJava: rocketwire.mbPerSec / java.mbPerSec } : {}),
        floor,
        ofFloor: rocketwire.mbPerSec / floor.mbPerSec,
        cpuAboveFloorUsPerMsg: rocketwire.cpuUsPerMsg - (floor.cpuUsPerMib * size) / MIB,
      });
    }
  } finally {
    await admin.close();
  }
  return out;
}

/**
 * Sends the point's messages with the bench's producer path (run.ts): bodies under 4 KiB in
 * batches of 32 (a batch is never compressed, and bodies that small would not be), larger ones one
 * by one with 8 in flight, so that each is compressed unless --compress off.
 */
async function fill(o: SizeCurveOptions, topic: string, size: number, count: number): Promise<number> {
  const opts: BenchOptions = {
    namesrv: o.namesrv,
    topic,
    messages: count,
    size,
    queues: SIZE_CURVE_QUEUES,
    producers: size < 4096 ? 4 : 8,
    batch: size < 4096 ? 32 : 1,
    consumeBatch: 1,
    handlerMs: 0,
    compress: o.compress,
    latencyMessages: 0,
    stallTimeoutMs: 60_000,
    serializeType: 'JSON',
  };
  const r = await produce(opts, topic, 0, count, opts.producers, null, performance.now());
  if (r.failed > 0) throw new CliError(`size ${size}: ${r.failed} of ${count} sends failed`);
  return r.count;
}

async function consumeRocketwire(o: SizeCurveOptions, topic: string, size: number, expect: number): Promise<SizeSide> {
  const n = new UniqueCount(expect);
  const consumer = new PushConsumer({
    consumerGroup: `${o.prefix}_rw_size${size}`,
    namesrvAddr: o.namesrv,
    consumeFromWhere: 'first',
    subscriptions: { [topic]: '*' },
  });
  const cpu0 = process.cpuUsage();
  let startCpuUs = Number.NaN;
  try {
    await consumer.start((msgs: MessageExt[]) => {
      if (Number.isNaN(startCpuUs)) {
        const c = process.cpuUsage(cpu0);
        startCpuUs = c.user + c.system;
      }
      n.add(msgs);
      return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
    });
    await untilCounted(n, expect, 60_000);
    const cpu = process.cpuUsage(cpu0);
    const cpuUs = cpu.user + cpu.system;
    const seconds = Math.max(1e-3, (n.lastAt - n.firstAt) / 1000);
    const msgsPerSec = Math.max(0, n.unique - 1) / seconds;
    return {
      received: n.unique,
      complete: n.unique === expect,
      msgsPerSec,
      mbPerSec: (msgsPerSec * size) / MIB,
      cpuUsPerMsg: cpuUs / Math.max(1, n.unique),
      cpuUsPerMib: cpuUs / Math.max(1e-9, (n.unique * size) / MIB),
      startCpuMs: startCpuUs / 1000,
    };
  } finally {
    await consumer.shutdown();
  }
}

const WRITER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'size-floor-writer.js');

/** `bytes` over loopback TCP FLOOR_RUNS times; the median time and the median CPU. */
export async function measureFloor(bytes: number, chunk: number): Promise<SizeFloor> {
  const child = spawn(process.execPath, [WRITER, String(bytes), String(chunk), String(FLOOR_RUNS)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    const port = await new Promise<number>((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (code) => reject(new CliError(`the floor's writer exited with ${code}`)));
      createInterface({ input: child.stdout! }).once('line', (line) => resolve(Number(line)));
    });
    const dst = Buffer.allocUnsafe(chunk);
    const runs: { seconds: number; cpuUs: number }[] = [];
    for (let i = 0; i < FLOOR_RUNS; i++) runs.push(await readAll(port, bytes, dst));
    const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    return {
      chunkBytes: chunk,
      bytes,
      mbPerSec: bytes / MIB / Math.max(1e-6, median(runs.map((r) => r.seconds))),
      cpuUsPerMib: median(runs.map((r) => r.cpuUs)) / (bytes / MIB),
    };
  } finally {
    child.kill();
  }
}

/** Reads `bytes` from the port, copying each read into `dst` (from where the last left off, wrapping). */
function readAll(port: number, bytes: number, dst: Buffer): Promise<{ seconds: number; cpuUs: number }> {
  return new Promise((resolve, reject) => {
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    let got = 0;
    let at = 0;
    const socket = net.connect(port, '127.0.0.1');
    socket.on('data', (d: Buffer) => {
      for (let p = 0; p < d.length; ) {
        const n = Math.min(d.length - p, dst.length - at);
        d.copy(dst, at, p, p + n);
        p += n;
        at = (at + n) % dst.length;
      }
      got += d.length;
    });
    socket.once('error', reject);
    socket.once('end', () => {
      const cpu = process.cpuUsage(cpu0);
      const seconds = (performance.now() - t0) / 1000;
      socket.destroy();
      if (got !== bytes) reject(new CliError(`the floor read ${got} of ${bytes} bytes`));
      else resolve({ seconds, cpuUs: cpu.user + cpu.system });
    });
  });
}

/** Whether the targets hold on these points, with the figures. */
export function sizeTargets(points: SizePoint[]): {
  aboveFloorMeanUs: number;
  aboveFloorLowPct: number;
  aboveFloorHighPct: number;
  flatWithin20Pct: boolean;
  ofFloorAt1MiB: number | null;
  atOrAboveJava: boolean | null;
} {
  const flat = points.filter((p) => p.size >= 128 && p.size <= 65_536).map((p) => p.cpuAboveFloorUsPerMsg);
  const mean = flat.reduce((a, b) => a + b, 0) / Math.max(1, flat.length);
  const low = flat.length ? (Math.min(...flat) / mean - 1) * 100 : Number.NaN;
  const high = flat.length ? (Math.max(...flat) / mean - 1) * 100 : Number.NaN;
  const at1 = points.find((p) => p.size === MIB);
  const withJava = points.filter((p) => p.ofJava !== undefined);
  return {
    aboveFloorMeanUs: mean,
    aboveFloorLowPct: low,
    aboveFloorHighPct: high,
    flatWithin20Pct: flat.length > 1 && low >= -20 && high <= 20,
    ofFloorAt1MiB: at1 ? at1.ofFloor : null,
    atOrAboveJava: withJava.length ? withJava.every((p) => p.ofJava! >= 1) : null,
  };
}

function sizeLabel(b: number): string {
  return b >= MIB ? `${b / MIB} MiB` : b >= 1024 ? `${b / 1024} KiB` : `${b} B`;
}

/** The curve as a Markdown table, and the targets under it. */
export function sizeTable(points: SizePoint[]): string {
  const head =
    '| body | messages | rocketwire msgs/s | MB/s rw | MB/s Java | MB/s floor | rw ÷ floor | rw ÷ Java ' +
    '| CPU µs/msg rw | CPU µs/msg Java | floor CPU µs/msg, same bytes | rw above floor µs/msg ' +
    '| CPU µs/MiB rw / Java / floor |';
  const rows = points.map((p) => {
    const floorPerMsg = (p.floor.cpuUsPerMib * p.size) / MIB;
    return (
      `| ${sizeLabel(p.size)}${p.compressed ? ' (zlib)' : ''} | ${fmt(p.messages)} | ${fmt(p.rocketwire.msgsPerSec)} ` +
      `| ${fmt(p.rocketwire.mbPerSec, 1)} | ${fmt(p.java?.mbPerSec, 1)} | ${fmt(p.floor.mbPerSec, 0)} ` +
      `| ${fmt(p.ofFloor, 2)} | ${fmt(p.ofJava, 2)} | ${fmt(p.rocketwire.cpuUsPerMsg, 1)} | ${fmt(p.java?.cpuUsPerMsg, 1)} ` +
      `| ${fmt(floorPerMsg, 2)} | ${fmt(p.cpuAboveFloorUsPerMsg, 1)} ` +
      `| ${fmt(p.rocketwire.cpuUsPerMib)} / ${fmt(p.java?.cpuUsPerMib)} / ${fmt(p.floor.cpuUsPerMib)} |`
    );
  });
  const t = sizeTargets(points);
  const lines = [
    `CPU above the floor, 128 B – 64 KiB: mean ${fmt(t.aboveFloorMeanUs, 1)} µs/msg, ` +
      `${fmt(t.aboveFloorLowPct, 0)} % … +${fmt(t.aboveFloorHighPct, 0)} % (target ±20 %: ${t.flatWithin20Pct ? 'met' : 'not met'})`,
    `MB/s at 1 MiB ÷ floor: ${t.ofFloorAt1MiB === null ? '–' : fmt(t.ofFloorAt1MiB, 2)} (target ≥ 0.5)`,
    `at or above Java at every point: ${t.atOrAboveJava === null ? '–' : t.atOrAboveJava ? 'yes' : 'no'}`,
  ];
  return [head, `|${' --- |'.repeat(13)}`, ...rows, '', ...lines].join('\n') + '\n';
}

/** MB/s of bodies against the body size (log scales): rocketwire, Java, the floor. */
export function sizeSeries(points: SizePoint[], suffix = ''): ChartSeries[] {
  const series: ChartSeries[] = [
    { name: `rocketwire${suffix}`, points: points.map((p) => [p.size, p.rocketwire.mbPerSec]) },
  ];
  const java = points.filter((p) => p.java);
  if (java.length) series.push({ name: `Java${suffix}`, points: java.map((p) => [p.size, p.java!.mbPerSec]) });
  series.push({ name: `floor${suffix}`, points: points.map((p) => [p.size, p.floor.mbPerSec]) });
  return series;
}

export function sizeSvg(points: SizePoint[], title: string): string {
  return renderCurveSvg(title, 'body size, bytes', 'MB/s of bodies', sizeSeries(points));
}
