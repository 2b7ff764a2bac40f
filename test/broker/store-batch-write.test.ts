// Commit-log writes of a put: a batch's records go out in one system call, on the store and on the
// broker's send path; a failed batch write fails the whole batch and leaves nothing; a crash in the
// middle of a batch's write keeps the records before the tear.
import fs from 'node:fs';
import * as path from 'node:path';
import { syncBuiltinESMExports } from 'node:module';
import t from 'tap';
import { decodeMessages } from '../../protocol/index.js';
import { type MessageStore, startBroker } from '../../lib/broker/index.js';
import { ManualClock } from '../../lib/clock.js';
import { Producer } from '../../lib/producer/index.js';
import type { MessageInner } from '../../lib/broker/message-record.js';
import { inner, openStore } from './store-damage-helpers.js';

// small segments: the batches below fit in the first one
const open = (dir: string): MessageStore => openStore(dir);

function bodies(s: MessageStore, topic: string, queueId: number): string[] {
  return s
    .getMessage(topic, queueId, 0, 32, null)
    .records.flatMap((rec) => decodeMessages(rec))
    .map((m) => m.body.toString());
}

/**
 * Counts the write system calls (writeSync and writevSync) made while `fn` runs, to commit-log
 * segment files only when `commitLogOnly` (the broker also writes topic configs on the way).
 */
async function countWrites<T>(
  fn: () => Promise<T>,
  { fail = false, commitLogOnly = false } = {},
): Promise<{ writes: number; value: T }> {
  const real = { writeSync: fs.writeSync, writevSync: fs.writevSync };
  let writes = 0;
  const wrap =
    <F extends (...a: never[]) => number>(f: F) =>
    (...a: Parameters<F>): number => {
      const fd = a[0] as unknown as number;
      if (!commitLogOnly || fs.readlinkSync(`/proc/self/fd/${fd}`).includes(`${path.sep}commitlog${path.sep}`))
        writes++;
      if (fail) throw Object.assign(new Error('EIO: i/o error, write'), { code: 'EIO' });
      return f(...a);
    };
  fs.writeSync = wrap(real.writeSync) as typeof fs.writeSync;
  fs.writevSync = wrap(real.writevSync) as typeof fs.writevSync;
  syncBuiltinESMExports();
  try {
    const value = await fn();
    return { writes, value };
  } finally {
    fs.writeSync = real.writeSync;
    fs.writevSync = real.writevSync;
    syncBuiltinESMExports();
  }
}

const batch = (topic: string, queueId: number, prefix: string, n: number): MessageInner[] =>
  Array.from({ length: n }, (_, i) => inner(topic, queueId, `${prefix}${i}`));

t.test('a batch put is written with one system call, its records at consecutive offsets', async (t) => {
  const s = open(t.testdir({}));
  t.teardown(() => s.close());
  const { writes, value } = await countWrites(async () => s.putMessages(batch('B', 0, 'm', 32)));
  t.equal(writes, 1, 'one write for 32 records');
  t.equal(value.status, 'PUT_OK');
  t.same(
    value.written.map((w) => w.queueOffset),
    Array.from({ length: 32 }, (_, i) => i),
  );
  for (let i = 1; i < 32; i++)
    t.ok(value.written[i]!.physOffset > value.written[i - 1]!.physOffset, `record ${i} follows record ${i - 1}`);
  t.same(
    bodies(s, 'B', 0),
    Array.from({ length: 32 }, (_, i) => `m${i}`),
  );
  const single = await countWrites(async () => s.putMessages([inner('B', 0, 'one')]));
  t.equal(single.writes, 1, 'a single message: one write too');
  t.equal(single.value.written[0]!.queueOffset, 32);
});

t.test('a batch sent to the broker is stored with one commit-log write', async (t) => {
  const clock = new ManualClock();
  const broker = await startBroker({ dataDir: t.testdir({}), clock, queues: 1 });
  const producer = new Producer({ group: 'batch_pg', namesrvAddr: broker.namesrv, clock });
  t.teardown(async () => {
    await producer.shutdown();
    await broker.close();
  });
  await producer.start();
  await producer.send({ topic: 'BatchT', body: 'topic made' });
  const { writes, value } = await countWrites(
    () => producer.sendBatch(Array.from({ length: 16 }, (_, i) => ({ topic: 'BatchT', body: `b${i}` }))),
    { commitLogOnly: true },
  );
  t.equal(value.status, 'SEND_OK');
  t.equal(value.msgId.split(',').length, 16);
  t.equal(writes, 1, 'the 16 records of the batch in one write');
});

t.test('a batch whose write fails fails as a whole and leaves nothing behind', async (t) => {
  const dir = t.testdir({});
  const s = open(dir);
  t.equal(s.putMessages([inner('F', 0, 'before')]).status, 'PUT_OK');
  const end = s.commitLogEnd;
  const { writes, value } = await countWrites(async () => s.putMessages(batch('F', 0, 'lost', 5)), { fail: true });
  t.equal(writes, 1, 'one write tried');
  t.equal(value.status, 'SERVICE_NOT_AVAILABLE');
  t.same(value.written, []);
  t.match(value.remark, /EIO/);
  const after = s.putMessages([inner('F', 0, 'after')]);
  t.equal(after.status, 'PUT_OK');
  t.equal(after.written[0]!.queueOffset, 1, 'the failed batch took no queue offset');
  t.equal(after.written[0]!.physOffset, end, 'and no commit-log room');
  t.same(bodies(s, 'F', 0), ['before', 'after']);
  s.close();
  const again = open(dir);
  t.same(bodies(again, 'F', 0), ['before', 'after'], 'and none comes back at restart');
  again.close();
});

t.test('a batch write torn by a crash keeps the records before the tear', async (t) => {
  const dir = t.testdir({ live: {}, crashed: {} });
  const live = path.join(dir, 'live');
  const s = open(live);
  t.teardown(() => s.close());
  t.equal(s.putMessages([inner('T', 0, 'solo')]).status, 'PUT_OK');
  s.flush(true); // the checkpoint and queues cover 'solo'; the batch below is in the commit log only
  const result = s.putMessages(batch('T', 0, 'g', 6));
  t.equal(result.status, 'PUT_OK');
  // the crash: the store's files as they are now, with the batch's write on disk only up to the
  // middle of its fourth record (g3)
  const crashed = path.join(dir, 'crashed');
  fs.cpSync(live, crashed, { recursive: true });
  const g3 = result.written[3]!.physOffset;
  fs.truncateSync(path.join(crashed, 'commitlog', '00000000000000000000'), g3 + 20);
  const lines: string[] = [];
  const again = openStore(crashed, lines);
  t.teardown(() => again.close());
  t.same(bodies(again, 'T', 0), ['solo', 'g0', 'g1', 'g2'], 'the records before the tear are kept');
  t.equal(again.getMaxOffset('T', 0), 4, 'no queue offset for the torn record or those after it');
  t.match(lines.join('\n'), /cut a torn tail of 20 bytes/);
  const next = again.putMessages([inner('T', 0, 'next')]);
  t.equal(next.written[0]!.physOffset, g3, 'the next record goes where the torn one was');
  t.equal(next.written[0]!.queueOffset, 4);
});
