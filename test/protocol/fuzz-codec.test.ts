import t from 'tap';
import {
  decodeBatch,
  decodeCommand,
  decodeConsumerListBody,
  decodeConsumerOffsetFile,
  decodeHeartbeatData,
  decodeLockBatchBody,
  decodeLockBatchResponseBody,
  decodeResetOffsetBody,
  decodeTopicRouteData,
  parseFastjson,
  decodeMessages,
  decodeProperties,
  FrameDecoder,
  ProtocolError,
} from '../../protocol/index.js';
import {
  loadVectors,
  VECTOR_VERSIONS,
  type BatchVector,
  type BodyVector,
  type FrameVector,
  type MessageVectors,
} from './vectors-fixtures.js';

// Random mutations and truncations of real Java frames and pull bodies: every decoder either
// succeeds or throws a ProtocolError, never anything else, never hangs, and the frame decoder
// never allocates more than maxFrameLength whatever length a prefix declares.
// Reproduce a failure with ROCKETWIRE_FUZZ_SEED=<seed printed below>.

const SEED = Number(process.env.ROCKETWIRE_FUZZ_SEED ?? 0x5eed2026) >>> 0;
const ROUNDS = Number(process.env.ROCKETWIRE_FUZZ_ROUNDS ?? 3000);
t.comment(`fuzz seed ${SEED} (ROCKETWIRE_FUZZ_SEED), ${ROUNDS} rounds per corpus`);

/** mulberry32: small, fast, good enough to spread mutations; deterministic per seed. */
function prng(seed: number): (n: number) => number {
  let a = seed >>> 0;
  return (n: number): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = a;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return (((x ^ (x >>> 14)) >>> 0) % n) >>> 0;
  };
}

const INTS = [
  0, 1, -1, 3, 4, 7, 8, 21, 0x7f, 0x80, 0xff, 0x7fff, 0x8000, 0xffff, 0x7fffffff, -0x80000000, 0x01000000, 0x00ffffff,
];

function mutate(src: Buffer, rnd: (n: number) => number): Buffer {
  let b = Buffer.from(src);
  const steps = 1 + rnd(4);
  for (let s = 0; s < steps; s++) {
    if (b.length === 0) return b;
    const at = rnd(b.length);
    switch (rnd(8)) {
      case 0: // flip a bit
        b[at] = b[at]! ^ (1 << rnd(8));
        break;
      case 1: // random byte
        b[at] = rnd(256);
        break;
      case 2: // boundary byte
        b[at] = [0, 1, 0x7f, 0x80, 0xff, 0x22, 0x5c, 0x7b][rnd(8)]!;
        break;
      case 3: // boundary int32 over a length-like field
        if (at + 4 <= b.length) b.writeInt32BE(INTS[rnd(INTS.length)]! | 0, at);
        break;
      case 4: // the same near the length fields that matter most
        if (b.length >= 8) b.writeInt32BE((b.readInt32BE(rnd(2) * 4) + rnd(9) - 4) | 0, rnd(2) * 4);
        break;
      case 5: // truncate
        b = b.subarray(0, at);
        break;
      case 6: // delete a run
        b = Buffer.concat([b.subarray(0, at), b.subarray(Math.min(b.length, at + 1 + rnd(16)))]);
        break;
      case 7: // duplicate a run
        b = Buffer.concat([b.subarray(0, at), b.subarray(at, at + 1 + rnd(32)), b.subarray(at)]);
        break;
    }
  }
  return b;
}

/** Runs fn; returns a description of anything thrown that is not a ProtocolError. */
function onlyProtocolErrors(fn: () => void): string | null {
  try {
    fn();
    return null;
  } catch (err) {
    if (err instanceof ProtocolError) return null;
    return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  }
}

const frames: Buffer[] = [];
const bodies: Buffer[] = [];
const batches: Buffer[] = [];
const jsonBodies: Buffer[] = [];
for (const v of VECTOR_VERSIONS) {
  for (const f of loadVectors<FrameVector[]>(v, 'frames.json')) frames.push(Buffer.from(f.hex, 'hex'));
  const [m] = loadVectors<MessageVectors[]>(v, 'messages.json');
  for (const r of m!.records) bodies.push(Buffer.from(r.hex, 'hex'));
  bodies.push(Buffer.from(m!.pullBody.hex, 'hex'));
  for (const b of loadVectors<BatchVector[]>(v, 'batches.json')) batches.push(Buffer.from(b.hex, 'hex'));
  for (const b of loadVectors<BodyVector[]>(v, 'bodies.json')) jsonBodies.push(Buffer.from(b.hex, 'hex'));
}

