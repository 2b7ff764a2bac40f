import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import t from 'tap';
import { runCliProcess } from '../cli/run-in-process.js';

const run = runCliProcess;

t.test('bench against the embedded broker consumes every produced message once and reports the figures', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rw-bench-test-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const chart = path.join(dir, 'chart.svg');
  const r = await run([
    'bench',
    '--messages',
    '3000',
    '--size',
    '256',
    '--queues',
    '4',
    '--rounds',
    '2',
    '--latency-messages',
    '50',
    '--vs',
    'raw-pull,decode-pull',
    '--json',
    '--chart',
    chart,
  ]);
  t.equal(r.code, 0, r.stderr);
  const report = JSON.parse(r.stdout) as Record<string, unknown>;
  t.equal(report.produced, 3000);
  t.equal(report.consumed, 3000);
  t.equal(report.duplicates, 0);
  t.equal(report.rounds, 2);
  t.equal((report.consumeMsgsPerSecRounds as number[]).length, 2);
  for (const key of ['produceMsgsPerSec', 'consumeMsgsPerSec', 'p50LatencyMs', 'p99LatencyMs', 'peakRssMb']) {
    t.type(report[key], 'number', key);
    t.ok((report[key] as number) >= 0, `${key} is not negative`);
  }
  t.ok((report.consumeMsgsPerSec as number) > 0, 'consumption was measured');
  t.equal(report.latencySamples, 50, 'every live message was timed');
  t.ok((report.peakRssMb as number) > 10, 'the RSS is the process size in MB');
  const gc = report.consumeGc as { minor: number; major: number; ms: number };
  for (const k of ['minor', 'major', 'ms'] as const)
    t.ok(Number.isFinite(gc[k]) && gc[k] >= 0, `consumeGc.${k} is reported`);
  const peers = report.peers as {
    name: string;
    received: number;
    complete: boolean;
    msgsPerSecRounds: number[];
    ratio: number;
  }[];
  t.same(
    peers.map((p) => p.name),
    ['raw-pull', 'decode-pull'],
  );
  for (const p of peers) {
    t.equal(p.received, 3000, `${p.name} got every record of every queue`);
    t.ok(p.complete, p.name);
    t.equal(p.msgsPerSecRounds.length, 2, p.name);
    t.ok(p.ratio > 0, `rocketwire is reported as a fraction of the ${p.name} floor`);
  }
  const svg = fs.readFileSync(chart, 'utf8');
  t.match(svg, /^<svg /);
  t.match(svg, /consume \(rocketwire\) \(2 rounds\)/);
  t.match(svg, /produce/);
});

t.test(
  "bench --handler-ms --consume-threads --compress off: Little's law figures, RSS by tenths, uncompressed large bodies",
  async (t) => {
    const r = await run([
      'bench',
      '--messages',
      '400',
      '--size',
      '8192',
      '--queues',
      '2',
      '--rounds',
      '1',
      '--warmup',
      '0',
      '--latency-messages',
      '0',
      '--handler-ms',
      '5',
      '--consume-threads',
      '4',
      '--consume-batch',
      '2',
      '--compress',
      'off',
      '--json',
    ]);
    t.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout) as {
      consumed: number;
      compress: boolean;
      handler: Record<string, number>;
      rssMbByTenthRounds: number[][];
    };
    t.equal(report.consumed, 400);
    t.equal(report.compress, false);
    t.match(report.handler, { ms: 5, threads: 4, messagesPerCall: 2, ceilingMsgsPerSec: 1600 });
    t.ok(report.handler.meanWaitMs! >= 2.5, `the waits were timed: ${report.handler.meanWaitMs} ms`);
    t.ok(report.handler.ofCeiling! > 0, 'the rate is given as a share of the ceiling');
    t.equal(report.rssMbByTenthRounds.length, 1, 'one round');
    t.ok(
      report.rssMbByTenthRounds[0]!.length >= 1 && report.rssMbByTenthRounds[0]!.every((mb) => mb === 0 || mb > 10),
      'RSS in MB per tenth of the run',
    );
    const bad = await run(['bench', '--compress', 'maybe']);
    t.equal(bad.code, 2);
    t.match(bad.stderr, /^rocketwire bench: --compress must be on or off, got "maybe"\n$/);
  },
);

t.test('bench reports bad options and unreachable name servers in one line', async (t) => {
  const bad = await run(['bench', '--vs', 'kafka']);
  t.equal(bad.code, 2);
  t.equal(bad.stderr.trim().split('\n').length, 1);
  t.match(
    bad.stderr,
    /--vs takes (?=.*\bjava\b)(?=.*ali-ons)(?=.*raw-pull)(?=.*decode-pull)(?=.*java-pop)(?=.*java-lite).* \(comma-separated\), got "kafka"/,
  );

  const refused = await run(['bench', '--namesrv', '127.0.0.1:1', '--messages', '10', '--stall-timeout', '5'], 60_000);
  t.not(refused.code, 0);
  const lines = refused.stderr
    .trim()
    .split('\n')
    .filter((l) => !/Warning|trace-warnings/.test(l));
  t.equal(lines.length, 1, refused.stderr);
  t.match(lines[0], /127\.0\.0\.1:1/);
  t.notMatch(refused.stderr, /\n\s+at /, 'no stack trace');
});
