import t from 'tap';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { deflateSync } from 'node:zlib';
import {
  compress,
  compressionSysFlag,
  compressionTypeOf,
  decompress,
  decompressBody,
  InflatedBodyTooLargeError,
  ProtocolError,
  UnsupportedCompressionError,
} from '../../protocol/index.js';
import { crc32, fastCrc32, messageBodyCrc } from '../../protocol/crc32.js';
import { lz4FrameDecompress, lz4FrameStore } from '../../protocol/lz4-frame.js';
import { zstdCompressionAvailable } from '../../protocol/compression-encode.js';
import { xxhash32 } from '../../protocol/xxhash32.js';

// Fixtures made with the lz4 1.9.4 and zstd 1.5.4 command-line tools from the texts below:
//   lz4 small.txt small-default.lz4                          (4 MiB independent blocks, content checksum)
//   lz4 -BD -B4 -BX --no-frame-crc big.txt big-dependent-blockcrc.lz4   (64 KiB linked blocks, block checksums)
//   lz4 -B4 --content-size big.txt big-independent-contentsize.lz4
//   zstd small.txt -o small.zst ; zstd -19 big.txt -o big.zst
const DIR = fileURLToPath(new URL('../../../test/fixtures/compression/', import.meta.url));
const fixture = (name: string): Buffer => readFileSync(DIR + name);

function smallText(): Buffer {
  let s = '';
  for (let i = 0; i < 40; i++) s += 'hello rocketmq ' + i + ' ';
  return Buffer.from(s);
}
function bigText(): Buffer {
  let s = '';
  for (let i = 0; i < 1100; i++)
    s += 'message line ' + i + ': the quick brown fox jumps over the lazy dog ' + ((i * 7919) % 1000) + '\n';
  return Buffer.from(s);
}

t.test('checksums match their published check values', async (t) => {
  t.equal(crc32(Buffer.from('123456789')), 0xcbf43926);
  t.equal(crc32(Buffer.alloc(0)), 0);
  t.equal(xxhash32(Buffer.alloc(0)), 0x02cc5d05);
  t.equal(xxhash32(Buffer.from('abc')), 0x32d153ff);
  const data = bigText();
  for (const n of [1, 7, 8, 9, 63, 1000]) {
    t.equal(crc32(data, 3, 3 + n), crc32(Buffer.from(data.subarray(3, 3 + n))), `crc32 of a ${n}-byte slice`);
    t.equal(fastCrc32(data, 3, 3 + n), crc32(data, 3, 3 + n), `native (when present) and table agree on ${n} bytes`);
    t.equal(messageBodyCrc(data, 3, 3 + n), crc32(data, 3, 3 + n) & 0x7fffffff);
  }
});

t.test('LZ4 frames written by the lz4 CLI decode', async (t) => {
  t.same(lz4FrameDecompress(fixture('small-default.lz4')), smallText());
  t.same(
    lz4FrameDecompress(fixture('big-dependent-blockcrc.lz4')),
    bigText(),
    'linked blocks refer back across blocks',
  );
  t.same(lz4FrameDecompress(fixture('big-independent-contentsize.lz4')), bigText());
  const two = Buffer.concat([fixture('small-default.lz4'), fixture('small-default.lz4')]);
  t.same(lz4FrameDecompress(two), Buffer.concat([smallText(), smallText()]), 'concatenated frames');
  const skippable = Buffer.from('502a4d1804000000deadbeef', 'hex');
  t.same(
    lz4FrameDecompress(Buffer.concat([skippable, fixture('small-default.lz4')])),
    smallText(),
    'skippable frame skipped',
  );
});

t.test('zstd frames written by the zstd CLI decode', async (t) => {
  t.same(decompress(fixture('small.zst'), 'ZSTD'), smallText());
  t.same(decompressBody(fixture('big.zst'), 0x201), bigText());
});

/** A zstd frame of RLE blocks (RFC 8878): `blocks` blocks of `size` copies of `byte`, window 2^windowLog, no content size. */
function zstdRleFrame(blocks: number, size: number, byte: number, windowLog = 17): Buffer {
  const parts = [Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, (windowLog - 10) << 3])];
  for (let i = 0; i < blocks; i++) {
    const h = (size << 3) | (1 << 1) | (i === blocks - 1 ? 1 : 0);
    parts.push(Buffer.from([h & 0xff, (h >> 8) & 0xff, (h >> 16) & 0xff, byte]));
  }
  return Buffer.concat(parts);
}

