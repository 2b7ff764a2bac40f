// rocketwire's own producer and push consumer against real Apache RocketMQ brokers (5.3.3, 5.5.0
// and 4.9.7), checked from the other side by the stock Java client:
//  - rocketwire Producer → real broker → Java push consumer: body, tags, keys and properties intact,
//    bodies of 4 KiB and more compressed;
//  - Java producer → real broker → rocketwire PushConsumer, with the committed offsets read back
//    through the Java admin API (DefaultMQAdminExt.examineConsumeStats);
//  - rocketwire's retry path: RECONSUME_LATER → CONSUMER_SEND_MSG_BACK → %RETRY% topic → redelivery;
//  - a batch send and tag filtering (the broker filters on rocketwire's tag hash codes);
//  - orderly consumption with the real broker's queue locks;
//  - a consumer group shared by a Java and a rocketwire consumer: both allocate the queues the same way.
import t from 'tap';
import { PushConsumer, type MessageExt } from '../../lib/consumer/index.js';
import { Producer, selectMessageQueueByHash } from '../../lib/producer/index.js';
import { createRequest, RequestCode } from '../../protocol/index.js';
import { delay, startRealCluster, V4_VERSION, V55_VERSION, V5_VERSION } from './harness.js';
import { expectedBody, javaOffsets, javaProduce, sha1, startJavaConsumer } from './java-client.js';
import { interopReady } from './skip.js';

t.setTimeout(420_000);

const versions = [V5_VERSION, V55_VERSION, V4_VERSION];