/** Largest Buffer allocation made while fn runs (Buffer.alloc / allocUnsafe / allocUnsafeSlow). */
function largestAllocation(fn: () => void): number {
  const B = Buffer as unknown as Record<
    'alloc' | 'allocUnsafe' | 'allocUnsafeSlow',
    (n: number, ...rest: unknown[]) => Buffer
  >;
  const saved = { alloc: B.alloc, allocUnsafe: B.allocUnsafe, allocUnsafeSlow: B.allocUnsafeSlow };
  let max = 0;
  for (const k of ['alloc', 'allocUnsafe', 'allocUnsafeSlow'] as const) {
    const orig = saved[k];
    B[k] = (n: number, ...rest: unknown[]): Buffer => {
      if (n > max) max = n;
      return orig.call(Buffer, n, ...rest);
    };
  }
  try {
    fn();
  } finally {
    Object.assign(B, saved);
  }
  return max;
}

t.test('decodeCommand on mutated Java frames', { timeout: 60_000 }, async (t) => {
  const rnd = prng(SEED);
  const failures: string[] = [];
  let decoded = 0;
  for (let i = 0; i < ROUNDS; i++) {
    const src = frames[rnd(frames.length)]!;
    const m = mutate(src, rnd);
    const bad = onlyProtocolErrors(() => {
      decodeCommand(m);
      decoded++;
    });
    if (bad) failures.push(`round ${i}: ${bad} on ${m.toString('hex').slice(0, 200)}`);
  }
  t.same(failures.slice(0, 5), [], `seed ${SEED}: only ProtocolError escapes decodeCommand`);
  t.ok(decoded > 0 && decoded < ROUNDS, `some mutants still decode (${decoded}), most do not`);
});

t.test('FrameDecoder on mutated streams never allocates beyond maxFrameLength', { timeout: 60_000 }, async (t) => {
  const rnd = prng(SEED ^ 0x9e3779b9);
  const maxFrameLength = 1024;
  const failures: string[] = [];
  let largest = 0;
  let framesOut = 0;
  for (let i = 0; i < ROUNDS; i++) {
    const parts: Buffer[] = [];
    for (let k = 1 + rnd(4); k > 0; k--) parts.push(frames[rnd(frames.length)]!);
    const stream = mutate(Buffer.concat(parts), rnd);
    const dec = new FrameDecoder({ maxFrameLength });
    const size = largestAllocation(() => {
      const bad = onlyProtocolErrors(() => {
        for (let p = 0; p < stream.length; ) {
          const n = 1 + rnd(200);
          dec.push(stream.subarray(p, p + n), (f) => {
            framesOut++;
            if (f.length > maxFrameLength) failures.push(`round ${i}: frame of ${f.length} bytes handed out`);
            const inner = onlyProtocolErrors(() => decodeCommand(f));
            if (inner) failures.push(`round ${i}: decodeCommand: ${inner}`);
          });
          p += n;
        }
      });
      if (bad) failures.push(`round ${i}: push: ${bad}`);
    });
    if (size > largest) largest = size;
  }
  t.same(failures.slice(0, 5), [], `seed ${SEED}: only ProtocolError, frames within the limit`);
  t.ok(largest <= maxFrameLength, `largest allocation ${largest} <= maxFrameLength ${maxFrameLength}`);
  t.ok(framesOut > 0, `${framesOut} frames came out`);
});

t.test('decodeMessages on mutated pull bodies', { timeout: 60_000 }, async (t) => {
  const rnd = prng(SEED ^ 0x85ebca6b);
  const failures: string[] = [];
  let ok = 0;
  for (let i = 0; i < ROUNDS; i++) {
    const src = bodies[rnd(bodies.length)]!;
    const m = mutate(src, rnd);
    let largest = 0;
    const bad = onlyProtocolErrors(() => {
      largest = largestAllocation(() => {
        decodeMessages(m, { decompress: rnd(4) !== 0, verifyCrc: rnd(2) === 0 });
      });
      ok++;
    });
    if (bad) failures.push(`round ${i}: ${bad} on ${m.toString('hex').slice(0, 120)}`);
    // Only an inflated body may be larger than its input; declared lengths never drive allocation.
    if (largest > 64 * 1024) failures.push(`round ${i}: allocated ${largest} bytes for a ${m.length}-byte body`);
  }
  t.same(failures.slice(0, 5), [], `seed ${SEED}: only ProtocolError escapes decodeMessages`);
  t.ok(ok > 0, `${ok} mutants decoded`);
});

