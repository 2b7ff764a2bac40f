// statsAll (AdminClient.statsAll, `rocketwire admin stats all`) and VIEW_BROKER_STATS_DATA against
// the embedded broker on a ManualClock: the broker samples its counters on that clock as Java's
// StatsItem does (every 10 s for the minute window, every 10 min for the hour window), so every
// figure below is exact, TPS included.
import t from 'tap';
import { AdminClient } from '../../lib/admin/index.js';
import { startBroker } from '../../lib/broker/index.js';
import { ManualClock } from '../../lib/clock.js';
import { PushConsumer } from '../../lib/consumer/index.js';
import { runCli, type CliRun } from '../cli/run-in-process.js';
import { produce, uniqueName, until } from '../consumer/helpers.js';

const clock = new ManualClock();
const broker = await startBroker({ queues: 4, clock });
t.teardown(() => broker.close());
const ns = broker.namesrv;
const addr = broker.brokers[0]!;
const admin = new AdminClient({ namesrvAddr: ns });
t.teardown(() => admin.close());
const cli = (...args: string[]): Promise<CliRun> => runCli(['admin', 'stats', ...args, '--namesrv', ns]);

const topic = uniqueName('Stats');
const idle = uniqueName('StatsIdle');
const group = uniqueName('cg_stats');

/** Consumes `n` messages of `topic` from the first offset, then stops (its offsets committed on shutdown). */
async function consume(n: number): Promise<void> {
  let seen = 0;
  const consumer = new PushConsumer({
    consumerGroup: group,
    namesrvAddr: ns,
    subscriptions: { [topic]: '*' },
    consumeFromWhere: 'first',
    clock,
  });
  await consumer.start((msgs) => {
    seen += msgs.length;
    return 'CONSUME_SUCCESS';
  });
  await until(
    () => seen >= n,
    () => `${n} consumed (${seen} so far)`,
  );
  await consumer.shutdown();
  await until(
    async () => (await admin.consumerProgress(group, topic)).totalLag === 0,
    'the offsets committed by shutdown',
  );
}

t.before(async () => {
  await admin.createOrUpdateTopic({ topic, readQueueNums: 4, writeQueueNums: 4, brokerAddr: addr });
  await admin.createOrUpdateTopic({ topic: idle, readQueueNums: 1, writeQueueNums: 1, brokerAddr: addr });
});

t.test('before anything is counted: the broker says "not exist", statsAll says 0 and NO_CONSUMER', async (t) => {
  t.equal(await admin.viewBrokerStatsData(addr, 'TOPIC_PUT_NUMS', topic), null);
  t.equal(await admin.viewBrokerStatsData(addr, 'NO_SUCH_STATS', topic), null, 'an unknown stats name too');
  t.same(await admin.statsAll({ topic }), [
    { topic, group: null, accumulation: 0, inTps: 0, outTps: null, inMsg24Hour: 0, outMsg24Hour: null },
  ]);
  t.same(await admin.statsAll({ topic: uniqueName('NoSuchTopic') }), [], 'a topic the name server lacks: no row');
});

t.test('after producing 130 and consuming 100: the row mqadmin prints, exact', async (t) => {
  await produce(ns, topic, 100); // two batches: 64 + 36
  await consume(100);
  await produce(ns, topic, 30); // one batch, not consumed
  const unsampled = await admin.statsAll({ topic });
  t.same(
    unsampled.map((r) => [r.inMsg24Hour, r.outMsg24Hour, r.accumulation]),
    [[0, 0, 30]],
    'counted but not sampled yet: Java shows 0 until the next 10-s tick; the backlog is live',
  );
  clock.advance(10_000);
  const rows = await admin.statsAll({ topic });
  t.same(rows, [{ topic, group, accumulation: 30, inTps: 13, outTps: 10, inMsg24Hour: 130, outMsg24Hour: 100 }]);
  const put = await admin.viewBrokerStatsData(addr, 'TOPIC_PUT_NUMS', topic);
  t.same(put?.statsMinute, { sum: 130, tps: 13, avgpt: 130 / 3 }, 'three put requests: avgpt is messages per put');
  t.same(put?.statsHour, { sum: 0, tps: 0, avgpt: 0 }, 'the hour window waits for its 10-min tick');
  const got = await admin.viewBrokerStatsData(addr, 'GROUP_GET_NUMS', `${topic}@${group}`);
  t.equal(got?.statsMinute.sum, 100);
  t.equal(await admin.viewBrokerStatsData(addr, 'GROUP_GET_NUMS', `${topic}@nobody`), null);
});

