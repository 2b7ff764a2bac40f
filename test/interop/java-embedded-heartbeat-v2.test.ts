// Java's client with heartbeat V2 (-Dcom.rocketmq.heartbeat.v2=true, 5.3.3 jars) against
// rocketwire's embedded broker: the broker answers as Apache's does, so after the first full
// heartbeat the Java consumer sends heartbeats without subscriptions, the broker keeps the group's
// subscription from the first, and the consumer receives what is sent meanwhile.
import t from 'tap';
import { startBroker } from '../../lib/broker/index.js';
import { until } from '../support/until.js';
import { V5_VERSION } from './harness.js';
import { javaProduce, startJavaConsumer } from './java-client.js';
import { interopReady } from './skip.js';

t.setTimeout(180_000);

if (await interopReady(t, [V5_VERSION])) {
  const broker = await startBroker({ queues: 4 });
  t.teardown(() => broker.close());

  t.test('Java V2 heartbeats: sent without subscriptions, the subscription kept, every message received', async (t) => {
    const topic = 'JavaHbV2';
    const group = 'java_hbv2_cg';
    const b = broker.instances[0]!;
    await javaProduce({ namesrv: broker.namesrv, topic, count: 20 });
    const consumer = await startJavaConsumer({
      namesrv: broker.namesrv,
      topic,
      group,
      expect: 40,
      timeoutMs: 90_000,
      from: 'first',
      jvmArgs: ['-Dcom.rocketmq.heartbeat.v2=true'],
    });
    t.teardown(() => consumer.stop());
    // RefClient heartbeats every second
    await until(() => b.consumers.heartbeats.withoutSub >= 3, 'three heartbeats without subscriptions', 60_000);
    const info = b.consumers.find(group)!;
    t.not(info.heartbeatFingerprint ?? 0, 0, "the group holds the Java client's fingerprint");
    t.ok(info.subscriptions.has(topic), 'and its subscription from the full heartbeat');
    await javaProduce({ namesrv: broker.namesrv, topic, count: 20 });
    const { summary } = await consumer.done;
    t.equal(summary.received, 40, 'the Java consumer received all 40');
    t.ok(b.consumers.heartbeats.full >= 1, 'after at least one full heartbeat');
  });
}
