import t, { type Test } from 'tap';
import { once } from '../../lib/emitter.js';
import net from 'node:net';
import {
  FrameDecoder,
  ResponseCode,
  createRequest,
  createResponse,
  decodeCommand,
  encodeCommand,
} from '../../protocol/index.js';
import { ManualClock } from '../../lib/clock.js';
import { RemotingClient, RemotingServer } from '../../lib/remoting/index.js';
import { BufferBudget } from '../../lib/remoting/buffer-budget.js';
import { BudgetShare } from '../../lib/remoting/budget-share.js';
import type { OutboundQueue } from '../../lib/remoting/outbound-queue.js';
import { passWhen } from '../support/until.js';

// The remoting side of a broker's memory bound: what a server holds for its connections is counted and
// bounded, given back when a connection closes, and idle connections close on the injected clock.

const MiB = 1024 * 1024;
const turn = (): Promise<void> => new Promise((r) => setImmediate(r));

async function startServer(t: Test, options?: ConstructorParameters<typeof RemotingServer>[0]) {
  const server = new RemotingServer(options);
  const { port } = await server.listen(0, '127.0.0.1');
  t.teardown(() => server.close());
  return { server, addr: `127.0.0.1:${port}`, port };
}

async function raw(port: number): Promise<net.Socket> {
  const s = net.connect({ host: '127.0.0.1', port });
  s.on('error', () => undefined);
  await once(s, 'connect');
  return s;
}

function headOf(size: number, have: number): Buffer {
  const h = encodeCommand(createRequest(310));
  const f = Buffer.alloc(have);
  f.writeInt32BE(size - 4, 0);
  f.writeInt32BE(h.length - 8, 4);
  h.copy(f, 8, 8);
  return f;
}

t.test('a partial frame is counted while held and given back when the connection closes', async (t) => {
  const { server, port } = await startServer(t);
  const s = await raw(port);
  s.write(headOf(8 * MiB, 300_000));
  await passWhen(t, () => [...server.connections].some((c) => c.stats().bytesIn === 300_000), 'bytes read');
  const conn = [...server.connections][0]!;
  t.ok(
    conn.stats().bufferedInputBytes >= 300_000 && conn.stats().bufferedInputBytes < 1 * MiB,
    `${conn.stats().bufferedInputBytes} bytes held for 300 000 of 8 MiB`,
  );
  t.equal(server.bufferStats().inputBytes, conn.stats().bufferedInputBytes, 'counted in the server budget');
  s.destroy();
  await once(conn, 'close');
  t.equal(conn.stats().bufferedInputBytes, 0, 'the closed connection holds nothing, whoever keeps a reference to it');
  t.same(
    { ...server.bufferStats(), peakBufferedBytes: 0, pauses: 0 },
    {
      bufferedBytes: 0,
      inputBytes: 0,
      outputBytes: 0,
      maxBufferedBytes: 256 * MiB,
      peakBufferedBytes: 0,
      pausedConnections: 0,
      pauses: 0,
      busyAnswers: 0,
      outputPauses: 0,
      heldRequests: 0,
      heldRequestBytes: 0,
    },
  );
});

t.test(
  'past its input half the server stops reading a connection with a partial frame and resumes it when room is made',
  async (t) => {
    const { server, port } = await startServer(t, { maxBufferedBytes: 2 * MiB });
    const first = await raw(port);
    first.write(headOf(4 * MiB, 1_500_000));
    await passWhen(t, () => server.bufferStats().pausedConnections === 1, 'the first is paused past 1 MiB of input');
    const held = server.bufferStats().inputBytes;
    t.ok(held <= 2 * MiB, `${held} bytes held`);
    const second = await raw(port);
    second.write(headOf(4 * MiB, 500_000));
    await passWhen(t, () => server.bufferStats().pausedConnections === 2, 'the second waits too');
    // a request in one piece is still served
    server.registerProcessor(7, (req) => createResponse(req, ResponseCode.SUCCESS));
    const client = new RemotingClient();
    t.teardown(() => client.close());
    t.equal(
      (await client.invoke(`127.0.0.1:${port}`, createRequest(7))).code,
      ResponseCode.SUCCESS,
      'a whole frame needs no room',
    );
    // closing the first makes room: the second reads again (and holds all it was sent). The server
    // closes it (as its idle timeout would): a paused socket reads nothing, so it would not see the
    // peer's FIN.
    const firstConn = [...server.connections].find((c) => c.stats().bytesIn >= 1 * MiB)!;
    firstConn.close();
    first.destroy();
    await passWhen(
      t,
      () => [...server.connections].some((c) => c.stats().bytesIn === 500_000),
      'the second resumed and read everything',
    );
    second.destroy();
  },
);

