import t from 'tap';
import { runCliProcess } from '../cli/run-in-process.js';

t.test('rocketwire bench --mode pop consumes every message with the POP consumer', async (t) => {
  const r = await runCliProcess([
    'bench',
    '--messages',
    '300',
    '--size',
    '64',
    '--rounds',
    '1',
    '--warmup',
    '0',
    '--latency-messages',
    '0',
    '--mode',
    'pop',
    '--json',
  ]);
  t.equal(r.code, 0, r.stderr);
  const report = JSON.parse(r.stdout) as { consumed: number; duplicates: number; produced: number; pulls: number };
  t.equal(report.produced, 300);
  t.equal(report.consumed, 300, 'all consumed');
  t.equal(report.duplicates, 0);
  t.ok(report.pulls > 0, 'POP requests counted');
});

t.test('bench --mode takes push or pop', async (t) => {
  const r = await runCliProcess(['bench', '--mode', 'sideways']);
  t.equal(r.code, 2);
  t.match(r.stderr, /--mode must be push, lite or pop/);
});
