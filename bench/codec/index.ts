/**
 * Codec micro-benchmark: remoting headers (JSON and ROCKETMQ) of a typical PULL_MESSAGE request
 * and response, typed header encode/decode, and decodeMessages on pull bodies of 32 messages of
 * 1 KiB (plain and zlib-compressed), alone and with what a handler reads of each message (body,
 * msgId, keys and one property). The ceiling, measured in the same run on the same bytes, is
 * a memcpy: Buffer.copy of the whole pull body and 32 copies of one message each; ratios against
 * it are what to compare across machines. Warm-up, several timed rounds, median.
 *
 *   node dist/bench/codec/index.js [--rounds N] [--round-ms MS]
 */
import { deflateSync } from 'node:zlib';
import {
  createRequest,
  createResponse,
  decodeCommand,
  decodeMessages,
  encodeCommand,
  encodeStoredMessage,
  MessageSysFlag,
  PullMessageRequestHeader,
  PullMessageResponseHeader,
  RequestCode,
  ResponseCode,
  createUniqKey,
  type RemotingCommand,
} from '../../protocol/index.js';

const args = process.argv.slice(2);
function opt(name: string, dflt: number): number {
  const i = args.indexOf(name);
  return i >= 0 && args[i + 1] !== undefined ? Number(args[i + 1]) : dflt;
}
const ROUNDS = opt('--rounds', 7);
const ROUND_MS = opt('--round-ms', 150);
const WARMUP_MS = opt('--warmup-ms', 200);
const MESSAGES = 32;
const BODY = 1024;

let sink = 0; // consumed by every case so the work cannot be optimised away

interface CaseResult {
  name: string;
  bytesPerOp: number;
  opsPerSec: number;
  mbPerSec: number;
  /** Wall-clock ns per op (median round). */
  nsPerOp: number;
  /** CPU ns per op of this process (median round): steadier than wall time on a shared machine. */
  cpuNsPerOp: number;
  /** ops/s of each round, wall clock. */
  rounds: number[];
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

function measure(name: string, bytesPerOp: number, fn: () => void): CaseResult {
  const runFor = (ms: number): [opsPerSec: number, cpuNsPerOp: number] => {
    const end = process.hrtime.bigint() + BigInt(Math.round(ms * 1e6));
    const cpu0 = process.cpuUsage();
    const start = process.hrtime.bigint();
    let ops = 0;
    let batch = 1;
    for (;;) {
      for (let i = 0; i < batch; i++) fn();
      ops += batch;
      const now = process.hrtime.bigint();
      if (now >= end) {
        const cpu = process.cpuUsage(cpu0);
        return [ops / (Number(now - start) / 1e9), ((cpu.user + cpu.system) * 1000) / ops];
      }
      if (batch < 1024) batch *= 2;
    }
  };
  runFor(WARMUP_MS);
  const rounds: number[] = [];
  const cpu: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const [o, c] = runFor(ROUND_MS);
    rounds.push(o);
    cpu.push(c);
  }
  const ops = median(rounds);
  return {
    name,
    bytesPerOp,
    opsPerSec: Math.round(ops),
    mbPerSec: Math.round(((ops * bytesPerOp) / 1e6) * 10) / 10,
    nsPerOp: Math.round(1e9 / ops),
    cpuNsPerOp: Math.round(median(cpu)),
    rounds: rounds.map(Math.round),
  };
}

// --- inputs -----------------------------------------------------------------------------------
const pullRequestFields: PullMessageRequestHeader = {
  consumerGroup: 'cg1',
  topic: 'TopicTest',
  queueId: 0,
  queueOffset: 128,
  maxMsgNums: 32,
  sysFlag: 3,
  commitOffset: 120,
  suspendTimeoutMillis: 15000,
  subVersion: 1712345678000,
  expressionType: 'TAG',
  bname: 'broker-a',
};
const pullResponseFields: PullMessageResponseHeader = {
  suggestWhichBrokerId: 0,
  nextBeginOffset: 160,
  minOffset: 0,
  maxOffset: 100000,
};

function textBody(i: number): Buffer {
  let s = '';
  while (s.length < BODY) s += `order ${i} item ${s.length} status=PAID amount=${(i * 37) % 1000}.00 ; `;
  return Buffer.from(s.slice(0, BODY));
}

