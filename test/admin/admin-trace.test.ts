// AdminClient.messageTrace and `rocketwire admin message trace MSGID` on the embedded broker: the
// trace records of one message found by its msgId key in the trace topic, decoded as Java's
// TraceView, printed in mqadmin queryMsgTraceById's columns.
import t from 'tap';
import { AdminClient, formatMessageTrace, type MessageTraceView } from '../../lib/admin/index.js';
import { LitePullConsumer } from '../../lib/consumer/index.js';
import { Producer } from '../../lib/producer/index.js';
import { runCli } from '../cli/run-in-process.js';
import { uniqueName, until, withBroker } from '../consumer/helpers.js';

t.test(
  'a traced send and lite-pull poll: Pub, SubBefore and SubAfter found by msgId, printed as mqadmin',
  async (t) => {
    const b = await withBroker({ traceTopicEnable: true });
    t.teardown(() => b.close());
    const topic = uniqueName('AdminTrace');
    const pg = uniqueName('trace_pg');
    const cg = uniqueName('trace_cg');
    const p = new Producer({ namesrvAddr: b.namesrv, group: pg, enableTrace: true });
    await p.start();
    const id = (await p.send({ topic, body: 'x', tags: 'TagA', keys: 'k1' })).msgId;
    await p.shutdown();
    const c = new LitePullConsumer({ group: cg, namesrvAddr: b.namesrv, consumeFromWhere: 'first', enableTrace: true });
    c.subscribe(topic);
    await c.start();
    await until(async () => (await c.poll(200)).length === 1, 'polled');
    await c.shutdown();

    const admin = new AdminClient({ namesrvAddr: b.namesrv });
    t.teardown(() => admin.close());
    let views: MessageTraceView[] = [];
    await until(async () => {
      views = await admin.messageTrace(id);
      return views.length >= 3;
    }, 'three records');
    t.same(views.map((v) => v.type).sort(), ['Pub', 'SubAfter', 'SubBefore']);
    t.match(
      views.find((v) => v.type === 'Pub'),
      {
        msgId: id,
        topic,
        tags: 'TagA',
        keys: 'k1',
        groupName: pg,
        status: 'success',
        clientHost: /^\d+\.\d+\.\d+\.\d+$/,
      },
    );
    t.match(
      views.find((v) => v.type === 'SubAfter'),
      { msgId: id, groupName: cg, status: 'success' },
    );
    t.same(await admin.messageTrace('0A0000000000000000000000000000FF'), [], 'an id nothing traced: no record');

    const text = formatMessageTrace(views);
    const lines = text.split('\n');
    t.match(lines[0], /^#Type\s+#ProducerGroup\s+#ClientHost\s+#SendTime\s+#CostTimes\s+#Status/);
    t.match(
      lines[1],
      new RegExp(`^Pub {8}${pg}\\s+\\S+\\s+\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d\\s+\\d+ms\\s+success`),
    );
    t.match(lines[3], /^#Type\s+#ConsumerGroup\s+#ClientHost\s+#ConsumerTime\s+#CostTimes\s+#Status/);
    t.match(lines[4], new RegExp(`^Sub {8}${cg}`));
    t.equal(lines.filter((l) => l.startsWith('Sub')).length, 1, 'SubAfter only, as mqadmin prints');

    const cli = await runCli(['admin', 'message', 'trace', id, '--namesrv', b.namesrv]);
    t.equal(cli.code, 0, cli.stderr);
    t.equal(cli.stdout, text, 'the CLI prints the same table');
    const json = await runCli(['admin', 'message', 'trace', '--id', id, '--namesrv', b.namesrv, '--json']);
    t.same((JSON.parse(json.stdout) as MessageTraceView[]).map((v) => v.type).sort(), ['Pub', 'SubAfter', 'SubBefore']);
    const both = await runCli(['admin', 'message', 'trace', id, '--id', id, '--namesrv', b.namesrv]);
    t.equal(both.code, 2, 'the id given twice is a usage error');
  },
);

t.test("the consumer groups are printed in the order of Java's HashMap", async (t) => {
  const v = (groupName: string): MessageTraceView => ({
    type: 'SubAfter',
    msgId: 'M',
    topic: 'T',
    tags: null,
    keys: null,
    groupName,
    clientHost: '10.0.0.1',
    storeHost: null,
    offsetMsgId: null,
    timeStamp: 0,
    costTime: 3,
    status: 'success',
  });
  // String.hashCode puts "b" (98) in bucket 2 of 16, "q" (113) and "a" (97) in bucket 1, where
  // they stay in insertion order: q, a, b
  const text = formatMessageTrace([v('b'), v('q'), v('a')]);
  t.same(
    text
      .split('\n')
      .filter((l) => l.startsWith('Sub'))
      .map((l) => l.split(/\s+/)[1]),
    ['q', 'a', 'b'],
  );
});
