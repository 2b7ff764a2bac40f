// Flow control is visible. Each hit is counted (stats().flowControlPauses, per queue
// and per consumer) and, as Java's pullMessage logs a warning on every 1000th hit, the 1st, 1001st…
// hit writes one line on the `rocketwire:consumer:flow-control` debug namespace naming the limit,
// the cache and the number of hits so far.
import { format } from 'node:util';
import createDebug from 'debug';
import t from 'tap';
import { clockedConsumer } from './broker-spy.js';
import { until } from './helpers.js';

t.test(
  'a count flow-control hit warns on its debug namespace on the 1st and 1001st time, and is counted each time',
  async (t) => {
    const lines: string[] = [];
    const previous = createDebug.disable();
    const previousLog = createDebug.log;
    createDebug.enable('rocketwire:consumer:flow-control');
    // debug leaves %d and %s to util.format, as its own log does when it writes to stderr.
    createDebug.log = (...args: unknown[]) => {
      lines.push(format(...args));
    };
    t.teardown(() => {
      createDebug.log = previousLog;
      createDebug.disable();
      if (previous) createDebug.enable(previous);
    });
    let release!: () => void;
    const gate = new Promise<string>((r) => (release = () => r('CONSUME_SUCCESS')));
    t.teardown(() => release());
    const s = await clockedConsumer(
      t,
      { messages: 64, queues: 1, pullThresholdForQueue: 10, consumeThreadMin: 1 },
      () => gate,
    );
    const hits = () => s.consumer.stats().flowControlPauses.count;
    await until(() => hits() === 1, 'the first hit');
    t.equal(lines.length, 1, 'one warning for the first hit');
    t.match(
      lines[0],
      /the cached message count exceeds the threshold 10, so do flow control: minOffset=0, maxOffset=31, count=32, size=0 MiB, queue \S+\/broker-a\/0, flowControlTimes=1/,
    );
    while (hits() < 1000) {
      s.clock.advance(50);
      await new Promise((r) => setImmediate(r));
      await new Promise((r) => setImmediate(r));
    }
    t.equal(hits(), 1000);
    t.equal(lines.length, 1, 'hits 2 to 1000 are only counted');
    s.clock.advance(50);
    await until(() => hits() === 1001, 'the 1001st hit');
    t.equal(lines.length, 2);
    t.match(lines[1], /count exceeds the threshold 10.*flowControlTimes=1001/);
    const q = s.consumer.stats().queues.find((x) => x.topic === s.topic)!;
    t.same(q.flowControlPauses, { count: 1001, size: 0, span: 0 }, 'the queue counts its hits');
  },
);
