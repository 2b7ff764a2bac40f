// A producer's start() checks that a name server answers (else it rejects with
// NameServerUnavailableError and may be called again), connect()/close() and `await using`, and
// health() for a readiness probe.
import { freePort, until } from '../consumer/helpers.js';
import t from 'tap';
import { startBroker } from '../../lib/broker/index.js';
import { NameServerUnavailableError } from '../../lib/client/index.js';
import { Producer } from '../../lib/producer/index.js';
import { PushConsumer } from '../../lib/consumer/index.js';

t.test(
  'start() against a dead name server rejects naming it; start() again once it is up; health() follows',
  async (t) => {
    const port = await freePort();
    const addr = `127.0.0.1:${port}`;
    const producer = new Producer({ group: 'pg_dead_ns', namesrvAddr: addr, logger: false, connectTimeoutMs: 500 });
    const err = await producer.start().then(
      () => null,
      (e: unknown) => e,
    );
    t.ok(err instanceof NameServerUnavailableError, 'NameServerUnavailableError');
    t.match((err as Error).message, addr, 'names the address');
    t.same(producer.health(), {
      state: 'CREATED',
      ready: false,
      group: 'pg_dead_ns',
      nameServer: { lastAnswer: null },
      brokers: [],
    });
    const broker = await startBroker({ queues: 1, namesrvPort: port });
    t.teardown(() => broker.close());
    await producer.connect();
    const r = await producer.send({ topic: 'T_dead_ns', body: 'x' });
    t.equal(r.status, 'SEND_OK');
    const h = producer.health();
    t.equal(h.ready, true);
    t.equal(h.nameServer.lastAnswer?.addr, addr);
    t.ok(
      h.brokers.some((b) => b.addr === broker.broker),
      'the broker is listed',
    );
    await producer.close();
    t.equal(producer.health().state, 'SHUTDOWN');
  },
);

t.test("startWithoutNameServer: start() resolves as Java's does; send() then fails", async (t) => {
  const port = await freePort();
  const producer = new Producer({
    group: 'pg_java_start',
    namesrvAddr: `127.0.0.1:${port}`,
    logger: false,
    startWithoutNameServer: true,
    connectTimeoutMs: 500,
  });
  const events: { addr: string; error: Error }[] = [];
  producer.on('nameServerError', (e) => events.push(e));
  await producer.start();
  t.teardown(() => producer.shutdown());
  await t.rejects(producer.send({ topic: 'T', body: 'x' }), NameServerUnavailableError);
  t.equal(events.length, 1, "a failure after start() is the producer's 'nameServerError' event too");
  t.equal(events[0]?.addr, `127.0.0.1:${port}`);
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

t.test(
  "namesrvAddr defaults to NAMESRV_ADDR, as Java's ClientConfig; neither is a ClientOptionError naming both",
  async (t) => {
    const broker = await startBroker({ queues: 1 });
    t.teardown(() => broker.close());
    const saved = process.env.NAMESRV_ADDR;
    t.teardown(() => {
      if (saved === undefined) delete process.env.NAMESRV_ADDR;
      else process.env.NAMESRV_ADDR = saved;
    });
    delete process.env.NAMESRV_ADDR;
    t.throws(() => new Producer({ group: 'pg_env' }), {
      name: 'ClientOptionError',
      option: 'namesrvAddr',
      message: /NAMESRV_ADDR/,
    });
    t.throws(() => new PushConsumer({ group: 'cg_env' }), {
      name: 'ConsumerOptionError',
      option: 'namesrvAddr',
      message: /NAMESRV_ADDR/,
    });
    process.env.NAMESRV_ADDR = broker.namesrv;
    const producer = new Producer({ group: 'pg_env' });
    await producer.start();
    t.teardown(() => producer.shutdown());
    t.equal((await producer.send({ topic: 'T_env', body: 'x' })).status, 'SEND_OK');
    const consumer = new PushConsumer({ group: 'cg_env', consumeFromWhere: 'first' });
    consumer.subscribe('T_env');
    let got = 0;
    await consumer.start(async () => {
      got++;
    });
    t.teardown(() => consumer.shutdown());
    t.equal(
      consumer.health().nameServer.lastAnswer?.addr,
      broker.namesrv,
      'the consumer asked the name server of NAMESRV_ADDR',
    );
    await until(() => got === 1, 'the message');
  },
);
