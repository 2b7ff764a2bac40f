/**
 * The event phases of `rocketwire bench --latency` (latency.ts): at a steady rate, a second member
 * joins a consumer group (`--join`), or the broker restarts (`--restart`), in the middle of a phase.
 * Every process keeps every message of the phase (`trace N`) and writes it to a file at the end
 * (`dump N FILE`); latency-events.ts turns those into the figures.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { acknowledged, convergence, duplicates, longestGap, lost, windowPercentiles } from './latency-events.js';
import { CliError } from '../../lib/cli/common.js';
import type { Proc } from './latency-procs.js';
import { decodeSamples, nowUs, type Percentiles, type Samples } from './latency-record.js';

export interface EventContext {
  producer: Proc;
  /** The consumers of the run by name (rocketwire, java, floor), each the first member of its group. */
  consumers: Map<string, Proc>;
  /** A second member of `name`'s group, started idle (it joins on `start`). */
  spawnMember(name: 'rocketwire' | 'java'): Proc;
  /** Stops the broker and starts it again on the same ports and store; resolves once it serves again. */
  restartBroker: (() => Promise<unknown>) | null;
  dir: string;
  log(line: string): void;
  mark(what: string): void;
}

/** Latency of the messages due before the join, between the join and convergence, and after it. */
export interface Windows {
  before: Percentiles;
  converging: Percentiles;
  after: Percentiles;
}

export interface JoinRow {
  phase: number;
  /** The group a member joined. */
  joined: 'rocketwire' | 'java';
  rate: number;
  seconds: number;
  /** From the phase's start to the joining member's start(), ms. */
  joinAtMs: number;
  /** From the join to convergence (the last queue handed over), ms; null if no queue moved. */
  convergedMs: number | null;
  movedQueues: number;
  /** Messages handled twice in the joining group (both members together). */
  duplicates: number;
  acked: number;
  /** Per consumer (the joining group's two members together), over the same due-time windows. */
  consumers: Record<string, Windows & { handled: number }>;
}

