/**
 * Capture-decoder benchmark: builds a synthetic pcap (Ethernet/IPv4/TCP, MSS 1448) of many
 * consumer connections, each pulling 32 messages of 1 KiB per round, then measures in the same
 * run, on the same file:
 *   - rocketwire in process (records → TCP reassembly → frames → decoded messages → JSON lines in
 *     the CLI's output buffers, not written anywhere),
 *   - the rocketwire CLI: `rocketwire decode FILE --json > /dev/null` and the text table, with each
 *     `--workers` count of `--workers` (default 1,2: the single-threaded decoder and two workers),
 *   - tshark's plain read `tshark -r FILE > /dev/null` and `tshark -r FILE -T fields -e frame.number`.
 * The ratio tshark time / rocketwire time is what to compare across machines (> 1: we are faster).
 * Warm-up, several rounds, median. The capture is deleted afterwards. JSON on stdout.
 *
 *   node dist/bench/decode/index.js [--mb 100] [--rounds 3] [--flows 64] [--workers 1,2]
 */
import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CaptureDecoder, frameContext, writeFrameJson } from '../../lib/capture/index.js';
import { OutputBuffer } from '../../lib/capture/output-buffer.js';
import {
  createRequest,
  createResponse,
  encodeCommand,
  encodeStoredMessage,
  RequestCode,
  ResponseCode,
} from '../../protocol/index.js';

const args = process.argv.slice(2);
function opt(name: string, dflt: number): number {
  const i = args.indexOf(name);
  return i >= 0 && args[i + 1] !== undefined ? Number(args[i + 1]) : dflt;
}
const TARGET_MB = opt('--mb', 100);
const ROUNDS = opt('--rounds', 3);
const FLOWS = opt('--flows', 64);
const WORKERS = (args.includes('--workers') ? args[args.indexOf('--workers') + 1]! : '1,2').split(',').map(Number);
const MSS = 1448;
const MESSAGES = 32;
const BODY = 1024;

const here = dirname(fileURLToPath(import.meta.url));
const bin = resolve(here, '../../../bin/rocketwire.js');

/** Buffered writer of pcap records into a file descriptor. */
class PcapWriter {
  private buf = Buffer.allocUnsafe(8 * 1024 * 1024);
  private used = 0;
  bytes = 0;
  packets = 0;
  constructor(private readonly fd: number) {
    const h = Buffer.alloc(24);
    h.writeUInt32LE(0xa1b2c3d4, 0);
    h.writeUInt16LE(2, 4);
    h.writeUInt16LE(4, 6);
    h.writeUInt32LE(262144, 16);
    h.writeUInt32LE(1, 20); // Ethernet
    this.put(h);
  }
  private put(b: Buffer): void {
    if (this.used + b.length > this.buf.length) this.flush();
    b.copy(this.buf, this.used);
    this.used += b.length;
    this.bytes += b.length;
  }
  flush(): void {
    if (this.used > 0) writeSync(this.fd, this.buf, 0, this.used);
    this.used = 0;
  }
  /** One Ethernet/IPv4/TCP packet. */
  packet(
    ts: number,
    src: number,
    dst: number,
    sport: number,
    dport: number,
    seq: number,
    ack: number,
    flags: number,
    payload: Buffer,
  ): void {
    const h = Buffer.alloc(16 + 54);
    const sec = Math.floor(ts);
    h.writeUInt32LE(sec, 0);
    h.writeUInt32LE(Math.round((ts - sec) * 1e6), 4);
    h.writeUInt32LE(54 + payload.length, 8);
    h.writeUInt32LE(54 + payload.length, 12);
    h.writeUInt16BE(0x0800, 16 + 12);
    const ip = 16 + 14;
    h[ip] = 0x45;
    h.writeUInt16BE(40 + payload.length, ip + 2);
    h.writeUInt16BE(0x4000, ip + 6);
    h[ip + 8] = 64;
    h[ip + 9] = 6;
    h.writeUInt32BE(src >>> 0, ip + 12);
    h.writeUInt32BE(dst >>> 0, ip + 16);
    const tcp = ip + 20;
    h.writeUInt16BE(sport, tcp);
    h.writeUInt16BE(dport, tcp + 2);
    h.writeUInt32BE(seq >>> 0, tcp + 4);
    h.writeUInt32BE(ack >>> 0, tcp + 8);
    h[tcp + 12] = 0x50;
    h[tcp + 13] = flags;
    h.writeUInt16BE(65535, tcp + 14);
    this.put(h);
    if (payload.length > 0) this.put(payload);
    this.packets++;
  }
}

