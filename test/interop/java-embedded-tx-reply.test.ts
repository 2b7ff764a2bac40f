// The broker's checks of transaction ends and replies against the stock Java client (5.3.3 / 5.5.0
// jars) on rocketwire's
// embedded broker: a Java TransactionMQProducer's commits, rollbacks and check-backs end as they
// should while END_TRANSACTION ends only half messages, once each; and Java's
// request/reply works both ways while a reply is pushed only to the client whose request the
// broker stored; and Java's pop consumer pops and acks while POP checks invisibleTime and
// extraInfo.
import t from 'tap';
import { startBroker } from '../../lib/broker/index.js';
import { PushConsumer, type MessageExt } from '../../lib/consumer/index.js';
import { Producer } from '../../lib/producer/index.js';
import { createTopic, until } from '../consumer/helpers.js';
import { V55_VERSION, V5_VERSION } from './harness.js';
import { javaSetMessageRequestMode, startJavaPopConsumer } from './java-pop.js';
import { javaRequester, startJavaReplier } from './java-reply.js';
import { javaTxProduce } from './java-tx.js';
import { interopReady } from './skip.js';

t.setTimeout(240_000);

const COUNT = 20;

if (await interopReady(t, [V5_VERSION, V55_VERSION])) {
  t.test(
    'Java TransactionMQProducer → embedded broker: exactly the committed and the even checked messages, each once',
    async (t) => {
      const broker = await startBroker({ queues: 4, transactionCheckInterval: 1000, transactionTimeOut: 3000 });
      t.teardown(() => broker.close());
      const topic = 'JavaTxEmbedded';
      await createTopic(broker.brokers, topic, 4);
      const { summary, checked } = await javaTxProduce({
        namesrv: broker.namesrv,
        topic,
        group: 'java_tx_embedded_pg',
        commit: COUNT,
        rollback: COUNT,
        check: COUNT,
      });
      t.match(summary, {
        sent: 3 * COUNT,
        failed: 0,
        checked: COUNT,
        checkCommitted: COUNT / 2,
        checkRolledBack: COUNT / 2,
        unchecked: 0,
      });
      t.equal(checked.filter((c) => c.body !== 'check').length, 0, 'no committed or rolled back message was checked');
      const seen: MessageExt[] = [];
      const consumer = new PushConsumer({
        consumerGroup: 'rw_tx_embedded_cg',
        namesrvAddr: broker.namesrv,
        consumeFromWhere: 'first',
      });
      consumer.subscribe(topic);
      await consumer.start((msgs) => {
        seen.push(...msgs);
        return 'CONSUME_SUCCESS';
      });
      t.teardown(() => consumer.shutdown());
      await until(() => seen.length >= COUNT * 1.5, 'committed ones consumed', 60_000);
      const max = broker.instances[0]!;
      const held = [0, 1, 2, 3].reduce((n, q) => n + max.messageStore.getMaxOffset(topic, q), 0);
      t.equal(held, COUNT * 1.5, 'the topic holds exactly the committed and the even checked messages');
      t.equal(max.tx.end.counters.refused, 0, 'no end of the Java producer was refused');
      t.same(
        seen.filter((m) => String(m.body) === 'rollback'),
        [],
      );
    },
  );

  t.test('Java request/reply both ways through the embedded broker', async (t) => {
    const embedded = await startBroker({ queues: 2 });
    t.teardown(() => embedded.close());
    await createTopic(embedded.brokers, 'EmbeddedRwToJava', 2);
    await createTopic(embedded.brokers, 'EmbeddedJavaToRw', 2);
    const n = 20;
    const javaReplier = await startJavaReplier({
      namesrv: embedded.namesrv,
      topic: 'EmbeddedRwToJava',
      group: 'java_replier_cg',
      count: n,
    });
    t.teardown(() => javaReplier.stop());
    const requester = new Producer({ group: 'rw_embedded_requester_pg', namesrvAddr: embedded.namesrv });
    await requester.start();
    t.teardown(() => requester.shutdown());
    const bodies: string[] = [];
    for (let i = 0; i < n; i++)
      bodies.push(
        (
          await requester.request({ topic: 'EmbeddedRwToJava', body: `q${i}` }, i === 0 ? 60_000 : 15_000)
        ).body.toString(),
      );
    t.same(
      bodies,
      Array.from({ length: n }, (_, i) => `re:q${i}`),
      'rocketwire requester, Java replier: every reply',
    );
    await javaReplier.done;

    const replier = new Producer({ group: 'rw_embedded_replier_pg', namesrvAddr: embedded.namesrv });
    await replier.start();
    t.teardown(() => replier.shutdown());
    const consumer = new PushConsumer({
      consumerGroup: 'rw_embedded_replier_cg',
      namesrvAddr: embedded.namesrv,
      consumeFromWhere: 'first',
    });
    consumer.subscribe('EmbeddedJavaToRw');
    await consumer.start(async (msgs) => {
      for (const m of msgs) await replier.sendReply(m, `re:${m.body.toString()}`);
      return 'CONSUME_SUCCESS';
    });
    t.teardown(() => consumer.shutdown());
    const { replies, errors } = await javaRequester({
      version: V55_VERSION,
      namesrv: embedded.namesrv,
      topic: 'EmbeddedJavaToRw',
      count: n,
      timeoutMs: 15_000,
    });
    t.same(errors, [], 'Java requester: no request failed');
    t.same(
      replies.map((r) => r.body),
      Array.from({ length: n }, (_, i) => `re:q${i}`),
      'Java requester, rocketwire replier: every reply',
    );
    await until(() => embedded.instances[0]!.replyRequests!.size === 0, 'every push answered', 10_000);
    t.equal(embedded.instances[0]!.replyRequests!.size, 0, 'every request answered and forgotten');
  });

  t.test(
    'Java DefaultMQPushConsumer in pop mode on the embedded broker: pops and acks every message once',
    async (t) => {
      const broker = await startBroker({ queues: 2 });
      t.teardown(() => broker.close());
      const topic = 'JavaPopEmbedded';
      const group = 'java_pop_embedded_cg';
      await createTopic(broker.brokers, topic, 2);
      await javaSetMessageRequestMode({ namesrv: broker.namesrv, brokers: broker.brokers, topic, group, mode: 'POP' });
      const java = await startJavaPopConsumer({ namesrv: broker.namesrv, topic, group, expect: 30, timeoutMs: 60_000 });
      t.teardown(() => java.stop());
      const producer = new Producer({ group: 'java_pop_embedded_pg', namesrvAddr: broker.namesrv });
      await producer.start();
      t.teardown(() => producer.shutdown());
      for (let i = 0; i < 30; i++) await producer.send({ topic, body: `pop-${i}` });
      const { messages } = await java.done;
      const bodies = new Set(messages.map((m) => Buffer.from(m.body!, 'base64').toString()));
      t.equal(bodies.size, 30, 'Java popped all 30');
      const pops = broker.instances[0]!.pop;
      await until(() => pops.checkpoints.size === 0, 'every checkpoint acked', 20_000);
      t.equal(pops.checkpoints.size, 0, 'every Java ACK was accepted (its extraInfo is an 8-field receipt handle)');
    },
  );
}
