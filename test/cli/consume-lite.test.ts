import t from 'tap';
import { brokerOffsets, produce, uniqueName, withBroker } from '../consumer/helpers.js';
import { runCli } from './run-in-process.js';

t.test(
  'consume --mode lite prints up to --limit messages and commits exactly those; the next run starts after them',
  async (t) => {
    const broker = await withBroker();
    t.teardown(() => broker.close());
    const topic = uniqueName('T');
    const group = uniqueName('cg');
    await produce(broker.namesrv, topic, 30, (i) => ({ body: `m${i}` }), { single: true });
    const base = [
      'consume',
      '--mode',
      'lite',
      '--namesrv',
      broker.namesrv,
      '--topic',
      topic,
      '--group',
      group,
      '--from',
      'first',
      '--json',
    ];
    const first = await runCli([...base, '--limit', '20']);
    t.equal(first.code, 0, first.stderr);
    const a = first.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { body: string; queueId: number; queueOffset: number });
    t.equal(a.length, 20, '--limit 20 lines');
    const rows = await brokerOffsets(broker.namesrv, topic, group);
    t.equal(
      rows.reduce((n, r) => n + Math.max(0, r.committed), 0),
      20,
      'the 20 printed are committed, not the rest of the last batch',
    );
    const second = await runCli([...base, '--limit', '10']);
    t.equal(second.code, 0, second.stderr);
    const b = second.stdout
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { body: string }).body);
    t.equal(b.length, 10);
    t.same(new Set([...a.map((m) => m.body), ...b]).size, 30, 'the second run printed the 10 others');
  },
);

t.test('consume --mode: bad values in one line', async (t) => {
  const bad = await runCli(['consume', '--mode', 'pop2', '--namesrv', '127.0.0.1:1', '--topic', 'T', '--group', 'g']);
  t.equal(bad.code, 2);
  t.match(bad.stderr, /--mode must be push, lite or pop, got "pop2"/);
  const orderly = await runCli([
    'consume',
    '--mode',
    'lite',
    '--orderly',
    '--namesrv',
    '127.0.0.1:1',
    '--topic',
    'T',
    '--group',
    'g',
  ]);
  t.equal(orderly.code, 2);
  t.equal(orderly.stderr.trim().split('\n').length, 1);
});
