/**
 * Body compression on send: rocketwire's LZ4 frame encoder against node:zlib (the ZLIB codec, at
 * levels 1, 5 = Java's default and 9) on a 64 KiB JSON-ish body, compressing and inflating; the
 * floor is a memcpy of the same bytes in the same run. Ratio = body / compressed size. Warm-up,
 * several timed rounds, median; CPU time per op beside wall time (steadier on a shared machine).
 *
 *   node dist/bench/codec/compress.js [--rounds N] [--round-ms MS]
 */
import { deflateSync, inflateSync } from 'node:zlib';
import { lz4FrameCompress, lz4FrameDecompress } from '../../protocol/internal.js';
import { jsonBody, numberOption } from './bodies.js';

const ROUNDS = numberOption('--rounds', 7);
const ROUND_MS = numberOption('--round-ms', 150);

let sink = 0;
function measure(fn: () => Buffer): { usPerOp: number; cpuUsPerOp: number } {
  const round = (ms: number): [number, number] => {
    const end = process.hrtime.bigint() + BigInt(ms * 1e6);
    const cpu0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    let ops = 0;
    while (process.hrtime.bigint() < end) {
      sink += fn().length;
      ops++;
    }
    const cpu = process.cpuUsage(cpu0);
    return [Number(process.hrtime.bigint() - t0) / 1e3 / ops, (cpu.user + cpu.system) / ops];
  };
  round(ROUND_MS);
  const rs = Array.from({ length: ROUNDS }, () => round(ROUND_MS));
  const med = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
  return { usPerOp: med(rs.map((r) => r[0])), cpuUsPerOp: med(rs.map((r) => r[1])) };
}

const body = jsonBody(64 * 1024);
const copy = measure(() => Buffer.from(body));
const codecs: Array<[string, (b: Buffer) => Buffer, (c: Buffer) => Buffer]> = [
  ['lz4 (rocketwire)', lz4FrameCompress, (c) => lz4FrameDecompress(c)],
  ['zlib level 1', (b) => deflateSync(b, { level: 1 }), (c) => inflateSync(c)],
  ['zlib level 5', (b) => deflateSync(b, { level: 5 }), (c) => inflateSync(c)],
  ['zlib level 9', (b) => deflateSync(b, { level: 9 }), (c) => inflateSync(c)],
];
const results = codecs.map(([name, enc, dec]) => {
  const packed = enc(body);
  const e = measure(() => enc(body));
  const d = measure(() => dec(packed));
  return {
    name,
    ratio: Math.round((body.length / packed.length) * 100) / 100,
    compressedBytes: packed.length,
    compressCpuUs: Math.round(e.cpuUsPerOp),
    compressMBps: Math.round(body.length / e.usPerOp),
    inflateCpuUs: Math.round(d.cpuUsPerOp),
    inflateMBps: Math.round(body.length / d.usPerOp),
    compressXMemcpy: Math.round(e.cpuUsPerOp / copy.cpuUsPerOp),
  };
});
process.stdout.write(
  `${JSON.stringify({ bodyBytes: body.length, memcpyUs: Math.round(copy.usPerOp * 10) / 10, results, sink: sink > 0 }, null, 1)}\n`,
);