function pullBody(compressed: boolean): { body: Buffer; messageBytes: number } {
  const recs: Buffer[] = [];
  let messageBytes = 0;
  for (let i = 0; i < MESSAGES; i++) {
    const plain = textBody(i);
    messageBytes += plain.length;
    recs.push(
      encodeStoredMessage({
        topic: 'TopicTest',
        queueId: 0,
        queueOffset: 128 + i,
        commitLogOffset: 1_000_000 + i * 1200,
        sysFlag: compressed ? MessageSysFlag.COMPRESSED_FLAG | MessageSysFlag.COMPRESSION_ZLIB_TYPE : 0,
        bornTimestamp: 1712345678901 + i,
        bornHost: '192.168.1.10:54321',
        storeTimestamp: 1712345679000 + i,
        storeHost: '192.168.1.20:10911',
        body: compressed ? deflateSync(plain, { level: 5 }) : plain,
        properties: {
          TAGS: 'TagA',
          KEYS: `order-${i}`,
          UNIQ_KEY: createUniqKey('192.168.1.10'),
          WAIT: 'true',
          CLUSTER: 'DefaultCluster',
        },
      }),
    );
  }
  return { body: Buffer.concat(recs), messageBytes };
}

function pullRequest(serializeType: 'JSON' | 'ROCKETMQ'): RemotingCommand {
  return createRequest(RequestCode.PULL_MESSAGE, {
    opaque: 12345,
    serializeType,
    extFields: PullMessageRequestHeader.encode(pullRequestFields),
  });
}
function pullResponse(serializeType: 'JSON' | 'ROCKETMQ', body: Buffer): RemotingCommand {
  return createResponse({ opaque: 12345, serializeType }, ResponseCode.SUCCESS, {
    remark: 'FOUND',
    extFields: PullMessageResponseHeader.encode(pullResponseFields),
    body,
  });
}

// --- cases ------------------------------------------------------------------------------------
const results: CaseResult[] = [];
const plain = pullBody(false);
const zlib = pullBody(true);

for (const st of ['JSON', 'ROCKETMQ'] as const) {
  const req = pullRequest(st);
  const reqFrame = encodeCommand(req);
  results.push(
    measure(`${st} PULL_MESSAGE request: encode frame`, reqFrame.length, () => {
      sink += encodeCommand(req).length;
    }),
  );
  results.push(
    measure(`${st} PULL_MESSAGE request: decode frame + typed header`, reqFrame.length, () => {
      const c = decodeCommand(reqFrame);
      sink += PullMessageRequestHeader.decode(c.extFields).queueId;
    }),
  );
  const resp = pullResponse(st, Buffer.alloc(0));
  const respFrame = encodeCommand(resp);
  results.push(
    measure(`${st} PULL_MESSAGE response header: encode frame`, respFrame.length, () => {
      sink += encodeCommand(resp).length;
    }),
  );
  results.push(
    measure(`${st} PULL_MESSAGE response header: decode frame + typed header`, respFrame.length, () => {
      const c = decodeCommand(respFrame);
      sink += PullMessageResponseHeader.decode(c.extFields).nextBeginOffset;
    }),
  );
}
results.push(
  measure('typed PullMessageRequestHeader encode + decode', 0, () => {
    sink += PullMessageRequestHeader.decode(PullMessageRequestHeader.encode(pullRequestFields)).maxMsgNums;
  }),
);

