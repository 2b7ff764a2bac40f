// Grouped commit-log writes: the puts of one event-loop turn are written with one system call,
// each answered once written; a failed group fails every put in it and leaves nothing; a crash in
// the middle of a group's write keeps the records before the tear.
import fs from 'node:fs';
import * as path from 'node:path';
import { syncBuiltinESMExports } from 'node:module';
import t from 'tap';
import { decodeMessages } from '../../protocol/index.js';
import { MessageStore, type PutMessageResult } from '../../lib/broker/index.js';
import { ManualClock } from '../../lib/clock.js';
import { socketAddressText, type MessageInner } from '../../lib/broker/message-record.js';

const storeHost = socketAddressText('127.0.0.1', 10911);

function inner(topic: string, queueId: number, body: string): MessageInner {
  return {
    topic,
    queueId,
    flag: 0,
    sysFlag: 0,
    bornTimestamp: 1000,
    bornHost: socketAddressText('10.0.0.7:4567'),
    reconsumeTimes: 0,
    preparedTransactionOffset: 0,
    body: Buffer.from(body),
    properties: { UNIQ_KEY: `K-${body}` },
  };
}

function open(dir: string, segmentSize = 64 * 1024): MessageStore {
  const s = new MessageStore({
    dir,
    storeHost,
    clock: new ManualClock(),
    segmentSize,
    flushIntervalMs: 60_000,
    warn: () => undefined,
  });
  s.open();
  return s;
}

function bodies(s: MessageStore, topic: string, queueId: number): string[] {
  return s
    .getMessage(topic, queueId, 0, 32, null)
    .records.flatMap((rec) => decodeMessages(rec))
    .map((m) => m.body.toString());
}

