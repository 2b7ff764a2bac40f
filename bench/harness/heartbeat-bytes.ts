/**
 * Heartbeat bytes per second at the broker, V1 against V2, rocketwire against Java:
 *
 *   node dist/bench/harness/heartbeat-bytes.js [--topics 256] [--queues 4] [--seconds 10] [--no-java]
 *
 * An embedded broker in this process (so its counters can be read: ConsumerManager.heartbeats,
 * the HEART_BEAT bodies it took) holds `topics` topics of `queues` queues. One client at a time
 * joins a new group subscribed to every topic, heartbeating every second (Java's reference client
 * is set to 1 s; rocketwire's heartbeatIntervalMs likewise); after a settling time, the broker's
 * counters over `seconds` give the body bytes and heartbeats per second. At the default 30 s
 * interval, divide by 30. Each client is alone on the broker while it is measured.
 */
import { benchArgs } from './args.js';
import { startBroker } from '../../lib/broker/index.js';
import { AdminClient } from '../../lib/admin/index.js';
import { ConsumeConcurrentlyStatus, PushConsumer } from '../../lib/consumer/index.js';
import { startJavaConsumer } from '../../test/interop/java-client.js';

interface Row {
  client: string;
  heartbeatsPerSec: number;
  fullPerSec: number;
  withoutSubPerSec: number;
  bodyBytesPerSec: number;
  bytesPerHeartbeat: number;
}

const { values } = benchArgs('heartbeat-bytes', {
  options: {
    topics: { type: 'string', default: '256' },
    queues: { type: 'string', default: '4' },
    seconds: { type: 'string', default: '10' },
    settle: { type: 'string', default: '4' },
    'no-java': { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
  },
});
const topicsN = Number(values.topics);
const queues = Number(values.queues);
const seconds = Number(values.seconds);
const settleMs = Number(values.settle) * 1000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const broker = await startBroker({ queues });
const counts = broker.instances[0]!.consumers.heartbeats;
const prefix = `hb_${Date.now().toString(36)}`;
const topics = Array.from({ length: topicsN }, (_, i) => `${prefix}_${i}`);
const admin = new AdminClient({ namesrvAddr: broker.namesrv });
for (const topic of topics) await admin.createOrUpdateTopic({ topic, readQueueNums: queues, writeQueueNums: queues });
await admin.close();

async function window(client: string): Promise<Row> {
  await sleep(settleMs);
  const a = { ...counts };
  await sleep(seconds * 1000);
  const b = { ...counts };
  const full = (b.full - a.full) / seconds;
  const lean = (b.withoutSub - a.withoutSub) / seconds;
  const bytes = (b.bodyBytes - a.bodyBytes) / seconds;
  return {
    client,
    heartbeatsPerSec: full + lean,
    fullPerSec: full,
    withoutSubPerSec: lean,
    bodyBytesPerSec: bytes,
    bytesPerHeartbeat: bytes / Math.max(1e-9, full + lean),
  };
}

async function rocketwire(v2: boolean): Promise<Row> {
  const c = new PushConsumer({
    consumerGroup: `${prefix}_rw_${v2 ? 'v2' : 'v1'}`,
    namesrvAddr: broker.namesrv,
    heartbeatIntervalMs: 1000,
    useHeartbeatV2: v2,
    subscriptions: Object.fromEntries(topics.map((t) => [t, '*'])),
  });
  await c.start(() => ConsumeConcurrentlyStatus.CONSUME_SUCCESS);
  try {
    return await window(`rocketwire ${v2 ? 'V2' : 'V1'}`);
  } finally {
    await c.shutdown();
  }
}

async function java(v2: boolean): Promise<Row> {
  const c = await startJavaConsumer({
    namesrv: broker.namesrv,
    topic: topics.join(','),
    group: `${prefix}_java_${v2 ? 'v2' : 'v1'}`,
    expect: 1_000_000_000,
    timeoutMs: settleMs + seconds * 1000 + 60_000,
    bench: true,
    jvmArgs: v2 ? ['-Dcom.rocketmq.heartbeat.v2=true'] : [],
  });
  try {
    return await window(`Java 5.3.3 ${v2 ? 'V2' : 'V1'}`);
  } finally {
    await c.stop();
  }
}

const rows: Row[] = [];
try {
  for (const v2 of [false, true]) {
    rows.push(await rocketwire(v2));
    if (!values['no-java']) rows.push(await java(v2));
    // the member left: let the broker drop the channel before the next client's window
    await sleep(1000);
  }
} finally {
  await broker.close();
}
if (values.json) process.stdout.write(JSON.stringify({ topics: topicsN, queues, seconds, rows }) + '\n');
else {
  process.stdout.write(
    `heartbeats at the broker: ${topicsN} topics × ${queues} queues, 1 s interval, ${seconds} s window\n` +
      '| client | heartbeats/s | full/s | without sub/s | body bytes/s | bytes per heartbeat |\n' +
      '| --- | --- | --- | --- | --- | --- |\n' +
      rows
        .map(
          (r) =>
            `| ${r.client} | ${r.heartbeatsPerSec.toFixed(2)} | ${r.fullPerSec.toFixed(2)} | ${r.withoutSubPerSec.toFixed(2)} ` +
            `| ${Math.round(r.bodyBytesPerSec)} | ${Math.round(r.bytesPerHeartbeat)} |`,
        )
        .join('\n') +
      '\n',
  );
}
