/**
 * Producer cost on loopback: rocketwire's Producer (send of 1 KiB messages, and sendBatch of 32 of
 * them) against a minimal broker that answers every send at once, compared with the ceiling measured in
 * the same run: a bare RemotingClient invoking pre-built frames of the same size at the same
 * concurrency (no validation, properties, UNIQ_KEY, queue selection or result parsing). The broker runs
 * in a child process so that CPU time measured here is the client's alone. Output: one JSON document.
 *
 *   node dist/bench/producer/index.js [--quick] [--rounds N] [--round-ms MS] [--concurrency C]
 */
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import {
  createRequest,
  createResponse,
  encodeBatch,
  RequestCode,
  ResponseCode,
  SendMessageRequestHeaderV2,
  type RemotingCommand,
} from '../../protocol/index.js';
import { RemotingClient, RemotingServer } from '../../lib/remoting/index.js';
import { Producer } from '../../lib/producer/index.js';

const BODY_BYTES = 1024;
const BATCH = 32;
const TOPIC = 'BenchTopic';

async function runServer(): Promise<void> {
  const server = new RemotingServer();
  const { port } = await server.listen(0, '127.0.0.1');
  const addr = `127.0.0.1:${port}`;
  const route = JSON.stringify({
    brokerDatas: [{ brokerAddrs: { '0': addr }, brokerName: 'broker-a', cluster: 'DefaultCluster' }],
    filterServerTable: {},
    queueDatas: [{ brokerName: 'broker-a', perm: 6, readQueueNums: 4, topicSysFlag: 0, writeQueueNums: 4 }],
  });
  server.registerProcessor(RequestCode.GET_ROUTEINFO_BY_TOPIC, (req) =>
    createResponse(req, ResponseCode.SUCCESS, { body: Buffer.from(route) }),
  );
  server.registerProcessor(RequestCode.HEART_BEAT, (req) => createResponse(req, ResponseCode.SUCCESS));
  server.registerProcessor(RequestCode.UNREGISTER_CLIENT, (req) => createResponse(req, ResponseCode.SUCCESS));
  let offset = 0;
  const answer = (req: RemotingCommand): RemotingCommand =>
    createResponse(req, ResponseCode.SUCCESS, {
      extFields: {
        msgId: '7F00000100002A9F0000000000000000',
        queueId: req.extFields?.e ?? '0',
        queueOffset: String(offset++),
        MSG_REGION: 'DefaultRegion',
        TRACE_ON: 'true',
      },
    });
  server.registerProcessor(RequestCode.SEND_MESSAGE_V2, answer);
  server.registerProcessor(RequestCode.SEND_BATCH_MESSAGE, answer);
  process.send!({ addr });
  process.on('message', (m) => {
    if (m === 'stop') void server.close().then(() => process.exit(0));
  });
}

interface Round {
  msgsPerSec: number;
  cpuUsPerMsg: number;
}

/** Keeps `concurrency` calls of `op` (each carrying `perCall` messages) in flight for `ms`. */
async function round(op: () => Promise<unknown>, perCall: number, concurrency: number, ms: number): Promise<Round> {
  let msgs = 0;
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const end = Date.now() + ms;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (Date.now() < end) {
        await op();
        msgs += perCall;
      }
    }),
  );
  const wallS = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = process.cpuUsage(cpu0);
  return {
    msgsPerSec: Math.round(msgs / wallS),
    cpuUsPerMsg: Math.round(((cpu.user + cpu.system) / msgs) * 100) / 100,
  };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

interface Case {
  name: string;
  op: () => Promise<unknown>;
  perCall: number;
}

/**
 * Warms every case up, then runs the cases in turn round after round (A B C D A B C D …) so that a
 * change in machine load hits them alike; reports the median of each.
 */
