import t, { type Test } from 'tap';
import { decodeCommand, FrameDecoder, ProtocolError } from '../../protocol/index.js';
import { loadVectors, type FrameVector } from './vectors-fixtures.js';

// The streaming splitter against real Java frames: every split point, byte by byte, many frames
// per chunk, views that stay intact after later reads, and hostile length prefixes.

const vectors = loadVectors<FrameVector[]>('5.3.3', 'frames.json').concat(
  loadVectors<FrameVector[]>('4.9.8', 'frames.json'),
);
const frames = vectors.map((v) => Buffer.from(v.hex, 'hex'));
// A stream of a dozen varied frames (JSON and ROCKETMQ, with and without bodies): ~3 KB.
const sample = frames.filter((_, i) => i % 8 === 0 || i === 6 || i === 7);
const stream = Buffer.concat(sample);
const offsets: number[] = [];
sample.reduce((at, f) => {
  offsets.push(at);
  return at + f.length;
}, 0);

function feed(dec: FrameDecoder, chunks: Buffer[]): { frames: Buffer[]; offsets: number[] } {
  const out: Buffer[] = [];
  const at: number[] = [];
  for (const c of chunks)
    dec.push(c, (f, o) => {
      out.push(f);
      at.push(o);
    });
  return { frames: out, offsets: at };
}

function sameFrames(t: Test, got: { frames: Buffer[]; offsets: number[] }, label: string): void {
  t.equal(got.frames.length, sample.length, `${label}: frame count`);
  t.ok(
    got.frames.every((f, i) => f.equals(sample[i]!)),
    `${label}: frames byte-identical`,
  );
  t.same(got.offsets, offsets, `${label}: stream offsets`);
}

t.test('every single split point of a multi-frame stream', async (t) => {
  t.ok(sample.length >= 10 && stream.length > 1000);
  let bad = 0;
  for (let i = 0; i <= stream.length; i++) {
    const dec = new FrameDecoder();
    const got = feed(dec, [Buffer.from(stream.subarray(0, i)), Buffer.from(stream.subarray(i))]);
    if (
      got.frames.length !== sample.length ||
      !got.frames.every((f, k) => f.equals(sample[k]!)) ||
      got.offsets.join() !== offsets.join() ||
      dec.pendingBytes !== 0 ||
      dec.bytesRead !== stream.length
    ) {
      bad++;
      if (bad < 5) t.fail(`split at ${i} went wrong`);
    }
  }
  t.equal(bad, 0, `all ${stream.length + 1} split points give the same frames`);
});

t.test('one byte at a time', async (t) => {
  const dec = new FrameDecoder();
  const chunks: Buffer[] = [];
  for (let i = 0; i < stream.length; i++) chunks.push(Buffer.from(stream.subarray(i, i + 1)));
  sameFrames(t, feed(dec, chunks), 'byte by byte');
  t.equal(dec.pendingBytes, 0);
});

t.test('random chunkings (seeded)', async (t) => {
  let seed = 12345;
  const rnd = (n: number): number => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % n;
  for (let round = 0; round < 200; round++) {
    const chunks: Buffer[] = [];
    for (let p = 0; p < stream.length; ) {
      const n = 1 + rnd(round % 2 ? 16 : 600);
      chunks.push(Buffer.from(stream.subarray(p, p + n)));
      p += n;
    }
    const got = feed(new FrameDecoder(), chunks);
    if (got.frames.length !== sample.length || !got.frames.every((f, i) => f.equals(sample[i]!))) {
      t.fail(`round ${round} (seed 12345)`);
      return;
    }
  }
  t.pass('200 random chunkings give the same frames');
});

t.test('two frames back to back in one chunk are views of that chunk', async (t) => {
  const chunk = Buffer.concat([frames[0]!, frames[1]!]);
  const got = feed(new FrameDecoder(), [chunk]);
  t.equal(got.frames.length, 2);
  t.ok(got.frames[0]!.equals(frames[0]!) && got.frames[1]!.equals(frames[1]!));
  t.same(got.offsets, [0, frames[0]!.length]);
  t.equal(got.frames[0]!.buffer, chunk.buffer, 'no copy for a frame inside the chunk');
  t.equal(got.frames[1]!.byteOffset, chunk.byteOffset + frames[0]!.length);
});

