// Commit-log retention on the store's clock (Java's CleanCommitLogService): expired segments go at
// the deleteWhen hour or when the disk is full, oldest first, never the one being written; queues
// move their min offset past what went, and a pull below it is told where the queue now starts.
import * as fs from 'node:fs';
import * as path from 'node:path';
import t from 'tap';
import { RequestCode, ResponseCode, decodeMessages } from '../../protocol/index.js';
import { MessageStore, startBroker } from '../../lib/broker/index.js';
import { ManualClock } from '../../lib/clock.js';
import { socketAddressText, type MessageInner } from '../../lib/broker/message-record.js';
import { client, ext, pullRequest, sendRequest } from './helpers.js';

const storeHost = socketAddressText('127.0.0.1', 10911);
const HOUR = 3_600_000;
const body = 'x'.repeat(900);

function inner(queueId: number, i: number): MessageInner {
  return {
    topic: 'R',
    queueId,
    flag: 0,
    sysFlag: 0,
    bornTimestamp: 1000,
    bornHost: socketAddressText('10.0.0.7:4567'),
    reconsumeTimes: 0,
    preparedTransactionOffset: 0,
    body: Buffer.from(`${i}-${body}`),
    properties: { UNIQ_KEY: `K${i}` },
  };
}

interface Opened {
  store: MessageStore;
  clock: ManualClock;
  disk: { used: number };
  warnings: string[];
}

/** A store of 4 KiB segments (four ~1 KiB records each) whose clock starts at `hour` o'clock local time. */
function open(dir: string, hour: number, o: { deleteWhen?: string; clock?: ManualClock } = {}): Opened {
  const start = new Date(2026, 0, 10, hour, 30).getTime();
  const clock = o.clock ?? new ManualClock(start);
  const disk = { used: 0.2 };
  const warnings: string[] = [];
  const store = new MessageStore({
    dir,
    storeHost,
    clock,
    segmentSize: 4096,
    cachedSegments: 1,
    flushIntervalMs: 60_000,
    warn: (l) => warnings.push(l),
    retention: { deleteWhen: o.deleteWhen ?? '04', cleanResourceInterval: 60_000 },
    diskUsedRatio: () => disk.used,
  });
  store.open();
  return { store, clock, disk, warnings };
}

function segments(dir: string): string[] {
  return fs.readdirSync(path.join(dir, 'commitlog')).sort();
}

function fill(s: MessageStore, n: number, from = 0): void {
  for (let i = from; i < from + n; i++)
    if (s.putMessages([inner(i % 2, i)]).status !== 'PUT_OK') throw new Error('put');
}

t.test('expired segments go at the deleteWhen hour, oldest first, never the one being written', async (t) => {
  const dir = t.testdir({});
  const { store, clock } = open(dir, 3); // 03:30, one hour before "04"
  t.teardown(() => store.close());
  fill(store, 20); // 5 segments
  const before = segments(dir);
  t.equal(before.length, 5);
  clock.advance(HOUR); // 04:30 but nothing is 72 h old
  t.same(segments(dir), before, 'young segments stay at the deleteWhen hour');
  clock.advance(72 * HOUR - 30 * 60_000); // 04:00 three days later (the cleaner looks every minute)
  t.same(segments(dir), before.slice(-1), 'every expired segment went but the one being written');
  // four records a segment: 16..19 are left, queue 0 holds 16 and 18 at offsets 8 and 9
  t.equal(store.getMinOffset('R', 0), 8, 'queue 0 starts at its first message left');
  t.equal(store.getMaxOffset('R', 0), 10);
  const r = store.getMessage('R', 0, 3, 32, null);
  t.equal(r.status, 'OFFSET_TOO_SMALL');
  t.equal(r.nextBeginOffset, 8, 'a read below the min offset is told where the queue starts');
  fill(store, 4, 20);
  const after = store.getMessage('R', 0, 8, 32, null);
  t.same(
    after.records.flatMap((b) => decodeMessages(b)).map((m) => m.body.toString().split('-')[0]),
    ['16', '18', '20', '22'],
  );
});

