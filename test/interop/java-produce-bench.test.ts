// `rocketwire bench --produce-vs java`: test/interop/java/ProduceBench.java against the embedded
// broker in each kind of mode, with a tiny count and no warm-up (the figures are not checked, only
// the plumbing; the warm-up is the same loop as the measured sends).
import t from 'tap';
import { runCliProcess } from '../cli/run-in-process.js';
import { V5_VERSION } from './harness.js';
import { interopReady } from './skip.js';

t.setTimeout(120_000);

if (await interopReady(t, [V5_VERSION])) {
  t.test('ProduceBench sends and reports in sync, async and batch modes', async (t) => {
    const r = await runCliProcess(
      [
        'bench',
        '--produce-vs',
        'java',
        '--produce-modes',
        'sync-2,async-8,batch-8',
        '--messages',
        '300',
        '--size',
        '64',
        '--queues',
        '2',
        '--rounds',
        '1',
        '--warmup',
        '0',
        '--json',
      ],
      110_000,
    );
    t.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout) as {
      warmup: number;
      modes: {
        mode: string;
        producers: { name: string; acked: number; failed: number; lost: number; msgsPerSec: number }[];
        ratios: Record<string, number | null>;
      }[];
    };
    t.equal(report.warmup, 0);
    for (const m of report.modes) {
      const java = m.producers.find((p) => p.name === 'java')!;
      t.ok(java, m.mode);
      t.equal(java.acked, 300, `${m.mode}: every measured send acknowledged`);
      t.equal(java.failed, 0);
      t.equal(java.lost, 0, `${m.mode}: every acknowledged message is in the topic`);
      t.ok(java.msgsPerSec > 0 && m.ratios.java! > 0, `${m.mode}: a rate and a ratio`);
    }
  });
}
