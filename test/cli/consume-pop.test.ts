import t from 'tap';
import { startBroker } from '../../lib/broker/index.js';
import { produce, uniqueName } from '../consumer/helpers.js';
import { runCli } from './run-in-process.js';

t.test('rocketwire consume --mode pop prints what it pops, acks it, and a second run finds nothing left', async (t) => {
  const b = await startBroker({ queues: 4 });
  t.teardown(() => b.close());
  const topic = uniqueName('CliPop');
  const group = uniqueName('cg');
  await produce(b.namesrv, topic, 5, undefined, { single: true });
  const r = await runCli([
    'consume',
    '--namesrv',
    b.namesrv,
    '--topic',
    topic,
    '--group',
    group,
    '--mode',
    'pop',
    '--from',
    'first',
    '--limit',
    '5',
    '--json',
    '--invisible-ms',
    '5000',
  ]);
  t.equal(r.code, 0, r.stderr);
  const lines = r.stdout
    .trim()
    .split('\n')
    .map(
      (l) => JSON.parse(l) as { topic: string; body: string; brokerName: string; properties: Record<string, string> },
    );
  t.same(lines.map((l) => l.body).sort(), ['message-0', 'message-1', 'message-2', 'message-3', 'message-4']);
  t.ok(
    lines.every((l) => l.topic === topic && l.brokerName === 'broker-a' && l.properties.POP_CK),
    'same JSON as push, plus the receipt handle in properties',
  );
  const text = await runCli([
    'consume',
    '--namesrv',
    b.namesrv,
    '--topic',
    topic,
    '--group',
    group,
    '--mode',
    'pop',
    '--limit',
    '1',
    '--idle-exit',
    '1',
  ]);
  t.equal(text.code, 0);
  t.equal(text.stdout, '', 'everything was acked');
  t.match(text.stderr, /stopped by --idle-exit 1 before --limit 1: 0 messages consumed/);
});

t.test('bad --mode pop usage is one line, exit 2', async (t) => {
  for (const [args, re] of [
    [['--mode', 'pop', '--invisible-ms', '10'], /--invisible-ms must be an integer from 1000/],
    [['--mode', 'pop', '--orderly'], /--mode pop cannot be --orderly/],
    [['--mode', 'pop', '--from', 'timestamp:5'], /--from must be first or last with --mode pop/],
    [['--mode', 'pull-ish'], /--mode must be/],
  ] as const) {
    const r = await runCli(['consume', '--namesrv', '127.0.0.1:1', '--topic', 'T', '--group', 'g', ...args]);
    t.equal(r.code, 2, args.join(' '));
    t.match(r.stderr, re);
    t.equal(r.stderr.trim().split('\n').length, 1, 'one line');
  }
});

t.test(
  'consume --sql and --namespace in --mode pop and --mode lite: only the matches, the topic as named',
  async (t) => {
    const b = await startBroker({ queues: 2, enablePropertyFilter: true });
    t.teardown(() => b.close());
    const topic = uniqueName('CliSql');
    const { Producer } = await import('../../lib/producer/index.js');
    const p = new Producer({ namesrvAddr: b.namesrv, group: uniqueName('pg'), namespace: 'nsCli' });
    await p.start();
    for (let i = 0; i < 10; i++) await p.send({ topic, body: `m${i}`, properties: { a: String(i) } });
    await p.shutdown();
    for (const mode of ['pop', 'lite']) {
      const r = await runCli([
        'consume',
        '--namesrv',
        b.namesrv,
        '--topic',
        topic,
        '--group',
        uniqueName(`cg_${mode}`),
        '--namespace',
        'nsCli',
        '--mode',
        mode,
        '--from',
        'first',
        '--sql',
        'a >= 7',
        '--limit',
        '3',
        '--json',
      ]);
      t.equal(r.code, 0, r.stderr);
      const lines = r.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { topic: string; body: string });
      t.same(lines.map((l) => l.body).sort(), ['m7', 'm8', 'm9'], `--mode ${mode}: the three matches`);
      t.ok(
        lines.every((l) => l.topic === topic),
        `--mode ${mode}: the topic without the namespace`,
      );
    }
  },
);
