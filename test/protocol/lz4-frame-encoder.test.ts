// The LZ4 frame encoder: every input round-trips through the frame decoder (which checks the header,
// the block sizes and the content checksum), edge lengths of the block format included; compressible
// input shrinks, incompressible input goes as stored blocks; inputs past 4 MiB take several blocks.
// (That Java's LZ4FrameInputStream reads these frames: test/interop/java-embedded-compress.test.ts.)
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { lz4FrameCompress } from '../../protocol/lz4-frame-encoder.js';
import { lz4FrameDecompress } from '../../protocol/lz4-frame.js';

const sizes = [
  0, 1, 4, 5, 11, 12, 13, 14, 15, 16, 17, 19, 20, 31, 32, 100, 254, 255, 256, 270, 4096, 65_535, 65_536, 70_001,
];
const kinds: Record<string, (n: number) => Buffer> = {
  random: (n) => randomBytes(n),
  zeros: (n) => Buffer.alloc(n),
  text: (n) => Buffer.from('the quick brown fox '.repeat(Math.ceil(n / 20) + 1)).subarray(0, n),
  mixed: (n) => {
    const b = randomBytes(n);
    for (let i = 0; i < n; i += 5) b[i] = b[i % 40]!;
    return b;
  },
  // a long run of literals then a long match: both lengths need extension bytes
  longLiteralsThenMatch: (n) => Buffer.concat([randomBytes(Math.floor(n / 2)), Buffer.alloc(n - Math.floor(n / 2), 7)]),
};

t.test('every input round-trips', async (t) => {
  let n = 0;
  for (const size of sizes) {
    for (const [kind, make] of Object.entries(kinds)) {
      const data = make(size);
      const frame = lz4FrameCompress(data);
      if (!lz4FrameDecompress(frame).equals(data)) t.fail(`${kind} of ${size} bytes`);
      n++;
    }
  }
  t.pass(`${n} inputs`);
});

t.test('the frame: magic, version 01 with independent blocks and content checksum, 4 MiB blocks', async (t) => {
  const f = lz4FrameCompress(Buffer.from('hello'));
  t.equal(f.readUInt32LE(0), 0x184d2204);
  t.equal(f[4], 0x64);
  t.equal(f[5], 0x70);
});

t.test('compressible input shrinks; incompressible input is stored raw (bit 31)', async (t) => {
  const text = Buffer.from(Array.from({ length: 3000 }, (_, i) => `{"id":${i},"status":"PAID"}`).join(','));
  const f = lz4FrameCompress(text);
  t.ok(f.length < text.length / 3, `${text.length} → ${f.length} bytes`);
  const noise = randomBytes(10_000);
  const g = lz4FrameCompress(noise);
  t.equal(g.readUInt32LE(7), (0x80000000 | noise.length) >>> 0, 'a stored block');
  t.equal(g.length, 7 + 4 + noise.length + 4 + 4, 'no bigger than header, size word, data, end mark, checksum');
});

t.test('more than 4 MiB: several independent blocks', async (t) => {
  const big = Buffer.alloc(9 * 1024 * 1024);
  for (let i = 0; i < big.length; i += 4096) big.writeUInt32LE(i, i);
  const f = lz4FrameCompress(big);
  t.ok(f.length < big.length / 10);
  t.ok(lz4FrameDecompress(f, { maxOutputLength: big.length }).equals(big));
});
