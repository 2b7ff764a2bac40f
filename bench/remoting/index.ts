/**
 * Remoting round trips on loopback: rocketwire (a RemotingConnection, and a RemotingClient with its
 * pool of one) against a minimal echo RemotingServer, with 1, 16 and 256 calls in flight; and, as the
 * ceiling measured in the same run, a plain `net` client sending the very same request bytes to a
 * plain TCP echo at the same concurrency. The servers run in a worker thread so the client side has
 * the main thread to itself. Output: one JSON document on stdout.
 *
 *   node dist/bench/remoting/index.js [--quick] [--rounds N] [--round-ms MS]
 *     [--levels 1,16,256]   the concurrency levels
 *     [--only MODE,…]       only these of raw, connection, connection-rocketmq, client (to profile one: node --cpu-prof …)
 */
import net from 'node:net';
import { Worker, isMainThread, parentPort } from 'node:worker_threads';
import { once } from 'node:events';
import {
  ResponseCode,
  createRequest,
  createResponse,
  encodeCommand,
  type RemotingCommand,
} from '../../protocol/index.js';
import { RemotingClient, RemotingConnection, RemotingServer } from '../../lib/remoting/index.js';

const ECHO_CODE = 11;
const BODY_BYTES = 256;
// A pull-request-sized header: what a consumer sends most.
const EXT_FIELDS: Record<string, string> = {
  consumerGroup: 'bench_group',
  topic: 'BenchTopic',
  queueId: '3',
  queueOffset: '123456',
  maxMsgNums: '32',
  sysFlag: '3',
  commitOffset: '123400',
  suspendTimeoutMillis: '15000',
  subscription: '*',
  subVersion: '1712345678000',
  expressionType: 'TAG',
};

// One body for every call: the remoting layer writes a body as it is given, never copying it, so
// a caller may send the same buffer many times; the raw echo sends one prepared frame too. (A new
// Buffer.alloc per call cost ~0.7 µs and a backing store for the GC to track, the caller's cost
// rather than the layer's.) The header is built anew for every call, as a caller does.
const BODY = Buffer.alloc(BODY_BYTES, 0x61);

function makeRequest(): RemotingCommand {
  return createRequest(ECHO_CODE, { extFields: { ...EXT_FIELDS }, body: BODY });
}

async function runServers(): Promise<void> {
  const server = new RemotingServer();
  server.registerProcessor(ECHO_CODE, (req) =>
    createResponse(req, ResponseCode.SUCCESS, { extFields: req.extFields, body: req.body }),
  );
  const { port: remotingPort } = await server.listen(0, '127.0.0.1');
  const raw = net.createServer((s) => {
    s.setNoDelay(true);
    s.on('data', (chunk) => s.write(chunk));
    s.on('error', () => undefined);
  });
  raw.listen(0, '127.0.0.1');
  await once(raw, 'listening');
  const rawPort = (raw.address() as net.AddressInfo).port;
  parentPort!.postMessage({ remotingPort, rawPort });
  parentPort!.on('message', async (m) => {
    if (m === 'stop') {
      await server.close();
      raw.close();
      process.exit(0);
    }
  });
}

type Invoker = () => Promise<unknown>;

interface Round {
  /** Round trips per second (wall clock). */
  rate: number;
  /** Process CPU time (both threads, user + system) per round trip, in microseconds. */
  cpuUs: number;
}

/** Keep `concurrency` calls in flight for `ms`. */
async function closedLoop(invoke: Invoker, concurrency: number, ms: number): Promise<Round> {
  const cpu0 = process.cpuUsage();
  let done = 0;
  let stop = false;
  const start = performance.now();
  const end = start + ms;
  async function lane(): Promise<void> {
    while (!stop) {
      await invoke();
      done++;
      if ((done & 63) === 0 && performance.now() >= end) stop = true;
    }
  }
  const timer = setTimeout(() => (stop = true), ms);
  await Promise.all(Array.from({ length: concurrency }, lane));
  clearTimeout(timer);
  const cpu = process.cpuUsage(cpu0);
  return { rate: done / ((performance.now() - start) / 1000), cpuUs: (cpu.user + cpu.system) / done };
}

