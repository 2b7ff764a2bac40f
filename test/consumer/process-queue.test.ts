import t from 'tap';
import type { MessageExt } from '../../lib/consumer/index.js';
import { ProcessQueue } from '../../lib/consumer/core/process-queue.js';
import { createMessageExt } from '../../protocol/internal.js';

function msg(queueOffset: number, bodyLen = 10, props: Record<string, string> = {}): MessageExt {
  return createMessageExt({
    topic: 'T',
    queueId: 0,
    flag: 0,
    queueOffset,
    commitLogOffset: queueOffset * 100,
    sysFlag: 0,
    bornTimestamp: 0,
    bornHost: '127.0.0.1:1',
    storeTimestamp: 0,
    storeHost: '127.0.0.1:2',
    reconsumeTimes: 0,
    preparedTransactionOffset: 0,
    bodyCRC: 0,
    storeSize: 0,
    properties: props,
    body: Buffer.alloc(bodyLen),
    msgId: `id${queueOffset}`,
    offsetMsgId: `id${queueOffset}`,
  });
}

t.test('removeMessage returns the smallest cached offset, then max+1, and -1 when empty', async (t) => {
  const pq = new ProcessQueue(0);
  const ms = [10, 11, 12, 13, 14].map((o) => msg(o));
  pq.putMessage(ms);
  t.equal(pq.msgCount, 5);
  t.equal(pq.msgSize, 50);
  t.equal(pq.maxSpan, 4);
  t.equal(pq.removeMessage([ms[2]!]), 10, 'a middle message done: offset stays at the oldest unconsumed');
  t.equal(pq.removeMessage([ms[4]!]), 10);
  t.equal(pq.maxSpan, 3, 'span shrinks when the tail goes');
  t.equal(pq.removeMessage([ms[0]!]), 11, 'head done: next unconsumed');
  t.equal(pq.removeMessage([ms[1]!, ms[3]!]), 15, 'all done: last pulled + 1');
  t.equal(pq.msgCount, 0);
  t.equal(pq.msgSize, 0);
  t.equal(pq.maxSpan, 0);
  t.equal(pq.removeMessage([ms[1]!]), -1, 'empty before the call: nothing to commit');
});

t.test('a blocked head keeps the committed offset while thousands pass behind it', async (t) => {
  const pq = new ProcessQueue(0);
  const ms = Array.from({ length: 5000 }, (_, i) => msg(i));
  pq.putMessage(ms);
  let last = -1;
  for (let i = 1; i < 5000; i++) last = pq.removeMessage([ms[i]!]);
  t.equal(last, 0, 'never passes message 0');
  t.equal(pq.msgCount, 1);
  t.equal(pq.maxSpan, 0);
  t.equal(pq.removeMessage([ms[0]!]), 5000);
});

t.test('duplicate offsets are ignored, out-of-order ones are inserted in place', async (t) => {
  const pq = new ProcessQueue(0);
  pq.putMessage([msg(5), msg(7)]);
  pq.putMessage([msg(7)]);
  t.equal(pq.msgCount, 2, 'duplicate ignored');
  pq.putMessage([msg(6)]);
  t.same(
    [...pq.messages()].map((m) => m.queueOffset),
    [5, 6, 7],
  );
  t.equal(pq.queueOffsetMax, 7);
});

t.test('removing a message that is not the cached one changes nothing', async (t) => {
  const pq = new ProcessQueue(0);
  pq.putMessage([msg(1), msg(2)]);
  t.equal(pq.removeMessage([msg(9)]), 1);
  t.equal(pq.msgCount, 2);
});

