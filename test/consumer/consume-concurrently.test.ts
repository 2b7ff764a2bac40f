import t from 'tap';
import {
  ConsumeConcurrentlyStatus,
  messageQueue,
  RemoteBrokerOffsetStore,
  resolveConsumerOptions,
  type MessageExt,
  type MessageListenerConcurrently,
} from '../../lib/consumer/index.js';
import { ProcessQueue } from '../../lib/consumer/core/process-queue.js';
import { ConsumeMessageConcurrentlyService } from '../../lib/consumer/push/consume-message-concurrently-service.js';
import { ConsumerStatsRecorder } from '../../lib/consumer/core/consumer-stats.js';
import { ManualClock } from '../../lib/clock.js';
import { createMessageExt } from '../../protocol/internal.js';

function msg(queueOffset: number, topic = 'T'): MessageExt {
  return createMessageExt({
    topic,
    queueId: 0,
    flag: 0,
    queueOffset,
    commitLogOffset: queueOffset * 100,
    sysFlag: 0,
    bornTimestamp: 0,
    bornHost: '127.0.0.1:1',
    storeTimestamp: 0,
    storeHost: '127.0.0.1:2',
    reconsumeTimes: 0,
    preparedTransactionOffset: 0,
    bodyCRC: 0,
    storeSize: 0,
    properties: {},
    body: Buffer.alloc(1),
    msgId: `id${queueOffset}`,
    offsetMsgId: `id${queueOffset}`,
  });
}

function setup(listener: MessageListenerConcurrently, opts: Record<string, unknown> = {}, sendBackOk = true) {
  const config = resolveConsumerOptions({ consumerGroup: 'g', namesrvAddr: '127.0.0.1:1', ...opts });
  const offsetStore = new RemoteBrokerOffsetStore({
    queryConsumerOffset: async () => -1,
    updateConsumerOffsetOneway: async () => undefined,
  });
  const sentBack: { offset: number; delayLevel: number }[] = [];
  const host = {
    config,
    offsetStore,
    recorder: new ConsumerStatsRecorder(),
    maxReconsumeTimes: 16,
    sendMessageBack: async (m: MessageExt, delayLevel: number) => {
      sentBack.push({ offset: m.queueOffset, delayLevel });
      return sendBackOk;
    },
    republishToRetry: async () => sendBackOk,
    onConsumed: () => undefined,
    lockQueue: async () => true,
    invalid: [] as { value: unknown; count: number }[],
    invalidHandlerResult(value: unknown, _mq: unknown, count: number) {
      this.invalid.push({ value, count });
    },
  };
  const svc = new ConsumeMessageConcurrentlyService(host, listener);
  const mq = messageQueue('T', 'broker-a', 0);
  const pq = new ProcessQueue(0);
  return { svc, host, mq, pq, sentBack, offsetStore };
}

t.test(
  "consumeThreadMin calls in flight at most, as Java's pool over an unbounded queue: consumeThreadMax never adds any",
  async (t) => {
    const release: (() => void)[] = [];
    const { svc, mq, pq, offsetStore } = setup(
      () => new Promise((r) => release.push(() => r(ConsumeConcurrentlyStatus.CONSUME_SUCCESS))),
    );
    const feed = (from: number, n: number) => {
      const ms = Array.from({ length: n }, (_, i) => msg(from + i));
      pq.putMessage(ms);
      svc.submitConsumeRequest(ms, pq, mq);
    };
    feed(0, 20);
    t.equal(svc.inFlightCount, 20, 'the default consumeThreadMin');
    t.equal(svc.backlogCount, 0);
    feed(20, 80);
    // Before: a backlog over consumeThreadMin grew the pool to consumeThreadMax (64).
    t.equal(svc.inFlightCount, 20, 'a backlog of 80 does not grow the pool');
    t.equal(svc.backlogCount, 80);
    release.shift()!();
    await new Promise((r) => setImmediate(r));
    t.equal(svc.inFlightCount, 20, 'a finished call makes room for exactly one waiting call');
    t.equal(svc.backlogCount, 79);
    while (release.length > 0) {
      release.shift()!();
      await new Promise((r) => setImmediate(r));
      t.ok(svc.inFlightCount <= 20);
    }
    t.equal(svc.inFlightCount, 0);
    t.equal(offsetStore.readMemory(mq), 100, 'everything committed');
  },
);

