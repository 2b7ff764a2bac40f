// rocketwire on real master+slave broker groups (each an ASYNC_MASTER with a SLAVE over loopback
// HA, slaveReadEnable=true): on 5.3.3 two groups (5 JVMs) shared by all the proofs below, on 4.9.7
// one group for the first:
//  - a master SIGKILLed while a consumer still has unconsumed messages that exist only on the
//    slave: the consumer reads them from the slave, nothing is lost; when the master comes back,
//    commits go to it again and no committed offset it holds ever goes backwards;
//  - (5.3.3) a producer over the two groups, one master SIGKILLed mid-run: sends fail over to the other
//    group, and every acknowledged send is consumed afterwards;
//  - (5.3.3) two orderly consumers in one group, a master SIGKILLed and restarted: per-queue order
//    never breaks and no queue is ever consumed by both at once;
//  - (5.3.3) a mixed group, two Java DefaultMQPushConsumers and two rocketwire consumers: one Java
//    consumer SIGKILLed, then one master: every message consumed at least once, and once the
//    rebalance settles each member holds exactly its AllocateMessageQueueAveragely share.
import t from 'tap';
import { PushConsumer } from '../../lib/consumer/index.js';
import { Producer } from '../../lib/producer/index.js';
import { createRequest, RequestCode, ResponseCode } from '../../protocol/index.js';
import { delay, startRealCluster, V4_VERSION, V5_VERSION, type RealCluster } from './harness.js';
import { waitFor } from '../support/until.js';
import { startJavaConsumer } from './java-client.js';
import { interopReady } from './skip.js';

t.setTimeout(900_000);

const versions = [V5_VERSION, V4_VERSION];

/** The group's committed offset of one queue as `addr` holds it; -1 when it has none (QUERY_NOT_FOUND) or is down. */
async function committedOffset(
  cluster: RealCluster,
  addr: string,
  group: string,
  topic: string,
  queueId: number,
): Promise<number> {
  try {
    const res = await cluster.invoke(
      addr,
      createRequest(RequestCode.QUERY_CONSUMER_OFFSET, {
        extFields: { consumerGroup: group, topic, queueId: String(queueId) },
      }),
      { timeoutMs: 2000 },
    );
    return res.code === ResponseCode.SUCCESS ? Number(res.extFields?.offset) : -1;
  } catch {
    return -1;
  }
}

/** AllocateMessageQueueAveragely for one client id (queues and ids sorted as Java's compareTo sorts them). */
function averagely(queues: string[], cids: string[], cid: string): string[] {
  const index = cids.indexOf(cid);
  if (index < 0) return [];
  const n = queues.length;
  const mod = n % cids.length;
  const size =
    n <= cids.length ? 1 : mod > 0 && index < mod ? Math.floor(n / cids.length) + 1 : Math.floor(n / cids.length);
  const start = mod > 0 && index < mod ? index * size : index * size + mod;
  const out: string[] = [];
  for (let i = 0; i < Math.min(size, n - start); i++) out.push(queues[(start + i) % n]!);
  return out;
}

async function committedOffsets(
  cluster: RealCluster,
  addr: string,
  group: string,
  topic: string,
  queues: number,
): Promise<number[]> {
  const out: number[] = [];
  for (let q = 0; q < queues; q++) out.push(await committedOffset(cluster, addr, group, topic, q));
  return out;
}