t.test('idle close runs on the injected clock, for servers and clients', async (t) => {
  const clock = new ManualClock();
  const { server, addr, port } = await startServer(t, { clock, idleTimeoutMs: 60_000 });
  server.registerProcessor(7, (req) => createResponse(req, ResponseCode.SUCCESS));
  const s = await raw(port);
  const closed = once(s, 'close');
  await passWhen(t, () => server.connections.size === 1, 'accepted');
  clock.advance(59_999);
  await turn();
  t.equal(server.connections.size, 1, 'open before 60 s');
  clock.advance(1);
  await turn();
  clock.advance(1000);
  await closed;
  t.pass('the server closed it after 60 s and a second look');

  const client = new RemotingClient({ clock, idleTimeoutMs: 30_000 });
  t.teardown(() => client.close());
  t.equal((await client.invoke(addr, createRequest(7))).code, ResponseCode.SUCCESS);
  t.equal(client.connectionCount(addr), 1);
  clock.advance(30_000);
  await turn();
  clock.advance(1000);
  await passWhen(t, () => client.connectionCount(addr) === 0, 'the client closed its idle connection on its clock');
});

t.test('requests a server sends to a peer that does not read are bounded too: RemotingBackpressureError', async (t) => {
  const { server, port } = await startServer(t, { maxOutputBytesPerConnection: 4 * MiB });
  const s = await raw(port);
  s.pause(); // never reads
  await passWhen(t, () => server.connections.size === 1, 'accepted');
  const conn = [...server.connections][0]!;
  let sent = 0;
  let refused: Error | null = null;
  for (let i = 0; i < 64 && refused === null; i++) {
    sent++;
    // resolves once handed to the socket, stays pending while queued, rejects when refused
    void conn.invokeOneway(createRequest(40, { body: Buffer.alloc(MiB) })).catch((e: Error) => (refused ??= e));
    await turn();
  }
  t.match(refused, { name: 'RemotingBackpressureError', code: 40 });
  t.ok(sent < 64, `${sent} notifications of 1 MiB taken or refused, then stopped`);
  t.ok(
    conn.stats().bufferedOutputBytes <= 4 * MiB + MiB,
    `${conn.stats().bufferedOutputBytes} bytes held for it (bound 4 MiB + one frame)`,
  );
  s.destroy();
});

t.test(
  'a peer slow to read: its requests wait once its output reaches the bound, and every answer comes, in order, none SYSTEM_BUSY',
  async (t) => {
    const bound = 2 * MiB;
    const { server, port } = await startServer(t, { maxOutputBytesPerConnection: bound });
    const answer = Buffer.alloc(MiB, 0x61);
    server.registerProcessor(7, (req) => createResponse(req, ResponseCode.SUCCESS, { body: answer }));
    const s = await raw(port);
    s.pause(); // reads nothing until the server holds requests
    const n = 24;
    const frames: Buffer[] = [];
    for (let i = 1; i <= n; i++) frames.push(encodeCommand(createRequest(7, { opaque: i })));
    s.write(Buffer.concat(frames));
    await passWhen(
      t,
      () => server.connections.size === 1 && [...server.connections][0]!.stats().framesIn === n,
      'read',
    );
    const conn = [...server.connections][0]!;
    await passWhen(t, () => conn.stats().heldRequests > 0, 'requests held');
    const st = conn.stats();
    t.ok(st.readingPaused, 'reading paused while requests are held');
    t.ok(
      st.bufferedOutputBytes <= bound + answer.length + 1024,
      `${st.bufferedOutputBytes} bytes of output held (bound ${bound} + one answer)`,
    );
    t.equal(st.framesOut + st.queuedFrames + st.heldRequests, n, 'every request answered or held, none in between');
    const stats = server.bufferStats();
    t.equal(stats.heldRequests, st.heldRequests, 'held requests counted by the server');
    t.ok(stats.heldRequestBytes <= n * frames[0]!.length, `${stats.heldRequestBytes} bytes of requests held`);
    t.ok(stats.outputPauses >= 1, 'an output pause counted');
    t.equal(stats.busyAnswers, 0);

    // read a little at a time: one read, then a turn of the event loop without reading
    const dec = new FrameDecoder();
    const got: { opaque: number; code: number; body: number }[] = [];
    s.on('data', (d: Buffer) => {
      dec.push(d, (f) => {
        const cmd = decodeCommand(f);
        got.push({ opaque: cmd.opaque, code: cmd.code, body: cmd.body?.length ?? 0 });
      });
      s.pause();
      setImmediate(() => s.resume());
    });
    s.resume();
    await passWhen(t, () => got.length === n, 'every answer read');
    t.same(
      got.map((g) => g.opaque),
      Array.from({ length: n }, (_, i) => i + 1),
      'in the order asked',
    );
    t.ok(
      got.every((g) => g.code === ResponseCode.SUCCESS && g.body === answer.length),
      'each the answer, none SYSTEM_BUSY',
    );
    t.equal(server.bufferStats().busyAnswers, 0);
    await passWhen(t, () => !conn.stats().readingPaused && server.bufferStats().heldRequests === 0, 'reading again');
    // and the connection serves a request as usual afterwards
    s.removeAllListeners('data');
    const more: Buffer[] = [];
    s.on('data', (d: Buffer) => more.push(d));
    s.write(encodeCommand(createRequest(7, { opaque: 99 })));
    await passWhen(t, () => Buffer.concat(more).length >= answer.length, 'one more answer');
    s.destroy();
  },
);

