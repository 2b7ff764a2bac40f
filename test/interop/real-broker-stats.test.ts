// `rocketwire admin stats all` against a real Apache RocketMQ 5.3.3 broker, compared with what
// mqadmin statsAll prints on the same cluster at the same moment: 40 messages produced and consumed
// by a group, 10 more left for it, then both tools read the broker's TOPIC_PUT_NUMS and
// GROUP_GET_NUMS items (VIEW_BROKER_STATS_DATA) once its 10-s sampler has taken them.
//
// What is compared exactly: the rows (topic, group or NO_CONSUMER) of the whole list and of -a,
// the backlog, the 24-hour counts. TPS is the sum over the minute window's span, which is the
// time since the item's zero sample (10 s, 20 s, … 60 s as the broker's sampler ticks), so it
// depends on when each tool asked: each tool's printed TPS must be sum / (10 s × k) for a whole
// k of 1 to 6, to the two decimals mqadmin prints.
//
// Apache 5.3.3's ConsumerManager files a consumer's topic under the topic's own name instead of its
// group (topicGroupTable; fixed after 5.3.3 by apache/rocketmq#9444), so QUERY_TOPIC_CONSUME_BY_WHO
// answers a phantom group named like the topic, and both tools print a row for it.
import t from 'tap';
import { AdminClient, type StatsAllRow } from '../../lib/admin/index.js';
import { PushConsumer } from '../../lib/consumer/index.js';
import { Producer } from '../../lib/producer/index.js';
import { RequestCode, createRequest } from '../../protocol/index.js';
import { decodeBrokerStatsData } from '../../protocol/body/broker-stats-bodies.js';
import { rawInvoke } from '../support/raw-remoting.js';
import { runCli } from '../cli/run-in-process.js';
import { until } from '../consumer/helpers.js';
import { startRealCluster, V5_VERSION } from './harness.js';
import { mqadminBatch, mqadminRows } from './java-admin.js';
import { interopReady } from './skip.js';

t.setTimeout(120_000);

/** sum / tps is a whole number of 10-s sampler steps (1 to 6), within what %.2f rounds away. */
function tpsOfSteps(sum: number, tps: number): boolean {
  for (let k = 1; k <= 6; k++) if (Math.abs(tps - sum / (10 * k)) <= 0.0051) return true;
  return false;
}

/** mqadmin statsAll's rows as [topic, group | 'NO_CONSUMER', accumulation, inTps, outTps, in24h, out24h]. */
function mqRows(output: string): Array<[string, string, number, number, number | null, number, number | null]> {
  return mqadminRows(output, '#Topic').map((c) =>
    c.length === 5
      ? [c[0]!, 'NO_CONSUMER', Number(c[1]), Number(c[2]), null, Number(c[3]), null]
      : [c[0]!, c[1]!, Number(c[2]), Number(c[3]), Number(c[4]), Number(c[5]), Number(c[6])],
  );
}

const key = (topic: string, group: string | null): string => `${topic} ${group ?? 'NO_CONSUMER'}`;

