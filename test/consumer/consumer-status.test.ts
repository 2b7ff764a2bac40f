// A consumer's status on the embedded broker and a ManualClock: GET_CONSUMER_RUNNING_INFO carries Java's
// ConsumerStatsManager figures (measured on the real 5.3.3 broker before: Pull TPS 0.00 and ConsumeOK
// TPS 0.00 right after 20 000 messages), and RESET_CONSUMER_CLIENT_OFFSET suspends, lets the calls in
// flight settle for 10 s and resumes, as Java's MQClientInstance.resetOffset does.
import t from 'tap';
import { pushConsumerImpl } from '../../lib/consumer/push/push-consumer.js';
import type { PushConsumer } from '../../lib/consumer/index.js';
import { createRequest, parseFastjson, queueKey, RequestCode } from '../../protocol/internal.js';
import { clockedConsumer } from './broker-spy.js';
import { until } from './helpers.js';
import type { ConsumeStatus } from '../../lib/consumer/core/consumer-stats-manager.js';

type Status = ConsumeStatus;

t.test('running info: pull and consume TPS per topic as ConsumerStatsManager computes them', async (t) => {
  let calls = 0;
  const s = await clockedConsumer(t, { messages: 40, queues: 1 }, (msgs) => {
    calls++;
    return msgs[0]!.body.toString() === 'message-7' ? 'RECONSUME_LATER' : 'CONSUME_SUCCESS';
  });
  await until(() => calls >= 40, 'all 40 consumed');
  const status = async (): Promise<Record<string, Status>> => {
    const res = await s.probe.invoke(
      s.broker.broker,
      createRequest(RequestCode.GET_CONSUMER_RUNNING_INFO, {
        extFields: { consumerGroup: s.group, clientId: s.consumer.clientId, jstackEnable: 'false' },
      }),
      { timeoutMs: 5000 },
    );
    t.equal(res.code, 0, res.remark ?? '');
    return (parseFastjson(res.body!.toString('utf8')) as { statusTable: Record<string, Status> }).statusTable;
  };
  // The 40 messages came in pulls of 32 and 8 with the clock standing still; the items' first
  // snapshots hold the first pull (32) and the first call (1 message).
  let st = (await status())[s.topic]!;
  t.equal(
    st.pullTPS,
    3.2,
    'right after consuming, Pull TPS is not 0 (before: the 10 s rate of a clock that had not moved)',
  );
  t.equal(st.consumeOKTPS, 0.1);
  s.clock.advance(10_000);
  await s.quiet();
  st = (await status())[s.topic]!;
  t.equal(st.pullTPS, 2, '40 messages over the 20 s between the snapshots');
  t.equal(st.consumeOKTPS, 39 / 20);
  t.equal(st.consumeFailedTPS, 1 / 20);
  t.equal(st.consumeRT, 0, 'handler calls took no time on the clock');
  t.equal(st.consumeFailedMsgs, 0, 'the hour window has one snapshot, taken before the failure');
});

t.test('RESET_CONSUMER_CLIENT_OFFSET: suspend, drop the queues, settle 10 s, store the offsets, resume', async (t) => {
  let consumed = 0;
  const s = await clockedConsumer(t, { messages: 20 }, () => {
    consumed++;
    return 'CONSUME_SUCCESS';
  });
  await until(() => consumed === 20, 'all 20 consumed');
  const impl = pushConsumerImpl(s.consumer as PushConsumer<boolean>);
  const queues = s.consumer.assignment().filter((q) => q.topic === s.topic);
  const offsets = new Map(queues.map((q) => [queueKey(q), 0]));
  const pulls = () => s.count(RequestCode.PULL_MESSAGE, (x) => x.ext.topic === s.topic);
  let done = false;
  const reset = impl.resetOffset(s.topic, offsets).then(() => (done = true));
  await s.quiet();
  t.equal(impl.paused, true, 'suspended');
  t.ok(
    s.consumer
      .stats()
      .queues.filter((q) => q.topic === s.topic)
      .every((q) => q.dropped),
    'the queues are dropped at once',
  );
  const p0 = pulls();
  s.clock.advance(9_999);
  await s.quiet();
  t.equal(done, false, 'still settling at 9.999 s (before: the queues were re-created at once)');
  t.equal(consumed, 20, 'nothing consumed again yet');
  t.equal(pulls(), p0, 'and nothing pulled');
  s.clock.advance(1);
  await reset;
  t.equal(impl.paused, false, 'resumed');
  await until(() => consumed === 40, 'everything consumed again from offset 0');
  t.same(
    s.consumer.stats().queues.filter((q) => q.topic === s.topic && !q.dropped).length,
    queues.length,
    'the queues were re-created',
  );
});