t.test('many frames in one chunk, then a straddling one', async (t) => {
  const many = Buffer.concat(Array.from({ length: 1000 }, (_, i) => frames[i % frames.length]!));
  const dec = new FrameDecoder();
  const head = many.subarray(0, many.length - 5);
  const got = feed(dec, [head, many.subarray(many.length - 5)]);
  t.equal(got.frames.length, 1000);
  t.ok(got.frames.every((f, i) => f.equals(frames[i % frames.length]!)));
  t.ok(
    got.frames.every((f) => decodeCommand(f).code !== undefined),
    'every frame decodes',
  );
  t.equal(dec.bytesRead, many.length);
});

// nats.js's "don't clobber": what was handed out must not change when later bytes arrive.
t.test('views handed out earlier are not clobbered by later pushes', async (t) => {
  const dec = new FrameDecoder();
  const kept: { frame: Buffer; snapshot: string }[] = [];
  let seed = 99;
  const rnd = (n: number): number => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % n;
  const big = Buffer.concat([stream, stream, stream]);
  for (let p = 0; p < big.length; ) {
    const n = 1 + rnd(300);
    // a fresh chunk each time, as a socket delivers them
    dec.push(Buffer.from(big.subarray(p, p + n)), (f) => kept.push({ frame: f, snapshot: f.toString('hex') }));
    p += n;
  }
  t.equal(kept.length, sample.length * 3);
  t.ok(
    kept.every((k) => k.frame.toString('hex') === k.snapshot),
    'every frame still holds its bytes',
  );
  t.ok(kept.every((k, i) => k.frame.equals(sample[i % sample.length]!)));
});

function expectError(
  t: Test,
  bytes: Buffer,
  offset: number,
  pattern: RegExp,
  opts?: { maxFrameLength?: number },
  goodFrames = 0,
): void {
  const dec = new FrameDecoder(opts);
  let err: unknown;
  let seen = 0;
  try {
    dec.push(bytes, () => seen++);
  } catch (e) {
    err = e;
  }
  t.equal(seen, goodFrames, 'frames before the damage are delivered');
  t.ok(err instanceof ProtocolError, `ProtocolError for ${bytes.subarray(0, 8).toString('hex')}`);
  t.equal((err as ProtocolError).offset, offset, 'error offset');
  t.match((err as Error).message, pattern);
  t.equal(dec.failed, err, 'decoder stays failed');
  t.throws(() => dec.push(Buffer.alloc(1), () => {}), ProtocolError, 'later pushes rethrow');
}

function prefix(total: number, info = 0): Buffer {
  const b = Buffer.alloc(8);
  b.writeInt32BE(total | 0, 0);
  b.writeInt32BE(info | 0, 4);
  return b;
}

t.test('hostile length prefixes are rejected with the right offset', async (t) => {
  expectError(t, prefix(0x7fffffff), 0, /exceeds the maximum/);
  expectError(t, prefix(0x80000000), 0, /below the minimum/); // "2 GiB" reads as a negative int32
  expectError(t, prefix(16 * 1024 * 1024 - 3), 0, /exceeds the maximum/); // one over 16 MiB with the prefix
  expectError(t, prefix(3), 0, /below the minimum/);
  expectError(t, prefix(0), 0, /below the minimum/);
  expectError(t, prefix(-1), 0, /below the minimum/);
  expectError(t, prefix(10, 20), 4, /header length 20 exceeds frame length 10/);
  expectError(t, prefix(10, (2 << 24) | 2), 4, /unknown serialize type 2/);
  expectError(t, prefix(10, (0xff << 24) | 2), 4, /unknown serialize type 255/);
  expectError(t, prefix(101), 0, /exceeds the maximum of 100/, { maxFrameLength: 100 });
  // after a good frame the offset counts from the start of the stream
  expectError(
    t,
    Buffer.concat([frames[0]!, prefix(10, (3 << 24) | 2)]),
    frames[0]!.length + 4,
    /serialize type 3/,
    undefined,
    1,
  );
  expectError(t, Buffer.concat([frames[0]!, prefix(0x7fffffff)]), frames[0]!.length, /exceeds/, undefined, 1);
});

