// A hostile client of the embedded broker, for test/broker/hostile-client.test.ts and other
// attack suites: a broker on a store inside a fresh temporary parent folder, a raw socket that
// sends any frame (the protocol codec, no RemotingClient between), seeded mutations of every
// request the broker serves, and one health check to run after each batch.
//
//   const target = await startHostileTarget();
//   t.teardown(() => target.close());
//   await target.sendRaw(createRequest(...));        // one request, its answer or null
//   await target.sendBatch([cmd1, cmd2, ...]);        // pipelined on one connection, bounded in time
//   await assertHealthy(t, target);                   // alive, a real client served, RSS, no escape
//   await assertHealthy(t, target, { restart: true }); // …and the canary group's offsets survive a restart
import * as fs from 'node:fs';
import net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Test } from 'tap';
import {
  FrameDecoder,
  MessageSysFlag,
  Operations,
  RequestCode,
  ResponseCode,
  createRequest,
  decodeCommand,
  decodeMessages,
  encodeProperties,
  encodeCommand,
  isResponse,
  type RemotingCommand,
} from '../../protocol/internal.js';
import { startBroker, type EmbeddedBroker, type StartBrokerOptions } from '../../lib/broker/index.js';
import { Producer } from '../../lib/producer/index.js';
import { RemotingClient } from '../../lib/remoting/index.js';
import { checkGroupName, checkTopicName } from '../../protocol/resource-names.js';
import { assignReceiptHandles } from '../../protocol/pop-extra-info.js';

/** RSS of this process (broker and test share it) that no batch may leave behind. */
export const DEFAULT_RSS_LIMIT_BYTES = 768 * 1024 * 1024;

/** The group whose offsets no hostile request may change; hostile names never use it. */
export const CANARY_GROUP = 'HostileCanaryGroup';
export const CANARY_TOPIC = 'HostileCanaryTopic';
const CANARY_OFFSETS = [11, 22, 33, 44];

export interface HostileTarget {
  /** The temporary parent folder; it holds the store folder and nothing else, ever. */
  readonly parentDir: string;
  /** The store (`parentDir/data`). */
  readonly dataDir: string;
  /** The running broker (replaced by restart()). */
  readonly broker: EmbeddedBroker;
  readonly brokerAddr: string;
  readonly namesrvAddr: string;
  /**
   * One command (or raw bytes) on a fresh connection; the answer, or null when none came within
   * `timeoutMs` (default 2000) or the broker closed the connection.
   */
  sendRaw(
    cmd: RemotingCommand | Buffer,
    o?: { timeoutMs?: number; to?: 'broker' | 'namesrv' },
  ): Promise<RemotingCommand | null>;
  /**
   * Commands pipelined on one connection; resolves when every non-oneway one is answered or after
   * `timeoutMs` (default 3000), with the answers by index (null = none). The connection is closed after.
   */
  sendBatch(
    cmds: readonly (RemotingCommand | Buffer)[],
    o?: { timeoutMs?: number; to?: 'broker' | 'namesrv' },
  ): Promise<(RemotingCommand | null)[]>;
  /** Close the broker and start it again on the same store and ports. */
  restart(): Promise<void>;
  /**
   * A real rocketwire Producer (send timeout 1 s, no retry), started once per broker run (restart()
   * shuts it down), so most health checks' sends are one request on a warm client.
   */
  healthProducer(): Promise<Producer>;
  close(): Promise<void>;
}

let opaqueSeq = 1_000_000;

/** A raw connection: bytes out, answers in by opaque; what openRaw() gives (e.g. to hold half a frame). */
export interface RawConnection {
  write(b: Buffer): void;
  answers: Map<number, RemotingCommand>;
  onAnswer(cb: () => void): void;
  closed: () => boolean;
  end(): void;
}

