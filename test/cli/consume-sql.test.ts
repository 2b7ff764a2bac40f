import t from 'tap';
import { produce, uniqueName, withBroker } from '../consumer/helpers.js';
import { runCli } from './run-in-process.js';

// rocketwire consume --sql EXPR: the SQL92 subscription of the consumer, its errors one line each.

t.test('consume --sql prints only the messages whose properties match', async (t) => {
  const broker = await withBroker({ enablePropertyFilter: true, queues: 1 });
  t.teardown(() => broker.close());
  const topic = uniqueName('SqlCli');
  await produce(broker.namesrv, topic, 100, (i) => ({ properties: { a: String(i) } }));
  const r = await runCli([
    'consume',
    '--namesrv',
    broker.namesrv,
    '--topic',
    topic,
    '--group',
    uniqueName('g'),
    '--sql',
    'a BETWEEN 10 AND 19',
    '--from',
    'first',
    '--limit',
    '10',
    '--json',
  ]);
  t.equal(r.code, 0, r.stderr);
  const a = r.stdout
    .trim()
    .split('\n')
    .map((l) => Number((JSON.parse(l) as { properties: Record<string, string> }).properties.a));
  t.same(
    a.sort((x, y) => x - y),
    [10, 11, 12, 13, 14, 15, 16, 17, 18, 19],
  );
});

t.test('a broker without enablePropertyFilter: one line saying so, exit 1', async (t) => {
  const broker = await withBroker();
  t.teardown(() => broker.close());
  const topic = uniqueName('SqlCli');
  await produce(broker.namesrv, topic, 1);
  const r = await runCli([
    'consume',
    '--namesrv',
    broker.namesrv,
    '--topic',
    topic,
    '--group',
    uniqueName('g'),
    '--sql',
    'a = 1',
    '--limit',
    '1',
  ]);
  t.equal(r.code, 1);
  t.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  t.match(
    r.stderr,
    /refuses the SQL92 subscription of topic .*does not support consumer to filter message by SQL92 \(start the broker with enablePropertyFilter=true\)/,
  );
  t.notMatch(r.stderr, /\n\s+at /, 'no stack trace');
});

t.test('bad --sql usage is refused before anything is sent', async (t) => {
  const base = ['consume', '--namesrv', '127.0.0.1:1', '--topic', 'T', '--group', 'g'];
  const bad = await runCli([...base, '--sql', "a = 5 AND b == 'x'"]);
  t.equal(bad.code, 2);
  t.match(bad.stderr, /consumer option "sql".*position 13 \(line 1, column 14\)/);
  t.equal(bad.stderr.trim().split('\n').length, 1);
  const both = await runCli([...base, '--sql', 'a = 1', '--expr', 'TagA']);
  t.equal(both.code, 2);
  t.match(both.stderr, /--sql and --expr exclude each other/);
  const empty = await runCli([...base, '--sql', ' ']);
  t.equal(empty.code, 2);
  t.match(empty.stderr, /--sql must not be empty/);
});
