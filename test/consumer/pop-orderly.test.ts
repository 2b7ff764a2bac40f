import { popModeTopic, popPushConsumer } from '../support/pop-mode.js';
import t from 'tap';
import { RequestCode, ResponseCode, createRequest, type RemotingCommand } from '../../protocol/index.js';
import { parseOrderCountInfo } from '../../protocol/pop-extra-info.js';
import { decodeMessages } from '../../protocol/internal.js';
import { startBroker, type EmbeddedBroker } from '../../lib/broker/index.js';
import { ManualClock } from '../../lib/clock.js';
import { RemotingClient } from '../../lib/remoting/index.js';
import { produce, uniqueName, until } from './helpers.js';
import { assertOrderedPerKey, runOrderlyPopScenario } from './pop-orderly-scenario.js';

// The push consumer's orderly POP mode (orderly: true, clientRebalance: false, the group switched
// to POP) on the embedded broker, and the broker's order pops it relies on: attemptId makes a
// retried pop idempotent, and a queue freed by the end of an invisible time wakes the pops waiting
// on it (Apache's ConsumerOrderInfoLockManager).

t.test(
  'two orderly consumers in POP mode: each key in order, a failure redelivered in order, nothing lost',
  async (t) => {
    const { b, topic, group } = await popModeTopic(t, 'PopOrderly', 4);
    const o = { keys: 6, perKey: 15, failKey: 'k2', failSeq: 7 };
    const r = await runOrderlyPopScenario(t, { namesrv: b.namesrv, topic, group, limitMs: 30_000, ...o });
    assertOrderedPerKey(t, r, o);
    for (const c of r.consumers)
      t.equal(c.stats().queues.filter((q) => q.topic === topic).length, 0, 'no queue of the topic is pulled');
    t.comment(
      `handled by consumer 0: ${r.handled.filter((h) => h.consumer === 0).length}, by 1: ${r.handled.filter((h) => h.consumer === 1).length}`,
    );
  },
);

function rawPop(
  raw: RemotingClient,
  b: EmbeddedBroker,
  topic: string,
  group: string,
  o: { attemptId?: string; pollTime?: number; bornTime?: number },
): Promise<RemotingCommand> {
  return raw.invoke(
    b.broker,
    createRequest(RequestCode.POP_MESSAGE, {
      extFields: {
        consumerGroup: group,
        topic,
        queueId: '0',
        maxMsgNums: '3',
        invisibleTime: '60000',
        pollTime: String(o.pollTime ?? 0),
        bornTime: String(o.bornTime ?? 0),
        initMode: '0',
        order: 'true',
        ...(o.attemptId ? { attemptId: o.attemptId } : {}),
      },
    }),
    { timeoutMs: 30_000 },
  );
}

const bodies = (res: RemotingCommand): string[] =>
  res.body ? decodeMessages(res.body).map((m) => m.body.toString()) : [];

t.test('order pop: the same attemptId is served the same messages again, another pop none', async (t) => {
  const b = await startBroker({ queues: 1 });
  t.teardown(() => b.close());
  const raw = new RemotingClient();
  t.teardown(() => raw.close());
  const topic = uniqueName('PopAttempt');
  const group = uniqueName('cg');
  await produce(b.namesrv, topic, 5, (i) => ({ body: `m-${i}` }), { single: true });
  const first = await rawPop(raw, b, topic, group, { attemptId: 'A' });
  t.same(bodies(first), ['m-0', 'm-1', 'm-2'], 'the first pop');
  const other = await rawPop(raw, b, topic, group, { attemptId: 'B' });
  t.equal(other.code, ResponseCode.POLLING_TIMEOUT, 'another attempt gets nothing while the queue is held');
  const noAttempt = await rawPop(raw, b, topic, group, {});
  t.equal(noAttempt.code, ResponseCode.POLLING_TIMEOUT, 'a pop without attemptId neither');
  const retried = await rawPop(raw, b, topic, group, { attemptId: 'A' });
  t.same(bodies(retried), ['m-0', 'm-1', 'm-2'], 'the retry of attempt A gets the same messages');
  const counts = parseOrderCountInfo(retried.extFields?.orderCountInfo);
  t.ok(
    [...counts.values()].every((n) => n === 0),
    'and counts them as first deliveries (no reconsume)',
  );
});

