// The push consumer's orderly POP mode against the real Apache RocketMQ 5.3.3 broker: two orderly
// rocketwire PushConsumers (clientRebalance=false) in a group switched to POP with
// SET_MESSAGE_REQUEST_MODE pop with order=true; messages sent with a key selector are handled
// strictly in order per key, a handler failure mid-stream is redelivered (by the broker, from the
// failed message on, after the suspend time) before anything after it, and nothing is lost. The
// same scenario runs on the embedded broker in test/consumer/pop-orderly.test.ts.
import t from 'tap';
import { RequestCode, ResponseCode, createRequest } from '../../protocol/index.js';
import { SetMessageRequestModeRequestBody } from '../../protocol/body/pop-bodies.js';
import { assertOrderedPerKey, runOrderlyPopScenario } from '../consumer/pop-orderly-scenario.js';
import { startRealCluster, V5_VERSION } from './harness.js';
import { interopReady } from './skip.js';

t.setTimeout(180_000);

if (await interopReady(t, [V5_VERSION])) {
  t.test(`real RocketMQ ${V5_VERSION}: orderly push consumers in POP mode`, async (t) => {
    // POP needs the timer wheel (the harness turns it off to save memory)
    const cluster = await startRealCluster({ version: V5_VERSION, brokerConfig: { timerWheelEnable: true } });
    t.teardown(() => cluster.stop({ graceful: false }));
    const topic = 'RwPopOrderly';
    const group = 'rw_pop_orderly_cg';
    await cluster.createTopic(topic, { queues: 4 });
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
    const o = { keys: 6, perKey: 15, failKey: 'k2', failSeq: 7 };
    const started = Date.now();
    const r = await runOrderlyPopScenario(t, { namesrv: cluster.namesrv, topic, group, limitMs: 90_000, ...o });
    t.comment(`all ${o.keys * o.perKey} handled ${Date.now() - started} ms after the consumers started`);
    assertOrderedPerKey(t, r, o);
    for (const c of r.consumers)
      t.equal(c.stats().queues.filter((q) => q.topic === topic).length, 0, 'no queue of the topic is pulled');
    t.comment(
      `handled by consumer 0: ${r.handled.filter((h) => h.consumer === 0).length}, by 1: ${r.handled.filter((h) => h.consumer === 1).length}`,
    );
  });
}
