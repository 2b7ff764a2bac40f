/**
 * `rocketwire bench --latency`: latency under a steady load, rocketwire beside Java and beside the
 * floor, every party running at once on one broker.
 *
 * Processes: an open-loop producer (rocketwire's, in a child; Java's DefaultMQProducer in a JVM, in
 * turn), and three consumers of the same topic, each with a group of its own: rocketwire's
 * PushConsumer (a child), Java's DefaultMQPushConsumer (a JVM) and the floor (raw long polls,
 * latency-floor.ts). Each message carries its scheduled send time in µs; every consumer records
 * scheduled send → handler and broker store time → handler per phase (latency-child.ts).
 *
 * Steps: a warm-up at 1 000 msgs/s while the consumers start (start() → first message handled);
 * the highest rate every party sustains (--max-rate, or found by doubling from 2 000 msgs/s and
 * bisecting twice: sustained = every message acknowledged and handled by every consumer within a
 * second of the phase's end, and every p99 under 50 ms); then at each --rates percentage of it, a
 * phase driven by rocketwire's producer and one by Java's. Each row has each process's CPU (from
 * /proc), and for Node processes the event-loop utilisation and GC pauses (perf_hooks), for JVMs
 * the GC time (GarbageCollectorMXBean).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { benchMachine, cpuMs } from './proc-stats.js';
import { joinPhase, restartPhase, type EventContext, type JoinRow, type RestartRow } from './latency-event-phases.js';
import { javaProc, nodeProc, type Line, type Proc } from './latency-procs.js';
import type { Percentiles } from './latency-record.js';
import { CliError, UsageError, intOption, stringOption, type CliIO, type OptionValues } from '../../lib/cli/common.js';

export const LATENCY_USAGE = `Latency under load (--latency; consumer-bench options other than these are ignored):
  --latency             open-loop producer at fixed rates; rocketwire's push consumer, Java's and the
                        floor (raw long polls) consume the same messages at once; scheduled send →
                        handler percentiles, sync send → acknowledged for rocketwire's and Java's
                        producer, start() → first message, CPU, event-loop utilisation, GC
  --max-rate N          the highest sustained rate (default: found by a search, 3 s a step)
  --rates LIST          percentages of it to measure (default 10,50,80)
  --phase-seconds S     length of each measured phase (default 10)
  --no-java             leave out the JVMs (Java's consumer and producer)
  --join                after the rates, a phase in which a second rocketwire consumer joins
                        rocketwire's group a third of the way in, then one in which a second Java
                        consumer joins Java's: latency before the join, from the join to convergence,
                        and after; convergence time, duplicates
  --restart             after those, a phase in which the broker stops and starts again on the same
                        ports and store a third of the way in: each consumer's longest gap, latency
                        over the phase, acknowledged messages not handled, duplicates
  --event-rate PCT      the rate of those phases, % of the highest sustained rate (default 50)
  --join-seconds S      length of a join phase (default 15)
  --restart-seconds S   length of the restart phase (default 60)
  --rates none          no rate phases (only the start-up and the event phases)
  --cpu-prof DIR        run rocketwire's consumer child under node --cpu-prof, profiles written to DIR
  --node-args=ARGS      more node options for rocketwire's consumer child, joined by "=" since they start with "-" (e.g. --node-args=--trace-gc)
  --child-log FILE      append the children's lines that are not the bench's JSON (node's --trace-gc
                        output) to FILE, each with its process name and the bench's clock in ms, and
                        the bench's phase boundaries on that clock
`;

interface Figures {
  count: number;
  send: Percentiles;
  store: Percentiles;
  cpuPct: number;
  elu?: number;
  gcCount: number;
  gcMs: number;
  /** Node processes: mark-compacts and the longest pause of the phase. */
  gcMajor?: number;
  gcMaxMs?: number;
}

interface PhaseRow {
  phase: number;
  producer: 'rocketwire' | 'java';
  rate: number;
  pctOfMax: number;
  seconds: number;
  scheduled: number;
  acked: number;
  failed: number;
  /** Scheduled send → acknowledged; send() called → acknowledged; scheduled → send() called. */
  ack: Percentiles;
  call: Percentiles;
  lag: Percentiles;
  producerCpuPct: number;
  producerElu?: number;
  producerGcMs: number;
  brokerCpuPct?: number;
  consumers: Record<string, Figures>;
}

