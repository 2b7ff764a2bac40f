// The user program of fresh-project.test.ts: what a new user of rocketwire writes after reading the
// README, in a project of its own (strict, NodeNext, no skipLibCheck). One file per usage so that a
// type error names the usage that broke.

export const tsconfig = {
  compilerOptions: {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    strict: true,
    outDir: 'dist',
    rootDir: 'src',
  },
  include: ['src'],
};

/** Greeting the program prints last, after closing everything; the test waits for it and exit code 0. */
export const OK_LINE = 'rocketwire fresh project: ok';

export const files: Record<string, string> = {
  // The codec on its own: encode a PULL_MESSAGE request, split it in two chunks, frame and decode it.
  'src/codec.ts': `
import {
  createRequest, decodeCommand, encodeCommand, FrameDecoder, PullMessageRequestHeader, PullSysFlag,
  RequestCode, type RemotingCommand,
} from 'rocketwire/protocol';

export function codecRoundTrip(): void {
  const request = createRequest(RequestCode.PULL_MESSAGE, {
    opaque: 1,
    extFields: PullMessageRequestHeader.encode({
      consumerGroup: 'cg1', topic: 'TopicTest', queueId: 0, queueOffset: 128, maxMsgNums: 32,
      sysFlag: PullSysFlag.FLAG_SUSPEND | PullSysFlag.FLAG_COMMIT_OFFSET, commitOffset: 120,
      suspendTimeoutMillis: 15000, subVersion: 1, expressionType: 'TAG',
    }),
  });
  const bytes = encodeCommand(request);
  const decoded: RemotingCommand[] = [];
  const decoder = new FrameDecoder();
  for (const chunk of [bytes.subarray(0, 3), bytes.subarray(3)]) {
    decoder.push(chunk, (frame) => decoded.push(decodeCommand(frame)));
  }
  const cmd = decoded[0];
  if (decoded.length !== 1 || cmd === undefined || cmd.code !== RequestCode.PULL_MESSAGE || cmd.opaque !== 1) {
    throw new Error('codec: the frame did not come back');
  }
  const header = PullMessageRequestHeader.decode(cmd.extFields);
  if (header.topic !== 'TopicTest' || header.queueOffset !== 128) throw new Error('codec: header fields differ');
}
`,
  // Known problem (a): an async handler returning the status as a string literal.
  'src/concurrent-async.ts': `
import type { MessageExt, PushConsumer } from 'rocketwire';

export async function startAsyncConsumer(consumer: PushConsumer, received: (who: string, msgs: MessageExt[]) => void): Promise<void> {
  await consumer.start(async (msgs) => {
    received('async', msgs);
    return 'CONSUME_SUCCESS';
  });
}
`,
  // A sync handler returning the enum value.
  'src/concurrent-sync.ts': `
import { ConsumeConcurrentlyStatus, type MessageExt, type PushConsumer } from 'rocketwire';

export async function startSyncConsumer(consumer: PushConsumer, received: (who: string, msgs: MessageExt[]) => void): Promise<void> {
  await consumer.start((msgs) => {
    received('sync', msgs);
    return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
  });
}
`,
  // An orderly consumer's handler (the consumer has orderly: true) returning the string literal.
  'src/orderly.ts': `
import type { MessageExt, PushConsumer } from 'rocketwire';

export async function startOrderlyConsumer(consumer: PushConsumer<true>, received: (who: string, msgs: MessageExt[]) => void): Promise<void> {
  await consumer.start(async (msgs) => {
    received('orderly', msgs);
    return 'SUCCESS';
  });
}
`,
  // The Node idioms, as a user would check them. Small waits poll for an event; no wall-clock wait
  // stands in for a timer: retry delays and offset flushes run on a ManualClock the broker shares.
  'src/idioms.ts': `
import net from 'node:net';
import {
  AdminClient, ManualClock, NameServerUnavailableError, Producer, PushConsumer,
  type Logger, type MessageExt,
} from 'rocketwire';
import { startBroker } from 'rocketwire/broker';

const turn = (ms = 10): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function until(what: string, ok: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 1500; i++) {
    if (await ok()) return;
    await turn();
  }
  throw new Error('timed out waiting for ' + what);
}

function check(ok: boolean, what: string): void {
  if (!ok) throw new Error('failed: ' + what);
}

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

/** The KafkaJS habit: an async handler that returns nothing acknowledges. */
export async function kafkajsHabit(): Promise<void> {
  const clock = new ManualClock();
  const broker = await startBroker({ queues: 2, clock, logger: false });
  const admin = new AdminClient({ namesrvAddr: broker.namesrv });
  // logger false: jumping the shared clock 30 s at a time times out the long polls in flight
  const consumer = new PushConsumer({ group: 'habit_cg', namesrvAddr: broker.namesrv, consumeFromWhere: 'first', clock, persistOffsetIntervalMs: 1000, logger: false });
  try {
    const producer = new Producer({ group: 'habit_pg', namesrvAddr: broker.namesrv });
    await producer.start();
    for (let i = 0; i < 20; i++) await producer.send({ topic: 'HabitTopic', body: 'm' + i });
    await producer.shutdown();
    const handled = new Map<string, number>();
    consumer.subscribe('HabitTopic');
    await consumer.start(async (msgs: MessageExt[]) => {
      for (const m of msgs) handled.set(m.body.toString(), (handled.get(m.body.toString()) ?? 0) + 1);
    });
    await until('20 messages handled', () => handled.size === 20);
    // past every retry delay a send-back would have had, and past the offset flush
    for (let i = 0; i < 6; i++) {
      clock.advance(30_000);
      await turn(20);
    }
    await until('the committed offsets', async () => (await admin.consumerProgress('habit_cg', 'HabitTopic')).totalLag === 0);
    const progress = await admin.consumerProgress('habit_cg', 'HabitTopic');
    check(progress.queues.reduce((n, q) => n + q.consumerOffset, 0) === 20, 'the committed offsets cover all 20');
    let retried = 0;
    try {
      for (const q of await admin.topicStatus('%RETRY%habit_cg')) retried += q.maxOffset;
    } catch (err) {
      if ((err as { errorCode?: string }).errorCode !== 'ERR_UNKNOWN_TOPIC') throw err;
    }
    check(retried === 0, 'no message was sent back (the retry topic is empty)');
    check([...handled.values()].every((n) => n === 1), 'each message handled once, nothing redelivered');
  } finally {
    await consumer.shutdown();
    await admin.close();
    await broker.close();
  }
}

/** A dead name server: start() rejects naming it, retriable; start() again once it is up. */
export async function deadNameServer(): Promise<void> {
  const port = await freePort();
  const addr = '127.0.0.1:' + port;
  const consumer = new PushConsumer({ group: 'dead_cg', namesrvAddr: addr, connectTimeoutMs: 1000, logger: false });
  consumer.subscribe('DeadTopic');
  const err = await consumer.start(async () => {}).then(() => null, (e: unknown) => e);
  check(err instanceof NameServerUnavailableError, 'start() rejects with NameServerUnavailableError');
  const e = err as NameServerUnavailableError;
  check(e.message.includes(addr) && e.retriable && e.errorCode === 'ERR_NAMESRV_UNAVAILABLE', 'it names the address and is retriable');
  check(consumer.state === 'CREATED', 'the consumer is back in its initial state');
  const broker = await startBroker({ queues: 1, namesrvPort: port, logger: false });
  try {
    await consumer.start(async () => {});
    check(consumer.state === 'RUNNING' && consumer.health().ready, 'the second start() works');
  } finally {
    await consumer.shutdown();
    await broker.close();
  }
}

/** A logger object hears a broker stop (warn) and come back (info). */
export async function loggerSeesBroker(): Promise<void> {
  const namesrvPort = await freePort();
  const brokerPort = await freePort();
  const lines: string[] = [];
  const logger: Logger = {
    debug: () => {},
    info: (m) => void lines.push('info ' + m),
    warn: (m) => void lines.push('warn ' + m),
    error: (m) => void lines.push('error ' + m),
  };
  let broker = await startBroker({ queues: 1, namesrvPort, brokerPort, logger: false });
  const { dataDir } = broker;
  const consumer = new PushConsumer({ group: 'logged_cg', namesrvAddr: broker.namesrv, logger, pullTimeDelayMsWhenException: 50, consumeFromWhere: 'first' });
  try {
    const producer = new Producer({ group: 'logged_pg', namesrvAddr: broker.namesrv });
    await producer.start();
    await producer.send({ topic: 'LoggedTopic', body: 'one' });
    await producer.shutdown();
    let got = 0;
    consumer.subscribe('LoggedTopic');
    await consumer.start(async () => {
      got++;
    });
    await until('the message', () => got === 1);
    await broker.close();
    await until('a warn line naming the broker', () => lines.some((l) => l.startsWith('warn ') && l.includes('127.0.0.1:' + brokerPort)));
    broker = await startBroker({ queues: 1, namesrvPort, brokerPort, dataDir, logger: false });
    await until('an info line when it answers again', () => lines.some((l) => l.startsWith('info ') && l.includes('answers again')));
  } finally {
    await consumer.shutdown();
    await broker.close();
  }
}
`,
  // The package from CommonJS (require(esm), Node >= 20.19): a .cjs file.
  'src/require.cjs': `
const rocketwire = require('rocketwire');
const { startBroker } = require('rocketwire/broker');
if (typeof rocketwire.PushConsumer !== 'function' || typeof rocketwire.Producer !== 'function' || typeof startBroker !== 'function') {
  throw new Error('require() did not give the classes');
}
console.log('require ok');
`,
  // Embedded broker on free ports, one message produced, consumed by three groups, everything closed.
  'src/main.ts': `
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  Producer, PushConsumer, RocketwireError, systemClock,
  type Clock, type MessageExt, type SendResult,
} from 'rocketwire';
import { startBroker, type EmbeddedBroker } from 'rocketwire/broker';
import { codecRoundTrip } from './codec.js';
import { deadNameServer, kafkajsHabit, loggerSeesBroker } from './idioms.js';
import { startAsyncConsumer } from './concurrent-async.js';
import { startSyncConsumer } from './concurrent-sync.js';
import { startOrderlyConsumer } from './orderly.js';

const BODY = 'hello from a fresh project';
const watchdog = setTimeout(() => {
  console.error('timed out');
  process.exit(2);
}, 60_000);
watchdog.unref();

async function main(): Promise<void> {
  codecRoundTrip();
  const dataDir = mkdtempSync(path.join(tmpdir(), 'rocketwire-fresh-broker-'));
  const clock: Clock = systemClock;
  const broker: EmbeddedBroker = await startBroker({ dataDir, queues: 2, clock });
  const consumers: PushConsumer<boolean>[] = [];
  try {
    const topic = 'FreshTopic';
    const producer = new Producer({ group: 'fresh_pg', namesrvAddr: broker.namesrv });
    await producer.start();
    let sent: SendResult;
    try {
      sent = await producer.send({ topic, body: BODY, tags: 'TagA' });
    } finally {
      await producer.shutdown();
    }
    if (sent.status !== 'SEND_OK') throw new Error('send: ' + sent.status);

    const got = new Map<string, MessageExt>();
    let allThree!: () => void;
    const consumedByAll = new Promise<void>((resolve) => (allThree = resolve));
    const received = (who: string, msgs: MessageExt[]): void => {
      for (const m of msgs) got.set(who, m);
      if (got.size === 3) allThree();
    };
    const options = (consumerGroup: string) => ({ consumerGroup, namesrvAddr: broker.namesrv, consumeFromWhere: 'first' as const });
    const a = new PushConsumer(options('fresh_cg_async')).subscribe(topic, 'TagA');
    await startAsyncConsumer(a, received);
    consumers.push(a);
    const s = new PushConsumer(options('fresh_cg_sync')).subscribe(topic, 'TagA');
    await startSyncConsumer(s, received);
    consumers.push(s);
    const o = new PushConsumer({ ...options('fresh_cg_orderly'), orderly: true }).subscribe(topic, 'TagA');
    await startOrderlyConsumer(o, received);
    consumers.push(o);

    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('consumed only by: ' + [...got.keys()].join(', '))), 30_000);
    });
    try {
      await Promise.race([consumedByAll, timeout]);
    } finally {
      clearTimeout(timer);
    }
    for (const [who, m] of got) {
      if (m.body.toString() !== BODY || m.topic !== topic) throw new Error(who + ' received another message');
    }
  } finally {
    for (const c of consumers) await c.shutdown();
    await broker.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
  await kafkajsHabit();
  await deadNameServer();
  await loggerSeesBroker();
  console.log(${JSON.stringify(OK_LINE)});
}

main().catch((err: unknown) => {
  console.error(err instanceof RocketwireError ? err.name + ': ' + err.message : err);
  process.exitCode = 1;
});
`,
};
