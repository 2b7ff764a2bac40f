import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import t from 'tap';

const helper = pathToFileURL(
  path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bench/harness/exit-flushed.js'),
).href;

// What the parent of a bench child receives of a 2 MB line written just before the child ends.
function received(exit: 'helper' | 'plain'): Promise<{ bytes: number; code: number | null }> {
  const end = exit === 'helper' ? 'm.exitAfterStdout(3)' : 'process.exit(3)';
  const script = `import(${JSON.stringify(helper)}).then((m) => { process.stdout.write('x'.repeat(2_000_000) + '\\n'); ${end}; });`;
  return new Promise((resolve) => {
    const c = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let bytes = 0;
    c.stdout.on('data', (d: Buffer) => (bytes += d.length));
    c.on('close', (code) => resolve({ bytes, code }));
  });
}

t.test('a bench child that ends with exitAfterStdout has its whole last line read by the parent', async (t) => {
  const r = await received('helper');
  t.equal(r.bytes, 2_000_001, 'every byte of the 2 MB line');
  t.equal(r.code, 3, 'with the exit code asked for');
  // What the group consumer did before: process.exit right after the write loses what the pipe had not taken.
  const plain = await received('plain');
  t.ok(plain.bytes < 2_000_001, `process.exit after the write drops bytes (${plain.bytes} of 2 000 001 arrived)`);
});