const CONSUMERS = ['rocketwire', 'java', 'floor'] as const;

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

export async function runLatency(
  values: OptionValues,
  io: CliIO,
  withBroker: <T>(
    namesrv: string | undefined,
    queues: number,
    body: (
      namesrv: string,
      label: string,
      brokerPid: number | null,
      restartBroker: (() => Promise<number | null>) | null,
    ) => Promise<T>,
  ) => Promise<T>,
): Promise<number> {
  const str = (k: string): string | undefined => stringOption(values, k);
  const size = intOption('size', str('size'), 1024, 16, 4 * 1024 * 1024);
  const queues = intOption('queues', str('queues'), 8, 1, 1024);
  const phaseMs = intOption('phase-seconds', str('phase-seconds'), 10, 1, 600) * 1000;
  const givenMax = str('max-rate') === undefined ? null : intOption('max-rate', str('max-rate'), 0, 1, 1_000_000);
  const ratesArg = str('rates') ?? '10,50,80';
  const rates = (ratesArg === 'none' ? [] : ratesArg.split(',')).map((s) => {
    const n = Number(s.trim());
    if (!(n > 0 && n <= 200)) throw new UsageError(`--rates takes percentages (1-200), got "${s}"`);
    return n;
  });
  const withJava = values['no-java'] !== true;
  const join = values.join === true;
  const restart = values.restart === true;
  const eventPct = intOption('event-rate', str('event-rate'), 50, 1, 200);
  const joinMs = intOption('join-seconds', str('join-seconds'), 15, 3, 600) * 1000;
  const restartMs = intOption('restart-seconds', str('restart-seconds'), 60, 3, 600) * 1000;
  const brokerPidOpt = str('broker-pid') === undefined ? null : intOption('broker-pid', str('broker-pid'), 0, 1);
  const prof = str('cpu-prof');
  const extraNodeArgs = (str('node-args') ?? '').split(' ').filter(Boolean);
  const childLog = str('child-log');
  const mark = (what: string): void => {
    if (childLog) fs.appendFileSync(childLog, `bench ${performance.now().toFixed(0)} ${what}\n`);
  };
  const topic = str('topic') ?? `rocketwire_latency_${Date.now().toString(36)}`;
  const log = (s: string) => io.stderr.write(s + '\n');

  return withBroker(str('namesrv'), queues, async (namesrv, label, childBrokerPid, restartBroker) => {
    let brokerPid = childBrokerPid ?? brokerPidOpt;
    const procs: Proc[] = [];
    const stamp = Date.now().toString(36);
    try {
      const producer = nodeProc('producer (rocketwire)', 'producer', [namesrv, topic, String(size), String(queues)]);
      procs.push(producer);
      await producer.next('ready', 60_000);
      const consumers = new Map<string, Proc>();
      const groups = new Map<string, string>();
      // The consumers start one at a time (the machine otherwise quiet but for the broker and a
      // warm-up load of 1 000 msgs/s): start() → first message handled, each with its own warm-up.
      const startup: Record<string, number> = {};
      for (const name of ['floor', 'rocketwire', 'java'] as const) {
        if (name === 'java' && !withJava) continue;
        const group = `latency_${name}_${stamp}`;
        groups.set(name, group);
        producer.send('run 1 1000 4000');
        const p =
          name === 'java'
            ? javaProc('java', 'consume', ['--namesrv', namesrv, '--topic', topic, '--group', group])
            : nodeProc(
                name,
                name,
                [namesrv, topic, group],
                name === 'rocketwire'
                  ? [...(prof ? ['--cpu-prof', '--cpu-prof-dir', prof] : []), ...extraNodeArgs]
                  : [],
                childLog,
              );
        consumers.set(name, p);
        procs.push(p);
        startup[name] = (await p.next('first', 60_000)).startupMs as number;
        await producer.next('phase', 60_000, (l) => l.phase === 1);
      }
      const jprod = withJava
        ? javaProc('producer (java)', 'produce', ['--namesrv', namesrv, '--topic', topic, '--size', String(size)])
        : null;
      if (jprod) {
        procs.push(jprod);
        await jprod.next('ready', 60_000);
        jprod.send('run 2 1000 4000');
        await jprod.next('phase', 60_000, (l) => l.phase === 2);
      }
      log(
        `start() → first message: ${Object.entries(startup)
          .map(([k, v]) => `${k} ${v.toFixed(0)} ms`)
          .join(', ')}`,
      );

      const runPhase = async (phase: number, who: 'rocketwire' | 'java', rate: number, ms: number) => {
        const prod = who === 'java' ? jprod! : producer;
        const all = [producer, ...(jprod ? [jprod] : []), ...consumers.values()];
        const cpu0 = new Map(all.map((p) => [p, p.cpuMs()]));
        const broker0 = brokerPid ? cpuMs(brokerPid) : 0;
        for (const c of consumers.values()) c.send(`begin ${phase}`);
        mark(`phase ${phase} begins: ${who}'s producer, ${rate} msgs/s for ${ms} ms`);
        const t0 = performance.now();
        prod.send(`run ${phase} ${rate} ${ms}`);
        const pr = await prod.next('phase', ms + 120_000, (l) => l.phase === phase);
        const acked = pr.acked as number;
        // Every consumer has handled what was acknowledged (or a second passed).
        const deadline = performance.now() + 1000;
        let caughtUp = false;
        while (!caughtUp) {
          const counts = await Promise.all([...consumers.values()].map((c) => c.ask('count', phase)));
          caughtUp = counts.every((l) => (l.count as number) >= acked);
          if (!caughtUp && performance.now() > deadline) break;
          if (!caughtUp) await sleep(50);
        }
        const wall = performance.now() - t0;
        mark(`phase ${phase} ends${caughtUp ? '' : ' (not caught up)'}`);
        const pct = (p: Proc) => ((p.cpuMs() - cpu0.get(p)!) / wall) * 100;
        const figures: Record<string, Figures> = {};
        for (const [name, c] of consumers) {
          const l = await c.ask('end', phase);
          figures[name] = {
            count: l.count as number,
            send: l.send as Percentiles,
            store: l.store as Percentiles,
            cpuPct: pct(c),
            ...(typeof l.elu === 'number' ? { elu: l.elu } : {}),
            gcCount: l.gcCount as number,
            gcMs: l.gcMs as number,
            ...(typeof l.gcMaxMs === 'number' ? { gcMajor: l.gcMajor as number, gcMaxMs: l.gcMaxMs } : {}),
          };
        }
        const row: PhaseRow = {
          phase,
          producer: who,
          rate,
          pctOfMax: 0,
          seconds: ms / 1000,
          scheduled: pr.scheduled as number,
          acked,
          failed: pr.failed as number,
          ack: pr.ack as Percentiles,
          call: pr.call as Percentiles,
          lag: pr.lag as Percentiles,
          producerCpuPct: pct(prod),
          ...(typeof pr.elu === 'number' ? { producerElu: pr.elu } : {}),
          producerGcMs: pr.gcMs as number,
          ...(brokerPid ? { brokerCpuPct: ((cpuMs(brokerPid) - broker0) / wall) * 100 } : {}),
          consumers: figures,
        };
        return { row, caughtUp };
      };

      /** Waits until every consumer handled every message of `phase` (after an overloaded one). */
      const drain = async (phase: number, acked: number) => {
        const until = performance.now() + 60_000;
        for (;;) {
          const counts = await Promise.all([...consumers.values()].map((c) => c.ask('count', phase)));
          if (counts.every((l) => (l.count as number) >= acked) || performance.now() > until) return;
          await sleep(200);
        }
      };

      let phaseId = 10;
      const search: Array<{ rate: number; sustained: boolean; worstP99: number }> = [];
      let max = givenMax;
      if (max === null) {
        const tryRate = async (rate: number): Promise<boolean> => {
          const { row, caughtUp } = await runPhase(phaseId, 'rocketwire', rate, 3000);
          const worstP99 = Math.max(row.ack.p99, ...Object.values(row.consumers).map((f) => f.send.p99));
          const ok = caughtUp && row.failed === 0 && row.acked === row.scheduled && worstP99 < 50;
          search.push({ rate, sustained: ok, worstP99 });
          log(`search: ${rate} msgs/s ${ok ? 'sustained' : 'not sustained'} (worst p99 ${worstP99.toFixed(1)} ms)`);
          if (!caughtUp) await drain(phaseId, row.acked);
          phaseId++;
          return ok;
        };
        let good = 0;
        let bad = 0;
        for (let rate = 2000; rate <= 256_000; rate *= 2) {
          if (await tryRate(rate)) good = rate;
          else {
            bad = rate;
            break;
          }
        }
        if (good === 0) throw new CliError('not even 2000 msgs/s were sustained: the machine is too loaded');
        for (let k = 0; k < 2 && bad > 0; k++) {
          const mid = Math.round((good + bad) / 2 / 100) * 100;
          if (await tryRate(mid)) good = mid;
          else bad = mid;
        }
        max = good;
      }
      log(`highest sustained rate: ${max} msgs/s`);

      const rows: PhaseRow[] = [];
      phaseId = 100;
      for (const [k, pct] of rates.entries()) {
        const rate = Math.max(1, Math.round((max * pct) / 100));
        // Which producer goes first alternates from rate to rate: a load burst from outside the
        // bench then does not always fall on the same one.
        const order = k % 2 === 0 ? (['rocketwire', 'java'] as const) : (['java', 'rocketwire'] as const);
        for (const who of jprod ? order : (['rocketwire'] as const)) {
          const { row, caughtUp } = await runPhase(phaseId, who, rate, phaseMs);
          row.pctOfMax = pct;
          rows.push(row);
          log(`${pct} % (${rate} msgs/s), ${who}'s producer: ${brief(row)}`);
          if (!caughtUp) await drain(phaseId, row.acked);
          phaseId++;
        }
      }
      const eventRate = Math.max(1, Math.round((max * eventPct) / 100));
      const ctx: EventContext = {
        producer,
        consumers,
        spawnMember: (name) => {
          const group = groups.get(name)!;
          const p =
            name === 'java'
              ? javaProc('java (joining)', 'consume', [
                  '--namesrv',
                  namesrv,
                  '--topic',
                  topic,
                  '--group',
                  group,
                  '--wait',
                  'true',
                ])
              : nodeProc(
                  'rocketwire (joining)',
                  'rocketwire',
                  [namesrv, topic, group, 'wait'],
                  extraNodeArgs,
                  childLog,
                );
          procs.push(p);
          return p;
        },
        restartBroker: restartBroker
          ? async () => {
              brokerPid = (await restartBroker()) ?? brokerPid;
            }
          : null,
        dir: fs.mkdtempSync(path.join(os.tmpdir(), 'rocketwire-latency-')),
        log,
        mark,
      };
      const joins: JoinRow[] = [];
      let restartRow: RestartRow | null = null;
      try {
        if (join) {
          for (const who of withJava ? (['rocketwire', 'java'] as const) : (['rocketwire'] as const)) {
            const row = await joinPhase(ctx, phaseId++, who, eventRate, joinMs);
            joins.push(row);
            log(`a ${who} member joined at ${eventRate} msgs/s: ${briefJoin(row)}`);
          }
        }
        if (restart) {
          restartRow = await restartPhase(ctx, phaseId++, eventRate, restartMs);
          log(`broker restart at ${eventRate} msgs/s: ${briefRestart(restartRow)}`);
        }
      } finally {
        fs.rmSync(ctx.dir, { recursive: true, force: true });
      }
      const report = {
        latency: true,
        broker: label,
        machine: benchMachine(),
        topic,
        size,
        queues,
        maxRate: max,
        search,
        startupMs: startup,
        rows,
        targets: targets(rows),
        ...(join ? { joins } : {}),
        ...(restartRow ? { restart: restartRow } : {}),
      };
      io.stdout.write(values.json ? JSON.stringify(report) + '\n' : latencySummary(report));
      return 0;
    } finally {
      await Promise.all(procs.map((p) => p.stop()));
    }
  });
}

