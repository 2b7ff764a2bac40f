// The README's first program, run as a user would run it: extracted from README.md (the ```js block
// under the `<!-- readme-program -->` marker, which must be the first code block after "Install"),
// written to a .mjs file inside the package (so that `import 'rocketwire'` resolves by self-reference
// to the bundles the package exports, rebuilt first when stale), and run with `node` against an embedded broker, with NAMESRV_ADDR pointing at it.
// It must print what it sent and received, print nothing on stderr, and exit 0 by itself: the README
// cannot drift from the API.
import * as fs from 'node:fs';
import * as path from 'node:path';
import t from 'tap';
import ts from 'typescript';
import { startBroker } from '../../lib/broker/index.js';
import { repoRoot } from '../api/api-report.js';
import { ensureBundles } from '../examples/bundles.js';
import { runNode } from '../examples/run-node.js';
import { readmeProgram } from './readme-program.js';

const root = repoRoot();
/** Only a safety net for a program that hangs (it is then reported as killed). */
const KILL_AFTER_MS = 60_000;

t.test('readmeProgram finds the marked block and refuses a README that hides it', async (t) => {
  const ok =
    '# x\n\n## Install\n\n```sh\nnpm i\n```\n\n<!-- readme-program -->\n```js\nconsole.log(1);\n```\n\n```js\nlater();\n```\n';
  t.same(readmeProgram(ok), { lang: 'js', code: 'console.log(1);\n' });
  t.throws(() => readmeProgram(ok.replace('<!-- readme-program -->\n', '')), /0 .* markers/);
  t.throws(() => readmeProgram(ok.replace('## Install', '## Setup')), /no "## Install"/);
  t.throws(() => readmeProgram(ok.replace('```sh\nnpm i', '```ts\nnpm i')), /comes before the readme-program marker/);
  t.throws(() => readmeProgram(ok.replace('-->\n```js', '-->\ntext\n```js')), /not a ```js or ```ts fence/);
});

/**
 * tsc's diagnostics of `files` in a strict NodeNext program, 'rocketwire' resolved by the package's
 * self-reference to the declarations it publishes (dist/lib/*.d.ts, as an installed package's).
 */
function typeErrors(files: string[], options: ts.CompilerOptions = {}): string[] {
  const program = ts.createProgram(files, {
    strict: true,
    noEmit: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    types: ['node'],
    skipLibCheck: true,
    ...options,
  });
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const where =
      d.file && d.start !== undefined
        ? `${path.basename(d.file.fileName)}:${d.file.getLineAndCharacterOfPosition(d.start).line + 1}: `
        : '';
    return where + ts.flattenDiagnosticMessageText(d.messageText, '\n');
  });
}

t.test("the README's first program type-checks, as JavaScript (checkJs) and as TypeScript", async (t) => {
  const program = readmeProgram(fs.readFileSync(path.join(root, 'README.md'), 'utf8'));
  const dir = fs.mkdtempSync(path.join(root, 'dist', '.readme-program-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const js = path.join(dir, 'hello.mjs');
  const mts = path.join(dir, 'hello.mts');
  fs.writeFileSync(js, program.code);
  fs.writeFileSync(mts, program.code);
  // An editor with checkJs (or // @ts-check) shows a user these; none may appear in the first program.
  t.same(typeErrors([js], { allowJs: true, checkJs: true }), [], 'hello.mjs: no error under strict checkJs');
  t.same(typeErrors([mts]), [], 'hello.mts: no error under strict TypeScript');
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

  t.comment(await ensureBundles(root));
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
