import t from 'tap';
import { RequestCode, ResponseCode, createRequest, type RemotingCommand } from '../../protocol/index.js';
import { startBroker } from '../../lib/broker/index.js';
import {
  compileFilter,
  recordPropertiesText,
  sqlEvaluationCounts,
  sqlParseCount,
} from '../../lib/broker/sql-filter.js';
import { client, decode, ext, heartbeatRequest, pullRequest, sendRequest } from './helpers.js';

// The embedded broker's SQL92 filtering follows Apache's: ClientManageProcessor.checkClientConfig,
// PullMessageProcessor's filter-data and enablePropertyFilter checks, and
// ExpressionMessageFilter.isMatchedByCommitLog over each stored record's properties.

const SQL_IN_RANGE = 'a BETWEEN 10 AND 19';
/** The broker's default bounds. */
const L = { sqlMaxLength: 65_536, sqlMaxNodes: 4096 };

function sqlPull(
  topic: string,
  sql: string,
  offset: number,
  o: { group?: string; flagSubscription?: boolean } = {},
): RemotingCommand {
  const req = pullRequest(topic, {
    offset,
    group: o.group ?? 'cg',
    sysFlag: o.flagSubscription === false ? 0 : 4,
    subVersion: 1,
    suspendMs: 0,
  });
  req.extFields!.expressionType = 'SQL92';
  req.extFields!.subscription = sql;
  return req;
}

function sqlHeartbeat(clientId: string, group: string, topic: string, sql: string): RemotingCommand {
  const hb = heartbeatRequest(clientId, group, [{ topic, subString: sql }]);
  const data = JSON.parse(hb.body!.toString()) as {
    consumerDataSet: { subscriptionDataSet: Record<string, unknown>[] }[];
  };
  Object.assign(data.consumerDataSet[0]!.subscriptionDataSet[0]!, {
    expressionType: 'SQL92',
    subString: sql,
    codeSet: [],
    tagsSet: [],
  });
  hb.body = Buffer.from(JSON.stringify(data));
  return hb;
}

function checkClientConfig(group: string, topic: string, sql: string): RemotingCommand {
  const subscriptionData = {
    classFilterMode: false,
    codeSet: [],
    expressionType: 'SQL92',
    subString: sql,
    subVersion: 1,
    tagsSet: [],
    topic,
  };
  return createRequest(RequestCode.CHECK_CLIENT_CONFIG, {
    body: Buffer.from(JSON.stringify({ clientId: '10.0.0.1@sql', group, subscriptionData })),
  });
}

