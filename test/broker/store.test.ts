import * as fs from 'node:fs';
import * as path from 'node:path';
import t from 'tap';
import { decodeMessages } from '../../protocol/index.js';
import { MessageStore } from '../../lib/broker/index.js';
import { ManualClock } from '../../lib/clock.js';
import { socketAddressText, type MessageInner } from '../../lib/broker/message-record.js';
import { ConsumerOffsetManager } from '../../lib/broker/consumer-offset-manager.js';

const storeHost = socketAddressText('127.0.0.1', 10911);
const bornHost = socketAddressText('10.0.0.7:4567');

function inner(topic: string, queueId: number, body: string, tags?: string): MessageInner {
  const properties: Record<string, string> = {};
  if (tags) properties.TAGS = tags;
  properties.UNIQ_KEY = `K-${body.length > 64 ? body.slice(0, 8) : body}`;
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
    properties,
  };
}

function open(dir: string, segmentSize = 4096, cachedSegments = 4): MessageStore {
  const s = new MessageStore({
    dir,
    storeHost,
    clock: new ManualClock(),
    segmentSize,
    cachedSegments,
    flushIntervalMs: 60_000,
  });
  s.open();
  return s;
}

function bodies(s: MessageStore, topic: string, queueId = 0, from = 0): string[] {
  const r = s.getMessage(topic, queueId, from, 32, null);
  return r.records.flatMap((rec) => decodeMessages(rec)).map((m) => m.body.toString());
}

t.test('records decode with the protocol decoder; segments roll over; reads from disk match memory', async (t) => {
  const dir = t.testdir({});
  const s = open(dir, 4096, 1);
  const payload = 'x'.repeat(300);
  for (let i = 0; i < 40; i++) t.equal(s.putMessages([inner('Roll', i % 2, `${i}-${payload}`)]).status, 'PUT_OK');
  const files = fs.readdirSync(path.join(dir, 'commitlog'));
  t.ok(files.length > 2, `several segments (${files.length})`);
  t.ok(
    files.every((f) => /^\d{20}$/.test(f)),
    'segments are named by base offset',
  );
  // queue 0 holds the even messages, spread over segments, some no longer in memory
  const all: string[] = [];
  for (let off = 0; off < 20; ) {
    const r = s.getMessage('Roll', 0, off, 32, null);
    t.equal(r.status, 'FOUND');
    for (const rec of r.records) all.push(...decodeMessages(rec).map((m) => m.body.toString().split('-')[0]!));
    off = r.nextBeginOffset;
  }
  t.same(
    all,
    Array.from({ length: 20 }, (_, i) => String(i * 2)),
  );
  const m = decodeMessages(s.getMessage('Roll', 1, 3, 1, null).records[0]!)[0]!;
  t.equal(m.queueOffset, 3);
  t.equal(m.bornHost, '10.0.0.7:4567');
  t.equal(m.storeHost, '127.0.0.1:10911');
  t.equal(m.msgId, 'K-7-xxxxxx', 'UNIQ_KEY is the msgId');
  t.equal(s.lookMessageByOffset(m.commitLogOffset)?.length, m.storeSize, 'look up by commit-log offset');
  t.equal(s.lookMessageByOffset(m.commitLogOffset + 1), null, 'not a record start');
  s.close();
});

t.test('restart: messages and queue offsets survive; a torn tail is cut; lost index entries are rebuilt', async (t) => {
  const dir = t.testdir({});
  let s = open(dir, 64 * 1024);
  for (let i = 0; i < 10; i++) s.putMessages([inner('R', 0, `m${i}`, i % 2 ? 'odd' : 'even')]);
  s.close();
  // simulate a crash: half a record at the end of the commit log and consume-queue entries lost
  const seg = path.join(dir, 'commitlog', fs.readdirSync(path.join(dir, 'commitlog'))[0]!);
  const full = fs.readFileSync(seg);
  const recLen = full.readInt32BE(0);
  fs.appendFileSync(seg, full.subarray(0, Math.floor(recLen / 2)));
  const cq = path.join(dir, 'consumequeue', 'R', '0', '00000000000000000000');
  fs.truncateSync(cq, 20 * 6 + 7);
  fs.rmSync(path.join(dir, 'checkpoint.json'));
  s = open(dir, 64 * 1024);
  t.equal(s.getMaxOffset('R', 0), 10, 'index rebuilt from the commit log');
  t.same(
    bodies(s, 'R'),
    Array.from({ length: 10 }, (_, i) => `m${i}`),
    'the half-written record is never served',
  );
  t.equal(s.putMessages([inner('R', 0, 'm10')]).written[0]!.queueOffset, 10, 'offsets continue');
  const tagCode = s.getMessage('R', 0, 0, 32, (code) => code === hash('odd'));
  t.same(
    tagCode.records.flatMap((r) => decodeMessages(r)).map((m) => m.body.toString()),
    ['m1', 'm3', 'm5', 'm7', 'm9'],
    'tag codes rebuilt too',
  );
  s.close();
});

