// The timer attack. A broker in a child process; one client pipelines `timers` timer
// sends with descending delivery times (each new one falls due before all the earlier ones, the worst
// case of a sorted array), while a victim client sends one plain message at a time. Reported: the
// victim's round trips during an idle baseline and during the attack (max, p99), the broker's own
// event-loop delay, and the broker's RSS per pending timer (after GC, before and after the sends).
//
//   node dist/bench/hostile/timer-attack.js [--timers 1000000] [--window 2000] [--max-in-memory N] [--runs 1] [--kinds plain,timer]
//   node dist/bench/hostile/timer-attack.js --burst [--timers 1000000] [--deliver-per-tick N] [--runs 1]
//
// 'plain' is the baseline of the same run: the same pipelined sends without a delivery time, so
// what the timer store adds to the stall and to RSS is the difference of the two.
//
// --burst: `timers` timers parked, the broker stopped, its clock moved past them, and started
// again: the start-up pass reads them back and all fall due at once; reported is the broker's
// event-loop delay while they drain (runTimerBurst).
//
// Exported as runTimerAttack(opts) and runTimerBurst(opts) for the bench/hostile runner. Prints JSON.
import { spawn, type ChildProcess } from 'node:child_process';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { RequestCode, createRequest, type RemotingCommand } from '../../protocol/index.js';
import { RemotingClient } from '../../lib/remoting/index.js';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startBroker } from '../../lib/broker/index.js';
import { systemClock, type Clock } from '../../lib/clock.js';
import { TIMER_TOPIC, resolveTimerSettings, transformTimerMessage } from '../../lib/broker/timer/index.js';
import type { MessageInner } from '../../lib/broker/message-record.js';

export interface TimerAttackOptions {
  /** Timer messages sent (default 1 000 000). */
  timers?: number;
  /** Sends in flight at once on the attacker's connection (default 2000). */
  window?: number;
  /** The broker's timerMaxInMemory (default: the broker's default). */
  maxInMemory?: number;
  /** Idle-baseline length in ms (default 2000). */
  baselineMs?: number;
  /** Victim sends one message every this many ms (default 5). */
  victimEveryMs?: number;
  /** 'plain': the same sends without a delivery time, the baseline of the same run (default 'timer'). */
  kind?: 'timer' | 'plain';
}

export interface LatencySummary {
  count: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

export interface TimerAttackResult {
  kind: 'timer' | 'plain';
  timers: number;
  window: number;
  sendSeconds: number;
  baseline: LatencySummary;
  attack: LatencySummary;
  /** The broker's own event-loop delay while the sends were stored. */
  brokerLoopDelayMaxMs: number;
  rssBeforeMb: number;
  rssAfterMb: number;
  rssPerTimerBytes: number;
  /** JS heap and Buffer bytes after GC, per timer (what is live, without the allocator's slack). */
  heapPerTimerBytes: number;
  arrayBuffersPerTimerBytes: number;
  /** The store's counts after the sends (absent on a broker without stats()). */
  timerStats: Record<string, number> | null;
}

const P1 = '\u0001';
const P2 = '\u0002';
let uniq = 0;

function send(topic: string, properties: Record<string, string>): RemotingCommand {
  const p = { UNIQ_KEY: `7F00000100000000000000${String(++uniq).padStart(10, '0')}`, WAIT: 'true', ...properties };
  const ext: Record<string, string> = {
    a: 'bench_pg',
    b: topic,
    c: 'TBW102',
    d: '4',
    e: '0',
    f: '0',
    g: String(Date.now()),
    h: '0',
    i: Object.entries(p)
      .map(([k, v]) => k + P1 + v)
      .join(P2),
    j: '0',
    k: 'false',
    m: 'false',
    n: 'broker-a',
  };
  return createRequest(RequestCode.SEND_MESSAGE_V2, {
    extFields: ext,
    body: Buffer.from('timer-attack-body-0123456789'),
    serializeType: 'JSON',
  });
}

function summary(xs: number[]): LatencySummary {
  const s = [...xs].sort((a, b) => a - b);
  const at = (q: number): number => (s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))]! : 0);
  return { count: s.length, p50Ms: round(at(0.5)), p99Ms: round(at(0.99)), maxMs: round(s[s.length - 1] ?? 0) };
}

function round(x: number): number {
  return Math.round(x * 100) / 100;
}

