// rocketwire's own producer and push consumer against real Apache RocketMQ brokers (5.3.3 and
// 4.9.7), checked from the other side by the stock Java client:
//  - rocketwire Producer → real broker → Java push consumer: body, tags, keys and properties intact,
//    bodies of 4 KiB and more compressed;
//  - Java producer → real broker → rocketwire PushConsumer, with the committed offsets read back
//    through the Java admin API (DefaultMQAdminExt.examineConsumeStats);
//  - rocketwire's retry path: RECONSUME_LATER → CONSUMER_SEND_MSG_BACK → %RETRY% topic → redelivery.
import t from 'tap';
import { PushConsumer, type MessageExt } from '../../lib/consumer/index.js';
import { Producer } from '../../lib/producer/index.js';
import { startRealCluster, V4_VERSION, V5_VERSION } from './harness.js';
import { expectedBody, javaOffsets, javaProduce, sha1, startJavaConsumer } from './java-client.js';
import { interopReady } from './skip.js';

t.setTimeout(300_000);

const versions = [V5_VERSION, V4_VERSION];

if (await interopReady(t, versions)) {
  for (const version of versions) {
    t.test(`real RocketMQ ${version}`, async (t) => {
      const cluster = await startRealCluster({ version });
      t.teardown(() => cluster.stop({ graceful: false }));
      await cluster.createTopic('RwToJava', { queues: 4 });
      await cluster.createTopic('JavaToRw', { queues: 4 });

      t.test('rocketwire producer → real broker → Java push consumer', async (t) => {
        const count = 40;
        const consumer = await startJavaConsumer({ version, namesrv: cluster.namesrv, topic: 'RwToJava', group: 'rw_to_java_cg', expect: count, timeoutMs: 60_000 });
        const producer = new Producer({ group: 'rw_pg', namesrvAddr: cluster.namesrv });
        await producer.start();
        t.teardown(() => producer.shutdown());
        // Every other body is above the 4 KiB compression threshold.
        const bodies = Array.from({ length: count }, (_, i) => expectedBody(i, i % 2 === 0 ? 64 + i : 4096 + 100 * i));
        const results = [];
        for (let i = 0; i < count; i++) {
          results.push(
            await producer.send({
              topic: 'RwToJava',
              body: bodies[i]!,
              tags: i % 2 === 0 ? 'Small' : 'Large',
              keys: [`order-${i}`, `user-${i % 3}`],
              properties: { seq: String(i), note: 'ünïcödé & spaces', empty: '' },
            }),
          );
        }
        t.ok(results.every((r) => r.status === 'SEND_OK'), 'every send answered SEND_OK');
        t.equal(new Set(results.map((r) => r.messageQueue.queueId)).size, 4, 'sends spread over the 4 queues');

        const { summary, messages } = await consumer.done;
        t.equal(summary.received, count, 'the Java consumer received every message');
        const byId = new Map(messages.map((m) => [m.msgId, m]));
        const problems: string[] = [];
        results.forEach((r, i) => {
          const m = byId.get(r.msgId);
          if (!m) return problems.push(`${i}: msgId ${r.msgId} not received`);
          const big = i % 2 === 1;
          if (m.bodySha1 !== sha1(bodies[i]!)) problems.push(`${i}: body differs`);
          if (m.bodyLength !== bodies[i]!.length) problems.push(`${i}: body length ${m.bodyLength}`);
          if (m.tags !== (big ? 'Large' : 'Small')) problems.push(`${i}: tags ${m.tags}`);
          if (m.keys !== `order-${i} user-${i % 3}`) problems.push(`${i}: keys ${m.keys}`);
          if (m.properties.seq !== String(i) || m.properties.note !== 'ünïcödé & spaces') problems.push(`${i}: properties ${JSON.stringify(m.properties)}`);
          if (m.queueId !== r.messageQueue.queueId || m.queueOffset !== r.queueOffset) problems.push(`${i}: queue/offset differ from the send result`);
          if (m.offsetMsgId !== r.offsetMsgId) problems.push(`${i}: offsetMsgId ${m.offsetMsgId} vs ${r.offsetMsgId}`);
          // Compressed = bit 0 plus the zlib type bits (3 << 8). The 5.x Java client clears bit 0 once it
          // has decompressed (4.9 keeps it), so the type bits are what both versions still show.
          if (big !== ((m.sysFlag & 0x700) === 0x300)) problems.push(`${i}: sysFlag 0x${m.sysFlag.toString(16)} for a ${m.bodyLength}-byte body`);
          return undefined;
        });
        t.same(problems, [], 'body, tags, keys, properties, ids, queue offset and compression as sent');
      });

      t.test('Java producer → real broker → rocketwire push consumer, offsets checked by the Java admin', async (t) => {
        const count = 60;
        const size = 5000;
        const { sent } = await javaProduce({ version, namesrv: cluster.namesrv, topic: 'JavaToRw', count, size, tag: 'J', keys: 'jk-{i}', props: { origin: 'java' } });
        t.equal(sent.length, count);

        const received: MessageExt[] = [];
        let resolveAll!: () => void;
        const all = new Promise<void>((r) => (resolveAll = r));
        const consumer = new PushConsumer({
          consumerGroup: 'java_to_rw_cg',
          namesrvAddr: cluster.namesrv,
          subscriptions: { JavaToRw: '*' },
          consumeFromWhere: 'first',
        });
        t.teardown(() => consumer.shutdown());
        const deadline = setTimeout(resolveAll, 60_000);
        await consumer.start((msgs) => {
          received.push(...msgs);
          if (new Set(received.map((m) => m.msgId)).size >= count) resolveAll();
          return 'CONSUME_SUCCESS';
        });
        await all;
        clearTimeout(deadline);
        await consumer.shutdown(); // persists the offsets to the broker

        const byId = new Map(received.map((m) => [m.msgId, m]));
        t.equal(byId.size, count, 'rocketwire received every message once');
        const bad = sent.filter((s) => {
          const m = byId.get(s.msgId);
          return !m || sha1(m.body) !== sha1(expectedBody(s.i, size)) || m.tags !== 'J' || m.keys !== `jk-${s.i}` || m.properties.origin !== 'java' || m.queueId !== s.queueId || m.queueOffset !== s.queueOffset;
        });
        t.same(bad.map((s) => s.i), [], 'bodies (decompressed), tags, keys, properties and positions as the Java producer sent them');

        const progress = await javaOffsets({ version, namesrv: cluster.namesrv, group: 'java_to_rw_cg', topic: 'JavaToRw' });
        t.equal(progress.queues.length, 4, 'the Java admin sees committed offsets on all 4 queues');
        t.same(
          progress.queues.map((q) => q.consumerOffset),
          progress.queues.map((q) => q.brokerOffset),
          'committed offset = max offset on every queue',
        );
        t.equal(progress.queues.reduce((n, q) => n + q.brokerOffset, 0), count);
      });

      t.test('rocketwire RECONSUME_LATER goes through the real broker\'s retry topic and comes back', async (t) => {
        await cluster.createTopic('RwRetry', { queues: 2 });
        const producer = new Producer({ group: 'rw_retry_pg', namesrvAddr: cluster.namesrv });
        await producer.start();
        t.teardown(() => producer.shutdown());
        const ids: string[] = [];
        for (let i = 0; i < 4; i++) ids.push((await producer.send({ topic: 'RwRetry', body: `retry me ${i}`, tags: 'R', properties: { n: String(i) } })).msgId);
        const deliveries: Array<{ msgId: string; topic: string; reconsumeTimes: number; body: string; n?: string; retryTopic?: string }> = [];
        let done!: () => void;
        const back = new Promise<void>((r) => (done = r));
        const consumer = new PushConsumer({ consumerGroup: 'rw_retry_cg', namesrvAddr: cluster.namesrv, subscriptions: { RwRetry: '*' }, consumeFromWhere: 'first' });
        t.teardown(() => consumer.shutdown());
        const timer = setTimeout(done, 60_000);
        await consumer.start((msgs, ctx) => {
          const m = msgs[0]!;
          deliveries.push({ msgId: m.msgId, topic: m.topic, reconsumeTimes: m.reconsumeTimes, body: m.body.toString(), n: m.properties.n, retryTopic: m.properties.RETRY_TOPIC });
          if (deliveries.filter((d) => d.reconsumeTimes === 1).length >= 4) done();
          if (m.reconsumeTimes === 0) {
            ctx.delayLevelWhenNextConsume = 1; // 1 s on a stock broker
            return 'RECONSUME_LATER';
          }
          return 'CONSUME_SUCCESS';
        });
        await back;
        clearTimeout(timer);
        const again = deliveries.filter((d) => d.reconsumeTimes === 1);
        t.same(again.map((d) => d.msgId).sort(), [...ids].sort(), 'each message came back once, with its original msgId');
        t.ok(again.every((d) => d.topic === 'RwRetry' && d.retryTopic === 'RwRetry'), 'the real topic is restored (RETRY_TOPIC property kept)');
        t.ok(again.every((d) => d.body === `retry me ${d.n}`), 'body and properties survive the retry copy');
      });
    });
  }
}
