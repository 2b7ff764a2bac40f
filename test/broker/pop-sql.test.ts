// The embedded broker's POP filters by SQL92 as Apache's PopMessageProcessor does (the
// expression type and expression of the POP header, compiled as ConsumerFilterManager does,
// evaluated over each record's properties on the topic and its pop retry topic), within the
// bounds every SQL92 path has: sqlMaxLength / sqlMaxNodes refuse an expression, and one pop
// spends at most sqlEvaluationBudget.
import t, { type Test } from 'tap';
import { startBroker, type EmbeddedBroker } from '../../lib/broker/index.js';
import { ManualClock } from '../../lib/clock.js';
import { sqlEvaluationCounts } from '../../lib/broker/sql-filter.js';
import type { RemotingClient } from '../../lib/remoting/index.js';
import { RequestCode, ResponseCode, createRequest, type RemotingCommand } from '../../protocol/index.js';
import { client, decode, sendRequest } from './helpers.js';
import { uniqueName } from '../consumer/helpers.js';

async function setup(
  t: Test,
  opts: Parameters<typeof startBroker>[0] = {},
): Promise<{ b: EmbeddedBroker; raw: RemotingClient; topic: string; group: string }> {
  const b = await startBroker({ queues: 1, ...opts });
  const raw = client();
  t.teardown(async () => {
    await raw.close();
    await b.close();
  });
  return { b, raw, topic: uniqueName('PopSqlT'), group: uniqueName('PopSqlG') };
}

function pop(
  raw: RemotingClient,
  b: EmbeddedBroker,
  topic: string,
  group: string,
  exp: { expType?: string; exp?: string },
  pollTime = 0,
): Promise<RemotingCommand> {
  return raw.invoke(
    b.broker,
    createRequest(RequestCode.POP_MESSAGE, {
      extFields: {
        consumerGroup: group,
        topic,
        queueId: '-1',
        maxMsgNums: '32',
        invisibleTime: '60000',
        pollTime: String(pollTime),
        bornTime: '0',
        initMode: '0',
        ...exp,
      },
    }),
    { timeoutMs: 30_000 },
  );
}

async function send(
  t: Test,
  raw: RemotingClient,
  b: EmbeddedBroker,
  topic: string,
  n: number,
  a: (i: number) => string,
) {
  for (let i = 0; i < n; i++) {
    const res = await raw.invoke(b.broker, sendRequest(topic, `m${i}`, { properties: { a: a(i) } }));
    t.equal(res.code, ResponseCode.SUCCESS);
  }
}

t.test('a SQL92 pop hands out exactly the messages whose properties match, the rest never', async (t) => {
  const { b, raw, topic, group } = await setup(t);
  await send(t, raw, b, topic, 30, (i) => String(i));
  const got: string[] = [];
  for (let i = 0; i < 5; i++) {
    const res = await pop(raw, b, topic, group, { expType: 'SQL92', exp: 'a BETWEEN 10 AND 19' });
    t.ok(
      res.code === ResponseCode.SUCCESS || res.code === ResponseCode.POLLING_TIMEOUT,
      `answered ${res.code} ${res.remark}`,
    );
    if (res.code === ResponseCode.SUCCESS) got.push(...decode(res).map((m) => m.body.toString()));
  }
  t.same(
    got,
    Array.from({ length: 10 }, (_, i) => `m${10 + i}`),
    'the ten matches, once',
  );
  // the group's offset moved past what did not match: a TAG pop of the same group gets nothing old
  const all = await pop(raw, b, topic, group, {});
  t.equal(all.code, ResponseCode.POLLING_TIMEOUT, 'nothing left behind the filtered-out messages');
});

t.test('no expression (or an empty one) is every message, whatever the type says', async (t) => {
  const { b, raw, topic, group } = await setup(t);
  await send(t, raw, b, topic, 3, (i) => String(i));
  const res = await pop(raw, b, topic, group, { expType: 'SQL92', exp: '' });
  t.equal(res.code, ResponseCode.SUCCESS);
  t.equal(decode(res).length, 3);
});

