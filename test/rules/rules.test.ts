// Each house rule of test/rules/rules.ts catches what it names (a planted violation in a few
// in-memory files), and the repository keeps every rule that reads sources only (`npm run check`
// runs these and the type-aware floating-promise rule before the build).
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import ts from 'typescript';
import { repoRoot } from '../api/api-report.js';
import {
  bareThrows,
  cycleViolations,
  floatingPromises,
  globalTime,
  importCycles,
  importGraph,
  layerViolations,
  loadSources,
  longFiles,
  misplacedErrorClasses,
  parseLayerTable,
  sourceRules,
  type Sources,
} from './rules.js';

const root = repoRoot();
const files = (o: Record<string, string>): Sources => new Map(Object.entries(o));

t.test('file length: 500 lines pass, 501 do not', async (t) => {
  const v = longFiles(files({ 'lib/a.ts': 'x;\n'.repeat(500), 'lib/b.ts': 'x;\n'.repeat(501) }));
  t.same(
    v.map((x) => x.file),
    ['lib/b.ts'],
  );
  t.match(v[0]?.message, /501 lines/);
});

t.test('bare errors: throw new Error and throw Error are caught, typed errors are not', async (t) => {
  const v = bareThrows(
    files({
      'lib/a.ts':
        "throw new Error('x');\nfunction f() { throw Error('y'); }\nthrow new BrokerError('z');\nconst e = new Error('kept, not thrown');\n",
    }),
  );
  t.same(
    v.map((x) => x.line),
    [1, 2],
  );
});

t.test('error classes outside errors.ts are caught', async (t) => {
  const v = misplacedErrorClasses(
    files({
      'lib/x/thing.ts': 'export class ThingError extends RocketwireError {}\nexport class Thing {}\n',
      'lib/x/errors.ts': 'export class OtherError extends RocketwireError {}\n',
      'lib/y/y-errors.ts': 'export class YError extends Error {}\n',
    }),
  );
  t.same(
    v.map((x) => `${x.file}:${x.line}`),
    ['lib/x/thing.ts:1'],
  );
});

t.test('import cycles: type imports count, a chain without a loop does not', async (t) => {
  const src = files({
    'lib/a/one.ts': "import { two } from './two.js';\n",
    'lib/a/two.ts': "import type { Three } from './three.js';\n",
    'lib/a/three.ts': "export { one } from './one.js';\n",
    'lib/b/x.ts': "import { y } from './y.js';\n",
    'lib/b/y.ts': "import fs from 'node:fs';\n",
  });
  const cycles = importCycles(importGraph(src));
  t.same(cycles, [['lib/a/one.ts', 'lib/a/three.ts', 'lib/a/two.ts']]);
  t.equal(cycleViolations(importGraph(src)).length, 1);
});

t.test('layers: the table of ARCHITECTURE.md allows and refuses', async (t) => {
  const table = parseLayerTable(
    [
      'What a folder may import:',
      '',
      '| folder | may import |',
      '| --- | --- |',
      '| `protocol/` | only `protocol/` |',
      '| `lib/remoting` | `protocol/`, `lib/clock.ts` |',
      '| `lib/cli` | anything in lib/ |',
      '| every folder of `lib/` | `lib/logger.ts` |',
      '',
      'after the table',
    ].join('\n'),
  );
  const src = files({
    'protocol/codec.ts': "import { x } from '../lib/remoting/conn.js';\n",
    'lib/remoting/conn.ts':
      "import { c } from '../clock.js';\nimport { l } from '../logger.js';\nimport { p } from '../../protocol/codec.js';\nimport { k } from '../client/k.js';\n",
    'lib/client/k.ts': '',
    'lib/clock.ts': '',
    'lib/logger.ts': '',
    'lib/cli/main.ts': "import { k } from '../client/k.js';\n",
  });
  const v = layerViolations(importGraph(src), table);
  t.same(v.map((x) => x.message.split(' (')[0]).sort(), [
    'lib/remoting may not import lib/client/k.ts',
    'protocol may not import lib/remoting/conn.ts',
  ]);
});

t.test('clock: global timers and the wall clock outside the clock and the exceptions', async (t) => {
  const src = files({
    'lib/a/x.ts':
      'setTimeout(f, 1);\nclock.setTimeout(f, 1);\nconst n = Date.now();\nconst d = new Date();\nconst e = new Date(ts);\nsetImmediate(f);\n',
    'lib/clock.ts': 'setTimeout(f, 1);\n',
    'lib/cli/y.ts': 'setInterval(f, 1);\n',
    'protocol/z.ts': 'Date.now();\n',
  });
  t.same(
    globalTime(src).map((v) => `${v.file}:${v.line}`),
    ['lib/a/x.ts:1', 'lib/a/x.ts:3', 'lib/a/x.ts:4', 'lib/a/x.ts:6'],
  );
});

t.test('floating promises: an unawaited promise is caught; awaited, void, catch and plain calls are not', async (t) => {
  const dir = fs.mkdtempSync(path.join(root, 'dist', 'rules-fixture-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'lib', 'x.ts');
  fs.mkdirSync(path.dirname(file));
  fs.writeFileSync(
    file,
    [
      'async function work(): Promise<number> { return 1; }',
      'function plain(): number { return 1; }',
      'export async function main(): Promise<void> {',
      '  work();', // 4: floating
      '  await work();',
      '  void work();',
      '  work().catch(() => {});',
      '  work().then(() => {}, () => {});',
      '  work().then(() => {});', // 9: floating
      '  plain();',
      '}',
    ].join('\n'),
  );
  const program = ts.createProgram([file], { strict: true, target: ts.ScriptTarget.ES2022, noEmit: true, types: [] });
  t.same(
    floatingPromises(program, dir).map((v) => v.line),
    [4, 9],
  );
});

t.test('the repository keeps every source rule', async (t) => {
  const violations = sourceRules(root);
  t.same(
    violations.map((v) => `${v.file}:${v.line} ${v.rule}: ${v.message}`),
    [],
    'npm run check lists them with the reason',
  );
  // Cycles computed from the built imports too (what Node loads), not only from the sources.
  const built = loadSources(path.join(root, 'dist'), ['lib', 'protocol'], true);
  t.ok(built.size > 100, 'the build was read');
  t.same(importCycles(importGraph(built)), [], 'no import cycle among the built files');
});
