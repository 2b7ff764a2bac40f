// The README's first program, run as a user would run it: extracted from README.md (the ```js block
// under the `<!-- readme-program -->` marker, which must be the first code block after "Install"),
// written to a .mjs file inside the package (so that `import 'rocketwire'` resolves to dist/ by
// self-reference), and run with `node` against an embedded broker, with NAMESRV_ADDR pointing at it.
// It must print what it sent and received, print nothing on stderr, and exit 0 by itself: the README
// cannot drift from the API.
import * as fs from 'node:fs';
import * as path from 'node:path';
import t from 'tap';
import { startBroker } from '../../lib/broker/index.js';
import { repoRoot } from '../api/api-report.js';
import { runNode } from '../examples/run-node.js';

const root = repoRoot();
const MARKER = '<!-- readme-program';
/** Only a safety net for a program that hangs (it is then reported as killed). */
const KILL_AFTER_MS = 60_000;

export interface ReadmeProgram {
  lang: 'js' | 'ts';
  code: string;
}

/**
 * The code block right after the `<!-- readme-program … -->` marker. Throws, saying what is wrong,
 * when the marker is missing or repeated, when no ```js / ```ts block follows it, or when another
 * js/ts block comes before it after the Install heading (the first program must be the first one
 * a reader meets).
 */
export function readmeProgram(readme: string): ReadmeProgram {
  const lines = readme.split('\n');
  const markers = lines.flatMap((l, i) => (l.trim().startsWith(MARKER) ? [i] : []));
  if (markers.length !== 1) throw new Error(`README.md has ${markers.length} "${MARKER}" markers, expected 1`);
  const at = markers[0]!;
  const install = lines.findIndex((l) => /^##\s+Install\b/.test(l));
  if (install < 0) throw new Error('README.md has no "## Install" heading');
  if (install > at) throw new Error('the readme-program marker comes before the "## Install" heading');
  const fence = /^```(js|ts|javascript|typescript)\s*$/;
  const earlier = lines.slice(install, at).findIndex((l) => fence.test(l.trim()));
  if (earlier >= 0) throw new Error(`a js/ts block at line ${install + earlier + 1} comes before the readme-program marker`);
  let open = at + 1;
  while (open < lines.length && lines[open]!.trim() === '') open++;
  const m = fence.exec(lines[open]?.trim() ?? '');
  if (!m) throw new Error(`the line after the readme-program marker is not a \`\`\`js or \`\`\`ts fence: "${lines[open] ?? ''}"`);
  const close = lines.findIndex((l, i) => i > open && l.trim() === '```');
  if (close < 0) throw new Error('the readme-program block is not closed');
  return { lang: m[1]!.startsWith('t') ? 'ts' : 'js', code: lines.slice(open + 1, close).join('\n') + '\n' };
}

t.test('readmeProgram finds the marked block and refuses a README that hides it', async (t) => {
  const ok = '# x\n\n## Install\n\n```sh\nnpm i\n```\n\n<!-- readme-program -->\n```js\nconsole.log(1);\n```\n\n```js\nlater();\n```\n';
  t.same(readmeProgram(ok), { lang: 'js', code: 'console.log(1);\n' });
  t.throws(() => readmeProgram(ok.replace('<!-- readme-program -->\n', '')), /0 .* markers/);
  t.throws(() => readmeProgram(ok.replace('## Install', '## Setup')), /no "## Install"/);
  t.throws(() => readmeProgram(ok.replace('```sh\nnpm i', '```ts\nnpm i')), /comes before the readme-program marker/);
  t.throws(() => readmeProgram(ok.replace('-->\n```js', '-->\ntext\n```js')), /not a ```js or ```ts fence/);
});

t.test("the README's first program runs against the embedded broker and exits by itself", async (t) => {
  const program = readmeProgram(fs.readFileSync(path.join(root, 'README.md'), 'utf8'));
  // Node runs JavaScript; a TypeScript first program would need the fresh-project test's compiler.
  t.equal(program.lang, 'js', 'the first program is JavaScript a user can run with node as it is');
  t.match(program.code, /from 'rocketwire'/, "it imports the package by its name, as a user's program does");

  const dir = fs.mkdtempSync(path.join(root, 'dist', '.readme-program-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'hello.mjs');
  fs.writeFileSync(file, program.code);

  const broker = await startBroker({});
  t.teardown(() => broker.close());
  const run = await runNode(file, { cwd: dir, env: { NAMESRV_ADDR: broker.namesrv }, killAfterMs: KILL_AFTER_MS });
  const diag = { stdout: run.stdout.slice(-4000), stderr: run.stderr.slice(-4000), program: program.code };
  t.equal(run.signal, null, 'it ended by itself', diag);
  t.equal(run.code, 0, 'it exits 0', diag);
  t.match(run.stdout, /^sent [0-9A-F]+$/m, 'it prints the id of the message it sent', diag);
  t.match(run.stdout, /^received "Hello, RocketMQ!" \([0-9A-F]+\)$/m, 'it prints the message it received', diag);
  t.equal(run.stderr, '', 'it prints no warning and no error', diag);
});
