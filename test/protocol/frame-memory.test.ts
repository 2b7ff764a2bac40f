import t from 'tap';
import { createRequest, decodeCommand, encodeCommand, FrameDecoder } from '../../protocol/index.js';

// A frame header announcing 16 MiB must not reserve 16 MiB at once: 250 connections each
// sending the first bytes of such a frame would hold 4 GB. The buffer of a frame that
// straddles chunks must grow with the bytes that arrive.

const MiB = 1024 * 1024;

/** The first `have` bytes of a JSON request frame whose body makes it `size` bytes long. */
function headOfFrame(size: number, have: number): Buffer {
  const header = encodeCommand(createRequest(310));
  const headerLength = header.length - 8;
  const f = Buffer.alloc(have);
  f.writeInt32BE(size - 4, 0);
  f.writeInt32BE(headerLength, 4);
  header.copy(f, 8, 8, Math.min(header.length, have));
  return f;
}

t.test('a 16 MiB frame fed a few bytes holds a few bytes, not 16 MiB', async (t) => {
  const dec = new FrameDecoder();
  dec.push(headOfFrame(16 * MiB, 100), () => t.fail('no frame yet'));
  t.equal(dec.pendingBytes, 100);
  t.ok(dec.bufferedBytes <= 64 * 1024, `buffer of ${dec.bufferedBytes} bytes after 100 bytes of a 16 MiB frame`);

  // the head alone (8 bytes, then the rest): the same
  const byHead = new FrameDecoder();
  const h = headOfFrame(16 * MiB, 300);
  byHead.push(h.subarray(0, 5), () => undefined);
  byHead.push(h.subarray(5), () => undefined);
  t.ok(byHead.bufferedBytes <= 64 * 1024, `buffer of ${byHead.bufferedBytes} bytes after a split head`);
});

t.test('many decoders holding the head of a 16 MiB frame stay within a bound the user can check', async (t) => {
  // 64 decoders x 16 MiB = 1 GiB of ArrayBuffers before the fix; now 64 x 64 KiB = 4 MiB.
  const before = process.memoryUsage().arrayBuffers;
  const decoders: FrameDecoder[] = [];
  for (let i = 0; i < 64; i++) {
    const d = new FrameDecoder();
    d.push(headOfFrame(16 * MiB, 200), () => undefined);
    decoders.push(d);
  }
  const grown = process.memoryUsage().arrayBuffers - before;
  t.ok(grown < 32 * MiB, `64 half-open 16 MiB frames added ${(grown / MiB).toFixed(1)} MiB of buffers (bound 32 MiB)`);
  t.equal(
    decoders.reduce((n, d) => n + d.pendingBytes, 0),
    64 * 200,
  );
});

t.test('the buffer grows with the bytes and the frame comes out whole and exact', async (t) => {
  const body = Buffer.alloc(3 * MiB + 12345);
  for (let i = 0; i < body.length; i++) body[i] = (i * 31) & 0xff;
  const frame = encodeCommand(createRequest(310, { opaque: 42, body }));
  const dec = new FrameDecoder();
  const out: Buffer[] = [];
  let maxRatio = 0;
  // 1000-byte chunks: the buffer never holds much more than twice what arrived (or 64 KiB)
  for (let p = 0; p < frame.length; p += 1000) {
    dec.push(frame.subarray(p, p + 1000), (f) => out.push(f));
    if (dec.pendingBytes > 64 * 1024) maxRatio = Math.max(maxRatio, dec.bufferedBytes / dec.pendingBytes);
  }
  t.ok(maxRatio <= 2, `capacity / received at most ${maxRatio.toFixed(2)}`);
  t.equal(out.length, 1);
  t.equal(out[0]!.length, frame.length, 'handed out at its exact size');
  t.ok(out[0]!.equals(frame), 'byte-identical');
  t.ok(decodeCommand(out[0]!).body!.equals(body));
  t.equal(dec.pendingBytes, 0);
  t.equal(dec.bufferedBytes, 0, 'nothing held once the frame is out');
});

t.test('a frame handed out is not written by the next one (grown buffers are never reused)', async (t) => {
  const a = encodeCommand(createRequest(310, { opaque: 1, body: Buffer.alloc(200_000, 0xaa) }));
  const b = encodeCommand(createRequest(310, { opaque: 2, body: Buffer.alloc(200_000, 0xbb) }));
  const all = Buffer.concat([a, b]);
  const dec = new FrameDecoder();
  const out: Buffer[] = [];
  for (let p = 0; p < all.length; p += 7777) dec.push(Buffer.from(all.subarray(p, p + 7777)), (f) => out.push(f));
  t.equal(out.length, 2);
  t.ok(out[0]!.equals(a) && out[1]!.equals(b));
});

t.test(
  'a frame dribbled a byte at a time, then in big pieces: held bytes track what arrived, and it comes out exact',
  async (t) => {
    // The straddling frame is gathered as views of big pieces and short pieces copied into small
    // staging buffers: one object per byte would cost ~100 bytes of heap per byte received.
    const size = 256 * 1024;
    const frame = headOfFrame(size, size);
    for (let i = 300; i < size; i++) frame[i] = (i * 31) & 0xff;
    const dec = new FrameDecoder();
    const out: Buffer[] = [];
    let worst = 0;
    let pos = 0;
    for (; pos < 64 * 1024; pos++) {
      dec.push(frame.subarray(pos, pos + 1), (f) => out.push(f));
      worst = Math.max(worst, dec.bufferedBytes - (pos + 1));
    }
    for (; pos < size; pos += 5000) {
      dec.push(Buffer.from(frame.subarray(pos, Math.min(size, pos + 5000))), (f) => out.push(f));
      if (out.length === 0) worst = Math.max(worst, dec.bufferedBytes - Math.min(size, pos + 5000));
    }
    t.equal(out.length, 1, 'one frame');
    t.ok(out[0]!.equals(frame), 'byte for byte');
    t.ok(worst <= 16 * 1024, `at most one 16 KiB staging buffer beyond the bytes received (worst ${worst})`);
    t.equal(dec.bufferedBytes, 0, 'nothing held once the frame is out');
  },
);
