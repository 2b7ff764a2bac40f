// rocketwire admin against the embedded broker (two brokers): every subcommand, as a table and with
// --json, and the bad input a user meets (an unknown topic or group is one line naming it, exit 1; a
// write the broker refuses with NO_PERMISSION says so).
import t from 'tap';
import { ConsumeConcurrentlyStatus, PushConsumer } from '../../lib/consumer/index.js';
import { Producer } from '../../lib/producer/index.js';
import { createResponse, RequestCode, ResponseCode } from '../../protocol/index.js';
import { startFakeNode } from '../client/fake-cluster.js';
import { clockedConsumer } from '../consumer/broker-spy.js';
import { FAST_DELAY_LEVELS, produce, uniqueName, until, withBroker } from '../consumer/helpers.js';
import { runCli, type CliRun } from '../cli/run-in-process.js';

const { CONSUME_SUCCESS, RECONSUME_LATER } = ConsumeConcurrentlyStatus;

const broker = await withBroker({ brokers: 2, messageDelayLevel: FAST_DELAY_LEVELS });
t.teardown(() => broker.close());
const ns = broker.namesrv;

const admin = (...args: string[]): Promise<CliRun> => runCli(['admin', ...args, '--namesrv', ns]);
async function json<T>(...args: string[]): Promise<T> {
  const r = await admin(...args, '--json');
  if (r.code !== 0) throw new Error(`admin ${args.join(' ')}: exit ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout) as T;
}
/** The cells of a table's data rows (header dropped). */
function rows(text: string): string[][] {
  return text
    .trim()
    .split('\n')
    .slice(1)
    .map((l) => l.trim().split(/\s{2,}/));
}

t.test('cluster lists both brokers with role, address and version', async (t) => {
  const r = await admin('cluster');
  t.equal(r.code, 0);
  t.match(r.stdout, /^cluster\s+brokerName\s+brokerId\s+role\s+addr\s+version\n/);
  t.same(
    rows(r.stdout).map((c) => [c[1], c[3], c[4], c[5]]),
    [
      ['broker-a', 'MASTER', broker.brokers[0], 'V4_9_8'],
      ['broker-b', 'MASTER', broker.brokers[1], 'V4_9_8'],
    ],
  );
  const j =
    await json<Array<{ brokerName: string; brokerId: number; addr: string; version: string; clusterName: string }>>(
      'cluster',
    );
  t.same(
    j.map((b) => [b.clusterName, b.brokerName, b.brokerId, b.addr, b.version]),
    [
      ['DefaultCluster', 'broker-a', 0, broker.brokers[0], 'V4_9_8'],
      ['DefaultCluster', 'broker-b', 0, broker.brokers[1], 'V4_9_8'],
    ],
  );
});

t.test('topic create, list, route, status, update and delete', async (t) => {
  const topic = uniqueName('AdmTopic');
  const created = await admin('topic', 'create', '--topic', topic, '--read-queues', '3', '--write-queues', '3');
  t.equal(created.code, 0, created.stderr);
  t.equal(
    created.stdout.split('\n').filter((l) => l.startsWith(`create topic ${topic} on`)).length,
    2,
    'created on both masters',
  );
  t.ok((await json<string[]>('topic', 'list')).includes(topic), 'listed');
  t.match((await admin('topic', 'list')).stdout, new RegExp(`^${topic}$`, 'm'));
  const route = await json<
    Array<{ brokerName: string; readQueueNums: number; writeQueueNums: number; perm: number; permText: string }>
  >('topic', 'route', '--topic', topic);
  t.same(
    route.map((b) => [b.brokerName, b.readQueueNums, b.writeQueueNums, b.perm, b.permText]),
    [
      ['broker-a', 3, 3, 6, 'RW-'],
      ['broker-b', 3, 3, 6, 'RW-'],
    ],
  );
  t.match(
    (await admin('topic', 'route', '--topic', topic)).stdout,
    /broker-a\s+DefaultCluster\s+127\.0\.0\.1:\d+\s+3\s+3\s+6 \(RW-\)/,
  );

  await produce(ns, topic, 30);
  const status = await json<
    Array<{ brokerName: string; queueId: number; minOffset: number; maxOffset: number; lastUpdateTimestamp: number }>
  >('topic', 'status', '--topic', topic);
  t.equal(status.length, 6, 'three queues on each broker');
  t.equal(
    status.reduce((a, q) => a + q.maxOffset, 0),
    30,
    'the max offsets add up to the messages sent',
  );
  t.ok(status.every((q) => q.minOffset === 0 && (q.maxOffset === 0 || q.lastUpdateTimestamp > 0)));
  const statusTable = rows((await admin('topic', 'status', '--topic', topic)).stdout);
  t.same(
    statusTable.map((c) => Number(c[3])),
    status.map((q) => q.maxOffset),
    'the table shows the same max offsets',
  );

  const updated = await admin('topic', 'update', '--topic', topic, '--perm', '4', '--write-queues', '2');
  t.equal(updated.code, 0, updated.stderr);
  const after = await json<Array<{ readQueueNums: number; writeQueueNums: number; perm: number }>>(
    'topic',
    'route',
    '--topic',
    topic,
  );
  t.same(
    after.map((b) => [b.readQueueNums, b.writeQueueNums, b.perm]),
    [
      [3, 2, 4],
      [3, 2, 4],
    ],
    'read queues kept, write queues and perm changed',
  );

  const deleted = await json<{ topic: string; brokers: string[] }>('topic', 'delete', '--topic', topic);
  t.same(deleted.brokers, broker.brokers);
  t.notOk((await json<string[]>('topic', 'list')).includes(topic), 'gone from the name server');
  const system = await admin('topic', 'delete', '--topic', 'TBW102');
  t.equal(system.code, 1);
  t.match(
    system.stderr,
    /^rocketwire admin: DELETE_TOPIC_IN_BROKER failed from 127\.0\.0\.1:\d+: INVALID_PARAMETER \(29\): The topic\[TBW102\] is conflict with system topic\.\n$/,
    'a system topic is not deleted, as Java refuses it',
  );
  t.ok((await json<string[]>('topic', 'list')).includes('TBW102'));
  const gone = await admin('topic', 'status', '--topic', topic);
  t.equal(gone.code, 1);
  t.equal(gone.stderr, `rocketwire admin: unknown topic ${topic}\n`);
});

t.test('message id, key and offset print headers, properties and body', async (t) => {
  const topic = uniqueName('AdmMsg');
  await admin('topic', 'create', '--topic', topic, '--read-queues', '2', '--write-queues', '2');
  const producer = new Producer({ namesrvAddr: ns, group: uniqueName('pg') });
  await producer.start();
  const sent = [];
  for (let i = 0; i < 6; i++)
    sent.push(
      await producer.send({
        topic,
        body: `body-${i}`,
        keys: [`order-${i % 3}`, 'shared'],
        tags: 'TagA',
        properties: { color: i % 2 ? 'red' : 'blue' },
      }),
    );
  await producer.shutdown();

  type Found = {
    topic: string;
    msgId: string;
    offsetMsgId: string;
    queueId: number;
    queueOffset: number;
    brokerName: string;
    body: string;
    keys: string;
    tags: string;
    properties: Record<string, string>;
  };
  const byKey = await json<Found[]>('message', 'key', '--topic', topic, '--key', 'order-1');
  t.same(byKey.map((m) => m.body).sort(), ['body-1', 'body-4'], 'exactly the two messages with that key');
  t.ok(
    byKey.every((m) => m.tags === 'TagA' && m.properties.color !== undefined && m.keys.split(' ').includes('order-1')),
  );
  t.equal(
    (await json<Found[]>('message', 'key', '--topic', topic, '--key', 'shared')).length,
    6,
    'a key every message has, over both brokers',
  );
  const keyTable = await admin('message', 'key', '--topic', topic, '--key', 'order-2');
  t.match(keyTable.stdout, /Message Body\s+body-2\n/);
  t.match(keyTable.stdout, /Properties\s+.*color=blue/);

  const first = sent[0]!;
  const byOffsetId = await json<Found[]>('message', 'id', '--id', first.offsetMsgId);
  t.equal(byOffsetId.length, 1);
  t.equal(byOffsetId[0]!.body, 'body-0');
  t.equal(byOffsetId[0]!.msgId, first.msgId, 'the UNIQ_KEY msgId the producer returned');
  const byUniq = await json<Found[]>('message', 'id', '--id', first.msgId, '--topic', topic);
  t.same(
    byUniq.map((m) => m.offsetMsgId),
    [first.offsetMsgId],
    "the producer's msgId (UNIQ_KEY) with --topic",
  );
  t.match(
    (await admin('message', 'id', '--id', first.offsetMsgId)).stdout,
    new RegExp(`OffsetID\\s+${first.offsetMsgId}\\n`),
  );

  const q = first.messageQueue;
  const atOffset = await json<Found[]>(
    'message',
    'offset',
    '--topic',
    topic,
    '--broker',
    q.brokerName,
    '--queue',
    String(q.queueId),
    '--offset',
    String(first.queueOffset),
  );
  t.same(
    atOffset.map((m) => [m.body, m.brokerName, m.queueId, m.queueOffset]),
    [['body-0', q.brokerName, q.queueId, first.queueOffset]],
  );
  const past = await admin(
    'message',
    'offset',
    '--topic',
    topic,
    '--broker',
    q.brokerName,
    '--queue',
    String(q.queueId),
    '--offset',
    '999',
  );
  t.equal(past.code, 1);
  t.match(past.stderr, /^rocketwire admin: no message found for .* offset 999\n$/);
  const noKey = await admin('message', 'key', '--topic', topic, '--key', 'nothing-has-this');
  t.equal(noKey.code, 0);
  t.same(
    JSON.parse((await admin('message', 'key', '--topic', topic, '--key', 'nothing-has-this', '--json')).stdout),
    [],
  );
});

t.test('group progress, connection, status, list and offset reset for a running and a stopped group', async (t) => {
  const topic = uniqueName('AdmGrp');
  const group = uniqueName('admcg');
  await admin('topic', 'create', '--topic', topic, '--read-queues', '2', '--write-queues', '2');
  await produce(ns, topic, 40);
  let consumed = 0;
  const consumer = new PushConsumer({
    consumerGroup: group,
    namesrvAddr: ns,
    consumeFromWhere: 'first',
    persistOffsetIntervalMs: 100,
  });
  consumer.subscribe(topic, '*');
  await consumer.start((msgs) => {
    consumed += msgs.length;
    return CONSUME_SUCCESS;
  });
  await until(() => consumed >= 40, '40 consumed');
  type Progress = {
    totalLag: number;
    queues: Array<{
      topic: string;
      brokerName: string;
      queueId: number;
      brokerOffset: number;
      consumerOffset: number;
      lag: number;
      lastTimestamp: number;
    }>;
  };
  await until(
    async () => (await json<Progress>('group', 'progress', '--group', group, '--topic', topic)).totalLag === 0,
    'offsets committed',
  );
  const p = await json<Progress>('group', 'progress', '--group', group, '--topic', topic);
  t.equal(p.queues.length, 4, 'two queues on each broker');
  t.equal(
    p.queues.reduce((a, q) => a + q.brokerOffset, 0),
    40,
  );
  t.ok(
    p.queues.every(
      (q) => q.lag === 0 && q.consumerOffset === q.brokerOffset && (q.brokerOffset === 0 || q.lastTimestamp > 0),
    ),
  );
  const pt = await admin('group', 'progress', '--group', group, '--topic', topic);
  t.match(pt.stdout, /Consume Diff Total: 0\n/);
  t.equal(rows(pt.stdout.split('\n\n')[0]!).length, 4);

  const conn = await json<{
    clients: Array<{ clientId: string; language: string; version: number }>;
    subscriptionTable: Record<string, { subString: string }>;
    consumeType: string;
    messageModel: string;
    consumeFromWhere: string;
  }>('group', 'connection', '--group', group);
  t.same(
    conn.clients.map((c) => c.clientId),
    [consumer.clientId],
  );
  t.equal(conn.clients[0]!.language, 'JAVA');
  t.ok(conn.clients[0]!.version > 0);
  t.equal(conn.subscriptionTable[topic]?.subString, '*');
  t.same(
    [conn.consumeType, conn.messageModel, conn.consumeFromWhere],
    ['CONSUME_PASSIVELY', 'CLUSTERING', 'CONSUME_FROM_FIRST_OFFSET'],
  );
  t.match(
    (await admin('group', 'connection', '--group', group)).stdout,
    new RegExp(`${consumer.clientId.replace(/[.#]/g, '\\$&')}\\s+127\\.0\\.0\\.1:\\d+\\s+JAVA`),
  );

  const status = await json<
    Array<{ clientId: string; info: { properties: Record<string, string>; mqTable: unknown[] } }>
  >('group', 'status', '--group', group);
  t.same(
    status.map((s) => s.clientId),
    [consumer.clientId],
  );
  t.equal(status[0]!.info.properties.PROP_CONSUME_TYPE, 'CONSUME_PASSIVELY');
  t.equal(
    status[0]!.info.mqTable.filter((e) => (e as [{ topic: string }])[0].topic === topic).length,
    4,
    'it holds the four queues',
  );
  t.match(
    (await admin('group', 'status', '--group', group)).stdout,
    new RegExp(`^${consumer.clientId.replace(/[.#]/g, '\\$&')}\\s+CONSUME_PASSIVELY`, 'm'),
  );

  t.ok(
    (await json<Array<{ groupName: string }>>('group', 'list')).some((g) => g.groupName === group),
    'group list has it',
  );

  await consumer.shutdown();

  // a stopped group: offsets written by the broker, seen by progress
  const toFirst = await admin('offset', 'reset', '--group', group, '--topic', topic, '--to', 'first');
  t.equal(toFirst.code, 0, toFirst.stderr);
  t.same(
    rows(toFirst.stdout).map((c) => c[2]),
    ['0', '0', '0', '0'],
  );
  t.equal(
    (await json<Progress>('group', 'progress', '--group', group, '--topic', topic)).totalLag,
    40,
    'stopped group: all 40 to consume again',
  );
  const cut = Date.now() + 1;
  await new Promise((r) => setTimeout(r, 5));
  await produce(ns, topic, 8);
  await json('offset', 'reset', '--group', group, '--topic', topic, '--to', `timestamp:${cut}`);
  t.equal(
    (await json<Progress>('group', 'progress', '--group', group, '--topic', topic)).totalLag,
    8,
    'by time: only the messages stored after the cut',
  );
  await json('offset', 'reset', '--group', group, '--topic', topic, '--to', 'last');
  t.equal(
    (await json<Progress>('group', 'progress', '--group', group, '--topic', topic)).totalLag,
    0,
    'last: nothing left',
  );
  const badTo = await admin('offset', 'reset', '--group', group, '--topic', topic, '--to', 'yesterday');
  t.equal(badTo.code, 2);
  t.equal(badTo.stderr, 'rocketwire admin: --to must be first, last or timestamp:MS, got "yesterday"\n');
});

t.test('offset reset of a running group: the consumer takes every message again', async (t) => {
  // The consumer on a ManualClock: it settles 10 s after RESET_CONSUMER_CLIENT_OFFSET, as Java's does.
  let consumed = 0;
  const s = await clockedConsumer(t, { messages: 20, queues: 2 }, (msgs) => {
    consumed += msgs.length;
    return CONSUME_SUCCESS;
  });
  await until(() => consumed === 20, '20 consumed');
  const run = (...args: string[]): Promise<CliRun> =>
    runCli(['admin', ...args, '--namesrv', s.broker.namesrv, '--json']);
  const reset = await run('offset', 'reset', '--group', s.group, '--topic', s.topic, '--to', 'first');
  t.equal(reset.code, 0, reset.stderr);
  t.same(
    (JSON.parse(reset.stdout) as { queues: Array<{ offset: number }> }).queues.map((q) => q.offset),
    [0, 0],
  );
  await s.quiet();
  t.equal(consumed, 20, 'nothing again before the consumer settled');
  await until(() => {
    s.clock.advance(1000);
    return consumed === 40;
  }, 'every message consumed again after the reset');
  await until(async () => {
    s.clock.advance(1000);
    const p = await run('group', 'progress', '--group', s.group, '--topic', s.topic);
    return p.code === 0 && (JSON.parse(p.stdout) as { totalLag: number }).totalLag === 0;
  }, 'committed again');
});

t.test('group create and delete', async (t) => {
  const group = uniqueName('admnew');
  const made = await json<{ brokers: string[] }>(
    'group',
    'create',
    '--group',
    group,
    '--retry-max-times',
    '3',
    '--orderly',
  );
  t.same(made.brokers, broker.brokers);
  const listed = (
    await json<Array<{ groupName: string; retryMaxTimes: number; consumeMessageOrderly: boolean }>>('group', 'list')
  ).find((g) => g.groupName === group);
  t.same([listed?.retryMaxTimes, listed?.consumeMessageOrderly], [3, true]);
  t.match((await admin('group', 'list')).stdout, new RegExp(`^${group}\\s+true\\s+true\\s+true\\s+1\\s+3$`, 'm'));
  const del = await admin('group', 'delete', '--group', group);
  t.equal(del.code, 0, del.stderr);
  t.notOk(
    (await json<Array<{ groupName: string }>>('group', 'list')).some((g) => g.groupName === group),
    'gone',
  );
  const again = await admin('group', 'delete', '--group', group);
  t.equal(again.code, 1);
  t.equal(again.stderr, `rocketwire admin: unknown consumer group ${group}\n`);
});

t.test('dlq resend sends dead letters back to their topic', async (t) => {
  const topic = uniqueName('AdmDlq');
  const group = uniqueName('admdlq');
  await admin('topic', 'create', '--topic', topic, '--read-queues', '1', '--write-queues', '1');
  await produce(ns, topic, 3, (i) => ({ body: `dead-${i}`, keys: `dk-${i}` }));
  const seen: string[] = [];
  let failing = true;
  const consumer = new PushConsumer({ consumerGroup: group, namesrvAddr: ns, consumeFromWhere: 'first' });
  consumer.subscribe(topic);
  await consumer.start((msgs, ctx) => {
    seen.push(...msgs.map((m) => m.body.toString()));
    if (failing) {
      ctx.delayLevelWhenNextConsume = -1;
      return RECONSUME_LATER;
    }
    return CONSUME_SUCCESS;
  });
  t.teardown(() => consumer.shutdown());
  await until(async () => {
    const s = await admin('topic', 'status', '--topic', `%DLQ%${group}`, '--json');
    return (
      s.code === 0 && (JSON.parse(s.stdout) as Array<{ maxOffset: number }>).reduce((a, q) => a + q.maxOffset, 0) === 3
    );
  }, 'three messages in the DLQ');
  failing = false;
  const r = await json<{ read: number; resent: Record<string, number>; skipped: number }>(
    'dlq',
    'resend',
    '--group',
    group,
  );
  t.same(r, { ...r, read: 3, resent: { [topic]: 3 }, skipped: 0 });
  await until(() => seen.filter((b) => b.startsWith('dead-')).length >= 6, 'the group consumes the three again');
  t.same(seen.slice(3).sort(), ['dead-0', 'dead-1', 'dead-2']);
  const byKey = await json<Array<{ body: string }>>('message', 'key', '--topic', topic, '--key', 'dk-1');
  t.equal(byKey.length, 2, 'the re-sent message keeps its key');
  const table = await admin('dlq', 'resend', '--group', group, '--max', '1');
  t.match(table.stdout, new RegExp(`^${topic}\\s+1$`, 'm'));
  t.match(table.stdout, /read 1 from %DLQ%/);
});

t.test('an unknown topic or group is one line naming it, exit 1', async (t) => {
  const topic = 'NoSuchTopic_adm';
  const group = 'no_such_group_adm';
  const cases: Array<[string[], string]> = [
    [['topic', 'route', '--topic', topic], `unknown topic ${topic}`],
    [['topic', 'status', '--topic', topic], `unknown topic ${topic}`],
    [['topic', 'update', '--topic', topic, '--perm', '6'], `unknown topic ${topic}`],
    [['topic', 'delete', '--topic', topic], `unknown topic ${topic}`],
    [['message', 'key', '--topic', topic, '--key', 'k'], `unknown topic ${topic}`],
    [
      ['message', 'offset', '--topic', topic, '--broker', 'broker-a', '--queue', '0', '--offset', '0'],
      `unknown topic ${topic}`,
    ],
    [['offset', 'reset', '--group', group, '--topic', topic, '--to', 'first'], `unknown topic ${topic}`],
    [['group', 'progress', '--group', group], `unknown consumer group ${group} (no broker has its retry topic)`],
    [['group', 'connection', '--group', group], `unknown consumer group ${group} (no broker has its retry topic)`],
    [['group', 'status', '--group', group], `unknown consumer group ${group} (no broker has its retry topic)`],
    [['group', 'delete', '--group', group], `unknown consumer group ${group}`],
    [['offset', 'reset', '--group', group, '--topic', 'TBW102', '--to', 'first'], `unknown consumer group ${group}`],
    [
      ['dlq', 'resend', '--group', group],
      `unknown consumer group ${group} (it has no dead-letter topic %DLQ%${group})`,
    ],
  ];
  for (const [args, line] of cases) {
    for (const extra of [[], ['--json']]) {
      const r = await admin(...args, ...extra);
      t.equal(r.code, 1, `${args.slice(0, 2).join(' ')} ${extra.join(' ')} exits 1`);
      t.equal(r.stderr, `rocketwire admin: ${line}\n`, `${args.slice(0, 2).join(' ')}: one line naming it`);
      t.equal(r.stdout, '');
    }
  }
});

t.test('usage errors name the option or the subcommand, exit 2', async (t) => {
  const cases: Array<[string[], string]> = [
    [['admin', 'topic', 'status', '--namesrv', ns], '--topic is required'],
    [
      ['admin', 'topic', 'nope', '--namesrv', ns],
      "unknown subcommand 'topic nope' (one of list, route, status, create, update, update-static, delete, perm)",
    ],
    [['admin', 'topic', 'update-static', '--namesrv', ns, '--topic', 'S'], '--queues is required'],
    [
      ['admin', 'topic', 'update-static', '--namesrv', ns, '--topic', 'S', '--queues', '4'],
      'give one of --brokers or --clusters',
    ],
    [['admin', 'nope'], "unknown admin command 'nope' (rocketwire admin --help lists them)"],
    [
      ['admin', 'topic', 'create', '--namesrv', ns, '--topic', 'X', '--perm', '9'],
      '--perm must be an integer from 0 to 7, got 9',
    ],
    [['admin', 'cluster'], '--namesrv is required (or set NAMESRV_ADDR or ROCKETWIRE_NAMESRV)'],
  ];
  for (const [args, line] of cases) {
    const r = await runCli(args);
    t.equal(r.code, 2, args.join(' '));
    t.equal(r.stderr, `rocketwire admin: ${line}\n`);
  }
  const help = await runCli(['admin', 'help', 'topic', 'create']);
  t.equal(help.code, 0);
  t.match(help.stdout, /--read-queues N/);
});

t.test('a write the broker refuses with NO_PERMISSION says so', async (t) => {
  // a scripted peer standing for an ACL-enabled broker that refuses the account
  const node = await startFakeNode();
  t.teardown(() => node.close());
  const remark = 'No permission for operation [UPDATE_AND_CREATE_TOPIC] on resource [Topic:Locked]';
  node.on(RequestCode.UPDATE_AND_CREATE_TOPIC, (req) => createResponse(req, ResponseCode.NO_PERMISSION, { remark }));
  node.on(RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, (req) =>
    createResponse(req, ResponseCode.NO_PERMISSION, { remark: 'no permission' }),
  );
  const r = await admin('topic', 'create', '--topic', 'Locked', '--broker', node.addr);
  t.equal(r.code, 1);
  t.equal(r.stderr, `rocketwire admin: UPDATE_AND_CREATE_TOPIC refused by ${node.addr}: NO_PERMISSION: ${remark}\n`);
  const g = await admin('group', 'create', '--group', 'locked_group', '--broker', node.addr, '--json');
  t.equal(g.code, 1);
  t.equal(
    g.stderr,
    `rocketwire admin: UPDATE_AND_CREATE_SUBSCRIPTIONGROUP refused by ${node.addr}: NO_PERMISSION: no permission\n`,
  );
});