interface Built {
  file: string;
  bytes: number;
  packets: number;
  frames: number;
  messages: number;
}

function buildCapture(dir: string): Built {
  const file = join(dir, 'decode-bench.pcap');
  const fd = openSync(file, 'w');
  const w = new PcapWriter(fd);
  const broker = (10 << 24) | 1;
  const flows = Array.from({ length: FLOWS }, (_, i) => ({
    ip: (10 << 24) | (1 << 16) | (i + 2),
    port: 40000 + i,
    cseq: (i * 0x9e3779b9) >>> 0, // spread ISNs so some wrap past 2^32
    sseq: (i * 0x7f4a7c15 + 0xfff00000) >>> 0,
    offset: 0,
  }));
  // One pull body per flow, re-used each round with a fresh response header.
  const bodies = flows.map((f, i) =>
    Buffer.concat(
      Array.from({ length: MESSAGES }, (_, m) =>
        encodeStoredMessage({
          topic: `BenchTopic${i % 8}`,
          queueId: i % 4,
          queueOffset: m,
          commitLogOffset: 1_000_000 + m * 1200,
          bornTimestamp: 1_700_000_000_000 + m,
          bornHost: `10.1.0.${i + 2}:${f.port}`,
          storeTimestamp: 1_700_000_000_100 + m,
          storeHost: '10.0.0.1:10911',
          body: Buffer.alloc(BODY, 0x61 + (m % 26)),
          properties: {
            TAGS: 'TagA',
            KEYS: `k${m}`,
            UNIQ_KEY: `7F0000010001${String(i).padStart(4, '0')}${String(m).padStart(16, '0')}`,
          },
        }),
      ),
    ),
  );
  let ts = 1_700_000_000;
  let frames = 0;
  let opaque = 0;
  const target = TARGET_MB * 1024 * 1024;
  const ACKF = 0x10;
  const PSH = 0x08;
  while (w.bytes < target) {
    for (let i = 0; i < flows.length && w.bytes < target; i++) {
      const f = flows[i]!;
      const req = createRequest(RequestCode.PULL_MESSAGE, {
        opaque: ++opaque,
        extFields: {
          consumerGroup: 'bench-group',
          topic: `BenchTopic${i % 8}`,
          queueId: String(i % 4),
          queueOffset: String(f.offset),
          maxMsgNums: '32',
          sysFlag: '3',
          commitOffset: String(f.offset),
          suspendTimeoutMillis: '15000',
          subVersion: '1700000000000',
          expressionType: 'TAG',
        },
      });
      const rq = encodeCommand(req);
      ts += 0.0001;
      w.packet(ts, f.ip, broker, f.port, 10911, f.cseq, f.sseq, ACKF | PSH, rq);
      f.cseq = (f.cseq + rq.length) >>> 0;
      const rsp = encodeCommand(
        createResponse(req, ResponseCode.SUCCESS, {
          remark: 'FOUND',
          extFields: {
            nextBeginOffset: String(f.offset + MESSAGES),
            minOffset: '0',
            maxOffset: String(f.offset + 1000),
            suggestWhichBrokerId: '0',
          },
          body: bodies[i]!,
        }),
      );
      f.offset += MESSAGES;
      ts += 0.0005;
      for (let p = 0; p < rsp.length; p += MSS) {
        const seg = rsp.subarray(p, Math.min(rsp.length, p + MSS));
        w.packet(ts, broker, f.ip, 10911, f.port, f.sseq, f.cseq, ACKF | PSH, seg);
        f.sseq = (f.sseq + seg.length) >>> 0;
        ts += 0.00001;
        // The client acknowledges every second segment, as delayed ACK does.
        if ((p / MSS) % 2 === 1) w.packet(ts, f.ip, broker, f.port, 10911, f.cseq, f.sseq, ACKF, Buffer.alloc(0));
      }
      frames += 2;
    }
  }
  w.flush();
  closeSync(fd);
  return { file, bytes: statSync(file).size, packets: w.packets, frames, messages: (frames / 2) * MESSAGES };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/** rocketwire in process: decode every frame (messages included) into JSON lines as the CLI does, written nowhere. */
function decodeInProcess(file: string): { ms: number; frames: number; outBytes: number } {
  const data = readFileSync(file);
  const t0 = performance.now();
  let frames = 0;
  let outBytes = 0;
  const out = new OutputBuffer();
  const dec = new CaptureDecoder({
    frame: (f) => {
      frames++;
      writeFrameJson(out, f.cmd, frameContext(f));
      if (out.length >= 1024 * 1024) for (const b of out.take()) outBytes += b.length;
    },
    problem: (p) => {
      throw new Error(`unexpected problem: ${p.message}`);
    },
  });
  const CHUNK = 1024 * 1024; // as the CLI reads files
  for (let i = 0; i < data.length; i += CHUNK) dec.push(data.subarray(i, i + CHUNK));
  dec.end();
  for (const b of out.take()) outBytes += b.length;
  return { ms: performance.now() - t0, frames, outBytes };
}

/**
 * CPU time (user + system, ms) of the children this process has waited for, from /proc/self/stat
 * (cutime + cstime, in clock ticks of 10 ms). On a shared machine the wall time of a child says
 * more about the neighbours than about the child; its CPU time does not. null off Linux.
 */
function childrenCpuMs(): number | null {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields[0] is field 3 (state); cutime and cstime are fields 16 and 17.
    return (Number(fields[13]) + Number(fields[14])) * 10;
  } catch {
    return null;
  }
}

