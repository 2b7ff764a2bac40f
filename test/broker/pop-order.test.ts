import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import t, { type Test } from 'tap';
import { decodeReceiptHandle, POP_ORDER_REVIVE_QUEUE } from '../../protocol/pop-extra-info.js';
import { startBroker, type EmbeddedBroker } from '../../lib/broker/index.js';
import { ManualClock } from '../../lib/clock.js';
import { SimpleConsumer, type ReceivedMessage } from '../../lib/consumer/pop/simple-consumer.js';
import { Producer } from '../../lib/producer/index.js';
import { uniqueName } from '../consumer/helpers.js';

// Order pops (POP_MESSAGE order=true) on the embedded broker, as Apache's PopMessageProcessor and
// ConsumerOrderInfoManager serve them: a queue's messages go to one consumer at a time, in queue
// order, and none of the queue's later messages is handed out while popped ones are neither acked
// nor visible again; what was not acked comes back from the first offset not acked. Broker and
// consumers share one ManualClock.

const INVISIBLE = 60_000;

async function setup(
  t: Test,
  dataDir?: string,
  clock = new ManualClock(),
): Promise<{ b: EmbeddedBroker; clock: ManualClock }> {
  const b = await startBroker({ queues: 4, clock, ...(dataDir ? { dataDir } : {}) });
  t.teardown(() => b.close());
  return { b, clock };
}

function consumer(
  t: Test,
  b: EmbeddedBroker,
  clock: ManualClock,
  topic: string,
  group: string,
  extra: Partial<ConstructorParameters<typeof SimpleConsumer>[0]> = {},
): SimpleConsumer {
  const c = new SimpleConsumer({
    namesrvAddr: b.namesrv,
    consumerGroup: group,
    topic,
    initMode: 'MIN',
    awaitDurationMs: 0,
    orderly: true,
    clock,
    instanceName: uniqueName('i'),
    ...extra,
  });
  t.teardown(() => c.shutdown());
  return c;
}

/** `n` messages "q{queueId}-{i}" into each of `queues` of the topic, in order. */
async function produceTo(namesrv: string, topic: string, queues: number[], n: number): Promise<void> {
  const producer = new Producer({ namesrvAddr: namesrv, group: uniqueName('pg') });
  await producer.start();
  try {
    for (const queueId of queues) {
      for (let i = 0; i < n; i++)
        await producer.send(
          { topic, body: `q${queueId}-${i}` },
          { selector: (qs) => qs.find((q) => q.queueId === queueId)! },
        );
    }
  } finally {
    await producer.shutdown();
  }
}

const names = (ms: readonly ReceivedMessage[]): string[] => ms.map((m) => m.body.toString());
const queuesOf = (ms: readonly ReceivedMessage[]): Set<number> => new Set(ms.map((m) => m.queueId));

