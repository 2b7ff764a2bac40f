// A consumer started before its topic exists knows no broker: its start-up heartbeat goes nowhere.
// When the topic's route comes, its first request to the broker opens a connection; as Java 5.x's
// client (onChannelActive, enableHeartbeatChannelEventListener), that connection gets a heartbeat
// at once and the consumers rebalance, instead of the group having no member there until the next
// 30 s heartbeat round. (The DLQ reader of examples/retry-dlq.mjs timed out this way on Apache
// 5.3.3, about one run in four.) Time runs on a ManualClock shared with the embedded broker.
import t from 'tap';
import { ManualClock } from '../../lib/clock.js';
import { startBroker } from '../../lib/broker/index.js';
import { PushConsumer, type MessageExt } from '../../lib/consumer/index.js';
import { RemotingClient } from '../../lib/remoting/index.js';
import { RequestCode } from '../../protocol/index.js';
import { quiet, spyOnBroker } from './broker-spy.js';
import { produce, uniqueName, until } from './helpers.js';

t.test(
  'a topic created after the consumer started: consumed at the first rebalance that finds its route, not 30 s later',
  async (t) => {
    const clock = new ManualClock();
    const broker = await startBroker({ queues: 2, clock });
    t.teardown(() => broker.close());
    const probe = new RemotingClient();
    t.teardown(() => probe.close());
    const seen = spyOnBroker(broker, clock);
    const topic = uniqueName('Late');
    const group = uniqueName('late_cg');
    const got: string[] = [];
    const t0 = clock.now();
    // an instance of its own: the producer below runs on the system clock
    const consumer = new PushConsumer({
      consumerGroup: group,
      namesrvAddr: broker.namesrv,
      consumeFromWhere: 'first',
      clock,
      instanceName: uniqueName('late'),
    });
    consumer.subscribe(topic);
    await consumer.start((msgs: MessageExt[]) => {
      for (const m of msgs) got.push(m.body.toString());
      return 'CONSUME_SUCCESS';
    });
    t.teardown(() => consumer.shutdown());
    const heartbeats = () => seen.filter((s) => s.code === RequestCode.HEART_BEAT).length;
    clock.advance(1000); // the first scheduled heartbeat: still no broker known
    await quiet(broker, probe);
    t.equal(heartbeats(), 0, 'no heartbeat reached the broker: the consumer knows none');

    await produce(broker.namesrv, topic, 1, () => ({ body: 'late' }));
    clock.advance(19_000); // the rebalance 20 s after start finds the route
    await until(() => got.length === 1, 'the message, without the clock reaching the 30 s heartbeat');
    t.same(got, ['late']);
    t.ok(heartbeats() >= 1, 'the new connection got a heartbeat');
    t.equal(clock.now() - t0, 20_000, 'the clock stopped at 20 s: no scheduled heartbeat round came after the first');
  },
);
