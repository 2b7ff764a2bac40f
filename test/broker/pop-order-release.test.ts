import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import t, { type Test } from 'tap';
import { RequestCode, ResponseCode, createRequest } from '../../protocol/index.js';
import { startBroker, type EmbeddedBroker } from '../../lib/broker/index.js';
import { RemotingClient } from '../../lib/remoting/index.js';
import { ManualClock } from '../../lib/clock.js';
import { SimpleConsumer, type ReceivedMessage } from '../../lib/consumer/pop/simple-consumer.js';
import { Producer } from '../../lib/producer/index.js';
import { uniqueName, until } from '../consumer/helpers.js';

// When a queue held by an order pop frees, the order pops waiting on it are answered then, not at
// the end of their poll time (Apache's ConsumerOrderInfoLockManager): whatever frees it — the
// original invisible time, invisible times changed message by message at different moments, a
// change to 0, or a held queue that outlived a broker restart. Broker and consumers share one
// ManualClock, and every wait here is for a pop whose poll time the clock never reaches: only the
// release can answer it.

const INVISIBLE = 60_000;
const LONG_POLL = 300_000;

function consumer(t: Test, b: EmbeddedBroker, clock: ManualClock, topic: string, group: string, awaitMs = 0) {
  const c = new SimpleConsumer({
    namesrvAddr: b.namesrv,
    consumerGroup: group,
    topic,
    initMode: 'MIN',
    awaitDurationMs: awaitMs,
    orderly: true,
    clock,
    instanceName: uniqueName('i'),
  });
  t.teardown(() => c.shutdown());
  return c;
}

async function produce(namesrv: string, topic: string, n: number): Promise<void> {
  const producer = new Producer({ namesrvAddr: namesrv, group: uniqueName('pg') });
  await producer.start();
  try {
    for (let i = 0; i < n; i++) await producer.send({ topic, body: `m-${i}` });
  } finally {
    await producer.shutdown();
  }
}

const names = (ms: readonly ReceivedMessage[]): string[] => ms.map((m) => m.body.toString());

/** A receive of `c` that may wait LONG_POLL, once the broker holds it; `result()` is null until answered. */
async function waitingReceive(b: EmbeddedBroker, c: SimpleConsumer) {
  const before = b.instances[0]!.pop.pollingNum;
  let got: ReceivedMessage[] | null = null;
  // a receive still waiting when the test ends is aborted by the consumer's shutdown
  c.receive(32, INVISIBLE).then(
    (r) => {
      got = r;
    },
    () => {},
  );
  await until(() => b.instances[0]!.pop.pollingNum === before + 1, 'the pop waits on the held queue');
  return { result: () => got as ReceivedMessage[] | null };
}

t.test(
  'messages of a held queue made visible again one by one, moments apart: a waiting pop is answered when the last is',
  async (t) => {
    const clock = new ManualClock();
    const b = await startBroker({ queues: 1, clock });
    t.teardown(() => b.close());
    const topic = uniqueName('PopRelSeq');
    const group = uniqueName('cg');
    await produce(b.namesrv, topic, 3);
    const a = consumer(t, b, clock, topic, group);
    await a.start();
    const held = await a.receive(32, INVISIBLE);
    t.same(names(held), ['m-0', 'm-1', 'm-2']);
    const other = consumer(t, b, clock, topic, group, LONG_POLL);
    await other.start();
    const pending = await waitingReceive(b, other);
    // what an orderly consumer does when its handler asks to suspend the queue: every message of
    // the batch from the failed one on visible again after a while, one request each, moments apart
    for (const m of held) {
      await a.changeInvisibleDuration(m, 1000);
      clock.advance(500);
    }
    // m-0 and m-1 are visible again now, m-2 not yet
    t.same(await a.receive(32, INVISIBLE), [], 'the queue is still held');
    t.equal(pending.result(), null, 'the waiting pop not answered either');
    clock.advance(500);
    await until(() => pending.result() !== null, 'the waiting pop answered once the last one is visible');
    t.same(names(pending.result()!), ['m-0', 'm-1', 'm-2'], 'all three again, in order');
    t.same(
      pending.result()!.map((m) => m.reconsumeTimes),
      [1, 1, 1],
    );
  },
);

t.test('a held queue whose messages are all changed to visible now wakes a waiting pop at once', async (t) => {
  const clock = new ManualClock();
  const b = await startBroker({ queues: 1, clock });
  t.teardown(() => b.close());
  const topic = uniqueName('PopRelZero');
  const group = uniqueName('cg');
  await produce(b.namesrv, topic, 2);
  const a = consumer(t, b, clock, topic, group);
  await a.start();
  const held = await a.receive(32, INVISIBLE);
  t.same(names(held), ['m-0', 'm-1']);
  const other = consumer(t, b, clock, topic, group, LONG_POLL);
  await other.start();
  const pending = await waitingReceive(b, other);
  // a change to 0 (the client's own SimpleConsumer asks for 1 s at least; another client may not)
  const raw = new RemotingClient();
  t.teardown(() => raw.close());
  for (const m of held) {
    const res = await raw.invoke(
      b.broker,
      createRequest(RequestCode.CHANGE_MESSAGE_INVISIBLETIME, {
        extFields: {
          consumerGroup: group,
          topic,
          queueId: String(m.queueId),
          extraInfo: m.receiptHandle,
          offset: String(m.queueOffset),
          invisibleTime: '0',
        },
      }),
    );
    t.equal(res.code, ResponseCode.SUCCESS, `${m.body} visible again now`);
  }
  // the clock does not move: the change itself frees the queue
  await until(() => pending.result() !== null, 'the waiting pop answered by the change');
  t.same(names(pending.result()!), ['m-0', 'm-1']);
});

t.test('a queue still held when the broker restarts wakes the pops waiting on it when it frees', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rw-pop-order-rel-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const clock = new ManualClock();
  const topic = uniqueName('PopRelRestart');
  const group = uniqueName('cg');
  let b = await startBroker({ queues: 1, clock, dataDir: dir });
  await produce(b.namesrv, topic, 2);
  const a = consumer(t, b, clock, topic, group);
  await a.start();
  t.same(names(await a.receive(32, INVISIBLE)), ['m-0', 'm-1']);
  await a.shutdown();
  await b.close();
  b = await startBroker({ queues: 1, clock, dataDir: dir });
  t.teardown(() => b.close());
  const other = consumer(t, b, clock, topic, group, LONG_POLL);
  await other.start();
  const pending = await waitingReceive(b, other);
  clock.advance(INVISIBLE - 1);
  t.equal(pending.result(), null, 'held until the invisible time of the pop before the restart ends');
  clock.advance(1);
  await until(() => pending.result() !== null, 'the waiting pop answered when the hold ends');
  t.same(names(pending.result()!), ['m-0', 'm-1']);
});