export interface RestartRow {
  phase: number;
  rate: number;
  seconds: number;
  /** From the phase's start to the broker's stop, and how long the stop and start took, ms. */
  restartAtMs: number;
  restartMs: number;
  acked: number;
  failed: number;
  /** The producer's longest wait between two acknowledgements, ms. */
  producerGapMs: number;
  consumers: Record<
    string,
    {
      /** Latency of every message of the phase (the minute around the restart). */
      all: Percentiles;
      /** The longest time between two handled messages: from the last before the restart to the first after. */
      gapMs: number;
      /** Where that gap began, from the broker's stop (negative: before it), ms. */
      gapFromStopMs: number;
      handled: number;
      duplicates: number;
      /** Acknowledged messages this consumer never handled. */
      lost: number;
    }
  >;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until `done()` or `ms` passed; true if done. */
async function until(done: () => Promise<boolean>, ms: number): Promise<boolean> {
  const end = performance.now() + ms;
  for (;;) {
    if (await done()) return true;
    if (performance.now() > end) return false;
    await sleep(200);
  }
}

async function dump(p: Proc, phase: number, dir: string): Promise<Samples> {
  const file = path.join(dir, `${p.name.replace(/\W+/g, '_')}-${phase}.bin`);
  p.send(`dump ${phase} ${file}`);
  await p.next('dumped', 60_000, (l) => l.phase === phase);
  const s = decodeSamples(fs.readFileSync(file));
  fs.rmSync(file, { force: true });
  return s;
}

const count = async (p: Proc, phase: number) => (await p.ask('count', phase)).count as number;

/** A phase at `rate` in which a second member of `who`'s group joins a third of the way in. */
export async function joinPhase(
  ctx: EventContext,
  phase: number,
  who: 'rocketwire' | 'java',
  rate: number,
  ms: number,
): Promise<JoinRow> {
  const member = ctx.spawnMember(who);
  try {
    await member.next('idle', 120_000);
    const all = [...ctx.consumers.values(), member];
    for (const p of all) {
      p.send(`trace ${phase}`);
      p.send(`begin ${phase}`);
    }
    ctx.mark(`phase ${phase} begins: a ${who} member joins, ${rate} msgs/s for ${ms} ms`);
    const startUs = nowUs();
    ctx.producer.send(`run ${phase} ${rate} ${ms}`);
    await sleep(ms / 3);
    const joinUs = nowUs();
    ctx.mark(`phase ${phase}: ${who} member starts`);
    member.send('start');
    const pr = await ctx.producer.next('phase', ms + 120_000, (l) => l.phase === phase);
    const acked = pr.acked as number;
    await until(async () => {
      for (const [name, c] of ctx.consumers) {
        const n = (await count(c, phase)) + (name === who ? await count(member, phase) : 0);
        if (n < acked) return false;
      }
      return true;
    }, 30_000);
    ctx.mark(`phase ${phase} ends`);
    const samples = new Map<string, Samples[]>();
    for (const [name, c] of ctx.consumers) {
      samples.set(
        name,
        name === who
          ? [await dump(c, phase, ctx.dir), await dump(member, phase, ctx.dir)]
          : [await dump(c, phase, ctx.dir)],
      );
    }
    for (const p of all) p.send(`end ${phase}`); // closes the phase's resource figures
    const conv = convergence(samples.get(who)!, joinUs);
    const convergedUs = conv.convergedUs ?? Infinity;
    const consumers: JoinRow['consumers'] = {};
    for (const [name, s] of samples) {
      consumers[name] = {
        before: windowPercentiles(s, -Infinity, joinUs),
        converging: windowPercentiles(s, joinUs, convergedUs),
        after: windowPercentiles(s, convergedUs, Infinity),
        handled: s.reduce((a, x) => a + x.seq.length, 0),
      };
    }
    return {
      phase,
      joined: who,
      rate,
      seconds: ms / 1000,
      joinAtMs: (joinUs - startUs) / 1000,
      convergedMs: conv.convergedUs === null ? null : (conv.convergedUs - joinUs) / 1000,
      movedQueues: conv.movedQueues,
      duplicates: conv.duplicates,
      acked,
      consumers,
    };
  } finally {
    // The member leaves; the group takes its queues back before the next phase.
    await member.stop();
    await sleep(3000);
  }
}

/** A phase at `rate` in which the broker stops and starts again a third of the way in. */
export async function restartPhase(ctx: EventContext, phase: number, rate: number, ms: number): Promise<RestartRow> {
  const restart = ctx.restartBroker;
  if (!restart)
    throw new CliError(
      '--restart: the bench cannot restart this broker (give no --namesrv, or run it through bench/e2e/real-broker.js)',
    );
  for (const p of [ctx.producer, ...ctx.consumers.values()]) p.send(`trace ${phase}`);
  for (const c of ctx.consumers.values()) c.send(`begin ${phase}`);
  ctx.mark(`phase ${phase} begins: the broker restarts, ${rate} msgs/s for ${ms} ms`);
  const startUs = nowUs();
  ctx.producer.send(`run ${phase} ${rate} ${ms}`);
  await sleep(ms / 3);
  const stopUs = nowUs();
  ctx.mark(`phase ${phase}: broker stops`);
  await restart();
  const upUs = nowUs();
  ctx.mark(`phase ${phase}: broker serves again`);
  ctx.log(`broker restarted in ${((upUs - stopUs) / 1000).toFixed(0)} ms`);
  const pr = await ctx.producer.next('phase', ms + 120_000, (l) => l.phase === phase);
  const acked = pr.acked as number;
  await until(async () => {
    for (const c of ctx.consumers.values()) if ((await count(c, phase)) < acked) return false;
    return true;
  }, 60_000);
  ctx.mark(`phase ${phase} ends`);
  const prod = await dump(ctx.producer, phase, ctx.dir);
  const acks = acknowledged(prod);
  const ackGap = longestGap([acks]);
  const consumers: RestartRow['consumers'] = {};
  for (const [name, c] of ctx.consumers) {
    const s = await dump(c, phase, ctx.dir);
    c.send(`end ${phase}`);
    const gap = longestGap([s]);
    consumers[name] = {
      all: windowPercentiles([s], -Infinity, Infinity),
      gapMs: gap ? (gap.toUs - gap.fromUs) / 1000 : 0,
      gapFromStopMs: gap ? (gap.fromUs - stopUs) / 1000 : 0,
      handled: s.seq.length,
      duplicates: duplicates([s]),
      lost: lost(prod, [s]).length,
    };
  }
  return {
    phase,
    rate,
    seconds: ms / 1000,
    restartAtMs: (stopUs - startUs) / 1000,
    restartMs: (upUs - stopUs) / 1000,
    acked,
    failed: pr.failed as number,
    producerGapMs: ackGap ? (ackGap.toUs - ackGap.fromUs) / 1000 : 0,
    consumers,
  };
}
