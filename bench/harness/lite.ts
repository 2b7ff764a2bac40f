// `rocketwire bench --mode lite`: rocketwire's LitePullConsumer in a poll loop, the push consumer as
// the in-run comparison ("push"), and Java's DefaultLitePullConsumer as a --vs peer ("java-lite",
// test/interop/java/LitePullClient.java subscribe-bench). Same measure as the push rounds: first to
// last distinct message handled.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { LitePullConsumer } from '../../lib/consumer/index.js';
import { litePullConsumerImpl } from '../../lib/consumer/lite-pull/lite-pull-consumer.js';
import { CliError } from '../../lib/cli/common.js';
import { JAVA_PEER_VERSION, prepareJava, runPeer, type PeerResult, type PeerRun } from './peers.js';
import type { ProgressBar } from './progress.js';
import {
  consumeRocketwire,
  consumeRoundFigures,
  newGroup,
  GcWatcher,
  RssSampler,
  UniqueCount,
  type BenchOptions,
  type ConsumeResult,
  type Series,
} from './run.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** One round with rocketwire's LitePullConsumer (Java's defaults: batches of 10, autoCommit). */
export async function consumeLite(
  opts: BenchOptions,
  expect: number,
  progress: ProgressBar | null,
  t0: number,
  label = 'consume (rocketwire lite)',
): Promise<ConsumeResult> {
  const n = new UniqueCount(expect);
  const consumer = new LitePullConsumer({
    consumerGroup: newGroup('rocketwire_bench_lite'),
    namesrvAddr: opts.namesrv,
    consumeFromWhere: 'first',
    subscriptions: { [opts.topic]: '*' },
    serializeType: opts.serializeType,
  });
  const series: Series = { name: label, points: [] };
  if (typeof globalThis.gc === 'function') globalThis.gc();
  const rss = new RssSampler().start();
  const gc = new GcWatcher().start();
  const cpu0 = process.cpuUsage();
  const start = performance.now();
  let lastSample = start;
  let lastSampleCount = 0;
  let lastProgressAt = start;
  try {
    await consumer.start();
    while (n.unique < expect) {
      const msgs = await consumer.poll(100);
      n.add(msgs);
      if (opts.handlerMs > 0 && msgs.length > 0) await new Promise((r) => setTimeout(r, opts.handlerMs));
      const now = performance.now();
      if (msgs.length > 0) lastProgressAt = now;
      else if (now - lastProgressAt > opts.stallTimeoutMs) break;
      if (now - lastSample >= 100) {
        series.points.push([(now - t0) / 1000, ((n.unique - lastSampleCount) * 1000) / (now - lastSample)]);
        lastSample = now;
        lastSampleCount = n.unique;
        progress?.update('consume', n.unique, expect, n.duplicates ? `dup ${n.duplicates}` : '');
      }
    }
    progress?.clear();
    const cpu = process.cpuUsage(cpu0);
    const impl = litePullConsumerImpl(consumer);
    return {
      ...consumeRoundFigures(n, { start, size: opts.size, cpu, rss, gc }),
      pulls: impl.counters.pulls,
      flowControlPauses: { ...impl.counters.parks },
      series,
    };
  } finally {
    rss.stop();
    gc.stop();
    await consumer.shutdown();
  }
}

/** rocketwire's LitePullConsumer as a peer ("lite", `--vs lite`) of push or pop rounds, in this process. */
export function litePeer(opts: BenchOptions): (run: PeerRun) => Promise<PeerResult> {
  return async (run) => {
    const r = await consumeLite(opts, run.expect, null, run.t0);
    return {
      name: 'lite',
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

/** The push consumer as a peer of a lite round (`--mode lite` adds it), measured in this process. */
export function pushPeer(opts: BenchOptions): (run: PeerRun) => Promise<PeerResult> {
  return localPushPeer('push', opts);
}

/**
 * The push consumer with enableTrace (`--vs trace`), measured in this process: what message trace
 * costs, side by side with the untraced rounds. Its records go to the broker's RMQ_SYS_TRACE_TOPIC.
 */
export function tracePeer(opts: BenchOptions): (run: PeerRun) => Promise<PeerResult> {
  return localPushPeer('trace', opts);
}

function localPushPeer(name: 'push' | 'trace', opts: BenchOptions): (run: PeerRun) => Promise<PeerResult> {
  const trace = name === 'trace';
  return async (run) => {
    // push whatever --mode is: in pop mode consumeRocketwire would pop
    const r = await consumeRocketwire(
      { ...opts, mode: 'push', trace },
      run.expect,
      null,
      run.t0,
      trace ? 'consume (rocketwire traced)' : 'consume (rocketwire push)',
    );
    const result: PeerResult = {
      name,
      received: r.unique,
      seconds: r.seconds,
      msgsPerSec: r.msgsPerSec,
      peakRssMb: r.peakRssMb,
      cpuMs: r.cpuMs,
      complete: r.unique === run.expect,
      series: r.series,
    };
    if (r.trace) {
      const { atLast, final } = r.trace;
      // queued or in flight when the last message was handled: sent after the measured window
      result.traceBacklog = atLast.appended - atLast.sent - atLast.failed - atLast.skipped;
      result.traceDropped = final.dropped + final.failed;
    }
    return result;
  };
}

/**
 * Compiles RefClient.java with one feature client beside it (LitePullClient.java, PopClient.java)
 * into its own folder, cached by source hash: the classes prepareJava builds hold only RefClient.
 */
export function prepareJavaWith(mainClass: string): string {
  const cp = prepareJava(); // checks java/javac and fetches the jars
  const lib = cp.split(path.delimiter)[1]!;
  const srcs = ['RefClient.java', `${mainClass}.java`].map((f) => path.join(REPO, 'test', 'interop', 'java', f));
  const h = createHash('sha1');
  for (const s of srcs) h.update(fs.readFileSync(s));
  const prefix = mainClass === 'LitePullClient' ? 'lite' : mainClass.toLowerCase();
  const classes = path.join(
    process.env.ROCKETWIRE_CACHE ?? path.join(os.homedir(), '.cache', 'rocketwire'),
    'bench-refclient',
    `${prefix}-${JAVA_PEER_VERSION}-${h.digest('hex').slice(0, 12)}`,
  );
  if (!fs.existsSync(path.join(classes, `${mainClass}.class`))) {
    const tmp = `${classes}.tmp${process.pid}`;
    fs.mkdirSync(tmp, { recursive: true });
    const r = spawnSync('javac', ['-nowarn', '-encoding', 'UTF-8', '-cp', lib, '-d', tmp, ...srcs], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    if (r.status !== 0)
      throw new CliError(`javac ${mainClass}.java failed: ${r.stderr.toString().trim().split('\n')[0]}`);
    fs.rmSync(classes, { recursive: true, force: true });
    fs.renameSync(tmp, classes);
  }
  return `${classes}${path.delimiter}${lib}`;
}

/** Java's DefaultLitePullConsumer (5.3.3, its defaults) in a poll loop, in its own JVM. */
export async function runJavaLitePeer(run: PeerRun): Promise<PeerResult> {
  const cp = prepareJavaWith('LitePullClient');
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'rocketwire-bench-java-lite-'));
  try {
    return await runPeer(
      'java-lite',
      'java',
      [
        '-Xms256m',
        '-Xmx1g',
        `-Duser.home=${home}`,
        '-Drocketmq.client.logRoot=' + path.join(home, 'logs'),
        '-cp',
        cp,
        'LitePullClient',
        'subscribe-bench',
        '--namesrv',
        run.namesrv,
        '--topic',
        run.topic,
        '--group',
        `java_lite_bench_${Date.now().toString(36)}`,
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
