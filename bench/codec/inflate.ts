/**
 * Inflating ZLIB bodies: rocketwire's `decompress` (node:zlib with an output chunk sized from the
 * compressed body) against node:zlib's
 * `inflateSync` with its defaults (16 KiB chunks), on JSON bodies of 5 000 B to 4 MiB (bodies.ts) and on
 * the bench's filler (which compresses 400-fold). Reports CPU µs per MiB inflated for both, their
 * ratio, and the bytes each inflated body keeps alive (its ArrayBuffer). Warm-up, several timed
 * rounds alternating the two, medians.
 *
 *   node dist/bench/codec/inflate.js [--rounds N] [--round-ms MS]
 */
import { deflateSync, inflateSync } from 'node:zlib';
import { decompress } from '../../protocol/index.js';
import { jsonBody, numberOption } from './bodies.js';

const ROUNDS = numberOption('--rounds', 7);
const ROUND_MS = numberOption('--round-ms', 150);

/** The bench's body filler (bench/harness/run.ts): one phrase repeated. */
function fillerBody(bytes: number): Buffer {
  const phrase = Buffer.from('rocketwire-bench-');
  const b = Buffer.allocUnsafe(bytes);
  for (let i = 0; i < bytes; i++) b[i] = phrase[i % phrase.length]!;
  return b;
}

let sink = 0;
/** CPU µs per call of each function, rounds alternating between them; medians. */
function measure(fns: Array<() => Buffer>): number[] {
  const round = (fn: () => Buffer, ms: number): number => {
    const end = process.hrtime.bigint() + BigInt(ms * 1e6);
    const cpu0 = process.cpuUsage();
    let ops = 0;
    while (process.hrtime.bigint() < end) {
      sink += fn().length;
      ops++;
    }
    const cpu = process.cpuUsage(cpu0);
    return (cpu.user + cpu.system) / ops;
  };
  for (const fn of fns) round(fn, ROUND_MS);
  const per = fns.map(() => [] as number[]);
  for (let r = 0; r < ROUNDS; r++) {
    for (const [i, fn] of fns.entries()) per[i]!.push(round(fn, ROUND_MS));
  }
  return per.map((xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!);
}

const MIB = 1024 * 1024;
const rows = [];
for (const [kind, make] of [
  ['json', jsonBody],
  ['filler', fillerBody],
] as const) {
  for (const size of [5000, 64 * 1024, MIB, 4 * MIB]) {
    const packed = deflateSync(make(size), { level: 5 });
    const [node, ours] = measure([() => inflateSync(packed), () => decompress(packed, 'ZLIB')]);
    rows.push({
      body: kind,
      bytes: size,
      ratio: Math.round((size / packed.length) * 10) / 10,
      nodeCpuUsPerMib: Math.round((node! * MIB) / size),
      rocketwireCpuUsPerMib: Math.round((ours! * MIB) / size),
      rocketwireOverNode: Math.round((ours! / node!) * 100) / 100,
      nodeHeldBytes: inflateSync(packed).buffer.byteLength,
      rocketwireHeldBytes: decompress(packed, 'ZLIB').buffer.byteLength,
    });
  }
}
process.stdout.write(`${JSON.stringify({ rows, sink: sink > 0 }, null, 1)}\n`);
