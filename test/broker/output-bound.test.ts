import t, { type Test } from 'tap';
import { randomBytes } from 'node:crypto';
import { PushConsumer } from '../../lib/consumer/index.js';
import { Producer } from '../../lib/producer/index.js';
import { startBroker, type EmbeddedBroker } from '../../lib/broker/index.js';
import type { RemotingServer } from '../../lib/remoting/index.js';
import { createTopic, uniqueName, until } from '../consumer/helpers.js';

// Honest consumers whose pull answers pass a connection's output bound (maxOutputBytesPerConnection:
// a few pulls in flight, each answered with a message larger than the bound). The broker holds
// their next pulls until the answers drain and stops reading meanwhile, as Apache's broker stops
// reading a channel past Netty's high water mark; it never answers them SYSTEM_BUSY, which would
// cost the consumer its 1 s retry delay.

const KiB = 1024;

function server(b: EmbeddedBroker): RemotingServer {
  return b.instances[0]!.server;
}

/** Producer that never compresses: the bodies must cost their bytes on the wire. */
async function producer(namesrv: string): Promise<Producer> {
  const p = new Producer({ namesrvAddr: namesrv, group: uniqueName('pg'), compressMsgBodyOverHowmuch: 2 ** 31 - 1 });
  await p.start();
  return p;
}

/** A consumer of `topic` from its first offset that records bodies' first 4 bytes and every warning. */
async function consumer(t: Test, namesrv: string, topic: string) {
  const seen = new Set<number>();
  const warnings: string[] = [];
  const logger = {
    debug: () => undefined,
    info: () => undefined,
    warn: (m: unknown) => void warnings.push(String(m)),
    error: (m: unknown) => void warnings.push(String(m)),
  };
  const c = new PushConsumer({
    consumerGroup: uniqueName('cg'),
    namesrvAddr: namesrv,
    consumeFromWhere: 'first',
    logger,
  });
  c.subscribe(topic, '*');
  await c.start((msgs) => {
    for (const m of msgs) seen.add(m.body.readUInt32BE(0));
    return 'CONSUME_SUCCESS';
  });
  t.teardown(() => c.shutdown());
  return { seen, warnings };
}

function body(i: number, size: number): Buffer {
  const b = randomBytes(size);
  b.writeUInt32BE(i, 0);
  return b;
}

t.test(
  'a consumer with pulls in flight whose answers pass the per-connection bound gets every message, none SYSTEM_BUSY',
  async (t) => {
    // 8 queues, one pull in flight for each, every answer one 300 KiB message: 2.4 MiB of answers
    // against a 256 KiB bound
    const b = await startBroker({ queues: 8, maxOutputBytesPerConnection: 256 * KiB });
    t.teardown(() => b.close());
    const topic = uniqueName('BigPulls');
    await createTopic([b.broker], topic, 8);
    const n = 96;
    const p = await producer(b.namesrv);
    for (let i = 0; i < n; i++) await p.send({ topic, body: body(i, 300 * KiB) });
    await p.shutdown();

    const { seen, warnings } = await consumer(t, b.namesrv, topic);
    await until(
      () => seen.size === n,
      () => `${seen.size} of ${n} consumed`,
    );
    const st = server(b).bufferStats();
    t.equal(st.busyAnswers, 0, 'no request answered SYSTEM_BUSY');
    t.same(
      warnings.filter((w) => /SYSTEM_BUSY|OVERLOAD/.test(w)),
      [],
      'the consumer saw no SYSTEM_BUSY',
    );
    t.ok(st.outputPauses > 0, `the broker held pulls ${st.outputPauses} times instead`);
  },
);

t.test(
  'long polling keeps working: parked pulls woken by messages larger than the bound are answered, none SYSTEM_BUSY',
  async (t) => {
    // the answers come from held pulls (the topic is empty when the consumer starts): 8 of 200 KiB
    // at most are unread at once, under twice the 1 MiB bound
    const b = await startBroker({ queues: 8, maxOutputBytesPerConnection: 1024 * KiB });
    t.teardown(() => b.close());
    const topic = uniqueName('LongPoll');
    await createTopic([b.broker], topic, 8);
    const p = await producer(b.namesrv);
    t.teardown(() => p.shutdown());
    await p.send({ topic, body: body(0, 16) });
    const { seen, warnings } = await consumer(t, b.namesrv, topic);
    await until(() => seen.size === 1, 'the first message');
    // a pull parked for each of the 8 queues (and one for the group's retry topic)
    const hold = b.instances[0]!.pullHold;
    await until(
      () => hold.size === 9,
      () => `${hold.size} of 9 pulls parked`,
    );
    const n = 48;
    for (let i = 1; i <= n; i++) await p.send({ topic, body: body(i, 200 * KiB) });
    await until(
      () => seen.size === n + 1,
      () => `${seen.size} of ${n + 1} consumed`,
    );
    t.equal(server(b).bufferStats().busyAnswers, 0, 'no request answered SYSTEM_BUSY');
    t.same(
      warnings.filter((w) => /SYSTEM_BUSY|OVERLOAD/.test(w)),
      [],
      'the consumer saw no SYSTEM_BUSY',
    );
  },
);