/** The child: a broker, answering "stats" lines on stdin with its RSS (after GC) and loop delay. */
async function serve(maxInMemory: number | undefined): Promise<void> {
  const eb = await startBroker({
    namesrvPort: 0,
    brokerPort: 0,
    ...(maxInMemory ? { timerMaxInMemory: maxInMemory } : {}),
  });
  const h = monitorEventLoopDelay({ resolution: 5 });
  h.enable();
  const out = (o: unknown): void => void process.stdout.write(JSON.stringify(o) + '\n');
  out({ event: 'ready', broker: eb.broker });
  for await (const line of createInterface({ input: process.stdin })) {
    if (line === 'reset') {
      h.reset();
      out({ ok: true });
    } else if (line === 'stats') {
      (globalThis as { gc?: () => void }).gc?.();
      const b = eb.instances[0] as unknown as { timers?: { stats(): Record<string, number> } | null };
      const m = process.memoryUsage();
      out({
        rss: m.rss,
        heapUsed: m.heapUsed,
        arrayBuffers: m.arrayBuffers,
        loopMaxMs: h.max / 1e6,
        timerStats: b.timers?.stats?.() ?? null,
      });
    } else if (line === 'exit') break;
  }
  await eb.close();
  process.exit(0);
}

class Child {
  private readonly lines: AsyncIterator<string>;
  constructor(readonly proc: ChildProcess) {
    this.lines = createInterface({ input: proc.stdout! })[Symbol.asyncIterator]();
  }
  async next(): Promise<Record<string, unknown>> {
    const r = await this.lines.next();
    if (r.done) throw new Error('broker child exited');
    return JSON.parse(r.value) as Record<string, unknown>;
  }
  async ask(cmd: string): Promise<Record<string, unknown>> {
    this.proc.stdin!.write(cmd + '\n');
    return this.next();
  }
}

export async function runTimerAttack(opts: TimerAttackOptions = {}): Promise<TimerAttackResult> {
  const timers = opts.timers ?? 1_000_000;
  const window = opts.window ?? 2000;
  const baselineMs = opts.baselineMs ?? 2000;
  const every = opts.victimEveryMs ?? 5;
  const kind = opts.kind ?? 'timer';
  const args = [
    '--expose-gc',
    fileURLToPath(import.meta.url),
    '--serve',
    ...(opts.maxInMemory ? ['--max-in-memory', String(opts.maxInMemory)] : []),
  ];
  const proc = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'inherit'] });
  const child = new Child(proc);
  try {
    const ready = await child.next();
    const addr = String(ready.broker);
    const victim = new RemotingClient({ serializeType: 'JSON', defaultTimeoutMs: 60_000 });
    const attacker = new RemotingClient({ serializeType: 'JSON', defaultTimeoutMs: 600_000 });
    // warm both connections and create the topics
    await victim.invoke(addr, send('VictimTopic', {}));
    await attacker.invoke(addr, send('TimerAttack', {}));
    const before = await child.ask('stats');

    let stop = false;
    let sink: number[] = [];
    const victimLoop = (async (): Promise<void> => {
      while (!stop) {
        const t0 = performance.now();
        await victim.invoke(addr, send('VictimTopic', {}));
        sink.push(performance.now() - t0);
        await new Promise((r) => setTimeout(r, every));
      }
    })();
    await new Promise((r) => setTimeout(r, baselineMs));
    const baseline = sink;
    sink = [];
    await child.ask('reset');

    const far = Date.now() + 3 * 86_400_000 - 60_000;
    const t0 = performance.now();
    let next = 0;
    let failed = 0;
    const worker = async (): Promise<void> => {
      while (next < timers) {
        const i = next++;
        const r = await attacker.invoke(
          addr,
          send('TimerAttack', kind === 'timer' ? { TIMER_DELIVER_MS: String(far - i) } : {}),
        );
        if (r.code !== 0) failed++;
      }
    };
    await Promise.all(Array.from({ length: window }, worker));
    const sendSeconds = (performance.now() - t0) / 1000;
    stop = true;
    await victimLoop;
    const attack = sink;
    const after = await child.ask('stats');
    await victim.close();
    await attacker.close();
    if (failed) process.stderr.write(`${failed} timer sends were refused\n`);
    const rssBefore = Number(before.rss);
    const rssAfter = Number(after.rss);
    return {
      kind,
      timers,
      window,
      sendSeconds: round(sendSeconds),
      baseline: summary(baseline),
      attack: summary(attack),
      brokerLoopDelayMaxMs: round(Number(after.loopMaxMs)),
      rssBeforeMb: round(rssBefore / 2 ** 20),
      rssAfterMb: round(rssAfter / 2 ** 20),
      rssPerTimerBytes: Math.round((rssAfter - rssBefore) / timers),
      heapPerTimerBytes: Math.round((Number(after.heapUsed) - Number(before.heapUsed)) / timers),
      arrayBuffersPerTimerBytes: Math.round((Number(after.arrayBuffers) - Number(before.arrayBuffers)) / timers),
      timerStats: (after.timerStats as Record<string, number> | null) ?? null,
    };
  } finally {
    proc.stdin!.write('exit\n');
    await new Promise((r) => proc.once('exit', r));
  }
}

