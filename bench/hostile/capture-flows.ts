/**
 * Hostile capture: a pcap of many TCP flows, each showing one partial frame, decoded
 * by the `rocketwire decode` CLI in a child process per mode (frames, --stats, --doctor,
 * --report), measuring the child's peak RSS (process.resourceUsage().maxRSS at exit), its exit
 * code and wall time. The baseline in the same run is the same mode on a capture of `baselineFlows`
 * flows of the same shape (Node, the modules and the output: what any decode costs). Each case runs
 * `runs` times; the largest RSS is reported. The pcap is written to a temporary folder, removed
 * afterwards. JSON on stdout.
 *
 * Shapes of a flow:
 *  - 'midway':  one packet of 12 payload bytes (the 8-byte head of a frame announcing `frameBytes`
 *               and the first bytes of its JSON header) on port 10911, the connection never seen
 *               opening: 82 bytes of pcap per flow (1 M flows = 82 MB), the shape of the report;
 *  - 'opened':  a SYN, then that packet: the decoder is at a frame boundary and keeps a partial
 *               frame buffer per flow (4 KiB: MIN_PARTIAL_CAPACITY).
 *
 *   node dist/bench/hostile/capture-flows.js [--flows 200000,1000000] [--modes frames,stats,doctor,report]
 *       [--shape midway|opened] [--runs 2] [--frame-bytes 1048576] [--spacing-us 1] [--baseline-flows 1000]
 *       [-- decode options…, e.g. -- --max-flows 16384]
 */
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, statSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export type CaptureFlowMode = 'frames' | 'stats' | 'doctor' | 'report';
export type CaptureFlowShape = 'midway' | 'opened';

export interface CaptureFlowAttackOptions {
  /** Flow counts to measure, one capture each. Default [200 000, 1 000 000]. */
  flows?: number[];
  /** Decode modes. Default all four. */
  modes?: CaptureFlowMode[];
  /** Default 'midway'. */
  shape?: CaptureFlowShape;
  /** Runs per case (the largest RSS is kept). Default 2. */
  runs?: number;
  /** Frame length each flow's head announces. Default 1 MiB. */
  frameBytes?: number;
  /** Capture time between two flows' packets, in microseconds. Default 1 (1 M flows = 1 s). */
  spacingMicros?: number;
  /** Flows of the baseline capture. Default 1000. */
  baselineFlows?: number;
  /** Extra options passed to decode (e.g. ['--max-flows', '4096']). */
  decodeArgs?: string[];
  /** Folder for the captures. Default a new folder under the system's temporary one, removed afterwards. */
  dir?: string;
}

export interface CaptureFlowCase {
  flows: number;
  mode: CaptureFlowMode;
  pcapBytes: number;
  /** Largest peak RSS of the runs, MiB. */
  maxRssMiB: number;
  /** Each run's peak RSS, MiB. */
  rssMiB: number[];
  /** The baseline's peak RSS for this mode, MiB (largest of its runs). */
  baselineRssMiB: number;
  wallMs: number[];
  exitCode: number | null;
  /** The last lines decode wrote to stderr (the problems and their count). */
  stderrTail: string[];
}

export interface CaptureFlowAttackResult {
  shape: CaptureFlowShape;
  frameBytes: number;
  decodeArgs: string[];
  baselineFlows: number;
  cases: CaptureFlowCase[];
}

const here = dirname(fileURLToPath(import.meta.url));
const cliMain = resolve(here, '../../lib/cli/main.js');

export interface FlowFloodOptions {
  shape?: CaptureFlowShape;
  frameBytes?: number;
  spacingMicros?: number;
}

/** Writes an Ethernet/IPv4/TCP pcap of `flows` flows, each one partial frame; returns its size. */
export function writeFlowFloodPcap(file: string, flows: number, o: FlowFloodOptions = {}): number {
  const fd = openSync(file, 'w');
  try {
    return generateFlowFlood(flows, o, (b) => writeSync(fd, b));
  } finally {
    closeSync(fd);
  }
}

/** The same pcap in memory (for tests: keep `flows` to a few hundred thousand). */
export function flowFloodPcap(flows: number, o: FlowFloodOptions = {}): Buffer {
  const parts: Buffer[] = [];
  generateFlowFlood(flows, o, (b) => parts.push(Buffer.from(b)));
  return Buffer.concat(parts);
}

/**
 * Flow i: client 10.0.(i / 64512).0, port 1024 + i % 64512, to 10.255.0.1:10911, its packets
 * `spacingMicros` of capture time after the previous flow's; `write` gets the pcap in pieces.
 */
