// rocketwire/testing: the four waits the issue names, each driven by advance() in milliseconds of
// wall time: a transaction check-back, a 3-day timer, a POP invisibility expiry and a 15-minute
// consume timeout. Each asserts that nothing happens before its time and that it happens after.
import t from 'tap';
import { ManualClock } from '../../lib/clock.js';
import type { MessageExt } from '../../lib/index.js';
import { startTestCluster, TestClusterOptionError, WaitTimeoutError } from '../../lib/testing/public.js';
import { durationMs } from '../../lib/testing/index.js';

let n = 0;
const uniq = (p: string): string => `${p}_${process.pid}_${n++}`;

t.test('a transaction left UNKNOW is checked back and committed when the clock reaches the check', async (t) => {
  const cluster = await startTestCluster();
  t.teardown(() => cluster.close());
  const topic = uniq('TxT');
  let checks = 0;
  const producer = cluster.transactionProducer({
    group: uniq('txpg'),
    transactionListener: {
      executeLocalTransaction: () => 'UNKNOW',
      checkLocalTransaction: () => {
        checks++;
        return 'COMMIT_MESSAGE';
      },
    },
  });
  await producer.start();
  const got: MessageExt[] = [];
  const consumer = cluster.pushConsumer({ group: uniq('txcg'), consumeFromWhere: 'first' });
  consumer.subscribe(topic, '*');
  await consumer.start({
    eachMessage: (msg) => {
      got.push(msg);
    },
  });
  await producer.sendMessageInTransaction({ topic, body: 'order-1' });
  await cluster.advance('1s');
  t.equal(checks, 0, 'not checked before the check interval');
  t.equal(got.length, 0, 'a half message is not delivered');
  await cluster.advance('2m');
  await cluster.waitFor(() => got.length === 1, { what: 'the committed message' });
  t.ok(checks >= 1, 'the broker asked the producer');
  t.equal(String(got[0]?.body), 'order-1');
});

t.test('a 3-day timer message arrives after advance("3d"), not a day before', async (t) => {
  const cluster = await startTestCluster();
  t.teardown(() => cluster.close());
  const topic = uniq('TimerT');
  const producer = cluster.producer({ group: uniq('pg') });
  await producer.start();
  const got: MessageExt[] = [];
  const consumer = cluster.pushConsumer({ group: uniq('cg'), consumeFromWhere: 'first' });
  consumer.subscribe(topic, '*');
  await consumer.start({
    eachMessage: (msg) => {
      got.push(msg);
    },
  });
  const sentAt = cluster.clock.now();
  await producer.send({ topic, body: 'later', delayMs: 3 * 86_400_000 });
  await cluster.advance('2d');
  t.equal(got.length, 0, 'nothing after two days');
  await cluster.advance('1d');
  await cluster.waitFor(() => got.length === 1, { what: 'the timer message' });
  t.equal(String(got[0]?.body), 'later');
  t.ok(cluster.clock.now() - sentAt >= 3 * 86_400_000, 'three days of cluster time passed');
});

t.test('a POP message not acked comes back once its invisible time is over', async (t) => {
  const cluster = await startTestCluster();
  t.teardown(() => cluster.close());
  const topic = uniq('PopT');
  const producer = cluster.producer({ group: uniq('pg') });
  await producer.start();
  await producer.send({ topic, body: 'pop-me' });
  const consumer = cluster.simpleConsumer({ group: uniq('popcg'), topic, awaitDurationMs: 0 });
  await consumer.start();
  const first = await consumer.receive(1, 60_000);
  t.equal(first.length, 1);
  t.same(await consumer.receive(1, 60_000), [], 'invisible while the first receipt holds it');
  await cluster.advance('61s');
  let again: MessageExt[] = [];
  await cluster.waitFor(
    async () => {
      again = await consumer.receive(1, 60_000);
      return again.length === 1;
    },
    { what: 'the message back after its invisible time' },
  );
  t.equal(String(again[0]?.body), 'pop-me');
  t.equal(again[0]?.reconsumeTimes, 1, 'delivered a second time');
});

