import * as fs from 'node:fs';
import { renderThroughputSvg } from './chart.js';
import { curveSvg, curveTable, runCurve, TOPIC_CURVE_QUEUES } from './curve.js';
import {
  DEFAULT_SIZE_POINTS,
  runSizeCurve,
  SIZE_CURVE_QUEUES,
  SIZE_RULE,
  sizeSvg,
  sizeTable,
  sizeTargets,
} from './curve-size.js';
import { startChildBroker, type ChildBroker } from './embedded.js';
import { consumeJavaGroup, consumeRocketwireGroup, type GroupResult, type GroupRun } from './group.js';
import { runAliOnsPeer, runJavaPeer, runPullFloorPeer, type PeerResult, type PeerRun } from './peers.js';
import { consumeLite, litePeer, pushPeer, runJavaLitePeer, tracePeer } from './lite.js';
import { popPeer, runJavaPopPeer } from './pop.js';
import { benchMachine, type BenchMachine } from './proc-stats.js';
import {
  DEFAULT_PRODUCE_MODES,
  BATCH_IN_FLIGHT,
  parseProduceModes,
  parseProducePeers,
  produceProblems,
  produceSummary,
  runProduceComparison,
} from './produce-vs.js';
import { ProgressBar } from './progress.js';
import { LATENCY_USAGE, runLatency } from './latency.js';
import { isMembersCurve, MEMBERS_USAGE, runMembersCommand } from './members-command.js';
import {
  BENCH_CONSUME_THREADS,
  consumeRocketwire,
  measureLatency,
  produce,
  type BenchOptions,
  type ConsumeResult,
  type Series,
} from './run.js';
import { Producer } from '../../lib/producer/index.js';
import {
  CliError,
  UsageError,
  intOption,
  parseOptions,
  stringOption,
  type CliCommand,
  type CliIO,
  type OptionValues,
} from '../../lib/cli/common.js';

const usage = `usage: rocketwire bench [options]

Produces messages, then consumes them with rocketwire's push consumer from the first offset, and
reports throughput, end-to-end latency, memory and CPU. Without --namesrv it starts the embedded
broker in a child process (its memory is not counted as the client's) on a temporary folder.

Method: after producing, one warm-up consume (not measured) warms the broker and the JIT; then each
round consumes all messages once with every consumer (rocketwire and each --vs peer), each with a
new group, in an order rotated every round; the report gives each consumer's median over the rounds.
Throughput is counted from the first to the last message handled on every side.

options:
  --namesrv ADDR        run against this name server (a real or compatible broker)
  --messages N          messages to produce and consume (default 100000)
  --size BYTES          body size (default 1024)
  --queues N            queues of the topic (default 8)
  --producers N         concurrent producer calls in flight (default 4)
  --batch N             messages per SEND_BATCH_MESSAGE (default 1: single sends)
  --consume-batch N     consumeMessageBatchMaxSize (default 1)
  --handler-ms MS       time each handler call takes (default 0: a no-op handler); the peers' handlers
                        (java, ali-ons) sleep as long
  --consume-threads N   handler calls at once, for rocketwire (default 64) and the java peer (default
                        its own 20): set it to compare both at the same concurrency
  --latency-messages N  messages sent one by one to the caught-up consumer for end-to-end latency (default 2000)
  --topic T             topic (default a new one per run)
  --mode M              push (default); lite: rocketwire's rounds poll with its LitePullConsumer,
                        and its push consumer is added as the peer "push" for the ratio; pop:
                        rocketwire consumes with a SimpleConsumer over POP (5.x)
  --vs PEERS            also consume the same messages with: java, java-lite (Java's
                        DefaultLitePullConsumer), java-pop (Java's push consumer in pop mode),
                        java-trace (Java's push consumer with enableMsgTrace), push, lite, pop
                        (rocketwire's other modes), trace (rocketwire's push consumer with
                        enableTrace), ali-ons, raw-pull, decode-pull (comma list). raw-pull is the
                        floor: the same pulls with no client on top (no decoding, no cache, no
                        handler), the most any consumer could get from this broker here;
                        decode-pull adds only the decoding of every message. trace and java-trace
                        send their trace records to the broker (RMQ_SYS_TRACE_TOPIC; a real broker
                        needs traceTopicEnable=true or topic auto-creation); the report gives
                        traced ÷ untraced for each client that ran both ways
  --consumers N         consumer processes per client in each round (default 1: rocketwire consumes in
                        the bench process). With N > 1 each round runs N rocketwire processes (and N
                        Java processes with --vs java) in one group; they split the queues by the
                        group's rebalance, handle nothing until every process holds its share, and
                        throughput runs from the first message any of them handled to the last one
  --consumer-process    with --consumers 1: rocketwire (and Java with --vs java) consumes in a process
                        of its own that has done nothing else (a group of one), so that its RSS is
                        a consumer's alone, not the bench process's after producing; the report
                        gives its RSS per tenth of the run (rssMbByTenthRounds)
  --rounds N            measured rounds (default 3); --warmup 0 skips the warm-up consume
  --serialize-type T    JSON (default) or ROCKETMQ headers
  --compress on|off     on (default): producers compress bodies of 4 KiB and more with zlib, as Java's
                        does (the bench's bodies compress well); off: no body is compressed, on
                        every side (rocketwire, and with --produce-vs the java and ali-ons peers)
  --stall-timeout S     fail when consumption makes no progress for S seconds (default 60)
  --json                print one JSON object instead of the table
  --chart FILE.svg      write throughput over time as an SVG chart

Producer comparison (instead of the consumer bench):
  --produce-vs PEERS    compare rocketwire's Producer with java (Apache 5.3.3's DefaultMQProducer,
                        its defaults, in a JVM with the full JIT), ali-ons (its Producer) and/or
                        floor (a bare RemotingClient sending the same frames at the same concurrency), in
                        each --produce-modes mode: every round runs each mode with every producer one
                        after the other, in an order rotated every round. Each run is a fresh client
                        that first sends max(W, messages / 5) messages not measured (W: 5000, or
                        64 MiB of bodies when fewer; --warmup 0: none), then --messages measured
                        ones of --size bytes; its rate runs from the
                        first acknowledged send to the last. Each producer writes to a topic of its
                        own (the --topic name, or a new one, with "_rocketwire", "_java", "_ali-ons"
                        appended), created with --queues queues, so the consumer bench is not touched
  --produce-modes LIST  sync-N: N calls in flight, each waiting for its answer (Java: N threads
                        calling send(msg)); async-N: N in flight, each answer starting the next (Java:
                        send(msg, callback) under a Semaphore of N); batch-N: batches of N messages,
                        ${BATCH_IN_FLIGHT} in flight (Java: ${BATCH_IN_FLIGHT} threads calling send(Collection); ali-ons has no batch
                        send and sits these out). Default ${DEFAULT_PRODUCE_MODES}

Scale curves (instead of the consumer bench; bench/harness/curve.ts, curve-size.ts):
  --curve AXIS          queues: one topic of N queues per point; topics: N topics of 4 queues per
                        point. Each point fills its own topics with --messages messages (batches of
                        32) and consumes them once with a new group: rocketwire, then Java (--vs
                        java). Reports throughput, client CPU per message, rebalance time, start →
                        first message and the heartbeat's size (full and V2 without subscriptions),
                        as a Markdown table (--json: JSON) and with --chart FILE.svg a chart
  --points LIST         the curve's points (default 8,64,256,1024 for queues, 1,16,64,256 for topics,
                        ${DEFAULT_SIZE_POINTS.join(',')} for size)
  --curve size          body sizes (--points, bytes): per point a topic of ${SIZE_CURVE_QUEUES} queues, filled with
                        about --point-mib MiB of bodies (default ${SIZE_RULE.mib}) but at least MIN and at most MAX
                        messages (--point-messages MIN,MAX, default ${SIZE_RULE.minMessages},${SIZE_RULE.maxMessages}), never
                        over ${SIZE_RULE.capMib} MiB (or --point-mib if more); bodies of the bench's filler (compressed over 4 KiB unless
                        --compress off); consumed by a new group (defaults, no-op handler), then Java
                        (--vs java); the floor: the same bytes over loopback TCP, read and copied.
                        Reports MB/s, CPU per message and per MiB, ÷ the floor, CPU above the
                        floor's (--messages and --size do not apply)

${MEMBERS_USAGE}
${LATENCY_USAGE}
Exit code 1 if any produced message was not consumed (with --produce-vs: if any send failed or an
acknowledged message is not in its topic).
`;

