// Message trace end to end on the embedded broker: a producer and a push consumer with enableTrace
// write Pub, SubBefore and SubAfter records that a plain consumer of the trace topic reads back
// and decodes, with the trace message's keys holding the traced msgId (what queryMsgTraceById
// looks up).
import t from 'tap';
import { PushConsumer, type MessageExt } from '../../lib/consumer/index.js';
import { ManualClock } from '../../lib/clock.js';
import { Producer } from '../../lib/producer/index.js';
import { decodeTraceData, RMQ_SYS_TRACE_TOPIC, type TraceContext } from '../../lib/trace/index.js';
import { uniqueName, until, withBroker } from '../consumer/helpers.js';

/** Every record of the trace topic, with the keys of the trace message it came in. */
async function readTrace(
  namesrv: string,
  traceTopic: string,
  want: (recs: TraceContext[]) => boolean,
): Promise<{ recs: TraceContext[]; keys: string[] }> {
  const recs: TraceContext[] = [];
  const keys: string[] = [];
  const reader = new PushConsumer({
    consumerGroup: uniqueName('trace_reader'),
    namesrvAddr: namesrv,
    consumeFromWhere: 'first',
  });
  reader.subscribe(traceTopic, '*');
  await reader.start((msgs: MessageExt[]) => {
    for (const m of msgs) {
      recs.push(...decodeTraceData(m.body.toString('utf8')));
      keys.push(...(m.properties.KEYS ?? '').split(' '));
    }
    return 'CONSUME_SUCCESS';
  });
  try {
    await until(() => want(recs), 'the trace records', 20_000);
  } finally {
    await reader.shutdown();
  }
  return { recs, keys };
}

t.test(
  'producer and consumer with enableTrace: Pub, SubBefore and SubAfter of every message on RMQ_SYS_TRACE_TOPIC',
  async (t) => {
    const broker = await withBroker({ traceTopicEnable: true });
    t.teardown(() => broker.close());
    const topic = uniqueName('TraceT');
    const pg = uniqueName('trace_pg');
    const cg = uniqueName('trace_cg');
    const producer = new Producer({ namesrvAddr: broker.namesrv, group: pg, enableTrace: true });
    await producer.start();
    const sent = [];
    for (let i = 0; i < 5; i++)
      sent.push(await producer.send({ topic, body: `traced-${i}`, tags: 'TagA', keys: [`k${i}`, 'order'] }));
    await producer.shutdown();

    let consumed = 0;
    const consumer = new PushConsumer({
      consumerGroup: cg,
      namesrvAddr: broker.namesrv,
      consumeFromWhere: 'first',
      enableTrace: true,
    });
    consumer.subscribe(topic, '*');
    await consumer.start(() => {
      consumed++;
      return 'CONSUME_SUCCESS';
    });
    await until(() => consumed >= 5, '5 consumed');
    await consumer.shutdown();

    const ids = sent.map((r) => r.msgId);
    const { recs, keys } = await readTrace(
      broker.namesrv,
      RMQ_SYS_TRACE_TOPIC,
      (r) => r.filter((x) => x.traceType === 'SubAfter').length >= 5,
    );
    for (const [i, id] of ids.entries()) {
      const pub = recs.find((r) => r.traceType === 'Pub' && r.traceBeans[0]!.msgId === id);
      t.ok(pub, `Pub record of message ${i}`);
      t.match(pub, {
        regionId: 'DefaultRegion',
        groupName: pg,
        success: true,
        traceBeans: [
          {
            topic,
            tags: 'TagA',
            keys: `k${i} order`,
            storeHost: broker.broker,
            bodyLength: `traced-${i}`.length,
            msgType: 0,
            offsetMsgId: sent[i]!.offsetMsgId,
          },
        ],
      });
      const before = recs.find((r) => r.traceType === 'SubBefore' && r.traceBeans[0]!.msgId === id);
      const after = recs.find((r) => r.traceType === 'SubAfter' && r.traceBeans[0]!.msgId === id);
      t.match(
        before,
        { regionId: 'DefaultRegion', groupName: cg, traceBeans: [{ retryTimes: 0, keys: `k${i} order` }] },
        `SubBefore of message ${i}`,
      );
      t.match(
        after,
        { groupName: cg, success: true, contextCode: 0, requestId: before?.requestId },
        `SubAfter of message ${i}, paired by requestId`,
      );
      t.ok(keys.includes(id), `a trace message is keyed by msgId ${i}`);
    }
    t.ok(keys.includes('order'), 'and by the message keys');
  },
);