t.test('decodeBatch and decodeProperties on mutated input', { timeout: 60_000 }, async (t) => {
  const rnd = prng(SEED ^ 0xc2b2ae35);
  const failures: string[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const m = mutate(batches[rnd(batches.length)]!, rnd);
    const bad = onlyProtocolErrors(() => decodeBatch(m));
    if (bad) failures.push(`round ${i}: decodeBatch: ${bad}`);
    const text = m.toString('utf8');
    const bad2 = onlyProtocolErrors(() => decodeProperties(text));
    if (bad2) failures.push(`round ${i}: decodeProperties: ${bad2}`);
  }
  t.same(failures.slice(0, 5), [], `seed ${SEED}: only ProtocolError escapes`);
});

t.test('decodeMessages on compressed bodies damaged inside the compressed stream', { timeout: 60_000 }, async (t) => {
  const rnd = prng(SEED ^ 0x27d4eb2f);
  // Records whose sysFlag says COMPRESSED, IPv4 hosts: body length at 84, body from 88.
  const compressed = bodies.filter(
    (b) => b.length > 92 && (b.readInt32BE(36) & 0x31) === 0x1 && b.readInt32BE(0) === b.length,
  );
  t.ok(compressed.length >= 4, `${compressed.length} compressed records (zlib, LZ4, ZSTD)`);
  const failures: string[] = [];
  let ok = 0;
  for (let i = 0; i < ROUNDS; i++) {
    const rec = Buffer.from(compressed[rnd(compressed.length)]!);
    const len = rec.readInt32BE(84);
    for (let k = 1 + rnd(3); k > 0; k--) {
      const at = 88 + rnd(len);
      rec[at] = rnd(4) === 0 ? rec[at]! ^ (1 << rnd(8)) : rnd(256);
    }
    const bad = onlyProtocolErrors(() => {
      decodeMessages(rec);
      ok++;
    });
    if (bad) failures.push(`round ${i}: ${bad}`);
  }
  t.same(failures.slice(0, 5), [], `seed ${SEED}: only ProtocolError escapes the decompressors`);
  t.ok(ok < ROUNDS, `${ROUNDS - ok} damaged streams refused`);
});

t.test('JSON body readers on mutated fastjson text', { timeout: 60_000 }, async (t) => {
  const rnd = prng(SEED ^ 0x165667b1);
  const readers: [string, (b: Buffer) => unknown][] = [
    ['parseFastjson', (b) => parseFastjson(b.toString('utf8'))],
    ['HeartbeatData', decodeHeartbeatData],
    ['TopicRouteData', decodeTopicRouteData],
    ['ConsumerListBody', decodeConsumerListBody],
    ['LockBatchBody', decodeLockBatchBody],
    ['LockBatchResponseBody', decodeLockBatchResponseBody],
    ['ResetOffsetBody', decodeResetOffsetBody],
    ['consumerOffset.json', (b) => decodeConsumerOffsetFile(b.toString('utf8'))],
  ];
  const failures: string[] = [];
  let parsed = 0;
  for (let i = 0; i < ROUNDS; i++) {
    const m = mutate(jsonBodies[rnd(jsonBodies.length)]!, rnd);
    for (const [name, read] of readers) {
      const bad = onlyProtocolErrors(() => {
        read(m);
        if (name === 'parseFastjson') parsed++;
      });
      if (bad) failures.push(`round ${i}: ${name}: ${bad} on ${JSON.stringify(m.toString('utf8').slice(0, 120))}`);
    }
  }
  t.same(failures.slice(0, 5), [], `seed ${SEED}: only ProtocolError escapes the body readers`);
  t.ok(parsed > 0 && parsed < ROUNDS, `${parsed} mutants still parse`);
});
