import { getEventListeners } from 'node:events';
import t from 'tap';
import {
  ProtocolError,
  RemotingFlag,
  createRequest,
  createResponse,
  encodeCommand,
  type RemotingCommand,
} from '../../protocol/index.js';
import {
  RemotingAbortError,
  RemotingClosedError,
  RemotingConnection,
  RemotingTimeoutError,
} from '../../lib/remoting/index.js';
import { setOpaqueCounterForTest } from '../../lib/remoting/opaque.js';
import { scriptedServer } from './scripted-server.js';

function reply(req: RemotingCommand, text: string): Buffer {
  return encodeCommand(createResponse(req, 0, { remark: text, body: Buffer.from(text) }));
}

t.test('responses that arrive out of order reach the right callers', async (t) => {
  const srv = await scriptedServer();
  t.teardown(() => srv.close());
  const conn = await RemotingConnection.connect(srv.addr);
  t.teardown(() => conn.close());
  const calls = [1, 2, 3].map((i) => conn.invoke(createRequest(34, { extFields: { i: String(i) } })));
  const peer = await srv.nextPeer();
  const reqs = await peer.waitFor(3);
  // answer in reverse order, all in one chunk (many frames in one read)
  peer.socket.write(Buffer.concat([...reqs].reverse().map((r) => reply(r, `answer ${r.extFields!.i}`))));
  const answers = await Promise.all(calls);
  t.same(
    answers.map((a) => a.remark),
    ['answer 1', 'answer 2', 'answer 3'],
  );
  t.same(
    answers.map((a) => a.body!.toString()),
    ['answer 1', 'answer 2', 'answer 3'],
  );
  t.ok(answers.every((a) => (a.flag & RemotingFlag.RESPONSE) !== 0));
  t.equal(conn.inFlight, 0);
});

t.test('a response split into many small chunks is reassembled', async (t) => {
  const srv = await scriptedServer();
  t.teardown(() => srv.close());
  const conn = await RemotingConnection.connect(srv.addr);
  t.teardown(() => conn.close());
  const call = conn.invoke(createRequest(11));
  const peer = await srv.nextPeer();
  const [req] = await peer.waitFor(1);
  const bytes = reply(req!, 'x'.repeat(300));
  // one byte per write, with the socket's Nagle off on our side; the peer may coalesce, which is fine
  for (let i = 0; i < bytes.length; i += 7) {
    peer.socket.write(bytes.subarray(i, i + 7));
    await new Promise((r) => setImmediate(r));
  }
  const res = await call;
  t.equal(res.body!.toString(), 'x'.repeat(300));
});

t.test('a peer that never answers: the call times out with address, opaque and code', async (t) => {
  const srv = await scriptedServer();
  t.teardown(() => srv.close());
  const conn = await RemotingConnection.connect(srv.addr);
  t.teardown(() => conn.close());
  const req = createRequest(105);
  const err = await conn.invoke(req, { timeoutMs: 30 }).then(
    () => null,
    (e: unknown) => e,
  );
  t.type(err, RemotingTimeoutError);
  const e = err as RemotingTimeoutError;
  t.equal(e.addr, srv.addr);
  t.equal(e.code, 105);
  t.equal(e.opaque, req.opaque);
  t.ok(e.elapsedMs >= 30);
  t.match(e.message, srv.addr);
  t.match(e.message, 'GET_ROUTEINFO_BY_TOPIC');
  t.equal(conn.closed, false, 'a timeout does not close the connection');
  t.equal(conn.inFlight, 0);
  // a late answer after the timeout is dropped, and the connection still works
  const peer = await srv.nextPeer();
  const late = await peer.waitFor(1);
  peer.socket.write(reply(late[0]!, 'late'));
  const next = conn.invoke(createRequest(34), { timeoutMs: 2000 });
  const reqs = await peer.waitFor(2);
  peer.socket.write(reply(reqs[1]!, 'ok'));
  t.equal((await next).remark, 'ok');
  t.equal(conn.stats().lateResponses, 1, 'the late answer is known as one');
  t.equal(conn.stats().unmatchedResponses, 0, 'so it does not count towards maxUnmatchedResponses');
  t.equal(conn.stats().timeouts, 1);
});