t.test('more at once means a larger consumeThreadMin', async (t) => {
  const release: (() => void)[] = [];
  const { svc, mq, pq } = setup(
    () => new Promise((r) => release.push(() => r(ConsumeConcurrentlyStatus.CONSUME_SUCCESS))),
    { consumeThreadMin: 64 },
  );
  const ms = Array.from({ length: 100 }, (_, i) => msg(i));
  pq.putMessage(ms);
  svc.submitConsumeRequest(ms, pq, mq);
  t.equal(svc.inFlightCount, 64);
  t.equal(svc.backlogCount, 36);
  while (release.length > 0) {
    release.shift()!();
    await new Promise((r) => setImmediate(r));
  }
});

t.test('synchronous handlers run inline and never queue', async (t) => {
  let calls = 0;
  const { svc, mq, pq, offsetStore } = setup(
    () => {
      calls++;
      return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
    },
    { consumeThreadMin: 1, consumeThreadMax: 1 },
  );
  const ms = Array.from({ length: 1000 }, (_, i) => msg(i));
  pq.putMessage(ms);
  svc.submitConsumeRequest(ms, pq, mq);
  t.equal(calls, 1000);
  t.equal(svc.backlogCount, 0);
  t.equal(offsetStore.readMemory(mq), 1000);
});

t.test(
  'batches, ackIndex and delay level reach the send-back; throws count as RECONSUME_LATER, undefined as CONSUME_SUCCESS',
  async (t) => {
    const { svc, mq, pq, sentBack, offsetStore } = setup(
      (msgs, ctx) => {
        if (msgs[0]!.queueOffset === 0) {
          ctx.ackIndex = 1;
          ctx.delayLevelWhenNextConsume = 5;
          return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        }
        if (msgs[0]!.queueOffset === 4) return undefined;
        throw new Error('handler bug');
      },
      { consumeMessageBatchMaxSize: 4 },
    );
    const ms = Array.from({ length: 12 }, (_, i) => msg(i));
    pq.putMessage(ms);
    svc.submitConsumeRequest(ms, pq, mq);
    await new Promise((r) => setTimeout(r, 10));
    t.same(
      sentBack.filter((s) => s.offset < 4),
      [
        { offset: 2, delayLevel: 5 },
        { offset: 3, delayLevel: 5 },
      ],
    );
    t.same(
      sentBack
        .filter((s) => s.offset >= 4)
        .map((s) => s.offset)
        .sort((a, b) => a - b),
      [8, 9, 10, 11],
      'the batch whose handler returned undefined (4..7) is not sent back',
    );
    t.equal(offsetStore.readMemory(mq), 12, 'sent-back messages count as handled');
  },
);

t.test(
  'a handler returning or resolving nothing acknowledges every message of the call, ackIndex included',
  async (t) => {
    for (const [name, listener] of [
      ['sync undefined', () => undefined],
      ['async undefined', async () => undefined],
      ['async with an ackIndex left as is', async (_m: MessageExt[], ctx: { ackIndex: number }) => void ctx.ackIndex],
    ] as const) {
      const { svc, mq, pq, sentBack, offsetStore, host } = setup(listener as MessageListenerConcurrently, {
        consumeMessageBatchMaxSize: 4,
      });
      const ms = Array.from({ length: 8 }, (_, i) => msg(i));
      pq.putMessage(ms);
      svc.submitConsumeRequest(ms, pq, mq);
      await new Promise((r) => setTimeout(r, 10));
      t.same(sentBack, [], `${name}: nothing sent back`);
      t.equal(offsetStore.readMemory(mq), 8, `${name}: the offset covers all 8`);
      t.same(host.invalid, [], `${name}: not reported as an invalid result`);
      t.equal(pq.msgCount, 0, `${name}: the cache is empty`);
    }
  },
);

t.test(
  'an async handler resolving to a string that is no status counts as RECONSUME_LATER (its type allows any string)',
  async (t) => {
    const { svc, mq, pq, host } = setup(async () => 'BOGUS');
    const sentBack: number[] = [];
    const allSentBack = new Promise<void>((resolve) => {
      host.sendMessageBack = async (m: MessageExt) => {
        sentBack.push(m.queueOffset);
        if (sentBack.length === 3) resolve();
        return true;
      };
    });
    const ms = [msg(0), msg(1), msg(2)];
    pq.putMessage(ms);
    svc.submitConsumeRequest(ms, pq, mq);
    await allSentBack;
    t.same(
      sentBack.sort((a, b) => a - b),
      [0, 1, 2],
    );
    t.same(
      host.invalid,
      [1, 2, 3].map(() => ({ value: 'BOGUS', count: 1 })),
      'each call reported with its value and message count',
    );
  },
);

