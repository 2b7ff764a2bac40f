// The scale-curve harness (rocketwire bench --curve) on the embedded broker, rocketwire only and
// tiny points: every point's topics are created with their queue counts, every message is
// consumed, the consumer ends up holding every queue, and the table and chart show each point.
import t from 'tap';
import { curveSvg, curveTable, runCurve, TOPIC_CURVE_QUEUES } from '../../bench/harness/curve.js';
import { withBroker } from '../support/embedded-broker.js';

t.test('a queues curve and a topics curve of two points each, every message consumed', async (t) => {
  const broker = await withBroker();
  t.teardown(() => broker.close());
  const base = { namesrv: broker.namesrv, messages: 256, size: 64, java: false, log: () => {} };
  const queues = await runCurve({ ...base, axis: 'queues', points: [2, 16], prefix: 'curve_q' });
  t.same(
    queues.map((p) => [p.x, p.topics, p.queues, p.rocketwire.complete]),
    [
      [2, 1, 2, true],
      [16, 1, 16, true],
    ],
  );
  const topics = await runCurve({ ...base, axis: 'topics', points: [1, 3], prefix: 'curve_t' });
  t.same(
    topics.map((p) => [p.x, p.topics, p.queues, p.rocketwire.complete]),
    [
      [1, 1, TOPIC_CURVE_QUEUES, true],
      [3, 3, 3 * TOPIC_CURVE_QUEUES, true],
    ],
  );
  for (const p of [...queues, ...topics]) {
    t.ok(p.rocketwire.rebalanceMs >= 0, `${p.x}: the consumer came to hold every queue`);
    t.ok(p.rocketwire.heartbeatWithoutSubBytes < p.rocketwire.heartbeatFullBytes, `${p.x}: V2's body is smaller`);
    t.ok(
      p.rocketwire.startHeartbeats >= 1 && p.rocketwire.startHeartbeatBytes >= p.rocketwire.heartbeatFullBytes,
      `${p.x}: start() sent at least one full heartbeat, and it was counted`,
    );
  }
  t.ok(
    topics[1]!.rocketwire.heartbeatFullBytes > topics[0]!.rocketwire.heartbeatFullBytes,
    'the full heartbeat grows with the topics',
  );
  const table = curveTable('topics', topics).trim().split('\n');
  t.equal(table.length, 2 + topics.length, 'a header, a rule and a row per point');
  t.match(table[3]!, /^\| 3 \| /);
  const svg = curveSvg('queues', queues, 'queues');
  t.equal(svg.match(/<circle /g)?.length, 2, 'a marker per point of the one series');
});