t.test('calls with different timeouts expire in deadline order under one sweeper', async (t) => {
  const srv = await scriptedServer();
  t.teardown(() => srv.close());
  const conn = await RemotingConnection.connect(srv.addr);
  t.teardown(() => conn.close());
  const order: number[] = [];
  const long = conn.invoke(createRequest(1), { timeoutMs: 120 }).catch(() => order.push(120));
  const short = conn.invoke(createRequest(2), { timeoutMs: 20 }).catch(() => order.push(20));
  await Promise.all([long, short]);
  t.same(order, [20, 120]);
});

t.test('garbage bytes close that connection and fail its calls naming the peer', async (t) => {
  const srv = await scriptedServer();
  t.teardown(() => srv.close());
  const conn = await RemotingConnection.connect(srv.addr);
  const call = conn.invoke(createRequest(10), { timeoutMs: 5000 });
  const closed = new Promise<Error | undefined>((r) => conn.once('close', r));
  const peer = await srv.nextPeer();
  await peer.waitFor(1);
  // a plausible length followed by serialize type 0x7f
  peer.socket.write(Buffer.from('0000001c7f000004deadbeefdeadbeefdeadbeefdeadbeefdeadbeefdeadbeef', 'hex'));
  const err = (await call.catch((e: unknown) => e)) as RemotingClosedError;
  t.type(err, RemotingClosedError);
  t.equal(err.addr, srv.addr);
  t.equal(err.code, 10);
  t.type(err.cause, ProtocolError);
  t.match(err.message, srv.addr);
  t.match(err.message, 'corrupt frame: unknown serialize type 127');
  const reason = await closed;
  t.type(reason, ProtocolError);
  t.equal(conn.closed, true);
});

t.test('a 2 GiB length prefix is rejected as soon as it arrives', async (t) => {
  const srv = await scriptedServer();
  t.teardown(() => srv.close());
  const conn = await RemotingConnection.connect(srv.addr);
  const call = conn.invoke(createRequest(11), { timeoutMs: 5000 });
  const peer = await srv.nextPeer();
  await peer.waitFor(1);
  peer.socket.write(Buffer.from('7fffffff', 'hex')); // only the prefix: no waiting for 2 GiB
  const err = (await call.catch((e: unknown) => e)) as RemotingClosedError;
  t.type(err, RemotingClosedError);
  const pe = err.cause as ProtocolError;
  t.type(pe, ProtocolError);
  t.match(pe.message, 'exceeds the maximum');
});

t.test('the peer closing mid-call fails every in-flight call at once', async (t) => {
  const srv = await scriptedServer();
  t.teardown(() => srv.close());
  const conn = await RemotingConnection.connect(srv.addr);
  const reqs = [createRequest(11), createRequest(14), createRequest(15)];
  const calls = reqs.map((r) =>
    conn.invoke(r, { timeoutMs: 60_000 }).then(
      () => null as unknown as RemotingClosedError,
      (e: unknown) => e as RemotingClosedError,
    ),
  );
  const peer = await srv.nextPeer();
  await peer.waitFor(3);
  peer.socket.destroy();
  const errs = await Promise.all(calls);
  for (const [i, e] of errs.entries()) {
    t.type(e, RemotingClosedError);
    t.equal(e.addr, srv.addr);
    t.equal(e.opaque, reqs[i]!.opaque);
    t.equal(e.code, reqs[i]!.code);
    t.ok(e.elapsedMs < 60_000);
    t.match(e.message, `opaque ${reqs[i]!.opaque}`);
  }
  t.equal(conn.closed, true);
  const after = await conn.invoke(createRequest(11)).catch((e: unknown) => e);
  t.type(after, RemotingClosedError, 'calls on a closed connection fail at once');
});

t.test('an abort signal cancels the call', async (t) => {
  const srv = await scriptedServer();
  t.teardown(() => srv.close());
  const conn = await RemotingConnection.connect(srv.addr);
  t.teardown(() => conn.close());
  const ac = new AbortController();
  const call = conn.invoke(createRequest(11), { timeoutMs: 60_000, signal: ac.signal });
  const peer = await srv.nextPeer();
  await peer.waitFor(1);
  ac.abort(new Error('user gave up'));
  const err = (await call.catch((e: unknown) => e)) as RemotingAbortError;
  t.type(err, RemotingAbortError);
  t.equal((err.cause as Error).message, 'user gave up');
  t.equal(conn.inFlight, 0);
  const pre = new AbortController();
  pre.abort();
  t.type(await conn.invoke(createRequest(11), { signal: pre.signal }).catch((e: unknown) => e), RemotingAbortError);
});