const copyTarget = Buffer.allocUnsafe(plain.body.length);
const memcpyBody = measure('memcpy: Buffer.copy of the whole pull body', plain.body.length, () => {
  sink += plain.body.copy(copyTarget, 0);
});
const msgViews = decodeMessages(plain.body).map((m) => m.body);
const memcpyPerMessage = measure(`memcpy: ${MESSAGES} x Buffer.copy of one message body`, plain.body.length, () => {
  let p = 0;
  for (const v of msgViews) p += v.copy(copyTarget, p);
  sink += p;
});
const decodePlain = measure(`decodeMessages: pull body of ${MESSAGES} x ${BODY} B`, plain.body.length, () => {
  sink += decodeMessages(plain.body).length;
});
// What a handler typically reads of each message: the row lazy decoding is measured by. `properties`
// parses every property of the message; `tags` reads one from the stored bytes.
const decodeRead = measure(
  `decodeMessages + read body, msgId, keys, properties.CLUSTER: ${MESSAGES} x ${BODY} B`,
  plain.body.length,
  () => {
    for (const m of decodeMessages(plain.body)) {
      sink += m.body.length + m.msgId.length + m.keys.length + (m.properties.CLUSTER?.length ?? 0);
    }
  },
);
const decodeReadTags = measure(
  `decodeMessages + read body, msgId, keys, tags: ${MESSAGES} x ${BODY} B`,
  plain.body.length,
  () => {
    for (const m of decodeMessages(plain.body)) {
      sink += m.body.length + m.msgId.length + m.keys.length + (m.tags?.length ?? 0);
    }
  },
);
const decodeZlib = measure(`decodeMessages: pull body of ${MESSAGES} x ${BODY} B, zlib`, zlib.body.length, () => {
  sink += decodeMessages(zlib.body).length;
});
const decodeNoInflate = measure(`decodeMessages: zlib pull body, decompress:false`, zlib.body.length, () => {
  sink += decodeMessages(zlib.body, { decompress: false }).length;
});
const encodeBodyPlain = textBody(0);
const encodeProps =
  'TAGS\u0001TagA\u0002KEYS\u0001order-1\u0002UNIQ_KEY\u0001C0A8010A303918B4AAC27C5A1B2C0000\u0002WAIT\u0001true';
let commitLogOffset = 0;
const encodeOne = measure(`encodeStoredMessage: one ${BODY} B record (broker write path)`, BODY, () => {
  const rec = encodeStoredMessage({
    topic: 'TopicTest',
    queueId: 0,
    queueOffset: commitLogOffset,
    commitLogOffset,
    bornTimestamp: 1712345678901,
    bornHost: '192.168.1.10:54321',
    storeTimestamp: 1712345679000,
    storeHost: '192.168.1.20:10911',
    body: encodeBodyPlain,
    properties: encodeProps,
  });
  commitLogOffset += rec.length;
  sink += rec.length;
});
results.push(
  memcpyBody,
  memcpyPerMessage,
  decodePlain,
  decodeRead,
  decodeReadTags,
  decodeZlib,
  decodeNoInflate,
  encodeOne,
);

const round2 = (x: number): number => Math.round(x * 100) / 100;
const report = {
  benchmark: 'codec',
  node: process.version,
  rounds: ROUNDS,
  roundMs: ROUND_MS,
  pullBody: { messages: MESSAGES, bodyBytes: BODY, plainBytes: plain.body.length, zlibBytes: zlib.body.length },
  cases: results,
  // Ratios > 1 say how many times slower than the memcpy ceiling; "cpu" ones use CPU time.
  ratios: {
    decodePlainVsMemcpyBody: round2(memcpyBody.opsPerSec / decodePlain.opsPerSec),
    decodePlainVsMemcpyPerMessage: round2(memcpyPerMessage.opsPerSec / decodePlain.opsPerSec),
    decodeReadVsMemcpyBody: round2(memcpyBody.opsPerSec / decodeRead.opsPerSec),
    decodeReadTagsVsMemcpyBody: round2(memcpyBody.opsPerSec / decodeReadTags.opsPerSec),
    cpuDecodeReadVsMemcpyBody: round2(decodeRead.cpuNsPerOp / memcpyBody.cpuNsPerOp),
    cpuDecodeReadTagsVsMemcpyBody: round2(decodeReadTags.cpuNsPerOp / memcpyBody.cpuNsPerOp),
    decodeZlibVsMemcpyPerMessage: round2(memcpyPerMessage.opsPerSec / decodeZlib.opsPerSec),
    cpuDecodePlainVsMemcpyPerMessage: round2(decodePlain.cpuNsPerOp / memcpyPerMessage.cpuNsPerOp),
    cpuDecodeZlibVsMemcpyPerMessage: round2(decodeZlib.cpuNsPerOp / memcpyPerMessage.cpuNsPerOp),
    decodePlainNsPerMessage: Math.round(decodePlain.nsPerOp / MESSAGES),
    decodePlainCpuNsPerMessage: Math.round(decodePlain.cpuNsPerOp / MESSAGES),
    decodeZlibCpuNsPerMessage: Math.round(decodeZlib.cpuNsPerOp / MESSAGES),
    memcpyNsPerMessage: Math.round(memcpyPerMessage.nsPerOp / MESSAGES),
    memcpyCpuNsPerMessage: Math.round(memcpyPerMessage.cpuNsPerOp / MESSAGES),
  },
  sink: sink % 1000,
};
process.stdout.write(JSON.stringify(report, null, 2) + '\n');
