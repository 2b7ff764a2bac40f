// The bench scripts run as `node dist/bench/...` (and `npm run bench:real`): an option they do not
// know gets one line naming the script and exit code 2, as the rocketwire command answers, not a
// stack trace out of node:util's parseArgs.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const script = (rel: string): string => fileURLToPath(new URL(`../../bench/${rel}`, import.meta.url));

for (const [rel, name] of [
  ['e2e/real-broker.js', 'real-broker'],
  ['e2e/produce-vs.js', 'produce-vs'],
  ['e2e/members-real.js', 'members-real'],
  ['harness/heartbeat-bytes.js', 'heartbeat-bytes'],
] as const) {
  t.test(`${rel}: an unknown option is one line and exit code 2`, async (t) => {
    const r = spawnSync(process.execPath, [script(rel), '--no-such-option'], { encoding: 'utf8', timeout: 60_000 });
    t.equal(r.status, 2, 'exit code 2');
    const lines = r.stderr.trim().split('\n');
    t.equal(lines.length, 1, `one line: ${r.stderr}`);
    t.match(lines[0], new RegExp(`^${name}: Unknown option '--no-such-option'`));
    t.equal(r.stdout, '', 'nothing on stdout');
  });
}
