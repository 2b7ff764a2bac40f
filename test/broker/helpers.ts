// Shared helpers of the broker tests: raw RemotingClient calls shaped like the Java client's.
import {
  RequestCode,
  createRequest,
  decodeMessages,
  type MessageExt,
  type RemotingCommand,
  type SerializeTypeName,
} from '../../protocol/index.js';
import { RemotingClient } from '../../lib/remoting/index.js';

export const P1 = '\u0001';
export const P2 = '\u0002';

export function props(map: Record<string, string>): string {
  return Object.entries(map)
    .map(([k, v]) => k + P1 + v)
    .join(P2);
}

export function client(serializeType: SerializeTypeName = 'JSON'): RemotingClient {
  return new RemotingClient({ serializeType, defaultTimeoutMs: 5000 });
}

export interface SendOpts {
  queueId?: number;
  tags?: string;
  keys?: string;
  properties?: Record<string, string>;
  code?: number;
  serializeType?: SerializeTypeName;
  reconsumeTimes?: number;
  maxReconsumeTimes?: number;
  defaultTopicQueueNums?: number;
  sysFlag?: number;
  version?: number;
}

let uniq = 0;

/** SEND_MESSAGE_V2 (default) or V1 with the fields a Java producer sends. */
export function sendRequest(topic: string, body: Buffer | string, o: SendOpts = {}): RemotingCommand {
  const p: Record<string, string> = {
    UNIQ_KEY: `7F000001000000000000000000${String(++uniq).padStart(6, '0')}`,
    WAIT: 'true',
    ...(o.properties ?? {}),
  };
  if (o.tags) p.TAGS = o.tags;
  if (o.keys) p.KEYS = o.keys;
  const v1 = o.code === RequestCode.SEND_MESSAGE;
  const f: Record<string, string> = {
    producerGroup: 'pg',
    topic,
    defaultTopic: 'TBW102',
    defaultTopicQueueNums: String(o.defaultTopicQueueNums ?? 4),
    queueId: String(o.queueId ?? 0),
    sysFlag: String(o.sysFlag ?? 0),
    bornTimestamp: String(Date.now()),
    flag: '0',
    properties: props(p),
    reconsumeTimes: String(o.reconsumeTimes ?? 0),
    unitMode: 'false',
    batch: 'false',
  };
  if (o.maxReconsumeTimes !== undefined) f.maxReconsumeTimes = String(o.maxReconsumeTimes);
  const keysV2: Record<string, string> = {
    producerGroup: 'a',
    topic: 'b',
    defaultTopic: 'c',
    defaultTopicQueueNums: 'd',
    queueId: 'e',
    sysFlag: 'f',
    bornTimestamp: 'g',
    flag: 'h',
    properties: 'i',
    reconsumeTimes: 'j',
    unitMode: 'k',
    maxReconsumeTimes: 'l',
    batch: 'm',
  };
  const ext: Record<string, string> = {};
  for (const [k, v] of Object.entries(f)) ext[v1 ? k : keysV2[k]!] = v;
  if (!v1) ext.n = 'broker-a';
  return createRequest(o.code ?? RequestCode.SEND_MESSAGE_V2, {
    extFields: ext,
    body: typeof body === 'string' ? Buffer.from(body) : body,
    serializeType: o.serializeType ?? 'JSON',
    version: o.version,
  });
}

/** A SEND_BATCH_MESSAGE body the way Java's MessageDecoder.encodeMessage lays it out. */
export function batchBody(items: { body: string; properties: Record<string, string> }[]): Buffer {
  const parts = items.map((it) => {
    const b = Buffer.from(it.body);
    const pr = Buffer.from(props(it.properties));
    const buf = Buffer.alloc(22 + b.length + pr.length);
    buf.writeInt32BE(buf.length, 0);
    buf.writeInt32BE(0, 4);
    buf.writeInt32BE(0, 8);
    buf.writeInt32BE(0, 12);
    buf.writeInt32BE(b.length, 16);
    b.copy(buf, 20);
    buf.writeInt16BE(pr.length, 20 + b.length);
    pr.copy(buf, 22 + b.length);
    return buf;
  });
  return Buffer.concat(parts);
}

export interface PullOpts {
  group?: string;
  queueId?: number;
  offset?: number;
  maxMsgNums?: number;
  sysFlag?: number;
  commitOffset?: number;
  suspendMs?: number;
  subscription?: string;
  subVersion?: number;
  serializeType?: SerializeTypeName;
}

export function pullRequest(topic: string, o: PullOpts = {}): RemotingCommand {
  const ext: Record<string, string> = {
    consumerGroup: o.group ?? 'cg',
    topic,
    queueId: String(o.queueId ?? 0),
    queueOffset: String(o.offset ?? 0),
    maxMsgNums: String(o.maxMsgNums ?? 32),
    sysFlag: String(o.sysFlag ?? 4),
    commitOffset: String(o.commitOffset ?? -1),
    suspendTimeoutMillis: String(o.suspendMs ?? 15000),
    subVersion: String(o.subVersion ?? 0),
    expressionType: 'TAG',
    bname: 'broker-a',
  };
  if (o.subscription !== undefined) ext.subscription = o.subscription;
  else ext.subscription = '*';
  return createRequest(RequestCode.PULL_MESSAGE, { extFields: ext, serializeType: o.serializeType ?? 'JSON' });
}

export function decode(res: RemotingCommand): MessageExt[] {
  return res.body ? decodeMessages(res.body) : [];
}

export function heartbeatRequest(
  clientId: string,
  group: string,
  subs: { topic: string; subString?: string; subVersion?: number }[],
  producerGroup?: string,
): RemotingCommand {
  const consumerDataSet = group
    ? [
        {
          consumeFromWhere: 'CONSUME_FROM_LAST_OFFSET',
          consumeType: 'CONSUME_PASSIVELY',
          groupName: group,
          messageModel: 'CLUSTERING',
          subscriptionDataSet: subs.map((s) => {
            const tags = s.subString && s.subString !== '*' ? s.subString.split('||').map((t) => t.trim()) : [];
            return {
              classFilterMode: false,
              codeSet: tags.map(javaHash),
              expressionType: 'TAG',
              subString: s.subString ?? '*',
              subVersion: s.subVersion ?? 1,
              tagsSet: tags,
              topic: s.topic,
            };
          }),
          unitMode: false,
        },
      ]
    : [];
  const body = {
    clientID: clientId,
    consumerDataSet,
    producerDataSet: producerGroup ? [{ groupName: producerGroup }] : [],
  };
  return createRequest(RequestCode.HEART_BEAT, { body: Buffer.from(JSON.stringify(body)) });
}

export function javaHash(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(31, h) + s.charCodeAt(i)) | 0;
  return h;
}

export function ext(res: RemotingCommand, key: string): string | undefined {
  return res.extFields?.[key];
}
