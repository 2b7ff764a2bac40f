/**
 * `rocketwire bench --curve members --simulated`: a consumer group of 1 … 1 000 members beyond the
 * cores. The members are rocketwire push consumers spread over a few host processes
 * (members-host.ts), each with its own instanceName, so its own clientId, client instance and
 * connections. Per point, on a new topic of max(8, N) queues and a new group:
 *
 * 1. start the N members; wait until the group has converged (below);
 * 2. a producer in this process sends numbered messages at a steady rate from here to the end;
 * 3. a heartbeat window of one heartbeat interval: the HEART_BEAT bodies the broker took (the
 *    embedded broker's counters) and the ones the members sent (their client instances' counters);
 * 4. one member joins (its name sorts in the middle of the group, so about half the queues move):
 *    time from the join to convergence, duplicates delivered meanwhile;
 * 5. the same member leaves (shutdown): the same figures;
 * 6. the producer stops; every message it sent must have been handled.
 *
 * Converged: every queue of the topic held by exactly one live member, each holding what the
 * averaging strategy assigns it (queues sorted by broker and id, client ids sorted), as the members
 * themselves report their assignment() (polled every 10 ms), and still so after `holdMs`. The time
 * is that of the last report that made the group so. Duplicates: deliveries of a message number
 * already handled by any member.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { AdminClient } from '../../lib/admin/index.js';
import { CliError } from '../../lib/cli/common.js';
import { Producer } from '../../lib/producer/index.js';
import type { HostOptions } from './members-host.js';
import { cpuMs, rssMb } from './proc-stats.js';

export interface HeartbeatCounts {
  full: number;
  withoutSub: number;
  bodyBytes: number;
}

export interface SimOptions {
  namesrv: string;
  points: number[];
  /** Host processes (fewer when a point has fewer members). */
  hosts: number;
  heartbeatIntervalMs: number;
  useHeartbeatV2: boolean;
  /** Messages per second sent from the heartbeat window to the end of the leave. */
  rate: number;
  /** How long a converged split must hold. */
  holdMs: number;
  /** Give up on a phase that has not converged after this long. */
  phaseTimeoutMs: number;
  prefix: string;
  /** The broker's HEART_BEAT counters, where they can be read (the embedded broker in this process). */
  brokerHeartbeats?: () => HeartbeatCounts | Promise<HeartbeatCounts>;
  /** The broker's CPU time so far in ms (the JVM's from /proc; for a broker in this process, this process's). */
  brokerCpuMs?: () => number;
  log: (line: string) => void;
}

export interface PhaseFigures {
  /** From the command (start of the first member, join, leave) to convergence; NaN when it did not converge. */
  ms: number;
  converged: boolean;
  /** Deliveries of messages already handled, from the command to the next phase's command. */
  duplicates: number;
  /** Rebalance rounds run by the members from the command to convergence (each asks the broker for the group's client ids per topic). */
  rebalanceRuns: number;
  /** Broker CPU from the command to convergence, ms. */
  brokerCpuMs?: number;
}

export interface SimPoint {
  members: number;
  /** Why the point stopped (the curve stops there); its other figures are then those reached. */
  failed?: string;
  /** Members whose start() had resolved (all of them unless the point failed while starting). */
  started: number;
  queues: number;
  hosts: number;
  /** Distinct client instances the hosts reported (one per member when the clientIds differ). */
  instances: number;
  start: PhaseFigures;
  join: PhaseFigures;
  leave: PhaseFigures;
  heartbeat: {
    windowMs: number;
    intervalMs: number;
    /** HEART_BEAT requests per second the members sent. */
    perSec: number;
    /** Body bytes per second the members sent (client counters). */
    clientBytesPerSec: number;
    /** Body bytes per second the broker took (its counters); absent where they cannot be read. */
    brokerBytesPerSec?: number;
    /** One member's heartbeat body, in full and as V2 without subscriptions. */
    fullBytes: number;
    withoutSubBytes: number;
    /** Broker CPU over the window, % of one core. */
    brokerCpuPct?: number;
  };
  sent: number;
  unique: number;
  duplicates: number;
  /** Sum of the hosts' RSS at the end ÷ members, MiB. */
  rssMbPerMember: number;
  hostRssMb: number[];
  hostFds: number[];
}

