import t from 'tap';
import { runCliProcess } from '../cli/run-in-process.js';

interface Windows {
  before: { count: number };
  converging: { count: number };
  after: { count: number };
  handled: number;
}

t.test(
  '--latency --join --restart: a member joins, the broker restarts, and no acknowledged message is lost',
  async (t) => {
    const r = await runCliProcess(
      [
        'bench',
        '--latency',
        '--no-java',
        '--max-rate',
        '400',
        '--rates',
        'none',
        '--join',
        '--restart',
        '--join-seconds',
        '3',
        '--restart-seconds',
        '6',
        '--queues',
        '4',
        '--size',
        '128',
        '--json',
      ],
      180_000,
    );
    t.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout) as {
      rows: unknown[];
      joins: Array<{
        joined: string;
        rate: number;
        acked: number;
        movedQueues: number;
        convergedMs: number | null;
        consumers: Record<string, Windows>;
      }>;
      restart: {
        acked: number;
        failed: number;
        restartMs: number;
        consumers: Record<string, { handled: number; lost: number; gapMs: number; all: { count: number } }>;
      };
    };
    t.same(report.rows, [], '--rates none: no rate phases');
    t.equal(report.joins.length, 1, 'without Java only rocketwire’s group is joined');
    const j = report.joins[0]!;
    t.equal(j.joined, 'rocketwire');
    t.equal(j.rate, 200, '--event-rate defaults to 50 % of --max-rate');
    t.ok(j.movedQueues > 0, 'the joining member took queues over');
    t.ok(j.convergedMs !== null, 'and the group converged');
    for (const name of ['rocketwire', 'floor']) {
      const c = j.consumers[name]!;
      t.ok(c.handled >= j.acked, `${name}: every acknowledged message handled (${c.handled} of ${j.acked})`);
      t.equal(
        c.before.count + c.converging.count + c.after.count,
        c.handled,
        `${name}: the windows share the messages`,
      );
    }
    const x = report.restart;
    t.ok(x.acked > 0, 'messages were acknowledged around the restart');
    for (const name of ['rocketwire', 'floor']) {
      const c = x.consumers[name]!;
      t.equal(c.lost, 0, `${name}: nothing acknowledged was lost`);
      t.equal(c.all.count, c.handled);
      t.ok(c.gapMs > 0, `${name}: a gap is reported`);
    }
  },
);
