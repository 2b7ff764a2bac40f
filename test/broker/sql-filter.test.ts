import t from 'tap';
import { RequestCode, ResponseCode, createRequest, type RemotingCommand } from '../../protocol/index.js';
import { startBroker } from '../../lib/broker/index.js';
import { compileFilter, recordPropertiesText, sqlParseCount } from '../../lib/broker/sql-filter.js';
import { client, decode, ext, heartbeatRequest, pullRequest, sendRequest } from './helpers.js';

// The embedded broker's SQL92 filtering follows Apache's: ClientManageProcessor.checkClientConfig,
// PullMessageProcessor's filter-data and enablePropertyFilter checks, and
// ExpressionMessageFilter.isMatchedByCommitLog over each stored record's properties.

const SQL_IN_RANGE = 'a BETWEEN 10 AND 19';

function sqlPull(topic: string, sql: string, offset: number, o: { group?: string; flagSubscription?: boolean } = {}): RemotingCommand {
  const req = pullRequest(topic, { offset, group: o.group ?? 'cg', sysFlag: o.flagSubscription === false ? 0 : 4, subVersion: 1, suspendMs: 0 });
  req.extFields!.expressionType = 'SQL92';
  req.extFields!.subscription = sql;
  return req;
}

function sqlHeartbeat(clientId: string, group: string, topic: string, sql: string): RemotingCommand {
  const hb = heartbeatRequest(clientId, group, [{ topic, subString: sql }]);
  const data = JSON.parse(hb.body!.toString()) as { consumerDataSet: { subscriptionDataSet: Record<string, unknown>[] }[] };
  Object.assign(data.consumerDataSet[0]!.subscriptionDataSet[0]!, { expressionType: 'SQL92', subString: sql, codeSet: [], tagsSet: [] });
  hb.body = Buffer.from(JSON.stringify(data));
  return hb;
}

function checkClientConfig(group: string, topic: string, sql: string): RemotingCommand {
  const subscriptionData = { classFilterMode: false, codeSet: [], expressionType: 'SQL92', subString: sql, subVersion: 1, tagsSet: [], topic };
  return createRequest(RequestCode.CHECK_CLIENT_CONFIG, { body: Buffer.from(JSON.stringify({ clientId: '10.0.0.1@sql', group, subscriptionData })) });
}

t.test('a broker with enablePropertyFilter delivers exactly the messages whose properties match', async (t) => {
  const b = await startBroker({ enablePropertyFilter: true });
  t.teardown(() => b.close());
  const c = client();
  t.teardown(() => c.close());
  for (let i = 0; i < 100; i++) {
    const res = await c.invoke(b.broker, sendRequest('SqlT', `m${i}`, { tags: i % 2 ? 'odd' : 'even', properties: { a: String(i) } }));
    t.equal(res.code, ResponseCode.SUCCESS);
  }
  // pull the whole queue with the request's own expression, following nextBeginOffset
  const drain = async (sql: string, o: { group?: string; flagSubscription?: boolean } = {}): Promise<string[]> => {
    const got: string[] = [];
    let offset = 0;
    while (offset < 100) {
      const res = await c.invoke(b.broker, sqlPull('SqlT', sql, offset, o));
      t.ok(res.code === ResponseCode.SUCCESS || res.code === ResponseCode.PULL_RETRY_IMMEDIATELY, `${sql} @${offset}: ${res.code} ${res.remark}`);
      if (res.code !== ResponseCode.SUCCESS && res.code !== ResponseCode.PULL_RETRY_IMMEDIATELY) break;
      got.push(...decode(res).map((m) => m.body.toString()));
      offset = Number(ext(res, 'nextBeginOffset'));
    }
    return got;
  };
  t.same(await drain(SQL_IN_RANGE), ['m10', 'm11', 'm12', 'm13', 'm14', 'm15', 'm16', 'm17', 'm18', 'm19'], 'a = 0..99: exactly 10');
  t.same(await drain("TAGS = 'odd' AND a < 6"), ['m1', 'm3', 'm5'], 'TAGS is a property like any other');
  t.same(await drain('a = 5 OR b IS NOT NULL'), ['m5']);
  t.same(await drain('missing = 1'), [], 'a missing property matches nothing');

  // the same through a heartbeat-registered subscription (what the push consumer does)
  t.equal((await c.invoke(b.broker, sqlHeartbeat('10.0.0.1@sql', 'sqlg', 'SqlT', 'a >= 95'))).code, ResponseCode.SUCCESS);
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
  t.equal((await c.invoke(b.broker, sendRequest('SqlOff', 'm', { properties: { a: '1' } }))).code, ResponseCode.SUCCESS);
  const check = await c.invoke(b.broker, checkClientConfig('g', 'SqlOff', 'a = 1'));
  t.equal(check.code, ResponseCode.SYSTEM_ERROR);
  t.equal(check.remark, 'The broker does not support consumer to filter message by SQL92');
  const parsesBefore = sqlParseCount();
  const pull = await c.invoke(b.broker, sqlPull('SqlOff', `a = 1 OR b = '${process.pid}-${Date.now()}'`, 0));
  t.equal(pull.code, ResponseCode.SYSTEM_ERROR);
  t.equal(pull.remark, 'The broker does not support consumer to filter message by SQL92');
  t.equal(sqlParseCount(), parsesBefore, 'the pull\'s own expression was not parsed: the answer does not need it (issue 29 H1)');
  // a TAG check is always fine
  const tagCheck = createRequest(RequestCode.CHECK_CLIENT_CONFIG, {
    body: Buffer.from(JSON.stringify({ clientId: 'x@y', group: 'g', subscriptionData: { classFilterMode: false, codeSet: [], expressionType: 'TAG', subString: '*', subVersion: 1, tagsSet: [], topic: 'SqlOff' } })),
  });
  t.equal((await c.invoke(b.broker, tagCheck)).code, ResponseCode.SUCCESS);
});