async function measure(
  cases: Case[],
  concurrency: number,
  rounds: number,
  ms: number,
): Promise<Record<string, unknown>[]> {
  for (const c of cases) await round(c.op, c.perCall, concurrency, Math.min(ms, 500));
  const all = cases.map(() => [] as Round[]);
  for (let i = 0; i < rounds; i++) {
    for (const [j, c] of cases.entries()) all[j]!.push(await round(c.op, c.perCall, concurrency, ms));
  }
  return cases.map((c, j) => ({
    name: c.name,
    msgsPerSec: median(all[j]!.map((r) => r.msgsPerSec)),
    cpuUsPerMsg: median(all[j]!.map((r) => r.cpuUsPerMsg)),
    rounds: all[j],
  }));
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const opt = (name: string, def: number): number => {
    const i = args.indexOf(`--${name}`);
    return i >= 0 ? Number(args[i + 1]) : def;
  };
  const quick = args.includes('--quick');
  const rounds = opt('rounds', quick ? 3 : 5);
  const ms = opt('round-ms', quick ? 1000 : 2000);
  const concurrency = opt('concurrency', 16);

  const child: ChildProcess = fork(fileURLToPath(import.meta.url), ['--server'], {
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const [{ addr }] = (await once(child, 'message')) as [{ addr: string }];
  const body = Buffer.alloc(BODY_BYTES, 0x61);

  const producer = new Producer({ namesrvAddr: addr, group: 'bench_pg', clientIp: '127.0.0.1' });
  await producer.start();
  const msg = { topic: TOPIC, body, tags: 'TagA', keys: 'k1' };
  const batch = Array.from({ length: BATCH }, () => msg);

  // The ceiling: the same frames, pre-built once, through a bare RemotingClient.
  const raw = new RemotingClient();
  const fields = {
    producerGroup: 'bench_pg',
    topic: TOPIC,
    defaultTopic: 'TBW102',
    defaultTopicQueueNums: 4,
    queueId: 0,
    sysFlag: 0,
    bornTimestamp: Date.now(),
    flag: 0,
    properties:
      'KEYS\u0001k1\u0002UNIQ_KEY\u00017F000001000000000000000000000000\u0002WAIT\u0001true\u0002TAGS\u0001TagA',
    reconsumeTimes: 0,
    unitMode: false,
    batch: false,
    bname: 'broker-a',
  };
  const single = SendMessageRequestHeaderV2.encode(fields);
  const batchExt = SendMessageRequestHeaderV2.encode({ ...fields, batch: true, properties: 'WAIT\u0001true' });
  const batchBody = encodeBatch(batch.map(() => ({ body, properties: fields.properties })));
  const rawSingle = (): Promise<RemotingCommand> =>
    raw.invoke(addr, createRequest(RequestCode.SEND_MESSAGE_V2, { extFields: single, body }));
  const rawBatch = (): Promise<RemotingCommand> =>
    raw.invoke(addr, createRequest(RequestCode.SEND_BATCH_MESSAGE, { extFields: batchExt, body: batchBody }));

  const results = await measure(
    [
      { name: 'remoting-invoke-single (ceiling)', op: rawSingle, perCall: 1 },
      { name: 'producer-send', op: () => producer.send(msg), perCall: 1 },
      { name: `remoting-invoke-batch${BATCH} (ceiling)`, op: rawBatch, perCall: BATCH },
      { name: `producer-sendBatch${BATCH}`, op: () => producer.sendBatch(batch), perCall: BATCH },
    ],
    concurrency,
    rounds,
    ms,
  );
  await producer.shutdown();
  await raw.close();
  child.send('stop');
  await once(child, 'exit');
  const ratio = (a: number, b: number): number =>
    Math.round((Number(results[a]!.msgsPerSec) / Number(results[b]!.msgsPerSec)) * 100) / 100;
  process.stdout.write(
    JSON.stringify(
      {
        bench: 'producer',
        node: process.version,
        bodyBytes: BODY_BYTES,
        batch: BATCH,
        concurrency,
        rounds,
        roundMs: ms,
        results,
        ratios: { sendVsCeiling: ratio(1, 0), sendBatchVsCeiling: ratio(3, 2) },
      },
      null,
      2,
    ) + '\n',
  );
}

if (process.argv.includes('--server')) void runServer();
else
  main().catch((err: unknown) => {
    process.stderr.write(`bench/producer: ${(err as Error).message}\n`);
    process.exitCode = 1;
  });
