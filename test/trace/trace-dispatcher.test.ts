// AsyncTraceDispatcher on a ManualClock with a scripted sender: batches of batchNum records go out
// on the next turn, a partial batch after the flush interval, the queue is bounded and counts what
// it drops, a sender that throws or rejects is counted and never reaches the caller, messages are
// cut at maxMsgSize and grouped by traced topic, and shutdown sends everything that waits.
import t from 'tap';
import { ManualClock } from '../../lib/clock.js';
import {
  AsyncTraceDispatcher,
  decodeTraceData,
  ProducerTrace,
  type TraceContext,
  type TraceSender,
} from '../../lib/trace/index.js';

interface Sent {
  topic: string;
  data: string;
  keys: readonly string[];
}

function scripted(
  behave: (n: number) => 'ok' | 'reject' | 'throw' | 'hang' = () => 'ok',
): TraceSender & { sent: Sent[]; hanging: Array<() => void>; closed: boolean } {
  const s = {
    sent: [] as Sent[],
    hanging: [] as Array<() => void>,
    closed: false,
    send(topic: string, data: string, keys: readonly string[]): Promise<void> {
      const how = behave(s.sent.length);
      s.sent.push({ topic, data, keys });
      if (how === 'throw') throw new Error('sender blew up');
      if (how === 'reject') return Promise.reject(new Error('broker said no'));
      if (how === 'hang') return new Promise<void>((resolve) => s.hanging.push(resolve));
      return Promise.resolve();
    },
    async close() {
      s.closed = true;
    },
  };
  return s;
}

function pub(i: number, topic = 'T'): TraceContext {
  return {
    traceType: 'Pub',
    timeStamp: 1000 + i,
    regionId: 'DefaultRegion',
    groupName: 'pg',
    costTime: 1,
    success: true,
    requestId: '',
    contextCode: 0,
    traceBeans: [
      {
        topic,
        msgId: `ID${i}`,
        offsetMsgId: `OFF${i}`,
        tags: 'TagA',
        keys: `k${i}`,
        storeHost: '127.0.0.1:10911',
        bodyLength: 5,
        msgType: 0,
        retryTimes: 0,
      },
    ],
  };
}

const turn = (): Promise<void> => new Promise((r) => setImmediate(r));

t.test('a full batch goes out on the next turn, not inside append; a partial one after the interval', async (t) => {
  const clock = new ManualClock();
  const sender = scripted();
  const d = new AsyncTraceDispatcher({ sender, clock, batchNum: 3, flushIntervalMs: 5000 });
  t.equal(d.append(pub(0)), true);
  t.equal(d.append(pub(1)), true);
  t.equal(d.append(pub(2)), true);
  t.equal(sender.sent.length, 0, 'append never sends');
  clock.advance(0);
  t.equal(sender.sent.length, 1, 'the batch of 3 went out');
  t.same(
    decodeTraceData(sender.sent[0]!.data).map((c) => c.traceBeans[0]!.msgId),
    ['ID0', 'ID1', 'ID2'],
  );
  t.same([...sender.sent[0]!.keys].sort(), ['ID0', 'ID1', 'ID2', 'k0', 'k1', 'k2'], 'keyed by every msgId and key');
  t.equal(sender.sent[0]!.topic, 'RMQ_SYS_TRACE_TOPIC');
  await turn();
  d.append(pub(3));
  clock.advance(4999);
  t.equal(sender.sent.length, 1, 'a lone record waits for the interval');
  clock.advance(1);
  t.equal(sender.sent.length, 2, 'and goes out when it has passed');
  await turn();
  t.match(d.stats(), { appended: 4, sent: 4, failed: 0, dropped: 0, messages: 2, queued: 0 });
});