/** A socket that writes frames and collects answers by opaque; ignores requests the broker sends us. */
export function openRaw(addr: string): Promise<RawConnection> {
  const [host, port] = [addr.slice(0, addr.lastIndexOf(':')), Number(addr.slice(addr.lastIndexOf(':') + 1))];
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, host);
    const decoder = new FrameDecoder();
    const answers = new Map<number, RemotingCommand>();
    let listener: (() => void) | null = null;
    let isClosed = false;
    socket.on('data', (chunk) => {
      try {
        decoder.push(chunk, (frame) => {
          const cmd = decodeCommand(Buffer.from(frame));
          if (isResponse(cmd)) answers.set(cmd.opaque, cmd);
          listener?.();
        });
      } catch {
        socket.destroy();
      }
    });
    socket.on('close', () => {
      isClosed = true;
      listener?.();
    });
    socket.on('error', () => undefined);
    socket.once('connect', () =>
      resolve({
        write: (b) => {
          if (!isClosed) socket.write(b);
        },
        answers,
        onAnswer: (cb) => {
          listener = cb;
        },
        closed: () => isClosed,
        end: () => socket.destroy(),
      }),
    );
    socket.once('error', reject);
  });
}

function frameOf(cmd: RemotingCommand | Buffer): { bytes: Buffer; opaque: number | null } {
  if (Buffer.isBuffer(cmd)) return { bytes: cmd, opaque: null };
  const c = { ...cmd, opaque: ++opaqueSeq };
  const oneway = (c.flag & 2) !== 0;
  return { bytes: encodeCommand(c), opaque: oneway ? null : c.opaque };
}

export interface HostileTargetOptions extends StartBrokerOptions {
  /** Offsets of CANARY_GROUP are committed at start (default true). */
  canary?: boolean;
}

/** A broker on `<fresh temp parent>/data`, with CANARY_GROUP's offsets committed and flushed. */
export async function startHostileTarget(options: HostileTargetOptions = {}): Promise<HostileTarget> {
  const parentDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rocketwire-hostile-'));
  const dataDir = path.join(parentDir, 'data');
  const brokerOptions: StartBrokerOptions = { segmentSize: 4 * 1024 * 1024, ...options, dataDir };
  let broker = await startBroker(brokerOptions);
  // the same ports after a restart, so a client's addresses stay right
  const ports = (b: EmbeddedBroker): StartBrokerOptions => ({
    namesrvPort: Number(b.namesrv.slice(b.namesrv.lastIndexOf(':') + 1)),
    brokerPort: Number(b.broker.slice(b.broker.lastIndexOf(':') + 1)),
  });
  const fixed = ports(broker);
  const addrOf = (to: 'broker' | 'namesrv' | undefined): string => (to === 'namesrv' ? broker.namesrv : broker.broker);

  const target: HostileTarget = {
    parentDir,
    dataDir,
    get broker() {
      return broker;
    },
    get brokerAddr() {
      return broker.broker;
    },
    get namesrvAddr() {
      return broker.namesrv;
    },
    async sendRaw(cmd, o = {}) {
      const [answer] = await target.sendBatch([cmd], { timeoutMs: o.timeoutMs ?? 2000, to: o.to });
      return answer ?? null;
    },
    async sendBatch(cmds, o = {}) {
      const conn = await openRaw(addrOf(o.to));
      const frames = cmds.map(frameOf);
      for (const f of frames) conn.write(f.bytes);
      const wanted = frames.filter((f) => f.opaque !== null).length;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, o.timeoutMs ?? 3000);
        const check = (): void => {
          if (conn.answers.size >= wanted || conn.closed()) {
            clearTimeout(timer);
            resolve();
          }
        };
        conn.onAnswer(check);
        check();
      });
      conn.end();
      return frames.map((f) => (f.opaque === null ? null : (conn.answers.get(f.opaque) ?? null)));
    },
    async restart() {
      // its connections die with the broker; a new one is made for the next check
      await producer?.shutdown();
      producer = null;
      await broker.close();
      broker = await startBroker({ ...brokerOptions, ...fixed });
    },
    async healthProducer() {
      if (!producer) {
        producer = new Producer({
          namesrvAddr: broker.namesrv,
          group: 'HostileHealthProducer',
          sendMsgTimeoutMs: 1000,
          retryTimesWhenSendFailed: 0,
        });
        await producer.start();
      }
      return producer;
    },
    async close() {
      await producer?.shutdown();
      await broker.close();
      fs.rmSync(parentDir, { recursive: true, force: true });
    },
  };
  let producer: Producer | null = null;
  if (options.canary !== false) {
    const c = new RemotingClient({ defaultTimeoutMs: 5000 });
    try {
      const create = createRequest(RequestCode.UPDATE_AND_CREATE_TOPIC, {
        extFields: Operations.UPDATE_AND_CREATE_TOPIC.request.encode({
          topic: CANARY_TOPIC,
          defaultTopic: 'TBW102',
          readQueueNums: 4,
          writeQueueNums: 4,
          perm: 6,
          topicFilterType: 'SINGLE_TAG',
          topicSysFlag: 0,
          order: false,
        }),
      });
      const created = await c.invoke(broker.broker, create);
      if (created.code !== ResponseCode.SUCCESS) throw new Error(`canary topic: ${created.code} ${created.remark}`);
      for (const [queueId, commitOffset] of CANARY_OFFSETS.entries()) {
        const commit = createRequest(RequestCode.UPDATE_CONSUMER_OFFSET, {
          extFields: Operations.UPDATE_CONSUMER_OFFSET.request.encode({
            consumerGroup: CANARY_GROUP,
            topic: CANARY_TOPIC,
            queueId,
            commitOffset,
          }),
        });
        const r = await c.invoke(broker.broker, commit);
        if (r.code !== ResponseCode.SUCCESS) throw new Error(`canary offset: ${r.code} ${r.remark}`);
      }
    } finally {
      c.close();
    }
    await target.restart();
  }
  return target;
}