const f1 = (n: number | undefined) => (n === undefined ? 'n/a' : n < 10 ? n.toFixed(2) : n.toFixed(1));

function brief(r: PhaseRow): string {
  return CONSUMERS.filter((c) => r.consumers[c])
    .map(
      (c) =>
        `${c} p50/p99/p99.9 ${f1(r.consumers[c]!.send.p50)}/${f1(r.consumers[c]!.send.p99)}/${f1(r.consumers[c]!.send.p999)}`,
    )
    .join('; ');
}

const pp = (p: Percentiles) => `${f1(p.p50)}/${f1(p.p99)}/${f1(p.p999)}/${f1(p.max)} (${p.count})`;

function briefJoin(r: JoinRow): string {
  const c = r.consumers[r.joined]!;
  return (
    `converged in ${r.convergedMs === null ? 'n/a (no queue moved)' : `${r.convergedMs.toFixed(0)} ms`}, ${r.movedQueues} queues moved, ` +
    `${r.duplicates} duplicates; ${r.joined} p50/p99/p99.9/max before ${pp(c.before)}, converging ${pp(c.converging)}, after ${pp(c.after)}`
  );
}

function briefRestart(r: RestartRow): string {
  return (
    `down ${r.restartMs.toFixed(0)} ms, ${r.failed} sends failed; ` +
    Object.entries(r.consumers)
      .map(
        ([k, c]) =>
          `${k} gap ${c.gapMs.toFixed(0)} ms, p99 ${f1(c.all.p99)}, lost ${c.lost}, duplicates ${c.duplicates}`,
      )
      .join('; ')
  );
}