t.test('a waiting order pop is answered when the held queue frees by time, not at the end of its poll', async (t) => {
  const clock = new ManualClock();
  const b = await startBroker({ queues: 1, clock });
  t.teardown(() => b.close());
  const raw = new RemotingClient();
  t.teardown(() => raw.close());
  const topic = uniqueName('PopLockFree');
  const group = uniqueName('cg');
  await produce(b.namesrv, topic, 2, (i) => ({ body: `m-${i}` }), { single: true });
  const first = await rawPop(raw, b, topic, group, { attemptId: 'A' });
  t.same(bodies(first), ['m-0', 'm-1']);
  // a pop that may wait 120 s; the queue frees when the 60 s invisible time ends
  let res: RemotingCommand | null = null;
  void rawPop(raw, b, topic, group, { attemptId: 'B', pollTime: 120_000, bornTime: clock.now() }).then((r) => {
    res = r;
  });
  const pops = b.instances[0]!.pop;
  await until(() => pops.pollingNum === 1, 'the pop waits');
  clock.advance(59_999);
  t.equal(pops.pollingNum, 1, 'still waiting while the queue is held');
  clock.advance(1);
  // the clock stays 60 s short of the poll's end: only the release can answer it
  await until(() => res !== null, 'the waiting pop answered at the release');
  t.equal(res!.code, ResponseCode.SUCCESS, 'answered once the invisible time ended');
  t.same(bodies(res!), ['m-0', 'm-1'], 'with the messages not acked, again in order');
});

t.test(
  'orderly POP mode: a message failing past maxReconsumeTimes goes to the DLQ, then the queue goes on',
  async (t) => {
    const set = await popModeTopic(t, 'PopOrderDlq', 1, { queues: 1 });
    const { b, topic, group } = set;
    const seen: { body: string; reconsumeTimes: number }[] = [];
    const consumer = popPushConsumer(t, set, {
      orderly: true,
      maxReconsumeTimes: 2,
      suspendCurrentQueueTimeMs: 10,
      // a client instance of its own: one shared with an earlier test's consumer runs on its clock
      instanceName: uniqueName('dlq'),
    });
    await consumer.start((msgs) => {
      for (const m of msgs) seen.push({ body: m.body.toString(), reconsumeTimes: m.reconsumeTimes });
      return msgs.some((m) => m.body.toString() === 'bad') ? 'SUSPEND_CURRENT_QUEUE_A_MOMENT' : 'SUCCESS';
    });
    for (const body of ['a', 'bad', 'c']) await produce(b.namesrv, topic, 1, () => ({ body }), { single: true });
    await until(
      () => seen.some((s) => s.body === 'c'),
      () => `the message after the bad one handled: ${JSON.stringify(seen)}`,
    );
    t.same(
      seen.map((s) => s.body),
      ['a', 'bad', 'bad', 'bad', 'c'],
      'the bad one tried 3 times, in order, then given up; nothing after it before',
    );
    // a message popped with the bad one and handed back unhandled counts that delivery too (the
    // broker's orderCountInfo counts deliveries), so only the bad one's counts are certain
    t.same(
      seen.filter((s) => s.body === 'bad').map((s) => s.reconsumeTimes),
      [0, 1, 2],
      'reconsumeTimes 0, 1, 2: maxReconsumeTimes 2 reached',
    );
    const dlq = `%DLQ%${group}`;
    const store = b.instances[0]!.messageStore;
    await until(() => store.getMaxOffset(dlq, 0) === 1, 'one message in the DLQ');
    const got = store.getMessage(dlq, 0, 0, 1, null);
    const stored = got.status === 'FOUND' ? decodeMessages(Buffer.concat(got.records)) : [];
    t.equal(stored[0]?.body.toString(), 'bad', 'the bad one');
    t.equal(stored[0]?.properties.POP_CK, undefined, 'without the receipt handle of its pop');
  },
);

t.test('orderly POP mode: a queue handled slowly keeps its messages past the first invisible time', async (t) => {
  const clock = new ManualClock();
  const set = await popModeTopic(t, 'PopOrderRenew', 1, { queues: 1, clock });
  const { b, topic, group } = set;
  const raw = new RemotingClient();
  t.teardown(() => raw.close());
  await produce(b.namesrv, topic, 3, (i) => ({ body: `m-${i}` }), { single: true });
  const seen: string[] = [];
  const gates = [0, 1, 2].map(() => {
    let open!: () => void;
    const p = new Promise<void>((r) => (open = r));
    return { p, open };
  });
  const consumer = popPushConsumer(t, set, { orderly: true, popInvisibleTimeMs: 10_000, clock });
  await consumer.start(async (msgs) => {
    for (const m of msgs) {
      seen.push(m.body.toString());
      await gates[Number(m.body.toString().slice(2))]!.p;
    }
    return 'SUCCESS';
  });
  await until(() => seen.length === 1, 'm-0 with the handler');
  clock.advance(6000); // past half of the 10 s invisible time
  gates[0]!.open();
  await until(() => seen.length === 2, 'm-1 with the handler');
  clock.advance(6000); // 12 s after the pop: without a renewal the queue would be free again
  const probe = await rawPop(raw, b, topic, group, { attemptId: 'probe' });
  t.equal(probe.code, ResponseCode.POLLING_TIMEOUT, 'another pop still gets nothing: the rest was renewed');
  gates[1]!.open();
  gates[2]!.open();
  await until(() => b.instances[0]!.offsets.query(group, topic, 0) === 3, 'all acked');
  t.same(seen, ['m-0', 'm-1', 'm-2'], 'each handled once, in order');
});