/** The canary group's committed offsets, over the wire. */
export async function canaryOffsets(target: HostileTarget): Promise<number[]> {
  const c = new RemotingClient({ defaultTimeoutMs: 1000 });
  try {
    const out: number[] = [];
    for (let queueId = 0; queueId < CANARY_OFFSETS.length; queueId++) {
      const q = createRequest(RequestCode.QUERY_CONSUMER_OFFSET, {
        extFields: Operations.QUERY_CONSUMER_OFFSET.request.encode({
          consumerGroup: CANARY_GROUP,
          topic: CANARY_TOPIC,
          queueId,
          setZeroIfNotFound: false,
        }),
      });
      const r = await c.invoke(target.brokerAddr, q);
      out.push(r.code === ResponseCode.SUCCESS ? Number(r.extFields?.offset) : -1);
    }
    return out;
  } finally {
    c.close();
  }
}

/** Every name under `dir` (recursively), relative, sorted. */
function listTree(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string, rel: string): void => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      out.push(r);
      if (e.isDirectory()) walk(path.join(d, e.name), r);
    }
  };
  walk(dir, '');
  return out.sort();
}

export interface HealthOptions {
  /** Default DEFAULT_RSS_LIMIT_BYTES. */
  rssLimitBytes?: number;
  /** Restart the broker first and check the canary group's offsets survived (default false). */
  restart?: boolean;
  /** Check the canary offsets (default true when the target has them). */
  canary?: boolean;
  /** Label of the batch, for the assertion messages. */
  label?: string;
}

/**
 * After a batch of hostile requests: the broker is alive and serves a real rocketwire Producer
 * within 1 s (its send timeout, not a timing assertion), the process's RSS is under the bound,
 * nothing appeared next to the store folder, every topic the broker holds and every consume-queue
 * folder has a valid name and sane queue counts, and (after a restart when asked) the canary
 * group's offsets are the ones committed at start.
 */
