import t from 'tap';
import { createRequest } from '../../protocol/index.js';
import { ManualClock } from '../../lib/clock.js';
import { RemotingClient, RemotingConnectError, RemotingTimeoutError } from '../../lib/remoting/index.js';
import { freePort, scriptedServer } from './scripted-server.js';

// Timeouts and back-off of minutes, driven by a ManualClock: no test waits for them.

t.test('a call times out when the clock passes its deadline, not before', async (t) => {
  const server = await scriptedServer(); // never answers
  const clock = new ManualClock();
  const client = new RemotingClient({ clock });
  t.teardown(async () => {
    await client.close();
    await server.close();
  });
  let settled = false;
  const call = client.invoke(server.addr, createRequest(11), { timeoutMs: 60_000 }).then(
    () => t.fail('no answer was sent'),
    (e: unknown) => {
      settled = true;
      return e;
    },
  );
  const peer = await server.nextPeer();
  await peer.waitFor(1);
  clock.advance(59_999);
  await new Promise((r) => setImmediate(r));
  t.notOk(settled, 'still waiting one millisecond before the deadline');
  clock.advance(2); // the sweeper fires 1 ms after the deadline
  const err = (await call) as RemotingTimeoutError;
  t.type(err, RemotingTimeoutError);
  t.equal(err.timeoutMs, 60_000);
  t.equal(err.elapsedMs, 60_001, 'elapsed time read from the same clock');
  t.equal(err.addr, server.addr);
});

t.test('reconnect back-off is measured on the clock', async (t) => {
  const clock = new ManualClock();
  const addr = `127.0.0.1:${await freePort()}`;
  const client = new RemotingClient({ clock, reconnectBackoffMs: 60_000, maxReconnectBackoffMs: 60_000 });
  t.teardown(() => client.close());
  const first = await client.invoke(addr, createRequest(1)).catch((e: unknown) => e);
  t.type(first, RemotingConnectError);
  t.equal(client.stats()[addr]!.retryInMs, 60_000);
  const held = (await client.invoke(addr, createRequest(1)).catch((e: unknown) => e)) as RemotingConnectError;
  t.type(held, RemotingConnectError);
  t.equal(held.retryInMs, 60_000, 'refused at once while the back-off lasts');
  t.equal(client.stats()[addr]!.connectAttempts, 1);
  clock.advance(59_999);
  t.equal(client.stats()[addr]!.retryInMs, 1);
  clock.advance(1);
  t.equal(client.stats()[addr]!.retryInMs, 0);
  const again = (await client.invoke(addr, createRequest(1)).catch((e: unknown) => e)) as RemotingConnectError;
  t.type(again, RemotingConnectError);
  t.equal(client.stats()[addr]!.connectAttempts, 2, 'a new attempt once the clock passed the back-off');
});

t.test(
  'the default reconnect back-off stops doubling at 1 s, so a restarted broker is reached within one pull retry (Java has no back-off)',
  async (t) => {
    // Java's consumer tries to connect again at each pull retry after an error (1 s); a longer cap
    // leaves rocketwire behind Java when a broker restarts (a 3 s cap: 8.1 s against 6.2 s); after
    // a 30 s partition no address may stay refused locally for up to 10 s after the heal, nor the
    // consumer resume 16 s later (test/interop/real-broker-netfault.test.ts).
    const clock = new ManualClock();
    const addr = `127.0.0.1:${await freePort()}`;
    const client = new RemotingClient({ clock });
    t.teardown(() => client.close());
    const waits: number[] = [];
    for (let i = 0; i < 12; i++) {
      t.type(await client.invoke(addr, createRequest(1)).catch((e: unknown) => e), RemotingConnectError);
      const wait = client.stats()[addr]!.retryInMs;
      waits.push(wait);
      clock.advance(wait);
    }
    t.same(waits.slice(0, 6), [100, 200, 400, 800, 1000, 1000], 'doubling from 100 ms');
    t.ok(
      waits.every((w) => w <= 1000),
      `never more than 1 s: ${waits.join(', ')}`,
    );
    t.equal(client.stats()[addr]!.connectAttempts, 12, 'one attempt per back-off');
  },
);
