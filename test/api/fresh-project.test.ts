// rocketwire as a new user gets it: `npm pack` of the built repository, installed into a project
// outside the repository ("type": "module", NodeNext, strict, no skipLibCheck), then the user
// program of user-program.ts is type-checked with tsc and run with node against an embedded broker.
//
// No network: the tarball is extracted into node_modules/rocketwire and its runtime dependencies,
// typescript and @types/node are symlinked from the repository's node_modules. @types/debug is
// deliberately absent: a user does not install it, so no published declaration may need it.
// Needs dist/ (run after `npx tsc -p tsconfig.json`); npm pack runs with --ignore-scripts.
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { repoRoot } from './api-report.js';
import { files, OK_LINE, tsconfig } from './user-program.js';

const root = repoRoot();
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as {
  name: string;
  dependencies?: Record<string, string>;
};

// Children must not inherit tap's loaders or a DEBUG namespace of the caller.
const env = { ...process.env };
delete env.NODE_OPTIONS;
delete env.DEBUG;

function run(cmd: string, args: string[], cwd: string, timeoutMs: number): SpawnSyncReturns<string> {
  return spawnSync(cmd, args, { cwd, env, encoding: 'utf8', timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 });
}

function output(r: SpawnSyncReturns<string>): string {
  return [r.error ? `spawn: ${r.error.message}` : '', r.stdout, r.stderr].filter(Boolean).join('\n');
}

const project = fs.mkdtempSync(path.join(os.tmpdir(), 'rocketwire-fresh-'));
t.teardown(() => fs.rmSync(project, { recursive: true, force: true }));
const modules = path.join(project, 'node_modules');

let packed: string[] = [];

t.test('npm pack gives a tarball with the built entry points and nothing of tests or benchmarks', async (t) => {
  const r = run('npm', ['pack', '--ignore-scripts', '--offline', '--json', '--pack-destination', project], root, 120_000);
  t.equal(r.status, 0, 'npm pack succeeds', { output: output(r) });
  const info = JSON.parse(r.stdout) as { filename: string; files: { path: string }[] }[];
  const tarball = path.join(project, info[0]!.filename);
  packed = info[0]!.files.map((f) => f.path);
  for (const entry of ['package.json', 'dist/lib/index.js', 'dist/lib/index.d.ts', 'dist/protocol/index.js', 'dist/protocol/index.d.ts']) {
    t.ok(packed.includes(entry), `the tarball has ${entry}`);
  }
  t.same(
    packed.filter((p) => /^dist\/(test|bench)\//.test(p) || p.endsWith('.map') || p.endsWith('.tsbuildinfo')),
    [],
    'no tests, benchmarks, source maps or build info in the tarball',
  );
  t.same(packed.filter((p) => /\.(ts|cts|mts)$/.test(p) && !/\.d\.(ts|cts|mts)$/.test(p)), [], 'no TypeScript sources');
  // tsc never deletes outputs, so a source removed or moved leaves its old .js/.d.ts in dist/ and
  // npm pack would publish it.
  const source = (p: string): string =>
    p.slice('dist/'.length).replace(/\.d\.cts$|\.cjs$/, '.cts').replace(/\.d\.ts$|\.js$/, '.ts');
  t.same(
    packed.filter((p) => p.startsWith('dist/') && !fs.existsSync(path.join(root, source(p)))),
    [],
    'every file of dist/ in the tarball is built from a current source (else: rm -rf dist && npx tsc -p tsconfig.json)',
  );

  const dir = path.join(modules, pkg.name);
  fs.mkdirSync(dir, { recursive: true });
  const x = run('tar', ['-xzf', tarball, '-C', dir, '--strip-components', '1'], project, 60_000);
  t.equal(x.status, 0, 'the tarball extracts', { output: output(x) });
  for (const name of [...Object.keys(pkg.dependencies ?? {}), 'typescript', '@types/node']) {
    const target = fs.realpathSync(path.join(root, 'node_modules', name));
    fs.mkdirSync(path.dirname(path.join(modules, name)), { recursive: true });
    fs.symlinkSync(target, path.join(modules, name), 'dir');
  }
  t.notOk(fs.existsSync(path.join(modules, '@types/debug')), 'the project has no @types/debug');
  fs.writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'fresh', private: true, type: 'module' }, null, 2));
  fs.writeFileSync(path.join(project, 'tsconfig.json'), JSON.stringify(tsconfig, null, 2));
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(project, name)), { recursive: true });
    fs.writeFileSync(path.join(project, name), text.trimStart());
  }
});

t.test('tsc type-checks the user program against the published declarations', async (t) => {
  const tsc = path.join(modules, 'typescript/bin/tsc');
  const r = run(process.execPath, [tsc, '-p', project, '--pretty', 'false'], project, 300_000);
  // One diagnostic per "file(line,col): error TS…" line, with its indented continuation lines.
  const diagnostics = new Map<string, string[]>();
  let current: { list: string[]; index: number } | null = null;
  for (const line of r.stdout.split('\n')) {
    const m = /^(.+?)\(\d+,\d+\): error TS\d+: /.exec(line);
    if (m) {
      const file = m[1]!.split(path.sep).join('/');
      const key = file.includes('node_modules/') ? 'node_modules' : file;
      const list = diagnostics.get(key) ?? [];
      diagnostics.set(key, list);
      current = { list, index: list.push(line) - 1 };
    } else if (current && /^\s/.test(line)) {
      current.list[current.index] += '\n' + line;
    }
  }
  const of = (key: string): string => (diagnostics.get(key) ?? []).join('\n');

  t.equal(
    of('node_modules'),
    '',
    'the published declarations type-check in a strict project without skipLibCheck and without @types/debug ' +
      '(a declaration leak: an exported signature names a type of a package the user does not have)',
  );
  t.equal(of('src/codec.ts'), '', 'rocketwire/protocol: createRequest, encodeCommand, FrameDecoder, decodeCommand, a typed header');
  t.equal(of('src/concurrent-sync.ts'), '', 'consumer.start((msgs) => ConsumeConcurrentlyStatus.CONSUME_SUCCESS) type-checks');
  t.equal(
    of('src/concurrent-async.ts'),
    '',
    "known problem (a): consumer.start(async (msgs) => { …; return 'CONSUME_SUCCESS'; }) must type-check. " +
      "TypeScript widens a lone literal returned from an async handler unless the handler type's promise accepts " +
      'any string (see AsyncConsumeResult in lib/consumer/consume-types.ts)',
  );
  t.equal(
    of('src/orderly.ts'),
    '',
    "known problem (a): an orderly consumer's consumer.start(async (msgs) => { …; return 'SUCCESS'; }) must " +
      "type-check; same cause (see AsyncConsumeResult in lib/consumer/consume-types.ts)",
  );
  t.equal(of('src/main.ts'), '', 'the program (startBroker, Producer.send, PushConsumer, clock, errors) type-checks');
  t.equal(r.status, 0, 'tsc exits 0', { output: output(r) });
});

t.test('node runs the user program: embedded broker, one message produced and consumed, clean exit', async (t) => {
  // tsc emits even when it reports errors, so this runs (and tells) on its own.
  const main = path.join(project, 'dist/main.js');
  if (!fs.existsSync(main)) {
    t.fail('tsc emitted no dist/main.js');
    return;
  }
  const r = run(process.execPath, [main], project, 90_000);
  t.equal(r.status, 0, 'exits 0 by itself (nothing left open)', { output: output(r), signal: r.signal });
  t.match(r.stdout, OK_LINE, 'consumed the message with the async, sync and orderly handlers, then closed everything');
});