/** The averaging strategy's split (AllocateMessageQueueAveragely): client id → its queues. */
export function averagingSplit(queues: string[], clientIds: string[]): Map<string, string[]> {
  const mq = queues.slice().sort(compareQueueKeys);
  const cids = clientIds.slice().sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const out = new Map<string, string[]>();
  const n = mq.length;
  const c = cids.length;
  const mod = n % c;
  cids.forEach((cid, index) => {
    const size = n <= c ? 1 : mod > 0 && index < mod ? Math.floor(n / c) + 1 : Math.floor(n / c);
    const from = mod > 0 && index < mod ? index * size : index * size + mod;
    out.set(cid, mq.slice(from, from + Math.max(0, Math.min(size, n - from))));
  });
  return out;
}

/** "broker:id" keys in the order of MessageQueue.compareTo (broker name, then queue id as a number). */
function compareQueueKeys(a: string, b: string): number {
  const i = a.lastIndexOf(':');
  const j = b.lastIndexOf(':');
  const ba = a.slice(0, i);
  const bb = b.slice(0, j);
  if (ba !== bb) return ba < bb ? -1 : 1;
  return Number(a.slice(i + 1)) - Number(b.slice(j + 1));
}

/** Whether what the members hold is the split: each holds exactly its queues (order aside). */
export function matchesSplit(held: Map<string, readonly string[]>, split: Map<string, string[]>): boolean {
  for (const [cid, want] of split) {
    const got = held.get(cid) ?? [];
    if (got.length !== want.length) return false;
    const set = new Set(got);
    if (!want.every((q) => set.has(q))) return false;
  }
  // a member outside the split (one that left) must hold nothing
  for (const [cid, got] of held) if (!split.has(cid) && got.length > 0) return false;
  return true;
}

interface HostStats {
  members: number;
  instances: number;
  heartbeats: HeartbeatCounts;
  rebalanceRuns: number;
  heartbeatFullBytes: number;
  heartbeatWithoutSubBytes: number;
  fds: number;
  rssMb: number;
}

interface Host {
  proc: ChildProcess;
  stderr: string;
  closed: Promise<void>;
  waiting: ((s: HostStats) => void)[];
}

const HERE = path.dirname(fileURLToPath(import.meta.url));
const epochMs = (): number => performance.timeOrigin + performance.now();
const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Member names: "m0000" …; the joiner "m<middle>j" sorts right after the middle member. */
const memberName = (i: number): string => `m${String(i).padStart(5, '0')}`;

class Group {
  readonly hosts: Host[] = [];
  /** member name → client id, queues held, host index */
  readonly clientIds = new Map<string, string>();
  readonly held = new Map<string, string[]>();
  /** epoch ms of the latest assignment report or leave applied */
  lastChangeTs = 0;
  changes = 0;
  counts: Uint8Array;
  received = 0;
  unique = 0;
  duplicates = 0;
  instances = 0;
  failure: string | null = null;

  constructor(o: SimOptions, hosts: number, topic: string, group: string, maxMessages: number) {
    this.counts = new Uint8Array(maxMessages);
    const script = path.join(HERE, 'members-host.js');
    for (let h = 0; h < hosts; h++) {
      const ho: HostOptions = {
        namesrv: o.namesrv,
        topic,
        group,
        heartbeatIntervalMs: o.heartbeatIntervalMs,
        useHeartbeatV2: o.useHeartbeatV2,
        startConcurrency: 8,
      };
      const proc = spawn(process.execPath, [script, JSON.stringify(ho)], { stdio: ['pipe', 'pipe', 'pipe'] });
      const host: Host = {
        proc,
        stderr: '',
        closed: new Promise((resolve) => proc.once('close', () => resolve())),
        waiting: [],
      };
      proc.stdin!.on('error', () => undefined);
      proc.stderr!.on('data', (d: Buffer) => {
        host.stderr = (host.stderr + d.toString()).slice(-4000);
      });
      proc.once('exit', (code) => {
        if (code !== 0 && this.failure === null)
          this.failure = `a members host exited with ${code}: ${host.stderr.trim().split('\n').pop() ?? ''}`;
      });
      createInterface({ input: proc.stdout! }).on('line', (text) => this.line(host, text));
      this.hosts.push(host);
    }
  }

