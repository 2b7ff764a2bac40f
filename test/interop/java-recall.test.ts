// Recalled timer messages never reach a consumer, with the Java client on both sides of the wire:
//  - embedded broker (recallMessageEnable): rocketwire sends 6 timer messages and recalls 3 → the
//    Java 5.3.3 push consumer gets exactly the other 3, and the topic holds only those;
//  - embedded broker: a Java 5.5.0 producer recalls with its own send results' handles (Java's
//    recallMessage against RecallMessageProcessor here) → rocketwire's push consumer gets the rest;
//  - a real Apache 5.3.3 broker (recallMessageEnable=true, timerPrecisionMs=100): rocketwire's
//    handles and recallMessage against Apache's RecallMessageProcessor and TimerMessageStore →
//    the Java consumer gets exactly the messages not recalled.
// The proof that a recalled message never arrives is the topic's max offset (what the broker ever
// wrote there), read once everything due has been delivered, beside the consumer's own list.
import t, { type Test } from 'tap';
import { startBroker } from '../../lib/broker/index.js';
import { PushConsumer, type MessageExt } from '../../lib/consumer/index.js';
import { Producer } from '../../lib/producer/index.js';
import { RemotingClient } from '../../lib/remoting/index.js';
import { createRequest, RequestCode, ResponseCode, type RemotingCommand } from '../../protocol/index.js';
import { until } from '../support/until.js';
import { startRealCluster, V55_VERSION, V5_VERSION } from './harness.js';
import { javaTimerProduce, startJavaTimerConsumer, type JavaRecall } from './java-timer-ns.js';
import { interopReady } from './skip.js';

t.setTimeout(180_000);

const COUNT = 6;
const DELAY_MS = 2500;

async function maxOffset(invoke: (req: RemotingCommand) => Promise<RemotingCommand>, topic: string): Promise<number> {
  const res = await invoke(createRequest(RequestCode.GET_MAX_OFFSET, { extFields: { topic, queueId: '0' } }));
  if (res.code !== ResponseCode.SUCCESS) throw new Error(`GET_MAX_OFFSET ${topic}: ${res.code} ${res.remark}`);
  return Number(res.extFields!.offset);
}

/** rocketwire sends COUNT timer messages, recalling every other one (0, 2, 4) right after its send; then a sentinel due later. */
async function sendAndRecall(t: Test, namesrv: string, topic: string, delayMs: number) {
  const producer = new Producer({ group: `${topic}_pg`, namesrvAddr: namesrv });
  await producer.start();
  t.teardown(() => producer.shutdown());
  const kept: string[] = [];
  const recalled: string[] = [];
  for (let i = 0; i < COUNT; i++) {
    const r = await producer.send({ topic, body: `rw-${i}`, delayMs });
    t.ok(r.recallHandle, `#${i} has a recall handle`);
    if (i % 2 === 0) {
      t.equal(await producer.recallMessage(topic, r.recallHandle!), r.msgId, `#${i} recalled`);
      recalled.push(r.msgId);
    } else kept.push(r.msgId);
  }
  // due after every slot the others fall in: once it arrives, everything before it was dequeued
  kept.push((await producer.send({ topic, body: 'sentinel', delayMs: delayMs + 1000 })).msgId);
  return { kept, recalled };
}