function generateFlowFlood(flows: number, o: FlowFloodOptions, write: (b: Buffer) => void): number {
  const shape = o.shape ?? 'midway';
  const frameBytes = o.frameBytes ?? 1024 * 1024;
  const spacing = o.spacingMicros ?? 1;
  const buf = Buffer.allocUnsafe(4 * 1024 * 1024);
  let used = 0;
  let total = 0;
  const flush = (): void => {
    if (used > 0) write(buf.subarray(0, used));
    total += used;
    used = 0;
  };
  const header = Buffer.alloc(24);
  header.writeUInt32LE(0xa1b2c3d4, 0);
  header.writeUInt16LE(2, 4);
  header.writeUInt16LE(4, 6);
  header.writeUInt32LE(262144, 16);
  header.writeUInt32LE(1, 20); // Ethernet
  header.copy(buf, 0);
  used = 24;
  // The head of a JSON-serialised frame announcing frameBytes, then the first bytes of its header.
  const payload = Buffer.alloc(12);
  payload.writeInt32BE(frameBytes - 4, 0);
  payload.writeInt32BE(200, 4); // serialize type 0 (JSON), header length 200
  payload.write('{"co', 8, 'latin1');
  const broker = ((10 << 24) | (255 << 16) | 1) >>> 0;
  let usec = 0;
  const packet = (i: number, flags: number, seq: number, data: Buffer | null): void => {
    const len = 54 + (data ? data.length : 0);
    if (used + 16 + len > buf.length) flush();
    const sec = 1_700_000_000 + Math.floor(usec / 1e6);
    buf.writeUInt32LE(sec, used);
    buf.writeUInt32LE(usec % 1e6, used + 4);
    buf.writeUInt32LE(len, used + 8);
    buf.writeUInt32LE(len, used + 12);
    const p = used + 16;
    buf.fill(0, p, p + 54);
    buf.writeUInt16BE(0x0800, p + 12);
    const ip = p + 14;
    buf[ip] = 0x45;
    buf.writeUInt16BE(len - 14, ip + 2);
    buf.writeUInt16BE(0x4000, ip + 6);
    buf[ip + 8] = 64;
    buf[ip + 9] = 6;
    // Client i: 10.0.0.0/10 by the high bits, a port from 1024 by the low 16 (up to 4 M distinct flows).
    buf.writeUInt32BE((((10 << 24) | ((i >>> 16) << 8)) >>> 0) + 0, ip + 12);
    buf.writeUInt32BE(broker, ip + 16);
    const tcp = ip + 20;
    buf.writeUInt16BE(1024 + ((i & 0xffff) % 64512), tcp);
    buf.writeUInt16BE(10911, tcp + 2);
    buf.writeUInt32BE(seq >>> 0, tcp + 4);
    buf.writeUInt32BE(1, tcp + 8);
    buf[tcp + 12] = 0x50;
    buf[tcp + 13] = flags;
    buf.writeUInt16BE(65535, tcp + 14);
    if (data) data.copy(buf, p + 54);
    used += 16 + len;
  };
  for (let i = 0; i < flows; i++) {
    // Spread flows over distinct 4-tuples: i → (10.(i>>16 as two bytes).0, port) keeps every tuple unique.
    const id = Math.floor(i / 64512) * 65536 + (i % 64512);
    if (shape === 'opened') packet(id, 0x02, 999, null); // SYN
    packet(id, 0x18, 1000, payload); // ACK|PSH
    usec += spacing;
  }
  flush();
  return total;
}

/** Runs decode in a child and reads its peak RSS from process.resourceUsage() at exit. */
function runDecode(
  file: string,
  mode: CaptureFlowMode,
  dir: string,
  decodeArgs: string[],
): Promise<{ rssMiB: number; wallMs: number; exitCode: number | null; stderrTail: string[] }> {
  const args = ['decode', file, ...decodeArgs];
  if (mode === 'stats') args.push('--stats');
  else if (mode === 'doctor') args.push('--doctor');
  else if (mode === 'report') args.push('--report', join(dir, 'report.html'));
  const script =
    `const { main } = await import(${JSON.stringify(pathToFileURL(cliMain).href)});` +
    `const code = await main(${JSON.stringify(args)});` +
    `process.stderr.write('\\n@@rss ' + JSON.stringify({ code, maxRssKiB: process.resourceUsage().maxRSS }) + '\\n');` +
    `process.exit(code);`;
  return new Promise((resolveRun, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (s: string) => {
      err += s;
      if (err.length > 1_000_000) err = err.slice(-100_000);
    });
    child.on('error', reject);
    child.on('close', (exitCode) => {
      const wallMs = Math.round(performance.now() - t0);
      const m = /@@rss (\{.*\})/.exec(err);
      const lines = err.split('\n').filter((l) => l !== '' && !l.startsWith('@@rss'));
      const stderrTail = lines.slice(-3);
      if (!m) return resolveRun({ rssMiB: NaN, wallMs, exitCode, stderrTail });
      const r = JSON.parse(m[1]!) as { code: number; maxRssKiB: number };
      resolveRun({ rssMiB: Math.round((r.maxRssKiB / 1024) * 10) / 10, wallMs, exitCode, stderrTail });
    });
  });
}