t.test(
  'two order consumers of one group never hold messages of the same queue at once; each queue goes in order',
  async (t) => {
    const { b, clock } = await setup(t);
    const topic = uniqueName('PopOrd');
    const group = uniqueName('PopOrdG');
    await produceTo(b.namesrv, topic, [0, 1], 10);
    const a = consumer(t, b, clock, topic, group);
    const c = consumer(t, b, clock, topic, group);
    await a.start();
    await c.start();

    const held = new Map<SimpleConsumer, ReceivedMessage[]>([
      [a, []],
      [c, []],
    ]);
    const handedOut = new Map<number, number[]>();
    const receive = async (who: SimpleConsumer, max: number): Promise<ReceivedMessage[]> => {
      const got = await who.receive(max, INVISIBLE);
      const other = queuesOf(held.get(who === a ? c : a)!);
      const clash = got.filter((m) => other.has(m.queueId)).map((m) => m.body.toString());
      if (clash.length > 0) t.fail(`handed out while the other consumer holds their queue: ${clash.join(', ')}`);
      if (!got.every((m) => decodeReceiptHandle(m.receiptHandle).reviveQid === POP_ORDER_REVIVE_QUEUE))
        t.fail("not every receipt handle is an order pop's");
      for (const m of got) {
        let l = handedOut.get(m.queueId);
        if (!l) handedOut.set(m.queueId, (l = []));
        l.push(m.queueOffset);
      }
      held.get(who)!.push(...got);
      return got;
    };
    const ackAll = async (who: SimpleConsumer): Promise<void> => {
      t.equal(await who.ack(held.get(who)!), 'OK');
      held.set(who, []);
    };

    const first = await receive(a, 4);
    t.equal(first.length, 4);
    t.equal(queuesOf(first).size, 1, 'a batch smaller than a queue comes from one queue');
    const qa = first[0]!.queueId;
    const qc = qa === 0 ? 1 : 0;
    t.same(
      names(first),
      [0, 1, 2, 3].map((i) => `q${qa}-${i}`),
      'from the start of the queue, in order',
    );
    const second = await receive(c, 32);
    t.same(
      names(second),
      Array.from({ length: 10 }, (_, i) => `q${qc}-${i}`),
      'the other consumer gets only the other queue, all of it, in order',
    );
    t.same(await receive(a, 32), [], 'the consumer holding a queue gets nothing more of it');
    t.same(await receive(c, 32), [], 'nor does anyone else');

    await ackAll(a);
    const next = await receive(c, 3);
    t.same(
      names(next),
      [4, 5, 6].map((i) => `q${qa}-${i}`),
      'after the ack (one BATCH_ACK) the queue goes on where it stopped, to whoever pops',
    );
    await ackAll(c);
    const rest = await receive(a, 32);
    t.same(
      names(rest),
      [7, 8, 9].map((i) => `q${qa}-${i}`),
    );
    await ackAll(a);
    for (const [q, offsets] of handedOut)
      t.same(
        offsets,
        Array.from({ length: 10 }, (_, i) => i),
        `queue ${q}: every offset handed out once, in order`,
      );
    t.same(await receive(c, 32), [], 'nothing left');
  },
);

t.test(
  'order is kept across an invisible-time expiry: delivery starts again at the first offset not acked',
  async (t) => {
    const { b, clock } = await setup(t);
    const topic = uniqueName('PopOrdX');
    const group = uniqueName('PopOrdXG');
    await produceTo(b.namesrv, topic, [2], 8);
    const a = consumer(t, b, clock, topic, group);
    const c = consumer(t, b, clock, topic, group);
    await a.start();
    await c.start();
    const got = await a.receive(5, INVISIBLE);
    t.same(names(got), ['q2-0', 'q2-1', 'q2-2', 'q2-3', 'q2-4']);
    t.ok(
      got.every((m) => m.reconsumeTimes === 0),
      'first deliveries',
    );
    t.equal(await a.ack(got[0]!), 'OK');
    t.equal(await a.ack(got[1]!), 'OK');
    t.equal(await a.ack(got[3]!), 'OK', 'an ack past a gap is taken');
    clock.advance(INVISIBLE - 1000);
    t.same(await c.receive(32, INVISIBLE), [], 'blocked until the invisible time is over');

    clock.advance(2000);
    const again = await c.receive(32, INVISIBLE);
    t.same(
      names(again),
      ['q2-2', 'q2-3', 'q2-4', 'q2-5', 'q2-6', 'q2-7'],
      'from the first offset not acked, in order (the one acked past the gap comes again too)',
    );
    t.same(
      again.map((m) => m.reconsumeTimes),
      [1, 1, 1, 0, 0, 0],
      "reconsumeTimes from the broker's orderCountInfo: 1 for the ones handed out before",
    );
    t.equal(await a.ack(got[2]!), 'OK', "a late ack of the expired pop is answered OK (Apache's NO_COMMIT) ...");
    t.same(await a.receive(32, INVISIBLE), [], '... and does not free the queue the other consumer now holds');
    t.equal(await c.ack(again), 'OK');
    t.equal(b.instances[0]!.offsets.query(group, topic, 2), 8, "the group's offset is past the last message");
    clock.advance(INVISIBLE + 1000);
    t.same(await a.receive(32, INVISIBLE), [], 'acked messages never come back');
  },
);

