// rocketwire on a real 5.3.3 controller-mode group (automatic master switch): the name server runs
// the embedded DLedger controller, two brokers of one broker name run enableControllerMode with
// allAckInSyncStateSet. A producer and a push consumer run; once the master's SyncStateSet holds
// the slave, the master is SIGKILLed and the controller promotes the slave. Asserted: nothing
// acknowledged is lost, no message is delivered twice, and both clients go on with the promoted
// master. Reported, not asserted: kill → promotion, promotion → first resumed send and consume,
// and the failed sends — the figures the fast route refresh exists for (Java's client, and
// rocketwire with `fastRouteRefresh: false`, wait for their next 30 s route poll).
//
// A lite pull consumer and a POP SimpleConsumer run beside the push consumer, each in its own
// group: each gets every acknowledged message (POP may hand a message out again across the
// failover, its popped-but-unacked state having lived on the dead master: reported). With
// ROCKETWIRE_FAST_ROUTE_REFRESH=0 the rocketwire clients run with `fastRouteRefresh: false`
// (Java's behaviour), for the comparison.
//
// ROCKETWIRE_CONTROLLER_JAVA=1 adds the same failover measured with Java's DefaultMQProducer and
// DefaultMQPushConsumer (the old master restarted as the slave, then the new master SIGKILLed):
// a measurement, run by hand, not part of `npm test`.
import t from 'tap';
import { LitePullConsumer, PushConsumer } from '../../lib/consumer/index.js';
import { SimpleConsumer } from '../../lib/consumer/pop/simple-consumer.js';
import { Producer } from '../../lib/producer/index.js';
import { createRequest } from '../../protocol/index.js';
import { delay, startRealCluster, V5_VERSION, type RealCluster } from './harness.js';
import { until, waitFor } from '../support/until.js';
import { javaProduceStream, startJavaConsumer } from './java-client.js';
import { interopReady } from './skip.js';

t.setTimeout(300_000);

interface SyncState {
  masterAddress: string;
  inSync: string[];
}

/** CONTROLLER_GET_SYNC_STATE_DATA (1006) on the controller: broker-a's master and SyncStateSet. */
async function syncState(cluster: RealCluster): Promise<SyncState | null> {
  try {
    const res = await cluster.invoke(
      cluster.controllerAddr,
      createRequest(1006, { body: Buffer.from(JSON.stringify([cluster.brokerNames[0]])) }),
      { timeoutMs: 2000 },
    );
    const info = JSON.parse(res.body?.toString() ?? '{}') as {
      replicasInfoTable?: Record<string, { masterAddress?: string; inSyncReplicas?: Array<{ brokerAddress: string }> }>;
    };
    const group = info.replicasInfoTable?.[cluster.brokerNames[0]!];
    if (!group) return null;
    return {
      masterAddress: group.masterAddress ?? '',
      inSync: (group.inSyncReplicas ?? []).map((r) => r.brokerAddress),
    };
  } catch {
    return null;
  }
}

/** Waits until `master` is the group's master with `slave` in its SyncStateSet (the controller promotes only from it). */
async function waitForInSync(cluster: RealCluster, master: string, slave: string): Promise<void> {
  let last: SyncState | null = null;
  await until(
    async () => {
      last = await syncState(cluster);
      return last?.masterAddress === master && last.inSync.includes(slave);
    },
    () => `${slave} in ${master}'s SyncStateSet (last: ${JSON.stringify(last)})`,
    60_000,
    200,
  );
}

/** Polls the controller until `addr` is the master; the wall time it was first seen so. */
async function promotedAt(cluster: RealCluster, addr: string): Promise<number> {
  await until(async () => (await syncState(cluster))?.masterAddress === addr, `${addr} promoted`, 60_000, 50);
  return Date.now();
}

const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

