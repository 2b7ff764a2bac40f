// Lite pull, proven on a real Apache RocketMQ 5.3.3 broker with Java's own
// DefaultLitePullConsumer (test/interop/java/LitePullClient.java): a rocketwire LitePullConsumer and a
// Java one in one group split the queues and consume everything once; each takes over the other's
// queues from the offsets the other committed; seek back re-delivers exactly from the offset asked
// for; and rocketwire's pulls to the 5.x broker are LITE_PULL_MESSAGE (361), as Java's.
import t from 'tap';
import { LitePullConsumer, messageQueue, type MessageExt } from '../../lib/consumer/index.js';
import { litePullConsumerImpl } from '../../lib/consumer/lite-pull/lite-pull-consumer.js';
import { Producer } from '../../lib/producer/index.js';
import { brokerOffsets, until } from '../consumer/helpers.js';
import { startRealCluster, V5_VERSION } from './harness.js';
import { startJavaLitePull } from './java-lite-pull.js';
import { interopReady } from './skip.js';

t.setTimeout(180_000);

const text = (b64: string | undefined): string => Buffer.from(b64 ?? '', 'base64').toString();

if (await interopReady(t, [V5_VERSION])) {
  const cluster = await startRealCluster({ version: V5_VERSION });
  t.teardown(() => cluster.stop({ graceful: false }));
  const topic = 'LitePullTopic';
  await cluster.createTopic(topic, { queues: 8 });
  const producer = new Producer({ group: 'rw_lite_pg', namesrvAddr: cluster.namesrv });
  await producer.start();
  t.teardown(() => producer.shutdown());
  /** `n` messages spread over the 8 queues by the producer's round robin. */
  const send = async (n: number, prefix: string): Promise<void> => {
    for (let i = 0; i < n; i += 40) {
      await Promise.all(
        Array.from({ length: Math.min(40, n - i) }, (_, k) => producer.send({ topic, body: `${prefix}-${i + k}` })),
      );
    }
  };
  const drain = async (
    c: LitePullConsumer,
    into: Map<string, MessageExt>,
    done: () => boolean,
    what: string,
  ): Promise<void> => {
    await until(
      async () => {
        for (const m of await c.poll(100)) {
          const body = m.body.toString();
          if (into.has(body)) throw new Error(`${body} delivered twice to rocketwire`);
          into.set(body, m);
        }
        return done();
      },
      what,
      60_000,
    );
  };

  t.test(
    "rocketwire and Java lite pull consumers in one group: split, everything once, each resumes from the other's commits",
    async (t) => {
      const group = 'rw_lite_cg';
      const java = await startJavaLitePull({ namesrv: cluster.namesrv, topic, group, from: 'first' });
      t.teardown(() => java.stop());
      const rw = new LitePullConsumer({
        consumerGroup: group,
        namesrvAddr: cluster.namesrv,
        consumeFromWhere: 'first',
      });
      rw.subscribe(topic);
      await rw.start();
      t.teardown(() => rw.shutdown());
      await until(() => rw.assignment().length === 4 && java.queues.length === 4, 'the 8 queues split 4 + 4', 60_000);
      const rwQueues = rw
        .assignment()
        .map((q) => `${q.brokerName}:${q.queueId}`)
        .sort();
      t.same(
        [...rwQueues, ...java.queues].sort(),
        Array.from({ length: 8 }, (_, i) => `broker-a:${i}`).sort(),
        'AVG: 4 each, disjoint, all 8 held',
      );

      await send(400, 'a');
      const got = new Map<string, MessageExt>();
      await drain(rw, got, () => got.size + java.messages.length >= 400, 'the 400 between both');
      const javaBodies = java.messages.map((m) => text(m.body));
      t.equal(got.size + javaBodies.length, 400, 'exactly 400 deliveries');
      t.equal(new Set([...got.keys(), ...javaBodies]).size, 400, 'every message once across the group');
      t.ok(
        [...got.values()].every((m) => rwQueues.includes(`broker-a:${m.queueId}`)),
        'rocketwire polled only its own queues',
      );
      t.ok(
        java.messages.every((m) => java.queues.includes(`broker-a:${m.queueId}`)),
        'Java polled only its own queues',
      );
      t.ok(got.size > 0 && javaBodies.length > 0, `both consumed (rocketwire ${got.size}, Java ${javaBodies.length})`);

      // Java leaves (commitSync + shutdown persist its offsets): rocketwire takes its queues from there.
      t.equal((await java.stop()).received, javaBodies.length, "Java's summary agrees");
      await rw.commitSync({ persist: true });
      await until(() => rw.assignment().length === 8, 'rocketwire holds all 8 queues', 60_000);
      await send(80, 'b');
      const after = new Map<string, MessageExt>();
      await drain(
        rw,
        after,
        () => [...after.keys()].filter((b) => b.startsWith('b-')).length === 80,
        'the 80 new messages',
      );
      t.same(
        [...after.keys()].filter((b) => b.startsWith('a-')),
        [],
        'none of what Java consumed is delivered again: rocketwire read its committed offsets',
      );

      // And the other way round: a new Java member takes over what rocketwire committed.
      await rw.commitSync({ persist: true });
      const java2 = await startJavaLitePull({ namesrv: cluster.namesrv, topic, group, from: 'first' });
      t.teardown(() => java2.stop());
      await rw.shutdown();
      await until(() => java2.queues.length === 8, 'the new Java member holds all 8 queues', 60_000);
      await send(80, 'c');
      await until(
        () => java2.messages.filter((m) => text(m.body).startsWith('c-')).length === 80,
        'Java gets the 80 newest',
        60_000,
      );
      t.same(
        java2.messages.map((m) => text(m.body)).filter((b) => !b.startsWith('c-')),
        [],
        "Java re-reads nothing rocketwire consumed: it read rocketwire's committed offsets",
      );
      await java2.stop();
      const rows = await brokerOffsets(cluster.namesrv, topic, group);
      t.same(
        rows.filter((r) => r.committed !== r.max),
        [],
        'every queue committed to its end',
      );
    },
  );

  t.test(
    'seek back re-delivers exactly from the offset asked for; pulls to 5.3.3 are LITE_PULL_MESSAGE (361)',
    async (t) => {
      const mq = messageQueue(topic, 'broker-a', 3);
      const rw = new LitePullConsumer({
        consumerGroup: 'rw_lite_seek',
        namesrvAddr: cluster.namesrv,
        consumeFromWhere: 'first',
      });
      rw.assign([mq]);
      await rw.start();
      t.teardown(() => rw.shutdown());
      const max = (await brokerOffsets(cluster.namesrv, topic, 'rw_lite_seek')).find((r) => r.queueId === 3)!.max;
      t.ok(max > 20, `queue 3 holds ${max} messages`);
      const first: MessageExt[] = [];
      await until(
        async () => {
          first.push(...(await rw.poll(100)));
          return first.length >= max;
        },
        'queue 3 to its end',
        60_000,
      );
      t.same(
        first.map((m) => m.queueOffset),
        Array.from({ length: max }, (_, i) => i),
        'every offset once, in order',
      );
      await rw.seek(mq, 17);
      const again: MessageExt[] = [];
      await until(
        async () => {
          again.push(...(await rw.poll(100)));
          return again.length >= max - 17;
        },
        're-delivery from 17',
        60_000,
      );
      t.same(
        again.map((m) => m.queueOffset),
        Array.from({ length: max - 17 }, (_, i) => 17 + i),
        'from exactly 17 to the end, once each',
      );
      t.same(
        again.map((m) => m.msgId),
        first.slice(17).map((m) => m.msgId),
        'the same messages',
      );
      const codes = litePullConsumerImpl(rw).counters.requestCodes;
      t.ok((codes[361] ?? 0) > 0 && (codes[11] ?? 0) === 0, `every pull was 361 (${JSON.stringify(codes)})`);
    },
  );
}
