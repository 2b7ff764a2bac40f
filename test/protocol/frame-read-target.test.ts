import t from 'tap';
import { createRequest, decodeCommand, encodeCommand, FrameDecoder } from '../../protocol/index.js';

// FrameDecoder.readTarget lets a socket read the rest of a large frame straight into the frame's
// own buffer, so a pull answer of megabytes is not gathered in pieces and copied whole at its end.

const MiB = 1024 * 1024;

function frameOf(bodyBytes: number, opaque: number): Buffer {
  const body = Buffer.alloc(bodyBytes);
  for (let i = 0; i < body.length; i++) body[i] = (i * 7 + opaque) & 0xff;
  return encodeCommand(createRequest(310, { opaque, body }));
}

/**
 * Stands in for a socket reading `stream` at most `readBytes` at a time: each read goes where
 * readTarget says, else into a fresh chunk, and is pushed at once, as ReadSlab does.
 */
function readThrough(dec: FrameDecoder, stream: Buffer, readBytes: number, minBytes: number) {
  const frames: Buffer[] = [];
  const targets: Buffer[] = [];
  let inPlace = 0;
  for (let pos = 0; pos < stream.length; ) {
    const target = dec.readTarget(minBytes);
    const into = target ?? Buffer.alloc(readBytes);
    const n = Math.min(into.length, readBytes, stream.length - pos);
    stream.copy(into, 0, pos, pos + n);
    if (target) {
      targets.push(target);
      inPlace += n;
    }
    dec.push(into.subarray(0, n), (f) => frames.push(f));
    pos += n;
  }
  return { frames, targets, inPlace };
}

t.test('the rest of a large frame is read into the frame handed out, and frames come out exact', async (t) => {
  const stream = Buffer.concat([frameOf(100, 1), frameOf(2 * MiB, 2), frameOf(3000, 3), frameOf(5 * MiB + 17, 4)]);
  const dec = new FrameDecoder();
  const { frames, targets, inPlace } = readThrough(dec, stream, 256 * 1024, 128 * 1024);
  t.equal(frames.length, 4);
  t.same(
    frames.map((f) => decodeCommand(f).opaque),
    [1, 2, 3, 4],
  );
  t.ok(Buffer.concat(frames).equals(stream), 'every byte of the stream, in order');
  t.ok(targets.length > 0, 'reads were made into a frame');
  for (const big of [frames[1]!, frames[3]!]) {
    t.ok(
      targets.some((x) => x.buffer === big.buffer),
      `the ${big.length}-byte frame is the buffer its reads went into`,
    );
  }
  t.ok(inPlace > 0.8 * (7 * MiB), `${inPlace} of ${stream.length} bytes read in place`);
  t.equal(dec.pendingBytes, 0);
  t.equal(dec.bufferedBytes, 0, 'nothing held once the frames are out');
});

t.test('no frame buffer for small frames, nor before an eighth of a frame has arrived', async (t) => {
  const dec = new FrameDecoder();
  const small = frameOf(200 * 1024, 5);
  dec.push(small.subarray(0, 100 * 1024), () => t.fail('not whole yet'));
  t.equal(dec.readTarget(128 * 1024), null, 'less than minBytes still to come');

  const huge = new FrameDecoder();
  const hugeFrame = frameOf(16 * MiB - 4096, 6);
  huge.push(hugeFrame.subarray(0, 1 * MiB), () => t.fail('not whole yet'));
  t.equal(huge.readTarget(128 * 1024), null, '1 MiB of a 16 MiB frame: no 16 MiB buffer');
  t.ok(huge.bufferedBytes <= 2 * MiB, `${huge.bufferedBytes} bytes held for 1 MiB received`);
  huge.push(hugeFrame.subarray(1 * MiB, 2 * MiB), () => t.fail('not whole yet'));
  const into = huge.readTarget(128 * 1024);
  t.ok(into, 'an eighth arrived: the frame gets its buffer');
  t.equal(into!.length, hugeFrame.length - 2 * MiB, 'the rest of the frame');
  t.equal(huge.bufferedBytes, hugeFrame.length);
  t.equal(huge.pendingBytes, 2 * MiB);
  huge.close();
  t.equal(huge.bufferedBytes, 0, 'let go when the stream closes');
  t.equal(huge.readTarget(128 * 1024), null);
});

t.test('chunks pushed from elsewhere after the frame has its buffer are copied into it', async (t) => {
  const frame = frameOf(MiB, 7);
  const dec = new FrameDecoder();
  dec.push(frame.subarray(0, 300 * 1024), () => t.fail('not whole yet'));
  const into = dec.readTarget(64 * 1024);
  t.ok(into);
  const out: Buffer[] = [];
  // bytes from another buffer, split oddly, then the next frame's head in the same chunk
  const next = frameOf(10, 8);
  dec.push(frame.subarray(300 * 1024, 300 * 1024 + 5), (f) => out.push(f));
  dec.push(Buffer.concat([frame.subarray(300 * 1024 + 5), next]), (f) => out.push(f));
  t.equal(out.length, 2);
  t.ok(out[0]!.equals(frame), 'the large frame, exact');
  t.equal(out[0]!.buffer, into!.buffer, 'in its own buffer');
  t.ok(out[1]!.equals(next), 'and the frame after it');
});
