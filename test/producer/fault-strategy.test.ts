// Latency fault tolerance (Java's MQFaultStrategy / LatencyFaultToleranceImpl) on a ManualClock: which
// outcome isolates a broker for how long, how queue selection skips it, and the detector that marks an
// unreachable broker reachable again.
import t from 'tap';
import { ManualClock } from '../../lib/clock.js';
import { BrokerError, RemotingConnectError, RemotingTimeoutError } from '../../lib/remoting/index.js';
import { MQFaultStrategy } from '../../lib/producer/mq-fault-strategy.js';
import { DETECTOR_PERIOD_MS } from '../../lib/producer/latency-fault-tolerance.js';
import { TopicPublishInfo } from '../../lib/producer/topic-publish-info.js';
import { resolveProducerOptions, ProducerOptionError, type ProducerOptions } from '../../lib/producer/index.js';
import { ResponseCode } from '../../protocol/index.js';
import { until } from '../support/until.js';

const queues = ['a', 'b'].flatMap((brokerName) => [0, 1].map((queueId) => ({ topic: 'T', brokerName, queueId })));

function strategy(extra: Partial<ProducerOptions> = {}): { s: MQFaultStrategy; clock: ManualClock } {
  const clock = new ManualClock();
  const options = resolveProducerOptions({
    namesrvAddr: '127.0.0.1:9876',
    group: 'g',
    sendLatencyFaultEnable: true,
    ...extra,
  });
  return { s: new MQFaultStrategy(options, clock), clock };
}

/** The brokers of `n` selections in a row (first attempts). */
function picks(s: MQFaultStrategy, info: TopicPublishInfo, n = 8): Set<string> {
  const out = new Set<string>();
  for (let i = 0; i < n; i++) out.add(s.selectOneMessageQueue(info, undefined, false).brokerName);
  return out;
}

t.test("defaults are Java's: off, with its latency steps and isolation durations", async (t) => {
  const o = resolveProducerOptions({ namesrvAddr: '127.0.0.1:9876', group: 'g' });
  t.equal(o.sendLatencyFaultEnable, false);
  t.equal(o.startDetectorEnable, false);
  t.same(o.latencyMaxMs, [50, 100, 550, 1800, 3000, 5000, 15000]);
  t.same(o.notAvailableDurationMs, [0, 0, 2000, 5000, 6000, 10000, 30000]);
  t.equal(o.detectTimeoutMs, 200);
  t.equal(o.detectIntervalMs, 2000);
  t.throws(
    () =>
      resolveProducerOptions({
        namesrvAddr: '127.0.0.1:9876',
        group: 'g',
        latencyMaxMs: [1, 2],
        notAvailableDurationMs: [0],
      }),
    ProducerOptionError,
  );
  t.throws(
    () =>
      resolveProducerOptions({
        namesrvAddr: '127.0.0.1:9876',
        group: 'g',
        latencyMaxMs: [-1],
        notAvailableDurationMs: [0],
      }),
    {
      name: 'ProducerOptionError',
      option: 'latencyMaxMs[0]',
    },
    'a negative step',
  );
});

t.test('a latency maps to the isolation of the highest step it reaches', async (t) => {
  const { s } = strategy();
  t.equal(s.notAvailableDuration(49), 0);
  t.equal(s.notAvailableDuration(549), 0);
  t.equal(s.notAvailableDuration(550), 2000);
  t.equal(s.notAvailableDuration(1800), 5000);
  t.equal(s.notAvailableDuration(10_000), 10_000);
  t.equal(s.notAvailableDuration(60_000), 30_000);
});

t.test('a slow send isolates its broker for its step; selection skips it until then', async (t) => {
  const { s, clock } = strategy();
  const info = new TopicPublishInfo(queues, false, 0);
  t.same(picks(s, info), new Set(['a', 'b']), 'both brokers in turn before any record');
  s.onAttempt('a', 600);
  t.same(picks(s, info), new Set(['b']), 'a 600 ms send keeps broker a out');
  clock.advance(1999);
  t.same(picks(s, info), new Set(['b']), 'still out 1 ms before its 2000 ms end');
  clock.advance(1);
  t.same(picks(s, info), new Set(['a', 'b']), 'back after 2000 ms');
  s.onAttempt('a', 40);
  t.same(picks(s, info), new Set(['a', 'b']), 'a fast send isolates nothing');
});

