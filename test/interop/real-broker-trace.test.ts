// Message trace, proven with Java's own tools on a real Apache RocketMQ 5.3.3 broker
// started with traceTopicEnable=true: `mqadmin queryMsgTraceById` (which looks the trace messages
// up by msgId key on RMQ_SYS_TRACE_TOPIC and decodes them with Java's TraceDataEncoder) shows the
// Pub and Sub records of messages rocketwire produced and consumed with enableTrace, and of a Java
// producer's message that rocketwire consumed (and of a rocketwire producer's message that a Java
// consumer consumed), and of a rocketwire lite pull consumer and SimpleConsumer; `rocketwire admin
// message trace` prints what mqadmin prints for the same message. The golden vectors of test/fixtures/trace/ are checked against Java here too.
import { readFileSync } from 'node:fs';
import t from 'tap';
import { LitePullConsumer, PushConsumer } from '../../lib/consumer/index.js';
import { SimpleConsumer, type ReceivedMessage } from '../../lib/consumer/pop/simple-consumer.js';
import { AdminClient, formatMessageTrace } from '../../lib/admin/index.js';
import { runCli } from '../cli/run-in-process.js';
import { Producer } from '../../lib/producer/index.js';
import { until } from '../consumer/helpers.js';
import { TRACE_VECTORS_FILE } from '../trace/trace-vectors.js';
import { startRealCluster, V5_VERSION } from './harness.js';
import {
  javaTraceConsume,
  javaTraceProduce,
  javaTraceVectors,
  mqadminQueryMsgTraceById,
  traceRows,
} from './java-trace.js';
import { interopReady } from './skip.js';

t.setTimeout(240_000);

/** queryMsgTraceById until `want` holds (the broker indexes the trace message's keys asynchronously). */
async function traceOf(
  namesrv: string,
  msgId: string,
  want: (rows: ReturnType<typeof traceRows>) => boolean,
): Promise<{ rows: ReturnType<typeof traceRows>; text: string }> {
  let last = { rows: [] as ReturnType<typeof traceRows>, text: '' };
  for (let i = 0; i < 10; i++) {
    const text = await mqadminQueryMsgTraceById(namesrv, msgId);
    last = { rows: traceRows(text), text };
    if (want(last.rows)) return last;
  }
  return last;
}