t.test('--active and the whole list', async (t) => {
  const all = await admin.statsAll();
  const idleRow = all.find((r) => r.topic === idle);
  t.same(idleRow, {
    topic: idle,
    group: null,
    accumulation: 0,
    inTps: 0,
    outTps: null,
    inMsg24Hour: 0,
    outMsg24Hour: null,
  });
  t.notOk(
    all.some((r) => r.topic.startsWith('%RETRY%') || r.topic.startsWith('%DLQ%')),
    'retry and DLQ topics are left out',
  );
  const sorted = [...all].sort((a, b) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : 0));
  t.same(
    all.map((r) => r.topic),
    sorted.map((r) => r.topic),
    'sorted by topic',
  );
  const active = await admin.statsAll({ activeOnly: true });
  t.ok(
    active.some((r) => r.topic === topic),
    'the topic with traffic is active',
  );
  t.notOk(
    active.some((r) => r.topic === idle),
    'the idle one is not',
  );
});

t.test('rocketwire admin stats all: the table and --json', async (t) => {
  const text = await cli('all', '--topic', topic);
  t.equal(text.code, 0, text.stderr);
  const lines = text.stdout.trimEnd().split('\n');
  t.same(lines[0]!.split(/\s{2,}/), [
    '#Topic',
    '#Consumer Group',
    '#Accumulation',
    '#InTPS',
    '#OutTPS',
    '#InMsg24Hour',
    '#OutMsg24Hour',
  ]);
  t.same(lines[1]!.split(/\s+/), [topic, group, '30', '13.00', '10.00', '130', '100']);
  const idleText = await cli('all', '--topic', idle);
  t.same(idleText.stdout.trimEnd().split('\n')[1]!.split(/\s+/), [idle, '0', '0.00', '0', 'NO_CONSUMER']);
  const json = await cli('all', '--topic', topic, '--json');
  t.same(JSON.parse(json.stdout), await admin.statsAll({ topic }));
  const active = await cli('all', '--active', '--json');
  t.notOk((JSON.parse(active.stdout) as Array<{ topic: string }>).some((r) => r.topic === idle));
  const bad = await cli('all', '--bogus');
  t.not(bad.code, 0);
  t.match(bad.stderr, /bogus/);
  const none = await runCli(['admin', 'stats', '--namesrv', ns]);
  t.not(none.code, 0);
  t.match(none.stderr, /admin stats needs a subcommand: all/);
});

t.test("the windows slide as Java's do: the 24-h count falls back from day to hour to minute", async (t) => {
  clock.advance(60_000); // 70 s after the puts: out of the minute window, before the first 10-min tick
  t.same(
    (await admin.statsAll({ topic })).map((r) => [r.inTps, r.inMsg24Hour, r.outMsg24Hour]),
    [[0, 0, 0]],
    'Java shows nothing between the minute window and the first hour sample',
  );
  clock.advance(600_000 - 70_000); // the first 10-min tick
  const [row] = await admin.statsAll({ topic });
  t.same([row?.inMsg24Hour, row?.outMsg24Hour, row?.inTps], [130, 100, 0], 'from the hour window; no TPS this minute');
  clock.advance(3_600_000); // past the first hourly tick
  const day = await admin.viewBrokerStatsData(addr, 'TOPIC_PUT_NUMS', topic);
  t.equal(day?.statsDay.sum, 130, 'then from the day window');
});

t.test('a namespaced AdminClient lists its namespace, names without it', async (t) => {
  const nsTopic = uniqueName('NsStats');
  await admin.createOrUpdateTopic({ topic: `team1%${nsTopic}`, brokerAddr: addr });
  await produce(ns, `team1%${nsTopic}`, 5);
  clock.advance(10_000);
  const team = new AdminClient({ namesrvAddr: ns, namespace: 'team1' });
  t.teardown(() => team.close());
  const rows = await team.statsAll();
  t.same(
    rows.map((r) => [r.topic, r.inMsg24Hour]),
    [[nsTopic, 5]],
    "only team1's topics, unwrapped",
  );
  t.same(
    (await team.statsAll({ topic: nsTopic })).map((r) => r.topic),
    [nsTopic],
  );
});

t.test('a deleted group or topic loses its stats (Java autoDeleteUnusedStats)', async (t) => {
  t.not(await admin.viewBrokerStatsData(addr, 'GROUP_GET_NUMS', `${topic}@${group}`), null);
  await admin.deleteGroup(group);
  t.equal(await admin.viewBrokerStatsData(addr, 'GROUP_GET_NUMS', `${topic}@${group}`), null);
  await admin.deleteTopic(topic);
  t.equal(await admin.viewBrokerStatsData(addr, 'TOPIC_PUT_NUMS', topic), null);
});
