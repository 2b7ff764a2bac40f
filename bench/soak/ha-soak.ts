/**
 * Soak on a real master+slave cluster (not part of `npm test`): continuous produce and consume for
 * --minutes (default 10) on Apache RocketMQ (--version, default 5.3.3; two groups, each an
 * ASYNC_MASTER with a SLAVE), with one broker restarted every --restart-every minutes (default 2),
 * alternating the groups and SIGKILL / graceful stop. Prints one JSON object: produced, consumed,
 * duplicates, lost (must be 0) and the consumer process's RSS sampled every 10 s (must stay flat).
 *
 *   npx tsc -p . && node dist/bench/soak/ha-soak.js [--minutes 10] [--restart-every 2] [--version 5.3.3]
 *
 * Needs what the interop suite needs (java, the jars of test/interop/fetch-jars.sh). The consumer
 * runs in this process; a broker restart keeps its ports and store.
 */
import { PushConsumer } from '../../lib/consumer/index.js';
import { Producer } from '../../lib/producer/index.js';
import { delay, startRealCluster, V5_VERSION } from '../../test/interop/harness.js';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : fallback;
}

const minutes = Number(arg('minutes', '10'));
const restartEvery = Number(arg('restart-every', '2'));
const version = arg('version', V5_VERSION);
const TOPIC = 'SoakTopic';

async function main(): Promise<void> {
  const cluster = await startRealCluster({ version, brokers: 2, slaves: true, brokerHeapMb: 256 });
  try {
    await cluster.createTopic(TOPIC, { queues: 4 });
    const producer = new Producer({ group: 'soak_pg', namesrvAddr: cluster.namesrv, pollNameServerIntervalMs: 1000 });
    await producer.start();
    // Bookkeeping of fixed size, indexed by the sequence number in each body, so that the RSS
    // measured is the client's and not a growing table of ids.
    const MAX = 4_000_000;
    const ackedSeq = new Uint8Array(MAX);
    const deliveredSeq = new Uint8Array(MAX);
    let produced = 0;
    let consumedDistinct = 0;
    let deliveries = 0;
    const consumer = new PushConsumer({
      consumerGroup: 'soak_cg',
      namesrvAddr: cluster.namesrv,
      subscriptions: { [TOPIC]: '*' },
      consumeFromWhere: 'first',
      pollNameServerIntervalMs: 1000,
      persistOffsetIntervalMs: 1000,
    });
    await consumer.start((msgs) => {
      for (const m of msgs) {
        const n = Number(m.body.toString('latin1', 5, m.body.indexOf(32, 5)));
        if (deliveredSeq[n] === 0) consumedDistinct++;
        if (deliveredSeq[n]! < 255) deliveredSeq[n]!++;
      }
      deliveries += msgs.length;
      return 'CONSUME_SUCCESS';
    });

    let failedSends = 0;
    let producing = true;
    let seq = 0;
    const loop = (async () => {
      while (producing && seq < MAX) {
        try {
          const n = seq++;
          const r = await producer.send({ topic: TOPIC, body: `soak ${n} ${'x'.repeat(256)}` });
          if (r.status === 'SEND_OK') {
            ackedSeq[n] = 1;
            produced++;
          } else failedSends++;
        } catch {
          failedSends++;
          await delay(100);
        }
        await delay(2);
      }
    })();

    const start = Date.now();
    const rss: Array<{ s: number; rssMb: number; heapMb: number; produced: number; consumed: number }> = [];
    const restarts: Array<{ s: number; broker: string; how: string; bootMs: number }> = [];
    const sample = setInterval(() => {
      const mem = process.memoryUsage();
      rss.push({
        s: Math.round((Date.now() - start) / 1000),
        rssMb: Math.round(mem.rss / 1048576),
        heapMb: Math.round(mem.heapUsed / 1048576),
        produced,
        consumed: consumedDistinct,
      });
    }, 10_000);
    // Restarts on a fixed schedule (every restartEvery minutes from the start), whatever a boot costs.
    let n = 0;
    for (;;) {
      const at = start + (n + 1) * restartEvery * 60_000;
      if (at >= start + minutes * 60_000) break;
      await delay(Math.max(0, at - Date.now()));
      const i = n % 2;
      const kill = Math.floor(n / 2) % 2 === 0;
      const t0 = Date.now();
      if (kill) await cluster.killBroker(i);
      else await cluster.stopBroker(i);
      await delay(5000);
      await cluster.startBroker(i);
      restarts.push({
        s: Math.round((t0 - start) / 1000),
        broker: cluster.brokerNames[i]!,
        how: kill ? 'SIGKILL' : 'SIGTERM',
        bootMs: cluster.bootMs.brokers[i]!,
      });
      n++;
    }
    await delay(Math.max(0, start + minutes * 60_000 - Date.now()));
    producing = false;
    await loop;
    const drainDeadline = Date.now() + 120_000;
    const missing = (): number => {
      let k = 0;
      for (let i = 0; i < seq; i++) if (ackedSeq[i] === 1 && deliveredSeq[i] === 0) k++;
      return k;
    };
    while (missing() > 0 && Date.now() < drainDeadline) await delay(500);
    clearInterval(sample);
    const lost = missing();
    const duplicates = deliveries - consumedDistinct;
    await consumer.shutdown();
    await producer.shutdown();
    const first = rss.slice(0, 6);
    const last = rss.slice(-6);
    const avg = (xs: typeof rss) => (xs.length ? Math.round(xs.reduce((a, x) => a + x.rssMb, 0) / xs.length) : 0);
    process.stdout.write(
      JSON.stringify(
        {
          version,
          minutes,
          restartEveryMinutes: restartEvery,
          produced,
          failedSends,
          consumed: consumedDistinct,
          deliveries,
          duplicates,
          lost,
          rssMb: { firstMinute: avg(first), lastMinute: avg(last), max: Math.max(...rss.map((r) => r.rssMb)) },
          heapMbLast: rss[rss.length - 1]?.heapMb,
          restarts,
          samples: rss,
        },
        null,
        1,
      ) + '\n',
    );
    if (lost > 0) process.exitCode = 1;
  } finally {
    await cluster.stop({ graceful: false });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`soak failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