interface Timing {
  wallMs: number;
  cpuMs: number | null;
}

function timeCommand(cmd: string, argv: string[]): Timing | null {
  const devnull = openSync('/dev/null', 'w');
  try {
    const c0 = childrenCpuMs();
    const t0 = performance.now();
    const r = spawnSync(cmd, argv, { stdio: ['ignore', devnull, 'pipe'], maxBuffer: 16 * 1024 * 1024 });
    const wallMs = performance.now() - t0;
    const c1 = childrenCpuMs();
    if (r.error || r.status !== 0) {
      process.stderr.write(
        `${cmd} ${argv.join(' ')} failed: ${r.error?.message ?? r.stderr.toString().trim().split('\n').pop()}\n`,
      );
      return null;
    }
    return { wallMs, cpuMs: c0 !== null && c1 !== null ? c1 - c0 : null };
  } finally {
    closeSync(devnull);
  }
}

interface Rate {
  medianMs: number;
  framesPerSec: number;
  packetsPerSec: number;
  mbPerSec: number;
}

function rate(ms: number, b: Built): Rate {
  return {
    medianMs: Math.round(ms),
    framesPerSec: Math.round(b.frames / (ms / 1000)),
    packetsPerSec: Math.round(b.packets / (ms / 1000)),
    mbPerSec: Math.round((b.bytes / 1048576 / (ms / 1000)) * 10) / 10,
  };
}

/** Wall and CPU rates of a set of command timings (medians). */
function rates(ts: Timing[], b: Built): { wall: Rate; cpu: Rate | null } | null {
  if (ts.length === 0) return null;
  const cpu = ts.every((t) => t.cpuMs !== null) ? median(ts.map((t) => t.cpuMs!)) : null;
  return { wall: rate(median(ts.map((t) => t.wallMs)), b), cpu: cpu !== null ? rate(Math.max(cpu, 1), b) : null };
}