t.test('cleanExpiredMsg sends back the expired head messages only, at most 16', async (t) => {
  const pq = new ProcessQueue(0);
  const ms = Array.from({ length: 20 }, (_, i) => msg(i, 1, { CONSUME_START_TIME: '1000' }));
  ms[18]!.properties.CONSUME_START_TIME = '999999';
  pq.putMessage(ms);
  const sent: number[] = [];
  const r = await pq.cleanExpiredMsg(1000 + 60_001, 60_000, async (m) => void sent.push(m.queueOffset));
  t.same(r, { cleaned: 16, offset: 16 });
  t.same(
    sent,
    Array.from({ length: 16 }, (_, i) => i),
  );
  t.equal(pq.minOffset, 16);
  const r2 = await pq.cleanExpiredMsg(1000 + 60_001, 60_000, async (m) => void sent.push(m.queueOffset));
  t.same(r2, { cleaned: 2, offset: 18 }, 'stops at the head that has not expired');
  t.equal(pq.minOffset, 18);
  const pq2 = new ProcessQueue(0);
  pq2.putMessage([msg(1)]);
  t.same(
    await pq2.cleanExpiredMsg(1e12, 1, async () => undefined),
    { cleaned: 0, offset: -1 },
    'never started: never expired',
  );
  const pq3 = new ProcessQueue(0);
  pq3.putMessage([msg(1, 1, { CONSUME_START_TIME: '0' })]);
  t.same(
    await pq3.cleanExpiredMsg(1e12, 1, async () => {
      throw new Error('down');
    }),
    { cleaned: 0, offset: -1 },
    'send-back failure keeps it',
  );
  t.equal(pq3.msgCount, 1);
});

t.test('orderly take/commit/consume-again keeps counts and order', async (t) => {
  const pq = new ProcessQueue(0);
  t.equal(pq.putMessage([msg(1), msg(2), msg(3)]), true, 'first put dispatches');
  t.equal(pq.putMessage([msg(4)]), false, 'no second dispatch while consuming');
  const a = pq.takeMessages(2, 0);
  t.same(
    a.map((m) => m.queueOffset),
    [1, 2],
  );
  t.equal(pq.msgCount, 4, 'consuming messages still count');
  pq.makeMessageToConsumeAgain(a);
  t.same(
    pq.takeMessages(2, 0).map((m) => m.queueOffset),
    [1, 2],
    'retried in order',
  );
  t.equal(pq.commit(), 3);
  t.equal(pq.msgCount, 2);
  t.same(
    pq.takeMessages(5, 0).map((m) => m.queueOffset),
    [3, 4],
  );
  t.equal(pq.commit(), 5);
  t.same(pq.takeMessages(5, 0), []);
  t.equal(pq.putMessage([msg(5)]), true, 'dispatches again once drained');
});

t.test('orderly: with a steady backlog, the cache arrays stay proportional to the cached messages', async (t) => {
  // A queue that always has 100 messages waiting: take one, commit it, a new one arrives. A hole
  // left before the head and never reclaimed would grow the arrays by one slot per message
  // consumed for as long as the backlog lasts.
  const pq = new ProcessQueue(0);
  pq.putMessage(Array.from({ length: 100 }, (_, i) => msg(i)));
  let taken = 0;
  for (let next = 100; next < 20_100; next++) {
    taken += pq.takeMessages(1, 0).length;
    pq.commit();
    pq.putMessage([msg(next)]);
  }
  t.equal(taken, 20_000);
  t.equal(pq.msgCount, 100);
  t.same([...pq.messages()].map((m) => m.queueOffset).slice(0, 3), [20_000, 20_001, 20_002], 'order kept');
  // Internal arrays (private): the one place where the leak is visible short of memory use.
  const slots = (pq as unknown as { offsets: number[] }).offsets.length;
  t.ok(slots <= 2 * 100 + 64 + 1, `arrays hold ${slots} slots for 100 cached messages`);
});

t.test('lifecycle: held → dropped → removed; a failed unlock keeps it dropped; locks carry their time', async (t) => {
  const pq = new ProcessQueue(0);
  t.equal(pq.lifecycle, 'held');
  t.notOk(pq.dropped);
  pq.drop();
  t.equal(pq.lifecycle, 'dropped');
  t.ok(pq.dropped);
  pq.markUnlockFailed();
  t.equal(pq.lifecycle, 'dropped', 'a removal that gave up leaves the queue dropped');
  t.equal(pq.tryUnlockTimes, 1);
  pq.markRemoved();
  pq.drop();
  t.equal(pq.lifecycle, 'removed', 'removed is final');
  t.ok(pq.dropped);
  t.notOk(pq.locked);
  pq.markLocked(1234);
  t.ok(pq.locked);
  t.equal(pq.lastLockTimestamp, 1234);
  t.notOk(pq.isLockExpired(1234 + 30_000), 'a lock is fresh for 30 s');
  t.ok(pq.isLockExpired(1234 + 30_001));
  pq.markUnlocked();
  t.notOk(pq.locked);
  t.equal(pq.lastLockTimestamp, 1234, 'unlocking keeps the time of the last grant');
});