t.test('when send-back and republish both fail the message stays cached and the offset stays before it', async (t) => {
  const { svc, mq, pq, offsetStore, host } = setup(
    (msgs) =>
      msgs[0]!.queueOffset === 1
        ? ConsumeConcurrentlyStatus.RECONSUME_LATER
        : ConsumeConcurrentlyStatus.CONSUME_SUCCESS,
    {},
    false,
  );
  const ms = [msg(0), msg(1), msg(2)];
  pq.putMessage(ms);
  svc.submitConsumeRequest(ms, pq, mq);
  await new Promise((r) => setTimeout(r, 10));
  t.equal(pq.msgCount, 1, 'kept in the cache');
  t.equal(ms[1]!.reconsumeTimes, 1, 'reconsumeTimes raised locally');
  t.equal(offsetStore.readMemory(mq), 1, 'committed offset stops at it');
  t.equal(host.recorder.localRetries, 1);
  t.equal(await svc.shutdown(0), true, 'the 5 s local retry timer is cleared at shutdown');
});

t.test('a dropped queue discards results and the retry topic is restored before the handler', async (t) => {
  const seen: string[] = [];
  let finish!: () => void;
  const { svc, mq, pq, offsetStore } = setup(async (msgs) => {
    seen.push(msgs[0]!.topic);
    await new Promise<void>((r) => (finish = r));
    return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
  });
  const m = msg(0, '%RETRY%g');
  m.properties.RETRY_TOPIC = 'Orig';
  pq.putMessage([m]);
  svc.submitConsumeRequest([m], pq, mq);
  t.same(seen, ['Orig']);
  t.type(m.properties.CONSUME_START_TIME, 'string', 'CONSUME_START_TIME set');
  pq.drop();
  finish();
  await new Promise((r) => setImmediate(r));
  t.equal(offsetStore.readMemory(mq), -1, 'no offset from a dropped queue');
});

t.test('shutdown waits up to awaitTerminationMillisWhenShutdown for running calls', async (t) => {
  let finish!: () => void;
  const clock = new ManualClock();
  const { svc, mq, pq } = setup(
    () => new Promise((r) => (finish = () => r(ConsumeConcurrentlyStatus.CONSUME_SUCCESS))),
    { clock },
  );
  const m = msg(0);
  pq.putMessage([m]);
  svc.submitConsumeRequest([m], pq, mq);
  const first = svc.shutdown(30);
  clock.advance(29);
  clock.advance(1);
  t.equal(await first, false, 'gives up after 30 ms of the clock when the call is still running');
  const again = svc.shutdown(5000);
  finish();
  t.equal(await again, true, 'resolves as soon as the last call ends');
  svc.submitConsumeRequest([msg(1)], pq, mq);
  t.equal(svc.inFlightCount, 0, 'nothing starts after shutdown');
});

t.test(
  'synchronous calls in a row: each call starts at the clock reading after the previous one returned',
  async (t) => {
    // An injected clock that counts its reads; the handler takes 100 ms of it per call.
    let reads = 0;
    const clock = new (class extends ManualClock {
      override now(): number {
        reads++;
        return super.now();
      }
    })(1_000);
    const starts: string[] = [];
    const { svc, host, mq, pq } = setup(
      (msgs) => {
        starts.push(msgs[0]!.properties.CONSUME_START_TIME!);
        clock.advance(100);
        return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
      },
      { clock },
    );
    const ms = Array.from({ length: 3 }, (_, i) => msg(i));
    pq.putMessage(ms);
    reads = 0;
    svc.submitConsumeRequest(ms, pq, mq);
    t.same(starts, ['1000', '1100', '1200'], 'CONSUME_START_TIME of each call is when it started');
    t.equal(host.recorder.consumeRtSum / host.recorder.consumeRtCount, 100, 'consume RT is the time each call took');
    t.equal(pq.lastConsumeTimestamp, 1_300);
    t.equal(reads, 4, 'one clock read per call plus the first start, not two per call');
  },
);
