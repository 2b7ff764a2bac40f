// rocketwire on a real 5.3.3 controller-mode group (automatic master switch): the name server runs
// the embedded DLedger controller, two brokers of one broker name run enableControllerMode with
// allAckInSyncStateSet. A producer and a push consumer run; once the master's SyncStateSet holds
// the slave, the master is SIGKILLed and the controller promotes the slave. Asserted: nothing
// acknowledged is lost, no message is delivered twice, and both clients go on with the promoted
// master. Reported, not asserted: kill → promotion, promotion → first resumed send and consume,
// and the failed sends — the figures the fast route refresh exists for (Java's client, and
// rocketwire with `fastRouteRefresh: false`, wait for their next 30 s route poll).
//
// ROCKETWIRE_CONTROLLER_JAVA=1 adds the same failover measured with Java's DefaultMQProducer and
// DefaultMQPushConsumer (the old master restarted as the slave, then the new master SIGKILLed):
// a measurement, run by hand, not part of `npm test`.
import t from 'tap';
import { PushConsumer } from '../../lib/consumer/index.js';
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
    });
    t.teardown(() => cluster.stop({ graceful: false }));
    const [first, second] = [cluster.brokers[0]!, cluster.slaves[0]!];
    t.comment(`3 JVMs booted in ${Date.now() - started} ms; controller at ${cluster.controllerAddr}`);
    await waitForInSync(cluster, first, second);

    const topic = 'CtlFailover';
    await cluster.createTopic(topic, { queues: 4 });

    await t.test(
      'rocketwire producer and push consumer: nothing lost, nothing twice, back within seconds',
      async (t) => {
        const producer = new Producer({ group: 'ctl_failover_pg', namesrvAddr: cluster.namesrv, logger: false });
        await producer.start();
        t.teardown(() => producer.shutdown());
        const deliveries: Array<{ key: string; at: number }> = [];
        const consumer = new PushConsumer({
          consumerGroup: 'ctl_failover_cg',
          namesrvAddr: cluster.namesrv,
          subscriptions: { [topic]: '*' },
          consumeFromWhere: 'first',
          logger: false,
        });
        t.teardown(() => consumer.shutdown());
        await consumer.start((msgs) => {
          for (const m of msgs) deliveries.push({ key: m.body.toString(), at: Date.now() });
          return 'CONSUME_SUCCESS';
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
        const consumed = () => new Set(deliveries.map((d) => d.key));
        await until(() => acked.size >= 200 && consumed().size >= 200, 'sends consumed before the kill', 30_000);

        await cluster.killBroker(0);
        const killedAt = Date.now();
        const promoted = await promotedAt(cluster, second);
        await until(
          () => [...acked.values()].some((at) => at > promoted) && deliveries.some((d) => d.at > promoted),
          'sends and deliveries after the promotion',
          60_000,
        );
        await until(() => [...acked.values()].filter((at) => at > promoted).length >= 100, '100 sends after', 60_000);
        producing = false;
        await loop;

        const got = consumed();
        await waitFor(() => [...acked.keys()].every((k) => got.has(k) || consumed().has(k)), 30_000);
        const lost = [...acked.keys()].filter((k) => !consumed().has(k));
        t.same(lost.slice(0, 10), [], `every acknowledged send consumed (${lost.length} of ${acked.size} missing)`);
        const twice = deliveries.length - consumed().size;
        t.equal(twice, 0, `no message delivered twice (${deliveries.length} deliveries)`);

        const firstSend = Math.min(...[...acked.values()].filter((at) => at > killedAt));
        const firstDelivery = Math.min(...deliveries.filter((d) => d.at > promoted).map((d) => d.at));
        const failed = failures.filter((at) => at > killedAt).length;
        t.comment(
          `rocketwire: kill → promotion ${secs(promoted - killedAt)}; promotion → first send ${secs(firstSend - promoted)} ` +
            `(kill → send ${secs(firstSend - killedAt)}), promotion → first delivery ${secs(firstDelivery - promoted)}; ` +
            `${failed} failed sends; ${acked.size} acknowledged, ${deliveries.length} deliveries`,
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
