import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { queueKey } from '../../protocol/internal.js';
import { startBroker } from '../../lib/broker/index.js';
import { ConsumeConcurrentlyStatus, PushConsumer, type PushConsumerOptions } from '../../lib/consumer/index.js';
import { brokerOffsets, createTopic, produce, totalLag, uniqueName, until, withBroker } from './helpers.js';

const fast: Partial<PushConsumerOptions> = {
  consumeFromWhere: 'first',
  rebalanceIntervalMs: 300,
  persistOffsetIntervalMs: 200,
  heartbeatIntervalMs: 300,
  pullTimeDelayMillsWhenException: 200,
};

/** True when the consumers' assignments of `topic` partition its `n` queues: each owned by exactly one. */
function partitioned(consumers: PushConsumer<boolean>[], topic: string, n: number): boolean {
  const owners = new Map<string, number>();
  for (const c of consumers)
    for (const mq of c.assignment())
      if (mq.topic === topic) owners.set(queueKey(mq), (owners.get(queueKey(mq)) ?? 0) + 1);
  return owners.size === n && [...owners.values()].every((x) => x === 1);
}

t.test(
  'three members, one leaves, one joins: every queue owned by exactly one member each time, nothing lost',
  async (t) => {
    const broker = await withBroker();
    t.teardown(() => broker.close());
    const topic = uniqueName('T');
    const group = uniqueName('cg');
    await produce(broker.namesrv, topic, 8, () => ({}), { single: true }); // auto-creates the topic with 4 queues
    const seen = new Set<string>();
    const make = async (): Promise<PushConsumer<boolean>> => {
      const c = new PushConsumer({ consumerGroup: group, namesrvAddr: broker.namesrv, ...fast });
      c.subscribe(topic);
      await c.start((msgs) => {
        for (const m of msgs) seen.add(m.body.toString());
        return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
      });
      return c;
    };
    const [c1, c2, c3] = [await make(), await make(), await make()];
    t.teardown(() => Promise.all([c1.shutdown(), c2.shutdown(), c3.shutdown()]).then(() => undefined));
    await until(() => partitioned([c1, c2, c3], topic, 4), '3 members partition 4 queues');
    t.same(
      [c1, c2, c3].map((c) => c.assignment().filter((q) => q.topic === topic).length).sort(),
      [1, 1, 2],
      'AVG split 2/1/1',
    );
    await produce(broker.namesrv, topic, 300, (i) => ({ body: `a${i}` }), { single: true });
    await c2.shutdown();
    await until(() => partitioned([c1, c3], topic, 4), 'after a member left');
    const c4 = await make();
    t.teardown(() => c4.shutdown());
    await until(() => partitioned([c1, c3, c4], topic, 4), 'after a member joined');
    await produce(broker.namesrv, topic, 300, (i) => ({ body: `b${i}` }), { single: true });
    await until(
      () => [...Array(300).keys()].every((i) => seen.has(`a${i}`) && seen.has(`b${i}`)),
      'every message consumed at least once',
    );
    await until(async () => totalLag(await brokerOffsets(broker.namesrv, topic, group)) === 0, 'lag 0');
    t.pass('lag 0');
  },
);

t.test('two brokers: members own queues on both and consume from both', async (t) => {
  const broker = await withBroker({ brokers: 2, queues: 4 });
  t.teardown(() => broker.close());
  const topic = uniqueName('T');
  const group = uniqueName('cg');
  await createTopic(broker.brokers, topic, 4);
  await produce(broker.namesrv, topic, 80, (i) => ({ body: `m${i}` }), { single: true });
  const byBroker = new Map<string, number>();
  const make = async (): Promise<PushConsumer<boolean>> => {
    const c = new PushConsumer({ consumerGroup: group, namesrvAddr: broker.namesrv, ...fast });
    c.subscribe(topic);
    await c.start((msgs) => {
      for (const m of msgs) byBroker.set(String(m.brokerName), (byBroker.get(String(m.brokerName)) ?? 0) + 1);
      return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
    });
    return c;
  };
  const a = await make();
  const b = await make();
  t.teardown(() => Promise.all([a.shutdown(), b.shutdown()]).then(() => undefined));
  await until(() => partitioned([a, b], topic, 8), '2 members partition 2 x 4 queues');
  const brokersOf = (c: PushConsumer<boolean>) =>
    new Set(
      c
        .assignment()
        .filter((q) => q.topic === topic)
        .map((q) => q.brokerName),
    );
  t.same([...brokersOf(a)].sort(), ['broker-a'], 'AVG gives the first member broker-a (sorted by broker name)');
  t.same([...brokersOf(b)].sort(), ['broker-b']);
  await until(() => (byBroker.get('broker-a') ?? 0) + (byBroker.get('broker-b') ?? 0) === 80, 'all consumed');
  const stored = await brokerOffsets(broker.namesrv, topic, group);
  for (const name of ['broker-a', 'broker-b']) {
    const n = stored.filter((r) => r.brokerName === name).reduce((a, r) => a + r.max, 0);
    t.ok(n > 0, `${name} stores messages`);
    t.equal(byBroker.get(name), n, `every message of ${name} consumed once`);
  }
});

t.test('broker restart while consuming: the consumer reconnects and loses nothing', async (t) => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'rw-consumer-restart-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  let broker = await startBroker({ queues: 4, dataDir });
  const namesrvPort = Number(broker.namesrv.split(':')[1]);
  const brokerPort = Number(broker.broker.split(':')[1]);
  const topic = uniqueName('T');
  const group = uniqueName('cg');
  await produce(broker.namesrv, topic, 200, (i) => ({ body: `a${i}` }), { single: true });
  const seen = new Set<string>();
  const c = new PushConsumer({
    consumerGroup: group,
    namesrvAddr: broker.namesrv,
    ...fast,
    pollNameServerIntervalMs: 300,
  });
  c.subscribe(topic);
  await c.start((msgs) => {
    for (const m of msgs) seen.add(m.body.toString());
    return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
  });
  t.teardown(async () => {
    await c.shutdown();
    await broker.close();
  });
  await until(() => seen.size === 200, 'first half');
  await broker.close();
  await until(() => c.stats().pullErrors > 0, 'a pull failing while the broker is away');
  broker = await startBroker({ queues: 4, dataDir, namesrvPort, brokerPort });
  await produce(broker.namesrv, topic, 200, (i) => ({ body: `b${i}` }), { single: true });
  await until(() => seen.size === 400, 'second half after the restart', 20_000);
  t.ok(c.stats().pullErrors > 0, 'pulls failed while the broker was away');
  await until(async () => totalLag(await brokerOffsets(broker.namesrv, topic, group)) === 0, 'lag 0 after the restart');
  t.pass('nothing lost');
});