if (await interopReady(t, [V5_VERSION, V55_VERSION])) {
  t.test('embedded broker: rocketwire recalls → the Java consumer never gets them', async (t) => {
    const broker = await startBroker({ queues: 1, recallMessageEnable: true });
    t.teardown(() => broker.close());
    const topic = 'EmbRecallToJava';
    broker.instances[0]!.topics.ensure(topic, 1);
    const java = await startJavaTimerConsumer({
      namesrv: broker.namesrv,
      topic,
      group: 'emb_recall_java_cg',
      queues: 1,
    });
    t.teardown(() => java.proc.stop());
    const { kept, recalled } = await sendAndRecall(t, broker.namesrv, topic, DELAY_MS);
    await until(
      () => java.received().some((m) => m.msgId === kept.at(-1)),
      'the sentinel at the Java consumer',
      30_000,
    );
    await until(() => broker.instances[0]!.timers!.waiting === 0, 'no timer left, delete markers included');
    const c = new RemotingClient();
    t.teardown(() => c.close());
    t.equal(await maxOffset((r) => c.invoke(broker.broker, r), topic), kept.length, 'the topic holds only the kept');
    t.same(new Set(java.received().map((m) => m.msgId)), new Set(kept), 'Java got exactly the kept messages');
    t.notOk(
      java.received().some((m) => recalled.includes(m.msgId)),
      'and none recalled',
    );
  });

  t.test(
    'embedded broker: a Java 5.5.0 producer recalls with its own handles → rocketwire never gets them',
    async (t) => {
      const broker = await startBroker({ queues: 1, recallMessageEnable: true });
      t.teardown(() => broker.close());
      const topic = 'EmbRecallFromJava';
      broker.instances[0]!.topics.ensure(topic, 1);
      const recalls: JavaRecall[] = [];
      const sent = await javaTimerProduce({
        version: V55_VERSION,
        namesrv: broker.namesrv,
        topic,
        count: COUNT,
        delayMs: DELAY_MS,
        recallEvery: 2,
        recalls,
      });
      t.ok(
        sent.every((s) => s.recallHandle !== ''),
        "every Java send result carries the embedded broker's handle",
      );
      t.same(
        recalls.map((r) => [r.type, r.answer]),
        sent.filter((_, i) => i % 2 === 0).map((s) => ['recalled', s.msgId]),
        'Java recalled 0, 2, 4 and the broker answered their ids',
      );
      const got: MessageExt[] = [];
      const consumer = new PushConsumer({
        consumerGroup: 'emb_recall_rw_cg',
        namesrvAddr: broker.namesrv,
        subscriptions: { [topic]: '*' },
        consumeFromWhere: 'first',
      });
      await consumer.start((msgs) => {
        got.push(...msgs);
        return 'CONSUME_SUCCESS';
      });
      t.teardown(() => consumer.shutdown());
      const kept = sent.filter((_, i) => i % 2 === 1).map((s) => s.msgId);
      await until(() => broker.instances[0]!.timers!.waiting === 0, 'every timer due', 30_000);
      await until(() => got.length >= kept.length, 'the kept messages at rocketwire', 30_000);
      const c = new RemotingClient();
      t.teardown(() => c.close());
      t.equal(await maxOffset((r) => c.invoke(broker.broker, r), topic), kept.length, 'the topic holds only the kept');
      t.same(new Set(got.map((m) => m.msgId)), new Set(kept));
    },
  );

  t.test('real Apache 5.3.3 broker: rocketwire recalls → the Java consumer never gets them', async (t) => {
    const cluster = await startRealCluster({
      version: V5_VERSION,
      brokerConfig: { timerWheelEnable: true, timerPrecisionMs: 100, recallMessageEnable: true },
    });
    t.teardown(() => cluster.stop({ graceful: false }));
    const topic = 'RealRecallToJava';
    await cluster.createTopic(topic, { queues: 1 });
    const java = await startJavaTimerConsumer({
      namesrv: cluster.namesrv,
      topic,
      group: 'real_recall_java_cg',
      queues: 1,
    });
    t.teardown(() => java.proc.stop());
    const { kept, recalled } = await sendAndRecall(t, cluster.namesrv, topic, DELAY_MS);
    await until(
      () => java.received().some((m) => m.msgId === kept.at(-1)),
      'the sentinel at the Java consumer',
      30_000,
    );
    t.equal(
      await maxOffset((r) => cluster.invoke(cluster.brokers[0]!, r), topic),
      kept.length,
      "Apache's timer store wrote only the kept messages to the topic",
    );
    t.same(new Set(java.received().map((m) => m.msgId)), new Set(kept), 'Java got exactly the kept messages');
    t.notOk(
      java.received().some((m) => recalled.includes(m.msgId)),
      'and none recalled',
    );
  });
}