/** The ceiling: the same request bytes over plain TCP to a plain echo, counting whole frames back. */
async function rawLoop(port: number, frame: Buffer, concurrency: number, ms: number): Promise<Round> {
  const socket = net.connect({ port, host: '127.0.0.1' });
  socket.setNoDelay(true);
  await once(socket, 'connect');
  const size = frame.length;
  let received = 0;
  let completed = 0;
  let stop = false;
  const cpu0 = process.cpuUsage();
  const start = performance.now();
  const finished = new Promise<void>((resolve) => {
    let outstanding = concurrency;
    socket.on('data', (chunk: Buffer) => {
      received += chunk.length;
      const nowDone = Math.floor(received / size);
      for (; completed < nowDone; completed++) {
        if (stop) {
          if (--outstanding === 0) resolve();
        } else {
          socket.write(frame);
        }
      }
    });
  });
  const timer = setTimeout(() => (stop = true), ms);
  for (let i = 0; i < concurrency; i++) socket.write(frame);
  await finished;
  clearTimeout(timer);
  const rate = completed / ((performance.now() - start) / 1000);
  const cpu = process.cpuUsage(cpu0);
  socket.destroy();
  return { rate, cpuUs: (cpu.user + cpu.system) / completed };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

function argValue(name: string, dflt: number): number {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
}

async function main(): Promise<void> {
  const quick = process.argv.includes('--quick');
  const rounds = argValue('--rounds', quick ? 3 : 5);
  const roundMs = argValue('--round-ms', quick ? 300 : 450);
  const warmMs = quick ? 200 : 300;
  const levelsArg = process.argv.indexOf('--levels');
  const levels = levelsArg >= 0 ? process.argv[levelsArg + 1]!.split(',').map(Number) : [1, 16, 256];
  const onlyArg = process.argv.indexOf('--only');
  const only = onlyArg >= 0 ? new Set(process.argv[onlyArg + 1]!.split(',')) : null;

  const worker = new Worker(new URL(import.meta.url));
  const [{ remotingPort, rawPort }] = (await once(worker, 'message')) as [{ remotingPort: number; rawPort: number }];
  const addr = `127.0.0.1:${remotingPort}`;

  const conn = await RemotingConnection.connect(addr, { defaultTimeoutMs: 30_000 });
  // The same calls with ROCKETMQ (binary) headers, which every Apache broker and name server reads
  // and answers in kind: the JSON header codec is a sixth of each side's CPU in the profile.
  const connBinary = await RemotingConnection.connect(addr, {
    defaultTimeoutMs: 30_000,
    requestSerializeType: 'ROCKETMQ',
  });
  const client = new RemotingClient({ defaultTimeoutMs: 30_000 });
  const pooled = new RemotingClient({ defaultTimeoutMs: 30_000, poolSize: 2 });
  // Check the echo works and learn the response size.
  const probe = await conn.invoke(makeRequest());
  if (probe.code !== ResponseCode.SUCCESS || probe.body?.length !== BODY_BYTES)
    throw new Error('echo server misbehaves');
  const requestFrame = encodeCommand({ ...makeRequest(), opaque: 1 });
  const responseFrame = encodeCommand(probe);

  const modes: Record<string, (c: number, ms: number) => Promise<Round>> = {
    raw: (c, ms) => rawLoop(rawPort, requestFrame, c, ms),
    connection: (c, ms) => closedLoop(() => conn.invoke(makeRequest()), c, ms),
    'connection-rocketmq': (c, ms) => closedLoop(() => connBinary.invoke(makeRequest()), c, ms),
    client: (c, ms) => closedLoop(() => client.invoke(addr, makeRequest()), c, ms),
  };

  const results = [];
  for (const c of levels) {
    const names = Object.keys(modes).filter((n) => only === null || only.has(n));
    const perMode: Record<string, Round[]> = Object.fromEntries(names.map((n) => [n, []]));
    for (const n of names) await modes[n]!(c, warmMs);
    // Interleave the modes round by round so that load from elsewhere on the machine hits all alike.
    for (let r = 0; r < rounds; r++) for (const n of names) perMode[n]!.push(await modes[n]!(c, roundMs));
    const rate = Object.fromEntries(names.map((n) => [n, Math.round(median(perMode[n]!.map((x) => x.rate)))]));
    const cpu = Object.fromEntries(names.map((n) => [n, +median(perMode[n]!.map((x) => x.cpuUs)).toFixed(1)]));
    results.push({
      concurrency: c,
      roundTripsPerSec: rate,
      cpuMicrosPerRoundTrip: cpu,
      ratioToRaw: {
        connection: +(rate.connection! / rate.raw!).toFixed(3),
        'connection-rocketmq': +(rate['connection-rocketmq']! / rate.raw!).toFixed(3),
        client: +(rate.client! / rate.raw!).toFixed(3),
      },
      cpuRatioToRaw: {
        connection: +(cpu.connection! / cpu.raw!).toFixed(2),
        'connection-rocketmq': +(cpu['connection-rocketmq']! / cpu.raw!).toFixed(2),
        client: +(cpu.client! / cpu.raw!).toFixed(2),
      },
      rounds: Object.fromEntries(names.map((n) => [n, perMode[n]!.map((x) => Math.round(x.rate))])),
    });
  }

  // A pool of 2 (calls alternate between its connections once both are open) against the single
  // connection of a pool of 1, same concurrency, interleaved.
  const poolRounds: Round[] = [];
  const fastRounds: Round[] = [];
  await closedLoop(() => pooled.invoke(addr, makeRequest()), 16, warmMs);
  for (let r = 0; r < rounds; r++) {
    poolRounds.push(await closedLoop(() => pooled.invoke(addr, makeRequest()), 16, roundMs));
    fastRounds.push(await closedLoop(() => client.invoke(addr, makeRequest()), 16, roundMs));
  }

  await client.close();
  await pooled.close();
  conn.close();
  connBinary.close();
  worker.postMessage('stop');
  await once(worker, 'exit');

  const out = {
    bench: 'remoting',
    node: process.version,
    setup: {
      loopback: '127.0.0.1',
      serversIn: 'worker thread',
      requestFrameBytes: requestFrame.length,
      echoResponseFrameBytes: responseFrame.length,
      rawEchoFrameBytes: requestFrame.length,
      rounds,
      roundMs,
      warmupMs: warmMs,
      statistic: 'median of rounds, round trips per second',
    },
    results,
    poolPath: {
      concurrency: 16,
      poolSize1Cached: {
        roundTripsPerSec: Math.round(median(fastRounds.map((x) => x.rate))),
        cpuMicrosPerRoundTrip: +median(fastRounds.map((x) => x.cpuUs)).toFixed(1),
      },
      poolSize2RoundRobin: {
        roundTripsPerSec: Math.round(median(poolRounds.map((x) => x.rate))),
        cpuMicrosPerRoundTrip: +median(poolRounds.map((x) => x.cpuUs)).toFixed(1),
      },
    },
  };
  process.stdout.write(JSON.stringify(out, null, 2) + '\n');
}

if (isMainThread) {
  main().catch((err) => {
    process.stderr.write(`bench/remoting failed: ${(err as Error).message}\n`);
    process.exit(1);
  });
} else {
  void runServers();
}
