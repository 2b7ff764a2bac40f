/**
 * `rocketwire bench --curve queues|topics`: how the consumer's cost grows with the work. Each
 * point creates its own topics (one topic of N queues on the queues curve; T topics of 4 queues on
 * the topics curve), fills them, and consumes them once with a fresh group: rocketwire in this
 * process, then Java's DefaultMQPushConsumer (with --vs java) on the same messages. Per point:
 * throughput (first to last message), client CPU per message, rebalance time (start() until the
 * consumer owns every queue; Java's is not observable from outside, so its start() → first message
 * is given beside rocketwire's), and the heartbeat's body bytes, full and V2 without subscriptions.
 */
import { AdminClient } from '../../lib/admin/index.js';
import { encodeHeartbeatBodies } from '../../lib/client/heartbeat.js';
import { ConsumeConcurrentlyStatus, PushConsumer, type MessageExt } from '../../lib/consumer/index.js';
import { pushConsumerImpl } from '../../lib/consumer/push/push-consumer.js';
import { Producer, type Message } from '../../lib/producer/index.js';
import { renderCurveSvg } from './chart.js';
import { runJavaPeer } from './peers.js';
import { UniqueCount, untilCounted } from './run.js';

export interface CurveOptions {
  namesrv: string;
  axis: 'queues' | 'topics';
  points: number[];
  messages: number;
  size: number;
  java: boolean;
  /** Names of this run's topics begin with it. */
  prefix: string;
  log: (line: string) => void;
}

export interface CurveSide {
  msgsPerSec: number;
  cpuUsPerMsg: number;
  /** start() until the first message was handled. */
  firstMessageMs: number;
  complete: boolean;
}

export interface CurvePoint {
  x: number;
  topics: number;
  queues: number;
  messages: number;
  rocketwire: CurveSide & {
    /** start() until the consumer owned every queue of its topics. */
    rebalanceMs: number;
    heartbeatFullBytes: number;
    heartbeatWithoutSubBytes: number;
    /**
     * Heartbeats the consumer's client instance sent until start() returned (start()'s own and the
     * first rebalance's; the scheduled one 1 s after start too when start() lasted that long), and
     * their body bytes.
     */
    startHeartbeats: number;
    startHeartbeatBytes: number;
  };
  java?: CurveSide & { peakRssMb: number };
}

/** Queues per topic on the topics curve (256 topics make the 1024 queues of the queues curve's end). */
export const TOPIC_CURVE_QUEUES = 4;
const BATCH = 32;

export async function runCurve(o: CurveOptions): Promise<CurvePoint[]> {
  const admin = new AdminClient({ namesrvAddr: o.namesrv, mqClientApiTimeoutMs: 10_000 });
  const out: CurvePoint[] = [];
  try {
    for (const x of o.points) {
      const topicsN = o.axis === 'queues' ? 1 : x;
      const perTopic = o.axis === 'queues' ? x : TOPIC_CURVE_QUEUES;
      const topics = Array.from({ length: topicsN }, (_, i) => `${o.prefix}_${o.axis}${x}_${i}`);
      for (const topic of topics)
        await admin.createOrUpdateTopic({ topic, readQueueNums: perTopic, writeQueueNums: perTopic });
      const messages = await fill(o, topics);
      o.log(`${o.axis} ${x}: ${topicsN} topic(s) × ${perTopic} queues, ${messages} messages; rocketwire…`);
      const rw = await consumeRocketwire(o, topics, topicsN * perTopic, messages);
      const point: CurvePoint = { x, topics: topicsN, queues: topicsN * perTopic, messages, rocketwire: rw };
      if (o.java) {
        o.log(`${o.axis} ${x}: java…`);
        const t0 = performance.now();
        const j = await runJavaPeer({
          namesrv: o.namesrv,
          topic: topics.join(','),
          expect: messages,
          timeoutMs: 180_000,
          t0,
          size: o.size,
        });
        point.java = {
          msgsPerSec: j.msgsPerSec,
          cpuUsPerMsg: (j.cpuMs * 1000) / Math.max(1, j.received),
          firstMessageMs: firstPointMs(j.series.points),
          complete: j.complete,
          peakRssMb: j.peakRssMb,
        };
      }
      out.push(point);
    }
  } finally {
    await admin.close();
  }
  return out;
}

/** The first progress sample that counted a message, in ms after the peer was started (the series' x is in s). */
function firstPointMs(points: [number, number][]): number {
  const p = points.find(([, rate]) => rate > 0);
  return p ? p[0] * 1000 : Number.NaN;
}

/** Sends `messages` spread over the topics in batches; bodies carry their global number (UniqueCount). */
async function fill(o: CurveOptions, topics: string[]): Promise<number> {
  const producer = new Producer({ group: `${o.prefix}_pg`, namesrvAddr: o.namesrv });
  await producer.start();
  const per = Math.max(BATCH, Math.ceil(o.messages / topics.length / BATCH) * BATCH);
  let index = 0;
  try {
    const template = Buffer.alloc(Math.max(8, o.size), 0x61);
    for (const topic of topics) {
      for (let sent = 0; sent < per; sent += BATCH) {
        const batch: Message[] = [];
        for (let k = 0; k < BATCH; k++, index++) {
          const body = Buffer.from(template);
          body.writeUInt32BE(0, 0);
          body.writeUInt32BE(index, 4);
          batch.push({ topic, body });
        }
        await producer.sendBatch(batch);
      }
    }
  } finally {
    await producer.shutdown();
  }
  return index;
}

