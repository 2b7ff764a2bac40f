import net from 'node:net';
import t from 'tap';
import { createRequest, createResponse, encodeCommand, type RemotingCommand } from '../../protocol/index.js';
import { RemotingConnection } from '../../lib/remoting/index.js';
import { DIRECT_READ_BYTES, MIN_READ_BYTES, ReadSlab, SLAB_BYTES } from '../../lib/remoting/read-slab.js';
import { scriptedServer } from './scripted-server.js';

// Stands in for the socket: fills what `next` returns with `n` bytes of `fill` and reports it.
function read(slab: ReadSlab, n: number, fill: number): void {
  const buf = slab.next();
  if (buf.length < n) throw new Error(`read of ${n} bytes given ${buf.length}`);
  buf.fill(fill, 0, n);
  slab.onRead(n, buf);
}

t.test('chunks handed out are never written to again, and every read has room', async (t) => {
  const slab = new ReadSlab();
  const chunks: Buffer[] = [];
  slab.attach((c) => chunks.push(c));
  // Reads of every size class, more bytes than several slabs hold.
  const sizes = [
    300,
    70_000,
    5,
    MIN_READ_BYTES,
    1,
    SLAB_BYTES - 1,
    40_000,
    100_000,
    SLAB_BYTES,
    8,
    64_000,
    64_000,
    64_000,
  ];
  for (const [i, n] of sizes.entries()) read(slab, Math.min(n, slab.next().length), i + 1);
  t.equal(chunks.length, sizes.length);
  chunks.forEach((c, i) => {
    t.ok(
      c.every((b) => b === i + 1),
      `chunk ${i} (${c.length} bytes) still holds its own bytes`,
    );
  });
  for (let k = 0; k < 20; k++) t.ok(slab.next().length >= MIN_READ_BYTES, 'a read always gets at least 64 KiB');
  const big = chunks.filter((c) => c.length > 65_536);
  t.ok(big.length >= 3, 'reads larger than the 64 KiB Node gives were possible');
});

t.test('a read goes where the reader asks, and the slab goes on where it was', async (t) => {
  const slab = new ReadSlab();
  const frame = Buffer.alloc(DIRECT_READ_BYTES * 4);
  let want: Buffer | null = null;
  let asked = 0;
  const chunks: Buffer[] = [];
  slab.attach(
    (c) => chunks.push(c),
    (minBytes) => {
      asked = minBytes;
      return want;
    },
  );
  read(slab, 1000, 1);
  want = frame.subarray(1000);
  read(slab, 5000, 2);
  t.equal(asked, DIRECT_READ_BYTES, 'the reader is told the least room worth a read of its own');
  t.equal(chunks[1]!.buffer, frame.buffer, 'the read went into the buffer asked for');
  t.equal(chunks[1]!.byteOffset, frame.byteOffset + 1000);
  want = null;
  read(slab, 10, 3);
  t.equal(chunks[2]!.buffer, chunks[0]!.buffer, 'then back to the same slab');
  t.equal(chunks[2]!.byteOffset, chunks[0]!.byteOffset + 1000, 'right after the last slab read');
  t.ok(chunks[0]!.every((b) => b === 1) && chunks[1]!.every((b) => b === 2), 'earlier chunks untouched');
});

t.test('bytes read before a reader is attached are delivered first, in order', async (t) => {
  const slab = new ReadSlab();
  read(slab, 10, 1);
  read(slab, 20, 2);
  const got: number[][] = [];
  slab.attach((c) => got.push([c.length, c[0]!]));
  read(slab, 30, 3);
  t.same(got, [
    [10, 1],
    [20, 2],
    [30, 3],
  ]);
});

t.test(
  'a client connection reads large responses through the slab and frames straddling slabs are whole',
  async (t) => {
    const srv = await scriptedServer();
    t.teardown(() => srv.close());
    const conn = await RemotingConnection.connect(srv.addr);
    t.teardown(() => conn.close());
    const bodies = [40_000, 300_000, 1, 64 * 1024, 1_000_000, 70_000].map((n, i) => Buffer.alloc(n, i + 1));
    const calls = bodies.map((_, i) => conn.invoke(createRequest(11, { extFields: { i: String(i) } })));
    const peer = await srv.nextPeer();
    const reqs = await peer.waitFor(bodies.length);
    // All answers back to back in one write: the client reads them in slab-sized pieces.
    peer.socket.write(
      Buffer.concat(reqs.map((r) => encodeCommand(createResponse(r, 0, { body: bodies[Number(r.extFields!.i)]! })))),
    );
    const answers = await Promise.all(calls);
    for (const [i, a] of answers.entries())
      t.ok(a.body!.equals(bodies[i]!), `answer ${i}: ${bodies[i]!.length} bytes intact`);
  },
);

t.test('a frame the server sends at once on accept reaches the processors given to connect', async (t) => {
  const srv = net.createServer((s) => s.write(encodeCommand(createRequest(9999, { extFields: { hello: 'early' } }))));
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  t.teardown(() => srv.close());
  let resolveSeen: (v: string | undefined) => void = () => undefined;
  const seen = new Promise<string | undefined>((resolve) => (resolveSeen = resolve));
  // Registered before connect resolves: the frame may be read before the connection object exists.
  const processors = new Map([
    [
      9999,
      (req: RemotingCommand) => {
        resolveSeen(req.extFields?.hello);
        return null;
      },
    ],
  ]);
  const conn = await RemotingConnection.connect(`127.0.0.1:${(srv.address() as net.AddressInfo).port}`, { processors });
  t.teardown(() => conn.close());
  const timer = setTimeout(() => resolveSeen(undefined), 5000);
  t.teardown(() => clearTimeout(timer));
  t.equal(await seen, 'early');
});
