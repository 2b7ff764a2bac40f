/**
 * The ali-ons push consumer as a benchmark peer, run in its own process by `rocketwire bench --vs ali-ons`.
 * argv: namesrv topic group expect timeoutMs. Prints JSON lines: progress every 100 ms, then one
 * {"type":"bench"} line with the first and last message times, as the Java reference client does.
 * ali-ons is a development dependency of rocketwire, used only here.
 */
/* eslint-disable @typescript-eslint/no-require-imports */
const [namesrv, topic, group, expectText, timeoutText] = process.argv.slice(2);
const expect = Number(expectText);
const timeoutMs = Number(timeoutText);

function print(obj: Record<string, unknown>): void {
  process.stdout.write(JSON.stringify(obj) + '\n');
}

async function main(): Promise<void> {
  let ons: { Consumer: new (options: Record<string, unknown>) => AliConsumer };
  try {
    ons = require('ali-ons');
  } catch {
    print({ type: 'error', message: 'ali-ons is not installed (it is a development dependency: run npm ci in the clone)' });
    process.exit(2);
  }
  let received = 0;
  let firstTs = 0;
  let lastTs = 0;
  let done: () => void = () => undefined;
  const finished = new Promise<void>((r) => (done = r));
  const consumer = new ons.Consumer({
    // ali-ons asks an HTTP address server for name servers unless nameSrv is given; it never calls this client then.
    httpclient: { request: async () => ({ status: 404, data: '' }) },
    nameSrv: namesrv,
    consumerGroup: group,
    accessKeyId: 'rocketwire-bench',
    accessKeySecret: 'rocketwire-bench',
    consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
    persistent: false,
  });
  consumer.on('error', () => undefined);
  consumer.subscribe(topic!, '*', async () => {
    const now = Date.now();
    if (firstTs === 0) firstTs = now;
    lastTs = now;
    received++;
    if (received === expect) done();
  });
  await consumer.ready();
  print({ type: 'started', group, topic });
  const progress = setInterval(() => print({ type: 'progress', received, ts: Date.now() }), 100);
  const timer = setTimeout(done, timeoutMs);
  await finished;
  clearInterval(progress);
  clearTimeout(timer);
  print({ type: 'bench', received, expected: expect, complete: received >= expect, firstTs, lastTs });
  await Promise.race([consumer.close(), new Promise((r) => setTimeout(r, 3000))]);
  process.exit(0);
}

interface AliConsumer {
  on(event: string, fn: (err: unknown) => void): void;
  subscribe(topic: string, expr: string, fn: (msg: unknown) => Promise<void>): void;
  ready(): Promise<void>;
  close(): Promise<void>;
}

main().catch((err: Error) => {
  print({ type: 'error', message: err.message });
  process.exit(1);
});
