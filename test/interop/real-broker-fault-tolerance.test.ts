// Latency fault tolerance against two real 5.3.3 broker groups, with Toxiproxy in front of each
// broker (they bind 127.0.0.2 and advertise 127.0.0.1, where the proxies listen): broker-b made slow
// (600 ms latency toxic) or cut off (proxy disabled, the broker still registered with the name
// server). With sendLatencyFaultEnable the sends move to broker-a; without it they keep going to
// broker-b, half of them — for rocketwire and, on the slow broker, for Java's DefaultMQProducer with
// the same setting (-Dcom.rocketmq.sendLatencyEnable, read by its ClientConfig).
import t from 'tap';
import { Producer, ProducerEvents, type ProducerOptions } from '../../lib/producer/index.js';
import { startRealCluster, V5_VERSION } from './harness.js';
import { javaProduce } from './java-client.js';
import { interopReady } from './skip.js';
import { startToxiproxy, toxiproxyBinary, toxiproxyPresent } from './toxiproxy.js';
import { until } from '../support/until.js';

t.setTimeout(240_000);

const TOPIC = 'FaultTolerance';
const SENDS = 16;
/** ≥ 550 ms: Java's third latency step, 2000 ms out of selection after each slow send. */
const SLOW_MS = 600;

if (!toxiproxyPresent() && process.env.ROCKETWIRE_REQUIRE_JAVA !== '1') {
  t.plan(0, `fault-tolerance interop skipped: ${toxiproxyBinary()} not found (.ci/install-deps builds it)`);
} else if (await interopReady(t, [V5_VERSION])) {
  const began = Date.now();
  const toxi = await startToxiproxy();
  t.teardown(() => toxi.stop());
  const cluster = await startRealCluster({ version: V5_VERSION, brokers: 2, brokerBindHost: '127.0.0.2' });
  t.teardown(() => cluster.stop({ graceful: false }));
  for (const [i, name] of cluster.brokerNames.entries())
    await toxi.createProxy(name, cluster.brokers[i]!, cluster.brokerBinds[i]!);
  await cluster.createTopic(TOPIC, { queues: 4 });
  t.comment(`cluster and proxies up in ${Date.now() - began} ms`);

  let seq = 0;
  /** `SENDS` awaited sends from a fresh producer: the broker of each result, and the brokers of failed attempts. */
  async function rocketwireSends(extra: Partial<ProducerOptions>) {
    const producer = new Producer({ group: `fault_pg_${++seq}`, namesrvAddr: cluster.namesrv, ...extra });
    await producer.start();
    const failedOn: string[] = [];
    producer.on(ProducerEvents.SEND, (e) => {
      if (e.status === 'FAILED') failedOn.push(e.queue.brokerName);
    });
    const landedOn: string[] = [];
    for (let i = 0; i < SENDS; i++)
      landedOn.push((await producer.send({ topic: TOPIC, body: `m${i}` })).messageQueue.brokerName);
    return { producer, landedOn, failedOn };
  }
  const onB = (brokers: string[]) => brokers.filter((b) => b === 'broker-b').length;

  t.test('broker-b slow: sends move to broker-a with the option on, not with it off; Java alike', async (t) => {
    await toxi.addToxic('broker-b', { type: 'latency', attributes: { latency: SLOW_MS, jitter: 0 } });
    t.teardown(() => toxi.reset());

    const off = await rocketwireSends({});
    await off.producer.shutdown();
    t.equal(onB(off.landedOn), SENDS / 2, 'off: round robin keeps sending half to the slow broker');

    const on = await rocketwireSends({ sendLatencyFaultEnable: true });
    await on.producer.shutdown();
    t.ok(onB(on.landedOn) <= 2, `on: ${onB(on.landedOn)} of ${SENDS} to the slow broker (the one that showed it slow)`);

    const javaOff = await javaProduce({ namesrv: cluster.namesrv, topic: TOPIC, count: SENDS });
    const javaOn = await javaProduce({
      namesrv: cluster.namesrv,
      topic: TOPIC,
      count: SENDS,
      jvmArgs: ['-Dcom.rocketmq.sendLatencyEnable=true'],
    });
    const jOff = onB(javaOff.sent.map((s) => s.brokerName));
    const jOn = onB(javaOn.sent.map((s) => s.brokerName));
    t.comment(
      `to broker-b of ${SENDS}: rocketwire off ${onB(off.landedOn)}, on ${onB(on.landedOn)}; Java off ${jOff}, on ${jOn}`,
    );
    t.equal(jOff, SENDS / 2, 'Java off: round robin keeps sending half to the slow broker too');
    t.ok(jOn <= 2, 'Java on: passes it over too');
  });

  t.test(
    'broker-b cut off: one failed attempt with the option on, one per round with it off; the detector sees it back',
    async (t) => {
      await toxi.setEnabled('broker-b', false);
      t.teardown(() => toxi.reset());

      const off = await rocketwireSends({});
      await off.producer.shutdown();
      t.equal(
        off.landedOn.filter((b) => b === 'broker-a').length,
        SENDS,
        'every send stored on broker-a after a retry',
      );
      // Round robin over a0–a3 b0–b3 from a random start: the first attempt on broker-b comes within
      // 5 sends, then one every 4 (the retry skips b1–b3 and lands on a0), so at least 3 of 16
      const atLeast = Math.floor((SENDS - 5) / 4) + 1;
      t.ok(onB(off.failedOn) >= atLeast, `off: ${onB(off.failedOn)} attempts failed on broker-b`);

      const on = await rocketwireSends({ sendLatencyFaultEnable: true, startDetectorEnable: true });
      t.teardown(() => on.producer.shutdown());
      t.equal(on.landedOn.filter((b) => b === 'broker-a').length, SENDS, 'every send stored on broker-a');
      t.equal(onB(on.failedOn), 1, 'on: broker-b isolated after its first failed attempt');
      const tolerance = on.producer['sendPath'].faults.tolerance;
      t.equal(tolerance.isReachable('broker-b'), false, 'with the detector: marked unreachable');

      await toxi.setEnabled('broker-b', true);
      await until(() => tolerance.isReachable('broker-b'), 'the detector to find broker-b answering', 20_000, 100);
      t.pass('the detector probed broker-b (GET_MAX_OFFSET) and marked it reachable again');
      t.comment(`file wall time so far ${Date.now() - began} ms`);
    },
  );
}
