import t, { type Test } from 'tap';
import net from 'node:net';
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { once } from 'node:events';
import v8 from 'node:v8';
import vm from 'node:vm';
import { RequestCode, ResponseCode, createRequest, encodeCommand } from '../../protocol/index.js';
import { startBroker, type EmbeddedBroker } from '../../lib/broker/index.js';
import { ManualClock } from '../../lib/clock.js';
import type { RemotingServer } from '../../lib/remoting/index.js';
import { client, pullRequest, sendRequest } from './helpers.js';
import { passWhen } from '../support/until.js';

// Memory held for hostile clients, over loopback: connections that hold half of a
// 16 MiB frame, connections that ask for 4 MiB messages and never read the answers (their requests
// wait, their sockets stop reading), connections that say nothing. The broker must bound what it
// holds for all of them together, give it back when they close, close the silent ones after the
// idle time, and keep answering a normal client.
//
// Memory is checked as `process.memoryUsage().arrayBuffers` (Buffers live outside the JS heap):
// that is where every byte a connection holds goes, and unlike RSS it does not depend on when the
// allocator returns pages to the system. The bounds are stated in each test.

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;
const MiB = 1024 * 1024;

/** ArrayBuffer bytes alive: V8 frees backing stores by a sweeper that may run after gc() returns. */
async function buffers(): Promise<number> {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((r) => setTimeout(r, 10));
  }
  return process.memoryUsage().arrayBuffers;
}

/** A raw socket to the broker that does whatever the test writes, and reads only when told. */
async function rawSocket(addr: string, read = true): Promise<net.Socket> {
  const [host, port] = addr.split(':') as [string, string];
  const s = net.connect({ host, port: Number(port) });
  s.on('error', () => undefined);
  await once(s, 'connect');
  if (!read) s.pause();
  else s.resume();
  return s;
}

/** The first `have` bytes of a JSON SEND_MESSAGE_V2 frame that announces `size` bytes. */
function halfFrame(size: number, have: number): Buffer {
  const head = encodeCommand(createRequest(RequestCode.SEND_MESSAGE_V2, { extFields: { b: 'T' } }));
  const f = Buffer.alloc(have);
  f.writeInt32BE(size - 4, 0);
  f.writeInt32BE(head.length - 8, 4);
  head.copy(f, 8, 8);
  return f;
}

function server(b: EmbeddedBroker): RemotingServer {
  return b.instances[0]!.server;
}

/** A normal client's small request, answered while the attack goes on. */
async function normalClientIsAnswered(t: Test, b: EmbeddedBroker): Promise<void> {
  const c = client();
  try {
    const route = await c.invoke(
      b.namesrv,
      createRequest(RequestCode.GET_ROUTEINFO_BY_TOPIC, { extFields: { topic: 'TBW102' } }),
    );
    t.equal(route.code, ResponseCode.SUCCESS, 'the name server answers a normal client');
    const sent = await c.invoke(b.broker, sendRequest('Normal', 'small'));
    t.equal(sent.code, ResponseCode.SUCCESS, 'the broker takes a normal send');
  } finally {
    await c.close();
  }
}