t.test('an oversize length is rejected as soon as its 4 bytes arrive', async (t) => {
  for (const total of [0x7fffffff, 0x80000000, 2]) {
    const dec = new FrameDecoder();
    const p = prefix(total);
    dec.push(p.subarray(0, 1), () => {});
    dec.push(p.subarray(1, 3), () => {});
    t.equal(dec.failed, null, 'three bytes are not enough to judge');
    t.throws(() => dec.push(p.subarray(3, 4), () => {}), ProtocolError, `length ${total} refused at byte 4`);
  }
  // a frame of exactly the limit is accepted; the body never needs to arrive for the check
  const dec = new FrameDecoder({ maxFrameLength: 100 });
  dec.push(prefix(96, 0).subarray(0, 4), () => {});
  t.equal(dec.failed, null, 'exactly maxFrameLength is fine');
});

t.test('a frame of exactly maxFrameLength passes, one more byte fails', async (t) => {
  const f = Buffer.alloc(64);
  f.writeInt32BE(60, 0);
  f.writeInt32BE((1 << 24) | 21, 4);
  const got = feed(new FrameDecoder({ maxFrameLength: 64 }), [f]);
  t.equal(got.frames.length, 1);
  expectError(t, f, 0, /exceeds the maximum of 63/, { maxFrameLength: 63 });
  t.throws(() => new FrameDecoder({ maxFrameLength: 7 }), { name: 'OptionError', option: 'maxFrameLength' });
});

t.test('pendingBytes and bytesRead track a partial frame', async (t) => {
  const dec = new FrameDecoder();
  const f = frames[2]!;
  dec.push(f.subarray(0, 3), () => {});
  t.equal(dec.pendingBytes, 3);
  dec.push(f.subarray(3, 20), () => {});
  t.equal(dec.pendingBytes, 20);
  const out: Buffer[] = [];
  dec.push(f.subarray(20), (x) => out.push(x));
  t.equal(dec.pendingBytes, 0);
  t.equal(dec.bytesRead, f.length);
  t.ok(out[0]!.equals(f));
});

t.test('a throwing frame handler fails the decoder instead of desynchronising it', async (t) => {
  const dec = new FrameDecoder();
  const chunk = Buffer.concat([frames[0]!, frames[1]!.subarray(0, 10)]);
  const boom = new TypeError('handler bug');
  t.throws(
    () =>
      dec.push(chunk, () => {
        throw boom;
      }),
    boom,
    'the handler error propagates',
  );
  t.ok(dec.failed instanceof ProtocolError, 'the decoder is failed');
  t.equal(dec.failed!.cause, boom);
  t.equal(dec.failed!.offset, frames[0]!.length, 'where reading stopped');
  t.throws(() => dec.push(frames[1]!.subarray(10), () => t.fail('no frame after a failure')), ProtocolError);
});

interface LimitVector {
  name: string;
  description: string;
  hex: string;
  frames: number;
  channelOpen: boolean;
}

t.test("we drop a connection exactly where Java's NettyDecoder closes the channel", async (t) => {
  for (const version of ['4.9.8', '5.3.3']) {
    const cases = loadVectors<LimitVector[]>(version, 'frame-limits.json');
    t.ok(cases.length >= 10);
    for (const c of cases) {
      const dec = new FrameDecoder();
      let frames = 0;
      let refused = false;
      try {
        dec.push(Buffer.from(c.hex, 'hex'), (f, at) => {
          decodeCommand(f, at);
          frames++;
        });
      } catch (err) {
        t.type(err, ProtocolError, `${version} ${c.name}: ProtocolError`);
        refused = true;
      }
      t.equal(refused, !c.channelOpen, `${version} ${c.name}: ${c.channelOpen ? 'kept' : 'refused'} like Java`);
      t.equal(frames, c.frames, `${version} ${c.name}: frames`);
    }
  }
});
