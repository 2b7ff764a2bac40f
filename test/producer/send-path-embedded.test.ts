// autoBatch and back-pressure end to end on the embedded broker (two broker names): every message of
// un-awaited sends stored once, each caller's SendResult naming its own stored message.
import t, { type Test } from 'tap';
import type { MessageExt } from '../../protocol/index.js';
import { startBroker } from '../../lib/broker/index.js';
import { RemotingClient } from '../../lib/remoting/index.js';
import { Producer, ProducerEvents, type ProducerOptions, type SendResult } from '../../lib/producer/index.js';
import { createTopic, pullAll, uniqueName } from '../support/index.js';

async function setup(t: Test, extra: Partial<ProducerOptions>) {
  const broker = await startBroker({ brokers: 2, queues: 4 });
  const raw = new RemotingClient();
  const topic = uniqueName('SendPath');
  await createTopic(broker.brokers, topic, 4);
  const producer = new Producer({
    namesrvAddr: broker.namesrv,
    group: uniqueName('pg'),
    instanceName: uniqueName('sp'),
    ...extra,
  });
  t.teardown(async () => {
    await producer.shutdown();
    await raw.close();
    await broker.close();
  });
  await producer.start();
  // every stored message of the topic, by (broker, queue, offset)
  const stored = async () => {
    const all = new Map<string, MessageExt>();
    for (const [i, addr] of broker.brokers.entries())
      for (let q = 0; q < 4; q++)
        for (const m of await pullAll(raw, addr, topic, q)) all.set(`broker-${'ab'[i]}/${q}/${m.queueOffset}`, m);
    return all;
  };
  return { producer, topic, stored };
}

function checkOwnResults(t: Test, results: SendResult[], bodies: string[], stored: Map<string, MessageExt>) {
  t.equal(stored.size, bodies.length, 'every message stored exactly once');
  t.equal(new Set([...stored.values()].map((m) => m.msgId)).size, bodies.length, 'with distinct UNIQ_KEYs');
  let own = 0;
  for (const [i, r] of results.entries()) {
    const m = stored.get(`${r.messageQueue.brokerName}/${r.messageQueue.queueId}/${r.queueOffset}`);
    if (m?.msgId === r.msgId && m.body.toString() === bodies[i] && m.offsetMsgId === r.offsetMsgId) own++;
  }
  t.equal(own, bodies.length, "each caller's result names its own stored message (msgId, offsetMsgId, queue, offset)");
}

t.test('autoBatch: 1000 un-awaited sends go as batches; each promise settles with its own SendResult', async (t) => {
  const { producer, topic, stored } = await setup(t, { autoBatch: true });
  const attempts: number[] = [];
  producer.on(ProducerEvents.SEND, (e) => {
    if (e.status === 'SEND_OK') attempts.push(e.messages);
  });
  const bodies = Array.from({ length: 1000 }, (_, i) => `auto-${i}-${'x'.repeat(100)}`);
  const results = await Promise.all(bodies.map((body) => producer.send({ topic, body })));
  t.ok(
    results.every((r) => r.status === 'SEND_OK'),
    'all SEND_OK',
  );
  t.equal(
    attempts.reduce((a, b) => a + b, 0),
    1000,
    'the sends carried 1000 messages',
  );
  // ~106 KB of bodies: batches close at 32 KiB (batchMaxBytes) rather than one send each
  t.ok(attempts.length > 1 && attempts.length < 10, `in ${attempts.length} batches, not one send each`);
  checkOwnResults(t, results, bodies, await stored());
  const delayed = await producer.send({ topic, body: 'later', delayTimeLevel: 1 });
  t.equal(delayed.status, 'SEND_OK', 'a delayed message goes alone, as in Java');
  t.equal(attempts.at(-1), 1);
});

t.test('back-pressure: 200 un-awaited sends hold at most 10 in flight, and all are stored', async (t) => {
  const { producer, topic, stored } = await setup(t, {
    enableBackpressureForAsyncMode: true,
    backPressureForAsyncSendNum: 10,
  });
  const bp = producer['sendPath'].backpressure!;
  const bodies = Array.from({ length: 200 }, (_, i) => `bp-${i}`);
  const pending = bodies.map((body) => producer.send({ topic, body }));
  t.equal(bp.num.inUse, 10, 'ten sends in flight');
  t.equal(bp.num.waiting, 190, 'the other 190 wait for a permit, their messages not yet prepared');
  const results = await Promise.all(pending);
  t.equal(bp.num.inUse, 0, 'every permit given back');
  checkOwnResults(t, results, bodies, await stored());
});

t.test('autoBatch: shutdown() sends what is still gathering and waits for it', async (t) => {
  const { producer, topic, stored } = await setup(t, { autoBatch: true, batchMaxDelayMs: 30_000 });
  const bodies = ['s0', 's1', 's2'];
  const pending = bodies.map((body) => producer.send({ topic, body }));
  await producer.shutdown();
  const results = await Promise.all(pending);
  t.same(
    results.map((r) => r.status),
    ['SEND_OK', 'SEND_OK', 'SEND_OK'],
    'settled by shutdown, not by the 30 s delay',
  );
  checkOwnResults(t, results, bodies, await stored());
});

t.test('back-pressure: sends still waiting for a permit at shutdown() reject with ProducerStateError', async (t) => {
  const { producer, topic } = await setup(t, { backPressureForAsyncSendNum: 10 });
  const pending = Array.from({ length: 40 }, (_, i) => producer.send({ topic, body: `w${i}` }));
  t.equal(producer['sendPath'].backpressure!.num.waiting, 30, 'back-pressure is on by default: 30 wait');
  await producer.shutdown();
  const outcomes = await Promise.allSettled(pending);
  const refused = outcomes.filter(
    (o) => o.status === 'rejected' && (o.reason as Error).name === 'ProducerStateError',
  ).length;
  t.equal(refused, 30, 'the 30 that were waiting are refused, none sent after shutdown');
});
