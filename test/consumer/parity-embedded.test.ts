// Every consumer has what the push consumer has, on the embedded broker: SQL92 on the lite pull
// consumer (checked with the broker at start, CHECK_CLIENT_CONFIG), on the SimpleConsumer and on
// the push consumer's POP mode (the POP header's expType); namespaces on the lite pull consumer and
// the SimpleConsumer (resources wrapped on the broker, the application's names in what comes back);
// message trace of the lite pull consumer and both POP paths.
import { setPopMode } from '../support/embedded-broker.js';
import t from 'tap';
import { LitePullConsumer, PushConsumer, SqlFilterRefusedError, type MessageExt } from '../../lib/consumer/index.js';
import { SimpleConsumer } from '../../lib/consumer/pop/simple-consumer.js';
import { litePullConsumerImpl } from '../../lib/consumer/lite-pull/lite-pull-consumer.js';
import { Producer } from '../../lib/producer/index.js';
import { subRecords } from '../trace/read-trace.js';
import { brokerOffsets, produce, uniqueName, until, withBroker } from './helpers.js';

const SQL = { sql: 'a BETWEEN 10 AND 19' };
const matching = Array.from({ length: 10 }, (_, i) => `m${10 + i}`);

async function produceNumbered(namesrv: string, topic: string, n = 30): Promise<void> {
  await produce(namesrv, topic, n, (i) => ({ body: `m${i}`, properties: { a: String(i) } }));
}

async function pollAll(c: LitePullConsumer, want: number): Promise<MessageExt[]> {
  const got: MessageExt[] = [];
  await until(async () => {
    got.push(...(await c.poll(200)));
    return got.length >= want;
  }, `${want} polled`);
  return got;
}

t.test('LitePullConsumer with { sql }: the broker filters, start() fails where the broker refuses SQL92', async (t) => {
  const b = await withBroker({ enablePropertyFilter: true });
  t.teardown(() => b.close());
  const topic = uniqueName('LiteSql');
  await produceNumbered(b.namesrv, topic);
  const c = new LitePullConsumer({
    group: uniqueName('lite_sql'),
    namesrvAddr: b.namesrv,
    consumeFromWhere: 'first',
    subscriptions: { [topic]: SQL },
  });
  await c.start();
  t.teardown(() => c.shutdown());
  const got = await pollAll(c, 10);
  t.same(got.map((m) => m.body.toString()).sort(), [...matching].sort(), 'exactly the matching messages');
  t.equal((await c.poll(100)).length, 0, 'nothing else');

  const off = await withBroker();
  t.teardown(() => off.close());
  await produceNumbered(off.namesrv, topic, 1);
  const refused = new LitePullConsumer({ group: uniqueName('lite_sql'), namesrvAddr: off.namesrv });
  refused.subscribe(topic, SQL);
  await t.rejects(refused.start(), SqlFilterRefusedError, 'CHECK_CLIENT_CONFIG refused: start fails');
  t.equal(refused.state, 'SHUTDOWN');
  t.throws(() => refused.subscribe(topic, { sql: 'a = ' }), { name: 'ConsumerOptionError' });
});

t.test(
  'LitePullConsumer: a { sql } subscribe on a running consumer that the broker refuses is dropped, with a warning',
  async (t) => {
    const b = await withBroker();
    t.teardown(() => b.close());
    const tagTopic = uniqueName('LiteTag');
    const sqlTopic = uniqueName('LiteSqlLate');
    await produceNumbered(b.namesrv, tagTopic, 1);
    await produceNumbered(b.namesrv, sqlTopic, 1);
    const warnings: string[] = [];
    const logger = {
      debug() {},
      info() {},
      warn: (m: string) => warnings.push(m),
      error: (m: string) => warnings.push(m),
    };
    const c = new LitePullConsumer({ group: uniqueName('lite_late'), namesrvAddr: b.namesrv, logger });
    c.subscribe(tagTopic);
    await c.start();
    t.teardown(() => c.shutdown());
    c.subscribe(sqlTopic, SQL);
    await until(() => warnings.some((w) => w.includes(`subscribing to ${sqlTopic} failed`)), 'the warning');
    t.match(
      warnings.find((w) => w.includes(sqlTopic)),
      /enablePropertyFilter/,
    );
    t.notOk(litePullConsumerImpl(c).subscriptionInner.has(sqlTopic), 'the refused subscription is gone');
    t.ok(litePullConsumerImpl(c).subscriptionInner.has(tagTopic), 'the other stays');
  },
);