t.test('a long-polling SQL92 pull wakes when a matching message arrives', async (t) => {
  const b = await startBroker({ enablePropertyFilter: true });
  t.teardown(() => b.close());
  const c = client();
  t.teardown(() => c.close());
  t.equal((await c.invoke(b.broker, sendRequest('SqlHold', 'first', { properties: { a: '1' } }))).code, ResponseCode.SUCCESS);
  const held = pullRequest('SqlHold', { offset: 1, sysFlag: 4 | 2, subVersion: 1, suspendMs: 30_000 });
  held.extFields!.expressionType = 'SQL92';
  held.extFields!.subscription = 'a = 2';
  const answer = c.invoke(b.broker, held, { timeoutMs: 40_000 });
  t.equal((await c.invoke(b.broker, sendRequest('SqlHold', 'second', { properties: { a: '2' } }))).code, ResponseCode.SUCCESS);
  const res = await answer;
  t.equal(res.code, ResponseCode.SUCCESS);
  t.same(decode(res).map((m) => m.body.toString()), ['second']);
});

t.test('an expression is compiled once, however many pulls and checks carry it', async (t) => {
  const a = compileFilter('SQL92', 'a = 1 AND b IS NULL');
  t.equal(compileFilter('SQL92', 'a = 1 AND b IS NULL'), a, 'the same compiled filter');
  const bad = compileFilter('SQL92', 'a =');
  t.equal(compileFilter('SQL92', 'a ='), bad, 'a refusal too');
  for (let i = 0; i < 150; i++) compileFilter('SQL92', `a = ${i}`);
  t.not(compileFilter('SQL92', 'a = 1 AND b IS NULL'), a, 'at most 100 kept');
  t.match(compileFilter('FOO', 'a = 1'), { ok: false }, 'no filter for another type');
});

t.test('enablePropertyFilter must be a boolean', async (t) => {
  await t.rejects(startBroker({ enablePropertyFilter: 'true' as never }), { name: 'BrokerOptionError', option: 'enablePropertyFilter' });
});

t.test('the properties of a stored record are found past hosts, body and topic', async (t) => {
  const b = await startBroker();
  t.teardown(() => b.close());
  const c = client();
  t.teardown(() => c.close());
  t.equal((await c.invoke(b.broker, sendRequest('SqlRec', 'x'.repeat(300), { properties: { a: '7', TAGS: 'T' } }))).code, ResponseCode.SUCCESS);
  const res = await c.invoke(b.broker, pullRequest('SqlRec', {}));
  const text = recordPropertiesText(res.body!)!;
  t.match(text, /a\u00017/);
  t.match(text, /TAGS\u0001T/);
  t.equal(recordPropertiesText(res.body!.subarray(0, 120)), null, 'a truncated record has no properties');
});