t.test(
  'a custom trace topic is auto-created and gets the records; a failing handler is traced as failed',
  async (t) => {
    const broker = await withBroker();
    t.teardown(() => broker.close());
    const topic = uniqueName('TraceC');
    const traceTopic = uniqueName('MyTrace');
    const cg = uniqueName('trace_cg');
    const producer = new Producer({
      namesrvAddr: broker.namesrv,
      group: uniqueName('trace_pg'),
      enableTrace: true,
      traceTopic,
    });
    await producer.start();
    const r = await producer.send({ topic, body: 'once' });
    await producer.shutdown();

    let calls = 0;
    const consumer = new PushConsumer({
      consumerGroup: cg,
      namesrvAddr: broker.namesrv,
      consumeFromWhere: 'first',
      enableTrace: true,
      traceTopic,
    });
    consumer.subscribe(topic, '*');
    await consumer.start(() => {
      calls++;
      throw new Error('handler fails');
    });
    await until(() => calls >= 1, 'the first call');
    await consumer.shutdown();

    const { recs } = await readTrace(broker.namesrv, traceTopic, (x) => x.some((c) => c.traceType === 'SubAfter'));
    t.match(
      recs.find((c) => c.traceType === 'Pub'),
      { traceBeans: [{ msgId: r.msgId, tags: 'null', keys: 'null' }] },
      'no tags or keys are written "null", as Java',
    );
    t.match(
      recs.find((c) => c.traceType === 'SubAfter'),
      { success: false, contextCode: 2, traceBeans: [{ msgId: r.msgId }] },
      'a throwing handler: success false, EXCEPTION',
    );
  },
);

t.test(
  "the trace producer keeps the brokers of an auto-created trace topic past its client instance's heartbeat",
  async (t) => {
    // Before the fix the trace producer took the TBW102 template's queues without storing the route in
    // its client instance: the first heartbeat's cleanOfflineBrokers then forgot broker-a, and every
    // later trace message failed with "broker broker-a has no master address".
    const broker = await withBroker();
    t.teardown(() => broker.close());
    const clock = new ManualClock(Date.now());
    const producer = new Producer({
      namesrvAddr: broker.namesrv,
      group: uniqueName('trace_pg'),
      enableTrace: true,
      clock,
    });
    await producer.start();
    const trace = (producer as unknown as { trace: { stats(): { sent: number; failed: number } } }).trace;
    const topic = uniqueName('Kept');
    await producer.send({ topic, body: 'first' });
    clock.advance(5000);
    await until(() => trace.stats().sent + trace.stats().failed >= 1, 'the first trace message');
    clock.advance(1000); // the trace instance's first heartbeat (cleanOfflineBrokers)
    await producer.send({ topic, body: 'second' });
    clock.advance(5000);
    await until(() => trace.stats().sent + trace.stats().failed >= 2, 'the second trace message');
    t.match(trace.stats(), { sent: 2, failed: 0 });
    await producer.shutdown({ timeoutMs: 0 });
  },
);

t.test(
  'a burst of traced sends to a broker that must auto-create the trace topic: no trace message fails',
  async (t) => {
    const broker = await withBroker();
    t.teardown(() => broker.close());
    const producer = new Producer({ namesrvAddr: broker.namesrv, group: uniqueName('trace_pg'), enableTrace: true });
    await producer.start();
    const topic = uniqueName('Burst');
    await Promise.all(Array.from({ length: 200 }, (_, i) => producer.send({ topic, body: `b${i}` })));
    const trace = (
      producer as unknown as { trace: { stats(): { appended: number; sent: number; failed: number; dropped: number } } }
    ).trace;
    await producer.shutdown();
    t.match(trace.stats(), { appended: 200, sent: 200, failed: 0, dropped: 0 });
  },
);