if (await interopReady(t, [V5_VERSION])) {
  const started = Date.now();
  const cluster = await startRealCluster({ version: V5_VERSION });
  t.teardown(() => cluster.stop({ graceful: false }));
  const ns = cluster.namesrv;
  const addr = cluster.brokers[0]!;
  const topic = 'StatsTopic';
  const idle = 'StatsIdleTopic';
  const group = 'rw_stats_cg';
  await cluster.createTopic(topic, { queues: 4 });
  await cluster.createTopic(idle, { queues: 1 });
  const admin = new AdminClient({ namesrvAddr: ns, mqClientApiTimeoutMs: 10_000 });
  t.teardown(() => admin.close());

  const producer = new Producer({ namesrvAddr: ns, group: 'rw_stats_pg' });
  await producer.start();
  t.teardown(() => producer.shutdown());
  for (let i = 0; i < 40; i++) await producer.send({ topic, body: `stats-${i}` });
  let seen = 0;
  const consumer = new PushConsumer({
    consumerGroup: group,
    namesrvAddr: ns,
    subscriptions: { [topic]: '*' },
    consumeFromWhere: 'first',
    persistOffsetIntervalMs: 500,
  });
  await consumer.start((msgs) => {
    seen += msgs.length;
    return 'CONSUME_SUCCESS';
  });
  await until(
    () => seen >= 40,
    () => `40 consumed (${seen})`,
    30_000,
  );
  await consumer.shutdown();
  await until(async () => (await admin.consumerProgress(group, topic)).totalLag === 0, 'committed', 30_000);
  for (let i = 0; i < 10; i++) await producer.send({ topic, body: `left-${i}` });

  t.test('statsAll: the same rows, backlog and 24-h counts as mqadmin on the same broker', async (t) => {
    // the broker's sampler takes its minute sample every 10 s: wait for it, as an operator would
    let mine: StatsAllRow[] = [];
    await until(
      async () => {
        mine = await admin.statsAll({ topic });
        const row = mine.find((r) => r.group === group);
        return row?.inMsg24Hour === 50 && row?.outMsg24Hour === 40;
      },
      () => `the broker sampled 50 in, 40 out (${JSON.stringify(mine)})`,
      30_000,
    );
    const java = await mqadminBatch(ns, [`statsAll -t ${topic}`, `statsAll -t ${idle}`, 'statsAll', 'statsAll -a']);
    const text = (i: number): string => java[i]!.output + java[i]!.stderr;
    const cliTopic = await runCli(['admin', 'stats', 'all', '--topic', topic, '--namesrv', ns, '--timeout', '10000']);
    t.equal(cliTopic.code, 0, cliTopic.stderr);
    const [wholeMine, activeMine, idleMine, topicAfter] = await Promise.all([
      admin.statsAll(),
      admin.statsAll({ activeOnly: true }),
      admin.statsAll({ topic: idle }),
      admin.statsAll({ topic }),
    ]);

    const mq = mqRows(text(0));
    t.same(
      mq.map((r) => r[1]).sort(),
      [group, topic].sort(),
      `mqadmin: the group and 5.3.3's phantom group named like the topic\n${text(0)}`,
    );
    const deterministic = (rows: StatsAllRow[]) =>
      rows.map((r) => [r.topic, r.group, r.accumulation, r.inMsg24Hour, r.outMsg24Hour]);
    const mqDeterministic = mq.map((r) => [r[0], r[1], r[2], r[5], r[6]]).sort();
    for (const rows of [mine, topicAfter])
      t.same(deterministic(rows).sort(), mqDeterministic, 'rocketwire: the same rows');
    const [, , mqAcc, mqIn, mqOut, mqIn24, mqOut24] = mq.find((r) => r[1] === group)!;
    t.same([mqAcc, mqIn24, mqOut24], [10, 50, 40], 'backlog 10, 50 in, 40 out');
    // the CLI's table: mqadmin's columns, the same figures
    const cliRow = cliTopic.stdout
      .trimEnd()
      .split('\n')
      .map((l) => l.split(/\s+/))
      .find((c) => c[1] === group)!;
    t.same([cliRow[0], cliRow[1], cliRow[2], cliRow[5], cliRow[6]], [topic, group, '10', '50', '40']);
    t.ok(tpsOfSteps(50, mqIn), `mqadmin's InTPS ${mqIn} is 50 over whole 10-s steps`);
    t.ok(tpsOfSteps(40, mqOut!), `mqadmin's OutTPS ${mqOut} is 40 over whole 10-s steps`);
    for (const r of [mine, topicAfter].map((rows) => rows.find((x) => x.group === group)!)) {
      t.ok(tpsOfSteps(50, r.inTps), `rocketwire's inTps ${r.inTps} likewise`);
      t.ok(tpsOfSteps(40, r.outTps!), `rocketwire's outTps ${r.outTps} likewise`);
    }
    t.ok(tpsOfSteps(50, Number(cliRow[3])) && tpsOfSteps(40, Number(cliRow[4])), 'and the CLI prints them so');

    t.same(
      mqRows(text(1)).map((r) => r.slice(0, 3).concat(r.slice(5))),
      [[idle, 'NO_CONSUMER', 0, 0, null]],
      'mqadmin: the idle topic is NO_CONSUMER',
    );
    t.same(
      idleMine.map((r) => [r.topic, r.group, r.accumulation, r.inMsg24Hour, r.outMsg24Hour]),
      [[idle, null, 0, 0, null]],
      'rocketwire: likewise',
    );
    t.same(
      wholeMine.map((r) => key(r.topic, r.group)).sort(),
      mqRows(text(2))
        .map((r) => key(r[0], r[1] === 'NO_CONSUMER' ? null : r[1]))
        .sort(),
      'the whole list: the same topics and groups, system topics included',
    );
    t.same(
      activeMine.map((r) => key(r.topic, r.group)).sort(),
      mqRows(text(3))
        .map((r) => key(r[0], r[1] === 'NO_CONSUMER' ? null : r[1]))
        .sort(),
      '-a: the same active rows',
    );
  });

  t.test("the broker's own answers: Java's body and its not-exist remark", async (t) => {
    const res = await rawInvoke(
      addr,
      createRequest(RequestCode.VIEW_BROKER_STATS_DATA, {
        extFields: { statsName: 'TOPIC_PUT_NUMS', statsKey: topic },
      }),
    );
    t.equal(res.code, 0);
    const body = res.body?.toString() ?? '';
    t.comment(`VIEW_BROKER_STATS_DATA body of 5.3.3: ${body}`);
    t.match(body, /^\{"statsDay":\{"avgpt":[^,]+,"sum":\d+,"tps":[^}]+\},"statsHour":\{.*\},"statsMinute":\{.*\}\}$/);
    const d = decodeBrokerStatsData(res.body!);
    t.equal(d.statsMinute.avgpt, 1, 'single sends: one message per put');
    t.equal(d.statsMinute.sum, 50);
    const none = await rawInvoke(
      addr,
      createRequest(RequestCode.VIEW_BROKER_STATS_DATA, {
        extFields: { statsName: 'GROUP_GET_NUMS', statsKey: `${topic}@nobody` },
      }),
    );
    t.same([none.code, none.remark], [1, `The stats <GROUP_GET_NUMS> <${topic}@nobody> not exist`]);
    t.equal(await admin.viewBrokerStatsData(addr, 'GROUP_GET_NUMS', `${topic}@nobody`), null, 'read as null');
    const who = await rawInvoke(addr, createRequest(RequestCode.QUERY_TOPIC_CONSUME_BY_WHO, { extFields: { topic } }));
    t.same(
      (JSON.parse(who.body!.toString()) as { groupList: string[] }).groupList.sort(),
      [group, topic].sort(),
      "QUERY_TOPIC_CONSUME_BY_WHO: the group (its offsets), and 5.3.3's phantom named like the topic",
    );
  });

  t.teardown(() => t.comment(`wall ${Date.now() - started} ms`));
}