t.test(
  'a socket paused for room and for its held requests reads again only when both are cleared, in either order',
  async (t) => {
    // BudgetShare over stand-ins for the socket, the decoder and the outbound queue
    const budget = new BufferBudget(2 * MiB, MiB); // input half 1 MiB
    const end = (runHeld: () => boolean) => {
      const socket = {
        paused: false,
        pause: () => void (socket.paused = true),
        resume: () => void (socket.paused = false),
      };
      const decoder = { bufferedBytes: 0 };
      const out = { bufferedBytes: 0, waitingForDrain: false };
      const share = new BudgetShare(
        { closed: false },
        budget,
        decoder as unknown as FrameDecoder,
        out as unknown as OutboundQueue,
        socket as unknown as net.Socket,
        'peer',
        runHeld,
      );
      return { socket, decoder, out, share };
    };
    const other = end(() => true);
    for (const roomFirst of [true, false]) {
      let held = 1;
      const a = end(() => held === 0);
      // another connection holds most of the input half; ours holds 200 KiB of a partial frame
      other.decoder.bufferedBytes = 900 * 1024;
      other.share.afterInput();
      a.decoder.bufferedBytes = 200 * 1024;
      a.share.afterInput();
      t.ok(a.socket.paused, 'paused for room');
      a.out.bufferedBytes = MiB;
      a.share.holdReading();
      t.ok(a.share.readingPaused && a.socket.paused, 'and for its held requests');
      if (roomFirst) {
        other.decoder.bufferedBytes = 0;
        other.share.afterInput(); // room is made: the budget resumes us
        t.ok(a.socket.paused, 'room made: still paused, its requests are held');
        held = 0;
        a.out.bufferedBytes = 0;
        a.share.afterOutput();
        t.notOk(a.socket.paused, 'output drained and requests run: reading');
      } else {
        held = 0;
        a.out.bufferedBytes = 0;
        a.share.afterOutput();
        t.ok(a.socket.paused, 'output drained: still paused for room');
        other.decoder.bufferedBytes = 0;
        other.share.afterInput();
        t.notOk(a.socket.paused, 'room made: reading');
      }
      t.notOk(a.share.readingPaused);
      a.decoder.bufferedBytes = 0;
      a.share.release();
    }
    t.same({ input: budget.stats().inputBytes, output: budget.stats().outputBytes }, { input: 0, output: 0 });
  },
);

t.test('output drained to half the bound runs held requests, oldest first, and stops again at the bound', async (t) => {
  const budget = new BufferBudget(64 * MiB, 4 * MiB);
  const socket = {
    paused: false,
    pause: () => void (socket.paused = true),
    resume: () => void (socket.paused = false),
  };
  const out = { bufferedBytes: 4 * MiB, waitingForDrain: false };
  const runs: number[] = [];
  let queue = [1, 2, 3];
  const share = new BudgetShare(
    { closed: false },
    budget,
    { bufferedBytes: 0 } as unknown as FrameDecoder,
    out as unknown as OutboundQueue,
    socket as unknown as net.Socket,
    'peer',
    () => {
      // as RequestDispatch.runHeld: each run request adds a 3 MiB answer; stop at the bound
      while (queue.length > 0 && out.bufferedBytes < 4 * MiB) {
        runs.push(queue.shift()!);
        out.bufferedBytes += 3 * MiB;
      }
      return queue.length === 0;
    },
  );
  share.holdReading();
  out.bufferedBytes = 2 * MiB + 1;
  share.afterOutput();
  t.same(runs, [], 'above half the bound: nothing runs');
  out.bufferedBytes = 2 * MiB;
  share.afterOutput();
  t.same(runs, [1], 'at half: the oldest runs, and its answer takes the output past the bound');
  t.ok(socket.paused, 'still paused');
  out.bufferedBytes = 0;
  share.afterOutput();
  t.same(runs, [1, 2, 3], 'drained: the other two');
  t.notOk(socket.paused, 'none left: reading');
  queue = [];
  share.release();
});

t.test('bad bounds are option errors naming the option', async (t) => {
  t.throws(() => new RemotingServer({ maxBufferedBytes: 0 }), { name: 'OptionError', option: 'maxBufferedBytes' });
  t.throws(() => new RemotingServer({ maxOutputBytesPerConnection: -1 }), {
    name: 'OptionError',
    option: 'maxOutputBytesPerConnection',
  });
  t.throws(() => new RemotingServer({ idleTimeoutMs: -5 }), { name: 'OptionError', option: 'idleTimeoutMs' });
});