export async function assertHealthy(t: Test, target: HostileTarget, o: HealthOptions = {}): Promise<void> {
  const label = o.label ? `${o.label}: ` : '';
  if (o.restart) await target.restart();
  t.same(fs.readdirSync(target.parentDir), ['data'], `${label}nothing outside the store folder`);
  const cqRoot = path.join(target.dataDir, 'consumequeue');
  const cqFolders = fs.existsSync(cqRoot) ? fs.readdirSync(cqRoot) : [];
  t.same(
    cqFolders.filter((n) => checkTopicName(n) !== null),
    [],
    `${label}every consume-queue folder is a valid topic name`,
  );
  const broker = target.broker.instances[0]!;
  const badTopics = broker.topics
    .all()
    .filter(
      (c) =>
        checkTopicName(c.topicName) !== null ||
        !(c.readQueueNums >= 1 && c.readQueueNums <= 1024 && c.writeQueueNums >= 1 && c.writeQueueNums <= 1024),
    );
  t.same(badTopics, [], `${label}every topic has a valid name and 1 to 1024 queues`);
  const badGroups = [...broker.consumers.groups.keys()].filter((g) => checkGroupName(g) !== null);
  t.same(badGroups, [], `${label}every registered group has a valid name`);

  try {
    const sent = await (await target.healthProducer()).send({ topic: 'HostileHealthTopic', body: 'still here' });
    t.equal(sent.status, 'SEND_OK', `${label}a real producer is served within 1 s`);
  } catch (err) {
    t.fail(`${label}a real producer is served within 1 s: ${(err as Error).message}`);
  }
  const rss = process.memoryUsage.rss();
  const limit = o.rssLimitBytes ?? DEFAULT_RSS_LIMIT_BYTES;
  t.ok(rss < limit, `${label}RSS ${(rss / 2 ** 20).toFixed(0)} MiB under ${(limit / 2 ** 20).toFixed(0)} MiB`);
  if (o.canary ?? true)
    t.same(
      await canaryOffsets(target),
      CANARY_OFFSETS,
      `${label}the canary group's offsets are intact${o.restart ? ' after a restart' : ''}`,
    );
}

/** The files of the store, for a before/after comparison. */
export function storeTree(target: HostileTarget): string[] {
  return listTree(target.dataDir);
}

/** mulberry32: a small seeded generator, so a failing run is reproduced by its seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = a;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

/** Values a hostile peer puts in a field: names that escape, numbers past every range, junk. */
export const HOSTILE_VALUES: readonly string[] = [
  '',
  ' ',
  '-1',
  '0',
  '2147483647',
  '-2147483648',
  '2147483648',
  '9223372036854775807',
  '-9223372036854775808',
  '99999999999999999999',
  'NaN',
  '1e309',
  '0x10',
  'true',
  'x/../../../escape_poc',
  'x/../HostileCanaryTopic',
  '../../../escape_poc',
  '%RETRY%/../../../escape_poc',
  'a\\..\\..\\escape_poc',
  '.',
  '..',
  'evil,5:',
  'g@t',
  'nul\u0000byte',
  'ünïcödé',
  'a'.repeat(121),
  'a'.repeat(256),
  'b'.repeat(5000),
  'SCHEDULE_TOPIC_XXXX',
  'TBW102',
  'rmq_sys_evil',
  '%DLQ%x',
  'HostileT',
];

/** Names that would leave the store or land in another topic's folder if they reached a path. */
export const HOSTILE_NAMES: readonly string[] = [
  // consumequeue/%DLQ%x/../../../escape_poc is <parent>/escape_poc: just outside the store, never further
  'x/../../../escape_poc',
  'x/../../../escape_poc',
  'x/../../../escape_poc',
  '../../../escape_poc',
  'x/../T2',
  'x/../HostileT',
  '%RETRY%x/../../../../escape_poc',
  'a\\..\\..\\..\\escape_poc',
  '..',
  'evil,5:',
  'g@t',
  'a'.repeat(300),
];

/** The extFields keys of an operation's request header that hold a topic or group name. */
export function nameKeysOf(op: (typeof Operations)[keyof typeof Operations]): string[] {
  return op.request.fields.filter((f) => /topic|group/i.test(f.name) && f.kind === 'string').map((f) => f.key);
}

/** A plausible value of a request header field, by name and kind, for the baseline request. */
function baselineField(name: string, kind: string): string {
  const byName: Record<string, string> = {
    topic: 'HostileT',
    defaultTopic: 'TBW102',
    originTopic: 'HostileT',
    consumerGroup: 'HostileG',
    group: 'HostileG',
    producerGroup: 'HostilePG',
    defaultTopicQueueNums: '4',
    maxMsgNums: '4',
    readQueueNums: '4',
    writeQueueNums: '4',
    perm: '6',
    topicFilterType: 'SINGLE_TAG',
    subscription: 'a||b',
    expressionType: 'TAG',
    suspendTimeoutMillis: '0',
    properties: 'UNIQ_KEY\u0001AAAA\u0002TAGS\u0001a',
    delayLevel: '-1',
    maxReconsumeTimes: '16',
    clientId: 'hostile-client',
    key: 'k',
    maxNum: '1',
  };
  if (byName[name] !== undefined) return byName[name]!;
  if (kind === 'int' || kind === 'long') return '0';
  if (kind === 'boolean') return 'false';
  if (kind === 'double') return '0.0';
  return 'x';
}