t.test('a broker with enablePropertyFilter delivers exactly the messages whose properties match', async (t) => {
  const b = await startBroker({ enablePropertyFilter: true });
  t.teardown(() => b.close());
  const c = client();
  t.teardown(() => c.close());
  for (let i = 0; i < 100; i++) {
    const res = await c.invoke(
      b.broker,
      sendRequest('SqlT', `m${i}`, { tags: i % 2 ? 'odd' : 'even', properties: { a: String(i) } }),
    );
    t.equal(res.code, ResponseCode.SUCCESS);
  }
  // pull the whole queue with the request's own expression, following nextBeginOffset
  const drain = async (sql: string, o: { group?: string; flagSubscription?: boolean } = {}): Promise<string[]> => {
    const got: string[] = [];
    let offset = 0;
    while (offset < 100) {
      const res = await c.invoke(b.broker, sqlPull('SqlT', sql, offset, o));
      t.ok(
        res.code === ResponseCode.SUCCESS || res.code === ResponseCode.PULL_RETRY_IMMEDIATELY,
        `${sql} @${offset}: ${res.code} ${res.remark}`,
      );
      if (res.code !== ResponseCode.SUCCESS && res.code !== ResponseCode.PULL_RETRY_IMMEDIATELY) break;
      got.push(...decode(res).map((m) => m.body.toString()));
      offset = Number(ext(res, 'nextBeginOffset'));
    }
    return got;
  };
  t.same(
    await drain(SQL_IN_RANGE),
    ['m10', 'm11', 'm12', 'm13', 'm14', 'm15', 'm16', 'm17', 'm18', 'm19'],
    'a = 0..99: exactly 10',
  );
  t.same(await drain("TAGS = 'odd' AND a < 6"), ['m1', 'm3', 'm5'], 'TAGS is a property like any other');
  t.same(await drain('a = 5 OR b IS NOT NULL'), ['m5']);
  t.same(await drain('missing = 1'), [], 'a missing property matches nothing');

  // the same through a heartbeat-registered subscription (what the push consumer does)
  t.equal(
    (await c.invoke(b.broker, sqlHeartbeat('10.0.0.1@sql', 'sqlg', 'SqlT', 'a >= 95'))).code,
    ResponseCode.SUCCESS,
  );
  t.same(await drain('ignored', { group: 'sqlg', flagSubscription: false }), ['m95', 'm96', 'm97', 'm98', 'm99']);

  // a registered expression that does not compile has no filter data (Java's FILTER_DATA_NOT_EXIST)
  t.equal((await c.invoke(b.broker, sqlHeartbeat('10.0.0.1@sql', 'badg', 'SqlT', 'a >'))).code, ResponseCode.SUCCESS);
  const noData = await c.invoke(b.broker, sqlPull('SqlT', 'x', 0, { group: 'badg', flagSubscription: false }));
  t.equal(noData.code, ResponseCode.FILTER_DATA_NOT_EXIST);
  t.match(noData.remark, /filter data is not exist/);
  // a pull's own expression that does not compile
  const bad = await c.invoke(b.broker, sqlPull('SqlT', "a = 'x", 0));
  t.equal(bad.code, ResponseCode.SUBSCRIPTION_PARSE_FAILED);
  t.match(bad.remark, /unterminated string literal at position 4/);

  // CHECK_CLIENT_CONFIG: compiles → SUCCESS; does not → SUBSCRIPTION_PARSE_FAILED naming the position
  t.equal((await c.invoke(b.broker, checkClientConfig('g', 'SqlT', SQL_IN_RANGE))).code, ResponseCode.SUCCESS);
  const refused = await c.invoke(b.broker, checkClientConfig('g', 'SqlT', 'a BETWEEN 19 AND 10'));
  t.equal(refused.code, ResponseCode.SUBSCRIPTION_PARSE_FAILED);
  t.match(refused.remark, /position 2/);
});

t.test('a broker without enablePropertyFilter (the default) refuses SQL92 as Apache does', async (t) => {
  const b = await startBroker();
  t.teardown(() => b.close());
  const c = client();
  t.teardown(() => c.close());
  t.equal(
    (await c.invoke(b.broker, sendRequest('SqlOff', 'm', { properties: { a: '1' } }))).code,
    ResponseCode.SUCCESS,
  );
  const check = await c.invoke(b.broker, checkClientConfig('g', 'SqlOff', 'a = 1'));
  t.equal(check.code, ResponseCode.SYSTEM_ERROR);
  t.equal(check.remark, 'The broker does not support consumer to filter message by SQL92');
  const parsesBefore = sqlParseCount();
  const pull = await c.invoke(b.broker, sqlPull('SqlOff', `a = 1 OR b = '${process.pid}-${Date.now()}'`, 0));
  t.equal(pull.code, ResponseCode.SYSTEM_ERROR);
  t.equal(pull.remark, 'The broker does not support consumer to filter message by SQL92');
  t.equal(
    sqlParseCount(),
    parsesBefore,
    "the pull's own expression was not parsed: the answer does not need it (issue 29 H1)",
  );
  // a TAG check is always fine
  const tagCheck = createRequest(RequestCode.CHECK_CLIENT_CONFIG, {
    body: Buffer.from(
      JSON.stringify({
        clientId: 'x@y',
        group: 'g',
        subscriptionData: {
          classFilterMode: false,
          codeSet: [],
          expressionType: 'TAG',
          subString: '*',
          subVersion: 1,
          tagsSet: [],
          topic: 'SqlOff',
        },
      }),
    ),
  });
  t.equal((await c.invoke(b.broker, tagCheck)).code, ResponseCode.SUCCESS);
});