t.test('many calls sharing one abort signal: no listener-leak warning, one abort fails them all', async (t) => {
  const warnings: Error[] = [];
  const onWarning = (w: Error): void => {
    warnings.push(w);
  };
  process.on('warning', onWarning);
  t.teardown(() => process.off('warning', onWarning));
  const srv = await scriptedServer();
  t.teardown(() => srv.close());
  const conn = await RemotingConnection.connect(srv.addr);
  t.teardown(() => conn.close());
  const ac = new AbortController();
  // A consumer's pull service passes one signal to every queue's long poll.
  const calls = Array.from({ length: 20 }, () =>
    conn.invoke(createRequest(11), { timeoutMs: 60_000, signal: ac.signal }),
  );
  const peer = await srv.nextPeer();
  const reqs = await peer.waitFor(20);
  t.equal(getEventListeners(ac.signal, 'abort').length, 1, 'one listener for all the calls of the connection');
  peer.socket.write(Buffer.concat(reqs.slice(0, 5).map((r) => reply(r, 'ok'))));
  t.same(
    (await Promise.all(calls.slice(0, 5))).map((a) => a.remark),
    ['ok', 'ok', 'ok', 'ok', 'ok'],
  );
  ac.abort(new Error('shutdown'));
  const errs = (await Promise.all(calls.slice(5).map((c) => c.catch((e: unknown) => e)))) as RemotingAbortError[];
  t.ok(errs.every((e) => e instanceof RemotingAbortError && (e.cause as Error).message === 'shutdown'));
  t.same(
    errs.map((e) => e.opaque),
    reqs.slice(5).map((r) => r.opaque),
  );
  t.equal(conn.inFlight, 0);
  await new Promise((r) => setImmediate(r));
  t.same(
    warnings.map((w) => w.name),
    [],
    'no MaxListenersExceededWarning',
  );

  const ac2 = new AbortController();
  const one = conn.invoke(createRequest(11), { signal: ac2.signal });
  const req = (await peer.waitFor(21))[20]!;
  peer.socket.write(reply(req, 'done'));
  t.equal((await one).remark, 'done');
  t.equal(getEventListeners(ac2.signal, 'abort').length, 0, 'the listener goes once no call uses the signal');
});

t.test('oneway requests carry flag bit 1 and expect nothing', async (t) => {
  const srv = await scriptedServer();
  t.teardown(() => srv.close());
  const conn = await RemotingConnection.connect(srv.addr);
  t.teardown(() => conn.close());
  await conn.invokeOneway(createRequest(15, { extFields: { a: 'b' } }));
  const peer = await srv.nextPeer();
  const [req] = await peer.waitFor(1);
  t.equal(req!.flag & RemotingFlag.ONEWAY, RemotingFlag.ONEWAY);
  t.equal(conn.inFlight, 0);
  // a 4.9 server may still answer it: the answer is dropped
  peer.socket.write(encodeCommand(createResponse(req!, 3, { remark: 'nope' })));
  const call = conn.invoke(createRequest(34));
  const reqs = await peer.waitFor(2);
  peer.socket.write(reply(reqs[1]!, 'fine'));
  t.equal((await call).remark, 'fine');
  t.equal(conn.stats().unmatchedResponses, 1);
});

t.test('opaques wrap at 2^31 and stay positive', async (t) => {
  const srv = await scriptedServer((req, peer) => peer.socket.write(reply(req, String(req.opaque))));
  t.teardown(() => srv.close());
  const conn = await RemotingConnection.connect(srv.addr);
  t.teardown(() => conn.close());
  setOpaqueCounterForTest(0x7ffffffe);
  const a = await conn.invoke(createRequest(1));
  const b = await conn.invoke(createRequest(1));
  t.equal(a.opaque, 0x7fffffff);
  t.equal(b.opaque, 1);
});

t.test('responses are decoded by their own serialize type byte', async (t) => {
  const srv = await scriptedServer((req, peer) =>
    // a 5.x broker answers in its own type whatever the request used
    peer.socket.write(
      encodeCommand({ ...createResponse(req, 0, { extFields: { k: 'v' } }), serializeType: 'ROCKETMQ' }),
    ),
  );
  t.teardown(() => srv.close());
  const conn = await RemotingConnection.connect(srv.addr);
  t.teardown(() => conn.close());
  const res = await conn.invoke(createRequest(105));
  t.equal(res.serializeType, 'ROCKETMQ');
  t.same(res.extFields, { k: 'v' });
});