/** A well-formed body for the codes that carry one (the JSON a Java client sends). */
function baselineBody(code: number): Buffer | null {
  switch (code) {
    case RequestCode.HEART_BEAT:
      return Buffer.from(
        JSON.stringify({
          clientID: 'hostile-client',
          consumerDataSet: [
            {
              consumeFromWhere: 'CONSUME_FROM_LAST_OFFSET',
              consumeType: 'CONSUME_PASSIVELY',
              groupName: 'HostileG',
              messageModel: 'CLUSTERING',
              unitMode: false,
              subscriptionDataSet: [
                {
                  classFilterMode: false,
                  codeSet: [97, 98],
                  expressionType: 'TAG',
                  subString: 'a||b',
                  subVersion: 1,
                  tagsSet: ['a', 'b'],
                  topic: 'HostileT',
                },
              ],
            },
          ],
          producerDataSet: [{ groupName: 'HostilePG' }],
        }),
      );
    case RequestCode.LOCK_BATCH_MQ:
    case RequestCode.UNLOCK_BATCH_MQ:
      return Buffer.from(
        JSON.stringify({
          clientId: 'hostile-client',
          consumerGroup: 'HostileG',
          mqSet: [{ brokerName: 'broker-a', queueId: 0, topic: 'HostileT' }],
        }),
      );
    case RequestCode.CHECK_CLIENT_CONFIG:
      return Buffer.from(
        JSON.stringify({
          clientId: 'hostile-client',
          group: 'HostileG',
          subscriptionData: {
            classFilterMode: false,
            codeSet: [],
            expressionType: 'TAG',
            subString: '*',
            subVersion: 1,
            tagsSet: [],
            topic: 'HostileT',
          },
        }),
      );
    case RequestCode.SEND_MESSAGE:
    case RequestCode.SEND_MESSAGE_V2:
    case RequestCode.SEND_REPLY_MESSAGE:
    case RequestCode.SEND_REPLY_MESSAGE_V2:
      return Buffer.from('hostile body');
    default:
      return null;
  }
}

/** The request of an operation row as a well-behaved client would send it. */
export function baselineRequest(op: (typeof Operations)[keyof typeof Operations]): RemotingCommand {
  const extFields: Record<string, string> = {};
  for (const f of op.request.fields) extFields[f.key] = baselineField(f.name, f.kind);
  return createRequest(op.code, { extFields, body: baselineBody(op.code) });
}

function pick<T>(rng: () => number, xs: readonly T[]): T {
  return xs[Math.floor(rng() * xs.length)]!;
}

/** Replace the values of a JSON body's string fields named like names with hostile ones (or break the JSON). */
function mutateBody(rng: () => number, body: Buffer | null): Buffer | null {
  const r = rng();
  if (body === null || r < 0.1)
    return r < 0.05 ? null : Buffer.from(Array.from({ length: Math.floor(rng() * 64) }, () => Math.floor(rng() * 256)));
  const text = body.toString();
  if (r < 0.2) return Buffer.from(text.slice(0, Math.floor(rng() * text.length)));
  if (!text.startsWith('{')) return Buffer.from(pick(rng, HOSTILE_VALUES));
  const parsed = JSON.parse(text) as unknown;
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object') {
      const o: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) o[k] = rng() < 0.3 ? hostileJson(rng) : walk(x);
      return o;
    }
    return v;
  };
  return Buffer.from(JSON.stringify(walk(parsed)));
}