t.test('the queue is bounded: what does not fit is dropped and counted, append never throws', async (t) => {
  const clock = new ManualClock();
  const sender = scripted(() => 'hang');
  const d = new AsyncTraceDispatcher({
    sender,
    clock,
    batchNum: 2,
    queueSize: 4,
    maxInFlight: 1,
    maxRecordsPerMessage: 2,
  });
  const results = Array.from({ length: 10 }, (_, i) => d.append(pub(i)));
  t.same(results, [true, true, true, true, false, false, false, false, false, false]);
  clock.advance(0);
  t.equal(sender.sent.length, 1, 'one message in flight at most');
  t.match(d.stats(), { appended: 4, dropped: 6, queued: 2 });
  t.equal(d.append(pub(10)), true, 'room again after the batch left the queue');
  sender.hanging.shift()!();
  await turn();
  clock.advance(0);
  t.equal(sender.sent.length, 2, 'the next batch once the first was answered');
});

t.test(
  "by default as many records wait as Java's two queues hold: 2048 records and 2048 batches of batchNum",
  async (t) => {
    const clock = new ManualClock();
    const d = new AsyncTraceDispatcher({ sender: scripted(() => 'hang'), clock });
    for (let i = 0; i < 2048 * 11; i++) d.append(pub(i));
    t.match(d.stats(), { appended: 2048 * 11, dropped: 0 });
    t.equal(d.append(pub(0)), false, 'one more is dropped');
    t.equal(d.stats().dropped, 1);
  },
);

t.test('a backlog behind a trace message in flight goes out together, up to maxRecordsPerMessage', async (t) => {
  const clock = new ManualClock();
  const sender = scripted(() => 'hang');
  const d = new AsyncTraceDispatcher({
    sender,
    clock,
    batchNum: 2,
    maxInFlight: 1,
    maxRecordsPerMessage: 5,
    lingerMs: 0,
  });
  d.append(pub(0));
  d.append(pub(1));
  clock.advance(0);
  t.equal(sender.sent.length, 1, 'with nothing in flight a batch is batchNum records');
  for (let i = 2; i < 9; i++) d.append(pub(i));
  clock.advance(0);
  t.equal(sender.sent.length, 1, 'nothing more while the first is in flight');
  sender.hanging.shift()!();
  await turn();
  t.equal(sender.sent.length, 2);
  t.same(
    decodeTraceData(sender.sent[1]!.data).map((c) => c.traceBeans[0]!.msgId),
    ['ID2', 'ID3', 'ID4', 'ID5', 'ID6'],
    'the 5 that waited first, in one message',
  );
  sender.hanging.shift()!();
  await turn();
  t.same(
    decodeTraceData(sender.sent[2]!.data).map((c) => c.traceBeans[0]!.msgId),
    ['ID7', 'ID8'],
    'then the rest',
  );
  t.match(d.stats(), { appended: 9, dropped: 0, messages: 3 });
});

t.test(
  'a full batch soon after a trace message lingers for lingerMs and takes what comes meanwhile; no timer per record while maxInFlight are out',
  async (t) => {
    const clock = new ManualClock();
    const sender = scripted(() => 'hang');
    const d = new AsyncTraceDispatcher({
      sender,
      clock,
      batchNum: 2,
      maxInFlight: 1,
      lingerMs: 20,
      maxRecordsPerMessage: 8,
    });
    d.append(pub(0));
    d.append(pub(1));
    clock.advance(0);
    t.equal(sender.sent.length, 1, 'the first batch goes at once');
    let armed = 0;
    const setTimeout = clock.setTimeout.bind(clock);
    clock.setTimeout = (fn, ms) => {
      armed++;
      return setTimeout(fn, ms);
    };
    for (let i = 2; i < 6; i++) d.append(pub(i));
    t.equal(armed, 1, 'one timer (the flush interval) for 4 records while the one trace message allowed is in flight');
    sender.hanging.shift()!();
    await turn();
    t.equal(sender.sent.length, 1, 'answered within the linger: the batch waits');
    d.append(pub(6));
    clock.advance(19);
    t.equal(sender.sent.length, 1);
    clock.advance(1);
    t.equal(sender.sent.length, 2, '20 ms after the last send');
    t.same(
      decodeTraceData(sender.sent[1]!.data).map((c) => c.traceBeans[0]!.msgId),
      ['ID2', 'ID3', 'ID4', 'ID5', 'ID6'],
      'with what came meanwhile',
    );
    sender.hanging.shift()!();
    await turn();
    for (let i = 7; i < 15; i++) d.append(pub(i));
    clock.advance(0);
    t.equal(sender.sent.length, 3, 'maxRecordsPerMessage waiting go at once');
    t.equal(decodeTraceData(sender.sent[2]!.data).length, 8);
  },
);