if (await interopReady(t, [V5_VERSION])) {
  // timerWheelEnable: a 5.3.3 broker refuses POP without it ("pop message is forbidden because timerWheelEnable is false")
  const cluster = await startRealCluster({
    version: V5_VERSION,
    brokerConfig: { traceTopicEnable: true, timerWheelEnable: true },
  });
  t.teardown(() => cluster.stop({ graceful: false }));
  const topic = 'TraceTopic';
  await cluster.createTopic(topic, { queues: 2 });

  t.test('the golden vectors are what Java 5.3.3 TraceDataEncoder writes today', async (t) => {
    const java = await javaTraceVectors({ namesrv: cluster.namesrv });
    const file = readFileSync(TRACE_VECTORS_FILE, 'utf8').trim().split('\n');
    t.same(
      java.map((l) => JSON.parse(l)),
      file.map((l) => JSON.parse(l)),
    );
  });

  t.test(
    'rocketwire produces and consumes with trace: queryMsgTraceById shows Pub and Sub (rocketwire and Java consumers)',
    async (t) => {
      const producer = new Producer({ group: 'rw_trace_pg', namesrvAddr: cluster.namesrv, enableTrace: true });
      await producer.start();
      const sent = [];
      for (let i = 0; i < 3; i++)
        sent.push(await producer.send({ topic, body: `rw-traced-${i}`, tags: 'TagRw', keys: `rwkey-${i}` }));
      await producer.shutdown();
      t.match(sent[0], { regionId: 'DefaultRegion', traceOn: true }, 'the broker answers MSG_REGION and TRACE_ON');

      let consumed = 0;
      const consumer = new PushConsumer({
        consumerGroup: 'rw_trace_cg',
        namesrvAddr: cluster.namesrv,
        consumeFromWhere: 'first',
        enableTrace: true,
      });
      consumer.subscribe(topic);
      await consumer.start(() => {
        consumed++;
        return 'CONSUME_SUCCESS';
      });
      await until(() => consumed >= 3, '3 consumed', 60_000);
      await consumer.shutdown();
      const javaGot = await javaTraceConsume({ namesrv: cluster.namesrv, topic, group: 'java_trace_cg', expect: 3 });
      t.equal(javaGot.length >= 3, true, 'the Java consumer took the three too');
      t.match(
        javaGot[0],
        { region: 'DefaultRegion', traceOn: 'true' },
        'the real broker stored MSG_REGION and TRACE_ON',
      );

      const id = sent[0]!.msgId;
      const { rows, text } = await traceOf(
        cluster.namesrv,
        id,
        (r) => r.some((x) => x.type === 'Pub') && r.filter((x) => x.type === 'Sub').length >= 2,
      );
      t.comment(
        text
          .split('\n')
          .filter((l) => /^(#Type|Pub|Sub)/.test(l))
          .join('\n'),
      );
      t.match(
        rows.find((r) => r.type === 'Pub'),
        { group: 'rw_trace_pg', status: 'success' },
        'Pub: the rocketwire producer group',
      );
      t.match(
        rows.find((r) => r.type === 'Sub' && r.group === 'rw_trace_cg'),
        { status: 'success' },
        'Sub: the rocketwire consumer group',
      );
      t.match(
        rows.find((r) => r.type === 'Sub' && r.group === 'java_trace_cg'),
        { status: 'success' },
        'Sub: the Java consumer group',
      );
    },
  );

  t.test('a Java producer with trace and a rocketwire consumer with trace: queryMsgTraceById shows both', async (t) => {
    const jtopic = 'TraceTopicJ';
    await cluster.createTopic(jtopic, { queues: 2 });
    const sent = await javaTraceProduce({ namesrv: cluster.namesrv, topic: jtopic, count: 2, group: 'java_trace_pg' });
    t.equal(sent.length, 2);
    let consumed = 0;
    const consumer = new PushConsumer({
      consumerGroup: 'rw_trace_cg2',
      namesrvAddr: cluster.namesrv,
      consumeFromWhere: 'first',
      enableTrace: true,
    });
    consumer.subscribe(jtopic);
    await consumer.start(() => {
      consumed++;
      return 'CONSUME_SUCCESS';
    });
    await until(() => consumed >= 2, '2 consumed', 60_000);
    await consumer.shutdown();
    const { rows, text } = await traceOf(
      cluster.namesrv,
      sent[1]!.msgId,
      (r) => r.some((x) => x.type === 'Pub') && r.some((x) => x.type === 'Sub'),
    );
    t.comment(
      text
        .split('\n')
        .filter((l) => /^(#Type|Pub|Sub)/.test(l))
        .join('\n'),
    );
    t.match(
      rows.find((r) => r.type === 'Pub'),
      { group: 'java_trace_pg', status: 'success' },
      'Pub: the Java producer group',
    );
    t.match(
      rows.find((r) => r.type === 'Sub'),
      { group: 'rw_trace_cg2', status: 'success' },
      'Sub: the rocketwire consumer group',
    );
  });

  t.test(
    'lite pull and SimpleConsumer traces read by queryMsgTraceById; admin message trace prints what mqadmin prints',
    async (t) => {
      const ltopic = 'TraceTopicLite';
      await cluster.createTopic(ltopic, { queues: 1 });
      const producer = new Producer({ group: 'rw_trace_pg3', namesrvAddr: cluster.namesrv, enableTrace: true });
      await producer.start();
      // one message: a lite-pull poll or a receive hands it over alone, so it is its record's first
      // bean, the one TraceView (and so mqadmin) looks at
      const id = (await producer.send({ topic: ltopic, body: 'lite-traced', tags: 'TagL' })).msgId;
      await producer.shutdown();

      const lite = new LitePullConsumer({
        group: 'rw_trace_lite_cg',
        namesrvAddr: cluster.namesrv,
        consumeFromWhere: 'first',
        enableTrace: true,
      });
      lite.subscribe(ltopic);
      await lite.start();
      const polled: unknown[] = [];
      await until(
        async () => {
          polled.push(...(await lite.poll(500)));
          return polled.length >= 1;
        },
        'polled',
        60_000,
      );
      await lite.shutdown();

      const simple = new SimpleConsumer({
        group: 'rw_trace_simple_cg',
        namesrvAddr: cluster.namesrv,
        topic: ltopic,
        initMode: 'MIN',
        awaitDurationMs: 2000,
        enableTrace: true,
      });
      await simple.start();
      const got: ReceivedMessage[] = [];
      await until(
        async () => {
          got.push(...(await simple.receive(32, 60_000)));
          return got.length >= 1;
        },
        'received',
        60_000,
      );
      t.equal(await simple.ack(got), 'OK');
      await simple.shutdown();

      const { rows, text } = await traceOf(
        cluster.namesrv,
        id,
        (r) => r.some((x) => x.type === 'Pub') && r.filter((x) => x.type === 'Sub').length >= 2,
      );
      const table = (s: string): string[] => s.split('\n').filter((l) => /^(#Type|Pub|Sub)/.test(l));
      t.comment(table(text).join('\n'));
      t.match(
        rows.find((r) => r.type === 'Sub' && r.group === 'rw_trace_lite_cg'),
        { status: 'success' },
        'Sub: the lite pull consumer group (SubAfter written at poll, as Java lite pull writes it)',
      );
      t.match(
        rows.find((r) => r.type === 'Sub' && r.group === 'rw_trace_simple_cg'),
        { status: 'success' },
        'Sub: the SimpleConsumer group (SubAfter written at ack)',
      );

      const admin = new AdminClient({ namesrvAddr: cluster.namesrv });
      t.teardown(() => admin.close());
      const views = await admin.messageTrace(id);
      t.same(
        views
          .filter((v) => v.type === 'SubBefore')
          .map((v) => v.groupName)
          .sort(),
        ['rw_trace_lite_cg', 'rw_trace_simple_cg'],
        'AdminClient.messageTrace: the SubBefore records too',
      );
      const mine = formatMessageTrace(views);
      t.comment(mine);
      t.same(table(mine), table(text), "rocketwire's table is mqadmin's, line for line");
      const cli = await runCli(['admin', 'message', 'trace', id, '--namesrv', cluster.namesrv]);
      t.equal(cli.code, 0, cli.stderr);
      t.same(table(cli.stdout), table(text), '`rocketwire admin message trace MSGID` prints it too');
    },
  );
}
