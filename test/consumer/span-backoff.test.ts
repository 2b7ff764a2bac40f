// Past consumeConcurrentlyMaxSpan the pull backs off 50 ms each time, as the seed and
// Java's DefaultMQPushConsumer do, instead of being woken as soon as the last batch is consumed. The
// scenario measured on the wire: one queue of 5000 messages, the handler holding offset 0 while
// every other message is consumed at once. On a ManualClock a pull past the span can only happen when
// the clock moves 50 ms; before the fix the consumer pulled all 5000 messages without the clock moving.
import t from 'tap';
import { RequestCode } from '../../protocol/index.js';
import { clockedConsumer } from './broker-spy.js';
import { until } from './helpers.js';

// A synchronous handler consumes each batch before the next pull is checked; an asynchronous one
// finishes it while the next pull is parked (the early wake resumed that pull at once).
for (const kind of ['synchronous', 'asynchronous'] as const)
  t.test(
    `span over its limit (${kind} handler): one pull per 50 ms of the clock, and no commit offset past the held message`,
    async (t) => {
      let release!: () => void;
      const held = new Promise<string>((r) => (release = () => r('CONSUME_SUCCESS')));
      let consumed = 0;
      const s = await clockedConsumer(t, { messages: 5000, queues: 1 }, (msgs) => {
        if (msgs[0]!.queueOffset === 0)
          return held.then((st) => {
            consumed++;
            return st;
          });
        if (kind === 'asynchronous')
          return new Promise((r) =>
            setImmediate(() => {
              consumed++;
              r('CONSUME_SUCCESS');
            }),
          );
        consumed++;
        return 'CONSUME_SUCCESS';
      });
      const queue = () => s.consumer.stats().queues.find((q) => q.topic === s.topic)!;
      const pulls = () => s.count(RequestCode.PULL_MESSAGE, (x) => x.ext.topic === s.topic);
      await until(() => s.consumer.stats().flowControlPauses.span > 0, 'the span limit reached');
      await s.quiet();
      const before = pulls();
      const offset = queue().pulledOffset;
      t.ok(offset > 2000 && offset < 5000, `the pull stopped past the span limit (next offset ${offset})`);
      for (let i = 0; i < 5; i++) await s.quiet();
      t.equal(
        pulls(),
        before,
        'no pull while the clock stands still (before the fix: every pull at once, up to offset 5000)',
      );
      t.equal(queue().pulledOffset, offset);

      for (let round = 1; round <= 3; round++) {
        s.clock.advance(49);
        await s.quiet();
        t.equal(pulls(), before + round - 1, `round ${round}: nothing 49 ms after the park`);
        s.clock.advance(1);
        await until(() => pulls() === before + round, `round ${round}: the pull 50 ms after the park`);
        await until(() => s.consumer.stats().flowControlPauses.span > round, `round ${round}: parked again`);
        await s.quiet();
        t.equal(pulls(), before + round, `round ${round}: one pull, then parked again`);
      }
      t.ok(queue().committedOffset <= 0, 'the committed offset stays at the held message');

      const seenWhileHeld = s.seen.length;
      release();
      await until(() => consumed >= 1 && queue().committedOffset > 0, 'offset 0 consumed');
      s.clock.advance(50);
      await until(() => consumed === 5000, 'all 5000 consumed');
      // A pull carries a commit offset only with FLAG_COMMIT_OFFSET (bit 0) and an offset > 0: none may
      // while offset 0 is held, and neither may an UPDATE_CONSUMER_OFFSET.
      const commits = s.seen
        .slice(0, seenWhileHeld)
        .filter((x) => x.ext.topic === s.topic)
        .filter(
          (x) =>
            (x.code === RequestCode.PULL_MESSAGE && (Number(x.ext.sysFlag) & 1) === 1) ||
            x.code === RequestCode.UPDATE_CONSUMER_OFFSET,
        )
        .map((x) => Number(x.ext.commitOffset));
      t.same(
        commits.filter((o) => o > 0),
        [],
        'no commit offset above the held message while it was held',
      );
      await until(() => queue().committedOffset === 5000, 'committed to the end once released');
    },
  );
