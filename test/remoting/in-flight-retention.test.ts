import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const CHILD = path.join(path.dirname(fileURLToPath(import.meta.url)), 'in-flight-retention-child.js');

// A Map whose entries come and go rebuilds its hash table every few calls, and V8 links each retired
// table to the next: once one table is old, every later one and the calls it held were promoted with
// it (about 2 MB for these 40 000 calls), and a consumer ran a mark-compact every second or two at a
// steady rate after its connections had sat idle under flow control.
t.test(
  'answered calls do not outlive their turn once the in-flight table has aged into the old generation',
  async (t) => {
    const r = spawnSync(process.execPath, ['--expose-gc', CHILD], { encoding: 'utf8' });
    t.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { grewBytes: number; markCompacts: number; calls: number };
    t.equal(out.markCompacts, 0, 'no mark-compact ran meanwhile, so the growth is what was promoted');
    t.ok(
      out.grewBytes < 512 * 1024,
      `the old generation grew ${(out.grewBytes / 1024).toFixed(0)} KiB over ${out.calls} calls`,
    );
  },
);