t.test('outside the hour only a full disk cleans; above 85 % age does not matter', async (t) => {
  const dir = t.testdir({});
  const { store, clock, disk } = open(dir, 10);
  t.teardown(() => store.close());
  fill(store, 12); // 3 segments, written at 10:30
  clock.advance(73 * HOUR); // 11:30 three days later: expired, but not the hour
  t.equal(segments(dir).length, 3, 'expired segments wait for the deleteWhen hour');
  disk.used = 0.8; // above diskMaxUsedSpaceRatio (75)
  clock.advance(60_000);
  t.equal(segments(dir).length, 1, 'a disk above 75 % deletes expired segments at any hour');
  fill(store, 8, 12); // two more segments, young
  t.equal(segments(dir).length, 3);
  clock.advance(60_000);
  t.equal(segments(dir).length, 2, 'the expired one goes, the young ones stay below 85 %');
  disk.used = 0.9;
  clock.advance(60_000);
  t.equal(segments(dir).length, 1, 'above 85 % the oldest go whatever their age, still never the last');
  // left: 16..19; queue 1 holds 17 and 19 at offsets 8 and 9
  t.equal(store.getMinOffset('R', 1), 8);
  t.equal(store.getMaxOffset('R', 1), 10);
});

t.test('a store reopened after retention keeps its queue offsets', async (t) => {
  const dir = t.testdir({});
  const first = open(dir, 4);
  fill(first.store, 16);
  first.clock.advance(72 * HOUR + 60_000);
  t.equal(segments(dir).length, 1);
  const min0 = first.store.getMinOffset('R', 0);
  t.ok(min0 > 0);
  first.store.close();
  const again = open(dir, 4, { clock: new ManualClock(first.clock.now()) });
  t.teardown(() => again.store.close());
  t.same(again.warnings, [], 'nothing is reported missing or damaged');
  t.equal(again.store.getMinOffset('R', 0), min0, 'the min offset is where it was');
  t.equal(again.store.getMaxOffset('R', 0), 8);
  const next = again.store.putMessages([inner(0, 99)]);
  t.equal(next.written[0]!.queueOffset, 8, 'new messages continue the queue');
  t.equal(again.store.getMessage('R', 0, 0, 32, null).status, 'OFFSET_TOO_SMALL');
});

t.test('a pull below the min offset is answered PULL_OFFSET_MOVED with where the queue starts', async (t) => {
  const clock = new ManualClock(new Date(2026, 0, 10, 4, 0).getTime());
  const b = await startBroker({
    queues: 1,
    clock,
    segmentSize: 4096,
    fileReservedTime: 1,
    cleanResourceInterval: 600_000,
  });
  t.teardown(() => b.close());
  const c = client();
  t.teardown(() => c.close());
  for (let i = 0; i < 12; i++) {
    const res = await c.invoke(b.broker, sendRequest('Ret', body, { queueId: 0 }));
    t.equal(res.code, ResponseCode.SUCCESS);
  }
  clock.advance(HOUR + 600_000); // 05:10: an hour old, but not the hour
  t.equal((await c.invoke(b.broker, pullRequest('Ret', { offset: 0, suspendMs: 0 }))).code, ResponseCode.SUCCESS);
  clock.advance(23 * HOUR); // 04:10 the next day
  const res = await c.invoke(b.broker, pullRequest('Ret', { offset: 0, suspendMs: 0 }));
  t.equal(res.code, ResponseCode.PULL_OFFSET_MOVED);
  const min = Number(ext(res, 'minOffset'));
  t.ok(min > 0, `the queue starts later now (${min})`);
  t.equal(ext(res, 'nextBeginOffset'), String(min));
  const from = await c.invoke(b.broker, pullRequest('Ret', { offset: min, suspendMs: 0 }));
  t.equal(from.code, ResponseCode.SUCCESS, 'pulling from there finds messages');
  t.equal(RequestCode.PULL_MESSAGE, 11);
});
