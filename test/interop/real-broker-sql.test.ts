// SQL92 filters against a real Apache RocketMQ 5.3.3 broker started with enablePropertyFilter=true,
// with the stock Java client on the other side (test/interop/java/SqlClient.java):
//  - Java-produced messages with property a = 0..99: rocketwire's consumer subscribed with
//    { sql: 'a BETWEEN 10 AND 19' } consumes exactly 10 (and `rocketwire consume --sql` prints them);
//    so does the LitePullConsumer with { sql }, and the SimpleConsumer's POP with the SQL92 expType;
//  - rocketwire-produced messages: Java's consumer with MessageSelector.bySql gets exactly the matches;
//  - the broker's own filtering of a table of expressions equals compileSql92's over the same
//    messages, and its CHECK_CLIENT_CONFIG / FLAG_SUBSCRIPTION answers to expressions it refuses.
import t from 'tap';
import { LitePullConsumer, PushConsumer } from '../../lib/consumer/index.js';
import { SimpleConsumer } from '../../lib/consumer/pop/simple-consumer.js';
import { Producer } from '../../lib/producer/index.js';
import {
  compileSql92,
  createRequest,
  decodeMessages,
  PullMessageRequestHeader,
  RequestCode,
  ResponseCode,
  type MessageExt,
} from '../../protocol/index.js';
import { runCli } from '../cli/run-in-process.js';
import { startRealCluster, V5_VERSION, type RealCluster } from './harness.js';
import { until } from '../support/until.js';
import { javaSqlConsume, javaSqlProduce } from './java-sql.js';
import { interopReady } from './skip.js';

t.setTimeout(180_000);

/** Every queue of `topic`: the group's committed offset equals the queue's max offset. */
async function consumedToEnd(cluster: RealCluster, topic: string, group: string, queues: number): Promise<boolean> {
  for (let q = 0; q < queues; q++) {
    const ext = { topic, queueId: String(q) };
    const max = await cluster.invoke(
      cluster.brokers[0]!,
      createRequest(RequestCode.GET_MAX_OFFSET, { extFields: ext }),
    );
    const committed = await cluster.invoke(
      cluster.brokers[0]!,
      createRequest(RequestCode.QUERY_CONSUMER_OFFSET, { extFields: { ...ext, consumerGroup: group } }),
    );
    const m = Number(max.extFields?.offset ?? -1);
    const c = committed.code === ResponseCode.SUCCESS ? Number(committed.extFields?.offset) : -1;
    if (m > 0 && c !== m) return false;
  }
  return true;
}

/** A raw PULL_MESSAGE carrying its own SQL92 expression (FLAG_SUBSCRIPTION), queue 0 from `offset`. */
function sqlPull(topic: string, sql: string, offset: number): ReturnType<typeof createRequest> {
  return createRequest(RequestCode.PULL_MESSAGE, {
    extFields: PullMessageRequestHeader.encode({
      consumerGroup: 'raw_sql_reader_cg',
      topic,
      queueId: 0,
      queueOffset: offset,
      maxMsgNums: 32,
      sysFlag: 4,
      commitOffset: -1,
      suspendTimeoutMillis: 0,
      subscription: sql,
      subVersion: 0,
      expressionType: 'SQL92',
    }),
  });
}

const range = (from: number, to: number): string[] => Array.from({ length: to - from + 1 }, (_, i) => String(from + i));

