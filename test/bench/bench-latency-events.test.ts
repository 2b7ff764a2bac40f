import t from 'tap';
import { NO_QUEUE, SampleLog, decodeSamples, type Samples } from '../../bench/harness/latency-record.js';
import { convergence, duplicates, longestGap, lost, windowPercentiles } from '../../bench/harness/latency-events.js';

/** Samples from rows of [due µs, handled µs, queue, sequence], through the dump's byte layout. */
function samples(rows: Array<[number, number, number, number]>): Samples {
  const log = new SampleLog();
  for (const [sent, handled, q, seq] of rows) log.add(sent, handled, q, seq);
  return decodeSamples(log.encode());
}

t.test('a dump holds every sample, past the first growth of its arrays', async (t) => {
  const log = new SampleLog();
  for (let i = 0; i < 10_000; i++) log.add(1e15 + i, 1e15 + i + 500.5, i % 8, i);
  const s = decodeSamples(log.encode());
  t.equal(s.seq.length, 10_000);
  t.equal(s.handledUs[9_999], 1e15 + 9_999 + 500.5);
  t.equal(s.queueId[13], 5);
});

t.test('a join: the queue that moved settles when the old member let go and the new one began', async (t) => {
  const join = 1_000_000;
  // Queue 0 stays with member A; queue 1 moves to B: A handles it until 1 030 000, B from 1 040 000 and
  // again message 7 (a duplicate: B started from an offset A had not committed).
  const a = samples([
    [900_000, 901_000, 0, 1],
    [900_000, 901_000, 1, 2],
    [1_010_000, 1_011_000, 0, 3],
    [1_020_000, 1_030_000, 1, 7],
    [1_100_000, 1_101_000, 0, 9],
  ]);
  const b = samples([
    [1_020_000, 1_040_000, 1, 7],
    [1_050_000, 1_052_000, 1, 8],
    [1_200_000, 1_201_000, 1, 10],
  ]);
  const c = convergence([a, b], join);
  t.equal(c.convergedUs, 1_040_000, 'the later of A’s last and B’s first message of the moved queue');
  t.equal(c.movedQueues, 1);
  t.equal(c.duplicates, 1);
  const during = windowPercentiles([a, b], join, c.convergedUs!);
  t.equal(during.count, 3, 'messages due from the join to convergence, both members, the duplicate twice');
  t.ok(Math.abs(during.max - 20) < 0.05, `the slowest of them took 20 ms (${during.max})`);
  t.equal(windowPercentiles([a, b], -Infinity, join).count, 2, 'messages due before the join');
  t.equal(
    windowPercentiles([a, b], c.convergedUs!, Infinity).count,
    3,
    'and due after convergence (a clock time: 1 040 000)',
  );
  t.equal(convergence([a], join).convergedUs, null, 'nothing moved with one member');
});

t.test('a restart: the longest gap, and acknowledged messages not handled', async (t) => {
  const consumer = samples([
    [0, 1_000, 0, 0],
    [1_000, 2_000, 1, 1],
    [2_000, 900_000, 0, 2],
    [3_000, 901_000, 1, 3],
    [3_000, 902_000, 1, 3],
  ]);
  t.same(longestGap([consumer]), { fromUs: 2_000, toUs: 900_000 });
  t.equal(duplicates([consumer]), 1);
  const producer = samples([
    [0, 500, 0, 0],
    [1_000, 1_500, 1, 1],
    [2_000, 2_500, 0, 2],
    [3_000, 3_500, 1, 3],
    [4_000, Number.NaN, NO_QUEUE, 4], // failed: not owed to anyone
    [5_000, 5_500, 0, 5],
  ]);
  t.same(lost(producer, [consumer]), [5]);
});
