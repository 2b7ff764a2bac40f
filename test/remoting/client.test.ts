import t from 'tap';
import net from 'node:net';
import { once } from '../../lib/emitter.js';
import { ResponseCode, createRequest, createResponse } from '../../protocol/index.js';
import {
  RemotingClient,
  RemotingClosedError,
  RemotingConnectError,
  RemotingError,
  RemotingServer,
  type RemotingConnection,
} from '../../lib/remoting/index.js';
import { freePort } from './scripted-server.js';
import { eventually } from '../support/until.js';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function echoServer(): RemotingServer {
  const server = new RemotingServer();
  server.registerProcessor(1, (req, conn) =>
    createResponse(req, ResponseCode.SUCCESS, { remark: conn.remoteAddress, body: req.body }),
  );
  server.registerProcessor(2, () => new Promise<null>(() => undefined)); // never answers
  return server;
}

t.test('connection refused fails fast with RemotingConnectError naming the address, then backs off', async (t) => {
  const port = await freePort();
  const addr = `127.0.0.1:${port}`;
  // long connect/acquire timeouts: the error can only come from the refusal itself
  const client = new RemotingClient({
    connectTimeoutMs: 60_000,
    acquireTimeoutMs: 60_000,
    reconnectBackoffMs: 5_000,
    maxReconnectBackoffMs: 5_000,
  });
  t.teardown(() => client.close());
  const err = await client.invoke(addr, createRequest(1)).catch((e: unknown) => e);
  t.type(err, RemotingConnectError);
  t.equal((err as RemotingConnectError).addr, addr);
  t.match((err as Error).message, addr);
  t.match(((err as Error).cause as Error).message, 'ECONNREFUSED');
  // a second call within the back-off does not try again: it fails at once saying when the next attempt is
  const again = (await client.invoke(addr, createRequest(1)).catch((e: unknown) => e)) as RemotingConnectError;
  t.type(again, RemotingConnectError);
  t.ok(again.retryInMs > 0 && again.retryInMs <= 5_000);
  t.match(again.message, 'next attempt in');
  t.equal(again.cause, (err as Error).cause, 'the cause is the last real failure');
  t.type(await client.invokeOneway(addr, createRequest(1)).catch((e: unknown) => e), RemotingConnectError);
  // many callers during the back-off: still one connect attempt in all
  const errs = await Promise.all(
    Array.from({ length: 20 }, () => client.invoke(addr, createRequest(1)).catch((e: unknown) => e)),
  );
  t.ok(errs.every((e) => e instanceof RemotingConnectError));
  t.equal(client.stats()[addr]!.connectAttempts, 1, 'the dead address was not hammered');
  t.equal(client.stats()[addr]!.consecutiveFailures, 1);
});

t.test(
  'connects lazily, reuses one connection, and reconnects after the server restarts on the same port',
  async (t) => {
    let server = echoServer();
    const { port } = await server.listen();
    const addr = `127.0.0.1:${port}`;
    const client = new RemotingClient({ reconnectBackoffMs: 10, maxReconnectBackoffMs: 40 });
    t.teardown(async () => {
      await client.close();
      await server.close();
    });
    t.equal(server.connections.size, 0, 'no connection before the first call');
    const first = await client.invoke(addr, createRequest(1, { body: Buffer.from('a') }));
    t.equal(first.body!.toString(), 'a');
    await Promise.all([1, 2, 3].map(() => client.invoke(addr, createRequest(1))));
    t.equal(server.connections.size, 1, 'pool size 1: one connection for all calls');
    t.equal(client.connectionCount(addr), 1);

    // a call in flight when the server goes away fails at once with the address, opaque and code
    const req = createRequest(2);
    const inflight = client.invoke(addr, req, { timeoutMs: 60_000 }).catch((e: unknown) => e);
    await sleep(5);
    await server.close();
    const err = (await inflight) as RemotingClosedError;
    t.type(err, RemotingClosedError);
    t.equal(err.addr, addr);
    t.equal(err.opaque, req.opaque);
    t.equal(err.code, 2);

    server = echoServer();
    await server.listen(port);
    const res = await eventually(() => client.invoke(addr, createRequest(1, { body: Buffer.from('b') })));
    t.equal(res.body!.toString(), 'b', 'a new connection was made to the restarted server');
    t.equal(server.connections.size, 1);
  },
);

t.test('a pool of N opens N connections, spreads calls and replaces a broken one', async (t) => {
  const server = echoServer();
  const { port } = await server.listen();
  const addr = `127.0.0.1:${port}`;
  const client = new RemotingClient({ poolSize: 3, reconnectBackoffMs: 10 });
  t.teardown(async () => {
    await client.close();
    await server.close();
  });
  const peers = new Set<string>();
  for (let i = 0; i < 12; i++) peers.add((await client.invoke(addr, createRequest(1))).remark!);
  t.equal(server.connections.size, 3);
  t.equal(peers.size, 3, 'calls go over all three connections');

  const victim = [...server.connections][0] as RemotingConnection;
  const gone = once(victim, 'close');
  victim.close();
  await gone;
  // every later call succeeds: closed connections are dropped on borrow and the pool refills
  for (let i = 0; i < 12; i++) t.equal((await client.invoke(addr, createRequest(1))).code, ResponseCode.SUCCESS);
  await eventually(async () => {
    if (server.connections.size !== 3) throw new Error(`${server.connections.size} connections`);
  });
  t.equal(server.connections.size, 3);
});

