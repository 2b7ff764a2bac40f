// Timer messages and namespaces offline: the Java 5.3.3 client against rocketwire's embedded broker (system clock):
//  - Java setDelayTimeMs(1000) and rocketwire delayMs 1000, each seen by the other side's consumer:
//    never before its time (the embedded wheel delivers on the millisecond, no precision floor);
//  - a Java producer and a rocketwire consumer of namespace NS_e meet in NS_e%topic, and a Java
//    consumer of the same namespace gets what rocketwire sends there.
import t, { type Test as Tap } from 'tap';
import { startBroker } from '../../lib/broker/index.js';
import { PushConsumer, type MessageExt } from '../../lib/consumer/index.js';
import { Producer } from '../../lib/producer/index.js';
import { V5_VERSION } from './harness.js';
import { waitFor } from '../support/until.js';
import { javaTimerProduce, startJavaTimerConsumer } from './java-timer-ns.js';
import { interopReady } from './skip.js';

t.setTimeout(120_000);

const DELAY_MS = 1000;

if (await interopReady(t, [V5_VERSION])) {
  const broker = await startBroker({ queues: 2 });
  t.teardown(() => broker.close());
  const topics = broker.instances[0]!.topics;
  for (const topic of ['EmbTimerA', 'EmbTimerB', 'NS_e%EmbNs']) topics.ensure(topic, 2);
  const figures: Record<string, number[]> = {};
  /**
   * The wheel's own figures: TIMER_DEQUEUE_MS − TIMER_OUT_MS (how late the broker re-wrote the
   * message; never negative) and receive − TIMER_OUT_MS (what the consumer saw, long-poll wake-up included).
   */
  const lateness = (
    t: Tap,
    name: string,
    msgs: Array<{ properties: Record<string, string>; receiveTime: number }>,
  ): void => {
    const out = msgs.map((m) => Number(m.properties.TIMER_OUT_MS));
    figures[`${name} broker dequeue − target ms`] = msgs.map((m, i) => Number(m.properties.TIMER_DEQUEUE_MS) - out[i]!);
    figures[`${name} receive − target ms`] = msgs.map((m, i) => m.receiveTime - out[i]!);
    t.ok(
      msgs.every((m, i) => Number(m.properties.TIMER_DEQUEUE_MS) >= out[i]!),
      `${name}: the broker never delivered early`,
    );
  };

  t.test('Java setDelayTimeMs → embedded broker → rocketwire, and rocketwire delayMs → Java', async (t) => {
    const got: Array<{ m: MessageExt; at: number }> = [];
    const consumer = new PushConsumer({
      consumerGroup: 'emb_timer_cg',
      namesrvAddr: broker.namesrv,
      subscriptions: { EmbTimerA: '*' },
      consumeFromWhere: 'first',
    });
    await consumer.start((msgs) => {
      const at = Date.now();
      for (const m of msgs) got.push({ m, at });
      return 'CONSUME_SUCCESS';
    });
    t.teardown(() => consumer.shutdown());
    const sent = await javaTimerProduce({ namesrv: broker.namesrv, topic: 'EmbTimerA', count: 3, delayMs: DELAY_MS });
    await waitFor(() => got.length >= 3, 20_000);
    t.equal(got.length, 3, 'rocketwire received the Java timer messages');
    const sentAt = new Map(sent.map((s) => [s.msgId, s.sendTime]));
    const late = got.map(({ m, at }) => at - sentAt.get(m.msgId)!);
    figures['Java→embedded→rocketwire send to receive ms'] = late;
    for (const d of late) t.ok(d >= DELAY_MS, `not before its time: ${d} ms`);
    lateness(
      t,
      'Java→embedded→rocketwire',
      got.map(({ m, at }) => ({ properties: m.properties, receiveTime: at })),
    );
    t.equal(got[0]!.m.properties.TIMER_DELAY_MS, String(DELAY_MS));

    const java = await startJavaTimerConsumer({
      namesrv: broker.namesrv,
      topic: 'EmbTimerB',
      group: 'emb_timer_java_cg',
    });
    t.teardown(() => java.proc.stop());
    const producer = new Producer({ group: 'emb_timer_pg', namesrvAddr: broker.namesrv });
    await producer.start();
    t.teardown(() => producer.shutdown());
    const at = new Map<string, number>();
    for (let i = 0; i < 3; i++) {
      const before = Date.now();
      at.set((await producer.send({ topic: 'EmbTimerB', body: `e${i}`, delayMs: DELAY_MS })).msgId, before);
    }
    await waitFor(() => java.received().length >= 3, 20_000);
    t.equal(java.received().length, 3, 'Java received the rocketwire timer messages');
    const late2 = java.received().map((m) => m.receiveTime - at.get(m.msgId)!);
    figures['rocketwire→embedded→Java send to receive ms'] = late2;
    for (const d of late2) t.ok(d >= DELAY_MS, `not before its time: ${d} ms`);
    lateness(t, 'rocketwire→embedded→Java', java.received());
  });

  t.test('namespace NS_e: Java and rocketwire meet on the embedded broker', async (t) => {
    const mine: MessageExt[] = [];
    const consumer = new PushConsumer({
      consumerGroup: 'emb_ns_cg',
      namespace: 'NS_e',
      namesrvAddr: broker.namesrv,
      subscriptions: { EmbNs: '*' },
      consumeFromWhere: 'first',
    });
    await consumer.start((msgs) => {
      mine.push(...msgs);
      return 'CONSUME_SUCCESS';
    });
    t.teardown(() => consumer.shutdown());
    await javaTimerProduce({ namesrv: broker.namesrv, topic: 'EmbNs', count: 1, namespace: 'NS_e' });
    await waitFor(() => mine.length >= 1, 20_000);
    t.same(
      mine.map((m) => [m.topic, m.body.toString()]),
      [['EmbNs', 'java-0']],
    );

    const java = await startJavaTimerConsumer({
      namesrv: broker.namesrv,
      topic: 'EmbNs',
      group: 'emb_ns_java_cg',
      namespace: 'NS_e',
    });
    t.teardown(() => java.proc.stop());
    const producer = new Producer({ group: 'emb_ns_pg', namespace: 'NS_e', namesrvAddr: broker.namesrv });
    await producer.start();
    t.teardown(() => producer.shutdown());
    await producer.send({ topic: 'EmbNs', body: 'from-rw' });
    await waitFor(() => java.received().length >= 2, 20_000);
    t.same(
      java
        .received()
        .map((m) => [m.topic, m.body])
        .sort(),
      [
        ['EmbNs', 'from-rw'],
        ['EmbNs', 'java-0'],
      ],
      'Java of NS_e got both, topic unwrapped',
    );
  });

  t.teardown(() => t.comment(`figures: ${JSON.stringify(figures)}`));
}