t.test('an expression that does not parse, or of a type no filter serves, is SUBSCRIPTION_PARSE_FAILED', async (t) => {
  const { b, raw, topic, group } = await setup(t);
  await send(t, raw, b, topic, 1, () => '1');
  const bad = await pop(raw, b, topic, group, { expType: 'SQL92', exp: 'a = ' });
  t.equal(bad.code, ResponseCode.SUBSCRIPTION_PARSE_FAILED);
  t.match(bad.remark, /^parse the consumer's subscription failed: /);
  const other = await pop(raw, b, topic, group, { expType: 'CLASS', exp: 'a = 1' });
  t.equal(other.code, ResponseCode.SUBSCRIPTION_PARSE_FAILED);
  // nothing was handed out by the refused pops
  const res = await pop(raw, b, topic, group, {});
  t.equal(decode(res).length, 1);
});

/** A balanced OR of `n` comparisons `a=<10000 + k>`. */
function balancedOr(n: number, lo = 0): string {
  return n === 1 ? `a=${10000 + lo}` : `(${balancedOr(n >> 1, lo)} OR ${balancedOr(n - (n >> 1), lo + (n >> 1))})`;
}

t.test(
  'an expression past sqlMaxLength or sqlMaxNodes is refused before anything is popped, naming the bound',
  async (t) => {
    const { b, raw, topic, group } = await setup(t, { sqlMaxLength: 100, sqlMaxNodes: 20 });
    await send(t, raw, b, topic, 1, () => '1');
    const long = await pop(raw, b, topic, group, { expType: 'SQL92', exp: `a = '${'x'.repeat(200)}'` });
    t.equal(long.code, ResponseCode.SUBSCRIPTION_PARSE_FAILED);
    t.match(long.remark, /exceed maxLength \(100\).*raise the option sqlMaxLength/);
    const wide = await pop(raw, b, topic, group, { expType: 'SQL92', exp: balancedOr(8) });
    t.ok(wide.remark!.length < 200, 'the length passes');
    t.equal(wide.code, ResponseCode.SUBSCRIPTION_PARSE_FAILED);
    t.match(wide.remark, /exceed maxNodes \(20\).*raise the option sqlMaxNodes/);
    t.equal(decode(await pop(raw, b, topic, group, {})).length, 1, 'the message is still there');
  },
);

t.test(
  'a SQL92 pop spends at most sqlEvaluationBudget and answers at once; the next pop goes on, nothing skipped',
  async (t) => {
    const leaves = 65_536;
    const sql = balancedOr(leaves);
    const budget = 600_000;
    const { b, raw, topic, group } = await setup(t, {
      sqlMaxLength: 1 << 20,
      sqlMaxNodes: 1 << 18,
      sqlEvaluationBudget: budget,
      clock: new ManualClock(),
    });
    // eleven messages, the eighth and the last match one comparison of the OR each
    await send(t, raw, b, topic, 11, (i) => (i === 7 ? '10007' : i === 10 ? '10010' : '1'));
    const start = sqlEvaluationCounts();
    const got: string[] = [];
    let pops = 0;
    // long polls on a broker whose clock never moves: a pop stopped by its budget that held the
    // request instead of answering at once would never answer (the invoke times out)
    while (!got.includes('m10') && pops < 20) {
      const before = sqlEvaluationCounts();
      const res = await pop(raw, b, topic, group, { expType: 'SQL92', exp: sql }, 20_000);
      pops++;
      const spent = sqlEvaluationCounts().steps - before.steps;
      t.ok(spent <= budget, `pop ${pops}: ${spent} steps, at most the budget ${budget}`);
      if (res.code === ResponseCode.SUCCESS) got.push(...decode(res).map((m) => m.body.toString()));
      else t.equal(res.code, ResponseCode.POLLING_TIMEOUT, `answered ${res.code} ${res.remark}`);
    }
    const end = sqlEvaluationCounts();
    t.same(got, ['m7', 'm10'], 'the two matches, once each');
    t.ok(pops >= 4, `the eleven messages took ${pops} pops (two or three evaluated per pop)`);
    t.ok(end.budgetStops - start.budgetStops >= 3, 'pops stopped at the budget');
    t.ok(
      end.nodes - start.nodes > 9 * (4 * leaves - 1) && end.nodes - start.nodes < 11 * (4 * leaves - 1),
      'every message evaluated once (m7 and m10 in part)',
    );
  },
);
