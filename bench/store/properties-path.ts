/**
 * The broker's cost per stored message of its properties, in this process: the string as sent,
 * extended in place (appendProperties, what the send path does now), against decoding it, adding the
 * broker's names and encoding it again (what it did before, and what Java's broker does), alternated
 * in rounds; each side then encodes the same stored record (prepareRecord), the rest of the store
 * path's CPU. Prints JSON: ns per message of each side per round and the ratios.
 *
 *   npx tsc -p . && node dist/bench/store/properties-path.js [--rounds 5] [--messages 200000]
 */
import { decodeProperties, encodeProperties } from '../../protocol/index.js';
import { appendProperties } from '../../protocol/stored-properties.js';
import {
  prepareRecord,
  socketAddressText,
  withPropertiesText,
  type MessageInner,
} from '../../lib/broker/message-record.js';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : fallback;
}

const rounds = Number(arg('rounds', '5'));
const messages = Number(arg('messages', '200000'));
const host = socketAddressText('127.0.0.1', 10911);
const body = Buffer.alloc(1024, 0x61);
const adds: [string, string][] = [
  ['MSG_REGION', 'DefaultRegion'],
  ['TRACE_ON', 'true'],
  ['CLUSTER', 'DefaultCluster'],
];
// what rocketwire's and Java's producers send: UNIQ_KEY, WAIT, TAGS, KEYS
const sent = Array.from(
  { length: 1024 },
  (_, i) =>
    `UNIQ_KEY\u00017F0000010000000000000000${String(i).padStart(8, '0')}\u0002WAIT\u0001true\u0002TAGS\u0001TagA\u0002KEYS\u0001order-${i}`,
);
const fields = {
  topic: 'BenchTopic',
  queueId: 0,
  flag: 0,
  sysFlag: 0,
  bornTimestamp: 1_700_000_000_000,
  bornHost: host,
  reconsumeTimes: 0,
  preparedTransactionOffset: 0,
  body,
};

function asSent(n: number): number {
  let sink = 0;
  for (let i = 0; i < n; i++) {
    const text = appendProperties(sent[i & 1023]!, adds)!;
    const inner: MessageInner = withPropertiesText(fields, text);
    sink += prepareRecord(inner, host, inner.propertiesText!).length;
  }
  return sink;
}

function decoded(n: number): number {
  let sink = 0;
  for (let i = 0; i < n; i++) {
    const properties = decodeProperties(sent[i & 1023]!);
    for (const [k, v] of adds) properties[k] = v;
    const inner: MessageInner = { ...fields, properties };
    sink += prepareRecord(inner, host, encodeProperties(inner.properties)).length;
  }
  return sink;
}

function time(fn: (n: number) => number): number {
  const t0 = process.hrtime.bigint();
  fn(messages);
  return Number(process.hrtime.bigint() - t0) / messages;
}

asSent(messages / 4);
decoded(messages / 4);
const out: { round: number; asSentNs: number; decodedNs: number; ratio: number }[] = [];
for (let r = 0; r < rounds; r++) {
  // alternate which side goes first
  const [a, d] = r % 2 === 0 ? [time(asSent), time(decoded)] : [0, time(decoded)];
  const asSentNs = r % 2 === 0 ? a : time(asSent);
  out.push({
    round: r + 1,
    asSentNs: Math.round(asSentNs),
    decodedNs: Math.round(d),
    ratio: +(asSentNs / d).toFixed(3),
  });
}
process.stdout.write(`${JSON.stringify({ messages, rounds: out }, null, 1)}\n`);