function hostileJson(rng: () => number): unknown {
  const r = rng();
  if (r < 0.6) return pick(rng, HOSTILE_VALUES);
  if (r < 0.7) return null;
  if (r < 0.8) return -1;
  if (r < 0.9) return [pick(rng, HOSTILE_VALUES)];
  // many tags: a subscription past maxTagsPerSubscription, bounded in size
  return Array.from({ length: 2000 }, (_, i) => `t${i}`);
}

/**
 * A seeded mutation of `base`: hostile values in one to three header fields, a dropped field, an
 * unknown field, a changed body, serialize type, version or oneway flag. Never a suspending pull
 * of more than a moment (that is the long-poll hold, not an attack), never the canary group.
 */
export function mutateRequest(
  rng: () => number,
  base: RemotingCommand,
  nameKeys: readonly string[] = [],
): RemotingCommand {
  const extFields = { ...(base.extFields ?? {}) };
  const keys = Object.keys(extFields);
  const n = 1 + Math.floor(rng() * 3);
  for (let i = 0; i < n && keys.length > 0; i++) {
    // half the time a name field: that is where an escape would start
    const k = nameKeys.length > 0 && rng() < 0.5 ? pick(rng, nameKeys) : pick(rng, keys);
    const r = rng();
    if (r < 0.15) delete extFields[k];
    else extFields[k] = nameKeys.includes(k) && r < 0.6 ? pick(rng, HOSTILE_NAMES) : pick(rng, HOSTILE_VALUES);
  }
  if (rng() < 0.1)
    extFields[pick(rng, ['x', 'topic', 'group', 'consumerGroup', '_UNIQUE_KEY_QUERY'])] = pick(rng, HOSTILE_VALUES);
  if (extFields.suspendTimeoutMillis !== undefined) extFields.suspendTimeoutMillis = '0';
  for (const k of Object.keys(extFields))
    if (extFields[k]!.includes('Canary') && k !== 'topic') extFields[k] = 'HostileG';
  const body = rng() < 0.4 ? mutateBody(rng, base.body) : base.body;
  return createRequest(base.code, {
    extFields,
    body,
    serializeType: rng() < 0.3 ? 'ROCKETMQ' : 'JSON',
    version: rng() < 0.1 ? pick(rng, [-1, 0, 1, 65535, 2147483647]) : base.version,
    oneway: rng() < 0.1,
    language: rng() < 0.05 ? 'KLINGON' : 'JAVA',
  });
}

/** Frames that are not requests at all: a bad header length, a header that is not JSON, an unknown serialize type, a huge announced length. */
export function garbageFrames(rng: () => number): Buffer[] {
  const frame = (headerLenField: number, header: Buffer, body = Buffer.alloc(0)): Buffer => {
    const b = Buffer.alloc(8 + header.length + body.length);
    b.writeInt32BE(4 + header.length + body.length, 0);
    b.writeInt32BE(headerLenField, 4);
    header.copy(b, 8);
    body.copy(b, 8 + header.length);
    return b;
  };
  const json = Buffer.from(
    '{"code":11,"flag":0,"language":"JAVA","opaque":7,"serializeTypeCurrentRPC":"JSON","version":409}',
  );
  const notJson = Buffer.from('{not json at all');
  const badCode = Buffer.from(JSON.stringify({ code: 'eleven', opaque: 'x' }));
  const escaping = Buffer.from(
    JSON.stringify({ code: 11, flag: 0, opaque: 8, extFields: { topic: 'x/../../../escape_poc', queueId: '0' } }),
  );
  return [
    frame(json.length + 10, json),
    frame(notJson.length, notJson),
    frame((9 << 24) | json.length, json),
    frame(badCode.length, badCode),
    frame(escaping.length, escaping),
    Buffer.from(Array.from({ length: 64 }, () => Math.floor(rng() * 256))),
  ];
}

/** One request of a newer surface, built from real state of the target so that mutations reach past the first checks. */
export interface SurfaceBaseline {
  label: string;
  base: RemotingCommand;
  nameKeys: string[];
}

const SURFACE_TOPIC = 'HostileSurfaceT';
const SURFACE_GROUP = 'HostileSurfaceG';
const SURFACE_PGROUP = 'HostileSurfacePG';

