/**
 * `rocketwire bench --curve members`: throughput of a consumer group as it grows from 1 to 8
 * processes on one topic (group.ts: N consumer processes in one group, each handling nothing until
 * the group has split the queues). One topic of `queues` queues is filled once with numbered
 * messages; every point consumes all of them from the first offset with a new group: rocketwire's
 * processes, then (--vs java) as many Java reference consumers. Per point: the total rate, each
 * process's share of the messages, the processes' CPU together, duplicates, and the settle time.
 * On a machine of C cores the total stops growing near C processes (broker and producerless
 * consumers share the cores): `capLine` says where from the figures.
 */
import * as os from 'node:os';
import { AdminClient } from '../../lib/admin/index.js';
import { Producer, type Message } from '../../lib/producer/index.js';
import { renderCurveSvg, type ChartSeries } from './chart.js';
import { consumeJavaGroup, consumeRocketwireGroup, type GroupResult, type GroupRun } from './group.js';

export interface MembersOptions {
  namesrv: string;
  points: number[];
  messages: number;
  size: number;
  queues: number;
  java: boolean;
  prefix: string;
  stallTimeoutMs: number;
  log: (line: string) => void;
}

export interface MembersSide {
  msgsPerSec: number;
  /** Each process's share of the deliveries, in spawn order (sums to 1). */
  shares: number[];
  duplicates: number;
  /** CPU of all the processes together per message handled, µs (start-up included). */
  cpuUsPerMsg: number;
  settleMs: number;
  peakRssMb: number;
  complete: boolean;
  /** Why this side of the point has no figures. */
  failed?: string;
}

export interface MembersPoint {
  processes: number;
  messages: number;
  rocketwire: MembersSide;
  java?: MembersSide;
}

const BATCH = 32;

async function fill(o: MembersOptions, topic: string): Promise<number> {
  const producer = new Producer({ group: `${o.prefix}_pg`, namesrvAddr: o.namesrv });
  await producer.start();
  const template = Buffer.alloc(Math.max(8, o.size), 0x61);
  let index = 0;
  try {
    while (index < o.messages) {
      const batch: Message[] = [];
      for (let k = 0; k < BATCH && index < o.messages; k++, index++) {
        const body = Buffer.from(template);
        body.writeUInt32BE(0, 0);
        body.writeUInt32BE(index, 4);
        batch.push({ topic, body });
      }
      await producer.sendBatch(batch);
    }
    return index;
  } finally {
    await producer.shutdown();
  }
}

function side(g: GroupResult): MembersSide {
  const total = g.perProcess.reduce((a, b) => a + b, 0);
  return {
    msgsPerSec: g.msgsPerSec,
    shares: g.perProcess.map((n) => n / Math.max(1, total)),
    duplicates: g.duplicates,
    cpuUsPerMsg: (g.cpuMs * 1000) / Math.max(1, g.received),
    settleMs: g.settleMs,
    peakRssMb: g.peakRssMb,
    complete: g.complete,
  };
}

/** One side of a point; a side that fails is kept as a failed row (the curve goes on) and logged. */
async function measured(run: () => Promise<GroupResult>, log: (line: string) => void): Promise<MembersSide> {
  try {
    return side(await run());
  } catch (err) {
    log(`  failed: ${(err as Error).message}`);
    return {
      msgsPerSec: Number.NaN,
      shares: [],
      duplicates: 0,
      cpuUsPerMsg: Number.NaN,
      settleMs: Number.NaN,
      peakRssMb: Number.NaN,
      complete: false,
      failed: (err as Error).message,
    };
  }
}

export async function runMembersCurve(o: MembersOptions): Promise<MembersPoint[]> {
  const topic = `${o.prefix}_members`;
  const admin = new AdminClient({ namesrvAddr: o.namesrv, mqClientApiTimeoutMs: 10_000 });
  try {
    await admin.createOrUpdateTopic({ topic, readQueueNums: o.queues, writeQueueNums: o.queues });
  } finally {
    await admin.close();
  }
  const expect = await fill(o, topic);
  const producer = new Producer({ group: `${o.prefix}_route`, namesrvAddr: o.namesrv });
  await producer.start();
  const queues = (await producer.fetchPublishMessageQueues(topic)).map((q) => `${q.brokerName}:${q.queueId}`).sort();
  await producer.shutdown();
  const out: MembersPoint[] = [];
  for (const processes of o.points) {
    const run: GroupRun = {
      namesrv: o.namesrv,
      topic,
      expect,
      size: o.size,
      queues,
      processes,
      consumeBatch: 1,
      handlerMs: 0,
      serializeType: 'JSON',
      stallTimeoutMs: o.stallTimeoutMs,
      t0: performance.now(),
    };
    o.log(`members ${processes}: rocketwire…`);
    const point: MembersPoint = {
      processes,
      messages: expect,
      rocketwire: await measured(() => consumeRocketwireGroup(run), o.log),
    };
    if (o.java) {
      o.log(`members ${processes}: java…`);
      point.java = await measured(() => consumeJavaGroup(run), o.log);
    }
    out.push(point);
  }
  return out;
}

