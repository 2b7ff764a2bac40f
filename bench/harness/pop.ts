import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SimpleConsumer } from '../../lib/consumer/pop/simple-consumer.js';
import { prepareJavaWith } from './lite.js';
import { runPeer, type PeerResult, type PeerRun } from './peers.js';
import type { ProgressBar } from './progress.js';
import {
  consumeRoundFigures,
  newGroup,
  GcWatcher,
  RssSampler,
  UniqueCount,
  type BenchOptions,
  type ConsumeResult,
  type Series,
} from './run.js';

/** Receive loops running at once: POP has no per-queue pull, so parallel pops stand in for them. */
const POP_RECEIVERS = 4;

/**
 * `bench --mode pop`: the same measurement as consumeRocketwire, with a SimpleConsumer: POP_RECEIVERS
 * loops of receive(32) then one batch ack, on a new group from the first offset. `pulls` counts the
 * POP requests.
 */
export async function consumeRocketwirePop(
  opts: BenchOptions,
  expect: number,
  progress: ProgressBar | null,
  t0: number,
  label: string,
  stopAfter: number,
): Promise<ConsumeResult> {
  const n = new UniqueCount(expect);
  let pops = 0;
  const consumer = new SimpleConsumer({
    namesrvAddr: opts.namesrv,
    consumerGroup: newGroup('rocketwire_bench_pop'),
    topic: opts.topic,
    initMode: 'MIN',
    awaitDurationMs: 1000,
    invisibleDurationMs: 60_000,
    serializeType: opts.serializeType,
  });
  const series: Series = { name: `${label} [pop]`, points: [] };
  let last = 0;
  let lastT = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    series.points.push([(now - t0) / 1000, ((n.unique - last) * 1000) / (now - lastT)]);
    last = n.unique;
    lastT = now;
  }, 100);
  timer.unref();
  if (typeof globalThis.gc === 'function') globalThis.gc();
  const rss = new RssSampler().start();
  const gc = new GcWatcher().start();
  const cpu0 = process.cpuUsage();
  const consumeStart = performance.now();
  let lastProgressAt = consumeStart;
  let stalled = false;
  try {
    await consumer.start();
    const loop = async (): Promise<void> => {
      while (n.unique < stopAfter && !stalled) {
        const msgs = await consumer.receive(32);
        pops++;
        n.add(msgs);
        if (msgs.length > 0) {
          lastProgressAt = performance.now();
          await consumer.ack(msgs);
        } else if (performance.now() - lastProgressAt > opts.stallTimeoutMs) stalled = true;
        progress?.update('consume', n.unique, stopAfter, n.duplicates ? `dup ${n.duplicates}` : '');
      }
    };
    await Promise.all(Array.from({ length: POP_RECEIVERS }, loop));
    progress?.clear();
    const cpu = process.cpuUsage(cpu0);
    return {
      ...consumeRoundFigures(n, { start: consumeStart, size: opts.size, cpu, rss, gc }),
      pulls: pops,
      flowControlPauses: {},
      series,
    };
  } finally {
    clearInterval(timer);
    rss.stop();
    gc.stop();
    await consumer.shutdown();
  }
}

/** rocketwire's SimpleConsumer as a peer ("pop", `--vs pop`) of push or lite rounds, in this process. */
export function popPeer(opts: BenchOptions): (run: PeerRun) => Promise<PeerResult> {
  return async (run) => {
    const r = await consumeRocketwirePop(opts, run.expect, null, run.t0, 'consume (rocketwire)', run.expect);
    return {
      name: 'pop',
      received: r.unique,
      seconds: r.seconds,
      msgsPerSec: r.msgsPerSec,
      peakRssMb: r.peakRssMb,
      cpuMs: r.cpuMs,
      complete: r.unique === run.expect,
      series: r.series,
    };
  };
}

/**
 * Java 5.3.3's DefaultMQPushConsumer in pop mode ("java-pop"), in its own JVM: PopClient pop-bench
 * switches its new group to POP on the topic's masters (as mqadmin setConsumeMode), then pops with
 * Java's defaults. Needs a 5.x broker with POP on (5.3.3: timerWheelEnable=true).
 */
export async function runJavaPopPeer(run: PeerRun): Promise<PeerResult> {
  const cp = prepareJavaWith('PopClient');
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'rocketwire-bench-java-pop-'));
  try {
    return await runPeer(
      'java-pop',
      'java',
      [
        '-Xms256m',
        '-Xmx1g',
        `-Duser.home=${home}`,
        '-Drocketmq.client.logRoot=' + path.join(home, 'logs'),
        '-cp',
        cp,
        'PopClient',
        'pop-bench',
        '--namesrv',
        run.namesrv,
        '--topic',
        run.topic,
        '--group',
        `java_pop_bench_${Date.now().toString(36)}`,
        '--expect',
        String(run.expect),
        '--timeout-ms',
        String(run.timeoutMs),
        '--progress-ms',
        '100',
      ],
      run,
    );
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
  }
}