/** The consumers `--vs` can add, by name. */
const PEERS: Record<string, (run: PeerRun) => Promise<PeerResult>> = {
  java: (run) => runJavaPeer(run),
  'java-trace': (run) => runJavaPeer(run, true),
  'java-lite': runJavaLitePeer,
  'java-pop': runJavaPopPeer,
  'ali-ons': runAliOnsPeer,
  'raw-pull': (run) => runPullFloorPeer(run, 'raw-pull'),
  'decode-pull': (run) => runPullFloorPeer(run, 'decode-pull'),
};

/** rocketwire's own consumers in the other modes, measured in this process. */
const LOCAL_PEERS: Record<string, (opts: BenchOptions) => (run: PeerRun) => Promise<PeerResult>> = {
  push: pushPeer,
  lite: litePeer,
  pop: popPeer,
  trace: tracePeer,
};

interface Report {
  broker: string;
  machine: BenchMachine;
  messages: number;
  size: number;
  queues: number;
  produced: number;
  produceFailed: number;
  consumed: number;
  duplicates: number;
  rounds: number;
  /** Consumer processes per client and round (--consumers). */
  consumers: number;
  produceMsgsPerSec: number;
  produceMBPerSec: number;
  consumeMsgsPerSec: number;
  consumeMBPerSec: number;
  consumeSeconds: number;
  p50LatencyMs: number;
  p99LatencyMs: number;
  maxLatencyMs: number;
  latencySamples: number;
  peakRssMb: number;
  consumeCpuMs: number;
  /** Median over the rounds of the consumer process's GC pauses while consuming. */
  consumeGc: { minor: number; major: number; ms: number };
  pulls: number;
  flowControlPauses: Record<string, number>;
  brokerPeakRssMb?: number;
  consumeMsgsPerSecRounds: number[];
  /** Peak RSS (MB) of the consumer process in each tenth of each round (rocketwire in the bench process). */
  rssMbByTenthRounds?: number[][];
  /** Whether the producer compressed bodies of 4 KiB and more (--compress). */
  compress: boolean;
  /** With --handler-ms: Little's law for rocketwire (calls at once × messages per call ÷ handler time). */
  handler?: HandlerFigures;
  consumeStartupMs: number;
  peers: Array<Omit<PeerResult, 'series'> & { ratio: number; msgsPerSecRounds: number[]; duplicates?: number }>;
  /** With --vs trace / java-trace (and java): each client's traced ÷ untraced rate (medians). */
  traceRatios?: { rocketwire?: number; java?: number };
  /** With --consumers N > 1: each round of each client (messages handled per process, settle time). */
  groupRounds?: Array<{
    name: string;
    round: number;
    msgsPerSec: number;
    unique: number;
    duplicates: number;
    perProcess: number[];
    settleMs: number;
  }>;
}

