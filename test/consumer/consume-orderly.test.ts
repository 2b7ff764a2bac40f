import t from 'tap';
import { ManualClock } from '../../lib/clock.js';
import { messageQueue, RemoteBrokerOffsetStore, resolveConsumerOptions, type MessageExt, type MessageListenerOrderly } from '../../lib/consumer/index.js';
import { ConsumeMessageOrderlyService } from '../../lib/consumer/consume-message-orderly-service.js';
import { ConsumerStatsRecorder } from '../../lib/consumer/consumer-stats.js';
import { ProcessQueue } from '../../lib/consumer/process-queue.js';

function msg(queueOffset: number): MessageExt {
  return {
    topic: 'T', queueId: 0, flag: 0, queueOffset, commitLogOffset: queueOffset * 100, sysFlag: 0, bornTimestamp: 0, bornHost: '127.0.0.1:1',
    storeTimestamp: 0, storeHost: '127.0.0.1:2', reconsumeTimes: 0, preparedTransactionOffset: 0, bodyCRC: 0, storeSize: 0,
    properties: {}, body: Buffer.alloc(1), msgId: `id${queueOffset}`, offsetMsgId: `id${queueOffset}`,
  };
}

function setup(listener: MessageListenerOrderly) {
  const clock = new ManualClock();
  const config = resolveConsumerOptions({ consumerGroup: 'g', namesrvAddr: '127.0.0.1:1', orderly: true, clock });
  const offsetStore = new RemoteBrokerOffsetStore({ queryConsumerOffset: async () => -1, updateConsumerOffsetOneway: async () => undefined });
  const host = {
    config, offsetStore, recorder: new ConsumerStatsRecorder(), maxReconsumeTimes: 2147483647,
    sendMessageBack: async () => true,
    republishToRetry: async () => true,
    onConsumed: () => undefined,
    lockQueue: async () => true,
  };
  const svc = new ConsumeMessageOrderlyService(host, listener);
  const mq = messageQueue('T', 'broker-a', 0);
  const pq = new ProcessQueue(clock.now());
  pq.markLocked(clock.now());
  const feed = (m: MessageExt) => svc.submitConsumeRequest([m], pq, mq, pq.putMessage([m]));
  return { clock, svc, pq, feed, offsetStore, mq };
}

t.test('awaitConsumeIdle: at once without a run; when the run ends (the queue dropped); false after 1 s of the clock', async (t) => {
  let finish!: () => void;
  const { clock, svc, pq, feed } = setup(() => new Promise((r) => (finish = () => r('SUCCESS'))));
  t.equal(await svc.awaitConsumeIdle(pq, 1000), true, 'no run owns the queue');
  feed(msg(0));
  let settled: boolean | undefined;
  void svc.awaitConsumeIdle(pq, 1000).then((v) => (settled = v));
  pq.drop();
  clock.advance(999);
  await new Promise((r) => setImmediate(r));
  t.equal(settled, undefined, 'still waiting at 999 ms');
  finish();
  await new Promise((r) => setImmediate(r));
  await new Promise((r) => setImmediate(r));
  t.equal(settled, true, 'resolves when the handler call in flight ends, without the clock moving');
});

t.test('awaitConsumeIdle gives up after the bound when the handler call does not end', async (t) => {
  const { clock, svc, pq, feed } = setup(() => new Promise(() => undefined));
  feed(msg(0));
  let settled: boolean | undefined;
  void svc.awaitConsumeIdle(pq, 1000).then((v) => (settled = v));
  clock.advance(999);
  await new Promise((r) => setImmediate(r));
  t.equal(settled, undefined);
  clock.advance(1);
  await new Promise((r) => setImmediate(r));
  t.equal(settled, false, 'false after 1000 ms');
  t.equal(svc.inFlightCount, 1, 'the run still owns the queue');
});