t.test('250-style attack: connections holding half of a 16 MiB frame stay under the budget', async (t) => {
  const budget = 16 * MiB;
  const clock = new ManualClock();
  const b = await startBroker({ maxBufferedBytes: budget, clock });
  t.teardown(() => b.close());
  const srv = server(b);
  await normalClientIsAnswered(t, b); // the store's first segment (64 MiB) is in the baseline
  const before = await buffers();
  const n = 40;
  const have = 2 * MiB;
  const attackers: net.Socket[] = [];
  for (let i = 0; i < n; i++) {
    const s = await rawSocket(b.broker);
    s.write(halfFrame(16 * MiB, have));
    attackers.push(s);
  }
  // every connection has either handed all its bytes to the decoder or been paused for room
  await passWhen(
    t,
    () =>
      srv.connections.size === n &&
      [...srv.connections].every((c) => c.stats().bytesIn === have || c.stats().readingPaused),
    'every attacker is buffered or paused',
  );
  const st = srv.bufferStats();
  // a paused connection holds at most its 64 KiB allowance plus what one read added to it
  const bound = budget + n * 512 * 1024;
  t.ok(
    st.bufferedBytes <= bound,
    `broker holds ${(st.bufferedBytes / MiB).toFixed(1)} MiB for ${n} half frames (budget ${budget / MiB} MiB, bound ${bound / MiB} MiB)`,
  );
  t.ok(st.pausedConnections > 0, `${st.pausedConnections} connections wait for room`);
  const grown = (await buffers()) - before;
  t.ok(
    grown < 64 * MiB,
    `buffers grew by ${(grown / MiB).toFixed(1)} MiB (bound 64 MiB; ${n} x 16 MiB = ${n * 16} MiB before the fix)`,
  );
  await normalClientIsAnswered(t, b);

  const gone = attackers.map((s) => once(s, 'close'));
  for (const s of attackers) s.destroy();
  await Promise.all(gone);
  // A paused socket reads nothing, so it cannot see its peer's FIN: the ones that were reading go
  // at once, the paused ones when room frees up or, at the latest, at the idle timeout.
  clock.advance(120_000);
  await new Promise((r) => setImmediate(r));
  clock.advance(1_000);
  await passWhen(t, () => srv.connections.size === 0, 'the broker saw every attacker go');
  t.equal(srv.bufferStats().bufferedBytes, 0, 'nothing is counted for closed connections');
  await new Promise((r) => setImmediate(r));
  const after = (await buffers()) - before;
  t.ok(
    after < 8 * MiB,
    `buffers back within ${(after / MiB).toFixed(1)} MiB of the start once they closed (bound 8 MiB)`,
  );
});