function surfaceSend(
  properties: Record<string, string>,
  o: { sysFlag?: number; code?: number; topic?: string } = {},
): RemotingCommand {
  return createRequest(o.code ?? RequestCode.SEND_MESSAGE, {
    extFields: {
      producerGroup: SURFACE_PGROUP,
      topic: o.topic ?? SURFACE_TOPIC,
      defaultTopic: 'TBW102',
      defaultTopicQueueNums: '4',
      queueId: '0',
      sysFlag: String(o.sysFlag ?? 0),
      bornTimestamp: String(Date.now()),
      flag: '0',
      properties: encodeProperties({
        UNIQ_KEY: `7F00000100000000000000${String(++opaqueSeq).padStart(10, '0')}`,
        WAIT: 'true',
        ...properties,
      }),
      reconsumeTimes: '0',
      unitMode: 'false',
      batch: 'false',
    },
    body: Buffer.from('surface body'),
  });
}

/**
 * The requests of the surfaces that came after the first hostile rounds — transactions, timers,
 * SQL92, POP, replies — each as a real client sends it against real state of `target` (a half
 * message it stored, a receipt handle it was given), for the seeded mutations of
 * hostile-client.test.ts. The property filter must be on for the SQL92 ones to reach the evaluator.
 */
export async function surfaceBaselines(target: HostileTarget): Promise<SurfaceBaseline[]> {
  const out: SurfaceBaseline[] = [];
  const must = async (label: string, cmd: RemotingCommand): Promise<RemotingCommand> => {
    const r = await target.sendRaw(cmd, { timeoutMs: 5000 });
    if (r === null || r.code !== ResponseCode.SUCCESS)
      throw new Error(`surface baseline ${label}: ${r?.code} ${r?.remark}`);
    return r;
  };
  // messages with properties for SQL92, and one to pop
  for (let i = 0; i < 4; i++) await must('message', surfaceSend({ a: String(i), b: 'x', TAGS: 't' }));

  // transactions: a half message of SURFACE_PGROUP and its END_TRANSACTION
  const half = await must(
    'half',
    surfaceSend({ TRAN_MSG: 'true', PGROUP: SURFACE_PGROUP }, { sysFlag: MessageSysFlag.TRANSACTION_PREPARED_TYPE }),
  );
  const msgId = half.extFields!.msgId!;
  out.push({
    label: 'END_TRANSACTION of a real half message',
    base: createRequest(RequestCode.END_TRANSACTION, {
      extFields: {
        producerGroup: SURFACE_PGROUP,
        tranStateTableOffset: half.extFields!.queueOffset!,
        commitLogOffset: BigInt('0x' + msgId.slice(-16)).toString(),
        commitOrRollback: '8',
        fromTransactionCheck: 'false',
        msgId,
        transactionId: msgId,
        topic: SURFACE_TOPIC,
      },
    }),
    nameKeys: ['producerGroup', 'topic', 'msgId', 'transactionId'],
  });
  out.push({
    label: 'SEND of a half message',
    base: surfaceSend(
      { TRAN_MSG: 'true', PGROUP: SURFACE_PGROUP },
      { sysFlag: MessageSysFlag.TRANSACTION_PREPARED_TYPE },
    ),
    nameKeys: ['producerGroup', 'topic', 'properties'],
  });

  // timers
  out.push({
    label: 'SEND of a timer message (TIMER_DELIVER_MS)',
    base: surfaceSend({ TIMER_DELIVER_MS: String(Date.now() + 3_600_000) }),
    nameKeys: ['topic', 'properties'],
  });
  out.push({
    label: 'SEND of a timer message (TIMER_DELAY_SEC)',
    base: surfaceSend({ TIMER_DELAY_SEC: '3600' }),
    nameKeys: ['topic', 'properties'],
  });

  // SQL92: a pull that carries its expression, and a heartbeat that registers one
  out.push({
    label: 'PULL with a SQL92 expression',
    base: createRequest(RequestCode.PULL_MESSAGE, {
      extFields: {
        consumerGroup: SURFACE_GROUP,
        topic: SURFACE_TOPIC,
        queueId: '0',
        queueOffset: '0',
        maxMsgNums: '4',
        sysFlag: '4',
        commitOffset: '-1',
        suspendTimeoutMillis: '0',
        subscription: "a BETWEEN 1 AND 2 AND (b = 'x' OR TAGS IN ('t', 'u')) AND c IS NULL",
        subVersion: '1',
        expressionType: 'SQL92',
      },
    }),
    nameKeys: ['consumerGroup', 'topic', 'subscription', 'expressionType'],
  });
  out.push({
    label: 'HEART_BEAT with a SQL92 subscription',
    base: createRequest(RequestCode.HEART_BEAT, {
      body: Buffer.from(
        JSON.stringify({
          clientID: 'hostile-surface-client',
          consumerDataSet: [
            {
              consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
              consumeType: 'CONSUME_PASSIVELY',
              groupName: SURFACE_GROUP,
              messageModel: 'CLUSTERING',
              unitMode: false,
              subscriptionDataSet: [
                {
                  classFilterMode: false,
                  codeSet: [],
                  expressionType: 'SQL92',
                  subString: "a > 1 AND b = 'x'",
                  subVersion: 1,
                  tagsSet: [],
                  topic: SURFACE_TOPIC,
                },
              ],
            },
          ],
          producerDataSet: [],
        }),
      ),
    }),
    nameKeys: [],
  });

  // POP: a real pop, its receipt handle, and the ACK / CHANGE_MESSAGE_INVISIBLETIME of it
  const popFields = {
    consumerGroup: SURFACE_GROUP,
    topic: SURFACE_TOPIC,
    queueId: '0',
    maxMsgNums: '1',
    invisibleTime: '60000',
    pollTime: '0',
    bornTime: String(Date.now()),
    initMode: '0',
  };
  const pop = await must('pop', createRequest(RequestCode.POP_MESSAGE, { extFields: popFields }));
  const popped = decodeMessages(pop.body!);
  const h = pop.extFields!;
  assignReceiptHandles(
    popped,
    {
      popTime: Number(h.popTime),
      invisibleTime: Number(h.invisibleTime),
      reviveQid: Number(h.reviveQid),
      startOffsetInfo: h.startOffsetInfo,
      msgOffsetInfo: h.msgOffsetInfo,
      orderCountInfo: h.orderCountInfo,
    },
    'broker-a',
    false,
  );
  const m = popped[0]!;
  const extraInfo = m.properties.POP_CK!;
  out.push({
    label: 'POP_MESSAGE',
    base: createRequest(RequestCode.POP_MESSAGE, { extFields: { ...popFields, bornTime: '0' } }),
    nameKeys: ['consumerGroup', 'topic'],
  });
  out.push({
    label: 'ACK_MESSAGE of a real receipt handle',
    base: createRequest(RequestCode.ACK_MESSAGE, {
      extFields: {
        consumerGroup: SURFACE_GROUP,
        topic: SURFACE_TOPIC,
        queueId: String(m.queueId),
        extraInfo,
        offset: String(m.queueOffset),
      },
    }),
    nameKeys: ['consumerGroup', 'topic', 'extraInfo'],
  });
  out.push({
    label: 'CHANGE_MESSAGE_INVISIBLETIME of a real receipt handle',
    base: createRequest(RequestCode.CHANGE_MESSAGE_INVISIBLETIME, {
      extFields: {
        consumerGroup: SURFACE_GROUP,
        topic: SURFACE_TOPIC,
        queueId: String(m.queueId),
        extraInfo,
        offset: String(m.queueOffset),
        invisibleTime: '30000',
      },
    }),
    nameKeys: ['consumerGroup', 'topic', 'extraInfo'],
  });

  // replies: what a responder sends for a request it received
  out.push({
    label: 'SEND_REPLY_MESSAGE',
    base: surfaceSend(
      {
        CORRELATION_ID: 'hostile-correlation',
        REPLY_TO_CLIENT: 'hostile-surface-client',
        MSG_TYPE: 'reply',
        TTL: '3000',
        CLUSTER: 'DefaultCluster',
      },
      { code: RequestCode.SEND_REPLY_MESSAGE, topic: 'DefaultCluster_REPLY_TOPIC' },
    ),
    nameKeys: ['producerGroup', 'topic', 'properties'],
  });
  return out;
}