t.test('a handler that hangs past consumeTimeoutMs (15 min) gets the message again', async (t) => {
  const cluster = await startTestCluster();
  t.teardown(() => cluster.close());
  const topic = uniq('SlowT');
  const producer = cluster.producer({ group: uniq('pg') });
  await producer.start();
  await producer.send({ topic, body: 'slow' }); // the topic exists before the consumer looks it up
  const calls: number[] = [];
  const consumer = cluster.pushConsumer({ group: uniq('slowcg'), consumeFromWhere: 'first' });
  consumer.subscribe(topic, '*');
  await consumer.start({
    eachMessage: (msg) =>
      new Promise<void>((resolve) => {
        calls.push(msg.reconsumeTimes);
        if (msg.reconsumeTimes > 0) resolve(); // the first call never settles
      }),
  });
  await cluster.waitFor(() => calls.length === 1, { what: 'the first handler call' });
  await cluster.advance('10m');
  t.same(calls, [0], 'not given up before the timeout');
  await cluster.advance('30m');
  await cluster.waitFor(() => calls.length >= 2, { what: 'the redelivery after the consume timeout' });
  t.ok((calls[1] ?? 0) >= 1, 'redelivered as a retry');
});

/** Counts the timer callbacks every ManualClock runs until the returned stop is called. */
function countTimerCallbacks(): { readonly fired: number; stop(): void } {
  const real = ManualClock.prototype.setTimeout;
  const counter = { fired: 0, stop: () => undefined as void };
  ManualClock.prototype.setTimeout = function (this: ManualClock, fn: () => void, ms: number) {
    return real.call(
      this,
      () => {
        counter.fired++;
        fn();
      },
      ms,
    );
  };
  counter.stop = () => {
    ManualClock.prototype.setTimeout = real;
  };
  return counter;
}

t.test('three days of an idle cluster run few timer callbacks', async (t) => {
  const timers = countTimerCallbacks();
  t.teardown(() => timers.stop());
  const cluster = await startTestCluster();
  t.teardown(() => cluster.close());
  const start = cluster.clock.now();
  await cluster.advance('3d');
  t.equal(cluster.clock.now() - start, 3 * 86_400_000);
  // an always-armed 500 ms flush and 1 s revive alone ran about 780 000
  t.ok(timers.fired <= 10, `few callbacks in 3 days (${timers.fired})`);
});

t.test('a cluster that sent, popped, acked and committed goes idle once its clients stop', async (t) => {
  const timers = countTimerCallbacks();
  t.teardown(() => timers.stop());
  const cluster = await startTestCluster();
  t.teardown(() => cluster.close());
  const topic = uniq('IdleT');
  const producer = cluster.producer({ group: uniq('pg') });
  await producer.start();
  await producer.send({ topic, body: 'pop-me' });
  const tx = cluster.transactionProducer({
    group: uniq('txpg'),
    transactionListener: {
      executeLocalTransaction: () => 'COMMIT_MESSAGE',
      checkLocalTransaction: () => 'COMMIT_MESSAGE',
    },
  });
  await tx.start();
  await tx.sendMessageInTransaction({ topic, body: 'committed' });
  const consumer = cluster.simpleConsumer({ group: uniq('popcg'), topic, awaitDurationMs: 0 });
  await consumer.start();
  const got = await consumer.receive(2, 60_000);
  t.equal(got.length, 2);
  t.equal(await consumer.ack(got), 'OK');
  await consumer.shutdown();
  await tx.shutdown();
  await producer.shutdown();
  // what the work left behind (checkpoint files, offsets, the consume queues) is written once
  await cluster.advance('1m');
  const before = timers.fired;
  await cluster.advance('3d');
  t.ok(timers.fired - before <= 10, `few callbacks in 3 days (${timers.fired - before})`);
});

t.test('durations and waits are checked', async (t) => {
  t.equal(durationMs('d', '3d'), 3 * 86_400_000);
  t.equal(durationMs('d', '1.5s'), 1500);
  t.equal(durationMs('d', 250), 250);
  t.throws(() => durationMs('advance', '3 days' as never), TestClusterOptionError);
  t.throws(() => durationMs('advance', -1), TestClusterOptionError);
  const cluster = await startTestCluster();
  t.teardown(() => cluster.close());
  await t.rejects(cluster.advance('soon' as never), TestClusterOptionError);
  await t.rejects(
    cluster.waitFor(() => false, { timeoutMs: 20, what: 'nothing' }),
    WaitTimeoutError,
  );
});