t.test('the whole index is rebuilt across segments when consume queues and checkpoint are gone', async (t) => {
  const dir = t.testdir({});
  let s = open(dir, 4096, 1);
  for (let i = 0; i < 60; i++) s.putMessages([inner(`T${i % 3}`, i % 2, `m${i}-${'z'.repeat(200)}`)]);
  s.close();
  t.ok(fs.readdirSync(path.join(dir, 'commitlog')).length >= 3, 'several segments');
  fs.rmSync(path.join(dir, 'consumequeue'), { recursive: true });
  fs.rmSync(path.join(dir, 'checkpoint.json'));
  s = open(dir, 4096, 1);
  let total = 0;
  for (const topic of ['T0', 'T1', 'T2']) for (const q of [0, 1]) total += s.getMaxOffset(topic, q);
  t.equal(total, 60, 'every message indexed again');
  const firstOfT1q1 = decodeMessages(s.getMessage('T1', 1, 0, 1, null).records[0]!)[0]!;
  t.equal(firstOfT1q1.body.toString().split('-')[0], 'm1');
  const lastOfT2q1 = decodeMessages(s.getMessage('T2', 1, 9, 1, null).records[0]!)[0]!;
  t.equal(lastOfT2q1.body.toString().split('-')[0], 'm59');
  s.close();
});

function hash(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(31, h) + s.charCodeAt(i)) | 0;
  return h;
}

t.test('an unwritable store answers SERVICE_NOT_AVAILABLE and writes nothing half', async (t) => {
  const dir = t.testdir({});
  const s = open(dir, 4096);
  t.equal(s.putMessages([inner('W', 0, 'ok')]).status, 'PUT_OK');
  // make the next record need a new segment in a folder we cannot write
  const clDir = path.join(dir, 'commitlog');
  // (chmod does not stop root, so the folder is replaced by a file)
  fs.renameSync(clDir, clDir + '.moved');
  fs.writeFileSync(clDir, 'not a folder');
  const r = s.putMessages([inner('W', 0, 'y'.repeat(3900))]);
  t.equal(r.status, 'SERVICE_NOT_AVAILABLE');
  t.match(r.remark, /store write failed/);
  t.equal(s.getMaxOffset('W', 0), 1, 'no index entry for the failed write');
  fs.rmSync(clDir);
  fs.renameSync(clDir + '.moved', clDir);
  t.equal(s.putMessages([inner('W', 0, 'after')]).status, 'PUT_OK', 'works again once writable');
  t.same(bodies(s, 'W'), ['ok', 'after']);
  s.close();
});

t.test('consumerOffset.json: fastjson layout written atomically, both layouts read', async (t) => {
  const dir = t.testdir({});
  const m = new ConsumerOffsetManager(dir);
  m.load(); // a manager persists only what it loaded (here: no file yet)
  m.commit('cg1', 'TopicTest', 0, 120);
  m.commit('cg1', 'TopicTest', 1, 98);
  m.commit('cg1', '%RETRY%cg1', 0, 0);
  m.persist();
  const text = fs.readFileSync(path.join(dir, 'config', 'consumerOffset.json'), 'utf8');
  t.equal(
    text,
    '{\n\t"offsetTable":{\n\t\t"TopicTest@cg1":{0:120,1:98\n\t\t},\n\t\t"%RETRY%cg1@cg1":{0:0\n\t\t}\n\t}\n}',
  );
  t.notOk(fs.existsSync(path.join(dir, 'config', 'consumerOffset.json.tmp')), 'no temp file left');
  const again = new ConsumerOffsetManager(dir);
  again.load();
  t.equal(again.query('cg1', 'TopicTest', 1), 98);
  fs.writeFileSync(
    path.join(dir, 'config', 'consumerOffset.json'),
    JSON.stringify({ offsetTable: { 'T@g': { '3': 7 } } }),
  );
  const std = new ConsumerOffsetManager(dir);
  std.load();
  t.equal(std.query('g', 'T', 3), 7, 'standard JSON read too');
});