if (await interopReady(t, versions)) {
  for (const version of versions) {
    t.test(`real RocketMQ ${version}`, async (t) => {
      const cluster = await startRealCluster({ version });
      t.teardown(() => cluster.stop({ graceful: false }));
      await cluster.createTopic('RwToJava', { queues: 4 });
      await cluster.createTopic('JavaToRw', { queues: 4 });

      t.test('rocketwire producer → real broker → Java push consumer', async (t) => {
        const count = 40;
        const consumer = await startJavaConsumer({
          version,
          namesrv: cluster.namesrv,
          topic: 'RwToJava',
          group: 'rw_to_java_cg',
          expect: count,
          timeoutMs: 60_000,
        });
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
        t.ok(
          results.every((r) => r.status === 'SEND_OK'),
          'every send answered SEND_OK',
        );
        t.equal(new Set(results.map((r) => r.messageQueue.queueId)).size, 4, 'sends spread over the 4 queues');

        const { summary, messages } = await consumer.done;
        t.equal(summary.received, count, 'the Java consumer received every message');
        const byId = new Map(messages.map((m) => [m.msgId, m]));
        const problems: string[] = [];
        for (const [i, r] of results.entries()) {
          const m = byId.get(r.msgId);
          if (!m) {
            problems.push(`${i}: msgId ${r.msgId} not received`);
            continue;
          }
          const big = i % 2 === 1;
          if (m.bodySha1 !== sha1(bodies[i]!)) problems.push(`${i}: body differs`);
          if (m.bodyLength !== bodies[i]!.length) problems.push(`${i}: body length ${m.bodyLength}`);
          if (m.tags !== (big ? 'Large' : 'Small')) problems.push(`${i}: tags ${m.tags}`);
          if (m.keys !== `order-${i} user-${i % 3}`) problems.push(`${i}: keys ${m.keys}`);
          if (m.properties.seq !== String(i) || m.properties.note !== 'ünïcödé & spaces')
            problems.push(`${i}: properties ${JSON.stringify(m.properties)}`);
          if (m.queueId !== r.messageQueue.queueId || m.queueOffset !== r.queueOffset)
            problems.push(`${i}: queue/offset differ from the send result`);
          if (m.offsetMsgId !== r.offsetMsgId) problems.push(`${i}: offsetMsgId ${m.offsetMsgId} vs ${r.offsetMsgId}`);
          // Compressed = bit 0 plus the zlib type bits (3 << 8). The 5.x Java client clears bit 0 once it
          // has decompressed (4.9 keeps it), so the type bits are what both versions still show.
          if (big !== ((m.sysFlag & 0x700) === 0x300))
            problems.push(`${i}: sysFlag 0x${m.sysFlag.toString(16)} for a ${m.bodyLength}-byte body`);
        }
        t.same(problems, [], 'body, tags, keys, properties, ids, queue offset and compression as sent');
      });

      t.test('Java producer → real broker → rocketwire push consumer, offsets checked by the Java admin', async (t) => {
        const count = 60;
        const size = 5000;
        const { sent } = await javaProduce({
          version,
          namesrv: cluster.namesrv,
          topic: 'JavaToRw',
          count,
          size,
          tag: 'J',
          keys: 'jk-{i}',
          props: { origin: 'java' },
        });
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
          return (
            !m ||
            sha1(m.body) !== sha1(expectedBody(s.i, size)) ||
            m.tags !== 'J' ||
            m.keys.join(' ') !== `jk-${s.i}` ||
            m.properties.origin !== 'java' ||
            m.queueId !== s.queueId ||
            m.queueOffset !== s.queueOffset
          );
        });
        t.same(
          bad.map((s) => s.i),
          [],
          'bodies (decompressed), tags, keys, properties and positions as the Java producer sent them',
        );

        const progress = await javaOffsets({
          version,
          namesrv: cluster.namesrv,
          group: 'java_to_rw_cg',
          topic: 'JavaToRw',
        });
        t.equal(progress.queues.length, 4, 'the Java admin sees committed offsets on all 4 queues');
        t.same(
          progress.queues.map((q) => q.consumerOffset),
          progress.queues.map((q) => q.brokerOffset),
          'committed offset = max offset on every queue',
        );
        t.equal(
          progress.queues.reduce((n, q) => n + q.brokerOffset, 0),
          count,
        );
      });

      t.test("rocketwire RECONSUME_LATER goes through the real broker's retry topic and comes back", async (t) => {
        await cluster.createTopic('RwRetry', { queues: 2 });
        const producer = new Producer({ group: 'rw_retry_pg', namesrvAddr: cluster.namesrv });
        await producer.start();
        t.teardown(() => producer.shutdown());
        const ids: string[] = [];
        for (let i = 0; i < 4; i++)
          ids.push(
            (await producer.send({ topic: 'RwRetry', body: `retry me ${i}`, tags: 'R', properties: { n: String(i) } }))
              .msgId,
          );
        const deliveries: Array<{
          msgId: string;
          topic: string;
          reconsumeTimes: number;
          body: string;
          n?: string;
          retryTopic?: string;
        }> = [];
        let done!: () => void;
        const back = new Promise<void>((r) => (done = r));
        const consumer = new PushConsumer({
          consumerGroup: 'rw_retry_cg',
          namesrvAddr: cluster.namesrv,
          subscriptions: { RwRetry: '*' },
          consumeFromWhere: 'first',
        });
        t.teardown(() => consumer.shutdown());
        const timer = setTimeout(done, 60_000);
        await consumer.start((msgs, ctx) => {
          const m = msgs[0]!;
          deliveries.push({
            msgId: m.msgId,
            topic: m.topic,
            reconsumeTimes: m.reconsumeTimes,
            body: m.body.toString(),
            n: m.properties.n,
            retryTopic: m.properties.RETRY_TOPIC,
          });
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
        t.same(
          again.map((d) => d.msgId).sort(),
          [...ids].sort(),
          'each message came back once, with its original msgId',
        );
        t.ok(
          again.every((d) => d.topic === 'RwRetry' && d.retryTopic === 'RwRetry'),
          'the real topic is restored (RETRY_TOPIC property kept)',
        );
        t.ok(
          again.every((d) => d.body === `retry me ${d.n}`),
          'body and properties survive the retry copy',
        );
      });

      t.test("batch send, and the broker filters tags by rocketwire's subscription", async (t) => {
        await cluster.createTopic('RwTags', { queues: 2 });
        const producer = new Producer({ group: 'rw_tags_pg', namesrvAddr: cluster.namesrv });
        await producer.start();
        t.teardown(() => producer.shutdown());
        const tags = ['TagA', 'TagB', 'TagC'];
        const batch = Array.from({ length: 30 }, (_, i) => ({
          topic: 'RwTags',
          body: `batch ${i}`,
          tags: tags[i % 3]!,
          keys: `b${i}`,
        }));
        const result = await producer.sendBatch(batch);
        t.equal(result.status, 'SEND_OK');
        t.equal(result.msgId.split(',').length, 30, 'one id per batch member');

        const java = await startJavaConsumer({
          version,
          namesrv: cluster.namesrv,
          topic: 'RwTags',
          group: 'rw_tags_java_cg',
          tagExpr: 'TagA || TagC',
          expect: 20,
          timeoutMs: 60_000,
        });
        const got: MessageExt[] = [];
        let done!: () => void;
        const twenty = new Promise<void>((r) => (done = r));
        const consumer = new PushConsumer({
          consumerGroup: 'rw_tags_cg',
          namesrvAddr: cluster.namesrv,
          subscriptions: { RwTags: 'TagA || TagC' },
          consumeFromWhere: 'first',
        });
        t.teardown(() => consumer.shutdown());
        const timer = setTimeout(done, 60_000);
        await consumer.start((msgs) => {
          got.push(...msgs);
          if (got.length >= 20) done();
          return 'CONSUME_SUCCESS';
        });
        await twenty;
        clearTimeout(timer);
        await delay(500); // anything that should not have come would show up now
        t.equal(got.length, 20, 'rocketwire got the 20 TagA/TagC members of the batch');
        t.ok(
          got.every((m) => m.tags === 'TagA' || m.tags === 'TagC'),
          'and no TagB',
        );
        t.same(
          new Set(got.map((m) => m.msgId)),
          new Set(result.msgId.split(',').filter((_, i) => i % 3 !== 1)),
          'with the ids the batch send returned',
        );
        const { messages } = await java.done;
        t.same(
          messages.map((m) => m.keys).sort(),
          got.map((m) => m.keys.join(' ')).sort(),
          'the Java consumer with the same expression got the same messages',
        );
      });

      t.test("orderly consumption under the real broker's queue locks", async (t) => {
        await cluster.createTopic('RwOrderly', { queues: 4 });
        const producer = new Producer({ group: 'rw_orderly_pg', namesrvAddr: cluster.namesrv });
        await producer.start();
        t.teardown(() => producer.shutdown());
        const orders = ['o1', 'o2', 'o3'];
        for (let step = 0; step < 10; step++) {
          for (const order of orders) {
            await producer.send(
              { topic: 'RwOrderly', body: `${order}:${step}`, keys: order },
              { selector: selectMessageQueueByHash, arg: order },
            );
          }
        }
        const seen = new Map<string, number[]>();
        let total = 0;
        let done!: () => void;
        const all = new Promise<void>((r) => (done = r));
        const consumer = new PushConsumer({
          consumerGroup: 'rw_orderly_cg',
          namesrvAddr: cluster.namesrv,
          subscriptions: { RwOrderly: '*' },
          consumeFromWhere: 'first',
          orderly: true,
        });
        t.teardown(() => consumer.shutdown());
        const timer = setTimeout(done, 60_000);
        await consumer.start((msgs) => {
          for (const m of msgs) {
            const [order, step] = m.body.toString().split(':');
            seen.set(order!, [...(seen.get(order!) ?? []), Number(step)]);
            total++;
          }
          if (total >= 30) done();
          return 'SUCCESS';
        });
        await all;
        clearTimeout(timer);
        for (const order of orders)
          t.same(seen.get(order), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], `${order}: every step, in order`);
        const locked = await cluster.invoke(
          cluster.brokers[0]!,
          createRequest(RequestCode.LOCK_BATCH_MQ, {
            body: Buffer.from(
              JSON.stringify({
                clientId: '127.0.0.1@intruder',
                consumerGroup: 'rw_orderly_cg',
                mqSet: consumer.assignment().filter((q) => q.topic === 'RwOrderly'),
              }),
            ),
          }),
        );
        t.same(
          JSON.parse(locked.body!.toString()).lockOKMQSet,
          [],
          'the broker refuses another client the queues rocketwire has locked',
        );
      });

      t.test('one group, a Java and a rocketwire consumer: same allocation, every message once', async (t) => {
        await cluster.createTopic('RwMixed', { queues: 4 });
        const group = 'rw_mixed_cg';
        const received: MessageExt[] = [];
        const consumer = new PushConsumer({
          consumerGroup: group,
          namesrvAddr: cluster.namesrv,
          subscriptions: { RwMixed: '*' },
          consumeFromWhere: 'first',
          rebalanceIntervalMs: 1000,
        });
        t.teardown(() => consumer.shutdown());
        await consumer.start((msgs) => {
          received.push(...msgs);
          return 'CONSUME_SUCCESS';
        });
        const java = await startJavaConsumer({
          version,
          namesrv: cluster.namesrv,
          topic: 'RwMixed',
          group,
          timeoutMs: 60_000,
        });
        // Wait until the group is split: rocketwire holds 2 of the 4 queues.
        const deadline = Date.now() + 30_000;
        const mine = () => consumer.assignment().filter((q) => q.topic === 'RwMixed');
        while (mine().length !== 2 && Date.now() < deadline) await delay(100);
        t.equal(mine().length, 2, 'rocketwire ends up with half of the queues');
        await delay(1500); // the Java side rebalances on the same notification; give it its turn
        const myQueues = new Set(mine().map((q) => q.queueId));
        await javaProduce({ version, namesrv: cluster.namesrv, topic: 'RwMixed', count: 40 });
        const until = Date.now() + 30_000;
        while (received.length + java.messages.length < 40 && Date.now() < until) await delay(100);
        t.same(new Set(mine().map((q) => q.queueId)), myQueues, 'the split held while the messages flowed');
        // What each side took while the group was split: read before Java stops, since rocketwire
        // then takes all four queues and may get again what Java consumed but had not committed
        // yet (at least once, as any handover), which is not what this test is about.
        const javaGot = [...java.messages];
        const mineGot = [...received];
        await java.stop();
        const ids = [...mineGot.map((m) => m.msgId), ...javaGot.map((m) => m.msgId)];
        t.equal(new Set(ids).size, 40, 'every message consumed');
        t.equal(ids.length, 40, '... exactly once across the two consumers');
        t.ok(
          mineGot.every((m) => myQueues.has(m.queueId)),
          'rocketwire consumed only its queues',
        );
        t.ok(
          javaGot.every((m) => !myQueues.has(m.queueId)),
          'Java consumed only the others',
        );
        t.ok(mineGot.length > 0 && javaGot.length > 0, 'both took part');
      });
    });
  }
}