t.test(
  'a zstd body that would decompress past 64 MiB is refused before it is decoded (a bomb of RLE blocks)',
  async (t) => {
    t.same(decompress(zstdRleFrame(3, 1000, 0x61), 'ZSTD'), Buffer.alloc(3000, 0x61), 'a small RLE frame decodes');
    t.same(
      decompress(zstdRleFrame(512, 128 * 1024, 0x62), 'ZSTD').length,
      64 * 1024 * 1024,
      'exactly 64 MiB is allowed',
    );
    // 2.4 KB that would become 75 MiB
    const bomb = zstdRleFrame(600, 128 * 1024, 0);
    t.ok(bomb.length < 3000);
    t.throws(() => decompress(bomb, 'ZSTD'), {
      name: 'InflatedBodyTooLargeError',
      limit: 64 * 1024 * 1024,
      message: /ZSTD body: .*exceeds the limit of 67108864 bytes/,
    });
    t.throws(() => decompressBody(bomb, 0x201), InflatedBodyTooLargeError, 'through the message path too');
    // two frames of 40 MiB each: each under the limit, together over it
    const two = Buffer.concat([zstdRleFrame(320, 128 * 1024, 1), zstdRleFrame(320, 128 * 1024, 2)]);
    t.throws(() => decompress(two, 'ZSTD'), /exceeds the limit of 67108864 bytes/);
    // a header declaring a 1 GiB window (fzstd would allocate it before decoding a byte)
    t.throws(() => decompress(zstdRleFrame(1, 10, 0, 30), 'ZSTD'), /window \(1073741824 bytes\) exceeds/);
  },
);

t.test('damaged LZ4 frames are ProtocolErrors', async (t) => {
  const good = fixture('small-default.lz4');
  for (let n = 0; n < good.length; n++) {
    t.throws(() => lz4FrameDecompress(good.subarray(0, n)), ProtocolError, `truncated to ${n}`);
  }
  const flipped = Buffer.from(good);
  flipped[good.length - 10] ^= 0x55;
  t.throws(() => lz4FrameDecompress(flipped), ProtocolError);
  const badHeader = Buffer.from(good);
  badHeader[4] ^= 0x01; // dict-id flag: header checksum no longer matches
  t.throws(() => lz4FrameDecompress(badHeader), /checksum|dictionar/);
  t.throws(() => lz4FrameDecompress(Buffer.from('not lz4 at all')), /bad magic/);
  // fuzz: every single-byte change decodes or fails with a ProtocolError
  const big = fixture('big-dependent-blockcrc.lz4');
  for (let i = 0; i < big.length; i += 97) {
    const c = Buffer.from(big);
    c[i] ^= 0xa5;
    try {
      lz4FrameDecompress(c, { verifyChecksum: false });
    } catch (e) {
      if (!(e instanceof ProtocolError)) t.fail(`byte ${i}: ${String(e)}`);
    }
  }
});

t.test('decompress wraps codec failures in ProtocolError with the body offset', async (t) => {
  const e1 = t.throws(() => decompressBody(Buffer.from('xx'), 0x301, 500)) as ProtocolError;
  t.type(e1, ProtocolError);
  t.equal(e1.offset, 500);
  t.throws(() => decompressBody(Buffer.from('xx'), 0x201, 0), ProtocolError);
  const e2 = t.throws(() => decompressBody(Buffer.from('xx'), 0x401, 0)) as UnsupportedCompressionError;
  t.type(e2, UnsupportedCompressionError);
  t.match(e2.codec, /4/);
});

t.test('sysFlag codec bits', async (t) => {
  t.equal(compressionTypeOf(0x001), 'ZLIB', 'type 0 = zlib (before 4.9.4)');
  t.equal(compressionTypeOf(0x301), 'ZLIB');
  t.equal(compressionTypeOf(0x101), 'LZ4');
  t.equal(compressionTypeOf(0x201), 'ZSTD');
  t.equal(compressionTypeOf(0x501), null);
  t.equal(compressionSysFlag('ZLIB'), 0x301);
  t.equal(compressionSysFlag('LZ4'), 0x101);
});