t.test(
  'connections that ask for 4 MiB messages and never read: their requests wait, output bounded per connection and overall, a normal client served, the idle timeout frees them',
  async (t) => {
    const budget = 48 * MiB;
    const perConnection = 8 * MiB;
    const clock = new ManualClock();
    const b = await startBroker({
      maxBufferedBytes: budget,
      maxOutputBytesPerConnection: perConnection,
      maxMessageSize: 5 * MiB,
      clock,
    });
    t.teardown(() => b.close());
    const srv = server(b);
    const c = client();
    t.teardown(() => c.close());
    const sent = await c.invoke(b.broker, sendRequest('Big', Buffer.alloc(4 * MiB, 0x61)));
    t.equal(sent.code, ResponseCode.SUCCESS, 'a 4 MiB message stored');
    const before = await buffers();

    const n = 8;
    const per = 17;
    const view = encodeCommand(createRequest(RequestCode.VIEW_MESSAGE_BY_ID, { extFields: { offset: '0' } }));
    const attackers: net.Socket[] = [];
    for (let i = 0; i < n; i++) {
      const s = await rawSocket(b.broker, false);
      s.write(Buffer.concat(Array.from({ length: per }, () => view)));
      attackers.push(s);
    }
    const attackConns = () => [...srv.connections].filter((x) => x.stats().framesIn === per);
    // every request is answered, waits in the connection's outbound queue, or is held
    await passWhen(
      t,
      () =>
        attackConns().length === n &&
        attackConns().every((x) => {
          const st = x.stats();
          return st.framesOut + st.queuedFrames + st.heldRequests === per;
        }),
      'every request of every attacker answered or held',
    );
    const st = srv.bufferStats();
    t.ok(
      st.bufferedBytes <= budget,
      `broker holds ${(st.bufferedBytes / MiB).toFixed(1)} MiB of output for ${n} x ${per} x 4 MiB asked (budget ${budget / MiB} MiB)`,
    );
    t.ok(
      st.heldRequests > 0 && st.outputPauses > 0,
      `${st.heldRequests} requests held, ${st.outputPauses} output pauses`,
    );
    t.ok(
      st.heldRequestBytes <= n * per * view.length,
      `${st.heldRequestBytes} bytes of requests held (at most what was read: ${n * per * view.length})`,
    );
    // the server-wide output half (24 MiB, 7/8 of it for big answers) cannot take 8 x 8 MiB
    t.ok(st.busyAnswers > 0, `${st.busyAnswers} requests answered SYSTEM_BUSY past the server-wide half`);
    for (const x of attackConns()) {
      const xs = x.stats();
      t.ok(
        xs.bufferedOutputBytes <= perConnection + 4 * MiB + 1024,
        `one connection holds ${(xs.bufferedOutputBytes / MiB).toFixed(1)} MiB: at most its bound and one answer`,
      );
      // a connection with held requests reads nothing more
      if (xs.heldRequests > 0) t.ok(xs.readingPaused, 'reading paused while its requests are held');
    }
    const grown = (await buffers()) - before;
    t.ok(
      grown < 96 * MiB,
      `buffers grew by ${(grown / MiB).toFixed(1)} MiB (bound 96 MiB; ${n * per * 4} MiB if every answer were buffered)`,
    );
    await normalClientIsAnswered(t, b);

    // a reading client gets the message (or SYSTEM_BUSY while the half is full)
    const reader = await rawSocket(b.broker);
    const answers: Buffer[] = [];
    reader.on('data', (d: Buffer) => answers.push(d));
    reader.write(view);
    await passWhen(
      t,
      () =>
        Buffer.concat(answers).length >= 8 &&
        Buffer.concat(answers).readInt32BE(0) + 4 <= Buffer.concat(answers).length,
      'a reader gets an answer',
    );
    reader.destroy();

    // the attackers neither read nor close: the idle timeout (120 s on the broker's clock) frees
    // them (a paused socket does not see the broker's FIN either, so this side waits on the broker)
    const attacked = attackConns();
    clock.advance(120_000);
    await new Promise((r) => setImmediate(r));
    clock.advance(1_000);
    await passWhen(t, () => attacked.every((x) => x.closed), 'the broker closed every attacker');
    for (const s of attackers) s.destroy();
    const end = srv.bufferStats();
    t.ok(end.bufferedBytes < 64 * 1024, 'their output is no longer counted');
    t.equal(end.heldRequests, 0, 'their held requests are dropped');
    t.equal(end.heldRequestBytes, 0);
    const after = (await buffers()) - before;
    t.ok(
      after < 16 * MiB,
      `buffers back within ${(after / MiB).toFixed(1)} MiB of the start once they closed (bound 16 MiB)`,
    );
  },
);

t.test(
  'long-polled pulls woken together on a connection that never reads: answers up to twice its bound, SYSTEM_BUSY past it',
  async (t) => {
    const perConnection = 2 * MiB;
    const b = await startBroker({ maxOutputBytesPerConnection: perConnection, maxMessageSize: 2 * MiB });
    t.teardown(() => b.close());
    const srv = server(b);
    const c = client();
    t.teardown(() => c.close());
    t.equal((await c.invoke(b.broker, sendRequest('Parked', 'first', { queueId: 0 }))).code, ResponseCode.SUCCESS);
    // 40 pulls of queue 0 past its only message: each is parked (FLAG_SUBSCRIPTION | FLAG_SUSPEND)
    const n = 40;
    const s = await rawSocket(b.broker, false);
    const frames: Buffer[] = [];
    for (let i = 1; i <= n; i++) {
      const pull = pullRequest('Parked', { queueId: 0, offset: 1, sysFlag: 6, suspendMs: 60_000 });
      pull.opaque = i;
      frames.push(encodeCommand(pull));
    }
    s.write(Buffer.concat(frames));
    const hold = b.instances[0]!.pullHold;
    await passWhen(t, () => hold.size === n, 'every pull parked');
    // one 1 MiB message wakes them all at once: each answer is that message
    t.equal(
      (await c.invoke(b.broker, sendRequest('Parked', Buffer.alloc(MiB, 0x63), { queueId: 0 }))).code,
      ResponseCode.SUCCESS,
    );
    const conn = [...srv.connections].find((x) => x.stats().framesIn === n)!;
    await passWhen(t, () => conn.stats().framesOut + conn.stats().queuedFrames === n, 'every woken pull answered');
    const st = conn.stats();
    // the kernel takes some of it meanwhile: the server's peak says what was held at most
    const peak = srv.bufferStats().peakBufferedBytes;
    t.ok(
      peak <= 2 * perConnection,
      `at most ${(peak / MiB).toFixed(1)} MiB held (twice its bound: ${(2 * perConnection) / MiB} MiB; ${n} MiB asked)`,
    );
    t.ok(st.busyAnswers > 0 && st.busyAnswers < n, `${st.busyAnswers} of ${n} answered SYSTEM_BUSY, the others served`);
    await normalClientIsAnswered(t, b);
    s.destroy();
  },
);

