// A consumer's status as mqadmin shows it, proven with Java's own admin tool: mqadmin (MQAdminStartup from the
// rocketmq-tools jar) against a rocketwire push consumer on a real Apache RocketMQ 5.3.3 broker.
// consumerConnection lists the rocketwire client and its subscription, consumerProgress shows its
// committed offsets with no lag left, and consumerStatus (GET_CONSUMER_RUNNING_INFO relayed by the
// broker) shows true Pull TPS and ConsumeOK TPS: measured before the fix, right after the consumer
// took 20 000 messages, both read 0.00.
import { join } from 'node:path';
import t from 'tap';
import { PushConsumer } from '../../lib/consumer/index.js';
import { pushConsumerImpl } from '../../lib/consumer/push/push-consumer.js';
import { Producer, type Message } from '../../lib/producer/index.js';
import { brokerOffsets, totalLag, until } from '../consumer/helpers.js';
import { jarsDir, run, startRealCluster, V5_VERSION } from './harness.js';
import { interopReady } from './skip.js';

t.setTimeout(300_000);

async function mqadmin(args: string[]): Promise<string> {
  const r = await run(
    'java',
    [
      '-Xmx256m',
      '-Drocketmq.client.logUseSlf4j=false',
      '-cp',
      join(jarsDir(V5_VERSION), '*'),
      'org.apache.rocketmq.tools.command.MQAdminStartup',
      ...args,
    ],
    120_000,
  );
  // MQAdminStartup exits 0 even when a command failed (docs/real-broker.md): the text is what counts.
  return `${r.stdout}\n${r.stderr}`;
}

if (await interopReady(t, [V5_VERSION])) {
  const cluster = await startRealCluster({ version: V5_VERSION });
  t.teardown(() => cluster.stop({ graceful: false }));
  const topic = 'StatusTopic';
  const group = 'rw_status_cg';
  const count = 20_000;
  await cluster.createTopic(topic, { queues: 4 });

  t.test(
    'mqadmin consumerConnection, consumerProgress and consumerStatus show the rocketwire consumer with true figures',
    async (t) => {
      const producer = new Producer({ group: 'rw_status_pg', namesrvAddr: cluster.namesrv });
      await producer.start();
      for (let i = 0; i < count; i += 100) {
        const batch: Message[] = Array.from({ length: 100 }, (_, k) => ({ topic, body: `m${i + k}` }));
        await producer.sendBatch(batch);
      }
      await producer.shutdown();

      let consumed = 0;
      const consumer = new PushConsumer({
        consumerGroup: group,
        namesrvAddr: cluster.namesrv,
        consumeFromWhere: 'first',
      });
      consumer.subscribe(topic);
      await consumer.start((msgs) => {
        consumed += msgs.length;
        return 'CONSUME_SUCCESS';
      });
      t.teardown(() => consumer.shutdown());
      await until(() => consumed >= count, `${count} consumed`, 120_000);
      // The figures move with the consumer's 10 s snapshots: wait for the first one after the last message.
      const manager = pushConsumerImpl(consumer).recorder.manager;
      const taken = manager.consumeStatus(topic).pullTPS;
      await until(() => manager.consumeStatus(topic).pullTPS !== taken, 'a snapshot after the last message', 30_000);
      // First, while the last minute's snapshots still hold the run (the figures are a 60 s window).
      const status = await mqadmin(['consumerStatus', '-n', cluster.namesrv, '-g', group, '-i', consumer.clientId]);
      // ConsumerRunningInfo.formatString: the "#Consumer RT&TPS#" section has one row per subscribed topic.
      const section = status.slice(status.indexOf('#Consumer RT&TPS#'));
      const row = section.split('\n').find((l) => l.startsWith(`${topic} `));
      t.ok(row, "consumerStatus has the topic's RT&TPS row");
      t.comment(section.split('\n').slice(0, 4).join('\n'));
      const [pullRt, pullTps, consumeRt, okTps, failedTps, failedMsgs] = (row ?? '')
        .trim()
        .split(/\s+/)
        .slice(1)
        .map(Number);
      t.comment(
        `mqadmin consumerStatus: Pull RT ${pullRt}, Pull TPS ${pullTps}, Consume RT ${consumeRt}, ConsumeOK TPS ${okTps}, ConsumeFailed TPS ${failedTps}, failed in hour ${failedMsgs}`,
      );
      t.ok(pullTps! > 0, `Pull TPS ${pullTps} (before: 0.00)`);
      t.ok(okTps! > 0, `ConsumeOK TPS ${okTps} (before: 0.00)`);
      t.equal(failedTps, 0);
      t.equal(failedMsgs, 0);
      await until(
        async () => totalLag(await brokerOffsets(cluster.namesrv, topic, group)) === 0,
        'offsets committed',
        30_000,
      );

      const connection = await mqadmin(['consumerConnection', '-n', cluster.namesrv, '-g', group]);
      t.ok(connection.includes(consumer.clientId), 'consumerConnection lists the client');
      t.match(connection, new RegExp(`${topic}\\s+\\*`), 'and its subscription');
      t.match(connection, /CONSUME_PASSIVELY/);

      const progress = await mqadmin(['consumerProgress', '-n', cluster.namesrv, '-g', group]);
      t.match(progress, /Diff Total:\s*0\b/, 'consumerProgress: no lag left');
      t.equal((progress.match(new RegExp(`^${topic}\\s`, 'gm')) ?? []).length, 4, 'one row per queue');
    },
  );
}
