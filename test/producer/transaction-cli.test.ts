// `rocketwire produce --transaction commit|rollback|check` against the embedded broker (system
// clock: the command's own process waits for the broker's real check-backs: a round every 100 ms,
// for messages (and check copies) older than 1 s).
import t from 'tap';
import { startBroker } from '../../lib/broker/index.js';
import { RemotingClient } from '../../lib/remoting/index.js';
import { runCli } from '../cli/run-in-process.js';
import { pullTopic } from './transaction-helpers.js';

let n = 0;
const uniq = (p: string): string => `${p}_${process.pid}_${n++}`;

t.test('commit, rollback and check runs: what a consumer sees and what the summary says', async (t) => {
  const broker = await startBroker({ queues: 2, transactionCheckInterval: 100, transactionTimeOut: 1000 });
  const raw = new RemotingClient();
  t.teardown(async () => {
    await raw.close();
    await broker.close();
  });
  const topic = uniq('TxCli');
  const produce = (mode: string, count: number, extra: string[] = []) =>
    runCli([
      'produce',
      '--namesrv',
      broker.namesrv,
      '--topic',
      topic,
      '--count',
      String(count),
      '--body',
      mode,
      '--transaction',
      mode,
      '--group',
      uniq('tx_cli'),
      '--json',
      ...extra,
    ]);

  const commit = await produce('commit', 4);
  t.equal(commit.code, 0, commit.stderr);
  t.match(JSON.parse(commit.stdout), {
    sent: 4,
    failed: 0,
    transaction: { mode: 'commit', COMMIT_MESSAGE: 4, ROLLBACK_MESSAGE: 0, UNKNOW: 0 },
  });
  const rollback = await produce('rollback', 3);
  t.equal(rollback.code, 0, rollback.stderr);
  t.match(JSON.parse(rollback.stdout), { sent: 3, transaction: { mode: 'rollback', ROLLBACK_MESSAGE: 3 } });
  const check = await produce('check', 10, ['--check-timeout', '30']);
  t.equal(check.code, 0, check.stderr);
  t.match(JSON.parse(check.stdout), {
    sent: 10,
    transaction: { mode: 'check', UNKNOW: 10, checked: 10, committed: 5, rolledBack: 5, unchecked: 0 },
  });

  const seen = await pullTopic(raw, broker.broker, topic, 2);
  const commits = seen
    .filter((m) => String(m.body) === 'commit')
    .map((m) => Number(m.properties.seq))
    .sort((a, b) => a - b);
  const checks = seen
    .filter((m) => String(m.body) === 'check')
    .map((m) => Number(m.properties.seq))
    .sort((a, b) => a - b);
  t.same(commits, [0, 1, 2, 3], 'every committed message, seq = its index in the run');
  t.same(checks, [0, 2, 4, 6, 8], 'the even checked ones');
  t.equal(seen.filter((m) => String(m.body) === 'rollback').length, 0, 'no rolled back one');
});

t.test(
  'check run: the text summary names the checks; messages never checked within --check-timeout fail the run',
  async (t) => {
    // the default 30 s check interval: nothing is checked within one second
    const broker = await startBroker({ queues: 1 });
    t.teardown(() => broker.close());
    const r = await runCli([
      'produce',
      '--namesrv',
      broker.namesrv,
      '--topic',
      uniq('TxCliSlow'),
      '--count',
      '3',
      '--transaction',
      'check',
      '--check-timeout',
      '1',
    ]);
    t.equal(r.code, 1);
    t.match(r.stdout, /^sent 3 failed 0 .*; checked 0 \(commit 0, rollback 0\)\n$/);
    t.equal(r.stderr, 'rocketwire produce: 3 of 3 messages were not checked by the broker within --check-timeout 1\n');
  },
);

t.test('bad transaction options: one line naming the option, exit 2', async (t) => {
  const cases: Array<[string[], RegExp]> = [
    [['--transaction', 'maybe'], /--transaction must be commit, rollback or check, got "maybe"/],
    [['--transaction', 'commit', '--check-timeout', '5'], /--check-timeout needs --transaction check/],
    [['--transaction', 'check', '--check-timeout', '0'], /--check-timeout/],
    [['--transaction', 'check', '--check-timeout', 'x'], /--check-timeout/],
    [['--transaction', 'commit', '--batch', '2'], /--batch and --transaction exclude each other/],
  ];
  for (const [args, re] of cases) {
    const r = await runCli(['produce', '--namesrv', '127.0.0.1:1', '--topic', 'T', ...args]);
    t.equal(r.code, 2, args.join(' '));
    t.match(r.stderr, re);
    t.equal(r.stderr.trim().split('\n').length, 1, 'one line');
    t.notMatch(r.stderr, /\n\s+at /, 'no stack trace');
  }
});

t.test('rocketwire broker: bad --transaction-check-interval / --transaction-timeout name the flag', async (t) => {
  for (const [flag, v] of [
    ['--transaction-check-interval', '0'],
    ['--transaction-check-interval', 'x'],
    ['--transaction-timeout', '-1'],
  ] as const) {
    const r = await runCli(['broker', '--namesrv-port', '0', '--broker-port', '0', flag, v]);
    t.equal(r.code, 2, `${flag} ${v}`);
    t.match(r.stderr, new RegExp(flag));
  }
});