t.test('a long-polling SQL92 pull wakes when a matching message arrives', async (t) => {
  const b = await startBroker({ enablePropertyFilter: true });
  t.teardown(() => b.close());
  const c = client();
  t.teardown(() => c.close());
  t.equal(
    (await c.invoke(b.broker, sendRequest('SqlHold', 'first', { properties: { a: '1' } }))).code,
    ResponseCode.SUCCESS,
  );
  const held = pullRequest('SqlHold', { offset: 1, sysFlag: 4 | 2, subVersion: 1, suspendMs: 30_000 });
  held.extFields!.expressionType = 'SQL92';
  held.extFields!.subscription = 'a = 2';
  const answer = c.invoke(b.broker, held, { timeoutMs: 40_000 });
  t.equal(
    (await c.invoke(b.broker, sendRequest('SqlHold', 'second', { properties: { a: '2' } }))).code,
    ResponseCode.SUCCESS,
  );
  const res = await answer;
  t.equal(res.code, ResponseCode.SUCCESS);
  t.same(
    decode(res).map((m) => m.body.toString()),
    ['second'],
  );
});

t.test('an expression is compiled once, however many pulls and checks carry it', async (t) => {
  const a = compileFilter('SQL92', 'a = 1 AND b IS NULL', L);
  t.equal(compileFilter('SQL92', 'a = 1 AND b IS NULL', L), a, 'the same compiled filter');
  const bad = compileFilter('SQL92', 'a =', L);
  t.equal(compileFilter('SQL92', 'a =', L), bad, 'a refusal too');
  for (let i = 0; i < 150; i++) compileFilter('SQL92', `a = ${i}`, L);
  t.not(compileFilter('SQL92', 'a = 1 AND b IS NULL', L), a, 'at most 100 kept');
  t.match(compileFilter('FOO', 'a = 1', L), { ok: false }, 'no filter for another type');
});

/** A balanced OR of `n` comparisons `a=<10000 + k>` (the budget attack's shape: 65 536 of them are 852 KB). */
function balancedOr(n: number, lo = 0): string {
  return n === 1 ? `a=${10000 + lo}` : `(${balancedOr(n >> 1, lo)} OR ${balancedOr(n - (n >> 1), lo + (n >> 1))})`;
}

t.test(
  'an expression past sqlMaxLength or sqlMaxNodes is refused as one that does not parse, naming the bound (issue 29 H1/H2)',
  async (t) => {
    const b = await startBroker({ enablePropertyFilter: true });
    t.teardown(() => b.close());
    const c = client();
    t.teardown(() => c.close());
    t.equal(
      (await c.invoke(b.broker, sendRequest('SqlBig', 'm', { properties: { a: '12047' } }))).code,
      ResponseCode.SUCCESS,
    );
    // 70 000 characters: refused before any parse
    const long = `a = 1 OR b = '${'x'.repeat(70_000)}'`;
    const parsesBefore = sqlParseCount();
    const pull = await c.invoke(b.broker, sqlPull('SqlBig', long, 0));
    t.equal(
      pull.code,
      ResponseCode.SUBSCRIPTION_PARSE_FAILED,
      "a pull's own expression: what Java answers for one that does not parse",
    );
    t.match(pull.remark, /70015 characters exceed maxLength \(65536\) .*raise the option sqlMaxLength/);
    t.equal(sqlParseCount(), parsesBefore, 'not parsed');
    // 2048 comparisons, 26 KB: 8191 nodes
    const many = balancedOr(2048);
    const check = await c.invoke(b.broker, checkClientConfig('g', 'SqlBig', many));
    t.equal(check.code, ResponseCode.SUBSCRIPTION_PARSE_FAILED);
    t.match(check.remark, /nodes exceed maxNodes \(4096\) .*raise the option sqlMaxNodes/);
    // registered by a heartbeat (accepted, as Java's): its pulls have no filter data, the bound named
    t.equal(
      (await c.invoke(b.broker, sqlHeartbeat('10.0.0.1@big', 'bigg', 'SqlBig', many))).code,
      ResponseCode.SUCCESS,
    );
    const noData = await c.invoke(b.broker, sqlPull('SqlBig', 'x', 0, { group: 'bigg', flagSubscription: false }));
    t.equal(noData.code, ResponseCode.FILTER_DATA_NOT_EXIST);
    t.match(
      noData.remark,
      /^The broker's consumer filter data is not exist!Your expression may be wrong! \(.*sqlMaxNodes\)$/,
    );

    // raised bounds take them
    const raised = await startBroker({ enablePropertyFilter: true, sqlMaxNodes: 8191 });
    t.teardown(() => raised.close());
    t.equal(
      (await c.invoke(raised.broker, sendRequest('SqlBig', 'm', { properties: { a: '12047' } }))).code,
      ResponseCode.SUCCESS,
    );
    const ok = await c.invoke(raised.broker, sqlPull('SqlBig', many, 0));
    t.equal(ok.code, ResponseCode.SUCCESS);
    t.equal(decode(ok).length, 1);
    for (const [option, v] of [
      ['sqlMaxLength', 0],
      ['sqlMaxNodes', 2 ** 25],
      ['sqlEvaluationBudget', 1.5],
    ] as const) {
      await t.rejects(startBroker({ [option]: v }), { name: 'BrokerOptionError', option });
    }
  },
);

