/**
 * What enableTrace costs the hot path: produce and consume the same number of messages through
 * the embedded broker (in a child process, so that the CPU measured is the client's) with trace
 * off and on, alternating A/B (the order flips every round), and report each side's median
 * msgs/s and the on/off ratio. Trace records go to the broker too (auto-created trace topic), so
 * "on" pays for the records' encoding, the batching and the trace producer's sends. Also reports
 * the dispatchers' counters (records sent, dropped when the bounded queue was full).
 *
 *   node dist/bench/trace/trace-overhead.js [--messages N] [--rounds N] [--size BYTES] [--concurrency C]
 *     [--namesrv ADDR]          a running cluster (the real broker, traceTopicEnable=true) instead of the child broker
 *     [--real]                  start Apache RocketMQ 5.3.3 (test/interop/harness.ts, traceTopicEnable=true) and use it
 *     [--only on|off]           one side only, no ratio (to profile it: node --cpu-prof …)
 *     [--broker-cpu-prof DIR]   the child broker runs under node --cpu-prof, its profile written to DIR at exit
 */
import { benchArgs } from '../harness/args.js';
import { startChildBroker } from '../harness/embedded.js';
import { PushConsumer } from '../../lib/consumer/index.js';
import { pushConsumerImpl } from '../../lib/consumer/push/push-consumer.js';
import { Producer } from '../../lib/producer/index.js';
import type { TraceDispatcherStats } from '../../lib/trace/index.js';
import { abOrder, median, produceThenConsume } from '../overhead/produce-consume.js';

const { values } = benchArgs('trace-overhead', {
  options: {
    messages: { type: 'string' },
    rounds: { type: 'string' },
    size: { type: 'string' },
    concurrency: { type: 'string' },
    namesrv: { type: 'string' },
    real: { type: 'boolean' },
    only: { type: 'string' },
    'broker-cpu-prof': { type: 'string' },
  },
});
const N = Number(values.messages ?? 20000);
const ROUNDS = Number(values.rounds ?? 3);
const SIZE = Number(values.size ?? 1024);
const CONCURRENCY = Number(values.concurrency ?? 4);
const ONLY = values.only === undefined ? null : values.only === 'on';

interface Run {
  trace: boolean;
  produceMsgsPerSec: number;
  consumeMsgsPerSec: number;
  /** CPU time of this process (user + system) per message while producing / consuming. */
  produceCpuUsPerMsg: number;
  consumeCpuUsPerMsg: number;
  producerTrace?: TraceDispatcherStats | undefined;
  consumerTrace?: TraceDispatcherStats | undefined;
}

let seq = 0;
async function once(namesrv: string, trace: boolean): Promise<Run> {
  const topic = `TraceBench_${process.pid}_${seq++}`;
  const producer = new Producer({ namesrvAddr: namesrv, group: `trace_bench_pg_${seq}`, enableTrace: trace });
  await producer.start();
  const consumer = new PushConsumer({
    consumerGroup: `trace_bench_cg_${seq}`,
    namesrvAddr: namesrv,
    consumeFromWhere: 'first',
    enableTrace: trace,
  });
  let producerTrace: TraceDispatcherStats | undefined;
  const afterProduce = async (): Promise<void> => {
    producerTrace = (producer as unknown as { trace: { stats(): TraceDispatcherStats } | null }).trace?.stats();
    await producer.shutdown();
  };
  const t = await produceThenConsume(producer, consumer, {
    topic,
    messages: N,
    size: SIZE,
    concurrency: CONCURRENCY,
    keys: true,
    afterProduce,
  });
  const consumerTrace = pushConsumerImpl(consumer).trace?.stats();
  await consumer.shutdown();
  return {
    trace,
    produceMsgsPerSec: Math.round((N / t.produceMs) * 1000),
    consumeMsgsPerSec: Math.round((N / t.consumeMs) * 1000),
    produceCpuUsPerMsg: Math.round(t.produceCpuUs / N),
    consumeCpuUsPerMsg: Math.round(t.consumeCpuUs / N),
    producerTrace,
    consumerTrace,
  };
}

const prof = values['broker-cpu-prof'];
const real =
  values.real === true
    ? await (await import('../../test/interop/harness.js')).startRealCluster({
        brokerConfig: { traceTopicEnable: true },
        brokerHeapMb: 1024,
      })
    : null;
const broker =
  real !== null
    ? { namesrv: real.namesrv, stop: () => real.stop() }
    : values.namesrv !== undefined
      ? { namesrv: values.namesrv, stop: async () => undefined }
      : await startChildBroker(8, 30_000, prof === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', prof]);
try {
  await once(broker.namesrv, ONLY ?? false); // warm-up, not recorded
  const runs: Run[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const order = ONLY !== null ? [ONLY] : abOrder(r);
    for (const trace of order) {
      const run = await once(broker.namesrv, trace);
      runs.push(run);
      process.stderr.write(
        `round ${r + 1} trace=${trace}: produce ${run.produceMsgsPerSec} msgs/s (${run.produceCpuUsPerMsg} µs CPU/msg), consume ${run.consumeMsgsPerSec} msgs/s (${run.consumeCpuUsPerMsg} µs CPU/msg)\n`,
      );
    }
  }
  const side = (trace: boolean) => runs.filter((x) => x.trace === trace);
  const med = (trace: boolean, k: keyof Run): number => median(side(trace).map((x) => x[k] as number));
  const off = { produce: med(false, 'produceMsgsPerSec'), consume: med(false, 'consumeMsgsPerSec') };
  const on = { produce: med(true, 'produceMsgsPerSec'), consume: med(true, 'consumeMsgsPerSec') };
  const cpuOff = { produce: med(false, 'produceCpuUsPerMsg'), consume: med(false, 'consumeCpuUsPerMsg') };
  const cpuOn = { produce: med(true, 'produceCpuUsPerMsg'), consume: med(true, 'consumeCpuUsPerMsg') };
  console.log(
    JSON.stringify(
      {
        messages: N,
        size: SIZE,
        concurrency: CONCURRENCY,
        rounds: ROUNDS,
        medianMsgsPerSec: { off, on },
        ratioOnOverOff: {
          produce: +(on.produce / off.produce).toFixed(3),
          consume: +(on.consume / off.consume).toFixed(3),
        },
        medianCpuUsPerMsg: { off: cpuOff, on: cpuOn },
        loadAverage: (await import('node:os')).loadavg(),
        runs,
      },
      null,
      2,
    ),
  );
} finally {
  await broker.stop();
}
