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
  console.log(${JSON.stringify(OK_LINE)});
}

main().catch((err: unknown) => {
  console.error(err instanceof RocketwireError ? err.name + ': ' + err.message : err);
  process.exitCode = 1;
});
`,
};