t.test(
  'a SQL92 pull spends at most sqlEvaluationBudget, then answers what it has; the next pull goes on from there (issue 29 H2)',
  async (t) => {
    const leaves = 65_536;
    const sql = balancedOr(leaves);
    const budget = 600_000;
    const b = await startBroker({
      enablePropertyFilter: true,
      sqlMaxLength: 1 << 20,
      sqlMaxNodes: 1 << 18,
      sqlEvaluationBudget: budget,
      queues: 1,
    });
    t.teardown(() => b.close());
    const c = client();
    t.teardown(() => c.close());
    // ten messages, the eighth matches one comparison of the OR
    for (let i = 0; i < 10; i++) {
      t.equal(
        (await c.invoke(b.broker, sendRequest('SqlBudget', `m${i}`, { properties: { a: i === 7 ? '10007' : '1' } })))
          .code,
        ResponseCode.SUCCESS,
      );
    }
    const start = sqlEvaluationCounts();
    const got: string[] = [];
    const offsets: number[] = [];
    let offset = 0;
    let pulls = 0;
    while (offset < 10 && pulls < 20) {
      const before = sqlEvaluationCounts();
      const res = await c.invoke(b.broker, sqlPull('SqlBudget', sql, offset), { timeoutMs: 30_000 });
      pulls++;
      const spent = sqlEvaluationCounts().steps - before.steps;
      t.ok(spent <= budget, `pull ${pulls} from ${offset}: ${spent} steps, at most the budget ${budget}`);
      t.ok(
        res.code === ResponseCode.SUCCESS || res.code === ResponseCode.PULL_RETRY_IMMEDIATELY,
        `answered ${res.code} ${res.remark}`,
      );
      got.push(...decode(res).map((m) => m.body.toString()));
      const next = Number(ext(res, 'nextBeginOffset'));
      t.ok(next > offset, `nextBeginOffset ${next} moves on`);
      offset = next;
      offsets.push(next);
    }
    const end = sqlEvaluationCounts();
    t.same(got, ['m7'], 'the one match, once');
    // 262 143 nodes per message (65 536 × (a, literal, =) + 65 535 ORs): two fit the budget; m7
    // matches at its eighth comparison, which leaves room for m8
    t.same(offsets, [2, 4, 6, 9, 10], 'two or three messages evaluated per pull, none skipped');
    t.ok(end.maxStepsPerPull <= budget, `the most one pull spent: ${end.maxStepsPerPull}`);
    t.equal(end.budgetStops - start.budgetStops, 4, 'four pulls stopped at the budget (the last ran out of messages)');
    t.ok(
      end.nodes - start.nodes > 9 * (4 * leaves - 1) && end.nodes - start.nodes < 10 * (4 * leaves - 1),
      'every message evaluated once (m7 in part)',
    );
  },
);

t.test('enablePropertyFilter must be a boolean', async (t) => {
  await t.rejects(startBroker({ enablePropertyFilter: 'true' as never }), {
    name: 'BrokerOptionError',
    option: 'enablePropertyFilter',
  });
});

t.test('the properties of a stored record are found past hosts, body and topic', async (t) => {
  const b = await startBroker();
  t.teardown(() => b.close());
  const c = client();
  t.teardown(() => c.close());
  t.equal(
    (await c.invoke(b.broker, sendRequest('SqlRec', 'x'.repeat(300), { properties: { a: '7', TAGS: 'T' } }))).code,
    ResponseCode.SUCCESS,
  );
  const res = await c.invoke(b.broker, pullRequest('SqlRec', {}));
  const text = recordPropertiesText(res.body!)!;
  t.match(text, /a\u00017/);
  t.match(text, /TAGS\u0001T/);
  t.equal(recordPropertiesText(res.body!.subarray(0, 120)), null, 'a truncated record has no properties');
});