  private line(host: Host, text: string): void {
    let l: {
      type?: string;
      name?: string;
      clientId?: string;
      q?: string[];
      n?: number[];
      ts?: number;
      instances?: number;
    } & Partial<HostStats>;
    try {
      l = JSON.parse(text) as typeof l;
    } catch {
      return;
    }
    if (l.type === 'a') {
      this.held.set(l.name!, l.q!);
      this.lastChangeTs = Math.max(this.lastChangeTs, l.ts!);
      this.changes++;
    } else if (l.type === 'started') {
      this.clientIds.set(l.name!, l.clientId!);
      if (!this.held.has(l.name!)) this.held.set(l.name!, []);
    } else if (l.type === 'failed') {
      this.failure ??= `member ${l.name} failed to start: ${(l as { error?: string }).error ?? '?'}`;
    } else if (l.type === 'left') {
      this.held.set(l.name!, []);
      this.lastChangeTs = Math.max(this.lastChangeTs, l.ts!);
      this.changes++;
    } else if (l.type === 'm') {
      for (const n of l.n!) {
        this.received++;
        if (n >= this.counts.length) continue;
        if (this.counts[n]! === 0) this.unique++;
        else this.duplicates++;
        if (this.counts[n]! < 255) this.counts[n]!++;
      }
    } else if (l.type === 'stats') {
      host.waiting.shift()?.(l as HostStats);
    }
  }

  send(h: number, cmd: object): void {
    this.hosts[h]!.proc.stdin!.write(JSON.stringify(cmd) + '\n');
  }

  async stats(): Promise<HostStats[]> {
    return Promise.all(
      this.hosts.map(
        (host, h) =>
          new Promise<HostStats>((resolve) => {
            host.waiting.push(resolve);
            this.send(h, { cmd: 'stats' });
          }),
      ),
    );
  }

  /** Held queues by client id (members that have not announced their client id yet are left out). */
  heldByClientId(): Map<string, string[]> {
    const out = new Map<string, string[]>();
    for (const [name, q] of this.held) {
      const cid = this.clientIds.get(name);
      if (cid) out.set(cid, q);
    }
    return out;
  }

  /**
   * Waits until the members hold `split` (computed from `names` once all of them have announced
   * their client ids) and keep holding it for holdMs; the epoch ms of the report that made it so, or
   * NaN on timeout.
   */
  async converge(names: () => string[], queues: string[], o: SimOptions, deadline: number): Promise<number> {
    let since = 0;
    let at = Number.NaN;
    let changesAt = -1;
    for (;;) {
      if (this.failure) throw new CliError(this.failure);
      const list = names();
      const ids = list.map((n) => this.clientIds.get(n));
      let ok = false;
      if (ids.every((id) => id !== undefined)) {
        ok = matchesSplit(this.heldByClientId(), averagingSplit(queues, ids as string[]));
      }
      if (ok) {
        if (changesAt !== this.changes) {
          changesAt = this.changes;
          since = performance.now();
          at = this.lastChangeTs;
        }
        if (performance.now() - since >= o.holdMs) return at;
      } else changesAt = -1;
      if (performance.now() > deadline) return Number.NaN;
      await wait(5);
    }
  }

  async close(): Promise<void> {
    for (let h = 0; h < this.hosts.length; h++) this.send(h, { cmd: 'exit' });
    const kill = setTimeout(() => {
      for (const host of this.hosts) host.proc.kill('SIGKILL');
    }, 60_000);
    await Promise.all(this.hosts.map((h) => h.closed));
    clearTimeout(kill);
  }
}