function ratio(
  a: { wall: Rate; cpu: Rate | null } | null,
  b: { wall: Rate; cpu: Rate | null } | null,
): { wall: number; cpu: number | null } | null {
  if (!a || !b) return null;
  const r = (x: number, y: number): number => Math.round((x / y) * 100) / 100;
  return { wall: r(a.wall.medianMs, b.wall.medianMs), cpu: a.cpu && b.cpu ? r(a.cpu.medianMs, b.cpu.medianMs) : null };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'rocketwire-bench-decode-'));
  const keep = args.indexOf('--build-only');
  if (keep >= 0) {
    // For profiling: build the capture, print its path, keep it.
    const b = buildCapture(dir);
    process.stdout.write(JSON.stringify(b) + '\n');
    return;
  }
  try {
    const tb = performance.now();
    const built = buildCapture(dir);
    const buildMs = performance.now() - tb;
    const hasTshark = spawnSync('tshark', ['--version'], { stdio: 'ignore' }).status === 0;

    decodeInProcess(built.file); // warm-up
    const lib: number[] = [];
    let checked = 0;
    for (let i = 0; i < ROUNDS; i++) {
      const r = decodeInProcess(built.file);
      lib.push(r.ms);
      checked = r.frames;
    }
    if (checked !== built.frames) throw new Error(`decoded ${checked} frames, built ${built.frames}`);

    const cliJson = new Map<number, Timing[]>(WORKERS.map((w) => [w, []]));
    const cliText = new Map<number, Timing[]>(WORKERS.map((w) => [w, []]));
    const tsharkPlain: Timing[] = [];
    const tsharkFields: Timing[] = [];
    timeCommand(process.execPath, [bin, 'decode', built.file, '--json']); // warm the page cache
    for (let i = 0; i < ROUNDS; i++) {
      // Each worker count in turn, alternated with tshark, so a neighbour's burst weighs on all alike.
      for (const w of WORKERS) {
        const a = timeCommand(process.execPath, [bin, 'decode', built.file, '--json', '--workers', String(w)]);
        if (a !== null) cliJson.get(w)!.push(a);
        const b = timeCommand(process.execPath, [bin, 'decode', built.file, '--workers', String(w)]);
        if (b !== null) cliText.get(w)!.push(b);
      }
      if (hasTshark) {
        const c = timeCommand('tshark', ['-r', built.file]);
        if (c !== null) tsharkPlain.push(c);
        const d = timeCommand('tshark', ['-r', built.file, '-T', 'fields', '-e', 'frame.number']);
        if (d !== null) tsharkFields.push(d);
      }
    }
    const libMs = median(lib);
    const plain = rates(tsharkPlain, built);
    const fields = rates(tsharkFields, built);
    const byWorkers = Object.fromEntries(
      WORKERS.map((w) => {
        const json = rates(cliJson.get(w)!, built);
        const text = rates(cliText.get(w)!, built);
        return [
          w,
          {
            cliJson: json,
            cliText: text,
            // tshark time / rocketwire time, by wall clock and by CPU time: > 1 means rocketwire is faster.
            tsharkPlainOverCliJson: ratio(plain, json),
            tsharkPlainOverCliText: ratio(plain, text),
            tsharkFieldsOverCliJson: ratio(fields, json),
            // One worker's time / this count's: the scaling.
            scalingJson: ratio(rates(cliJson.get(WORKERS[0]!)!, built), json),
            scalingText: ratio(rates(cliText.get(WORKERS[0]!)!, built), text),
          },
        ];
      }),
    );
    const result = {
      benchmark: 'decode',
      capture: {
        bytes: built.bytes,
        packets: built.packets,
        frames: built.frames,
        messages: built.messages,
        flows: FLOWS,
        mss: MSS,
        buildMs: Math.round(buildMs),
      },
      rounds: ROUNDS,
      rocketwire: { inProcessJson: rate(libMs, built) },
      tshark: hasTshark ? { plainRead: plain, fieldsFrameNumber: fields } : 'tshark not installed',
      // The CLI by `--workers` count: its rates, the ratios to tshark, the scaling from the first count.
      workers: byWorkers,
      loadAverage: (await import('node:os')).loadavg().map((x) => Math.round(x * 10) / 10),
      node: process.version,
    };
    process.stdout.write(JSON.stringify(result, null, 2) + '\n');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
