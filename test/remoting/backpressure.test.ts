import t from 'tap';
import { createRequest } from '../../protocol/index.js';
import { RemotingBackpressureError, RemotingConnection } from '../../lib/remoting/index.js';
import { scriptedServer } from './scripted-server.js';

const tick = () => new Promise<void>((r) => setImmediate(r));

t.test('a slow reader: writes wait for drain, the bounded queue overflows with a typed error', async (t) => {
  const srv = await scriptedServer();
  t.teardown(() => srv.close());
  const body = Buffer.alloc(256 * 1024, 7);
  const conn = await RemotingConnection.connect(srv.addr, { maxQueuedBytes: 1024 * 1024, maxQueuedFrames: 1000 });
  t.teardown(() => conn.close());
  const peer = await srv.nextPeer();
  peer.socket.pause(); // the peer stops reading: kernel buffers fill, then the socket stops draining

  let sent = 0;
  let written = 0;
  let overflow: unknown = null;
  const accepted: Promise<void>[] = [];
  for (let i = 0; i < 400 && overflow === null; i++) {
    const p = conn.invokeOneway(createRequest(310, { extFields: { i: String(i) }, body }));
    accepted.push(
      p.then(
        () => void written++,
        (e: unknown) => void (overflow = e),
      ),
    );
    sent++;
    await tick();
  }
  t.type(overflow, RemotingBackpressureError, 'the queue bound was hit before 400 frames of 256 KiB');
  const e = overflow as RemotingBackpressureError;
  t.equal(e.addr, srv.addr);
  t.equal(e.code, 310);
  t.ok(e.queuedBytes + e.frameBytes > 1024 * 1024, 'the refused frame would have passed the byte bound');
  t.match(e.message, srv.addr);
  const stats = conn.stats();
  t.ok(stats.queuedFrames > 0, 'frames wait in our queue instead of piling into the socket');
  t.ok(stats.drainWaits > 0);
  t.ok(written < sent - 1, 'oneway sends still queued have not resolved');
  t.equal(conn.closed, false, 'overflow does not close the connection');

  // a normal call is refused the same way, and leaves nothing in flight
  const callErr = await conn.invoke(createRequest(11, { body })).catch((x: unknown) => x);
  t.type(callErr, RemotingBackpressureError);
  t.equal(conn.inFlight, 0);

  // the reader wakes up: everything queued goes out, in order, intact
  peer.socket.resume();
  await Promise.all(accepted);
  const expected = sent - 1; // the last one overflowed
  t.equal(written, expected);
  const got = await peer.waitFor(expected);
  t.same(
    got.map((r) => Number(r.extFields!.i)),
    Array.from({ length: expected }, (_, i) => i),
  );
  t.ok(got.every((r) => r.body!.length === body.length && r.body![body.length - 1] === 7));
  t.equal(conn.stats().queuedFrames, 0);
  t.equal(conn.stats().queuedBytes, 0);
});

t.test('frames queued when the connection closes fail with RemotingClosedError', async (t) => {
  const srv = await scriptedServer();
  t.teardown(() => srv.close());
  const conn = await RemotingConnection.connect(srv.addr, { maxQueuedBytes: 64 * 1024 * 1024 });
  const peer = await srv.nextPeer();
  peer.socket.pause();
  const body = Buffer.alloc(512 * 1024);
  const results: Promise<unknown>[] = [];
  for (let i = 0; i < 80 && conn.stats().queuedFrames === 0; i++) {
    results.push(conn.invokeOneway(createRequest(310, { body })).catch((e: unknown) => e));
    await tick();
  }
  t.ok(conn.stats().queuedFrames > 0, 'something is queued');
  conn.close();
  const errs = (await Promise.all(results)).filter((x) => x instanceof Error) as Error[];
  t.ok(errs.length > 0);
  t.ok(errs.every((e) => e.name === 'RemotingClosedError'));
});
