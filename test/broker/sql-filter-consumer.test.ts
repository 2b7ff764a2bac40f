import t from 'tap';
import { SqlLimitError, SqlParseError } from '../../protocol/index.js';
import { resetSqlEvaluationCounts, sqlEvaluationCounts } from '../../lib/broker/sql-filter.js';
import { PushConsumer, SqlFilterRefusedError, type MessageExt } from '../../lib/consumer/index.js';
import { brokerOffsets, produce, uniqueName, until, withBroker } from '../consumer/helpers.js';

// subscribe(topic, { sql }) end to end on the embedded broker: SQL92 in the heartbeat and the
// pulls, CHECK_CLIENT_CONFIG at start, the broker filtering.

t.test("subscribe(topic, { sql: 'a BETWEEN 10 AND 19' }) over a = 0..99 consumes exactly 10", async (t) => {
  const broker = await withBroker({ enablePropertyFilter: true });
  t.teardown(() => broker.close());
  const topic = uniqueName('SqlT');
  await produce(broker.namesrv, topic, 100, (i) => ({ properties: { a: String(i) }, tags: i % 2 ? 'odd' : 'even' }));
  const group = uniqueName('cg');
  const seen: MessageExt[] = [];
  const consumer = new PushConsumer({
    consumerGroup: group,
    namesrvAddr: broker.namesrv,
    persistOffsetIntervalMs: 100,
    consumeFromWhere: 'first',
    brokerSuspendMaxTimeMs: 100,
  });
  consumer.subscribe(topic, { sql: 'a BETWEEN 10 AND 19' });
  await consumer.start((msgs) => {
    seen.push(...msgs);
    return 'CONSUME_SUCCESS';
  });
  t.teardown(() => consumer.shutdown());
  // every queue committed to its end: all 100 were looked at, the filtered ones skipped (a short
  // long-poll brings back the caught-up pull whose NO_NEW_MSG commits a filtered-out tail)
  await until(
    async () => (await brokerOffsets(broker.namesrv, topic, group)).every((r) => r.committed === r.max),
    'offsets at the end',
  );
  t.same(
    seen.map((m) => Number(m.properties.a)).sort((x, y) => x - y),
    [10, 11, 12, 13, 14, 15, 16, 17, 18, 19],
  );
});

t.test('the subscriptions option takes { sql } too, and TAGS is a property', async (t) => {
  const broker = await withBroker({ enablePropertyFilter: true });
  t.teardown(() => broker.close());
  const topic = uniqueName('SqlT');
  await produce(broker.namesrv, topic, 40, (i) => ({ properties: { a: String(i) }, tags: i % 2 ? 'odd' : 'even' }));
  const group = uniqueName('cg');
  const seen: number[] = [];
  const consumer = new PushConsumer({
    consumerGroup: group,
    namesrvAddr: broker.namesrv,
    persistOffsetIntervalMs: 100,
    consumeFromWhere: 'first',
    brokerSuspendMaxTimeMs: 100,
    subscriptions: { [topic]: { sql: "TAGS = 'odd' AND a > 30" } },
  });
  await consumer.start((msgs) => {
    seen.push(...msgs.map((m) => Number(m.properties.a)));
    return 'CONSUME_SUCCESS';
  });
  t.teardown(() => consumer.shutdown());
  await until(
    async () => (await brokerOffsets(broker.namesrv, topic, group)).every((r) => r.committed === r.max),
    'offsets at the end',
  );
  t.same(
    seen.sort((x, y) => x - y),
    [31, 33, 35, 37, 39],
  );
});

t.test('start() fails with SqlFilterRefusedError on a broker without enablePropertyFilter', async (t) => {
  const broker = await withBroker();
  t.teardown(() => broker.close());
  const topic = uniqueName('SqlOff');
  await produce(broker.namesrv, topic, 1);
  const consumer = new PushConsumer({ consumerGroup: uniqueName('cg'), namesrvAddr: broker.namesrv });
  consumer.subscribe(topic, { sql: 'a = 1' });
  const err = await t.rejects(
    consumer.start(() => 'CONSUME_SUCCESS'),
    SqlFilterRefusedError,
  );
  t.match(err, {
    name: 'SqlFilterRefusedError',
    topic,
    brokerAddr: broker.broker,
    code: 1,
    propertyFilterDisabled: true,
  });
  t.match(
    (err as Error).message,
    /does not support consumer to filter message by SQL92 \(start the broker with enablePropertyFilter=true\)/,
  );
  t.equal(consumer.state, 'SHUTDOWN', 'the failed start cleaned up');
});

t.test('a bad { sql } is refused at subscribe, naming the option and the position', async (t) => {
  const consumer = new PushConsumer({ consumerGroup: 'g', namesrvAddr: '127.0.0.1:1' });
  const err = t.throws(() => consumer.subscribe('T', { sql: 'a BETWEEN 10 AND' }), {
    name: 'ConsumerOptionError',
    option: 'sql',
  }) as Error;
  t.type(err.cause, SqlParseError);
  t.match(err.cause, { position: 16 });
  t.match(err.message, /position 16/);
  const partial = t.throws(() => consumer.subscribe('T', { sql: "a LIKE 'x%'" }), {
    name: 'ConsumerOptionError',
    option: 'sql',
  }) as Error;
  t.match(
    partial.message,
    /does not parse past position 2 \("LIKE 'x%'"\): the broker would ignore everything from there/,
  );
  t.throws(() => consumer.subscribe('T', { sql: '  ' }), { name: 'ConsumerOptionError', option: 'sql' });
  t.throws(() => consumer.subscribe('T', { sql: 5 } as never), { name: 'ConsumerOptionError', option: 'sql' });
  t.throws(() => consumer.subscribe('T', { sql: 'a = 1', tags: 'x' } as never), {
    name: 'ConsumerOptionError',
    option: 'expression',
  });
  t.throws(() => consumer.subscribe('T', 7 as never), { name: 'ConsumerOptionError', option: 'expression' });
  t.throws(
    () => new PushConsumer({ consumerGroup: 'g', namesrvAddr: '127.0.0.1:1', subscriptions: { T: { sql: 'a ==' } } }),
    { name: 'ConsumerOptionError', option: 'sql' },
  );
});

