// The golden vectors under test/fixtures/vectors/ were written by Apache RocketMQ's own classes
// (test/interop/vectors/VectorGen.java). Here they are generated again from the 4.9.8, 5.3.3 and 5.5.0
// jars into a temporary folder and must equal the committed files byte for byte, so a fixture
// edited by hand, or a generator change not re-run, cannot go unnoticed.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { interopReady } from './skip.js';

t.setTimeout(15 * 60_000);

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const committed = join(repo, 'test', 'fixtures', 'vectors');
const versions = ['4.9.8', '5.3.3', '5.5.0'];

// The generator fetches its own jar set (remoting/common/client/broker of each version) with Maven once.
const cache = process.env.ROCKETWIRE_CACHE ?? join(homedir(), '.cache', 'rocketwire');
const jarsMissing = versions.some((v) => !existsSync(join(cache, `vectors-${v}`, 'lib', '.complete')));
const noMaven = jarsMissing && spawnSync('mvn', ['-v'], { stdio: 'ignore' }).status !== 0;

if (noMaven && process.env.ROCKETWIRE_REQUIRE_JAVA !== '1') {
  t.comment('skipping the vector regeneration: mvn not found (needed once to fetch the RocketMQ jars)');
} else if (await interopReady(t, [])) {
  t.test('vectors regenerated from the Java classes equal the committed ones', async (t) => {
    const out = mkdtempSync(join(tmpdir(), 'rocketwire-vectors-'));
    t.teardown(() => rmSync(out, { recursive: true, force: true }));
    const { code, output } = await new Promise<{ code: number | null; output: string }>((done) => {
      const child = spawn('bash', [join(repo, 'test', 'interop', 'vectors', 'generate.sh'), ...versions], {
        env: { ...process.env, ROCKETWIRE_VECTORS_OUT: out },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let text = '';
      child.stdout.on('data', (d: Buffer) => (text = (text + d.toString()).slice(-4000)));
      child.stderr.on('data', (d: Buffer) => (text = (text + d.toString()).slice(-4000)));
      child.once('close', (c) => done({ code: c, output: text }));
    });
    t.equal(code, 0, `generate.sh succeeded${code === 0 ? '' : `: ${output}`}`);
    for (const v of versions) {
      const ours = readdirSync(join(committed, v))
        .filter((f) => f.endsWith('.json'))
        .sort();
      const fresh = readdirSync(join(out, v))
        .filter((f) => f.endsWith('.json'))
        .sort();
      t.same(fresh, ours, `${v}: the generator writes the same set of files`);
      for (const f of ours) {
        const a = readFileSync(join(committed, v, f));
        const b = readFileSync(join(out, v, f));
        t.ok(a.equals(b), `${v}/${f} is byte-identical to Java's fresh output`);
      }
    }
  });
}
