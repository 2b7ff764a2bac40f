// Issue 28 §3: a producer's start() checks that a name server answers (else it rejects with
// NameServerUnavailableError and may be called again), connect()/close() and `await using`, and
// health() for a readiness probe.
import net from 'node:net';
import t from 'tap';
import { startBroker } from '../../lib/broker/index.js';
import { NameServerUnavailableError } from '../../lib/client/index.js';
import { Producer } from '../../lib/producer/index.js';

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

t.test('start() against a dead name server rejects naming it; start() again once it is up; health() follows', async (t) => {
  const port = await freePort();
  const addr = `127.0.0.1:${port}`;
  const producer = new Producer({ group: 'pg_dead_ns', namesrvAddr: addr, logger: false, connectTimeoutMs: 500 });
  const err = await producer.start().then(
    () => null,
    (e: unknown) => e,
  );
  t.ok(err instanceof NameServerUnavailableError, 'NameServerUnavailableError');
  t.match((err as Error).message, addr, 'names the address');
  t.same(producer.health(), { state: 'CREATED', ready: false, group: 'pg_dead_ns', nameServer: { lastAnswer: null }, brokers: [] });
  const broker = await startBroker({ queues: 1, namesrvPort: port });
  t.teardown(() => broker.close());
  await producer.connect();
  const r = await producer.send({ topic: 'T_dead_ns', body: 'x' });
  t.equal(r.status, 'SEND_OK');
  const h = producer.health();
  t.equal(h.ready, true);
  t.equal(h.nameServer.lastAnswer?.addr, addr);
  t.ok(h.brokers.some((b) => b.addr === broker.broker), 'the broker is listed');
  await producer.close();
  t.equal(producer.health().state, 'SHUTDOWN');
});

t.test('startWithoutNameServer: start() resolves as Java\'s does; send() then fails', async (t) => {
  const port = await freePort();
  const producer = new Producer({ group: 'pg_java_start', namesrvAddr: `127.0.0.1:${port}`, logger: false, startWithoutNameServer: true, connectTimeoutMs: 500 });
  await producer.start();
  t.teardown(() => producer.shutdown());
  await t.rejects(producer.send({ topic: 'T', body: 'x' }), NameServerUnavailableError);
});

t.test('await using shuts the producer down at the end of the block', async (t) => {
  const broker = await startBroker({ queues: 1 });
  t.teardown(() => broker.close());
  let kept: Producer | undefined;
  {
    await using producer = new Producer({ group: 'pg_using', namesrvAddr: broker.namesrv });
    await producer.start();
    kept = producer;
    t.equal(kept.health().state, 'RUNNING');
  }
  t.equal(kept.health().state, 'SHUTDOWN');
});