/** Sends numbered messages at `rate` per second until stopped; resolves the count sent. */
function steadyProducer(
  o: SimOptions,
  topic: string,
  first: number,
  go: () => boolean,
): { stop: () => Promise<number> } {
  const producer = new Producer({ group: `${o.prefix}_pg`, namesrvAddr: o.namesrv });
  let running = true;
  let sent = 0;
  const done = (async () => {
    await producer.start();
    while (running && !go()) await wait(5);
    const t0 = performance.now();
    const inFlight = new Set<Promise<unknown>>();
    while (running) {
      const due = Math.floor(((performance.now() - t0) * o.rate) / 1000);
      while (sent < due && running) {
        const body = Buffer.alloc(64, 0x61);
        body.writeUInt32BE(0, 0);
        body.writeUInt32BE(first + sent, 4);
        sent++;
        const p = producer.send({ topic, body }).catch(() => undefined);
        inFlight.add(p);
        void p.finally(() => inFlight.delete(p));
        if (inFlight.size >= 64) await Promise.race(inFlight);
      }
      await wait(5);
    }
    await Promise.all(inFlight);
    await producer.shutdown();
    return sent;
  })();
  return {
    stop: async () => {
      running = false;
      return done;
    },
  };
}

async function topicQueueKeys(namesrv: string, topic: string, prefix: string): Promise<string[]> {
  const producer = new Producer({ group: `${prefix}_route`, namesrvAddr: namesrv });
  await producer.start();
  try {
    return (await producer.fetchPublishMessageQueues(topic)).map((q) => `${q.brokerName}:${q.queueId}`);
  } finally {
    await producer.shutdown();
  }
}

const sumStats = (s: HostStats[], k: keyof HeartbeatCounts) => s.reduce((a, h) => a + h.heartbeats[k], 0);

export async function runSimulatedMembers(o: SimOptions): Promise<SimPoint[]> {
  const out: SimPoint[] = [];
  const admin = new AdminClient({ namesrvAddr: o.namesrv, mqClientApiTimeoutMs: 10_000 });
  try {
    for (const n of o.points) {
      const p = await runPoint(o, admin, n);
      out.push(p);
      // a larger group would fail the same way, later
      if (p.failed !== undefined) break;
    }
  } finally {
    await admin.close();
  }
  return out;
}

const noPhase = (): PhaseFigures => ({ ms: Number.NaN, converged: false, duplicates: 0, rebalanceRuns: 0 });

