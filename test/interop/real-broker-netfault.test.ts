// rocketwire through network faults, with Toxiproxy between the clients and a real 5.3.3 name
// server and broker (both ends on this machine: the kernel has no netem). The broker binds
// 127.0.0.2:port and advertises 127.0.0.1:port, where Toxiproxy listens, so every client
// connection (routes, sends, pulls, commits) crosses a proxy. A producer sends all the time and a
// push consumer consumes while the faults come one after the other: 50 ms latency with jitter, a
// bandwidth limit, stalled connections (`timeout` toxic), resets (`reset_peer`), then a 30 s
// partition (both proxies disabled). Afterwards no acknowledged message is lost, no offset was
// ever committed past a message not yet consumed, consumption resumes after the partition heals,
// and every failed send is a typed error naming the address it failed on.
import t from 'tap';
import { PushConsumer } from '../../lib/consumer/index.js';
import { BrokerError, RemotingError, RocketwireError, SendFailedError } from '../../lib/index.js';
import { Producer } from '../../lib/producer/index.js';
import { createRequest, RequestCode, ResponseCode } from '../../protocol/index.js';
import { delay, startRealCluster, V5_VERSION } from './harness.js';
import { waitFor } from '../support/until.js';
import { interopReady } from './skip.js';
import { startToxiproxy, toxiproxyBinary, toxiproxyPresent } from './toxiproxy.js';

t.setTimeout(300_000);

const TOPIC = 'NetFault';
const GROUP = 'net_fault_cg';
const QUEUES = 4;
const PARTITION_MS = 30_000;

type Phase = 'clean' | 'latency' | 'bandwidth' | 'stall' | 'reset' | 'partition' | 'healed';

/** A teardown step whose failure is reported on stderr instead of failing the finished test. */
function quietly(what: string, step: () => Promise<unknown>): () => Promise<void> {
  return async () => {
    try {
      await step();
    } catch (err) {
      process.stderr.write(`netfault teardown: ${what} failed: ${(err as Error).stack ?? String(err)}\n`);
    }
  };
}