if (await interopReady(t, [V5_VERSION])) {
  t.test('real RocketMQ 5.3.3 controller mode: master SIGKILLed, slave promoted', async (t) => {
    const started = Date.now();
    const cluster = await startRealCluster({
      version: V5_VERSION,
      brokers: 1,
      slaves: true,
      controller: true,
      brokerHeapMb: 256,
      // POP needs the timer wheel (the harness turns it off to save memory)
      brokerConfig: { timerWheelEnable: true },
    });
    t.teardown(() => cluster.stop({ graceful: false }));
    const [first, second] = [cluster.brokers[0]!, cluster.slaves[0]!];
    t.comment(`3 JVMs booted in ${Date.now() - started} ms; controller at ${cluster.controllerAddr}`);
    await waitForInSync(cluster, first, second);

    const topic = 'CtlFailover';
    await cluster.createTopic(topic, { queues: 4 });

    await t.test(
      'rocketwire producer, push, lite pull and POP consumers: nothing lost, back within seconds',
      async (t) => {
        const fastRouteRefresh = process.env.ROCKETWIRE_FAST_ROUTE_REFRESH !== '0';
        const common = { namesrvAddr: cluster.namesrv, logger: false as const, fastRouteRefresh };
        const producer = new Producer({ group: 'ctl_failover_pg', ...common });
        await producer.start();
        t.teardown(() => producer.shutdown());
        type Got = Array<{ key: string; at: number }>;
        const pushGot: Got = [];
        const consumer = new PushConsumer({
          consumerGroup: 'ctl_failover_cg',
          subscriptions: { [topic]: '*' },
          consumeFromWhere: 'first',
          ...common,
        });
        t.teardown(() => consumer.shutdown());
        await consumer.start((msgs) => {
          for (const m of msgs) pushGot.push({ key: m.body.toString(), at: Date.now() });
          return 'CONSUME_SUCCESS';
        });
        // lite pull and POP: each its own group, so each must get every message
        const lite = new LitePullConsumer({
          consumerGroup: 'ctl_failover_lite_cg',
          consumeFromWhere: 'first',
          ...common,
        });
        lite.subscribe(topic);
        await lite.start();
        t.teardown(() => lite.shutdown());
        const pop = new SimpleConsumer({
          consumerGroup: 'ctl_failover_pop_cg',
          topic,
          initMode: 'MIN',
          awaitDurationMs: 1000,
          ...common,
        });
        await pop.start();
        t.teardown(() => pop.shutdown());
        const liteGot: Got = [];
        const popGot: Got = [];
        let pulling = true;
        const liteLoop = (async () => {
          while (pulling) {
            const msgs = await lite.poll(1000).catch(() => []);
            for (const m of msgs) liteGot.push({ key: m.body.toString(), at: Date.now() });
          }
        })();
        const popLoop = (async () => {
          while (pulling) {
            const msgs = await pop.receive(32, 20_000).catch(async () => {
              await delay(100);
              return [];
            });
            for (const m of msgs) {
              popGot.push({ key: m.body.toString(), at: Date.now() });
              await pop.ack(m).catch(() => undefined);
            }
          }
        })();
        t.teardown(async () => {
          pulling = false;
          await Promise.all([liteLoop, popLoop]);
        });

        const acked = new Map<string, number>();
        const failures: number[] = [];
        let producing = true;
        let seq = 0;
        const loop = (async () => {
          while (producing) {
            const key = `k${seq++}`;
            try {
              const r = await producer.send({ topic, body: key, keys: key });
              if (r.status === 'SEND_OK') acked.set(key, Date.now());
              else failures.push(Date.now());
            } catch {
              failures.push(Date.now());
            }
            await delay(10);
          }
        })();
        t.teardown(async () => {
          producing = false;
          await loop;
        });
        const keysOf = (got: Got) => new Set(got.map((d) => d.key));
        const hasAll = (got: Got) => {
          const keys = keysOf(got);
          return [...acked.keys()].every((k) => keys.has(k));
        };
        await until(
          () => acked.size >= 200 && [pushGot, liteGot, popGot].every((g) => keysOf(g).size >= 200),
          'sends consumed by the three consumers before the kill',
          60_000,
        );

        await cluster.killBroker(0);
        const killedAt = Date.now();
        const promoted = await promotedAt(cluster, second);
        const after = (got: Array<{ at: number }>) => got.some((d) => d.at > promoted);
        await until(
          () =>
            [...acked.values()].filter((at) => at > promoted).length >= 100 && [pushGot, liteGot, popGot].every(after),
          "100 sends and every consumer's deliveries after the promotion",
          90_000,
        );
        producing = false;
        await loop;

        await waitFor(() => [pushGot, liteGot, popGot].every(hasAll), 60_000);
        for (const [name, got] of [
          ['push', pushGot],
          ['lite pull', liteGot],
          ['POP', popGot],
        ] as const) {
          const keys = keysOf(got);
          const lost = [...acked.keys()].filter((k) => !keys.has(k));
          t.same(
            lost.slice(0, 10),
            [],
            `${name}: every acknowledged send consumed (${lost.length} of ${acked.size} missing)`,
          );
        }
        t.equal(
          pushGot.length - keysOf(pushGot).size,
          0,
          `push: no message delivered twice (${pushGot.length} deliveries)`,
        );
        t.equal(liteGot.length - keysOf(liteGot).size, 0, `lite pull: no message delivered twice (${liteGot.length})`);

        const firstAfter = (got: Array<{ at: number }>, since: number) =>
          secs(Math.min(...got.filter((d) => d.at > since).map((d) => d.at)) - promoted);
        const sends = [...acked.values()].map((at) => ({ at }));
        const failed = failures.filter((at) => at > killedAt).length;
        t.comment(
          `rocketwire (fastRouteRefresh ${fastRouteRefresh}): kill → promotion ${secs(promoted - killedAt)}; ` +
            `promotion → first send ${firstAfter(sends, killedAt)}, push ${firstAfter(pushGot, promoted)}, ` +
            `lite pull ${firstAfter(liteGot, promoted)}, POP ${firstAfter(popGot, promoted)}; ${failed} failed sends; ` +
            `${acked.size} acknowledged; POP repeats ${popGot.length - keysOf(popGot).size} (at least once across a failover)`,
        );
      },
    );

    if (process.env.ROCKETWIRE_CONTROLLER_JAVA !== '1') return;
    await t.test("Java's producer and push consumer through the same failover (measurement)", async (t) => {
      // The old master comes back as the slave; once it is in the SyncStateSet, the new master dies.
      await cluster.startBroker(0);
      await waitForInSync(cluster, second, first);
      const consumer = await startJavaConsumer({
        namesrv: cluster.namesrv,
        topic,
        group: 'ctl_failover_java_cg',
        from: 'last',
        timeoutMs: 240_000,
      });
      t.teardown(() => consumer.stop());
      const producer = await javaProduceStream({ namesrv: cluster.namesrv, topic, count: 1_000_000 });
      t.teardown(() => producer.stop());
      await until(() => producer.sent().length >= 200, 'Java sends before the kill', 60_000);
      await cluster.killBroker(0, { slave: true });
      const killedAt = Date.now();
      const promoted = await promotedAt(cluster, first);
      await until(() => producer.sent().some((s) => s.at > promoted), 'a Java send after the promotion', 120_000);
      const firstSend = Math.min(
        ...producer
          .sent()
          .filter((s) => s.at > killedAt)
          .map((s) => s.at),
      );
      const failed = producer.errors().filter((s) => s.at > killedAt).length;
      await until(
        () => consumer.messages.some((m) => m.bornTimestamp > promoted),
        'a Java delivery of a message born after the promotion',
        120_000,
      );
      t.comment(
        `Java: kill → promotion ${secs(promoted - killedAt)}; promotion → first send ${secs(firstSend - promoted)} ` +
          `(kill → send ${secs(firstSend - killedAt)}); ${failed} failed sends`,
      );
      t.pass('measured');
    });
  });
}