/** Counts the write system calls made while `fn` runs (writeSync and writevSync). */
async function countWrites<T>(fn: () => Promise<T>, fail = false): Promise<{ writes: number; value: T }> {
  const real = { writeSync: fs.writeSync, writevSync: fs.writevSync };
  let writes = 0;
  const wrap =
    <F extends (...a: never[]) => number>(f: F) =>
    (...a: Parameters<F>): number => {
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

t.test(
  'the puts of one turn after its first two are written with one system call, each answered once written',
  async (t) => {
    const s = open(t.testdir({}));
    t.teardown(() => s.close());
    const { writes, value } = await countWrites(async () => {
      const puts: (PutMessageResult | Promise<PutMessageResult>)[] = [];
      for (let i = 0; i < 12; i++) puts.push(s.putMessagesGrouped([inner('G', i % 3, `m${i}`)]));
      // a batch of the same turn joins the group
      puts.push(s.putMessagesGrouped([inner('G', 0, 'b0'), inner('G', 0, 'b1')]));
      t.notOk(puts[0] instanceof Promise, 'the first put of a turn is written at once (its answer leaves early)');
      t.notOk(puts[1] instanceof Promise, 'so is the second');
      t.ok(puts[2] instanceof Promise, 'the rest wait for the group');
      t.equal(s.getMaxOffset('G', 2), 0, 'nothing of the group is visible before its write');
      return Promise.all(puts);
    });
    t.equal(writes, 3, 'two writes at once, then one for the other 11 puts');
    t.ok(
      value.every((r) => r.status === 'PUT_OK'),
      'every put stored',
    );
    t.same(value[0]!.written[0]!.queueOffset, 0);
    t.same(value[3]!.written[0]!.queueOffset, 1, 'queue offsets follow each other within the group');
    t.same(
      value[12]!.written.map((w) => w.queueOffset),
      [4, 5],
    );
    t.same(bodies(s, 'G', 0), ['m0', 'm3', 'm6', 'm9', 'b0', 'b1']);
    t.same(bodies(s, 'G', 2), ['m2', 'm5', 'm8', 'm11']);
    // the next turn starts again with puts written at once
    t.notOk(s.putMessagesGrouped([inner('G', 1, 'next')]) instanceof Promise);
  },
);

t.test('a put written at once also writes the grouped puts before it, in order', async (t) => {
  const s = open(t.testdir({}));
  t.teardown(() => s.close());
  const grouped = s.putMessagesGrouped([inner('O', 0, 'first')]);
  const now = s.putMessages([inner('O', 0, 'second')]);
  t.equal(now.status, 'PUT_OK');
  t.equal(now.written[0]!.queueOffset, 1);
  t.equal((await grouped).written[0]!.queueOffset, 0);
  t.same(bodies(s, 'O', 0), ['first', 'second']);
});

t.test('a group whose write fails fails every put in it and leaves nothing behind', async (t) => {
  const dir = t.testdir({});
  const s = open(dir);
  t.equal(s.putMessages([inner('F', 0, 'before')]).status, 'PUT_OK');
  const { value } = await countWrites(
    async () => Promise.all([1, 2, 3, 4, 5].map((i) => s.putMessagesGrouped([inner('F', i % 2, `lost${i}`)]))),
    true,
  );
  t.same(
    value.map((r) => r.status),
    [
      'SERVICE_NOT_AVAILABLE',
      'SERVICE_NOT_AVAILABLE',
      'SERVICE_NOT_AVAILABLE',
      'SERVICE_NOT_AVAILABLE',
      'SERVICE_NOT_AVAILABLE',
    ],
    'the two written at once and the three of the group',
  );
  t.match(value[4]!.remark, /EIO/);
  const after = await s.putMessagesGrouped([inner('F', 0, 'after')]);
  t.equal(after.status, 'PUT_OK');
  t.equal(after.written[0]!.queueOffset, 1, 'the failed puts took no queue offset');
  t.same(bodies(s, 'F', 0), ['before', 'after']);
  s.close();
  const again = open(dir);
  t.same(bodies(again, 'F', 0), ['before', 'after'], 'and none comes back at restart');
  t.equal(again.getMaxOffset('F', 1), 0);
  again.close();
});

t.test('a grouped write torn by a crash keeps the records before the tear', async (t) => {
  const dir = t.testdir({ live: {}, crashed: {} });
  const live = path.join(dir, 'live');
  const s = open(live);
  t.teardown(() => s.close());
  t.equal(s.putMessages([inner('T', 0, 'solo')]).status, 'PUT_OK');
  s.flush(true); // the checkpoint and queues cover 'solo'; the group below is in the commit log only
  // two puts written at once, then a group of six in one write
  const early = [s.putMessagesGrouped([inner('T', 0, 'e0')]), s.putMessagesGrouped([inner('T', 1, 'e1')])];
  const results = await Promise.all(
    Array.from({ length: 6 }, (_, i) => s.putMessagesGrouped([inner('T', i % 2, `g${i}`)])),
  );
  t.ok((await Promise.all(early)).every((r) => r.status === 'PUT_OK'));
  t.ok(results.every((r) => r.status === 'PUT_OK'));
  // the crash: the store's files as they are now, with the group's write on disk only up to the
  // middle of its fourth record (g3)
  const crashed = path.join(dir, 'crashed');
  fs.cpSync(live, crashed, { recursive: true });
  const g3 = results[3]!.written[0]!.physOffset;
  fs.truncateSync(path.join(crashed, 'commitlog', '00000000000000000000'), g3 + 20);
  const lines: string[] = [];
  const again = new MessageStore({
    dir: crashed,
    storeHost,
    clock: new ManualClock(),
    segmentSize: 64 * 1024,
    flushIntervalMs: 60_000,
    warn: (l) => lines.push(l),
  });
  again.open();
  t.teardown(() => again.close());
  t.same(bodies(again, 'T', 0), ['solo', 'e0', 'g0', 'g2'], 'queue 0 keeps the records before the tear');
  t.same(bodies(again, 'T', 1), ['e1', 'g1'], 'queue 1 too');
  t.equal(again.getMaxOffset('T', 1), 2, 'no queue offset for the torn record or those after it');
  t.match(lines.join('\n'), /cut a torn tail of 20 bytes/);
  const next = again.putMessages([inner('T', 1, 'next')]);
  t.equal(next.written[0]!.physOffset, g3, 'the next record goes where the torn one was');
  t.equal(next.written[0]!.queueOffset, 2);
  t.same(bodies(again, 'T', 1), ['e1', 'g1', 'next']);
});
