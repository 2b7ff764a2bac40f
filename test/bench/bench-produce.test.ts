import t from 'tap';
import { runCli, runCliProcess } from '../cli/run-in-process.js';
import type { ProduceReport } from '../../bench/harness/produce-vs.js';

// What --json prints: the report type itself, so the test reads the fields the CLI writes.
type Report = ProduceReport;

t.test('bench --produce-vs: bad peers, modes and consumer options are one line naming them', async (t) => {
  const cases: [string[], RegExp][] = [
    [['--produce-vs', 'java,kafka'], /--produce-vs takes java, ali-ons, floor \(comma-separated\), got "kafka"/],
    [['--produce-vs', ''], /--produce-vs takes java, ali-ons, floor/],
    [
      ['--produce-vs', 'ali-ons', '--produce-modes', 'sync-4,burst-8'],
      /--produce-modes takes sync-N, async-N and batch-N .*got "burst-8"/,
    ],
    [['--produce-vs', 'ali-ons', '--produce-modes', 'async-0'], /got "async-0"/],
    [['--produce-vs', 'ali-ons', '--produce-modes', 'batch-2000'], /got "batch-2000"/],
    [['--produce-modes', 'sync-1'], /--produce-modes goes with --produce-vs/],
    [['--produce-vs', 'java', '--vs', 'java'], /--vs belongs to the consumer bench, not to --produce-vs/],
    [['--produce-vs', 'java', '--batch', '32'], /--batch belongs to the consumer bench/],
  ];
  for (const [args, re] of cases) {
    const r = await runCli(['bench', ...args]);
    t.equal(r.code, 2, args.join(' '));
    t.equal(r.stderr.trim().split('\n').length, 1, `${args.join(' ')}: one line`);
    t.match(r.stderr, re, args.join(' '));
    t.equal(r.stdout, '', 'nothing ran');
  }
});

t.test(
  'bench --produce-vs ali-ons against the embedded broker: every mode, ali-ons sits out the batches',
  async (t) => {
    const r = await runCliProcess([
      'bench',
      '--produce-vs',
      'ali-ons',
      '--produce-modes',
      'sync-2,async-8,batch-4',
      '--messages',
      '200',
      '--size',
      '64',
      '--queues',
      '2',
      '--rounds',
      '2',
      '--warmup',
      '0',
      '--json',
    ]);
    t.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout) as Report;
    t.equal(report.kind, 'produce-vs');
    t.equal(report.rounds, 2);
    t.same(Object.keys(report.topics), ['rocketwire', 'ali-ons']);
    t.not(report.topics.rocketwire, report.topics['ali-ons'], 'each producer has a topic of its own');
    t.same(
      report.modes.map((m) => [m.mode, m.kind, m.inFlight, m.batch]),
      [
        ['sync-2', 'sync', 2, 1],
        ['async-8', 'async', 8, 1],
        ['batch-4', 'batch', 4, 4],
      ],
    );
    for (const m of report.modes) {
      const names = m.producers.map((p) => p.name);
      t.same(names, m.kind === 'batch' ? ['rocketwire'] : ['rocketwire', 'ali-ons'], m.mode);
      for (const p of m.producers) {
        t.equal(p.acked, 200, `${m.mode} ${p.name}: every send acknowledged`);
        t.equal(p.failed, 0);
        t.equal(p.lost, 0, `${m.mode} ${p.name}: every acknowledged message is in the topic`);
        t.equal(p.msgsPerSecRounds.length, 2, `${m.mode} ${p.name}: one figure per round`);
        t.ok(p.msgsPerSec > 0 && p.cpuUsPerMsg > 0, `${m.mode} ${p.name}: rate and CPU measured`);
      }
      if (m.kind === 'batch') t.equal(m.ratios['ali-ons'], null, 'no batch send in ali-ons');
      else t.ok(m.ratios['ali-ons']! > 0, `${m.mode}: rocketwire ÷ ali-ons`);
    }

    const text = await runCliProcess([
      'bench',
      '--produce-vs',
      'ali-ons',
      '--produce-modes',
      'batch-8,sync-1',
      '--messages',
      '50',
      '--size',
      '64',
      '--queues',
      '1',
      '--rounds',
      '1',
      '--warmup',
      '0',
    ]);
    t.equal(text.code, 0, text.stderr);
    t.match(
      text.stdout,
      /mode\s+in flight\s+rocketwire msgs\/s\s+rounds\s+ali-ons msgs\/s\s+rounds\s+rocketwire ÷ ali-ons/,
    );
    t.match(text.stdout, /batch-8\s+4 × 8\s+[\d,]+\s+[\d,]+\s+n\/a\s+n\/a/);
    t.match(text.stdout, /sync-1\s+1\s+[\d,]+\s+[\d,]+\s+[\d,]+\s+[\d,]+\s+\d+\.\d\d/);
  },
);

t.test(
  'bench --produce-vs floor: the bare client sends the same messages in every mode, batches included',
  async (t) => {
    const r = await runCliProcess([
      'bench',
      '--produce-vs',
      'floor',
      '--produce-modes',
      'sync-2,async-8,batch-4',
      '--messages',
      '200',
      '--size',
      '64',
      '--queues',
      '2',
      '--rounds',
      '1',
      '--warmup',
      '0',
      '--json',
    ]);
    t.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout) as Report;
    t.same(Object.keys(report.topics), ['rocketwire', 'floor']);
    for (const m of report.modes) {
      t.same(
        m.producers.map((p) => p.name),
        ['rocketwire', 'floor'],
        m.mode,
      );
      const floor = m.producers.find((p) => p.name === 'floor')!;
      t.equal(floor.acked, 200, `${m.mode}: every floor send acknowledged`);
      t.equal(floor.failed, 0);
      t.equal(floor.lost, 0, `${m.mode}: every message the floor sent is in its topic`);
      t.ok(m.ratios.floor! > 0, `${m.mode}: rocketwire ÷ floor`);
    }
  },
);
