import t from 'tap';
import { runCliProcess } from '../cli/run-in-process.js';
import { settled } from '../../bench/harness/group.js';

const run = runCliProcess;

t.test(
  'bench --consumers 2: two processes in one group split the queues and together consume every message',
  async (t) => {
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
      '--consumers',
      '2',
      '--latency-messages',
      '0',
      '--json',
    ]);
    t.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout) as Record<string, unknown>;
    t.equal(report.consumers, 2);
    t.equal(report.produced, 3000);
    t.equal(report.consumed, 3000, 'every produced message was handled by one of the processes');
    t.ok((report.consumeMsgsPerSec as number) > 0, 'consumption was measured');
    const rounds = report.groupRounds as {
      name: string;
      round: number;
      unique: number;
      duplicates: number;
      perProcess: number[];
    }[];
    t.same(
      rounds.map((g) => [g.name, g.round]),
      [
        ['rocketwire', 1],
        ['rocketwire', 2],
      ],
    );
    for (const g of rounds) {
      t.equal(g.perProcess.length, 2, `round ${g.round}: two processes`);
      t.ok(
        g.perProcess.every((n) => n > 0),
        `round ${g.round}: both processes consumed (${g.perProcess.join(' + ')})`,
      );
      t.equal(g.unique, 3000, `round ${g.round}: nothing lost`);
      t.equal(
        g.perProcess[0]! + g.perProcess[1]!,
        3000 + g.duplicates,
        `round ${g.round}: the processes' deliveries are the messages plus the duplicates`,
      );
    }
  },
);

t.test(
  'bench --consumer-process: rocketwire consumes in a process of its own and its RSS is reported per tenth',
  async (t) => {
    const r = await run([
      'bench',
      '--messages',
      '4000',
      '--size',
      '256',
      '--queues',
      '4',
      '--rounds',
      '1',
      '--warmup',
      '0',
      '--consumer-process',
      '--latency-messages',
      '0',
      '--json',
    ]);
    t.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout) as {
      consumers: number;
      consumed: number;
      peakRssMb: number;
      rssMbByTenthRounds: number[][];
      groupRounds: { perProcess: number[] }[];
    };
    t.equal(report.consumers, 1);
    t.equal(report.consumed, 4000);
    t.same(
      report.groupRounds.map((g) => g.perProcess.length),
      [1],
      'one process',
    );
    t.equal(report.rssMbByTenthRounds.length, 1);
    const tenths = report.rssMbByTenthRounds[0]!;
    t.equal(tenths.length, 10);
    t.ok(
      tenths.every((mb) => mb === 0 || mb > 10),
      `MB, or 0 for a tenth no sample fell in: ${tenths.join(' ')}`,
    );
    t.ok(
      tenths.some((mb) => mb > 10),
      'the child was sampled',
    );
    t.ok(report.peakRssMb >= Math.max(...tenths) - 1, "the peak is the child's VmHWM, at least what was sampled");
    const lite = await run(['bench', '--consumer-process', '--mode', 'lite']);
    t.equal(lite.code, 2);
    t.match(lite.stderr, /--consumer-process runs the push consumer, not --mode lite/);
  },
);

t.test('bench --consumer-process honours --consume-threads and --handler-ms in the consumer process', async (t) => {
  // 3 calls at once, each waiting 20 ms: at most ~150 messages a second (the process used 64 calls
  // at once whatever --consume-threads said, and handled the 60 messages in one wave).
  const r = await run([
    'bench',
    '--messages',
    '60',
    '--size',
    '64',
    '--queues',
    '2',
    '--rounds',
    '1',
    '--warmup',
    '0',
    '--consumer-process',
    '--consume-threads',
    '3',
    '--handler-ms',
    '20',
    '--latency-messages',
    '0',
    '--json',
  ]);
  t.equal(r.code, 0, r.stderr);
  const report = JSON.parse(r.stdout) as { consumed: number; consumeMsgsPerSec: number };
  t.equal(report.consumed, 60);
  t.ok(report.consumeMsgsPerSec < 200, `${Math.round(report.consumeMsgsPerSec)} msgs/s with 3 calls of 20 ms at once`);
});

t.test('bench --consumers with a peer that cannot run as a group is a usage error in one line', async (t) => {
  const bad = await run(['bench', '--consumers', '2', '--vs', 'raw-pull']);
  t.equal(bad.code, 2);
  t.equal(bad.stderr.trim().split('\n').length, 1);
  t.match(bad.stderr, /--consumers 2 runs rocketwire and --vs java only, not raw-pull/);
  const zero = await run(['bench', '--consumers', '0']);
  t.equal(zero.code, 2);
  t.match(zero.stderr, /--consumers/);
});

t.test('a group has settled when every process holds its share and every queue is held once', async (t) => {
  const all = ['a:0', 'a:1', 'b:0', 'b:1', 'b:2'];
  t.ok(
    settled(
      [
        ['a:0', 'a:1'],
        ['b:0', 'b:1', 'b:2'],
      ],
      all,
    ),
  );
  t.notOk(settled([['a:0', 'a:1'], null], all), 'a process has not reported yet');
  t.notOk(settled([all, []], all), 'the first process still holds everything');
  t.notOk(
    settled(
      [
        ['a:0', 'a:1', 'b:0'],
        ['b:0', 'b:1', 'b:2'],
      ],
      all,
    ),
    'a queue is held twice while one process gives it up',
  );
  t.notOk(
    settled(
      [
        ['a:0', 'a:1'],
        ['b:0', 'b:1'],
      ],
      all,
    ),
    'a queue is held by nobody',
  );
  t.ok(settled([['a:0'], ['a:1'], ['b:0'], ['b:1'], ['b:2'], []], all), 'more processes than queues: some hold none');
});