if (!toxiproxyPresent() && process.env.ROCKETWIRE_REQUIRE_JAVA !== '1') {
  t.plan(0, `network-fault interop skipped: ${toxiproxyBinary()} not found (.ci/install-deps builds it)`);
} else if (await interopReady(t, [V5_VERSION])) {
  t.test('latency, bandwidth, stalls, resets and a 30 s partition between rocketwire and a real broker', async (t) => {
    const toxi = await startToxiproxy();
    t.teardown(quietly('toxiproxy stop', () => toxi.stop()));
    const cluster = await startRealCluster({ version: V5_VERSION, brokerBindHost: '127.0.0.2' });
    t.teardown(quietly('cluster stop', () => cluster.stop({ graceful: false })));
    const ns = await toxi.createProxy('namesrv', '127.0.0.1:0', cluster.namesrv);
    await toxi.createProxy('broker', cluster.brokers[0]!, cluster.brokerBinds[0]!);
    const proxied = [ns.listen, cluster.brokers[0]!];
    t.comment(
      `clients → ${ns.listen} → name server ${cluster.namesrv}; clients → ${cluster.brokers[0]} → broker ${cluster.brokerBinds[0]}`,
    );
    await cluster.createTopic(TOPIC, { queues: QUEUES });

    let phase: Phase = 'clean';
    const phaseStart = new Map<Phase, number>([['clean', Date.now()]]);
    const enter = (p: Phase) => {
      phase = p;
      phaseStart.set(p, Date.now());
    };

    // ---- consumer: every delivery, and when each queue offset was first consumed ----
    const consumedAt = Array.from({ length: QUEUES }, () => new Map<number, number>());
    const deliveries: Array<{ msgId: string; phase: Phase; at: number }> = [];
    const consumer = new PushConsumer({
      consumerGroup: GROUP,
      namesrvAddr: ns.listen,
      subscriptions: { [TOPIC]: '*' },
      consumeFromWhere: 'first',
      persistOffsetIntervalMs: 1000,
      pollNameServerIntervalMs: 1000,
    });
    t.teardown(quietly('consumer shutdown', () => consumer.shutdown()));
    await consumer.start((msgs) => {
      const now = Date.now();
      for (const m of msgs) {
        deliveries.push({ msgId: m.msgId, phase, at: now });
        if (!consumedAt[m.queueId]!.has(m.queueOffset)) consumedAt[m.queueId]!.set(m.queueOffset, now);
      }
      return 'CONSUME_SUCCESS';
    });

    // ---- the committed offsets, read on the broker directly (not through the proxy) ----
    const commits: Array<{ queueId: number; offset: number; at: number }> = [];
    let watching = true;
    const watch = (async () => {
      while (watching) {
        for (let q = 0; q < QUEUES; q++) {
          const res = await cluster
            .invoke(
              cluster.brokerBinds[0]!,
              createRequest(RequestCode.QUERY_CONSUMER_OFFSET, {
                extFields: { consumerGroup: GROUP, topic: TOPIC, queueId: String(q) },
              }),
              { timeoutMs: 2000 },
            )
            .catch(() => null);
          if (res?.code === ResponseCode.SUCCESS)
            commits.push({ queueId: q, offset: Number(res.extFields?.offset), at: Date.now() });
        }
        await delay(250);
      }
    })();
    t.teardown(async () => {
      watching = false;
      await watch;
    });

    // ---- producer: sends all the time ----
    const producer = new Producer({ group: 'net_fault_pg', namesrvAddr: ns.listen, pollNameServerIntervalMs: 1000 });
    await producer.start();
    t.teardown(quietly('producer shutdown', () => producer.shutdown()));
    const acked: Array<{ msgId: string; phase: Phase; at: number }> = [];
    const failures: Array<{ phase: Phase; error: unknown }> = [];
    let producing = true;
    let seq = 0;
    const loop = (async () => {
      while (producing) {
        const p = phase;
        try {
          const r = await producer.send({ topic: TOPIC, body: `fault ${seq++} ${'x'.repeat(200)}` });
          if (r.status === 'SEND_OK') acked.push({ msgId: r.msgId, phase: p, at: Date.now() });
          else failures.push({ phase: p, error: new Error(r.status) });
        } catch (err) {
          failures.push({ phase: p, error: err });
          await delay(100);
        }
        await delay(20);
      }
    })();
    t.teardown(async () => {
      producing = false;
      await loop;
    });
    const consumedIn = (p: Phase) => deliveries.filter((d) => d.phase === p).length;
    const ackedIn = (p: Phase) => acked.filter((a) => a.phase === p).length;

    t.ok(await waitFor(() => consumedIn('clean') >= 50, 30_000), 'messages flow through the proxies');

    // ---- faults one after the other, 3 s each, then cleared ----
    const faults: Array<[Phase, () => Promise<unknown>]> = [
      [
        'latency',
        async () => {
          for (const p of ['namesrv', 'broker']) {
            for (const stream of ['upstream', 'downstream'] as const)
              await toxi.addToxic(p, { type: 'latency', stream, attributes: { latency: 50, jitter: 25 } });
          }
        },
      ],
      ['bandwidth', () => toxi.addToxic('broker', { type: 'bandwidth', attributes: { rate: 32 } })],
      ['stall', () => toxi.addToxic('broker', { type: 'timeout', attributes: { timeout: 2000 } })],
      ['reset', () => toxi.addToxic('broker', { type: 'reset_peer', attributes: { timeout: 500 } })],
    ];
    for (const [p, apply] of faults) {
      enter(p);
      await apply();
      await delay(3000);
      await toxi.reset();
      t.comment(
        `${p}: ${ackedIn(p)} sends acknowledged, ${consumedIn(p)} messages consumed, ${failures.filter((f) => f.phase === p).length} sends failed`,
      );
    }
    t.ok(
      ackedIn('latency') > 0 && consumedIn('latency') > 0,
      'sends and consumption go on under 50 ms latency with jitter',
    );
    t.ok(ackedIn('bandwidth') > 0, 'sends go on under a 32 KB/s bandwidth limit');

    // ---- a 30 s partition ----
    enter('partition');
    await toxi.setEnabled('namesrv', false);
    await toxi.setEnabled('broker', false);
    await delay(PARTITION_MS);
    const partitionAcked = ackedIn('partition');
    await toxi.setEnabled('namesrv', true);
    await toxi.setEnabled('broker', true);
    enter('healed');
    const healedAt = Date.now();
    t.equal(partitionAcked, 0, 'no send is acknowledged while the broker is unreachable');
    t.ok(await waitFor(() => ackedIn('healed') > 0, 60_000), 'sends succeed again after the partition heals');
    const healedIds = () => new Set(acked.filter((a) => a.phase === 'healed').map((a) => a.msgId));
    t.ok(
      await waitFor(() => {
        const ids = healedIds();
        return deliveries.some((d) => ids.has(d.msgId));
      }, 60_000),
      'messages sent after the partition are consumed',
    );
    const firstSend = acked.find((a) => a.phase === 'healed')!.at - healedAt;
    const ids = healedIds();
    const firstConsume = deliveries.find((d) => ids.has(d.msgId))!.at - healedAt;
    t.comment(
      `after the 30 s partition: first acknowledged send ${firstSend} ms, first consumed new message ${firstConsume} ms after the heal`,
    );
    await delay(2000);
    producing = false;
    await loop;

    // ---- nothing lost, no commit ahead of consumption ----
    const consumedIds = () => new Set(deliveries.map((d) => d.msgId));
    await waitFor(() => {
      const got = consumedIds();
      return acked.every((a) => got.has(a.msgId));
    }, 60_000);
    const got = consumedIds();
    const lost = acked.filter((a) => !got.has(a.msgId));
    t.same(
      lost.slice(0, 10).map((a) => `${a.phase} ${a.msgId}`),
      [],
      `no acknowledged message lost (${lost.length} of ${acked.length})`,
    );
    await delay(2500); // the last commits land
    watching = false;
    await watch;
    const ahead: string[] = [];
    for (const c of commits) {
      for (let o = 0; o < c.offset; o++) {
        const at = consumedAt[c.queueId]!.get(o);
        if (at === undefined || at > c.at) {
          ahead.push(
            `queue ${c.queueId}: committed ${c.offset} while offset ${o} was ${at === undefined ? 'never' : 'not yet'} consumed`,
          );
          break;
        }
      }
    }
    t.ok(commits.length > 0, `committed offsets sampled on the broker (${commits.length} samples)`);
    t.same(ahead.slice(0, 5), [], 'no offset ever committed past a message not yet consumed');

    // ---- every failure is typed and names where it failed ----
    const untyped: string[] = [];
    for (const f of failures) {
      const e = f.error;
      if (!(e instanceof RocketwireError)) {
        untyped.push(`${f.phase}: ${String(e)}`);
        continue;
      }
      const causes = e instanceof SendFailedError ? e.attempts.map((a) => a.error) : [e];
      for (const c of causes) {
        const addr = c instanceof RemotingError || c instanceof BrokerError ? c.addr : undefined;
        if (addr === undefined || !proxied.includes(addr) || !c.message.includes(addr))
          untyped.push(`${f.phase}: ${c.name}: ${c.message}`);
      }
    }
    t.ok(failures.length > 0, `sends failed during the faults (${failures.length})`);
    t.same(
      untyped.slice(0, 5),
      [],
      'every failed send is a typed error (RemotingError/BrokerError) naming the proxied address',
    );
    const names = new Map<string, number>();
    for (const f of failures) {
      const causes = f.error instanceof SendFailedError ? f.error.attempts.map((a) => a.error) : [f.error as Error];
      for (const c of causes) names.set(c.name, (names.get(c.name) ?? 0) + 1);
    }
    t.comment(
      `acknowledged ${acked.length}, deliveries ${deliveries.length}, distinct ${got.size}, duplicates ${deliveries.length - got.size}; ` +
        `failed sends ${failures.length} (${[...names].map(([n, k]) => `${n} ×${k}`).join(', ')})`,
    );
  });
}