t.test(
  "past the server-wide output half: SYSTEM_BUSY with Java's overload remark, answers keep their opaques",
  async (t) => {
    // 16 MiB: 8 MiB of output for all connections, 7 MiB of it for big answers; the per-connection
    // bound (16 MiB by default) is not what refuses here
    const b = await startBroker({ maxBufferedBytes: 16 * MiB, maxMessageSize: 5 * MiB });
    t.teardown(() => b.close());
    const c = client();
    t.teardown(() => c.close());
    t.equal((await c.invoke(b.broker, sendRequest('Big', Buffer.alloc(3 * MiB, 0x62)))).code, ResponseCode.SUCCESS);
    const s = await rawSocket(b.broker, false);
    const frames: Buffer[] = [];
    for (let i = 1; i <= 6; i++)
      frames.push(
        encodeCommand(createRequest(RequestCode.VIEW_MESSAGE_BY_ID, { opaque: i, extFields: { offset: '0' } })),
      );
    s.write(Buffer.concat(frames));
    const srv = server(b);
    await passWhen(
      t,
      () =>
        [...srv.connections].some(
          (x) => x.stats().framesIn === 6 && x.stats().framesOut + x.stats().queuedFrames === 6,
        ),
      'all six answered',
    );
    // now read everything
    const { FrameDecoder, decodeCommand } = await import('../../protocol/index.js');
    const dec = new FrameDecoder();
    const got: { opaque: number; code: number; remark: string | null; body: number }[] = [];
    s.on('data', (d: Buffer) =>
      dec.push(d, (f) => {
        const cmd = decodeCommand(f);
        got.push({ opaque: cmd.opaque, code: cmd.code, remark: cmd.remark, body: cmd.body?.length ?? 0 });
      }),
    );
    s.resume();
    await passWhen(t, () => got.length === 6, 'six answers read');
    s.destroy();
    t.same(got.map((g) => g.opaque).sort(), [1, 2, 3, 4, 5, 6]);
    const busy = got.filter((g) => g.code === ResponseCode.SYSTEM_BUSY);
    t.ok(busy.length > 0 && busy.length < 6, `${busy.length} of 6 refused, the others served`);
    t.ok(
      busy.every((g) => g.remark === '[OVERLOAD]system busy, start flow control for a while'),
      "Java's remark",
    );
    t.ok(
      got.filter((g) => g.code === ResponseCode.SUCCESS).every((g) => g.body > 3 * MiB),
      'the served ones carry the message',
    );
    t.equal(srv.bufferStats().heldRequests, 0, 'none was held: the connection stayed under its own bound');
  },
);