export async function runCaptureFlowAttack(opts: CaptureFlowAttackOptions = {}): Promise<CaptureFlowAttackResult> {
  const flowsList = opts.flows ?? [200_000, 1_000_000];
  const modes = opts.modes ?? ['frames', 'stats', 'doctor', 'report'];
  const shape = opts.shape ?? 'midway';
  const runs = opts.runs ?? 2;
  const frameBytes = opts.frameBytes ?? 1024 * 1024;
  const baselineFlows = opts.baselineFlows ?? 1000;
  const decodeArgs = opts.decodeArgs ?? [];
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'rocketwire-capture-flows-'));
  const gen = { shape, frameBytes, ...(opts.spacingMicros !== undefined ? { spacingMicros: opts.spacingMicros } : {}) };
  const cases: CaptureFlowCase[] = [];
  try {
    const baseFile = join(dir, `baseline-${baselineFlows}.pcap`);
    writeFlowFloodPcap(baseFile, baselineFlows, gen);
    const baseline = new Map<CaptureFlowMode, number>();
    for (const mode of modes) {
      let max = 0;
      for (let r = 0; r < runs; r++) max = Math.max(max, (await runDecode(baseFile, mode, dir, decodeArgs)).rssMiB);
      baseline.set(mode, max);
    }
    for (const flows of flowsList) {
      const file = join(dir, `flows-${flows}.pcap`);
      writeFlowFloodPcap(file, flows, gen);
      const pcapBytes = statSync(file).size;
      for (const mode of modes) {
        const rssMiB: number[] = [];
        const wallMs: number[] = [];
        let exitCode: number | null = null;
        let stderrTail: string[] = [];
        for (let r = 0; r < runs; r++) {
          const res = await runDecode(file, mode, dir, decodeArgs);
          rssMiB.push(res.rssMiB);
          wallMs.push(res.wallMs);
          exitCode = res.exitCode;
          stderrTail = res.stderrTail;
        }
        cases.push({
          flows,
          mode,
          pcapBytes,
          maxRssMiB: Math.max(...rssMiB),
          rssMiB,
          baselineRssMiB: baseline.get(mode)!,
          wallMs,
          exitCode,
          stderrTail,
        });
      }
      rmSync(file, { force: true });
    }
  } finally {
    if (opts.dir === undefined) rmSync(dir, { recursive: true, force: true });
  }
  return { shape, frameBytes, decodeArgs, baselineFlows, cases };
}

function parseArgs(argv: string[]): CaptureFlowAttackOptions {
  const dash = argv.indexOf('--');
  const own = dash >= 0 ? argv.slice(0, dash) : argv;
  const o: CaptureFlowAttackOptions = {};
  if (dash >= 0) o.decodeArgs = argv.slice(dash + 1);
  for (let i = 0; i < own.length; i += 2) {
    const v = own[i + 1];
    if (v === undefined) throw new Error(`${own[i]} needs a value`);
    switch (own[i]) {
      case '--flows':
        o.flows = v.split(',').map(Number);
        break;
      case '--modes':
        o.modes = v.split(',') as CaptureFlowMode[];
        break;
      case '--shape':
        o.shape = v as CaptureFlowShape;
        break;
      case '--runs':
        o.runs = Number(v);
        break;
      case '--frame-bytes':
        o.frameBytes = Number(v);
        break;
      case '--spacing-us':
        o.spacingMicros = Number(v);
        break;
      case '--baseline-flows':
        o.baselineFlows = Number(v);
        break;
      default:
        throw new Error(`unknown option ${own[i]}`);
    }
  }
  return o;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const result = await runCaptureFlowAttack(parseArgs(process.argv.slice(2)));
  process.stdout.write(JSON.stringify(result, null, 2) + '\n');
}
