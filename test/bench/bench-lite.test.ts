import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import t from 'tap';
import { runCliProcess } from '../cli/run-in-process.js';

t.test('bench --mode lite consumes with the lite pull consumer and reports the push consumer beside it', async (t) => {
  const r = await runCliProcess([
    'bench',
    '--mode',
    'lite',
    '--messages',
    '2000',
    '--size',
    '128',
    '--queues',
    '4',
    '--rounds',
    '1',
    '--warmup',
    '0',
    '--latency-messages',
    '0',
    '--json',
  ]);
  t.equal(r.code, 0, r.stderr);
  const report = JSON.parse(r.stdout) as Record<string, unknown>;
  t.equal(report.consumed, 2000, 'the lite pull consumer got every message');
  t.equal(report.duplicates, 0);
  t.ok((report.consumeMsgsPerSec as number) > 0);
  const peers = report.peers as { name: string; received: number; complete: boolean; ratio: number }[];
  t.same(
    peers.map((p) => p.name),
    ['push'],
    'the push consumer is the in-run comparison',
  );
  t.equal(peers[0]!.received, 2000);
  t.ok(peers[0]!.complete && peers[0]!.ratio > 0, 'reported as a ratio');
});

t.test('bench --mode: bad values in one line', async (t) => {
  const bad = await runCliProcess(['bench', '--mode', 'pull']);
  t.equal(bad.code, 2);
  t.equal(bad.stderr.trim().split('\n').length, 1);
  t.match(bad.stderr, /--mode must be push, lite or pop, got "pull"/);
  const group = await runCliProcess(['bench', '--mode', 'lite', '--consumers', '2']);
  t.equal(group.code, 2);
  t.match(group.stderr, /--mode lite runs one consumer per client/);
});

t.test(
  "bench --vs lite,pop: rocketwire's other consume modes as peers of the push rounds; under --mode pop the push peer pushes",
  async (t) => {
    const common = [
      '--messages',
      '1000',
      '--size',
      '128',
      '--queues',
      '2',
      '--rounds',
      '1',
      '--warmup',
      '0',
      '--latency-messages',
      '0',
      '--json',
    ];
    const r = await runCliProcess(['bench', ...common, '--vs', 'lite,pop']);
    t.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout) as {
      consumed: number;
      peers: { name: string; received: number; complete: boolean; ratio: number }[];
    };
    t.equal(report.consumed, 1000, 'the push rounds got every message');
    t.same(
      report.peers.map((p) => p.name),
      ['lite', 'pop'],
    );
    for (const p of report.peers)
      t.ok(p.received === 1000 && p.complete && p.ratio > 0, `${p.name} got every message, reported as a ratio`);

    const chart = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'rw-bench-modes-')), 'c.svg');
    t.teardown(() => fs.rmSync(path.dirname(chart), { recursive: true, force: true }));
    const p = await runCliProcess(['bench', ...common, '--mode', 'pop', '--vs', 'push', '--chart', chart]);
    t.equal(p.code, 0, p.stderr);
    const svg = fs.readFileSync(chart, 'utf8');
    t.match(svg, /consume \(rocketwire\) \[pop\]/, 'the rocketwire rounds popped');
    t.match(svg, /consume \(rocketwire push\)/, 'the push peer is in the chart');
    t.notMatch(svg, /consume \(rocketwire push\) \[pop\]/, 'and it pushed rather than popped');
  },
);