t.test('client options are validated with the option named', async (t) => {
  t.throws(() => new RemotingClient({ poolSize: 0 }), /poolSize/);
  t.throws(() => new RemotingClient({ connectTimeoutMs: -1 }), /connectTimeoutMs/);
  t.throws(() => new RemotingClient({ serializeType: 'XML' as 'JSON' }), /serializeType/);
  t.throws(() => new RemotingClient({ acl: { accessKey: '', secretKey: 'x' } }), /acl/);
  t.throws(() => new RemotingClient({ poolSize: 2000 }), /poolSize/);
});

t.test('close fails calls in flight and later calls', async (t) => {
  const server = echoServer();
  const { port } = await server.listen();
  t.teardown(() => server.close());
  const addr = `127.0.0.1:${port}`;
  const client = new RemotingClient();
  await client.invoke(addr, createRequest(1));
  const inflight = client.invoke(addr, createRequest(2), { timeoutMs: 60_000 }).catch((e: unknown) => e);
  await client.close();
  t.type(await inflight, RemotingClosedError);
  // a closed client is final: a RemotingError, but not retriable, so the producer does not try another broker
  const err = (() => {
    try {
      void client.invoke(addr, createRequest(1));
    } catch (e) {
      return e;
    }
    return null;
  })();
  t.match(err, { name: 'RemotingClientClosedError', addr, errorCode: 'ERR_REMOTING_CLIENT_CLOSED', retriable: false });
  t.ok(err instanceof RemotingError, 'under the remoting family');
});

t.test('idle connections are closed and reopened by the next call', async (t) => {
  const server = echoServer();
  const { port } = await server.listen();
  const addr = `127.0.0.1:${port}`;
  const client = new RemotingClient({ idleTimeoutMs: 30 });
  t.teardown(async () => {
    await client.close();
    await server.close();
  });
  // a call in flight longer than the idle time keeps the connection open
  const held = await client.invoke(addr, createRequest(2), { timeoutMs: 80 }).catch((e: unknown) => e);
  t.equal((held as Error).name, 'RemotingTimeoutError', 'the held call timed out rather than being closed');
  await eventually(async () => {
    if (client.connectionCount(addr) !== 0) throw new Error('still open');
  });
  t.equal(client.connectionCount(addr), 0, 'closed once idle');
  t.equal((await client.invoke(addr, createRequest(1))).code, ResponseCode.SUCCESS, 'reopened on demand');
  t.equal(client.stats()[addr]!.connectAttempts, 2);
});

t.test('a connect that never completes fails after connectTimeoutMs', async (t) => {
  // a plain TCP server that accepts and stays silent: a TLS handshake to it never finishes
  const silent = net.createServer(() => undefined);
  silent.listen(0, '127.0.0.1');
  await once(silent, 'listening');
  const sockets = new Set<net.Socket>();
  silent.on('connection', (s) => sockets.add(s));
  t.teardown(() => {
    for (const s of sockets) s.destroy();
    silent.close();
  });
  const addr = `127.0.0.1:${(silent.address() as net.AddressInfo).port}`;
  const client = new RemotingClient({
    tls: { rejectUnauthorized: false },
    connectTimeoutMs: 50,
    acquireTimeoutMs: 60_000,
  });
  t.teardown(() => client.close());
  const err = (await client
    .invoke(addr, createRequest(1), { timeoutMs: 60_000 })
    .catch((e: unknown) => e)) as RemotingConnectError;
  t.type(err, RemotingConnectError);
  t.equal(err.addr, addr);
  t.match(err.message, 'no connection within 50 ms');

  // an abort signal ends the wait for a connection at once
  const slow = new RemotingClient({
    tls: { rejectUnauthorized: false },
    connectTimeoutMs: 60_000,
    acquireTimeoutMs: 60_000,
  });
  t.teardown(() => slow.close());
  const ac = new AbortController();
  const call = slow.invoke(addr, createRequest(1), { signal: ac.signal }).catch((e: unknown) => e);
  await new Promise((r) => setTimeout(r, 10));
  ac.abort(new Error('enough'));
  const aborted = (await call) as Error;
  t.equal(aborted.name, 'RemotingAbortError');
  t.equal((aborted.cause as Error).message, 'enough');
});

t.test('a throwing rpcHook rejects the call instead of throwing synchronously', async (t) => {
  const server = echoServer();
  const { port } = await server.listen();
  const addr = `127.0.0.1:${port}`;
  const client = new RemotingClient({
    rpcHook: (req) => {
      if (req.code === 3) throw new Error('hook refused');
    },
  });
  t.teardown(async () => {
    await client.close();
    await server.close();
  });
  t.equal((await client.invoke(addr, createRequest(1))).code, ResponseCode.SUCCESS);
  let p: Promise<unknown> | undefined;
  t.doesNotThrow(() => (p = client.invoke(addr, createRequest(3))));
  await t.rejects(p!, /hook refused/);
  await t.rejects(client.invokeOneway(addr, createRequest(3)), /hook refused/);
  t.equal((await client.invoke(addr, createRequest(1))).code, ResponseCode.SUCCESS, 'the connection is unaffected');
});