if (await interopReady(t, versions)) {
  for (const version of versions) {
    // 4.9.7 runs the slave-read proof only, on one group (3 JVMs): the CI budget.
    const full = version === V5_VERSION;
    t.test(`real RocketMQ ${version}, ${full ? 'two master+slave groups' : 'one master+slave group'}`, async (t) => {
      const started = Date.now();
      // flushConsumerOffsetInterval: the broker writes consumerOffset.json every second instead of
      // every 5 s, so a SIGKILLed master comes back with the offsets committed a second before.
      const cluster = await startRealCluster({
        version,
        brokers: full ? 2 : 1,
        slaves: true,
        brokerHeapMb: 256,
        brokerConfig: { flushConsumerOffsetInterval: 1000 },
      });
      t.teardown(() => cluster.stop({ graceful: false }));
      t.comment(
        `${full ? 5 : 3} JVMs booted in ${Date.now() - started} ms (masters ${cluster.bootMs.brokers.join('/')} ms, slaves ${cluster.bootMs.slaves.join('/')} ms)`,
      );

      t.test(
        'master SIGKILLed with unconsumed messages on its slave: read from the slave, then commits go back to the master',
        async (t) => {
          const topic = 'HaSlaveRead';
          const group = 'ha_slave_read_cg';
          const queues = 2;
          await cluster.createTopic(topic, { queues, brokers: [0] });
          const [master, slave] = [cluster.brokers[0]!, cluster.slaves[0]!];

          const producer = new Producer({
            group: 'ha_slave_read_pg',
            namesrvAddr: cluster.namesrv,
            pollNameServerIntervalMs: 1000,
          });
          await producer.start();
          t.teardown(() => producer.shutdown());
          const sent = new Map<string, 'A' | 'B' | 'C'>();
          const produce = async (batch: 'A' | 'B' | 'C', n: number) => {
            for (let i = 0; i < n; i++) {
              const r = await producer.send({ topic, body: `${batch}${i}`, keys: `${batch}${i}` });
              if (r.status !== 'SEND_OK') notOk.push(`${batch}${i}: ${r.status}`);
              sent.set(r.msgId, batch);
            }
          };
          const notOk: string[] = [];

          const deliveries: Array<{ msgId: string; batch: string; at: number }> = [];
          const consumer = new PushConsumer({
            consumerGroup: group,
            namesrvAddr: cluster.namesrv,
            subscriptions: { [topic]: '*' },
            consumeFromWhere: 'first',
            persistOffsetIntervalMs: 500,
            pollNameServerIntervalMs: 1000,
            rebalanceIntervalMs: 1000,
            // a long poll in flight when the consumer is suspended comes back within a second
            brokerSuspendMaxTimeMs: 1000,
          });
          t.teardown(() => consumer.shutdown());
          await consumer.start((msgs) => {
            for (const m of msgs) deliveries.push({ msgId: m.msgId, batch: m.body.toString()[0]!, at: Date.now() });
            return 'CONSUME_SUCCESS';
          });
          const consumed = (batch: string) =>
            new Set(deliveries.filter((d) => d.batch === batch).map((d) => d.msgId)).size;

          // ---- A: consumed and committed on the master ----
          await produce('A', 40);
          t.ok(await waitFor(() => consumed('A') === 40, 30_000), 'batch A consumed');
          const endA = (await cluster.waitForReplica(0, topic, { queues })).slice();
          const committedA = await (async () => {
            const deadline = Date.now() + 20_000;
            for (;;) {
              const c = await committedOffsets(cluster, master, group, topic, queues);
              if (c.every((x, q) => x === endA[q]) || Date.now() > deadline) return c;
              await delay(200);
            }
          })();
          t.same(committedA, endA, 'the master holds the committed offsets of batch A');

          // ---- B: produced while the consumer is suspended, replicated, not consumed ----
          consumer.suspend();
          // A long poll in flight comes back when its brokerSuspendMaxTimeMs (1 s) is up, but the
          // broker looks at held pulls only every 5 s (PullRequestHoldService) or when a message arrives.
          await delay(6000);
          await produce('B', 60);
          const endB = await cluster.waitForReplica(0, topic, { queues });
          t.same(
            endB.reduce((a, b) => a + b, 0),
            100,
            'the slave holds all 100 messages',
          );
          await delay(500);
          t.equal(consumed('B'), 0, 'none of batch B is consumed before the master dies');

          // ---- the master dies; the consumer must read B from the slave ----
          await cluster.killBroker(0);
          await cluster.waitForBrokerIds(topic, 0, [1], { timeoutMs: 15_000 });
          const resumedAt = Date.now();
          consumer.resume();
          const gotB = await waitFor(() => consumed('B') === 60, 60_000);
          t.ok(gotB, `batch B consumed from the slave while the master is down (${consumed('B')} of 60)`);
          const firstB = deliveries.find((d) => d.batch === 'B');
          t.comment(
            `first message of B ${firstB ? firstB.at - resumedAt : '-'} ms after resume, all of B ${gotB ? Math.max(...deliveries.filter((d) => d.batch === 'B').map((d) => d.at)) - resumedAt : '-'} ms`,
          );
          // Java's RemoteBrokerOffsetStore commits through findBrokerAddressInSubscribe(master, onlyThisBroker=false):
          // with the master gone, to the slave.
          const onSlave = await (async () => {
            const deadline = Date.now() + 10_000;
            for (;;) {
              const c = await committedOffsets(cluster, slave, group, topic, queues);
              if (c.every((x, q) => x === endB[q]) || Date.now() > deadline) return c;
              await delay(200);
            }
          })();
          t.same(onSlave, endB, "while the master is down, commits go to the slave (as Java's offset store does)");

          // ---- the master comes back on the same store ----
          const masterSeen: number[][] = Array.from({ length: queues }, () => []);
          let polling = true;
          const poll = (async () => {
            while (polling) {
              if (cluster.isRunning(0)) {
                const c = await committedOffsets(cluster, master, group, topic, queues);
                for (const [q, x] of c.entries()) if (x >= 0) masterSeen[q]!.push(x);
              }
              await delay(200);
            }
          })();
          t.teardown(async () => {
            polling = false;
            await poll;
          });
          await cluster.startBroker(0);
          await cluster.waitForBrokerIds(topic, 0, [0, 1], { timeoutMs: 15_000 });
          await delay(1500); // the producer's route (pollNameServerIntervalMs 1000) lists the master again
          await produce('C', 20);
          t.ok(await waitFor(() => consumed('C') === 20, 30_000), 'batch C, sent to the returned master, consumed');
          const endC = await cluster.waitForReplica(0, topic, { queues });
          const final = await (async () => {
            const deadline = Date.now() + 20_000;
            for (;;) {
              const c = await committedOffsets(cluster, master, group, topic, queues);
              if (c.every((x, q) => x === endC[q]) || Date.now() > deadline) return c;
              await delay(200);
            }
          })();
          polling = false;
          await poll;
          for (const [q, x] of final.entries()) masterSeen[q]!.push(x);
          t.same(final, endC, 'commits reach the master again: its committed offset = max offset on every queue');
          const backwards = masterSeen.flatMap((seq, q) =>
            seq.flatMap((x, k) => (k > 0 && x < seq[k - 1]! ? [`queue ${q}: ${seq[k - 1]} → ${x}`] : [])),
          );
          t.same(backwards, [], 'no committed offset on the returned master ever goes backwards');
          t.ok(
            masterSeen.every((seq, q) => seq.length === 0 || seq[0]! >= endA[q]!),
            `the master came back with at least batch A's offsets (${masterSeen.map((s) => s[0]).join(',')})`,
          );

          const ids = new Set(deliveries.map((d) => d.msgId));
          const lost = [...sent.keys()].filter((id) => !ids.has(id));
          t.same(notOk, [], 'every send answered SEND_OK');
          t.same(lost, [], `no message lost (${sent.size} sent, ${ids.size} distinct consumed)`);
          const redeliveredAfterReturn = deliveries.filter(
            (d) =>
              d.batch !== 'C' &&
              d.at > resumedAt &&
              deliveries.findIndex((e) => e.msgId === d.msgId) !== deliveries.indexOf(d),
          );
          t.comment(
            `deliveries ${deliveries.length}, duplicates ${deliveries.length - ids.size} (of A/B after the failover: ${redeliveredAfterReturn.length}); master offsets seen after its return: ${masterSeen.map((s) => `[${[...new Set(s)].join('→')}]`).join(' ')}`,
          );
        },
      );

      if (!full) return;
      t.test(
        'producer over two groups: a master SIGKILLed mid-run, sends fail over, every acknowledged send consumed',
        async (t) => {
          const topic = 'HaTwoGroups';
          const group = 'ha_two_groups_cg';
          await cluster.createTopic(topic, { queues: 4 });
          type Phase = 'before' | 'outage' | 'after';
          const acked: Array<{ msgId: string; brokerName: string; phase: Phase }> = [];
          const failures: Record<Phase, string[]> = { before: [], outage: [], after: [] };
          const producer = new Producer({
            group: 'ha_two_groups_pg',
            namesrvAddr: cluster.namesrv,
            pollNameServerIntervalMs: 1000,
          });
          await producer.start();
          t.teardown(() => producer.shutdown());
          const received = new Set<string>();
          let deliveries = 0;
          const consumer = new PushConsumer({
            consumerGroup: group,
            namesrvAddr: cluster.namesrv,
            subscriptions: { [topic]: '*' },
            consumeFromWhere: 'first',
            persistOffsetIntervalMs: 1000,
            pollNameServerIntervalMs: 1000,
            rebalanceIntervalMs: 2000,
          });
          t.teardown(() => consumer.shutdown());
          await consumer.start((msgs) => {
            for (const m of msgs) received.add(m.msgId);
            deliveries += msgs.length;
            return 'CONSUME_SUCCESS';
          });

          let phase: Phase = 'before';
          let producing = true;
          let seq = 0;
          const loop = (async () => {
            while (producing) {
              const p = phase;
              const i = seq++;
              try {
                const r = await producer.send({ topic, body: `two groups ${i}`, keys: `g${i}` });
                if (r.status === 'SEND_OK')
                  acked.push({ msgId: r.msgId, brokerName: r.messageQueue.brokerName, phase: p });
                else failures[p].push(`${i}: ${r.status}`);
              } catch (err) {
                failures[p].push(`${i}: ${(err as Error).message}`);
                await delay(50);
              }
              await delay(5);
            }
          })();
          t.teardown(async () => {
            producing = false;
            await loop;
          });
          const ackedIn = (ph: Phase, broker?: string) =>
            acked.filter((a) => a.phase === ph && (!broker || a.brokerName === broker)).length;
          t.ok(
            await waitFor(() => ackedIn('before', 'broker-a') >= 50 && ackedIn('before', 'broker-b') >= 50, 30_000),
            'sends go to both groups',
          );

          phase = 'outage';
          await cluster.killBroker(1);
          const killedAt = Date.now();
          await cluster.waitForBrokerIds(topic, 1, [1], { timeoutMs: 15_000 });
          const atKill = acked.length;
          await delay(4000);
          const during = acked.slice(atKill);
          t.ok(
            during.length >= 20,
            `sends keep succeeding while broker-b's master is dead (${during.length} acknowledged)`,
          );
          t.same([...new Set(during.map((a) => a.brokerName))], ['broker-a'], 'and all of them on broker-a');
          const firstAfter = acked.slice(atKill).find(() => true);
          t.comment(
            `failed sends around the kill: ${failures.outage.length}${failures.outage[0] ? ` (first: ${failures.outage[0]})` : ''}; sends resumed ${firstAfter ? 'at once' : 'never'}; ${Date.now() - killedAt} ms of outage so far`,
          );

          await cluster.startBroker(1);
          phase = 'after';
          t.ok(
            await waitFor(() => ackedIn('after', 'broker-b') >= 20, 20_000),
            'the returned master of broker-b takes sends again',
          );
          producing = false;
          await loop;
          t.same(failures.before, [], 'no send failed while both masters were up');

          await waitFor(() => acked.every((a) => received.has(a.msgId)), 60_000);
          const missing = acked.filter((a) => !received.has(a.msgId));
          t.same(
            missing.slice(0, 20).map((a) => `${a.phase} ${a.brokerName} ${a.msgId}`),
            [],
            `every acknowledged send consumed (${missing.length} of ${acked.length} missing)`,
          );
          t.comment(
            `acknowledged ${acked.length} (before ${ackedIn('before')}, outage ${ackedIn('outage')}, after ${ackedIn('after')}); failed sends ${failures.outage.length + failures.after.length}; ` +
              `deliveries ${deliveries}, distinct ${received.size}, duplicates ${deliveries - received.size}`,
          );
        },
      );

      t.test(
        'two orderly consumers, a master SIGKILLed and restarted: per-queue order kept, no queue consumed by both at once',
        async (t) => {
          const topic = 'HaOrderly';
          const group = 'ha_orderly_cg';
          await cluster.createTopic(topic, { queues: 2 });
          const producer = new Producer({
            group: 'ha_orderly_pg',
            namesrvAddr: cluster.namesrv,
            pollNameServerIntervalMs: 1000,
          });
          await producer.start();
          t.teardown(() => producer.shutdown());

          // Per queue: the steps consumed in order, who holds a handler call on it right now, overlaps.
          const steps = new Map<string, number[]>();
          const active = new Map<string, number>();
          const overlaps: string[] = [];
          const perConsumer = [0, 0];
          const consumers = [0, 1].map(
            (i) =>
              new PushConsumer({
                consumerGroup: group,
                namesrvAddr: cluster.namesrv,
                instanceName: `orderly-${i}`,
                subscriptions: { [topic]: '*' },
                consumeFromWhere: 'first',
                orderly: true,
                rebalanceIntervalMs: 1000,
                pollNameServerIntervalMs: 1000,
                persistOffsetIntervalMs: 1000,
              }),
          );
          for (const c of consumers) t.teardown(() => c.shutdown());
          for (const [i, c] of consumers.entries()) {
            await c.start(async (msgs) => {
              const key = `${msgs[0]!.brokerName}/${msgs[0]!.queueId}`;
              const other = active.get(key);
              if (other !== undefined && other !== i) overlaps.push(`${key}: consumers ${other} and ${i}`);
              active.set(key, i);
              for (const m of msgs)
                steps.set(key, [...(steps.get(key) ?? []), Number(m.body.toString().split(':')[1])]);
              perConsumer[i]! += msgs.length;
              await delay(2);
              active.delete(key);
              return 'SUCCESS';
            });
          }

          let producing = true;
          const next = new Map<string, number>();
          const acked = new Map<string, number>();
          const loop = (async () => {
            while (producing) {
              for (let q = 0; q < 2; q++) {
                for (const brokerName of cluster.brokerNames) {
                  const key = `${brokerName}/${q}`;
                  const step = next.get(key) ?? 0;
                  // A queue whose master is down fails at once (one attempt to that queue); its step waits.
                  const r = await producer
                    .send({ topic, body: `${key}:${step}` }, { queue: { topic, brokerName, queueId: q } })
                    .catch(() => null);
                  if (r?.status === 'SEND_OK') {
                    next.set(key, step + 1);
                    acked.set(key, step + 1);
                  }
                }
              }
              await delay(20);
            }
          })();
          t.teardown(async () => {
            producing = false;
            await loop;
          });
          const total = () => [...steps.values()].reduce((n, s) => n + s.length, 0);
          t.ok(await waitFor(() => total() >= 100, 30_000), 'both consumers consume the ordered queues');

          await cluster.killBroker(1);
          await cluster.waitForBrokerIds(topic, 1, [1], { timeoutMs: 15_000 });
          const atKill = new Map([...steps].map(([k, v]) => [k, v.length]));
          await delay(5000);
          const duringOutage = [...steps].map(([k, v]) => `${k} +${v.length - (atKill.get(k) ?? 0)}`).join(', ');
          await cluster.startBroker(1);
          await cluster.waitForBrokerIds(topic, 1, [0, 1], { timeoutMs: 15_000 });
          await delay(3000);
          producing = false;
          await loop;
          const complete = () => [...acked].every(([k, n]) => new Set(steps.get(k) ?? []).size >= n);
          t.ok(
            await waitFor(complete, 60_000),
            'every acknowledged step of every queue consumed after the master returned',
          );

          t.same(overlaps.slice(0, 5), [], "no queue is ever in two consumers' handlers at once");
          const broken: string[] = [];
          for (const [key, seq] of steps) {
            // Re-deliveries after a rebalance may repeat steps; the first sight of each step must come in order, without gaps.
            const firsts: number[] = [];
            const seen = new Set<number>();
            for (const x of seq) {
              if (seen.has(x)) continue;
              seen.add(x);
              firsts.push(x);
            }
            const bad = firsts.findIndex((x, i) => x !== i);
            if (bad >= 0) broken.push(`${key}: step ${firsts[bad]} at position ${bad}`);
          }
          t.same(broken, [], 'per-queue order never broken (every step first consumed in order, no gap)');
          const dups = [...steps.values()].reduce((n, s) => n + s.length - new Set(s).size, 0);
          t.comment(
            `consumed ${total()} (consumer 0: ${perConsumer[0]}, consumer 1: ${perConsumer[1]}), re-deliveries ${dups}; during the 5 s outage per queue: ${duringOutage}`,
          );
        },
      );

      t.test(
        'mixed group, two Java and two rocketwire consumers: a Java consumer SIGKILLed, then a master; nothing lost, no queue held twice',
        async (t) => {
          const topic = 'HaMixed';
          const group = 'ha_mixed_cg';
          await cluster.createTopic(topic, { queues: 4 });
          const byStoreHost = new Map(cluster.brokers.map((b, i) => [b, cluster.brokerNames[i]!]));
          const rwGot: Array<Array<{ msgId: string; queue: string; at: number }>> = [[], []];
          const rw = [0, 1].map(
            (i) =>
              new PushConsumer({
                consumerGroup: group,
                namesrvAddr: cluster.namesrv,
                instanceName: `mixed-${i}`,
                subscriptions: { [topic]: '*' },
                consumeFromWhere: 'first',
                rebalanceIntervalMs: 1000,
                pollNameServerIntervalMs: 1000,
                persistOffsetIntervalMs: 1000,
              }),
          );
          for (const c of rw) t.teardown(() => c.shutdown());
          for (const [i, c] of rw.entries()) {
            await c.start((msgs) => {
              for (const m of msgs)
                rwGot[i]!.push({ msgId: m.msgId, queue: `${m.brokerName}/${m.queueId}`, at: Date.now() });
              return 'CONSUME_SUCCESS';
            });
          }
          // Java rebalances every 20 s unless notified; 1 s as the rocketwire consumers here. A Java
          // consumer whose first rebalance ran before the broker listed it holds nothing until then.
          const javaOptions = {
            version,
            namesrv: cluster.namesrv,
            topic,
            group,
            timeoutMs: 180_000,
            jvmArgs: ['-Drocketmq.client.rebalance.waitInterval=1000'],
          };
          const java = [await startJavaConsumer(javaOptions), await startJavaConsumer(javaOptions)];
          t.teardown(() => Promise.all(java.map((j) => j.stop())));

          const producer = new Producer({
            group: 'ha_mixed_pg',
            namesrvAddr: cluster.namesrv,
            pollNameServerIntervalMs: 1000,
          });
          await producer.start();
          t.teardown(() => producer.shutdown());
          const acked = new Set<string>();
          let producing = true;
          let seq = 0;
          const loop = (async () => {
            while (producing) {
              const r = await producer.send({ topic, body: `mixed ${seq++}` }).catch(() => null);
              if (r?.status === 'SEND_OK') acked.add(r.msgId);
              await delay(10);
            }
          })();
          t.teardown(async () => {
            producing = false;
            await loop;
          });

          const allQueues = cluster.brokerNames.flatMap((b) => [0, 1, 2, 3].map((q) => `${b}/${q}`)).sort();
          const cids = async (): Promise<string[]> => {
            const res = await cluster.invoke(
              cluster.brokers[0]!,
              createRequest(RequestCode.GET_CONSUMER_LIST_BY_GROUP, { extFields: { consumerGroup: group } }),
            );
            return res.code === ResponseCode.SUCCESS
              ? ((JSON.parse(res.body!.toString()) as { consumerIdList: string[] }).consumerIdList ?? []).sort()
              : [];
          };
          const rwHolds = (i: number) =>
            rw[i]!.assignment()
              .filter((q) => q.topic === topic)
              .map((q) => `${q.brokerName}/${q.queueId}`)
              .sort();
          /**
           * Waits until the group has `members` ids, each rocketwire consumer holds its averagely share
           * and each live Java consumer is consuming again (a message born in the last 2 s); returns the ids.
           */
          const settle = async (members: number, javaAlive: Array<(typeof java)[number]>): Promise<string[]> => {
            const deadline = Date.now() + 60_000;
            for (;;) {
              const ids = await cids();
              const recent = Date.now() - 2000;
              const ok =
                ids.length === members &&
                rw.every(
                  (c, i) => JSON.stringify(rwHolds(i)) === JSON.stringify(averagely(allQueues, ids, c.clientId).sort()),
                ) &&
                javaAlive.every((j) => j.messages.some((m) => m.bornTimestamp >= recent));
              if (ok || Date.now() > deadline) return ids;
              await delay(500);
            }
          };
          /** The queues a Java consumer took messages from since `since`. */
          const javaQueues = (j: (typeof java)[number], since: number) =>
            [
              ...new Set(
                j.messages
                  .filter((m) => m.bornTimestamp >= since)
                  .map((m) => `${byStoreHost.get(m.storeHost) ?? m.storeHost}/${m.queueId}`),
              ),
            ].sort();

          const check = async (label: string, members: number, javaAlive: Array<(typeof java)[number]>) => {
            const ids = await settle(members, javaAlive);
            t.equal(ids.length, members, `${label}: ${members} members in the group`);
            const rwIds = rw.map((c) => c.clientId);
            const javaIds = ids.filter((id) => !rwIds.includes(id));
            for (const [i, c] of rw.entries())
              t.same(
                rwHolds(i),
                averagely(allQueues, ids, c.clientId).sort(),
                `${label}: rocketwire ${i} holds its averagely share`,
              );
            // Java consumers: what they consume from now on must come only from their own share.
            const since = Date.now() + 1000;
            await delay(4000);
            const javaShares = javaIds.map((id) => averagely(allQueues, ids, id));
            for (const j of javaAlive) {
              const took = javaQueues(j, since);
              t.ok(
                took.length > 0 && javaShares.some((share) => took.every((q) => share.includes(q))),
                `${label}: a Java consumer consumes only from one Java share (${took.join(' ')})`,
              );
            }
            const held = [...rw.flatMap((_, i) => rwHolds(i)), ...javaShares.flat()];
            t.equal(new Set(held).size, held.length, `${label}: no queue held by two members`);
            t.equal(held.length, allQueues.length, `${label}: every queue held`);
          };

          await check('four members', 4, java);
          java[1]!.process.child.kill('SIGKILL');
          await check('a Java consumer SIGKILLed', 3, [java[0]!]);
          await cluster.killBroker(0);
          await cluster.waitForBrokerIds(topic, 0, [1], { timeoutMs: 15_000 });
          await delay(4000);
          await cluster.startBroker(0);
          await cluster.waitForBrokerIds(topic, 0, [0, 1], { timeoutMs: 15_000 });
          await check("broker-a's master killed and restarted", 3, [java[0]!]);
          producing = false;
          await loop;

          const consumedIds = () =>
            new Set([...rwGot.flat().map((d) => d.msgId), ...java.flatMap((j) => j.messages.map((m) => m.msgId))]);
          await waitFor(() => {
            const got = consumedIds();
            return [...acked].every((id) => got.has(id));
          }, 60_000);
          const got = consumedIds();
          const lost = [...acked].filter((id) => !got.has(id));
          t.same(
            lost.slice(0, 10),
            [],
            `every acknowledged message consumed at least once (${lost.length} of ${acked.size} missing)`,
          );
          const deliveries = rwGot.flat().length + java.reduce((n, j) => n + j.messages.length, 0);
          t.comment(
            `acknowledged ${acked.size}; deliveries ${deliveries} (rocketwire ${rwGot.map((g) => g.length).join('/')}, Java ${java.map((j) => j.messages.length).join('/')}), duplicates ${deliveries - got.size}`,
          );
        },
      );
    });
  }
}