t.test(
  'a backlog of records with long keys is cut so that the KEYS of a message stay far under the 32 767-byte properties',
  async (t) => {
    const clock = new ManualClock();
    const sender = scripted();
    const d = new AsyncTraceDispatcher({ sender, clock, batchNum: 10, maxRecordsPerMessage: 200 });
    const long = (i: number) => ({
      ...pub(i),
      traceBeans: [{ ...pub(i).traceBeans[0]!, keys: `key-${i}-${'x'.repeat(300)}` }],
    });
    for (let i = 0; i < 200; i++) d.append(long(i));
    clock.advance(0);
    await turn();
    t.ok(sender.sent.length > 1, `cut into ${sender.sent.length} messages`);
    t.ok(
      sender.sent.every((m) => [...m.keys].join(' ').length < 17_000),
      'no message has more than about 16 000 characters of keys',
    );
    t.equal(
      sender.sent.reduce((n, m) => n + decodeTraceData(m.data).length, 0),
      200,
      'every record sent once',
    );
  },
);

t.test('a sender that throws or rejects is counted as failed and never reaches the caller', async (t) => {
  const clock = new ManualClock();
  const sender = scripted((n) => (n === 0 ? 'throw' : 'reject'));
  const d = new AsyncTraceDispatcher({ sender, clock, batchNum: 1, lingerMs: 0 });
  t.doesNotThrow(() => d.append(pub(0)));
  clock.advance(0);
  await turn();
  d.append(pub(1));
  clock.advance(0);
  await turn();
  t.match(d.stats(), { appended: 2, sent: 0, failed: 2, messages: 2 });
});

t.test('records are grouped by traced topic and cut at maxMsgSize characters', async (t) => {
  const clock = new ManualClock();
  const sender = scripted();
  const d = new AsyncTraceDispatcher({ sender, clock, batchNum: 20, maxMsgSize: 100 });
  for (let i = 0; i < 6; i++) d.append(pub(i, i % 2 === 0 ? 'A' : 'B'));
  await d.flushAll();
  const byTopic = sender.sent.map((s) => decodeTraceData(s.data).map((c) => c.traceBeans[0]!.topic));
  for (const topics of byTopic) t.equal(new Set(topics).size, 1, 'one traced topic per trace message');
  t.equal(byTopic.flat().length, 6, 'every record sent once');
  // a Pub record here is about 72 characters: a message is cut once it holds two (≥ 100)
  t.same(
    sender.sent.map((s) => decodeTraceData(s.data).length),
    [2, 1, 2, 1],
    'cut when a message reached maxMsgSize',
  );
});

t.test('records without a region are skipped; CLOUD records go to the region topic', async (t) => {
  const clock = new ManualClock();
  const sender = scripted();
  const d = new AsyncTraceDispatcher({ sender, clock, batchNum: 20 });
  d.append({ ...pub(0), regionId: null });
  d.append({ ...pub(1), traceType: 'SubAfter', accessChannel: 'CLOUD', regionId: 'cn-hz' });
  await d.flushAll();
  t.same(
    sender.sent.map((s) => s.topic),
    ['rmq_sys_TRACE_DATA_cn-hz'],
  );
  t.match(d.stats(), { skipped: 1, sent: 1 });
});

