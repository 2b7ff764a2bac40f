import t from 'tap';
import { parseOptions } from '../../lib/cli/common.js';
import { uniqueName, withBroker } from '../consumer/helpers.js';
import { runCli } from './run-in-process.js';

t.test('-n, -t, -g and -c are --namesrv, --topic, --group and --count', async (t) => {
  const broker = await withBroker();
  t.teardown(() => broker.close());
  const topic = uniqueName('T');
  const group = uniqueName('cg');
  const sent = await runCli([
    'produce',
    '-n',
    broker.namesrv,
    '-t',
    topic,
    '-c',
    '3',
    '-g',
    uniqueName('pg'),
    '--json',
  ]);
  t.equal(sent.code, 0, sent.stderr);
  t.match(JSON.parse(sent.stdout), { topic, sent: 3 });
  const consumed = await runCli([
    'consume',
    '-n',
    broker.namesrv,
    '-t',
    topic,
    '-g',
    group,
    '--from',
    'first',
    '--limit',
    '3',
    '--json',
  ]);
  t.equal(consumed.code, 0, consumed.stderr);
  t.equal(consumed.stdout.trim().split('\n').length, 3);
  const offsets = await runCli(['offsets', `-n${broker.namesrv}`, '-t', topic, '-g', group, '--json']);
  t.equal(offsets.code, 0, offsets.stderr);
  t.equal(
    (JSON.parse(offsets.stdout) as { committed: number }[]).reduce((n, r) => n + Math.max(0, r.committed), 0),
    3,
  );
  const route = await runCli(['admin', 'topic', 'route', '-n', broker.namesrv, '-t', topic, '--json']);
  t.equal(route.code, 0, route.stderr);
});

t.test('a short flag takes a negative number to its range check, as the long one does', async (t) => {
  const r = await runCli(['produce', '-n', '127.0.0.1:1', '-t', 'T', '-c', '-1']);
  t.equal(r.code, 2);
  t.equal(r.stderr, 'rocketwire produce: --count must be an integer of at least 1, got -1\n');
});

t.test('short flags only where the long option exists; unknown ones are one line', async (t) => {
  t.same(parseOptions(['-t', 'x', '-c', '2'], { topic: { type: 'string' }, count: { type: 'string' } }).values, {
    topic: 'x',
    count: '2',
  });
  t.throws(() => parseOptions(['-c', '2'], { topic: { type: 'string' } }), {
    message: 'unknown option -c (--help lists the options)',
  });
  const decode = await runCli(['decode', '-t', 'x', 'f']);
  t.equal(decode.code, 2);
  t.equal(decode.stderr, 'rocketwire decode: unknown option -t (--help lists the options)\n');
});

t.test('the help of each command shows the short flags', async (t) => {
  for (const [cmd, flags] of [
    ['produce', ['-n', '-t', '-c', '-g']],
    ['consume', ['-n', '-t', '-g']],
    ['request', ['-n', '-t', '-c', '-g']],
    ['offsets', ['-n', '-t', '-g']],
  ] as const) {
    const r = await runCli([cmd, '--help']);
    t.equal(r.code, 0);
    for (const f of flags) t.match(r.stdout, new RegExp(`^  ${f}, --`, 'm'), `${cmd} --help shows ${f}`);
    t.match(r.stdout, /\$NAMESRV_ADDR/);
  }
  const admin = await runCli(['admin', '--help']);
  t.match(admin.stdout, /-n, -t, -g and -c are short for --namesrv, --topic, --group and --count/);
});
