/**
 * One of the N consumer processes of `rocketwire bench --consumers N` (see group.ts): a rocketwire
 * push consumer in the round's group, which the parent starts N times.
 *
 * The handler is gated: messages pulled before the parent writes `go` on stdin wait in the handler,
 * so that no message is handled (and no offset moves) while the group's rebalance is still moving
 * queues between the processes. Once every process holds its share the parent writes `go`; `stop`
 * (or the end of stdin) shuts the consumer down and prints the result.
 *
 * argv: JSON of ChildOptions. Prints JSON lines on stdout:
 *   {type:'assignment', queues:['broker-a:0', ...]}   each time the held queues change
 *   {type:'progress', received, unique, ts}            every 100 ms after go
 *   {type:'bench', received, unique, firstTs, lastTs, seen, pulls, gc, flowControlPauses, complete}
 * where ts, firstTs and lastTs are epoch milliseconds (comparable across processes) and `seen` is a
 * base64 bitmap of the message numbers handled (bit i of byte i >> 3, least significant first).
 */
import { createInterface } from 'node:readline';
import { ConsumeConcurrentlyStatus, PushConsumer, type MessageExt } from '../../lib/consumer/index.js';
import { exitAfterStdout } from './exit-flushed.js';
import { GcWatcher } from './run.js';

export interface ChildOptions {
  namesrv: string;
  topic: string;
  group: string;
  expect: number;
  consumeBatch: number;
  handlerMs: number;
  /** Handler calls at once (consumeThreadMin/Max). */
  consumeThreads: number;
  serializeType: 'JSON' | 'ROCKETMQ';
}

const opts = JSON.parse(process.argv[2] ?? '{}') as ChildOptions;
const print = (line: object): void => {
  process.stdout.write(JSON.stringify(line) + '\n');
};
const epochMs = (): number => performance.timeOrigin + performance.now();

const seen = new Uint8Array(Math.ceil(opts.expect / 8));
let received = 0;
let unique = 0;
let firstTs = 0;
let lastTs = 0;
let open = false;
let openGate!: () => void;
const gate = new Promise<void>((resolve) => (openGate = resolve));

function count(msgs: MessageExt[]): void {
  for (const m of msgs) {
    const b = m.body;
    if (b.length < 8) continue;
    const idx = b.readUInt32BE(0) * 0x1_0000_0000 + b.readUInt32BE(4);
    if (idx >= opts.expect) continue;
    received++;
    const bit = 1 << (idx & 7);
    if ((seen[idx >> 3]! & bit) === 0) {
      seen[idx >> 3]! |= bit;
      unique++;
    }
    lastTs = epochMs();
    if (firstTs === 0) firstTs = lastTs;
  }
}

const handle = async (msgs: MessageExt[]): Promise<ConsumeConcurrentlyStatus> => {
  if (!open) await gate;
  count(msgs);
  if (opts.handlerMs > 0) await new Promise((r) => setTimeout(r, opts.handlerMs));
  return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
};
// After the gate opens a no-op handler answers synchronously, as the in-process bench consumer does.
const handler = (msgs: MessageExt[]): ConsumeConcurrentlyStatus | Promise<ConsumeConcurrentlyStatus> => {
  if (open && opts.handlerMs === 0) {
    count(msgs);
    return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
  }
  return handle(msgs);
};

async function main(): Promise<void> {
  const consumer = new PushConsumer({
    consumerGroup: opts.group,
    namesrvAddr: opts.namesrv,
    // The client id (ip@instance) must differ between the processes of one group, or the brokers see one consumer.
    instanceName: `bench-${process.pid}`,
    consumeFromWhere: 'first',
    consumeMessageBatchMaxSize: opts.consumeBatch,
    consumeThreadMin: opts.consumeThreads,
    consumeThreadMax: opts.consumeThreads,
    subscriptions: { [opts.topic]: '*' },
    serializeType: opts.serializeType,
  });
  const stopped = new Promise<void>((resolve) => {
    const rl = createInterface({ input: process.stdin });
    rl.on('line', (line) => {
      if (line.trim() === 'go' && !open) {
        open = true;
        openGate();
      } else if (line.trim() === 'stop') resolve();
    });
    rl.once('close', () => resolve());
  });
  const gc = new GcWatcher().start();
  await consumer.start(handler);
  let held = '';
  const watch = setInterval(() => {
    const queues = consumer
      .assignment()
      .filter((q) => q.topic === opts.topic)
      .map((q) => `${q.brokerName}:${q.queueId}`)
      .sort();
    const key = queues.join(',');
    if (key !== held) {
      held = key;
      print({ type: 'assignment', queues });
    }
  }, 20);
  const progress = setInterval(() => {
    if (open) print({ type: 'progress', received, unique, ts: epochMs() });
  }, 100);
  await stopped;
  clearInterval(watch);
  clearInterval(progress);
  openGate();
  const st = consumer.stats();
  await consumer.shutdown();
  print({
    type: 'bench',
    received,
    unique,
    firstTs,
    lastTs,
    complete: true,
    seen: Buffer.from(seen.buffer, seen.byteOffset, seen.byteLength).toString('base64'),
    pulls: st.pulls,
    consumeThreads: opts.consumeThreads,
    gc: gc.stop(),
    flowControlPauses: { ...st.flowControlPauses },
  });
}

main().then(
  () => exitAfterStdout(0),
  (err: Error) => {
    process.stderr.write(`bench consumer: ${err.message}\n`);
    process.exit(1);
  },
);
