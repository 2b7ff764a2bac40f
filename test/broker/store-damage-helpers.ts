// Helpers of the store-damage suite: fill a store with known messages, damage its files the way
// disks and people do, reopen it and list what is still consumable.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { decodeMessages } from '../../protocol/index.js';
import { MessageStore } from '../../lib/broker/index.js';
import { ManualClock } from '../../lib/clock.js';
import { socketAddressText, type MessageInner } from '../../lib/broker/message-record.js';

export const SEGMENT = 8192;
const storeHost = socketAddressText('127.0.0.1', 10911);
const bornHost = socketAddressText('10.0.0.7:4567');

export interface Stored {
  body: string;
  topic: string;
  queueId: number;
  queueOffset: number;
  phys: number;
  size: number;
}

export const QUEUES: [string, number][] = [
  ['DamageA', 0],
  ['DamageA', 1],
  ['DamageB', 0],
];

export function inner(topic: string, queueId: number, body: string): MessageInner {
  return {
    topic,
    queueId,
    flag: 0,
    sysFlag: 0,
    bornTimestamp: 1000,
    bornHost,
    reconsumeTimes: 0,
    preparedTransactionOffset: 0,
    body: Buffer.from(body),
    properties: { UNIQ_KEY: `K-${body}`, TAGS: 'tag' },
  };
}

/** A store with small segments (older ones read from disk) whose warnings land in `warnings`. */
export function openStore(dir: string, warnings: string[] = []): MessageStore {
  const s = new MessageStore({
    dir,
    storeHost,
    clock: new ManualClock(),
    segmentSize: SEGMENT,
    cachedSegments: 1,
    flushIntervalMs: 60_000,
    warn: (l) => warnings.push(l),
  });
  s.open();
  return s;
}

/** `n` messages over QUEUES round robin, bodies of varying length; closes the store (checkpoint written). */
export function fill(dir: string, n = 300): Stored[] {
  const s = openStore(dir);
  const out: Stored[] = [];
  for (let i = 0; i < n; i++) {
    const [topic, queueId] = QUEUES[i % QUEUES.length]!;
    const body = `m${i}-${'x'.repeat(40 + ((i * 37) % 160))}`;
    const w = s.putMessages([inner(topic, queueId, body)]).written[0]!;
    out.push({ body, topic, queueId, queueOffset: w.queueOffset, phys: w.physOffset, size: 0 });
  }
  s.close();
  for (const m of out) m.size = fs.readFileSync(segmentFile(dir, m.phys)).readInt32BE(m.phys % SEGMENT);
  return out;
}

export function segmentFile(dir: string, phys: number): string {
  return path.join(dir, 'commitlog', String(Math.floor(phys / SEGMENT) * SEGMENT).padStart(20, '0'));
}

export function segments(dir: string): string[] {
  return fs
    .readdirSync(path.join(dir, 'commitlog'))
    .sort()
    .map((n) => path.join(dir, 'commitlog', n));
}

/** Write `bytes` at commit-log offset `phys` (inside one segment file). */
export function overwrite(dir: string, phys: number, bytes: Buffer): void {
  const fd = fs.openSync(segmentFile(dir, phys), 'r+');
  fs.writeSync(fd, bytes, 0, bytes.length, phys % SEGMENT);
  fs.closeSync(fd);
}

/** Bytes that look like nothing: a fixed pseudo-random pattern (the same in every run). */
export function garbage(n: number, seed = 7): Buffer {
  const b = Buffer.alloc(n);
  let x = seed;
  for (let i = 0; i < n; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    b[i] = x >>> 24;
  }
  return b;
}

/** Every message consumable from each queue, walking nextBeginOffset as a consumer does. */
export function consumable(s: MessageStore): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [topic, q] of QUEUES) {
    const bodies: string[] = [];
    let offset = 0;
    for (let guard = 0; guard < 10_000; guard++) {
      const r = s.getMessage(topic, q, offset, 32, null);
      for (const rec of r.records) for (const m of decodeMessages(rec)) bodies.push(m.body.toString());
      if (r.status !== 'FOUND' && r.status !== 'NO_MATCHED_MESSAGE') break;
      offset = r.nextBeginOffset;
    }
    out.set(`${topic}@${q}`, bodies);
  }
  return out;
}

/** The messages of `all` per queue, minus those `lost` says are gone. */
export function expected(all: Stored[], lost: (m: Stored) => boolean = () => false): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [topic, q] of QUEUES)
    out.set(
      `${topic}@${q}`,
      all.filter((m) => m.topic === topic && m.queueId === q && !lost(m)).map((m) => m.body),
    );
  return out;
}

/** True when the record of m overlaps [from, to). */
export function overlaps(m: Stored, from: number, to: number): boolean {
  return m.phys < to && m.phys + m.size > from;
}

export function cqFile(dir: string, topic: string, queueId: number): string {
  return path.join(dir, 'consumequeue', topic, String(queueId), '00000000000000000000');
}