interface TargetCheck {
  phase: number;
  rate: number;
  producer: string;
  p99VsFloor: number;
  p999VsFloor: number;
  p50OverFloorMs: number;
  p999VsJava?: number;
  met: boolean;
}

/** The issue's targets per row: p99, p99.9 ≤ 2× the floor's; p50 ≤ floor's + 0.3 ms; p99.9 ≤ Java's. */
function targets(rows: PhaseRow[]): TargetCheck[] {
  return rows.map((r) => {
    const rw = r.consumers.rocketwire!.send;
    const fl = r.consumers.floor!.send;
    const java = r.consumers.java?.send;
    const c: TargetCheck = {
      phase: r.phase,
      rate: r.rate,
      producer: r.producer,
      p99VsFloor: rw.p99 / fl.p99,
      p999VsFloor: rw.p999 / fl.p999,
      p50OverFloorMs: rw.p50 - fl.p50,
      ...(java ? { p999VsJava: rw.p999 / java.p999 } : {}),
      met: false,
    };
    c.met = c.p99VsFloor <= 2 && c.p999VsFloor <= 2 && c.p50OverFloorMs <= 0.3 && (c.p999VsJava ?? 0) <= 1;
    return c;
  });
}

export function latencySummary(r: {
  broker: string;
  maxRate: number;
  startupMs: Record<string, number>;
  rows: PhaseRow[];
  targets: TargetCheck[];
  size: number;
  queues: number;
  joins?: JoinRow[];
  restart?: RestartRow;
}): string {
  const out: string[] = [
    `rocketwire bench --latency: ${r.size} B, ${r.queues} queues, broker ${r.broker}`,
    `highest sustained rate with every party running: ${r.maxRate} msgs/s`,
    `start() → first message handled: ${Object.entries(r.startupMs)
      .map(([k, v]) => `${k} ${v.toFixed(0)} ms`)
      .join(', ')}`,
    '',
    'scheduled send → handler (ms)       p50     p99   p99.9     max | store→h p50   p99 | CPU %   ELU  GC ms (pauses)',
  ];
  for (const row of r.rows) {
    out.push(`${row.pctOfMax} % = ${row.rate} msgs/s, ${row.producer}'s producer, ${row.acked}/${row.scheduled} acked`);
    for (const name of CONSUMERS) {
      const c = row.consumers[name];
      if (!c) continue;
      out.push(
        `  ${name.padEnd(32)}${[c.send.p50, c.send.p99, c.send.p999, c.send.max].map((x) => f1(x).padStart(8)).join('')} |` +
          `${f1(c.store.p50).padStart(12)}${f1(c.store.p99).padStart(6)} |${c.cpuPct.toFixed(0).padStart(6)}${(c.elu === undefined ? 'n/a' : c.elu.toFixed(2)).padStart(6)}${c.gcMs.toFixed(0).padStart(7)}` +
          (c.gcMaxMs === undefined ? '' : ` (${c.gcCount}, ${c.gcMajor} major, longest ${f1(c.gcMaxMs)})`),
      );
    }
    out.push(
      `  ${'send → acknowledged'.padEnd(32)}${[row.ack.p50, row.ack.p99, row.ack.p999, row.ack.max].map((x) => f1(x).padStart(8)).join('')} |` +
        ` call→ack p50 ${f1(row.call.p50)} p99 ${f1(row.call.p99)} |${row.producerCpuPct.toFixed(0).padStart(6)}${(row.producerElu === undefined ? 'n/a' : row.producerElu.toFixed(2)).padStart(6)}${row.producerGcMs.toFixed(0).padStart(7)}` +
        (row.brokerCpuPct !== undefined ? `   broker CPU ${row.brokerCpuPct.toFixed(0)} %` : ''),
    );
  }
  out.push('', 'targets (rocketwire ÷ floor p99, p99.9; p50 − floor p50; p99.9 ÷ Java):');
  for (const t of r.targets) {
    out.push(
      `  ${t.rate} msgs/s (${t.producer}): ${t.p99VsFloor.toFixed(2)}×, ${t.p999VsFloor.toFixed(2)}×, ` +
        `${t.p50OverFloorMs >= 0 ? '+' : ''}${t.p50OverFloorMs.toFixed(2)} ms, ${t.p999VsJava === undefined ? 'n/a' : t.p999VsJava.toFixed(2) + '×'} → ${t.met ? 'met' : 'missed'}`,
    );
  }
  if (r.joins && r.joins.length > 0) {
    out.push(
      '',
      'a second member joins a group (due time → handler, ms: p50/p99/p99.9/max (messages), by due time before the join, from the join to convergence, after):',
    );
    for (const j of r.joins) {
      out.push(
        `  ${j.joined} joins at ${j.rate} msgs/s, ${(j.joinAtMs / 1000).toFixed(1)} s into a ${j.seconds} s phase: ` +
          `converged ${j.convergedMs === null ? 'n/a' : `${j.convergedMs.toFixed(0)} ms`} after, ${j.movedQueues} queues moved, ${j.duplicates} duplicates`,
      );
      for (const name of CONSUMERS) {
        const c = j.consumers[name];
        if (c)
          out.push(
            `    ${(name === j.joined ? `${name} (2 members)` : name).padEnd(24)} before ${pp(c.before)}  converging ${pp(c.converging)}  after ${pp(c.after)}`,
          );
      }
    }
  }
  if (r.restart) {
    const x = r.restart;
    out.push(
      '',
      `the broker restarts at ${x.rate} msgs/s, ${(x.restartAtMs / 1000).toFixed(1)} s into a ${x.seconds} s phase: down ${x.restartMs.toFixed(0)} ms; ` +
        `${x.acked} sends acknowledged, ${x.failed} failed, longest wait between acknowledgements ${x.producerGapMs.toFixed(0)} ms`,
    );
    for (const name of CONSUMERS) {
      const c = x.consumers[name];
      if (c)
        out.push(
          `  ${name.padEnd(12)} gap ${c.gapMs.toFixed(0)} ms (from ${c.gapFromStopMs.toFixed(0)} ms after the stop); whole phase ${pp(c.all)}; ` +
            `acknowledged but not handled ${c.lost}; duplicates ${c.duplicates}`,
        );
    }
  }
  return out.join('\n') + '\n';
}

export type { Line };