function median(xs: number[]): number {
  if (xs.length === 0) return 0;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

function fmt(n: number, digits = 0): string {
  return n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

/** Latencies come from millisecond clocks: below 1 ms is all the resolution can tell. */
function ms(v: number): string {
  return v < 1 ? '<1 ms' : `${fmt(v, 1)} ms`;
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows
    .map((r) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  '))
    .join('\n');
}

function summary(r: Report): string {
  const lines = [
    `rocketwire bench: ${fmt(r.messages)} messages of ${r.size} B, ${r.queues} queues, broker ${r.broker}; consume = median of ${r.rounds} round(s)` +
      (r.consumers > 1 ? `, ${r.consumers} consumer processes per client in one group` : ''),
    '',
    table([
      ['', 'messages', 'msgs/s', 'MB/s'],
      ['produce', fmt(r.produced), fmt(r.produceMsgsPerSec), fmt(r.produceMBPerSec, 1)],
      ['consume', fmt(r.consumed), fmt(r.consumeMsgsPerSec), fmt(r.consumeMBPerSec, 1)],
    ]),
    '',
    `duplicates ${fmt(r.duplicates)}   produce failures ${fmt(r.produceFailed)}   pulls ${fmt(r.pulls)}   flow-control pauses ${Object.entries(
      r.flowControlPauses,
    )
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
    `end-to-end latency (born → handler, ${r.latencySamples} live messages, millisecond clocks): p50 ${ms(r.p50LatencyMs)}   p99 ${ms(r.p99LatencyMs)}   max ${ms(r.maxLatencyMs)}`,
    `consumer process: peak RSS ${fmt(r.peakRssMb, 1)} MB   CPU ${fmt(r.consumeCpuMs)} ms while consuming` +
      `   GC ${fmt(r.consumeGc.minor)} minor + ${fmt(r.consumeGc.major)} major, ${fmt(r.consumeGc.ms)} ms` +
      (r.brokerPeakRssMb ? `   (embedded broker peak RSS ${fmt(r.brokerPeakRssMb, 1)} MB)` : ''),
  ];
  if (r.handler) {
    const h = r.handler;
    lines.push(
      `handler: ${h.ms} ms per call, ${h.threads} calls at once, ${h.messagesPerCall} message(s) per call: Little's law ceiling ${fmt(h.ceilingMsgsPerSec)} msgs/s, ` +
        `rocketwire at ${fmt(h.ofCeiling * 100, 1)} % of it` +
        (h.meanWaitMs !== undefined ? ` (its waits took ${fmt(h.meanWaitMs, 2)} ms on average)` : '') +
        r.peers
          .filter((p) => p.handlerMeanMs !== undefined)
          .map((p) => `; ${p.name}'s waits ${fmt(p.handlerMeanMs!, 2)} ms`)
          .join(''),
    );
  }
  if (r.peers.length > 0) {
    lines.push(
      '',
      table([
        ['consumer', 'received', 'median msgs/s', 'rounds msgs/s', 'peak RSS MB', 'CPU ms', 'rocketwire ÷ peer'],
        [
          'rocketwire',
          fmt(r.consumed),
          fmt(r.consumeMsgsPerSec),
          r.consumeMsgsPerSecRounds.map((x) => fmt(x)).join(' / '),
          fmt(r.peakRssMb, 1),
          fmt(r.consumeCpuMs),
          '1.00',
        ],
        ...r.peers.map((p) => [
          p.name + (p.duplicates ? ` (dup ${fmt(p.duplicates)})` : ''),
          fmt(p.received),
          fmt(p.msgsPerSec),
          p.msgsPerSecRounds.map((x) => fmt(x)).join(' / '),
          fmt(p.peakRssMb, 1),
          fmt(p.cpuMs),
          p.ratio > 0 ? fmt(p.ratio, 2) : 'n/a',
        ]),
      ]),
    );
  }
  const traced = traceFigures(r);
  if (traced.length > 0) lines.push('', ...traced);
  if (r.peers.some((p) => p.name.endsWith('-pull'))) {
    lines.push(
      'raw-pull and decode-pull are floors, not clients: the same pulls with nothing (raw) or only message',
      'decoding (decode) on top; rocketwire ÷ floor is the share of that floor the whole client reaches.',
    );
  }
  lines.push(
    '',
    `machine: ${r.machine.cpus} × ${r.machine.cpuModel}, ${r.machine.memoryGb} GB, Node ${r.machine.node}`,
  );
  return lines.join('\n') + '\n';
}

/** A peer of the report by name, when it measured a rate. */
function tracedPeer(r: Report, name: string): Report['peers'][number] | undefined {
  return r.peers.find((p) => p.name === name && p.msgsPerSec > 0);
}

/**
 * Message trace's cost, for each client measured both ways in the run: its traced rate ÷ its
 * untraced one (rocketwire: the `trace` peer ÷ the bench's own rounds; Java: java-trace ÷ java).
 */
function traceRatiosOf(r: Report): Report['traceRatios'] {
  const rw = tracedPeer(r, 'trace');
  const java = tracedPeer(r, 'java');
  const javaTraced = tracedPeer(r, 'java-trace');
  const out: NonNullable<Report['traceRatios']> = {};
  if (rw && r.consumeMsgsPerSec > 0) out.rocketwire = rw.msgsPerSec / r.consumeMsgsPerSec;
  if (java && javaTraced) out.java = javaTraced.msgsPerSec / java.msgsPerSec;
  return out.rocketwire === undefined && out.java === undefined ? undefined : out;
}

function traceFigures(r: Report): string[] {
  const ratios = r.traceRatios;
  if (!ratios) return [];
  const lines: string[] = [];
  const rw = tracedPeer(r, 'trace');
  if (rw && ratios.rocketwire !== undefined) {
    lines.push(
      `message trace, rocketwire: traced ÷ untraced ${fmt(ratios.rocketwire, 2)}` +
        (rw.traceBacklog !== undefined
          ? `; trace records queued or in flight at the last message ${fmt(rw.traceBacklog)} (most in a round), lost ${fmt(rw.traceDropped ?? 0)}`
          : ''),
    );
  }
  if (ratios.java !== undefined) lines.push(`message trace, Java: traced ÷ untraced ${fmt(ratios.java, 2)}`);
  const javaTraced = tracedPeer(r, 'java-trace');
  if (rw && javaTraced) lines.push(`traced rocketwire ÷ traced Java ${fmt(rw.msgsPerSec / javaTraced.msgsPerSec, 2)}`);
  return lines;
}

async function run(argv: string[], io: CliIO): Promise<number> {
  if (isMembersCurve(argv)) return runMembersCommand(argv, io);
  const { values } = parseOptions(argv, {
    namesrv: { type: 'string' },
    messages: { type: 'string' },
    size: { type: 'string' },
    queues: { type: 'string' },
    producers: { type: 'string' },
    batch: { type: 'string' },
    'consume-batch': { type: 'string' },
    'handler-ms': { type: 'string' },
    'consume-threads': { type: 'string' },
    compress: { type: 'string' },
    'latency-messages': { type: 'string' },
    topic: { type: 'string' },
    vs: { type: 'string' },
    rounds: { type: 'string' },
    consumers: { type: 'string' },
    'consumer-process': { type: 'boolean' },
    warmup: { type: 'string' },
    'serialize-type': { type: 'string' },
    mode: { type: 'string' },
    'stall-timeout': { type: 'string' },
    json: { type: 'boolean' },
    chart: { type: 'string' },
    'produce-vs': { type: 'string' },
    'produce-modes': { type: 'string' },
    latency: { type: 'boolean' },
    'max-rate': { type: 'string' },
    rates: { type: 'string' },
    'phase-seconds': { type: 'string' },
    'no-java': { type: 'boolean' },
    'cpu-prof': { type: 'string' },
    'node-args': { type: 'string' },
    join: { type: 'boolean' },
    restart: { type: 'boolean' },
    'event-rate': { type: 'string' },
    'join-seconds': { type: 'string' },
    'restart-seconds': { type: 'string' },
    'child-log': { type: 'string' },
    'broker-pid': { type: 'string' },
    curve: { type: 'string' },
    points: { type: 'string' },
    'point-mib': { type: 'string' },
    'point-messages': { type: 'string' },
  });
  const str = (k: string): string | undefined => stringOption(values, k);
  if (values.latency === true)
    return runLatency(values, io, (ns, q, body) =>
      withBenchBroker(ns, q, (n, l, c) => body(n, l, c ? c.pid : null, c ? () => c.restart() : parentRestart())),
    );
  if (str('produce-vs') !== undefined) return runProduceVs(values, io);
  if (str('curve') !== undefined) return runCurveCommand(str, values.json === true, io);
  if (str('produce-modes') !== undefined) throw new UsageError('--produce-modes goes with --produce-vs');
  const serializeType = (str('serialize-type') ?? 'JSON').toUpperCase();
  if (serializeType !== 'JSON' && serializeType !== 'ROCKETMQ')
    throw new UsageError('--serialize-type must be JSON or ROCKETMQ');
  const peers = (str('vs') ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const p of peers) {
    if (!Object.hasOwn(PEERS, p) && !Object.hasOwn(LOCAL_PEERS, p))
      throw new UsageError(
        `--vs takes ${[...Object.keys(PEERS), ...Object.keys(LOCAL_PEERS)].join(', ')} (comma-separated), got "${p}"`,
      );
  }
  const mode = str('mode') ?? 'push';
  if (mode !== 'push' && mode !== 'lite' && mode !== 'pop')
    throw new UsageError(`--mode must be push, lite or pop, got "${mode}"`);
  if (mode === 'lite' && !peers.includes('push')) peers.unshift('push');
  const topic = str('topic') ?? `rocketwire_bench_${Date.now().toString(36)}`;
  if (!/^[%|a-zA-Z0-9_-]{1,100}$/.test(topic)) throw new UsageError(`--topic "${topic}" is not a valid topic name`);
  const opts: BenchOptions = {
    namesrv: '',
    topic,
    messages: intOption('messages', str('messages'), 100_000, 1, 100_000_000),
    size: intOption('size', str('size'), 1024, 8, 4 * 1024 * 1024),
    queues: intOption('queues', str('queues'), 8, 1, 1024),
    producers: intOption('producers', str('producers'), 4, 1, 1024),
    batch: intOption('batch', str('batch'), 1, 1, 1024),
    consumeBatch: intOption('consume-batch', str('consume-batch'), 1, 1, 1024),
    handlerMs: intOption('handler-ms', str('handler-ms'), 0, 0, 60_000),
    compress: compressOption(str('compress')),
    consumeThreads:
      str('consume-threads') === undefined
        ? undefined
        : intOption('consume-threads', str('consume-threads'), 20, 1, 1000),
    latencyMessages: intOption('latency-messages', str('latency-messages'), 2000, 0, 1_000_000),
    stallTimeoutMs: intOption('stall-timeout', str('stall-timeout'), 60, 1, 3600) * 1000,
    serializeType,
  };
  if (mode === 'pop') opts.mode = 'pop';
  const rounds = intOption('rounds', str('rounds'), 3, 1, 100);
  const processes = intOption('consumers', str('consumers'), 1, 1, 64);
  if (mode === 'lite' && processes > 1)
    throw new UsageError('--mode lite runs one consumer per client (--consumers 1)');
  if (values['consumer-process'] === true && mode !== 'push')
    throw new UsageError(`--consumer-process runs the push consumer, not --mode ${mode}`);
  const unsupported = peers.filter((p) => p !== 'java');
  if (processes > 1 && unsupported.length > 0)
    throw new UsageError(`--consumers ${processes} runs rocketwire and --vs java only, not ${unsupported.join(', ')}`);
  const warmup = intOption('warmup', str('warmup'), 1, 0, 1);

  const progress = new ProgressBar(io.stderr as NodeJS.WritableStream & { isTTY?: boolean });
  return withBenchBroker(str('namesrv'), opts.queues, async (namesrv, brokerLabel, child) => {
    opts.namesrv = namesrv;
    const t0 = performance.now();
    const prog = progress.enabled ? progress : null;
    const produced = await produce(opts, opts.topic, 0, opts.messages, opts.producers, prog, t0);
    if (produced.count === 0) throw new CliError('no message could be produced');
    const expect = produced.count;
    const series: Series[] = [produced.series];
    if (warmup > 0) {
      if (prog) io.stderr.write('warm-up consume (not measured)…\n');
      await consumeRocketwire(
        opts,
        expect,
        prog,
        t0,
        'warm-up',
        Math.min(expect, Math.max(10_000, Math.ceil(expect / 5))),
      );
    }
    const consumers = ['rocketwire', ...peers];
    const rwRounds: ConsumeResult[] = [];
    const peerRounds = new Map<string, PeerResult[]>(peers.map((p) => [p, []]));
    const groupRounds: NonNullable<Report['groupRounds']> = [];
    let group: GroupRun | null = null;
    if (processes > 1 || values['consumer-process'] === true) {
      group = {
        namesrv: opts.namesrv,
        topic: opts.topic,
        expect,
        size: opts.size,
        queues: await topicQueues(opts),
        processes,
        consumeBatch: opts.consumeBatch,
        handlerMs: opts.handlerMs,
        consumeThreads: opts.consumeThreads,
        serializeType: opts.serializeType,
        stallTimeoutMs: opts.stallTimeoutMs,
        t0,
      };
    }
    const noteGroup = (g: GroupResult, round: number) =>
      groupRounds.push({
        name: g.name,
        round,
        msgsPerSec: g.msgsPerSec,
        unique: g.unique,
        duplicates: g.duplicates,
        perProcess: g.perProcess,
        settleMs: g.settleMs,
      });
    for (let round = 0; round < rounds; round++) {
      for (let k = 0; k < consumers.length; k++) {
        const who = consumers[(k + round) % consumers.length]!;
        if (prog) io.stderr.write(`round ${round + 1}/${rounds}: ${who}…\n`);
        if (who === 'rocketwire') {
          let r: ConsumeResult;
          if (group) {
            const g = await consumeRocketwireGroup(group);
            noteGroup(g, round + 1);
            r = { ...g, count: g.received, startupMs: g.startupMs };
          } else
            r =
              mode === 'lite'
                ? await consumeLite(opts, expect, prog, t0)
                : await consumeRocketwire(opts, expect, prog, t0);
          rwRounds.push(r);
          series.push({ ...r.series, name: `${r.series.name} #${round + 1}` });
          if (r.unique < expect) break;
        } else {
          const peerRun: PeerRun = {
            namesrv: opts.namesrv,
            topic: opts.topic,
            expect,
            timeoutMs: Math.max(120_000, opts.stallTimeoutMs * 4),
            t0,
            size: opts.size,
            handlerMs: opts.handlerMs,
            consumeBatch: opts.consumeBatch,
            consumeThreads: opts.consumeThreads,
          };
          let r: PeerResult;
          if (group && who === 'java') {
            const g = await consumeJavaGroup(group);
            noteGroup(g, round + 1);
            r = {
              name: 'java',
              received: g.unique,
              duplicates: g.duplicates,
              seconds: g.seconds,
              msgsPerSec: g.msgsPerSec,
              peakRssMb: g.peakRssMb,
              cpuMs: g.cpuMs,
              complete: g.complete,
              series: g.series,
            };
          } else r = await (Object.hasOwn(LOCAL_PEERS, who) ? LOCAL_PEERS[who]!(opts) : PEERS[who]!)(peerRun);
          peerRounds.get(who)!.push(r);
          series.push({ ...r.series, name: `${r.series.name} #${round + 1}` });
        }
      }
      if (rwRounds.some((r) => r.unique < expect)) break;
    }
    const latency =
      opts.latencyMessages > 0 && rwRounds.every((r) => r.unique === expect)
        ? await measureLatency(opts, `${opts.topic}_latency`)
        : null;
    const brokerPeakRssMb = child ? child.rssMb() : undefined;
    const worst = rwRounds.reduce((a, b) => (b.unique < a.unique ? b : a), rwRounds[0]!);
    const rwMedian = median(rwRounds.map((r) => r.msgsPerSec));
    const peerResults = peers.map((name) => {
      const rs = peerRounds.get(name)!;
      const m = median(rs.map((r) => r.msgsPerSec));
      return {
        name,
        received: Math.min(...rs.map((r) => r.received)),
        seconds: median(rs.map((r) => r.seconds)),
        msgsPerSec: m,
        msgsPerSecRounds: rs.map((r) => r.msgsPerSec),
        peakRssMb: Math.max(...rs.map((r) => r.peakRssMb)),
        cpuMs: median(rs.map((r) => r.cpuMs)),
        complete: rs.length > 0 && rs.every((r) => r.complete),
        ...(group ? { duplicates: Math.max(...rs.map((r) => r.duplicates ?? 0)) } : {}),
        ratio: m > 0 ? rwMedian / m : 0,
        ...(rs.some((r) => r.handlerMeanMs !== undefined)
          ? { handlerMeanMs: median(rs.map((r) => r.handlerMeanMs ?? 0)) }
          : {}),
        ...(rs.some((r) => r.traceBacklog !== undefined)
          ? {
              traceBacklog: Math.max(...rs.map((r) => r.traceBacklog ?? 0)),
              traceDropped: rs.reduce((a, r) => a + (r.traceDropped ?? 0), 0),
            }
          : {}),
      };
    });
    const report: Report = {
      broker: brokerLabel,
      machine: benchMachine(),
      messages: opts.messages,
      size: opts.size,
      queues: opts.queues,
      rounds: rwRounds.length,
      consumers: processes,
      produced: produced.count,
      produceFailed: produced.failed,
      consumed: worst.unique,
      duplicates: Math.max(...rwRounds.map((r) => r.duplicates)),
      produceMsgsPerSec: produced.msgsPerSec,
      produceMBPerSec: produced.mbPerSec,
      consumeMsgsPerSec: rwMedian,
      consumeMBPerSec: median(rwRounds.map((r) => r.mbPerSec)),
      consumeMsgsPerSecRounds: rwRounds.map((r) => r.msgsPerSec),
      ...(rwRounds.some((r) => r.rssMbByTenth)
        ? { rssMbByTenthRounds: rwRounds.map((r) => r.rssMbByTenth ?? []) }
        : {}),
      compress: opts.compress !== false,
      ...(opts.handlerMs > 0 ? { handler: handlerFigures(opts, rwMedian, rwRounds) } : {}),
      consumeSeconds: median(rwRounds.map((r) => r.seconds)),
      consumeStartupMs: median(rwRounds.map((r) => r.startupMs)),
      p50LatencyMs: latency?.p50 ?? 0,
      p99LatencyMs: latency?.p99 ?? 0,
      maxLatencyMs: latency?.max ?? 0,
      latencySamples: latency?.count ?? 0,
      peakRssMb: Math.max(...rwRounds.map((r) => r.peakRssMb)),
      consumeCpuMs: median(rwRounds.map((r) => r.cpuMs)),
      consumeGc: {
        minor: median(rwRounds.map((r) => r.gc.minor)),
        major: median(rwRounds.map((r) => r.gc.major)),
        ms: median(rwRounds.map((r) => r.gc.ms)),
      },
      pulls: median(rwRounds.map((r) => r.pulls)),
      flowControlPauses: worst.flowControlPauses,
      ...(brokerPeakRssMb ? { brokerPeakRssMb } : {}),
      peers: peerResults,
      ...(group ? { groupRounds } : {}),
    };
    const traceRatios = traceRatiosOf(report);
    if (traceRatios) report.traceRatios = traceRatios;
    if (str('chart')) {
      const svg = renderThroughputSvg(
        `rocketwire bench: ${fmt(opts.messages)} × ${opts.size} B (${brokerLabel})`,
        series,
      );
      fs.writeFileSync(str('chart')!, svg);
    }
    io.stdout.write(values.json ? JSON.stringify(report) + '\n' : summary(report));
    const lost = produced.count - worst.unique;
    if (lost > 0) throw new CliError(`${lost} of ${produced.count} produced messages were not consumed`);
    if (produced.failed > 0) throw new CliError(`${produced.failed} sends failed`);
    const incomplete = peerResults.filter((p) => !p.complete);
    if (incomplete.length > 0)
      throw new CliError(`peer ${incomplete.map((p) => p.name).join(', ')} did not receive every message`);
    return 0;
  });
}

/** The options of the consumer bench that --produce-vs has no use for. */
const CONSUMER_ONLY = [
  'vs',
  'consumers',
  'mode',
  'producers',
  'batch',
  'consume-batch',
  'handler-ms',
  'consume-threads',
  'consumer-process',
  'latency-messages',
  'stall-timeout',
  'chart',
];

/** `rocketwire bench --produce-vs PEERS`: the producer comparison (bench/produce-vs.ts) instead of the consumer bench. */
/**
 * The least warm-up of a produce run: 5 000 messages, or 64 MiB of bodies when that is fewer
 * (1 024 of 64 KiB, 64 of 1 MiB), so that large bodies do not warm up for gigabytes.
 */
export function produceWarmupFloor(size: number): number {
  return Math.max(1, Math.min(5000, Math.ceil((64 * 1024 * 1024) / size)));
}

/** Little's law for a consumer whose handler calls each take `ms`. */
interface HandlerFigures {
  ms: number;
  /** rocketwire's handler calls at once (--consume-threads, default 64). */
  threads: number;
  messagesPerCall: number;
  /** threads × messagesPerCall × 1000 ÷ ms. */
  ceilingMsgsPerSec: number;
  /** rocketwire's median rate ÷ that ceiling. */
  ofCeiling: number;
  /**
   * How long rocketwire's waits really took (median of the rounds): Node timers mostly fire late.
   * Absent when rocketwire consumed in child processes, which do not time their waits.
   */
  meanWaitMs?: number;
}

function handlerFigures(opts: BenchOptions, rwMedian: number, rounds: ConsumeResult[]): HandlerFigures {
  const threads = opts.consumeThreads ?? BENCH_CONSUME_THREADS;
  const ceiling = (threads * opts.consumeBatch * 1000) / opts.handlerMs;
  return {
    ms: opts.handlerMs,
    threads,
    messagesPerCall: opts.consumeBatch,
    ceilingMsgsPerSec: ceiling,
    ofCeiling: rwMedian / ceiling,
    ...(rounds.every((r) => r.handlerMeanMs !== undefined)
      ? { meanWaitMs: median(rounds.map((r) => r.handlerMeanMs!)) }
      : {}),
  };
}

/** --compress on|off: whether producers compress bodies over 4 KiB (every producer's default: on). */
function compressOption(v: string | undefined): boolean {
  if (v === undefined || v === 'on') return true;
  if (v === 'off') return false;
  throw new UsageError(`--compress must be on or off, got "${v}"`);
}

async function runProduceVs(values: OptionValues, io: CliIO): Promise<number> {
  const str = (k: string): string | undefined => stringOption(values, k);
  for (const k of CONSUMER_ONLY)
    if (values[k] !== undefined) throw new UsageError(`--${k} belongs to the consumer bench, not to --produce-vs`);
  const peers = parseProducePeers(str('produce-vs')!);
  const modes = parseProduceModes(str('produce-modes') ?? DEFAULT_PRODUCE_MODES);
  const serializeType = (str('serialize-type') ?? 'JSON').toUpperCase();
  if (serializeType !== 'JSON' && serializeType !== 'ROCKETMQ')
    throw new UsageError('--serialize-type must be JSON or ROCKETMQ');
  const topicBase = str('topic') ?? `rocketwire_pbench_${Date.now().toString(36)}`;
  // the longest suffix is "_rocketwire"
  if (!/^[%|a-zA-Z0-9_-]{1,89}$/.test(topicBase))
    throw new UsageError(`--topic "${topicBase}" is not a valid topic name (at most 89 characters with --produce-vs)`);
  const messages = intOption('messages', str('messages'), 100_000, 1, 100_000_000);
  const queues = intOption('queues', str('queues'), 8, 1, 1024);
  const size = intOption('size', str('size'), 1024, 8, 4 * 1024 * 1024);
  const warmup = intOption('warmup', str('warmup'), 1, 0, 1);
  const o = {
    namesrv: '',
    topicBase,
    messages,
    size,
    queues,
    warmup: warmup > 0 ? Math.max(produceWarmupFloor(size), Math.ceil(messages / 5)) : 0,
    rounds: intOption('rounds', str('rounds'), 3, 1, 100),
    serializeType: serializeType as 'JSON' | 'ROCKETMQ',
    timeoutMs: 600_000,
    compress: compressOption(str('compress')),
  };
  const progress = new ProgressBar(io.stderr as NodeJS.WritableStream & { isTTY?: boolean });
  const prog = progress.enabled ? progress : null;
  return withBenchBroker(str('namesrv'), queues, async (namesrv, broker) => {
    o.namesrv = namesrv;
    const { report } = await runProduceComparison(o, peers, modes, broker, prog, (line) => {
      if (prog) io.stderr.write(line + '\n');
    });
    io.stdout.write(values.json ? JSON.stringify(report) + '\n' : produceSummary(report));
    const problems = produceProblems(report);
    if (problems.length > 0) throw new CliError(problems.join('; '));
    return 0;
  });
}

/**
 * Runs `body` against the given name server, or against an embedded broker started in a child
 * process for it (stopped afterwards, and on SIGINT/SIGTERM before the process exits 130).
 */
async function withBenchBroker<T>(
  namesrv: string | undefined,
  queues: number,
  body: (namesrv: string, label: string, child: ChildBroker | null) => Promise<T>,
): Promise<T> {
  let child: ChildBroker | null = null;
  const stopChild = async () => {
    const c = child;
    child = null;
    if (c) await c.stop();
  };
  const onSignal = () => {
    void stopChild().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    if (namesrv) return await body(namesrv, `name server ${namesrv}`, null);
    const c = (child = await startChildBroker(queues));
    return await body(c.namesrv, `embedded (child process, ${c.broker})`, c);
  } finally {
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
    await stopChild();
  }
}

/**
 * A broker this process did not start can still be restarted when the process that started it
 * asks for that by IPC (bench/e2e/real-broker.js): `{ restartBroker: true }` out,
 * `{ brokerRestarted: true, pid }` back.
 */
function parentRestart(): (() => Promise<number | null>) | null {
  const send = process.send?.bind(process);
  if (!send) return null;
  return () =>
    new Promise((resolve, reject) => {
      const onMessage = (m: unknown) => {
        const msg = m as { brokerRestarted?: boolean; pid?: number | null; error?: string };
        if (msg.brokerRestarted !== true) return;
        process.off('message', onMessage);
        if (msg.error) reject(new CliError(`broker restart failed: ${msg.error}`));
        else resolve(msg.pid ?? null);
      };
      process.on('message', onMessage);
      send({ restartBroker: true });
    });
}

/** `rocketwire bench --curve queues|topics` (bench/harness/curve.ts). */
async function runCurveCommand(str: (k: string) => string | undefined, json: boolean, io: CliIO): Promise<number> {
  const axis = str('curve');
  if (axis === 'size') return runSizeCurveCommand(str, json, io);
  if (axis !== 'queues' && axis !== 'topics')
    throw new UsageError(`--curve takes queues, topics, size or members, got "${axis}"`);
  const points = (str('points') ?? (axis === 'queues' ? '8,64,256,1024' : '1,16,64,256'))
    .split(',')
    .map((p) => intOption('points', p.trim(), 1, 1, axis === 'queues' ? 1024 : 1024));
  const vs = (str('vs') ?? '').split(',').filter(Boolean);
  if (vs.some((p) => p !== 'java')) throw new UsageError('--curve compares with --vs java only');
  const messages = intOption('messages', str('messages'), 50_000, 1, 10_000_000);
  const size = intOption('size', str('size'), 1024, 8, 4 * 1024 * 1024);
  const maxQueues = axis === 'queues' ? Math.max(...points) : TOPIC_CURVE_QUEUES;
  return withBenchBroker(str('namesrv'), maxQueues, async (namesrv, label) => {
    const result = await runCurve({
      namesrv,
      axis,
      points,
      messages,
      size,
      java: vs.includes('java'),
      prefix: `rw_curve_${Date.now().toString(36)}`,
      log: (line) => io.stderr.write(line + '\n'),
    });
    const chart = str('chart');
    if (chart) fs.writeFileSync(chart, curveSvg(axis, result, `consume throughput by ${axis}, broker ${label}`));
    io.stdout.write(
      json
        ? JSON.stringify({ axis, broker: label, machine: benchMachine(), points: result }) + '\n'
        : curveTable(axis, result),
    );
    const short = result.filter((p) => !p.rocketwire.complete || (p.java && !p.java.complete));
    if (short.length > 0) throw new CliError(`points not consumed completely: ${short.map((p) => p.x).join(', ')}`);
    return 0;
  });
}

/** `rocketwire bench --curve size` (bench/harness/curve-size.ts). */
async function runSizeCurveCommand(str: (k: string) => string | undefined, json: boolean, io: CliIO): Promise<number> {
  const points = (str('points') ?? DEFAULT_SIZE_POINTS.join(','))
    .split(',')
    .map((p) => intOption('points', p.trim(), 1024, 8, 4 * 1024 * 1024));
  const vs = (str('vs') ?? '').split(',').filter(Boolean);
  if (vs.some((p) => p !== 'java')) throw new UsageError('--curve compares with --vs java only');
  const mib = intOption('point-mib', str('point-mib'), SIZE_RULE.mib, 1, 4096);
  const range = (str('point-messages') ?? `${SIZE_RULE.minMessages},${SIZE_RULE.maxMessages}`).split(',');
  if (range.length !== 2) throw new UsageError('--point-messages takes MIN,MAX');
  const minMessages = intOption('point-messages', range[0]!.trim(), SIZE_RULE.minMessages, 1, 10_000_000);
  const maxMessages = intOption('point-messages', range[1]!.trim(), SIZE_RULE.maxMessages, minMessages, 10_000_000);
  const compress = compressOption(str('compress'));
  return withBenchBroker(str('namesrv'), SIZE_CURVE_QUEUES, async (namesrv, label) => {
    const result = await runSizeCurve({
      namesrv,
      points,
      compress,
      java: vs.includes('java'),
      mib,
      minMessages,
      maxMessages,
      capMib: Math.max(mib, SIZE_RULE.capMib),
      prefix: `rw_curve_${Date.now().toString(36)}`,
      log: (line) => io.stderr.write(line + '\n'),
    });
    const chart = str('chart');
    const how = compress ? 'compressed over 4 KiB' : 'uncompressed';
    if (chart) fs.writeFileSync(chart, sizeSvg(result, `consume MB/s by body size (${how}), broker ${label}`));
    io.stdout.write(
      json
        ? JSON.stringify({
            axis: 'size',
            broker: label,
            compress,
            machine: benchMachine(),
            points: result,
            targets: sizeTargets(result),
          }) + '\n'
        : sizeTable(result),
    );
    const short = result.filter((p) => !p.rocketwire.complete || (p.java && !p.java.complete));
    if (short.length > 0) throw new CliError(`points not consumed completely: ${short.map((p) => p.size).join(', ')}`);
    return 0;
  });
}

/** Every queue of the topic as "brokerName:queueId", as the route lists them (what a group splits). */
async function topicQueues(opts: BenchOptions): Promise<string[]> {
  const producer = new Producer({
    group: 'rocketwire_bench_route',
    namesrvAddr: opts.namesrv,
    serializeType: opts.serializeType,
  });
  await producer.start();
  try {
    return (await producer.fetchPublishMessageQueues(opts.topic)).map((q) => `${q.brokerName}:${q.queueId}`).sort();
  } finally {
    await producer.shutdown();
  }
}

export const command: CliCommand = {
  summary:
    'measure produce and consume throughput, latency and memory (optionally against java, ali-ons and the pull floors; --produce-vs compares producers)',
  usage,
  run,
};
