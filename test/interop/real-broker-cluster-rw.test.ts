// rocketwire alone on a real two-broker 5.3.3 cluster, through a broker outage: a topic with 4 queues
// on each broker, one rocketwire producer sending all the time, three rocketwire push consumers in
// one group that split the 8 queues between them. Broker-b is stopped mid-run and started again:
// meanwhile sends go to broker-a and the consumers keep consuming its queues, and in the end every
// message the producer had acknowledged is consumed (at least once: duplicates are allowed).
import t from 'tap';
import { PushConsumer } from '../../lib/consumer/index.js';
import { Producer } from '../../lib/producer/index.js';
import { delay, startRealCluster, V5_VERSION } from './harness.js';
import { waitFor } from '../support/until.js';
import { interopReady } from './skip.js';

t.setTimeout(240_000);

const TOPIC = 'RwFailover';
const GROUP = 'rw_failover_cg';

type Phase = 'before' | 'outage' | 'restarted';

interface Acked {
  msgId: string;
  brokerName: string;
  phase: Phase;
}

if (await interopReady(t, [V5_VERSION])) {
  const cluster = await startRealCluster({ version: V5_VERSION, brokers: 2 });
  t.teardown(() => cluster.stop({ graceful: false }));
  t.comment(`brokers ${cluster.brokers.join(', ')} booted in ${cluster.bootMs.brokers.join(', ')} ms`);

  t.test('three rocketwire consumers and a producer over two brokers, one broker stopped and restarted', async (t) => {
    const route = await cluster.createTopic(TOPIC, { queues: 4 });
    t.same(
      route.brokerDatas.map((b) => b.brokerName).sort(),
      ['broker-a', 'broker-b'],
      'the topic lives on both brokers',
    );

    // ---- three consumers in one group ----
    const received: string[][] = [[], [], []];
    const consumers = received.map(
      (_, i) =>
        new PushConsumer({
          consumerGroup: GROUP,
          namesrvAddr: cluster.namesrv,
          instanceName: `failover-${i}`,
          subscriptions: { [TOPIC]: '*' },
          consumeFromWhere: 'first',
          rebalanceIntervalMs: 2000,
          persistOffsetIntervalMs: 1000,
          pollNameServerIntervalMs: 1000,
        }),
    );
    for (const c of consumers) t.teardown(() => c.shutdown());
    for (const [i, c] of consumers.entries()) {
      await c.start((msgs) => {
        for (const m of msgs) received[i]!.push(m.msgId);
        return 'CONSUME_SUCCESS';
      });
    }
    const uniqueReceived = new Set<string>();
    const receivedCount = () => {
      for (const r of received) for (const id of r) uniqueReceived.add(id);
      return uniqueReceived.size;
    };

    const owned = () =>
      consumers.map((c) =>
        c
          .assignment()
          .filter((q) => q.topic === TOPIC)
          .map((q) => `${q.brokerName}/${q.queueId}`),
      );
    const split = () => {
      const o = owned();
      return o.every((qs) => qs.length > 0) && o.flat().length === 8 && new Set(o.flat()).size === 8;
    };
    // Each consumer rebalances on its own schedule: the split must also hold twice in a row.
    const settled = await waitFor(() => split(), 30_000);
    await delay(300);
    t.ok(settled && split(), `the three consumers split the queues: ${JSON.stringify(owned())}`);
    const all = owned().flat();
    t.equal(all.length, 8, 'eight queues owned in all');
    t.equal(new Set(all).size, 8, 'no queue owned twice');
    t.same(
      [...new Set(all.map((q) => q.split('/')[0]))].sort(),
      ['broker-a', 'broker-b'],
      'queues of both brokers are owned',
    );
    t.ok(
      owned().every((qs) => qs.length > 0),
      'every consumer holds queues',
    );

    // ---- a producer sending all the time ----
    const producer = new Producer({
      group: 'rw_failover_pg',
      namesrvAddr: cluster.namesrv,
      pollNameServerIntervalMs: 1000,
    });
    await producer.start();
    t.teardown(() => producer.shutdown());
    const acked: Acked[] = [];
    const failures: Record<Phase, string[]> = { before: [], outage: [], restarted: [] };
    let phase: Phase = 'before';
    let producing = true;
    let seq = 0;
    const loop = (async () => {
      while (producing) {
        const p = phase;
        const i = seq++;
        try {
          const r = await producer.send({ topic: TOPIC, body: `failover ${i}`, keys: `f${i}` });
          if (r.status === 'SEND_OK') acked.push({ msgId: r.msgId, brokerName: r.messageQueue.brokerName, phase: p });
          else failures[p].push(`${i}: ${r.status}`);
        } catch (err) {
          failures[p].push(`${i}: ${(err as Error).message}`);
          await delay(50);
        }
        await delay(4);
      }
    })();
    t.teardown(async () => {
      producing = false;
      await loop;
    });
    const ackedIn = (ph: Phase, broker?: string) =>
      acked.filter((a) => a.phase === ph && (!broker || a.brokerName === broker));

    t.ok(
      await waitFor(
        () => ackedIn('before', 'broker-a').length >= 50 && ackedIn('before', 'broker-b').length >= 50,
        30_000,
      ),
      'sends go to both brokers',
    );
    t.ok(await waitFor(() => receivedCount() >= 50, 30_000), 'the consumers are consuming');

    t.same(failures.before, [], 'no send failed while both brokers were up');

    // ---- broker-b goes down ----
    phase = 'outage';
    await cluster.stopBroker(1);
    await cluster.waitForRoute(TOPIC, { brokers: ['broker-a'], exact: true, timeoutMs: 10_000 });
    const downAt = receivedCount();
    const ackedBeforeDown = acked.length;
    await delay(4000);
    const duringOutage = acked.slice(ackedBeforeDown);
    t.ok(
      duringOutage.length >= 20,
      `sends keep succeeding while broker-b is down (${duringOutage.length} acknowledged)`,
    );
    t.same([...new Set(duringOutage.map((a) => a.brokerName))], ['broker-a'], 'and all of them on broker-a');
    const outageIds = duringOutage.map((a) => a.msgId);
    const outageConsumed = () => outageIds.filter((id) => received.some((r) => r.includes(id))).length;
    await waitFor(() => outageConsumed() >= outageIds.length / 2, 10_000);
    t.ok(
      receivedCount() > downAt,
      `consumption continues while broker-b is down (${downAt} → ${receivedCount()} distinct messages)`,
    );
    t.ok(
      outageConsumed() > 0,
      `messages sent during the outage are consumed during it (${outageConsumed()} of ${outageIds.length})`,
    );
    t.comment(
      `while stopping broker-b: ${failures.outage.length} failed sends${failures.outage.length ? ` (first: ${failures.outage[0]})` : ''}`,
    );

    // ---- broker-b comes back ----
    await cluster.startBroker(1);
    phase = 'restarted';
    t.ok(
      await waitFor(() => ackedIn('restarted', 'broker-b').length >= 20, 20_000),
      'the restarted broker-b takes sends again',
    );
    t.ok(await waitFor(() => split(), 20_000), `the consumers split all 8 queues again: ${JSON.stringify(owned())}`);
    await delay(1000);
    producing = false;
    await loop;

    // ---- every acknowledged message is consumed ----
    await waitFor(() => {
      receivedCount(); // folds the latest deliveries into uniqueReceived
      return acked.every((a) => uniqueReceived.has(a.msgId));
    }, 60_000);
    receivedCount();
    const missing = acked.filter((a) => !uniqueReceived.has(a.msgId));
    t.same(
      missing.slice(0, 20).map((a) => `${a.phase} ${a.brokerName} ${a.msgId}`),
      [],
      `every acknowledged message was consumed (${missing.length} of ${acked.length} missing)`,
    );
    const deliveries = received.reduce((n, r) => n + r.length, 0);
    t.ok(
      received.every((r) => r.length > 0),
      'all three consumers took part',
    );
    t.comment(
      `acknowledged ${acked.length} (before ${ackedIn('before').length}, outage ${ackedIn('outage').length} of which ${ackedIn('outage', 'broker-b').length} on broker-b while it stopped, after ${ackedIn('restarted').length}); ` +
        `failed sends: before ${failures.before.length}, outage ${failures.outage.length}, after ${failures.restarted.length}; ` +
        `deliveries ${deliveries} (per consumer ${received.map((r) => r.length).join('/')}), distinct ${uniqueReceived.size}, duplicates ${deliveries - uniqueReceived.size}`,
    );
  });
}
