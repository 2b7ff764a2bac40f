import t from 'tap';
import { ManualClock } from '../../lib/clock.js';
import type { AssignedQueue } from '../../lib/consumer/lite-pull/lite-pull-assignment.js';
import { LitePullCache, type ConsumeRequest } from '../../lib/consumer/lite-pull/lite-pull-cache.js';

const queue = (id: number) => ({ mq: { topic: 'T', brokerName: 'b', queueId: id } }) as unknown as AssignedQueue;
const req = (q: AssignedQueue, n = 1): ConsumeRequest => ({
  msgs: Array.from({ length: n }) as never,
  queue: q,
  generation: 0,
});

t.test('take() on an empty cache waits for a put or its timer on the clock, and arms one timer, no loop', async (t) => {
  const clock = new ManualClock(0);
  const cache = new LitePullCache(clock);
  let got: ConsumeRequest | null | undefined;
  void cache.take(1000).then((r) => (got = r));
  clock.advance(999);
  await Promise.resolve();
  t.equal(got, undefined, 'still waiting at 999 ms');
  t.equal(clock.pending, 1, 'one timer, nothing polling');
  const r = req(queue(0));
  cache.put(r);
  await Promise.resolve();
  t.equal(got, r, 'a put wakes the waiting take with that batch');
  t.equal(clock.pending, 0, 'and clears its timer');
  t.equal(cache.size, 0, 'the batch went to the waiter, not into the FIFO');

  let none: ConsumeRequest | null | undefined;
  void cache.take(500).then((x) => (none = x));
  clock.advance(500);
  await Promise.resolve();
  t.equal(none, null, 'null when the timer fires first');
});

t.test('FIFO order, removeQueue, close', async (t) => {
  const clock = new ManualClock(0);
  const cache = new LitePullCache(clock);
  const a = queue(0);
  const b = queue(1);
  const [a1, b1, a2] = [req(a), req(b), req(a)];
  cache.put(a1);
  cache.put(b1);
  cache.put(a2);
  t.equal(cache.size, 3);
  t.equal(await cache.take(0), a1, 'oldest first');
  cache.removeQueue(a);
  t.equal(cache.size, 1, "removeQueue drops that queue's batches (seek, queue taken away)");
  t.equal(await cache.take(0), b1);
  t.equal(await cache.take(0), null, 'take(0) on an empty cache answers at once');
  let woke: ConsumeRequest | null | undefined;
  void cache.take(60_000).then((x) => (woke = x));
  cache.close();
  await Promise.resolve();
  t.equal(woke, null, 'close wakes waiting takes with nothing');
  t.equal(clock.pending, 0, 'and clears their timers');
  cache.put(req(a));
  t.equal(cache.size, 0, 'a closed cache takes no more batches');
});
