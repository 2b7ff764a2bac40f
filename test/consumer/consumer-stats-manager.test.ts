// The per-topic figures of GET_CONSUMER_RUNNING_INFO as Java's ConsumerStatsManager
// computes them (StatsItem snapshots every 10 s, kept 7; every 10 min, kept 7), on a ManualClock.
import t from 'tap';
import { ManualClock } from '../../lib/clock.js';
import { ConsumerStatsManager } from '../../lib/consumer/core/consumer-stats-manager.js';

t.test("TPS from snapshots: the first one (at the item's creation) sits on a zero one 10 s earlier", async (t) => {
  const clock = new ManualClock();
  const m = new ConsumerStatsManager(clock);
  t.teardown(() => m.close());
  t.same(
    m.consumeStatus('T'),
    { pullRT: 0, pullTPS: 0, consumeRT: 0, consumeOKTPS: 0, consumeFailedTPS: 0, consumeFailedMsgs: 0 },
    'nothing recorded: zeros',
  );
  for (let i = 0; i < 3; i++) m.incPullTPS('T', 32);
  t.equal(m.consumeStatus('T').pullTPS, 3.2, 'only the first add was in the creation snapshot: 32 per 10 s');
  clock.advance(9_999);
  t.equal(m.consumeStatus('T').pullTPS, 3.2, 'figures move only when a snapshot is taken');
  clock.advance(1);
  t.equal(m.consumeStatus('T').pullTPS, 4.8, '96 messages over the 20 s between the first and the last snapshot');
  for (let i = 0; i < 6; i++) clock.advance(10_000);
  t.equal(m.consumeStatus('T').pullTPS, 0, 'after a minute without pulls the window holds no increase');
  t.equal(m.consumeStatus('other').pullTPS, 0, 'per topic');
});

t.test(
  "RT is the mean per call; consumeRT falls back to the hour window when the minute saw none; failed messages are the hour's sum",
  async (t) => {
    const clock = new ManualClock();
    const m = new ConsumerStatsManager(clock);
    t.teardown(() => m.close());
    m.incPullRT('T', 4);
    m.incConsumeRT('T', 10);
    m.incConsumeRT('T', 30);
    m.incConsumeOKTPS('T', 1);
    m.incConsumeFailedTPS('T', 0);
    m.incConsumeFailedTPS('T', 5);
    let s = m.consumeStatus('T');
    t.equal(s.pullRT, 4);
    t.equal(s.consumeRT, 10, 'the creation snapshot holds the first call');
    t.equal(s.consumeFailedMsgs, 0, 'the failed item was created by a call with 0 failures');
    clock.advance(10_000);
    s = m.consumeStatus('T');
    t.equal(s.consumeRT, 20, '(10 + 30) / 2 calls');
    t.equal(s.consumeFailedTPS, 0.25, '5 per 20 s');
    for (let i = 0; i < 6; i++) clock.advance(10_000);
    t.equal(m.consumeStatus('T').consumeRT, 10, 'no call in the minute: the hour window (one snapshot, at creation)');
    clock.advance(600_000 - 70_000);
    s = m.consumeStatus('T');
    t.equal(s.consumeFailedMsgs, 5, 'the hour snapshot at 10 min counts the 5');
    t.equal(s.consumeRT, 20, 'and the hour window now holds both calls');
  },
);

t.test('close() stops the snapshots', async (t) => {
  const clock = new ManualClock();
  const m = new ConsumerStatsManager(clock);
  m.incConsumeOKTPS('T', 10);
  m.close();
  m.incConsumeOKTPS('T', 10);
  clock.advance(10_000);
  t.equal(m.consumeStatus('T').consumeOKTPS, 1, 'no snapshot after close');
});
