import t from 'tap';
import { runCliProcess } from './run-in-process.js';

t.test('bench --mode lite consumes with the lite pull consumer and reports the push consumer beside it', async (t) => {
  const r = await runCliProcess(['bench', '--mode', 'lite', '--messages', '2000', '--size', '128', '--queues', '4', '--rounds', '1', '--warmup', '0', '--latency-messages', '0', '--json']);
  t.equal(r.code, 0, r.stderr);
  const report = JSON.parse(r.stdout) as Record<string, unknown>;
  t.equal(report.consumed, 2000, 'the lite pull consumer got every message');
  t.equal(report.duplicates, 0);
  t.ok((report.consumeMsgsPerSec as number) > 0);
  const peers = report.peers as { name: string; received: number; complete: boolean; ratio: number }[];
  t.same(peers.map((p) => p.name), ['push'], 'the push consumer is the in-run comparison');
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