export interface TimerBurstResult {
  timers: number;
  deliverPerTick: number | null;
  /** Time from start to every timer delivered. */
  drainMs: number;
  loopDelayMaxMs: number;
  loopDelayP99Ms: number;
  heldPeak: number;
  scans: number;
  deliveredPerTickPeak: number;
}

/** Park `timers` timers, restart the broker past their time, and measure the loop while they drain. */
export async function runTimerBurst(
  opts: { timers?: number; deliverPerTick?: number } = {},
): Promise<TimerBurstResult> {
  const n = opts.timers ?? 1_000_000;
  let skew = 0;
  const clock: Clock = {
    now: () => Date.now() + skew,
    setTimeout: (f, ms) => systemClock.setTimeout(f, ms),
    clearTimeout: (t) => systemClock.clearTimeout(t),
  };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'timer-burst-'));
  const tuning = {
    clock,
    namesrvPort: 0,
    brokerPort: 0,
    dataDir: dir,
    ...(opts.deliverPerTick ? { timerDeliverPerTick: opts.deliverPerTick } : {}),
  };
  try {
    let eb = await startBroker(tuning);
    const now = clock.now();
    const due = now + 3_600_000;
    const settings = resolveTimerSettings({});
    for (let i = 0; i < n; i++) {
      const m: MessageInner = {
        topic: 'TimerBurst',
        queueId: 0,
        flag: 0,
        sysFlag: 0,
        bornTimestamp: now,
        bornHost: '127.0.0.1:1',
        reconsumeTimes: 0,
        preparedTransactionOffset: 0,
        body: Buffer.from('timer-attack-body-0123456789'),
        // a thousand descending times, over and over
        properties: { UNIQ_KEY: `B${i}`, TIMER_DELIVER_MS: String(due - (i % 1000)) },
      };
      transformTimerMessage(m, settings, now);
      if (m.topic !== TIMER_TOPIC) throw new Error('not parked');
      eb.instances[0]!.messageStore.putMessages([m]);
    }
    await eb.close();
    skew = 3_700_000;
    eb = await startBroker(tuning);
    const h = monitorEventLoopDelay({ resolution: 2 });
    h.enable();
    const t0 = performance.now();
    const b = eb.instances[0]!;
    while (b.timers!.stats().pending > 0 || b.messageStore.getMaxOffset('TimerBurst', 0) < n)
      await new Promise((r) => setTimeout(r, 50));
    const drainMs = performance.now() - t0;
    h.disable();
    const s = b.timers!.stats();
    await eb.close();
    return {
      timers: n,
      deliverPerTick: opts.deliverPerTick ?? null,
      drainMs: Math.round(drainMs),
      loopDelayMaxMs: round(h.max / 1e6),
      loopDelayP99Ms: round(h.percentile(99) / 1e6),
      heldPeak: s.heldPeak,
      scans: s.scans,
      deliveredPerTickPeak: s.deliveredPerTickPeak,
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function arg(argv: string[], name: string): string | undefined {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
}

async function main(argv: string[]): Promise<void> {
  const max = arg(argv, '--max-in-memory');
  if (argv.includes('--serve')) return serve(max ? Number(max) : undefined);
  const runs = Number(arg(argv, '--runs') ?? '1');
  if (argv.includes('--burst')) {
    const per = arg(argv, '--deliver-per-tick');
    const out: TimerBurstResult[] = [];
    for (let r = 0; r < runs; r++)
      out.push(
        await runTimerBurst({
          timers: Number(arg(argv, '--timers') ?? '1000000'),
          ...(per ? { deliverPerTick: Number(per) } : {}),
        }),
      );
    process.stdout.write(JSON.stringify(out, null, 2) + '\n');
    return;
  }
  const kinds = (arg(argv, '--kinds') ?? 'plain,timer').split(',') as Array<'timer' | 'plain'>;
  const results: TimerAttackResult[] = [];
  for (let r = 0; r < runs; r++) {
    for (const kind of kinds) {
      results.push(
        await runTimerAttack({
          kind,
          timers: Number(arg(argv, '--timers') ?? '1000000'),
          window: Number(arg(argv, '--window') ?? '2000'),
          ...(max ? { maxInMemory: Number(max) } : {}),
        }),
      );
    }
  }
  process.stdout.write(JSON.stringify(results, null, 2) + '\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).catch((err) => {
    process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  });
}