t.test('shutdown sends everything that waits, closes the sender, and later records are dropped', async (t) => {
  const clock = new ManualClock();
  const sender = scripted();
  const d = new AsyncTraceDispatcher({ sender, clock, batchNum: 10 });
  for (let i = 0; i < 25; i++) d.append(pub(i));
  await d.shutdown();
  t.equal(
    sender.sent.reduce((n, s) => n + decodeTraceData(s.data).length, 0),
    25,
  );
  t.equal(sender.closed, true);
  t.equal(d.append(pub(99)), false);
  t.equal(d.stats().dropped, 1);
});

t.test(
  'the producer hook: a Pub record only for an answer with MSG_REGION and TRACE_ON=true, never for the trace topic',
  async (t) => {
    const clock = new ManualClock();
    const sender = scripted();
    const trace = new ProducerTrace({ client: { namesrvAddr: '127.0.0.1:1', clock }, group: 'pg', sender });
    const base = {
      topic: 'T',
      properties: 'TAGS\u0001TagA\u0002KEYS\u0001a b\u0002DELAY\u00013',
      brokerAddr: '127.0.0.1:10911',
      bodyLength: 4,
      beginMs: clock.now() - 7,
      status: 'SEND_OK',
      msgId: 'M1',
      offsetMsgId: 'O1',
    };
    trace.onSend({ ...base, regionId: 'DefaultRegion', traceOn: true });
    trace.onSend({ ...base, regionId: 'DefaultRegion', traceOn: false });
    trace.onSend({ ...base });
    trace.onSend({ ...base, topic: 'RMQ_SYS_TRACE_TOPIC', regionId: 'DefaultRegion', traceOn: true });
    await trace.dispatcher.flushAll();
    const recs = sender.sent.flatMap((s) => decodeTraceData(s.data));
    t.equal(recs.length, 1);
    t.match(recs[0], {
      traceType: 'Pub',
      costTime: 7,
      groupName: 'pg',
      traceBeans: [
        { msgId: 'M1', offsetMsgId: 'O1', tags: 'TagA', keys: 'a b', msgType: 3, storeHost: '127.0.0.1:10911' },
      ],
    });
    await trace.shutdown();
  },
);

t.test('bad trace options: a typed error naming the option', async (t) => {
  const { resolveProducerOptions } = await import('../../lib/producer/index.js');
  const { PushConsumer } = await import('../../lib/consumer/index.js');
  t.throws(() => resolveProducerOptions({ namesrvAddr: 'h:1', group: 'g', traceTopic: 'no spaces please' }), {
    name: 'ProducerOptionError',
    option: 'traceTopic',
  });
  t.throws(() => resolveProducerOptions({ namesrvAddr: 'h:1', group: 'g', traceTopic: '  ' }), {
    name: 'ProducerOptionError',
    option: 'traceTopic',
  });
  t.throws(() => resolveProducerOptions({ namesrvAddr: 'h:1', group: 'g', traceTopic: 'x'.repeat(128) }), {
    name: 'ProducerOptionError',
    option: 'traceTopic',
  });
  t.throws(() => resolveProducerOptions({ namesrvAddr: 'h:1', group: 'g', enableTrace: 'yes' as unknown as boolean }), {
    name: 'ProducerOptionError',
    option: 'enableTrace',
  });
  t.throws(() => new PushConsumer({ namesrvAddr: 'h:1', consumerGroup: 'g', traceTopic: 'a/b' }), {
    name: 'ConsumerOptionError',
    option: 'traceTopic',
  });
  t.throws(() => new PushConsumer({ namesrvAddr: 'h:1', consumerGroup: 'g', enableTrace: 1 as unknown as boolean }), {
    name: 'ConsumerOptionError',
    option: 'enableTrace',
  });
  t.match(
    resolveProducerOptions({ namesrvAddr: 'h:1', group: 'g' }),
    { enableTrace: false, traceTopic: undefined },
    'off by default',
  );
});