if (await interopReady(t, [V5_VERSION])) {
  t.test(`real RocketMQ ${V5_VERSION} with enablePropertyFilter=true: SQL92 filters`, async (t) => {
    // timerWheelEnable: a 5.3.3 broker refuses POP without it ("pop message is forbidden because timerWheelEnable is false")
    const cluster = await startRealCluster({
      version: V5_VERSION,
      brokerConfig: { enablePropertyFilter: true, timerWheelEnable: true },
    });
    t.teardown(() => cluster.stop({ graceful: false }));
    await cluster.createTopic('RwSqlFromJava', { queues: 4 });
    await cluster.createTopic('RwSqlToJava', { queues: 1 });
    await cluster.createTopic('RwSqlTable', { queues: 1 });

    t.test('Java-produced a = 0..99: rocketwire { sql: a BETWEEN 10 AND 19 } consumes exactly 10', async (t) => {
      t.equal(
        await javaSqlProduce({ namesrv: cluster.namesrv, topic: 'RwSqlFromJava', count: 100 }),
        100,
        'Java sent 100',
      );
      const group = 'rw_sql_cg';
      const seen: MessageExt[] = [];
      const consumer = new PushConsumer({
        consumerGroup: group,
        namesrvAddr: cluster.namesrv,
        consumeFromWhere: 'first',
        persistOffsetIntervalMs: 200,
        // a caught-up pull comes back soon, so the filtered-out tail of each queue gets committed
        brokerSuspendMaxTimeMs: 1000,
      });
      consumer.subscribe('RwSqlFromJava', { sql: 'a BETWEEN 10 AND 19' });
      const started = Date.now();
      await consumer.start((msgs) => {
        seen.push(...msgs);
        return 'CONSUME_SUCCESS';
      });
      t.teardown(() => consumer.shutdown());
      await until(
        () => consumedToEnd(cluster, 'RwSqlFromJava', group, 4),
        'committed offsets at the end of the 4 queues',
        40_000,
        100,
      );
      t.comment(`all 4 queues consumed to their end ${Date.now() - started} ms after start`);
      t.same(
        seen.map((m) => m.properties.a).sort((x, y) => Number(x) - Number(y)),
        range(10, 19),
        'exactly a = 10..19',
      );
      t.ok(seen.every((m) => m.topic === 'RwSqlFromJava' && m.tags === (Number(m.properties.a) % 2 ? 'odd' : 'even')));
      await consumer.shutdown();

      const cli = await runCli([
        'consume',
        '--namesrv',
        cluster.namesrv,
        '--topic',
        'RwSqlFromJava',
        '--group',
        'rw_sql_cli_cg',
        '--sql',
        'a BETWEEN 10 AND 19',
        '--from',
        'first',
        '--limit',
        '10',
        '--json',
      ]);
      t.equal(cli.code, 0, cli.stderr);
      const printed = cli.stdout
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { properties: Record<string, string> }).properties.a);
      t.same(
        printed.sort((x, y) => Number(x) - Number(y)),
        range(10, 19),
        'rocketwire consume --sql printed a = 10..19',
      );
    });

    t.test(
      'the same Java-produced messages: LitePullConsumer and SimpleConsumer with { sql } get exactly 10',
      async (t) => {
        // RwSqlFromJava holds a = 0..99 from the test before
        const lite = new LitePullConsumer({
          group: 'rw_sql_lite_cg',
          namesrvAddr: cluster.namesrv,
          consumeFromWhere: 'first',
          subscriptions: { RwSqlFromJava: { sql: 'a BETWEEN 10 AND 19' } },
        });
        await lite.start();
        t.teardown(() => lite.shutdown());
        const polled: MessageExt[] = [];
        await until(
          async () => {
            polled.push(...(await lite.poll(500)));
            return polled.length >= 10;
          },
          '10 polled',
          40_000,
        );
        t.equal((await lite.poll(1000)).length, 0, 'nothing more');
        t.same(
          polled.map((m) => m.properties.a).sort((x, y) => Number(x) - Number(y)),
          range(10, 19),
          'lite pull: exactly a = 10..19 (the broker filtered its pulls, FLAG_SUBSCRIPTION with expressionType SQL92)',
        );
        await lite.shutdown();

        const simple = new SimpleConsumer({
          group: 'rw_sql_simple_cg',
          namesrvAddr: cluster.namesrv,
          topic: 'RwSqlFromJava',
          filterExpression: { sql: 'a BETWEEN 10 AND 19' },
          initMode: 'MIN',
          awaitDurationMs: 1000,
        });
        await simple.start();
        t.teardown(() => simple.shutdown());
        const popped: MessageExt[] = [];
        await until(
          async () => {
            const got = await simple.receive(32, 60_000);
            popped.push(...got);
            if (got.length > 0) t.equal(await simple.ack(got), 'OK');
            return popped.length >= 10;
          },
          '10 popped',
          40_000,
        );
        t.equal((await simple.receive(32, 60_000)).length, 0, 'nothing more');
        t.same(
          popped.map((m) => m.properties.a).sort((x, y) => Number(x) - Number(y)),
          range(10, 19),
          "SimpleConsumer: exactly a = 10..19 (Apache's PopMessageProcessor filtered by the POP header's SQL92)",
        );
      },
    );

    t.test('rocketwire-produced messages: Java bySql gets exactly the matching ones', async (t) => {
      const producer = new Producer({ group: 'rw_sql_pg', namesrvAddr: cluster.namesrv });
      await producer.start();
      t.teardown(() => producer.shutdown());
      for (let i = 0; i < 100; i++) {
        const r = await producer.send({
          topic: 'RwSqlToJava',
          body: String(i),
          tags: i % 2 ? 'odd' : 'even',
          properties: { a: String(i) },
        });
        t.equal(r.status, 'SEND_OK');
      }
      // the last message matches too: Java's orderly consumer has seen everything before it when it arrives
      await producer.send({ topic: 'RwSqlToJava', body: 'end', properties: { a: '1000' } });
      const got = await javaSqlConsume({
        namesrv: cluster.namesrv,
        topic: 'RwSqlToJava',
        group: 'java_sql_cg',
        sql: "a BETWEEN 10 AND 19 AND TAGS = 'odd' OR a = 1000",
        sentinel: '1000',
      });
      t.same(got.a, ['11', '13', '15', '17', '19', '1000'], 'Java consumed the odd a in 10..19, then the last one');
    });

    t.test("the broker's own filtering equals compileSql92's, expression by expression", async (t) => {
      const producer = new Producer({ group: 'rw_sql_table_pg', namesrvAddr: cluster.namesrv });
      await producer.start();
      t.teardown(() => producer.shutdown());
      const values = [
        '0',
        '5',
        '10',
        '15',
        '19',
        '20',
        '-3',
        '5.5',
        'abc',
        '',
        'true',
        'NaN',
        '3000000000',
        '0x10',
        ' 7',
      ];
      const props: Record<string, string>[] = [];
      for (const [i, a] of values.entries()) {
        const p: Record<string, string> = a === '' ? { b: 'x' } : { a, b: i % 3 === 0 ? 'x' : 'y' };
        props.push({ ...p, TAGS: i % 2 ? 'odd' : 'even' });
        await producer.send({ topic: 'RwSqlTable', body: String(i), tags: i % 2 ? 'odd' : 'even', properties: p });
      }
      const expressions = [
        'a BETWEEN 10 AND 19',
        'a NOT BETWEEN 10 AND 19',
        'a = 5',
        'a = 5.5',
        'a > 4.9',
        "a IN ('abc', 'true')",
        'a IS NULL',
        "b = 'x' AND a > 0",
        "TAGS = 'odd' OR a = 0",
        'a = TRUE',
        "a = 5 OR b = 'x'",
        "NOT (b = 'y')",
        'a < 3000000001',
      ];
      const diffs: string[] = [];
      for (const sql of expressions) {
        const want = props.flatMap((p, i) => (compileSql92(sql).matches(p) ? [String(i)] : []));
        const got: string[] = [];
        let offset = 0;
        while (offset < values.length) {
          const res = await cluster.invoke(cluster.brokers[0]!, sqlPull('RwSqlTable', sql, offset));
          if (res.code !== ResponseCode.SUCCESS && res.code !== ResponseCode.PULL_RETRY_IMMEDIATELY) {
            diffs.push(`${sql}: broker answered ${res.code} ${res.remark}`);
            break;
          }
          if (res.body) got.push(...decodeMessages(res.body).map((m) => m.body.toString()));
          offset = Number(res.extFields?.nextBeginOffset);
        }
        if (JSON.stringify(got) !== JSON.stringify(want))
          diffs.push(`${sql}: broker delivered [${got.join(',')}], compileSql92 matches [${want.join(',')}]`);
      }
      t.same(
        diffs,
        [],
        `${expressions.length} expressions over ${values.length} messages: the real broker delivers what compileSql92 matches`,
      );
    });

    t.test('what the broker answers to expressions it cannot compile', async (t) => {
      const subscriptionData = {
        classFilterMode: false,
        codeSet: [],
        expressionType: 'SQL92',
        subString: 'a BETWEEN 19 AND 10',
        subVersion: 1,
        tagsSet: [],
        topic: 'RwSqlTable',
      };
      const check = await cluster.invoke(
        cluster.brokers[0]!,
        createRequest(RequestCode.CHECK_CLIENT_CONFIG, {
          body: Buffer.from(JSON.stringify({ clientId: '127.0.0.1@raw', group: 'raw_g', subscriptionData })),
        }),
      );
      t.equal(
        check.code,
        ResponseCode.SUBSCRIPTION_PARSE_FAILED,
        `CHECK_CLIENT_CONFIG of an expression SelectorParser refuses: ${check.remark}`,
      );
      t.throws(() => compileSql92('a BETWEEN 19 AND 10'), { name: 'SqlParseError' }, 'compileSql92 refuses it too');
      const ok = await cluster.invoke(
        cluster.brokers[0]!,
        createRequest(RequestCode.CHECK_CLIENT_CONFIG, {
          body: Buffer.from(
            JSON.stringify({
              clientId: '127.0.0.1@raw',
              group: 'raw_g',
              subscriptionData: { ...subscriptionData, subString: 'a BETWEEN 10 AND 19' },
            }),
          ),
        }),
      );
      t.equal(ok.code, ResponseCode.SUCCESS);
      // A pull's own expression that does not compile: Java's ConsumerFilterManager.build returns
      // null, and the filter without data lets everything through (the embedded broker refuses instead).
      const pull = await cluster.invoke(cluster.brokers[0]!, sqlPull('RwSqlTable', 'a BETWEEN 19 AND 10', 0));
      const delivered = pull.body ? decodeMessages(pull.body).length : 0;
      t.equal(
        pull.code,
        ResponseCode.SUCCESS,
        `raw pull with an uncompilable FLAG_SUBSCRIPTION expression: ${pull.remark}`,
      );
      t.equal(delivered, 15, 'Java 5.3.3 delivers every message of the queue');
    });
  });
}