t.test('compress produces what decompress reads', async (t) => {
  const data = bigText();
  t.same(decompress(compress(data, 'ZLIB'), 'ZLIB'), data);
  t.same(compress(data, 'ZLIB'), deflateSync(data, { level: 5 }), 'Java default level 5');
  t.same(decompress(compress(data, 'LZ4'), 'LZ4'), data);
  t.same(lz4FrameDecompress(lz4FrameStore(Buffer.alloc(0))), Buffer.alloc(0));
  if (zstdCompressionAvailable()) t.same(decompress(compress(data, 'ZSTD'), 'ZSTD'), data);
  else t.throws(() => compress(data, 'ZSTD'), UnsupportedCompressionError, 'no zstd in this node:zlib');
});

t.test('a small body in a frame of 4 MiB blocks does not reserve 4 MiB', async (t) => {
  const out = lz4FrameDecompress(fixture('small-default.lz4'));
  t.same(out, smallText());
  t.ok(out.buffer.byteLength < 64 * 1024, `backing store of ${out.buffer.byteLength} bytes`);
});

t.test('a ZLIB body inflates exactly and keeps no more memory than its bytes, compressible or not', async (t) => {
  // node:zlib inflates into chunks (sized here from the compressed body) and hands a body that fit
  // in one chunk out as a view of it: a chunk larger than the body would be held by the body.
  let seed = 7;
  const random = (n: number) =>
    Buffer.from(Array.from({ length: n }, () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) & 0xff));
  const text = (n: number) =>
    Buffer.from('{"orderId":"ORD-1","status":"PAID"},'.repeat(Math.ceil(n / 36))).subarray(0, n);
  for (const [name, body] of [
    ['text 5 000 B', text(5000)],
    ['text 1 MiB', text(1024 * 1024)],
    ['random 40 000 B', random(40_000)],
    ['random 1 MiB', random(1024 * 1024)],
    ['random 3 MiB + 7', random(3 * 1024 * 1024 + 7)],
  ] as const) {
    const out = decompress(deflateSync(body), 'ZLIB');
    t.ok(out.equals(body), `${name}: the same bytes`);
    t.ok(
      out.buffer.byteLength <= Math.max(16 * 1024, out.length),
      `${name}: keeps ${out.buffer.byteLength} bytes for a body of ${out.length}`,
    );
  }
  // the limit still holds whatever the chunk
  const big = random(2 * 1024 * 1024);
  t.throws(() => decompress(deflateSync(big), 'ZLIB', 0, 2 * 1024 * 1024 - 1), InflatedBodyTooLargeError);
  t.equal(decompress(deflateSync(big), 'ZLIB', 0, 2 * 1024 * 1024).length, 2 * 1024 * 1024);
});

t.test('every codec stops at the limit it is given and says so with InflatedBodyTooLargeError', async (t) => {
  const mib = Buffer.alloc(1024 * 1024, 0x61);
  const zlib = deflateSync(mib);
  t.equal(decompress(zlib, 'ZLIB', 0, 1024 * 1024).length, 1024 * 1024, 'exactly the limit is allowed');
  t.throws(() => decompress(zlib, 'ZLIB', 100, 1024 * 1024 - 1), {
    name: 'InflatedBodyTooLargeError',
    codec: 'ZLIB',
    limit: 1024 * 1024 - 1,
    offset: 100,
  });
  t.throws(() => decompressBody(zlib, 0x1, 0, 4096), InflatedBodyTooLargeError, 'through the message path');
  const lz4 = lz4FrameStore(mib);
  t.equal(decompress(lz4, 'LZ4', 0, 1024 * 1024).length, 1024 * 1024);
  t.throws(() => decompress(lz4, 'LZ4', 0, 4096), { name: 'InflatedBodyTooLargeError', codec: 'LZ4', limit: 4096 });
  t.throws(() => decompress(zstdRleFrame(8, 1000, 1, 10), 'ZSTD', 0, 7999), {
    name: 'InflatedBodyTooLargeError',
    codec: 'ZSTD',
    limit: 7999,
  });
  t.equal(decompress(zstdRleFrame(8, 1000, 1, 10), 'ZSTD', 0, 8000).length, 8000);
  // a corrupt body stays a plain ProtocolError: only a body over the limit is "too large"
  t.throws(() => decompress(Buffer.from('not zlib'), 'ZLIB', 0, 10), { name: 'ProtocolError' });
});