async function runPoint(o: SimOptions, admin: AdminClient, n: number): Promise<SimPoint> {
  const queuesN = Math.max(8, n);
  const topic = `${o.prefix}_members${n}`;
  const group = `${o.prefix}_g${n}`;
  await admin.createOrUpdateTopic({ topic, readQueueNums: queuesN, writeQueueNums: queuesN });
  const queues = await topicQueueKeys(o.namesrv, topic, o.prefix);
  if (queues.length !== queuesN) throw new CliError(`topic ${topic} has ${queues.length} queues, not ${queuesN}`);
  const hostsN = Math.max(1, Math.min(o.hosts, n));
  // the producer sends at most rate × (every phase's timeout + the window), with room to spare
  const maxMessages = Math.ceil((o.rate * (4 * o.phaseTimeoutMs + o.heartbeatIntervalMs)) / 1000) + 1000;
  const g = new Group(o, hostsN, topic, group, maxMessages);
  const names = Array.from({ length: n }, (_, i) => memberName(i));
  const joiner = `${memberName(Math.floor((n - 1) / 2))}j`;
  const joinHost = 0;
  const cpu = o.brokerCpuMs ?? (() => Number.NaN);
  let producer: { stop: () => Promise<number> } | null = null;
  let sending = false;
  const point: SimPoint = {
    members: n,
    started: 0,
    queues: queuesN,
    hosts: hostsN,
    instances: 0,
    start: noPhase(),
    join: noPhase(),
    leave: noPhase(),
    heartbeat: {
      windowMs: 0,
      intervalMs: o.heartbeatIntervalMs,
      perSec: 0,
      clientBytesPerSec: 0,
      fullBytes: 0,
      withoutSubBytes: 0,
    },
    sent: 0,
    unique: 0,
    duplicates: 0,
    rssMbPerMember: Number.NaN,
    hostRssMb: [],
    hostFds: [],
  };
  const progress = setInterval(
    () =>
      o.log(
        `members ${n}: ${g.clientIds.size} started, ${g.changes} assignment changes, ${g.received} messages handled`,
      ),
    10_000,
  );
  try {
    // The producer starts first, so that its start-up heartbeat falls outside the window: the
    // broker's count then holds one producer heartbeat per interval beside the members'.
    producer = steadyProducer(o, topic, 0, () => sending);
    // 1. start every member
    o.log(`members ${n}: starting ${n} members in ${hostsN} host process(es), ${queuesN} queues…`);
    const startTs = epochMs();
    let cpu0 = cpu();
    for (let h = 0; h < hostsN; h++) g.send(h, { cmd: 'start', names: names.filter((_, i) => i % hostsN === h) });
    // starting is slow with many members: allow a phase timeout per 100 members
    const startAt = await g.converge(
      () => names,
      queues,
      o,
      performance.now() + o.phaseTimeoutMs * Math.max(1, Math.ceil(n / 100)),
    );
    point.started = g.clientIds.size;
    let s = await g.stats();
    point.start = {
      ms: startAt - startTs,
      converged: !Number.isNaN(startAt),
      duplicates: 0,
      rebalanceRuns: s.reduce((a, h) => a + h.rebalanceRuns, 0),
      brokerCpuMs: cpu() - cpu0,
    };
    point.instances = s.reduce((a, h) => a + h.instances, 0);
    if (!point.start.converged) throw new CliError(`the group did not converge after start`);
    if (point.instances !== n) throw new CliError(`the hosts run ${point.instances} client instances, not ${n}`);

    // 2. messages from here on; 3. the heartbeat window
    sending = true;
    o.log(`members ${n}: converged in ${Math.round(point.start.ms)} ms; heartbeat window ${o.heartbeatIntervalMs} ms…`);
    const b0 = await o.brokerHeartbeats?.();
    const c0 = s;
    cpu0 = cpu();
    const w0 = performance.now();
    await wait(o.heartbeatIntervalMs);
    s = await g.stats();
    const windowMs = performance.now() - w0;
    const b1 = await o.brokerHeartbeats?.();
    const perSecond = (x: number) => (x * 1000) / windowMs;
    const heartbeat = point.heartbeat;
    heartbeat.windowMs = windowMs;
    heartbeat.perSec = perSecond(
      sumStats(s, 'full') + sumStats(s, 'withoutSub') - sumStats(c0, 'full') - sumStats(c0, 'withoutSub'),
    );
    heartbeat.clientBytesPerSec = perSecond(sumStats(s, 'bodyBytes') - sumStats(c0, 'bodyBytes'));
    heartbeat.fullBytes = s[0]!.heartbeatFullBytes;
    heartbeat.withoutSubBytes = s[0]!.heartbeatWithoutSubBytes;
    if (b0 && b1) heartbeat.brokerBytesPerSec = perSecond(b1.bodyBytes - b0.bodyBytes);
    if (o.brokerCpuMs) heartbeat.brokerCpuPct = ((cpu() - cpu0) / windowMs) * 100;
    const steadyDuplicates = g.duplicates;

    // 4. one member joins
    o.log(`members ${n}: ${joiner} joins…`);
    const phase = async (label: string, members: () => string[], cmd: object): Promise<PhaseFigures> => {
      const before = await g.stats();
      const dup0 = g.duplicates;
      const c = cpu();
      const t = epochMs();
      g.send(joinHost, cmd);
      const at = await g.converge(members, queues, o, performance.now() + o.phaseTimeoutMs);
      const after = await g.stats();
      const f: PhaseFigures = {
        ms: at - t,
        converged: !Number.isNaN(at),
        duplicates: g.duplicates - dup0,
        rebalanceRuns: after.reduce((a, h) => a + h.rebalanceRuns, 0) - before.reduce((a, h) => a + h.rebalanceRuns, 0),
      };
      if (o.brokerCpuMs) f.brokerCpuMs = cpu() - c;
      if (!f.converged) o.log(`members ${n}: no convergence ${o.phaseTimeoutMs} ms after the ${label}`);
      return f;
    };
    point.join = await phase('join', () => [...names, joiner], { cmd: 'join', name: joiner });
    // duplicates of the join that arrive after it converged still count for it
    await wait(o.holdMs);
    point.join.duplicates = g.duplicates - steadyDuplicates;

    // 5. the joiner leaves
    o.log(`members ${n}: ${joiner} leaves…`);
    const dupBeforeLeave = g.duplicates;
    point.leave = await phase('leave', () => names, { cmd: 'leave', name: joiner });
    await wait(o.holdMs);

    // 6. every message sent must be handled
    point.sent = await producer.stop();
    producer = null;
    const drainUntil = performance.now() + o.phaseTimeoutMs;
    while (g.unique < point.sent && performance.now() < drainUntil) await wait(20);
    point.leave.duplicates = g.duplicates - dupBeforeLeave;
  } catch (err) {
    point.failed = (err as Error).message;
    o.log(`members ${n}: ${point.failed}`);
  } finally {
    clearInterval(progress);
    point.started = Math.max(point.started, g.clientIds.size);
    point.hostRssMb = g.hosts.map((h) => rssMb(h.proc.pid!));
    point.rssMbPerMember = point.hostRssMb.reduce((a, b) => a + b, 0) / Math.max(1, point.started);
    const alive = g.hosts.every((h) => h.proc.exitCode === null);
    if (alive) point.hostFds = (await g.stats()).map((h) => h.fds);
    point.unique = g.unique;
    point.duplicates = g.duplicates;
    if (producer) point.sent = await producer.stop().catch(() => 0);
    await g.close();
  }
  return point;
}

