// test/fixtures/vectors/sql92-5.3.3.json was written by Apache RocketMQ's own SqlFilter
// (test/interop/vectors/Sql92Vectors.java). Here it is generated again from the broker's jars into
// a temporary folder and must equal the committed file byte for byte, so neither a fixture edited
// by hand nor a case added to sql92-cases.json without re-running the generator goes unnoticed.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { repoRoot, V5_VERSION } from './harness.js';
import { interopReady } from './skip.js';

t.setTimeout(120_000);

if (await interopReady(t, [V5_VERSION])) {
  t.test('sql92 vectors regenerated from SqlFilter equal the committed ones', async (t) => {
    const out = mkdtempSync(join(tmpdir(), 'rocketwire-sql92-'));
    t.teardown(() => rmSync(out, { recursive: true, force: true }));
    const repo = repoRoot();
    const { code, output } = await new Promise<{ code: number | null; output: string }>((done) => {
      const child = spawn('bash', [join(repo, 'test', 'interop', 'vectors', 'generate-sql92.sh'), V5_VERSION], {
        env: { ...process.env, ROCKETWIRE_VECTORS_OUT: out },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let text = '';
      child.stdout.on('data', (d: Buffer) => (text = (text + d.toString()).slice(-4000)));
      child.stderr.on('data', (d: Buffer) => (text = (text + d.toString()).slice(-4000)));
      child.once('close', (c) => done({ code: c, output: text }));
    });
    t.equal(code, 0, `generate-sql92.sh succeeded${code === 0 ? '' : `: ${output}`}`);
    const file = `sql92-${V5_VERSION}.json`;
    t.ok(
      readFileSync(join(repo, 'test', 'fixtures', 'vectors', file)).equals(readFileSync(join(out, file))),
      `${file} is byte-identical to Java's fresh output`,
    );
  });
}
