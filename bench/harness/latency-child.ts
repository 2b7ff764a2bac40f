/**
 * The Node processes of `rocketwire bench --latency` (latency.ts), each a long-lived child driven by
 * commands on stdin and printing JSON lines, like the Java side (test/interop/java/LatencyBench.java):
 *
 *   latency-child.js rocketwire NAMESRV TOPIC GROUP [wait]  rocketwire's PushConsumer (its defaults, from the
 *                                                     last offset); with `wait`, started by a `start` line
 *   latency-child.js floor NAMESRV TOPIC GROUP        the floor: raw long polls answered on arrival (latency-floor.ts)
 *   latency-child.js producer NAMESRV TOPIC SIZE [QUEUES]  rocketwire's Producer, open loop, sync sends
 *
 * Consumers: `begin N`, `count N`, `end N`, `quit`; the producer: `run N RATE MS`, `quit` (the
 * same commands and answers as the Java side). Both: `trace N` keeps every message of phase N,
 * `dump N FILE` writes them to FILE (latency-record.ts's SampleLog). A body is: phase (4 bytes), sequence (4), its
 * scheduled send time in µs since the epoch (8, big-endian), filler.
 */
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { ConsumeConcurrentlyStatus, PushConsumer, type MessageExt } from '../../lib/consumer/index.js';
import { Producer } from '../../lib/producer/index.js';
import { CliError } from '../../lib/cli/common.js';
import { exitAfterStdout } from './exit-flushed.js';
import { startFloor } from './latency-floor.js';
import {
  newHistogram,
  NO_QUEUE,
  nowUs,
  percentiles,
  PhaseRecorder,
  print,
  Resources,
  SampleLogs,
  walkRecords,
} from './latency-record.js';

/** Reads commands from stdin until `quit` or its end, then runs `stop` and exits. */
function serve(onLine: (line: string) => void, stop: () => Promise<void>): void {
  const rl = createInterface({ input: process.stdin });
  let stopping = false;
  const quit = () => {
    if (stopping) return;
    stopping = true;
    rl.close();
    void stop().finally(() => exitAfterStdout(0));
  };
  rl.on('line', (line) => (line.trim() === 'quit' ? quit() : onLine(line)));
  rl.on('close', quit);
}

async function rocketwire(namesrv: string, topic: string, group: string, wait: boolean): Promise<void> {
  const rec = new PhaseRecorder();
  let first = true;
  const consumer = new PushConsumer({
    consumerGroup: group,
    namesrvAddr: namesrv,
    consumeFromWhere: 'last',
    subscriptions: { [topic]: '*' },
  });
  let started = false;
  const start = async (): Promise<void> => {
    started = true;
    const t0 = performance.now();
    await consumer.start((msgs: MessageExt[]) => {
      const now = nowUs();
      for (const m of msgs) rec.record(m.body, m.storeTimestamp, now, m.queueId);
      if (first) {
        first = false;
        print({ type: 'first', startupMs: performance.now() - t0 });
      }
      return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
    });
    print({ type: 'ready', startMs: performance.now() - t0 });
  };
  // A member that joins later: the process (node, the module graph) is up before the bench says
  // `start`, so what the join costs is the consumer's start, not node's.
  if (wait) print({ type: 'idle' });
  else await start();
  serve(
    (line) => {
      if (line.trim() === 'start' && !started) void start();
      else rec.command(line);
    },
    async () => {
      if (started) await consumer.shutdown();
    },
  );
}

async function floor(namesrv: string, topic: string, group: string): Promise<void> {
  const rec = new PhaseRecorder();
  let first = true;
  const t0 = performance.now();
  const stop = await startFloor(namesrv, topic, group, (body, start, end) => {
    // One pull answer: every record's body timestamp and store time, read where they lie.
    const now = nowUs();
    walkRecords(body, start, end, rec, now);
    if (first) {
      first = false;
      print({ type: 'first', startupMs: performance.now() - t0 });
    }
  });
  print({ type: 'ready', startMs: performance.now() - t0 });
  serve(
    (line) => rec.command(line),
    async () => stop(),
  );
}

