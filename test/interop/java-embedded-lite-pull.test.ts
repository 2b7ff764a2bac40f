// Java 5.3.3's DefaultLitePullConsumer against rocketwire's embedded broker, in one group with a
// rocketwire LitePullConsumer: the Java client sends LITE_PULL_MESSAGE (361, subscription in the
// header) whatever the broker's version, which the embedded broker answers as PULL_MESSAGE; the
// rocketwire member sends PULL_MESSAGE (11) to a broker that reports 4.9.8. The two split the queues
// and consume everything once.
import t from 'tap';
import { startBroker } from '../../lib/broker/index.js';
import { LitePullConsumer, type MessageExt } from '../../lib/consumer/index.js';
import { litePullConsumerImpl } from '../../lib/consumer/lite-pull/lite-pull-consumer.js';
import { ManualClock } from '../../lib/clock.js';
import { RequestCode } from '../../protocol/index.js';
import { spyOnBroker } from '../consumer/broker-spy.js';
import { produce, until } from '../consumer/helpers.js';
import { V5_VERSION } from './harness.js';
import { startJavaLitePull } from './java-lite-pull.js';
import { interopReady } from './skip.js';

t.setTimeout(120_000);

if (await interopReady(t, [V5_VERSION])) {
  const broker = await startBroker({ queues: 4 });
  t.teardown(() => broker.close());
  // The spy only reads the clock for timestamps; the broker itself runs on the system clock.
  const seen = spyOnBroker(broker, new ManualClock(0));

  t.test('Java and rocketwire lite pull consumers share a group on the embedded broker', async (t) => {
    const topic = 'LiteOnEmbedded';
    const group = 'lite_on_embedded_cg';
    await produce(broker.namesrv, topic, 4, (i) => ({ body: `init-${i}` }), { single: true }); // creates the topic's 4 queues
    const java = await startJavaLitePull({ namesrv: broker.namesrv, topic, group, from: 'last' });
    t.teardown(() => java.stop());
    const rw = new LitePullConsumer({ consumerGroup: group, namesrvAddr: broker.namesrv, consumeFromWhere: 'last' });
    rw.subscribe(topic);
    await rw.start();
    t.teardown(() => rw.shutdown());
    await until(() => rw.assignment().length === 2 && java.queues.length === 2, 'the 4 queues split 2 + 2', 60_000);
    await produce(broker.namesrv, topic, 200, (i) => ({ body: `e-${i}` }), { single: true });
    // The broker answers offset 0 for a new group on a queue that starts at 0 (as Apache's does), so
    // both may also read the 4 `init-` messages: only the 200 are counted.
    const got = new Map<string, MessageExt>();
    const javaBodies = (): string[] =>
      java.messages.map((m) => Buffer.from(m.body ?? '', 'base64').toString()).filter((b) => b.startsWith('e-'));
    await until(
      async () => {
        for (const m of await rw.poll(100)) if (m.body.toString().startsWith('e-')) got.set(m.body.toString(), m);
        return got.size + javaBodies().length >= 200;
      },
      'the 200 between both',
      60_000,
    );
    const javaGot = javaBodies();
    t.equal(got.size + javaGot.length, 200, 'exactly 200 deliveries');
    t.equal(new Set([...got.keys(), ...javaGot]).size, 200, 'every message once');
    t.ok(got.size > 0 && javaGot.length > 0, `both consumed (rocketwire ${got.size}, Java ${javaGot.length})`);
    const lite = seen.filter((s) => s.code === RequestCode.LITE_PULL_MESSAGE);
    t.ok(lite.length > 0, `the Java client's pulls reached the broker as 361 (${lite.length})`);
    t.ok(
      lite.every((s) => s.ext.subscription === '*' && (Number(s.ext.sysFlag) & 0x16) === 0x16),
      'with the subscription and sysFlag SUSPEND|SUBSCRIPTION|LITE',
    );
    const codes = litePullConsumerImpl(rw).counters.requestCodes;
    t.ok(
      (codes[11] ?? 0) > 0 && (codes[361] ?? 0) === 0,
      `rocketwire sent 11 to the 4.9.8-reporting broker (${JSON.stringify(codes)})`,
    );
  });
}