t.test(
  'failures isolate for 10 s; a broker error or a connect failure with the detector on marks it unreachable',
  async (t) => {
    const { s, clock } = strategy();
    s.onAttempt('a', 5, new RemotingTimeoutError('10.0.0.1:10911', 1, 10, 3000, 3000));
    let item = s.tolerance.snapshot()[0]!;
    t.equal(item.availableAt - clock.now(), 10_000, 'timeout: isolated 10 s');
    t.equal(item.reachable, true, 'timeout without the detector: still reachable');
    s.onAttempt('b', 5, new BrokerError(ResponseCode.SYSTEM_BUSY, 'busy'));
    item = s.tolerance.snapshot().find((i) => i.brokerName === 'b')!;
    t.equal(item.reachable, false, 'broker error: unreachable (as Java, detector or not)');

    const d = strategy({ startDetectorEnable: true });
    d.s.onAttempt('a', 5, new RemotingConnectError('10.0.0.1:10911', 'refused'));
    t.equal(d.s.tolerance.isReachable('a'), false, 'connect failure with the detector: unreachable');
    t.equal(d.s.tolerance.isAvailable('a'), false);
  },
);

t.test('when every broker is isolated: a reachable one, else any queue', async (t) => {
  const { s } = strategy();
  const info = new TopicPublishInfo(queues, false, 0);
  s.onAttempt('a', 5, new BrokerError(ResponseCode.SYSTEM_ERROR, 'x')); // isolated, unreachable
  s.onAttempt('b', 5, new RemotingTimeoutError('10.0.0.2:10911', 1, 10, 3000, 3000)); // isolated, reachable
  t.same(picks(s, info), new Set(['b']), 'the reachable one');
  s.onAttempt('b', 5, new BrokerError(ResponseCode.SYSTEM_ERROR, 'x'));
  t.same(picks(s, info), new Set(['a', 'b']), 'none reachable: plain round robin');
});

t.test('a retry avoids the last broker; off, selection is the plain round robin', async (t) => {
  const { s } = strategy();
  const info = new TopicPublishInfo(queues, false, 0);
  for (let i = 0; i < 6; i++) t.equal(s.selectOneMessageQueue(info, 'a', true).brokerName, 'b');
  const off = strategy({ sendLatencyFaultEnable: false });
  off.s.onAttempt('a', 20_000, new BrokerError(ResponseCode.SYSTEM_ERROR, 'x'));
  t.same(off.s.tolerance.snapshot(), [], 'off: nothing recorded');
  t.same(picks(off.s, info), new Set(['a', 'b']));
});

t.test('the detector probes unreachable brokers every 3 s and restores those that answer', async (t) => {
  const { s, clock } = strategy({ startDetectorEnable: true, detectIntervalMs: 2000 });
  const probed: string[] = [];
  let answers = false;
  const addrs: Record<string, string | undefined> = { a: '10.0.0.1:10911', b: '10.0.0.2:10911' };
  s.start({
    resolve: (name) => addrs[name],
    detect: async (name, addr, timeoutMs) => {
      probed.push(`${name}@${addr}/${timeoutMs}`);
      return answers;
    },
  });
  t.teardown(() => s.shutdown());
  s.onAttempt('a', 5, new RemotingConnectError('10.0.0.1:10911', 'refused'));
  s.onAttempt('b', 5, new RemotingConnectError('10.0.0.2:10911', 'refused'));
  clock.advance(DETECTOR_PERIOD_MS - 1);
  t.same(probed, [], 'no round before 3 s');
  clock.advance(1);
  t.same(probed, ['a@10.0.0.1:10911/200', 'b@10.0.0.2:10911/200'], 'a probe of each, with detectTimeoutMs');
  await until(() => probed.length === 2, 'the first round');
  t.equal(s.tolerance.isReachable('a'), false, 'no answer: still unreachable');
  answers = true;
  const isolatedUntil = s.tolerance.snapshot()[0]!.availableAt;
  delete addrs.b; // b left the routes
  // the next round is scheduled 3 s after this one settled: move the clock until it has run
  await until(() => {
    clock.advance(DETECTOR_PERIOD_MS);
    return s.tolerance.isReachable('a');
  }, 'a probe that answers');
  t.equal(s.tolerance.isReachable('a'), true, 'answered: reachable again');
  t.equal(s.tolerance.snapshot()[0]!.availableAt, isolatedUntil, 'the isolation time is left as the send set it');
  t.same(
    s.tolerance.snapshot().map((i) => i.brokerName),
    ['a'],
    'a broker the routes no longer name is forgotten',
  );
});