const fmt = (x: number | undefined, digits = 0): string =>
  x === undefined || Number.isNaN(x)
    ? '–'
    : x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const pct = (shares: number[]) => (shares.length ? shares.map((s) => `${Math.round(s * 100)}`).join(' / ') : '–');

export function membersTable(points: MembersPoint[]): string {
  const head =
    '| processes | messages | rocketwire msgs/s | × 1 process | shares % | duplicates | CPU µs/msg | settle ms ' +
    '| Java msgs/s | Java × 1 process | Java shares % | Java duplicates | ÷ Java |';
  const base = points.find((p) => p.processes === 1) ?? points[0];
  const rows = points.map((p) => {
    const j = p.java;
    return (
      `| ${p.processes} | ${fmt(p.messages)} | ${fmt(p.rocketwire.msgsPerSec)} ` +
      `| ${base ? fmt(p.rocketwire.msgsPerSec / base.rocketwire.msgsPerSec, 2) : '–'} | ${pct(p.rocketwire.shares)} ` +
      `| ${p.rocketwire.duplicates} | ${fmt(p.rocketwire.cpuUsPerMsg, 1)} | ${fmt(p.rocketwire.settleMs)} ` +
      `| ${fmt(j?.msgsPerSec)} | ${j && base?.java ? fmt(j.msgsPerSec / base.java.msgsPerSec, 2) : '–'} ` +
      `| ${j ? pct(j.shares) : '–'} | ${j ? j.duplicates : '–'} | ${j ? fmt(p.rocketwire.msgsPerSec / j.msgsPerSec, 2) : '–'} |`
    );
  });
  return [head, `|${' --- |'.repeat(13)}`, ...rows].join('\n') + '\n';
}

/**
 * Where the total stops growing, from the figures: the smallest process count past which no point
 * is more than 10 % above it (adding processes no longer adds throughput).
 */
export function capOf(points: { processes: number; msgsPerSec: number }[]): { processes: number; msgsPerSec: number } {
  const sorted = points.slice().sort((a, b) => a.processes - b.processes);
  for (const p of sorted) {
    if (sorted.every((q) => q.processes <= p.processes || q.msgsPerSec <= p.msgsPerSec * 1.1)) return p;
  }
  return sorted.at(-1)!;
}

export function capLine(points: MembersPoint[]): string {
  const c = capOf(
    points
      .filter((p) => p.rocketwire.failed === undefined)
      .map((p) => ({ processes: p.processes, msgsPerSec: p.rocketwire.msgsPerSec })),
  );
  let line =
    `rocketwire's total stops growing at ${c.processes} process(es) (${fmt(c.msgsPerSec)} msgs/s; ` +
    `no later point is 10 % above it) on ${os.cpus().length} cores shared with the broker`;
  const java = points.filter((p) => p.java && p.java.failed === undefined);
  if (java.length > 0) {
    const jc = capOf(java.map((p) => ({ processes: p.processes, msgsPerSec: p.java!.msgsPerSec })));
    line += `; Java's at ${jc.processes} (${fmt(jc.msgsPerSec)} msgs/s)`;
  }
  const failed = points.flatMap((p) =>
    [
      ['rocketwire', p.rocketwire],
      ['Java', p.java],
    ]
      .filter(([, side]) => (side as MembersSide | undefined)?.failed !== undefined)
      .map(([name, side]) => `${name} at ${p.processes} processes failed: ${(side as MembersSide).failed}`),
  );
  return [line, ...failed].join('\n') + '\n';
}

export function membersSvg(points: MembersPoint[], title: string): string {
  const series: ChartSeries[] = [
    {
      name: 'rocketwire, total',
      points: points.filter((p) => !p.rocketwire.failed).map((p) => [p.processes, p.rocketwire.msgsPerSec]),
    },
  ];
  if (points.some((p) => p.java))
    series.push({
      name: 'Java, total',
      points: points.filter((p) => p.java && !p.java.failed).map((p) => [p.processes, p.java!.msgsPerSec]),
    });
  return renderCurveSvg(title, 'consumer processes in the group', 'messages / s', series);
}