t.test('LitePullConsumer with a namespace: wrapped on the broker, the application names come back', async (t) => {
  const b = await withBroker();
  t.teardown(() => b.close());
  const topic = uniqueName('LiteNs');
  const group = uniqueName('lite_ns');
  const p = new Producer({ namesrvAddr: b.namesrv, group: uniqueName('pg'), namespace: 'nsA' });
  await p.start();
  for (let i = 0; i < 3; i++) await p.send({ topic, body: `n${i}` });
  await p.shutdown();
  t.ok(b.instances[0]!.topics.get(`nsA%${topic}`), 'the topic lives as nsA%topic');

  const c = new LitePullConsumer({ group, namesrvAddr: b.namesrv, consumeFromWhere: 'first', namespace: 'nsA' });
  c.subscribe(topic);
  await c.start();
  t.teardown(() => c.shutdown());
  const got = await pollAll(c, 3);
  t.same(
    got.map((m) => m.topic),
    [topic, topic, topic],
    'polled messages carry the topic without the namespace',
  );
  await until(() => c.assignment().length > 0, 'queues assigned');
  t.ok(
    c.assignment().every((q) => q.topic === topic),
    'assignment() names the topic as the application did',
  );
  const queues = await c.fetchMessageQueues(topic);
  t.ok(queues.length > 0 && queues.every((q) => q.topic === topic), 'fetchMessageQueues() too');
  await c.commitSync({ persist: true });
  await until(
    async () =>
      (await brokerOffsets(b.namesrv, `nsA%${topic}`, `nsA%${group}`)).reduce(
        (a, o) => a + Math.max(0, o.committed),
        0,
      ) === 3,
    'offsets under nsA%group and nsA%topic',
  );
  // a queue a message came from: one never pulled yet has no offset to give (-1)
  const held = queues.find((q) => got.some((m) => m.queueId === q.queueId && m.brokerName === q.brokerName))!;
  t.ok((await c.committed(held)) >= 1, 'committed() takes the application queue');
});

t.test('SimpleConsumer with { sql } and a namespace: only matches, the application topic', async (t) => {
  const b = await withBroker();
  t.teardown(() => b.close());
  const topic = uniqueName('SimpleSql');
  const p = new Producer({ namesrvAddr: b.namesrv, group: uniqueName('pg'), namespace: 'nsB' });
  await p.start();
  for (let i = 0; i < 30; i++) await p.send({ topic, body: `m${i}`, properties: { a: String(i) } });
  await p.shutdown();
  const c = new SimpleConsumer({
    group: uniqueName('simple_sql'),
    namesrvAddr: b.namesrv,
    topic,
    namespace: 'nsB',
    filterExpression: SQL,
    initMode: 'MIN',
    awaitDurationMs: 0,
  });
  await c.start();
  t.teardown(() => c.shutdown());
  const got: MessageExt[] = [];
  await until(async () => {
    const msgs = await c.receive(32, 60_000);
    got.push(...msgs);
    if (msgs.length > 0) t.equal(await c.ack(msgs), 'OK');
    return got.length >= 10;
  }, '10 received');
  t.same(got.map((m) => m.body.toString()).sort(), [...matching].sort(), 'exactly the matching messages');
  t.ok(
    got.every((m) => m.topic === topic),
    'received messages carry the topic without the namespace',
  );
  t.equal(b.instances[0]!.pop.checkpoints.size, 0, 'every one acked (under nsB%group)');
  t.throws(() => new SimpleConsumer({ group: 'g', namesrvAddr: b.namesrv, topic, filterExpression: { sql: '' } }), {
    name: 'ConsumerOptionError',
  });
});

