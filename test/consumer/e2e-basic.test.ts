import t from 'tap';
import { PushConsumer, type MessageExt } from '../../lib/consumer/index.js';
import { produce, uniqueName, until, withBroker } from './helpers.js';

t.test('clustering consumer receives every message once and commits the end offsets', async (t) => {
  const broker = await withBroker();
  t.teardown(() => broker.close());
  const topic = uniqueName('T');
  await produce(broker.namesrv, topic, 200);
  const group = uniqueName('cg');
  const seen = new Map<string, MessageExt>();
  const consumer = new PushConsumer({ consumerGroup: group, namesrvAddr: broker.namesrv, persistOffsetIntervalMs: 200, consumeFromWhere: 'first' });
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
  await until(() => consumer.stats().queues.filter((q) => q.topic === topic).every((q) => q.committedOffset === q.pulledOffset), 'committed = pulled');
  await consumer.shutdown();
});
