// The operator commands beside mqadmin's reads (AdminClient and `rocketwire admin`) against the
// embedded broker (two brokers): a group switched to POP consumes by POP, broker config read and
// written (black list refused), producer connections, a broker's write permission wiped and added
// on the name server (sends move to the other broker), a topic's perm, offsets cloned from another
// group, a backlog skipped; and the bad input a user meets.
import t from 'tap';
import { AdminClient } from '../../lib/admin/index.js';
import { PushConsumer } from '../../lib/consumer/index.js';
import { Producer } from '../../lib/producer/index.js';
import type { MessageExt } from '../../protocol/index.js';
import { runCli, type CliRun } from '../cli/run-in-process.js';
import { produce, uniqueName, until, withBroker } from '../consumer/helpers.js';

const broker = await withBroker({ brokers: 2 });
t.teardown(() => broker.close());
const ns = broker.namesrv;
const admin = new AdminClient({ namesrvAddr: ns });
t.teardown(() => admin.close());

const cli = (...args: string[]): Promise<CliRun> => runCli(['admin', ...args, '--namesrv', ns]);
async function json<T>(...args: string[]): Promise<T> {
  const r = await cli(...args, '--json');
  if (r.code !== 0) throw new Error(`admin ${args.join(' ')}: exit ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout) as T;
}

/** Consumes `topic` from the first offset with `group` until `n` messages came; returns them. */
async function consumeAll(
  group: string,
  topic: string,
  n: number,
  extra: Record<string, unknown> = {},
): Promise<{ seen: Map<string, MessageExt>; consumer: PushConsumer }> {
  const seen = new Map<string, MessageExt>();
  const consumer = new PushConsumer({
    consumerGroup: group,
    namesrvAddr: ns,
    subscriptions: { [topic]: '*' },
    consumeFromWhere: 'first',
    persistOffsetIntervalMs: 200,
    ...extra,
  });
  await consumer.start((msgs) => {
    for (const m of msgs) seen.set(m.body.toString(), m);
    return 'CONSUME_SUCCESS';
  });
  await until(
    () => seen.size >= n,
    () => `${n} messages consumed by ${group} (${seen.size} so far)`,
  );
  return { seen, consumer };
}

t.test('group consume-mode POP: a clientRebalance=false consumer then pops; PULL switches it back', async (t) => {
  const topic = uniqueName('OpsPop');
  const group = uniqueName('cg_pop');
  // on broker-a only: the embedded broker's QUERY_ASSIGNMENT assigns POP on its own queues only
  await admin.createOrUpdateTopic({ topic, readQueueNums: 2, writeQueueNums: 2, brokerAddr: broker.brokers[0] });
  await produce(ns, topic, 10, (i) => ({ body: `p-${i}` }));
  const r = await json<{ brokers: string[]; mode: string }>(
    'group',
    'consume-mode',
    '--group',
    group,
    '--topic',
    topic,
    '--mode',
    'pop',
  );
  t.same([r.mode, r.brokers], ['POP', [broker.brokers[0]]], "written on the topic's master");
  const text = await cli('group', 'consume-mode', '--group', group, '--topic', topic, '--mode', 'POP');
  t.match(text.stdout, `topic[${topic}] group[${group}] consume mode[POP] popShareQueueNum[0]`);
  const { seen, consumer } = await consumeAll(group, topic, 10, { clientRebalance: false });
  t.teardown(() => consumer.shutdown());
  t.ok(
    [...seen.values()].every((m) => m.properties.POP_CK),
    'every message came by POP',
  );
  t.equal(consumer.stats().queues.filter((q) => q.topic === topic).length, 0, 'no queue pulled');
  await admin.setConsumeMode(group, topic, 'PULL');
  t.equal(broker.instances[0]!.pop.modes.get(topic, group)?.mode, 'PULL', 'switched back');
  const bad = await cli('group', 'consume-mode', '--group', group, '--topic', topic, '--mode', 'PUSH');
  t.same([bad.code, bad.stderr.trim()], [2, 'rocketwire admin: --mode must be POP or PULL, got "PUSH"']);
  const unknown = await cli('group', 'consume-mode', '--group', group, '--topic', 'NoSuchTopicOps', '--mode', 'POP');
  t.equal(unknown.code, 1);
  t.match(unknown.stderr, 'unknown topic NoSuchTopicOps');
});

t.test('broker config: read, a key updated, an unknown key ignored, a black-listed key refused', async (t) => {
  const [a] = await admin.brokerConfig({ brokerAddr: broker.brokers[0] });
  t.same(
    [a!.brokerName, a!.config.brokerName, a!.config.listenPort, a!.config.brokerClusterName],
    ['broker-a', 'broker-a', broker.brokers[0]!.split(':')[1], 'DefaultCluster'],
  );
  const all = await json<Array<{ addr: string; config: Record<string, string> }>>('broker', 'config');
  t.same(
    all.map((b) => b.addr),
    broker.brokers,
    'every broker of every cluster',
  );
  const upd = await cli('broker', 'update-config', '--key', 'maxMessageSize', '--value', '1048576');
  t.equal(upd.code, 0, upd.stderr);
  t.same(
    upd.stdout.trim().split('\n'),
    broker.brokers.map((b) => `update broker config success, ${b}`),
  );
  const after = await json<Array<{ config: Record<string, string>; version: string }>>(
    'broker',
    'config',
    '--key',
    'maxMessageSize',
  );
  t.same(
    after.map((b) => b.config),
    [{ maxMessageSize: '1048576' }, { maxMessageSize: '1048576' }],
  );
  t.equal((JSON.parse(after[0]!.version) as { counter: number }).counter, 1, 'the data version moved on');
  await admin.updateBrokerConfig({ noSuchKeyAtAll: 'x' }, { brokerAddr: broker.brokers[0] });
  t.notOk('noSuchKeyAtAll' in (await admin.brokerConfig({ brokerAddr: broker.brokers[0] }))[0]!.config, 'ignored');
  await t.rejects(admin.updateBrokerConfig({ brokerConfigPath: '/tmp/x' }, { brokerAddr: broker.brokers[0] }), {
    name: 'AdminPermissionError',
    remark: 'Can not update config in black list.',
  });
  const text = await cli('broker', 'config', '--broker', broker.brokers[1]!);
  t.match(text.stdout, /^brokerName {40}= {2}broker-b$/m, "mqadmin's layout");
});

t.test('producer connection lists the group online, an offline group is one line', async (t) => {
  const topic = uniqueName('OpsProd');
  const group = uniqueName('pg_ops');
  await admin.createOrUpdateTopic({ topic, readQueueNums: 2, writeQueueNums: 2 });
  const producer = new Producer({ namesrvAddr: ns, group });
  await producer.start();
  t.teardown(() => producer.shutdown());
  await producer.send({ topic, body: 'x' });
  const c = await json<{ clients: Array<{ clientId: string; clientAddr: string; language: string }> }>(
    'producer',
    'connection',
    '--group',
    group,
    '--topic',
    topic,
  );
  t.equal(c.clients.length, 1, 'one producer');
  t.match(c.clients[0], { clientAddr: /^127\.0\.0\.1:\d+$/, language: 'JAVA', clientId: /@/ });
  const off = await cli('producer', 'connection', '--group', 'pg_nobody_here', '--topic', topic);
  t.same([off.code, off.stderr.trim()], [1, 'rocketwire admin: no producer of group pg_nobody_here is online']);
});

t.test('wipe-write-perm moves sends to the other broker; add-write-perm brings them back', async (t) => {
  const topic = uniqueName('OpsWipe');
  await admin.createOrUpdateTopic({ topic, readQueueNums: 2, writeQueueNums: 2 });
  const wiped = await json<{ nameServers: Array<{ namesrvAddr: string; topicCount: number }> }>(
    'broker',
    'wipe-write-perm',
    '--broker-name',
    'broker-a',
  );
  t.equal(wiped.nameServers.length, 1);
  t.ok(wiped.nameServers[0]!.topicCount >= 1, 'broker-a routes changed');
  const route = await admin.topicRouteBrokers(topic);
  t.same(
    route.map((b) => [b.brokerName, b.perm]),
    [
      ['broker-a', 4],
      ['broker-b', 6],
    ],
  );
  const producer = new Producer({ namesrvAddr: ns, group: uniqueName('pg_wipe') });
  await producer.start();
  t.teardown(() => producer.shutdown());
  const brokers = new Set<string>();
  for (let i = 0; i < 8; i++) brokers.add((await producer.send({ topic, body: `w-${i}` })).messageQueue.brokerName);
  t.same([...brokers], ['broker-b'], 'every send went to broker-b');
  const added = await cli('broker', 'add-write-perm', '--broker-name', 'broker-a');
  t.equal(added.code, 0, added.stderr);
  t.match(added.stdout, 'added write perm of broker[broker-a] on 1 name server(s)');
  t.same(
    (await admin.topicRouteBrokers(topic)).map((b) => b.perm),
    [6, 6],
  );
});

t.test('topic perm: read-only refuses sends, one broker left alone when unchanged, bad perm refused', async (t) => {
  const topic = uniqueName('OpsPerm');
  await admin.createOrUpdateTopic({ topic, readQueueNums: 3, writeQueueNums: 3 });
  const r = await cli('topic', 'perm', '--topic', topic, '--perm', '4');
  t.equal(r.code, 0, r.stderr);
  t.same(
    r.stdout.trim().split('\n'),
    broker.brokers.map((b) => `update topic perm from 6 to 4 in ${b} success.`),
  );
  t.same(
    (await admin.topicRouteBrokers(topic)).map((b) => [b.perm, b.readQueueNums, b.writeQueueNums]),
    [
      [4, 3, 3],
      [4, 3, 3],
    ],
  );
  const producer = new Producer({ namesrvAddr: ns, group: uniqueName('pg_perm'), retryTimesWhenSendFailed: 0 });
  await producer.start();
  t.teardown(() => producer.shutdown());
  await t.rejects(producer.send({ topic, body: 'no' }), 'a read-only topic takes no message');
  const same = await admin.updateTopicPerm(topic, 4, { brokerAddr: broker.brokers[0] });
  t.same(
    same.map((x) => x.changed),
    [false],
    'new perm equals to the old one',
  );
  await admin.updateTopicPerm(topic, 6);
  t.same(
    (await admin.topicRouteBrokers(topic)).map((b) => b.perm),
    [6, 6],
  );
  const bad = await cli('topic', 'perm', '--topic', topic, '--perm', '9');
  t.same([bad.code, bad.stderr.trim()], [2, 'rocketwire admin: --perm must be an integer from 0 to 7, got 9']);
  await t.rejects(admin.updateTopicPerm(topic, 6, { brokerAddr: '127.0.0.1:1' }), {
    name: 'AdminArgumentError',
    option: 'brokerAddr',
  });
});

t.test("offset clone gives a new group another's offsets; offset skip jumps a backlog", async (t) => {
  const topic = uniqueName('OpsClone');
  const src = uniqueName('cg_src');
  const dest = uniqueName('cg_dest');
  await admin.createOrUpdateTopic({ topic, readQueueNums: 2, writeQueueNums: 2 });
  await produce(ns, topic, 12, (i) => ({ body: `c-${i}` }));
  const { consumer } = await consumeAll(src, topic, 12);
  await until(async () => (await admin.consumerProgress(src, topic)).totalLag === 0, 'source committed');
  await consumer.shutdown();
  const r = await cli('offset', 'clone', '--from', src, '--to', dest, '--topic', topic, '--offline');
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, `clone group offset success. srcGroup[${src}], destGroup=[${dest}], topic[${topic}]`);
  // the destination group, started from "first", sees only what comes after the cloned offsets
  await produce(ns, topic, 3, (i) => ({ body: `new-${i}` }));
  const d = await consumeAll(dest, topic, 3);
  t.teardown(() => d.consumer.shutdown());
  t.same([...d.seen.keys()].sort(), ['new-0', 'new-1', 'new-2'], 'nothing before the cloned offsets');
  const offsets = (g: string) =>
    admin.consumerProgress(g, topic).then((p) => p.queues.map((q) => [q.brokerName, q.queueId, q.brokerOffset]));
  t.same(await offsets(dest), await offsets(src), 'both groups on the same queues');
  // a backlog for the stopped source group, skipped: a consumer started later sees only newer messages
  await produce(ns, topic, 6, (i) => ({ body: `old-${i}` }));
  t.equal((await admin.consumerProgress(src, topic)).totalLag, 9, 'the three new messages and six more');
  const skipped = await json<{ queues: Array<{ offset: number }> }>('offset', 'skip', '--group', src, '--topic', topic);
  t.equal(
    skipped.queues.reduce((a, q) => a + q.offset, 0),
    21,
    'every queue at its max offset',
  );
  t.equal((await admin.consumerProgress(src, topic)).totalLag, 0, 'no lag left');
  const unknown = await cli('offset', 'clone', '--from', 'cg_never_seen', '--to', dest, '--topic', topic);
  t.equal(unknown.code, 1);
  t.match(unknown.stderr, 'unknown consumer group cg_never_seen');
});