t.test('the push consumer in POP mode with { sql }: popped by SQL92, each handled message traced', async (t) => {
  const b = await withBroker({ enablePropertyFilter: true, traceTopicEnable: true });
  t.teardown(() => b.close());
  const topic = uniqueName('PopSql');
  const group = uniqueName('pop_sql');
  await produceNumbered(b.namesrv, topic);
  await setPopMode(b.broker, topic, group);
  const seen: string[] = [];
  const consumer = new PushConsumer({
    group,
    namesrvAddr: b.namesrv,
    subscriptions: { [topic]: SQL },
    consumeFromWhere: 'first',
    clientRebalance: false,
    enableTrace: true,
  });
  await consumer.start((msgs) => {
    for (const m of msgs) {
      t.ok(m.properties.POP_CK, 'came by POP');
      seen.push(m.body.toString());
    }
    return 'CONSUME_SUCCESS';
  });
  await until(() => seen.length >= 10, '10 consumed');
  await until(() => b.instances[0]!.pop.checkpoints.size === 0, 'acked');
  await consumer.shutdown();
  t.same([...seen].sort(), [...matching].sort(), 'exactly the matching messages');
  const recs = await subRecords(b.namesrv, (r) => r.filter((x) => x.traceType === 'SubAfter').length >= 10);
  const after = recs.filter((r) => r.traceType === 'SubAfter');
  t.equal(after.length, 10, 'one SubAfter per handler call');
  t.ok(
    after.every((r) => r.success && r.contextCode === 0 && r.groupName === group),
    'success, SUCCESS, the group',
  );
});

t.test('trace of the lite pull consumer and the SimpleConsumer, the group named without the namespace', async (t) => {
  const b = await withBroker({ traceTopicEnable: true });
  t.teardown(() => b.close());
  const topic = uniqueName('TraceLite');
  const p = new Producer({ namesrvAddr: b.namesrv, group: uniqueName('pg'), namespace: 'nsT' });
  await p.start();
  const ids: string[] = [];
  for (let i = 0; i < 4; i++) ids.push((await p.send({ topic, body: `t${i}`, tags: 'TagT' })).msgId);
  await p.shutdown();

  const liteGroup = uniqueName('trace_lite');
  const lite = new LitePullConsumer({
    group: liteGroup,
    namesrvAddr: b.namesrv,
    consumeFromWhere: 'first',
    namespace: 'nsT',
    enableTrace: true,
  });
  lite.subscribe(topic);
  await lite.start();
  await pollAll(lite, 4);
  await lite.shutdown();

  const simpleGroup = uniqueName('trace_simple');
  const simple = new SimpleConsumer({
    group: simpleGroup,
    namesrvAddr: b.namesrv,
    topic,
    namespace: 'nsT',
    initMode: 'MIN',
    awaitDurationMs: 0,
    enableTrace: true,
  });
  await simple.start();
  const got: MessageExt[] = [];
  await until(async () => {
    got.push(...(await simple.receive(2, 60_000)));
    return got.length >= 4;
  }, '4 received');
  t.equal(await simple.ack(got.slice(0, 3) as never), 'OK', 'three acked, one left');
  await simple.shutdown();

  const recs = await subRecords(
    b.namesrv,
    (r) => r.filter((x) => x.traceType === 'SubAfter').length >= 7 && r.some((x) => x.groupName === simpleGroup),
  );
  const of = (group: string, type: string) => recs.filter((r) => r.groupName === group && r.traceType === type);
  const liteIds = (type: string) => of(liteGroup, type).flatMap((r) => r.traceBeans.map((x) => x.msgId));
  t.same(liteIds('SubBefore').sort(), [...ids].sort(), 'lite pull: SubBefore of every polled message');
  t.same(liteIds('SubAfter').sort(), [...ids].sort(), 'lite pull: SubAfter of every polled message');
  t.ok(
    of(liteGroup, 'SubAfter').every((r) => r.success && r.contextCode === 0),
    'lite pull: success, SUCCESS (Java sets no return type)',
  );
  const simpleBefore = of(simpleGroup, 'SubBefore').flatMap((r) => r.traceBeans.map((x) => x.msgId));
  t.same(simpleBefore.sort(), [...ids].sort(), 'SimpleConsumer: SubBefore of every received message');
  const simpleAfter = of(simpleGroup, 'SubAfter');
  t.equal(simpleAfter.length, 3, 'SimpleConsumer: a SubAfter per acked message, none for the one not acked');
  const acked = new Set(got.slice(0, 3).map((m) => m.msgId));
  t.ok(
    simpleAfter.every((r) => r.traceBeans.length === 1 && acked.has(r.traceBeans[0]!.msgId ?? '') && r.success),
    'each for its acked message',
  );
  const requestIds = new Set(of(simpleGroup, 'SubBefore').map((r) => r.requestId));
  t.ok(
    simpleAfter.every((r) => requestIds.has(r.requestId)),
    'sharing the requestId of its SubBefore',
  );
});
