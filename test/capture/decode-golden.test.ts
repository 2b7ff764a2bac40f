import { readFileSync } from 'node:fs';
import t from 'tap';
import { decodeCli } from './decode-cli.js';
import { fixtureDir, goldenFrames } from './decode-golden-frames.js';

// Messages of every shape (no properties, UNIQ_KEY or not, compressed, batch, transactional, retry,
// IPv6 hosts, magic v2, POP): `decode` prints exactly the bytes the fixture recorded.
const file = new URL('frames.bin', fixtureDir).pathname;

t.test('the golden frames are the fixture shapes', async (t) => {
  t.ok(goldenFrames().equals(readFileSync(file)));
});

for (const [mode, args, golden] of [
  ['--json', ['--json'], 'decode.json.txt'],
  ['table', [], 'decode.table.txt'],
] as const) {
  t.test(`decode ${mode} prints the golden bytes`, async (t) => {
    const r = await decodeCli([file, ...args]);
    t.equal(r.code, 0);
    t.equal(r.stderr, '');
    t.equal(r.stdout.toString('utf8'), readFileSync(new URL(golden, fixtureDir), 'utf8'));
  });
}
