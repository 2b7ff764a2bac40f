import t from 'tap';
import type { MessageExt } from '../../protocol/index.js';
import { startBroker, type EmbeddedBroker } from '../../lib/broker/index.js';
import { RemotingClient } from '../../lib/remoting/index.js';
import { Producer } from '../../lib/producer/index.js';
import { sleep, systemClock } from '../../lib/clock.js';
import { pullAll } from '../support/index.js';

t.test('produce through the embedded broker and read back with raw pulls', async (t) => {
  let broker: EmbeddedBroker;
  try {
    broker = await startBroker({ brokers: 2, queues: 4 });
  } catch (err) {
    t.fail(`embedded broker did not start: ${(err as Error).message}`);
    return;
  }
  const raw = new RemotingClient();
  const producer = new Producer({ namesrvAddr: broker.namesrv, group: 'e2e_pg', instanceName: `e2e${process.pid}` });
  t.teardown(async () => {
    await producer.shutdown();
    await raw.close();
    await broker.close();
  });
  await producer.start();
  // The instance's first route refresh runs 10 ms after its start (as Java's). Were it to come after
  // the first send, it would replace the template route (both brokers) with the new topic's, on the
  // one broker that stored that send, and the sends below would stay there: it happened once under
  // CI's load. A timer of 20 ms started now fires after that one, which then had nothing to refresh.
  await sleep(systemClock, 20);

  const sent = [];
  for (let i = 0; i < 8; i++)
    sent.push(await producer.send({ topic: 'E2ETopic', body: `m${i}`, tags: i % 2 ? 'odd' : 'even', keys: `k${i}` }));
  const big = Buffer.alloc(10_000, 'z');
  sent.push(await producer.send({ topic: 'E2ETopic', body: big, properties: { who: 'big' } }));
  const batch = await producer.sendBatch([1, 2, 3].map((i) => ({ topic: 'E2ETopic', body: `b${i}` })));
  t.ok(sent.every((r) => r.status === 'SEND_OK'));
  t.equal(batch.status, 'SEND_OK');
  t.equal(batch.offsetMsgId.split(',').length, 3);
  const brokersUsed = new Set(sent.map((r) => r.messageQueue.brokerName));
  t.same([...brokersUsed].sort(), ['broker-a', 'broker-b'], 'the auto-created topic spans both brokers');

  const got: MessageExt[] = [];
  for (const [i, addr] of broker.brokers.entries()) {
    for (let q = 0; q < 4; q++)
      got.push(...(await pullAll(raw, addr, 'E2ETopic', q)).map((m) => ({ ...m, brokerName: `broker-${'ab'[i]}` })));
  }
  t.equal(got.length, 12, 'every message is stored exactly once');
  const byId = new Map(got.map((m) => [m.msgId, m]));
  for (const [i, r] of sent.slice(0, 8).entries()) {
    const m = byId.get(r.msgId);
    t.ok(m, `message ${i} found by its UNIQ_KEY`);
    t.equal(m!.body.toString(), `m${i}`);
    t.equal(m!.tags, i % 2 ? 'odd' : 'even');
    t.same(m!.keys, [`k${i}`], 'keys as an array, kept by a { ...msg } copy');
    t.equal(m!.queueOffset, r.queueOffset);
    t.equal(m!.offsetMsgId, r.offsetMsgId, "the broker's id matches the one the send returned");
    t.equal(m!.brokerName, r.messageQueue.brokerName);
  }
  const bigMsg = byId.get(sent[8]!.msgId)!;
  t.same(bigMsg.body, big, 'the compressed body comes back inflated');
  t.equal(bigMsg.properties.who, 'big');
  for (const id of batch.msgId.split(',')) t.ok(byId.has(id), 'batch member stored with its own UNIQ_KEY');
});