const fmt = (x: number | undefined, digits = 0): string =>
  x === undefined || Number.isNaN(x)
    ? '–'
    : x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** The simulated points as a Markdown table. */
export function simulatedTable(points: SimPoint[]): string {
  const head =
    '| members | queues | hosts | start → converged ms | join → converged ms | join duplicates | leave → converged ms ' +
    '| leave duplicates | rebalance rounds per join | heartbeats/s | heartbeat B/s, members sent | heartbeat B/s, broker took ' +
    '| heartbeat body B, full / V2 | broker CPU % (window) | RSS MiB per member | fds per host | sent / handled |';
  const rows = points.map(
    (p) =>
      `| ${p.members} | ${p.queues} | ${p.hosts} | ${fmt(p.start.ms)} | ${fmt(p.join.ms)} | ${p.join.duplicates} ` +
      `| ${fmt(p.leave.ms)} | ${p.leave.duplicates} | ${p.join.rebalanceRuns} | ${fmt(p.heartbeat.perSec, 2)} ` +
      `| ${fmt(p.heartbeat.clientBytesPerSec)} | ${fmt(p.heartbeat.brokerBytesPerSec)} ` +
      `| ${fmt(p.heartbeat.fullBytes)} / ${fmt(p.heartbeat.withoutSubBytes)} | ${fmt(p.heartbeat.brokerCpuPct, 1)} ` +
      `| ${fmt(p.rssMbPerMember, 2)} | ${p.hostFds.join(' / ')} | ${fmt(p.sent)} / ${fmt(p.unique)} |`,
  );
  const notes = points
    .filter((p) => p.failed !== undefined)
    .map(
      (p) =>
        `members ${p.members} stopped (${p.started} of ${p.members} started): ${p.failed}; ` +
        `host RSS ${p.hostRssMb.map((r) => fmt(r)).join(' / ')} MiB, fds ${p.hostFds.join(' / ') || '–'}`,
    );
  return [head, `|${' --- |'.repeat(17)}`, ...rows, ...notes].join('\n') + '\n';
}

/** The processes' CPU, for an Apache broker JVM found by its pid. */
export function processCpuMs(pid: number): () => number {
  return () => cpuMs(pid);
}
