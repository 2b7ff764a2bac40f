// Java's own mqadmin statsAll against rocketwire's embedded broker on a ManualClock: it reads the
// embedded broker's VIEW_BROKER_STATS_DATA and QUERY_TOPIC_CONSUME_BY_WHO answers, and prints what
// `rocketwire admin stats all` prints, TPS included (the clock fixes the sampler's span at 10 s).
import t from 'tap';
import { AdminClient } from '../../lib/admin/index.js';
import { startBroker } from '../../lib/broker/index.js';
import { ManualClock } from '../../lib/clock.js';
import { PushConsumer } from '../../lib/consumer/index.js';
import { runCli } from '../cli/run-in-process.js';
import { produce, until } from '../consumer/helpers.js';
import { V5_VERSION } from './harness.js';
import { mqadminBatch, mqadminRows } from './java-admin.js';
import { interopReady } from './skip.js';

t.setTimeout(120_000);

if (await interopReady(t, [V5_VERSION])) {
  t.test('mqadmin statsAll on the embedded broker: the rows rocketwire prints', async (t) => {
    const started = Date.now();
    const clock = new ManualClock();
    const broker = await startBroker({ queues: 2, clock });
    t.teardown(() => broker.close());
    const ns = broker.namesrv;
    const topic = 'EmbeddedStats';
    const idle = 'EmbeddedStatsIdle';
    const group = 'embedded_stats_cg';
    const admin = new AdminClient({ namesrvAddr: ns });
    t.teardown(() => admin.close());
    await admin.createOrUpdateTopic({ topic, readQueueNums: 2, writeQueueNums: 2 });
    await admin.createOrUpdateTopic({ topic: idle, readQueueNums: 1, writeQueueNums: 1 });
    await produce(ns, topic, 30);
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
      () => seen >= 30,
      () => `30 consumed (${seen})`,
    );
    await consumer.shutdown();
    await until(async () => (await admin.consumerProgress(group, topic)).totalLag === 0, 'committed');
    await produce(ns, topic, 5);
    clock.advance(10_000);

    const java = await mqadminBatch(ns, [`statsAll -t ${topic}`, `statsAll -t ${idle}`, 'statsAll -a']);
    const cli = await runCli(['admin', 'stats', 'all', '--namesrv', ns]);
    t.equal(cli.code, 0, cli.stderr);
    const mine = mqadminRows(cli.stdout, '#Topic');
    t.same(
      mqadminRows(java[0]!.output, '#Topic'),
      [[topic, group, '5', '3.50', '3.00', '35', '30']],
      `mqadmin reads the embedded broker's stats\n${java[0]!.output}${java[0]!.stderr}`,
    );
    t.same(
      mine.filter((r) => r[0] === topic),
      [[topic, group, '5', '3.50', '3.00', '35', '30']],
      'rocketwire prints the same row',
    );
    t.same(mqadminRows(java[1]!.output, '#Topic'), [[idle, '0', '0.00', '0', 'NO_CONSUMER']]);
    t.same(
      mine.filter((r) => r[0] === idle),
      [[idle, '0', '0.00', '0', 'NO_CONSUMER']],
    );
    t.same(
      mqadminRows(java[2]!.output, '#Topic'),
      [[topic, group, '5', '3.50', '3.00', '35', '30']],
      'mqadmin -a: only the active row',
    );
    t.comment(`wall ${Date.now() - started} ms`);
  });
}