async function consumeRocketwire(
  o: CurveOptions,
  topics: string[],
  queues: number,
  expect: number,
): Promise<CurvePoint['rocketwire']> {
  const n = new UniqueCount(expect);
  const consumer = new PushConsumer({
    consumerGroup: `${o.prefix}_rw_${o.axis}${topics.length}_${queues}`,
    namesrvAddr: o.namesrv,
    consumeFromWhere: 'first',
    subscriptions: Object.fromEntries(topics.map((t) => [t, '*'])),
  });
  const cpu0 = process.cpuUsage();
  const start = performance.now();
  let rebalanceMs = Number.NaN;
  // polled from before start(): start() itself may last until the queues are consumed
  const mine = new Set(topics);
  const watch = setInterval(() => {
    if (!Number.isNaN(rebalanceMs)) return;
    if (consumer.assignment().filter((mq) => mine.has(mq.topic)).length >= queues)
      rebalanceMs = performance.now() - start;
  }, 2);
  try {
    await consumer.start((msgs: MessageExt[]) => {
      n.add(msgs);
      return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
    });
    const started = { ...pushConsumerImpl(consumer).instance!.heartbeatStats };
    await untilCounted(n, expect, 60_000);
    const cpu = process.cpuUsage(cpu0);
    const instance = pushConsumerImpl(consumer).instance!;
    const bodies = encodeHeartbeatBodies(instance.heartbeatData(), true);
    const seconds = Math.max(1e-3, (n.lastAt - n.firstAt) / 1000);
    return {
      msgsPerSec: Math.max(0, n.unique - 1) / seconds,
      cpuUsPerMsg: (cpu.user + cpu.system) / Math.max(1, n.unique),
      firstMessageMs: n.firstAt - start,
      rebalanceMs,
      complete: n.unique === expect,
      heartbeatFullBytes: bodies.full.length,
      heartbeatWithoutSubBytes: bodies.withoutSub!.length,
      startHeartbeats: started.full + started.withoutSub,
      startHeartbeatBytes: started.bodyBytes,
    };
  } finally {
    clearInterval(watch);
    await consumer.shutdown();
  }
}

/** A table cell: the number with `digits` decimals, or "–" when there is none (or it is not finite). */
export function fmt(n: number | undefined, digits = 0): string {
  if (n === undefined || !Number.isFinite(n)) return '–';
  return n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

/** The curve as a Markdown table. */
export function curveTable(axis: CurveOptions['axis'], points: CurvePoint[]): string {
  const head =
    `| ${axis === 'queues' ? 'queues (1 topic)' : `topics (× ${TOPIC_CURVE_QUEUES} queues)`} | messages ` +
    '| rocketwire msgs/s | Java msgs/s | ÷ Java | CPU µs/msg rw | CPU µs/msg Java ' +
    '| rebalance ms rw | start → 1st msg ms rw / Java | heartbeat bytes full / V2 without sub ' +
    '| heartbeats by start() rw (body KB) |';
  const rows = points.map((p) => {
    const j = p.java;
    return (
      `| ${p.x} | ${fmt(p.messages)} | ${fmt(p.rocketwire.msgsPerSec)} | ${fmt(j?.msgsPerSec)} ` +
      `| ${j ? fmt(p.rocketwire.msgsPerSec / j.msgsPerSec, 2) : '–'} | ${fmt(p.rocketwire.cpuUsPerMsg, 1)} ` +
      `| ${fmt(j?.cpuUsPerMsg, 1)} | ${fmt(p.rocketwire.rebalanceMs)} ` +
      `| ${fmt(p.rocketwire.firstMessageMs)} / ${fmt(j?.firstMessageMs)} ` +
      `| ${fmt(p.rocketwire.heartbeatFullBytes)} / ${fmt(p.rocketwire.heartbeatWithoutSubBytes)} ` +
      `| ${fmt(p.rocketwire.startHeartbeats)} (${fmt(p.rocketwire.startHeartbeatBytes / 1000)}) |`
    );
  });
  return [head, `|${' --- |'.repeat(11)}`, ...rows].join('\n') + '\n';
}

/** Throughput against the axis (log scale), one line per client. */
export function curveSvg(axis: CurveOptions['axis'], points: CurvePoint[], title: string): string {
  const series = [
    { name: 'rocketwire', points: points.map((p) => [p.x, p.rocketwire.msgsPerSec] as [number, number]) },
  ];
  if (points.some((p) => p.java))
    series.push({
      name: 'Java DefaultMQPushConsumer',
      points: points.filter((p) => p.java).map((p) => [p.x, p.java!.msgsPerSec] as [number, number]),
    });
  return renderCurveSvg(title, axis === 'queues' ? 'queues (one topic)' : 'topics subscribed', 'msgs/s', series);
}
