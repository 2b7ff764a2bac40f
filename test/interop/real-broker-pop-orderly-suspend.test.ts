// An orderly push consumer in POP mode suspends a popped batch on the real Apache 5.3.3 broker,
// with the broker's answers 300 ms late (Toxiproxy in front of the broker: it binds 127.0.0.2 and
// advertises 127.0.0.1, where the proxy listens), as for a consumer far from its broker. The
// consumer moves each message of the batch back with its own CHANGE_INVISIBLETIME, so they become
// visible again one round trip apart. Apache wakes the pops waiting on the queue when the first
// message of it that is not visible becomes visible (OrderInfo.getLockFreeTimestamp), but keeps the
// queue held until all are: moved in queue order, the woken pop finds the queue held and waits out
// its 15 s poll. Moved last first (pop-orderly-consume.ts), the batch is back after the suspend
// time, within this test's 10 s wait.
import t from 'tap';
import { RequestCode, ResponseCode, createRequest } from '../../protocol/index.js';
import { SetMessageRequestModeRequestBody } from '../../protocol/body/pop-bodies.js';
import { PushConsumer } from '../../lib/consumer/index.js';
import { Producer } from '../../lib/producer/index.js';
import { until } from '../support/until.js';
import { startRealCluster, V5_VERSION } from './harness.js';
import { interopReady } from './skip.js';
import { startToxiproxy, toxiproxyBinary, toxiproxyPresent } from './toxiproxy.js';

t.setTimeout(180_000);

if (!toxiproxyPresent() && process.env.ROCKETWIRE_REQUIRE_JAVA !== '1') {
  t.plan(0, `orderly POP suspend interop skipped: ${toxiproxyBinary()} not found (.ci/install-deps builds it)`);
} else if (await interopReady(t, [V5_VERSION])) {
  t.test(
    `real RocketMQ ${V5_VERSION}: a suspended batch comes back after the suspend time, not the poll's`,
    async (t) => {
      const began = Date.now();
      const toxi = await startToxiproxy();
      t.teardown(() => toxi.stop());
      // POP needs the timer wheel (the harness turns it off to save memory)
      const cluster = await startRealCluster({
        version: V5_VERSION,
        brokerBindHost: '127.0.0.2',
        brokerConfig: { timerWheelEnable: true },
      });
      t.teardown(() => cluster.stop({ graceful: false }));
      await toxi.createProxy('broker', cluster.brokers[0]!, cluster.brokerBinds[0]!);
      const topic = 'RwPopOrderlySuspend';
      const group = 'rw_pop_orderly_suspend_cg';
      await cluster.createTopic(topic, { queues: 1 });
      const res = await cluster.invoke(
        cluster.brokers[0]!,
        createRequest(RequestCode.SET_MESSAGE_REQUEST_MODE, {
          body: SetMessageRequestModeRequestBody.encode({
            topic,
            consumerGroup: group,
            mode: 'POP',
            popShareQueueNum: 0,
          }),
        }),
      );
      t.equal(res.code, ResponseCode.SUCCESS, 'the group is switched to POP');
      const producer = new Producer({ namesrvAddr: cluster.namesrv, group: `${group}_pg` });
      await producer.start();
      for (const body of ['first', 'second', 'third']) await producer.send({ topic, body });
      await producer.shutdown();
      t.comment(`cluster, proxy and messages ready in ${Date.now() - began} ms`);

      await toxi.addToxic('broker', { type: 'latency', attributes: { latency: 300, jitter: 0 } });
      const seen: { body: string; reconsumeTimes: number; at: number }[] = [];
      let suspendedAt = 0;
      const consumer = new PushConsumer({
        group,
        namesrvAddr: cluster.namesrv,
        subscriptions: { [topic]: '*' },
        consumeFromWhere: 'first',
        clientRebalance: false,
        orderly: true,
        // the default: 1 s, several times Apache's 100 ms wake-up tick and the round trip
        suspendCurrentQueueTimeMs: 1000,
      });
      await consumer.start((msgs) => {
        for (const m of msgs) seen.push({ body: m.body.toString(), reconsumeTimes: m.reconsumeTimes, at: Date.now() });
        if (suspendedAt === 0) {
          suspendedAt = Date.now();
          return 'SUSPEND_CURRENT_QUEUE_A_MOMENT';
        }
        return 'SUCCESS';
      });
      t.teardown(() => consumer.shutdown());
      await until(() => suspendedAt > 0, 'the first delivery, suspended', 30_000);
      const batch = seen.length;
      await until(
        () => seen.some((s) => s.body === 'third'),
        () => `the suspended batch back and handled: ${JSON.stringify(seen)}`,
      );
      const back = seen.find((s, i) => i >= batch && s.body === 'first')!;
      t.comment(`redelivered ${back.at - suspendedAt} ms after the suspend (reported, not asserted)`);
      t.same(
        seen.map((s) => s.body),
        ['first', 'first', 'second', 'third'],
        'the suspended message again first, then the rest, in order',
      );
      t.equal(back.reconsumeTimes, 1, "its second delivery, by the broker's orderCountInfo");
      t.comment(`test wall time ${Date.now() - began} ms`);
    },
  );
}