t.test(
  'a consumer receives every matching message, once, when the evaluation budget cuts every scan short (issue 29 H2)',
  async (t) => {
    // 7 nodes per message plus its properties decoded (~100 bytes, ~25 steps): two or three per pull
    const broker = await withBroker({ enablePropertyFilter: true, sqlEvaluationBudget: 80 });
    t.teardown(() => broker.close());
    const topic = uniqueName('SqlBudget');
    await produce(broker.namesrv, topic, 200, (i) => ({ properties: { a: String(i), b: i % 3 === 0 ? 'y' : 'n' } }), {
      single: true,
    });
    const group = uniqueName('cg');
    const seen: number[] = [];
    resetSqlEvaluationCounts();
    const before = sqlEvaluationCounts();
    const consumer = new PushConsumer({
      consumerGroup: group,
      namesrvAddr: broker.namesrv,
      persistOffsetIntervalMs: 100,
      consumeFromWhere: 'first',
      brokerSuspendMaxTimeMs: 100,
    });
    consumer.subscribe(topic, { sql: "a >= 0 AND b = 'y'" });
    await consumer.start((msgs) => {
      seen.push(...msgs.map((m) => Number(m.properties.a)));
      return 'CONSUME_SUCCESS';
    });
    t.teardown(() => consumer.shutdown());
    await until(
      async () => (await brokerOffsets(broker.namesrv, topic, group)).every((r) => r.committed === r.max),
      'offsets at the end',
    );
    const after = sqlEvaluationCounts();
    const want = Array.from({ length: 200 }, (_, i) => i).filter((i) => i % 3 === 0);
    t.same(
      [...seen].sort((x, y) => x - y),
      want,
      `all ${want.length} matching messages, none twice`,
    );
    t.ok(
      after.budgetStops - before.budgetStops >= 40,
      `${after.budgetStops - before.budgetStops} pulls stopped at the budget`,
    );
    t.ok(after.maxStepsPerPull <= 80, `no pull spent more than the budget (${after.maxStepsPerPull})`);
  },
);

t.test(
  'sqlLimits: an expression past the bounds is refused with SqlLimitError; without the option, a warning',
  async (t) => {
    const balanced = (n: number, lo = 0): string =>
      n === 1 ? `a = ${lo}` : `(${balanced(n >> 1, lo)} OR ${balanced(n - (n >> 1), lo + (n >> 1))})`;
    const sql = balanced(1100);
    const limited = () =>
      new PushConsumer({
        consumerGroup: 'g',
        namesrvAddr: '127.0.0.1:1',
        sqlLimits: { maxNodes: 4096 },
        subscriptions: { T: { sql } },
      });
    const err = t.throws(limited, SqlLimitError) as SqlLimitError;
    t.match(err, { name: 'SqlLimitError', limit: 'maxNodes', max: 4096, option: 'sqlLimits.maxNodes' });
    t.match(err.message, /raise the option sqlLimits\.maxNodes$/);
    t.throws(
      () =>
        new PushConsumer({
          consumerGroup: 'g',
          namesrvAddr: '127.0.0.1:1',
          sqlLimits: { maxLength: 10 },
          subscriptions: { T: { sql: 'a = 1 OR b = 2' } },
        }),
      {
        name: 'SqlLimitError',
        limit: 'maxLength',
        actual: 14,
        option: 'sqlLimits.maxLength',
      },
    );
    t.throws(() => new PushConsumer({ consumerGroup: 'g', namesrvAddr: '127.0.0.1:1', sqlLimits: { maxNodes: 0 } }), {
      name: 'ConsumerOptionError',
      option: 'sqlLimits.maxNodes',
    });
    // subscribe() applies the same bounds as the subscriptions option
    const bySubscribe = new PushConsumer({
      consumerGroup: 'g',
      namesrvAddr: '127.0.0.1:1',
      sqlLimits: { maxNodes: 4096 },
    });
    t.throws(() => bySubscribe.subscribe('T', { sql }), {
      name: 'SqlLimitError',
      limit: 'maxNodes',
      option: 'sqlLimits.maxNodes',
    });

    const warnings: string[] = [];
    const logger = { debug() {}, info() {}, warn: (m: string) => warnings.push(m), error() {} };
    new PushConsumer({ consumerGroup: 'g', namesrvAddr: '127.0.0.1:1', logger, subscriptions: { T: { sql } } });
    t.equal(warnings.length, 1, 'accepted, with one warning');
    t.match(
      warnings[0],
      /SQL92 expression of topic T has 4399 nodes \(maxNodes 4096\).*set the consumer option sqlLimits/,
    );
    new PushConsumer({
      consumerGroup: 'g',
      namesrvAddr: '127.0.0.1:1',
      logger,
      subscriptions: { T: { sql: 'a = 1' } },
    });
    t.equal(warnings.length, 1, 'no warning for an ordinary expression');
  },
);