t.test('idle connections are closed after 120 s on the broker clock (name server and broker)', async (t) => {
  const clock = new ManualClock();
  const b = await startBroker({ clock });
  t.teardown(() => b.close());
  const half = await rawSocket(b.broker);
  half.write(halfFrame(16 * MiB, 100));
  const silent = await rawSocket(b.namesrv);
  const halfClosed = once(half, 'close');
  const silentClosed = once(silent, 'close');
  let closed = 0;
  void halfClosed.then(() => closed++);
  void silentClosed.then(() => closed++);
  await passWhen(
    t,
    () => server(b).connections.size === 1 && b.nameServer.server.connections.size === 1,
    'both accepted',
  );
  const turn = () => new Promise((r) => setImmediate(r));
  clock.advance(119_999);
  await turn();
  await turn();
  t.equal(closed, 0, 'open at 119.999 s');
  t.equal(server(b).connections.size, 1);
  clock.advance(1);
  await turn();
  clock.advance(1_000);
  await Promise.all([halfClosed, silentClosed]);
  t.equal(closed, 2, 'both closed once idle for 120 s (and a second look 1 s later)');
  await passWhen(t, () => server(b).connections.size === 0, 'the broker forgot the connection');
  t.equal(server(b).bufferStats().bufferedBytes, 0, 'its half frame is no longer counted');
});

t.test('a connection that talks stays open; the idle time is configurable and 0 means never', async (t) => {
  const clock = new ManualClock();
  const b = await startBroker({ clock, idleTimeoutMs: 5_000 });
  t.teardown(() => b.close());
  const c = client();
  t.teardown(() => c.close());
  const s = await rawSocket(b.broker);
  const closedAt: number[] = [];
  s.on('close', () => closedAt.push(clock.now()));
  const turn = () => new Promise((r) => setImmediate(r));
  const ping = encodeCommand(createRequest(9999));
  for (let i = 0; i < 4; i++) {
    clock.advance(4_000);
    s.write(ping);
    await passWhen(
      t,
      () => [...server(b).connections].some((x) => x.stats().framesIn === i + 1),
      `request ${i + 1} read`,
    );
  }
  t.equal(closedAt.length, 0, '16 s of clock with a request every 4 s: still open');
  clock.advance(5_000);
  await turn();
  clock.advance(1_000);
  await once(s, 'close');
  t.equal(closedAt.length, 1, 'closed after 5 s of silence');

  const never = await startBroker({ clock, idleTimeoutMs: 0 });
  t.teardown(() => never.close());
  const q = await rawSocket(never.broker);
  await passWhen(t, () => server(never).connections.size === 1, 'accepted');
  clock.advance(3600_000);
  await turn();
  clock.advance(3600_000);
  await turn();
  t.equal(server(never).connections.size, 1, 'idleTimeoutMs 0: open after two hours of silence');
  q.destroy();
});

t.test('startBroker refuses a negative idle time', async (t) => {
  await t.rejects(startBroker({ idleTimeoutMs: -1 }), { name: 'BrokerOptionError', option: 'idleTimeoutMs' });
});

const bin = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../bin/rocketwire.js');

t.test('rocketwire broker --idle-timeout S closes a silent connection; a bad value is one line, exit 2', async (t) => {
  const child = spawn(
    process.execPath,
    [bin, 'broker', '--namesrv-port', '0', '--broker-port', '0', '--idle-timeout', '1'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  t.teardown(() => child.kill('SIGKILL'));
  const [line] = (await once(child.stdout!, 'data')) as [Buffer];
  const ready = JSON.parse(line.toString().split('\n')[0]!) as { broker: string };
  const s = await rawSocket(ready.broker);
  s.write(halfFrame(16 * MiB, 1000));
  await once(s, 'close');
  t.pass('the broker closed the connection holding a half frame after 1 s of silence');
  child.kill('SIGTERM');

  const bad = spawn(
    process.execPath,
    [bin, 'broker', '--namesrv-port', '0', '--broker-port', '0', '--idle-timeout', '-3'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let err = '';
  bad.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const [code] = (await once(bad, 'exit')) as [number];
  t.equal(code, 2);
  t.equal(err.trimEnd().split('\n').length, 1, 'one line');
  t.match(err, /idle-timeout/);
});