async function producer(namesrv: string, topic: string, size: number, queues: number): Promise<void> {
  const p = new Producer({
    group: 'rocketwire_latency_producer',
    namesrvAddr: namesrv,
    defaultTopicQueueNums: queues,
  });
  await p.start();
  const template = Buffer.alloc(Math.max(16, size), 'rocketwire-bench-');
  // The topic exists before any consumer looks for its route.
  const b0 = Buffer.from(template);
  b0.fill(0, 0, 16);
  await p.send({ topic, body: b0, tags: 'bench' });
  print({ type: 'ready' });
  const traced = new SampleLogs();
  const run = (phase: number, rate: number, ms: number): void => {
    const log = traced.get(phase);
    const total = Math.max(1, Math.round((rate * ms) / 1000));
    const intervalMs = 1000 / rate;
    const ack = newHistogram();
    const call = newHistogram();
    const lag = newHistogram();
    let settled = 0;
    let failed = 0;
    let firstError: string | null = null;
    const res = new Resources();
    const start = performance.now();
    const startUs = nowUs();
    let i = 0;
    const finish = () =>
      print({
        type: 'phase',
        phase,
        scheduled: total,
        acked: ack.count,
        failed,
        error: firstError,
        ack: percentiles(ack),
        call: percentiles(call),
        lag: percentiles(lag),
        ...res.end(),
      });
    const sendOne = (seq: number): void => {
      const dueUs = startUs + seq * intervalMs * 1000;
      const body = Buffer.allocUnsafe(template.length);
      template.copy(body);
      body.writeUInt32BE(phase, 0);
      body.writeUInt32BE(seq, 4);
      const due = Math.round(dueUs);
      body.writeUInt32BE(Math.floor(due / 0x1_0000_0000), 8);
      body.writeUInt32BE(due >>> 0, 12);
      const callUs = nowUs();
      p.send({ topic, body, tags: 'bench' }).then(
        (r) => {
          const now = nowUs();
          log?.add(due, now, r.messageQueue.queueId, seq);
          ack.record((now - dueUs) / 1000);
          call.record((now - callUs) / 1000);
          lag.record((callUs - dueUs) / 1000);
          if (++settled === total) finish();
        },
        (err: Error) => {
          log?.add(due, Number.NaN, NO_QUEUE, seq);
          failed++;
          firstError ??= err.message;
          if (++settled === total) finish();
        },
      );
    };
    // Open loop: every tick sends what is due by now; timers fire on whole milliseconds, so at
    // more than 1000 msgs/s a tick sends several (the lag histogram shows how late they went).
    const tick = (): void => {
      const now = performance.now();
      while (i < total && start + i * intervalMs <= now) sendOne(i++);
      if (i < total) setTimeout(tick, Math.max(0, start + i * intervalMs - performance.now()));
    };
    tick();
  };
  serve(
    (line) => {
      if (traced.command(line)) return;
      const [cmd, n, rate, ms] = line.trim().split(' ');
      if (cmd === 'run') run(Number(n), Number(rate), Number(ms));
    },
    () => p.shutdown(),
  );
}

async function main(): Promise<void> {
  const [role, namesrv, topic, arg, queues] = process.argv.slice(2) as [string, string, string, string, string?];
  if (role === 'rocketwire') await rocketwire(namesrv, topic, arg, queues === 'wait');
  else if (role === 'floor') await floor(namesrv, topic, arg);
  else if (role === 'producer') await producer(namesrv, topic, Number(arg), Number(queues ?? 8));
  else throw new CliError(`unknown role ${role}`);
}

main().catch((err: Error) => {
  print({ type: 'fatal', error: err.message });
  exitAfterStdout(1);
});
