/**
 * ali-ons as a benchmark peer, run in its own process by `rocketwire bench`.
 *
 * `--vs ali-ons`, its push consumer. argv: namesrv topic group expect timeoutMs. Prints JSON lines:
 * progress every 100 ms, then one {"type":"bench"} line with the first and last message times, as
 * the Java reference client does.
 *
 * `--produce-vs ali-ons`, its Producer. argv: produce namesrv topic group kind inFlight batch count
 * warmup size timeoutMs, kind sync or async (ali-ons has no batch send): `warmup` sends not
 * measured, then `count` measured ones driven as rocketwire's are (produce-driver.cts); progress
 * lines, then one {"type":"bench"} line with the span from the first to the last acknowledgement.
 * No AccessKey is given, so ali-ons signs nothing, as neither rocketwire nor Java does here.
 *
 * ali-ons is a development dependency of rocketwire, used only here.
 */
import { benchBody, benchTemplate, driveSends, newDriveResult } from './produce-driver.cjs';

const producing = process.argv[2] === 'produce';

function print(obj: Record<string, unknown>): void {
  process.stdout.write(JSON.stringify(obj) + '\n');
}

interface AliOns {
  Consumer: new (options: Record<string, unknown>) => AliConsumer;
  Producer: new (options: Record<string, unknown>) => AliProducer;
  Message: new (topic: string, tags: string, body: Buffer) => unknown;
}

function loadAliOns(): AliOns {
  try {
    return require('ali-ons') as AliOns;
  } catch {
    print({
      type: 'error',
      message: 'ali-ons is not installed (it is a development dependency: run npm ci in the clone)',
    });
    process.exit(2);
  }
}

// ali-ons asks an HTTP address server for name servers unless nameSrv is given; it never calls this client then.
const httpclient = { request: async () => ({ status: 404, data: '' }) };

async function consume(): Promise<void> {
  const [namesrv, topic, group, expectText, timeoutText, handlerMsText] = process.argv.slice(2);
  const expect = Number(expectText);
  const handlerMs = Number(handlerMsText ?? 0);
  const timeoutMs = Number(timeoutText);
  const ons = loadAliOns();
  let received = 0;
  let firstTs = 0;
  let lastTs = 0;
  let done: () => void = () => undefined;
  const finished = new Promise<void>((r) => (done = r));
  const consumer = new ons.Consumer({
    httpclient,
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
    if (handlerMs > 0) await new Promise((r) => setTimeout(r, handlerMs));
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

async function produce(): Promise<void> {
  const [
    ,
    namesrv,
    topic,
    group,
    kind,
    inFlightText,
    batchText,
    countText,
    warmupText,
    sizeText,
    timeoutText,
    compressOverText,
  ] = process.argv.slice(2);
  if (kind !== 'sync' && kind !== 'async') throw new Error(`ali-ons cannot send in mode ${kind}`);
  const mode = { kind, inFlight: Number(inFlightText), batch: Number(batchText) } as const;
  const count = Number(countText);
  const warmup = Number(warmupText);
  const ons = loadAliOns();
  const producer = new ons.Producer({
    httpclient,
    nameSrv: namesrv,
    producerGroup: group,
    persistent: false,
    ...(compressOverText ? { compressMsgBodyOverHowmuch: Number(compressOverText) } : {}),
  });
  producer.on('error', () => undefined);
  await producer.ready();
  print({ type: 'started', group, topic, mode: kind });
  const template = benchTemplate(Number(sizeText));
  const send = (i: number): Promise<unknown> => producer.send(new ons.Message(topic!, 'bench', benchBody(i, template)));
  const timer = setTimeout(() => {
    print({ type: 'error', message: `ali-ons producer did not finish in ${timeoutText} ms` });
    process.exit(3);
  }, Number(timeoutText));
  const w = warmup > 0 ? await driveSends(warmup, 0, mode, send) : null;
  const r = newDriveResult();
  const progress = setInterval(() => print({ type: 'progress', received: r.acked, ts: Date.now() }), 100);
  const cpu0 = process.cpuUsage();
  await driveSends(count, warmup, mode, send, r);
  const cpu = process.cpuUsage(cpu0);
  clearInterval(progress);
  clearTimeout(timer);
  const spanMs = r.lastAt - r.firstAt;
  print({
    type: 'bench',
    mode: kind,
    inFlight: mode.inFlight,
    received: r.acked,
    failed: r.failed,
    warmupFailed: w?.failed ?? 0,
    expected: count,
    complete: r.acked === count,
    spanMs,
    firstCount: r.firstCount,
    cpuMs: (cpu.user + cpu.system) / 1000,
    msgsPerSec: spanMs > 0 ? ((r.acked - r.firstCount) * 1000) / spanMs : 0,
    error: (r.firstError ?? w?.firstError)?.message ?? null,
  });
  await Promise.race([producer.close(), new Promise((res) => setTimeout(res, 3000))]);
  process.exit(0);
}

interface AliProducer {
  on(event: string, fn: (err: unknown) => void): void;
  ready(): Promise<void>;
  send(msg: unknown): Promise<unknown>;
  close(): Promise<void>;
}

interface AliConsumer {
  on(event: string, fn: (err: unknown) => void): void;
  subscribe(topic: string, expr: string, fn: (msg: unknown) => Promise<void>): void;
  ready(): Promise<void>;
  close(): Promise<void>;
}

(producing ? produce() : consume()).catch((err: Error) => {
  print({ type: 'error', message: err.message });
  process.exit(1);
});