t.test(
  'changeInvisibleDuration of an order-popped message moves when the queue frees; its new receipt acks it',
  async (t) => {
    const { b, clock } = await setup(t);
    const topic = uniqueName('PopOrdC');
    const group = uniqueName('PopOrdCG');
    await produceTo(b.namesrv, topic, [0], 3);
    const a = consumer(t, b, clock, topic, group);
    await a.start();
    const got = await a.receive(32, INVISIBLE);
    t.equal(got.length, 3);
    await a.ack([got[0]!, got[2]!]);
    clock.advance(10_000);
    const moved = await a.changeInvisibleDuration(got[1]!, 120_000);
    const rh = decodeReceiptHandle(moved.receiptHandle);
    t.equal(rh.popTime, decodeReceiptHandle(got[1]!.receiptHandle).popTime, 'an order receipt keeps its popTime ...');
    t.equal(rh.invisibleTime, 130_000, '... and its invisible time counts from it');
    clock.advance(INVISIBLE);
    t.same(await a.receive(32, INVISIBLE), [], 'still blocked at the old deadline');
    t.equal(await a.ack(moved), 'OK');
    await produceTo(b.namesrv, topic, [0], 1);
    t.same(
      names(await a.receive(32, INVISIBLE)),
      ['q0-0'],
      "after the ack the queue goes on (the new message is the queue's offset 3)",
    );
  },
);

t.test('a waiting order pop is answered when the ack that frees the queue arrives', async (t) => {
  const { b, clock } = await setup(t);
  const topic = uniqueName('PopOrdW');
  const group = uniqueName('PopOrdWG');
  await produceTo(b.namesrv, topic, [1], 4);
  const a = consumer(t, b, clock, topic, group);
  const c = consumer(t, b, clock, topic, group, { awaitDurationMs: 15_000 });
  await a.start();
  await c.start();
  const got = await a.receive(2, INVISIBLE);
  t.same(names(got), ['q1-0', 'q1-1']);
  const pending = c.receive(32, INVISIBLE);
  for (let i = 0; i < 200 && b.instances[0]!.pop.pollingNum === 0; i++) await new Promise((r) => setTimeout(r, 5));
  t.equal(b.instances[0]!.pop.pollingNum, 1, 'the pop waits: the only queue with messages is held');
  await a.ack(got);
  t.same(names(await pending), ['q1-2', 'q1-3'], 'woken by the ack, not by the poll time');
});

t.test(
  'the order state survives a broker restart: a held queue stays held until its invisible time is over',
  async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rw-pop-order-'));
    t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
    const clock = new ManualClock();
    const topic = uniqueName('PopOrdR');
    const group = uniqueName('PopOrdRG');
    let b = await startBroker({ queues: 4, clock, dataDir: dir });
    await produceTo(b.namesrv, topic, [3], 3);
    let a = new SimpleConsumer({
      namesrvAddr: b.namesrv,
      consumerGroup: group,
      topic,
      initMode: 'MIN',
      awaitDurationMs: 0,
      orderly: true,
      clock,
      instanceName: uniqueName('i'),
    });
    await a.start();
    const got = await a.receive(32, INVISIBLE);
    t.equal(got.length, 3);
    await a.ack(got[0]!);
    await a.shutdown();
    await b.close();
    t.ok(
      fs.existsSync(path.join(dir, 'config', 'consumerOrderInfo.json')),
      "written to the store folder (Apache's file name)",
    );

    b = await startBroker({ queues: 4, clock, dataDir: dir });
    t.teardown(() => b.close());
    a = consumer(t, b, clock, topic, group);
    await a.start();
    t.same(await a.receive(32, INVISIBLE), [], 'still held after the restart');
    clock.advance(INVISIBLE + 1000);
    const back = await a.receive(32, INVISIBLE);
    t.same(names(back), ['q3-1', 'q3-2'], 'the 2 not acked come back, in order');
    t.same(
      back.map((m) => m.reconsumeTimes),
      [1, 1],
    );
  },
);
