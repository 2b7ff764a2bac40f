import t from 'tap';
import { PushConsumer, type MessageExt } from '../../lib/consumer/index.js';
import { brokerOffsets, produce, totalLag, uniqueName, until, withBroker } from './helpers.js';

t.test('clustering consumer receives every message once and commits the end offsets', async (t) => {
  const broker = await withBroker();
  t.teardown(() => broker.close());
  const topic = uniqueName('T');
  await produce(broker.namesrv, topic, 200);
  const group = uniqueName('cg');
  const seen = new Map<string, MessageExt>();
  const consumer = new PushConsumer({
    consumerGroup: group,
    namesrvAddr: broker.namesrv,
    persistOffsetIntervalMs: 200,
    consumeFromWhere: 'first',
  });
  consumer.subscribe(topic, '*');
  await consumer.start((msgs) => {
    for (const m of msgs) seen.set(m.body.toString(), m);
    return 'CONSUME_SUCCESS';
  });
  t.teardown(() => consumer.shutdown());
  await until(() => seen.size === 200, '200 messages');
  const s = consumer.stats();
  t.equal(s.messagesConsumed, 200);
  t.equal(s.queues.filter((q) => q.topic === topic).length, 4, 'holds the 4 queues');
  // Shutdown flushes every held queue's offset (oneway, on the connection that then carries
  // UNREGISTER_CLIENT, so the broker has stored them once shutdown resolves). Waiting for the
  // in-memory offsets instead raced an empty queue's first commit, which only comes when its 15 s
  // long poll returns (a queue the producer's batches skipped has no offset until then).
  await consumer.shutdown();
  const rows = await brokerOffsets(broker.namesrv, topic, group);
  t.equal(
    rows.reduce((a, r) => a + r.max, 0),
    200,
    'the broker holds the 200 messages',
  );
  for (const r of rows.filter((r) => r.max > 0))
    t.equal(r.committed, r.max, `queue ${r.queueId}: committed = end offset`);
  t.equal(totalLag(rows), 0, 'no lag left');
});
