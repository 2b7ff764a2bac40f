// rocketwire as a new user gets it: `npm pack` of the built repository, installed into a project
// outside the repository ("type": "module", NodeNext, strict, no skipLibCheck), then the user
// program of user-program.ts is type-checked with tsc and run with node against an embedded broker.
//
// No network: the tarball is extracted into node_modules/rocketwire and its runtime dependencies,
// typescript and @types/node are symlinked from the repository's node_modules. @types/debug is
// deliberately absent: a user does not install it, so no published declaration may need it.
// Needs dist/ (run after `npx tsc -p tsconfig.json`); npm pack runs with --ignore-scripts.
import { spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import ts from 'typescript';
import { repoRoot } from './api-report.js';
import { files, OK_LINE, tsconfig } from './user-program.js';
import { startBroker } from '../../lib/broker/index.js';
import { readmeProgram } from '../docs/readme-program.js';

const root = repoRoot();
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as {
  name: string;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
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
  const r = run(
    'npm',
    ['pack', '--ignore-scripts', '--offline', '--json', '--pack-destination', project],
    root,
    120_000,
  );
  t.equal(r.status, 0, 'npm pack succeeds', { output: output(r) });
  const info = JSON.parse(r.stdout) as { filename: string; files: { path: string }[] }[];
  const tarball = path.join(project, info[0]!.filename);
  packed = info[0]!.files.map((f) => f.path);
  const entries = [
    'package.json',
    'LICENSE',
    'README.md',
    'dist/lib/index.js',
    'dist/lib/index.d.ts',
    'dist/protocol/index.js',
    'dist/protocol/index.d.ts',
  ];
  entries.push(
    'dist/lib/broker/public.js',
    'dist/lib/broker/public.d.ts',
    'dist/lib/capture/public.js',
    'dist/lib/capture/public.d.ts',
    'dist/lib/testing/public.js',
    'dist/lib/testing/public.d.ts',
  );
  // the bundles the package's exports point at (npm run bundle: one file per entry point plus shared chunks)
  entries.push(
    'dist/pkg/lib/index.js',
    'dist/pkg/protocol/index.js',
    'dist/pkg/lib/broker/public.js',
    'dist/pkg/lib/capture/public.js',
    'dist/pkg/lib/testing/public.js',
  );
  if (fs.existsSync(path.join(root, 'CHANGELOG.md'))) entries.push('CHANGELOG.md');
  for (const entry of entries) {
    t.ok(packed.includes(entry), `the tarball has ${entry}`);
  }
  t.same(
    packed.filter((p) => /^dist\/(test|bench)\//.test(p) || p.endsWith('.map') || p.endsWith('.tsbuildinfo')),
    [],
    'no tests, benchmarks, source maps or build info in the tarball',
  );
  t.same(
    packed.filter((p) => /\.(ts|cts|mts)$/.test(p) && !/\.d\.(ts|cts|mts)$/.test(p)),
    [],
    'no TypeScript sources',
  );
  // tsc never deletes outputs, so a source removed or moved leaves its old .js/.d.ts in dist/ and
  // npm pack would publish it.
  const source = (p: string): string =>
    p
      .slice('dist/'.length)
      .replace(/\.d\.cts$|\.cjs$/, '.cts')
      .replace(/\.d\.ts$|\.js$/, '.ts');
  t.same(
    // dist/pkg holds esbuild's bundles of dist/lib and dist/protocol, rebuilt whole by every build
    packed.filter(
      (p) => p.startsWith('dist/') && !p.startsWith('dist/pkg/') && !fs.existsSync(path.join(root, source(p))),
    ),
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
  fs.writeFileSync(
    path.join(project, 'package.json'),
    JSON.stringify({ name: 'fresh', private: true, type: 'module' }, null, 2),
  );
  fs.writeFileSync(path.join(project, 'tsconfig.json'), JSON.stringify(tsconfig, null, 2));
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(project, name)), { recursive: true });
    fs.writeFileSync(path.join(project, name), text.trimStart());
  }
});

// What the published files may import: Node's own modules, the package's dependencies and optional
// peer dependencies, and files of the package itself, never test/, bench/ or a devDependency (issue
// 28). Static imports, dynamic import() and require() of a literal specifier, as TypeScript's
// preProcessFile reads them (comments and strings are not imports).
function specifiers(file: string): string[] {
  return ts.preProcessFile(fs.readFileSync(file, 'utf8'), true, true).importedFiles.map((f) => f.fileName);
}

/** The package's files a module reaches by static imports, from `entry` (paths inside `dir`). */
function staticGraph(dir: string, entry: string): string[] {
  const seen = new Set<string>();
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = fs.readFileSync(path.join(dir, file), 'utf8');
    for (const m of text.matchAll(
      /^(?:import|export)\s[^;]*?from\s*['"](\.[^'"]+)['"]|^import\s*['"](\.[^'"]+)['"]/gm,
    )) {
      visit(path.normalize(path.join(path.dirname(file), m[1] ?? m[2]!)));
    }
  };
  visit(entry);
  return [...seen];
}

t.test('the installed package: no install script, nothing from tests, benchmarks or devDependencies', async (t) => {
  const dir = path.join(modules, pkg.name);
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as {
    scripts?: Record<string, string>;
  };
  const installScripts = ['preinstall', 'install', 'postinstall', 'prepare'].filter(
    (s) => manifest.scripts?.[s] !== undefined,
  );
  t.same(installScripts, [], 'no script runs when the tarball is installed (npm warns about install scripts)');

  const allowed = new Set([...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.peerDependencies ?? {})]);
  const bad: string[] = [];
  for (const file of packed.filter((p) => /\.(js|cjs|mjs)$/.test(p))) {
    for (const spec of specifiers(path.join(dir, file))) {
      if (spec.startsWith('node:')) continue;
      if (spec.startsWith('.')) {
        const target = path.normalize(path.join(path.dirname(file), spec));
        if (!packed.includes(target)) bad.push(`${file} imports ${spec}, which is not in the package`);
        continue;
      }
      const name = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!;
      if (!allowed.has(name)) bad.push(`${file} imports ${spec}, neither a dependency nor an optional peer`);
    }
  }
  t.same(bad, [], 'every import of a published file resolves inside the package or to a dependency');

  // What `import 'rocketwire'` loads is the bundle: its chunks must not hold the broker or the
  // capture decoder, which only rocketwire/broker and rocketwire/capture reach.
  const rootChunks = staticGraph(dir, 'dist/pkg/lib/index.js');
  const defines = /\b(?:class|var|let|const) (Broker|NameServer|CaptureDecoder|TcpStreamReassembler)\b/;
  t.same(
    rootChunks.filter((f) => defines.test(fs.readFileSync(path.join(dir, f), 'utf8'))),
    [],
    "import 'rocketwire' (the bundle) loads no chunk that defines the broker or the capture decoder",
  );
  const brokerOnly = staticGraph(dir, 'dist/pkg/lib/broker/public.js').filter((f) => !rootChunks.includes(f));
  t.ok(
    brokerOnly.some((f) => /\b(?:class|var|let|const) Broker\b/.test(fs.readFileSync(path.join(dir, f), 'utf8'))),
    'the check above can fail: rocketwire/broker reaches a chunk that defines Broker',
  );
  const graph = staticGraph(dir, 'dist/lib/index.js');
  t.same(
    graph.filter((f) => /^dist\/lib\/(broker|capture|cli)\//.test(f)),
    [],
    "import 'rocketwire' loads neither the embedded broker nor the capture decoder nor the CLI (rocketwire/broker, rocketwire/capture)",
  );
});

t.test('the CLI of the installed package: bench needs a clone, decode --msgpack names the optional peer', async (t) => {
  const bin = path.join(modules, pkg.name, 'bin/rocketwire.js');
  const bench = run(process.execPath, [bin, 'bench'], project, 60_000);
  t.equal(bench.status, 2, 'rocketwire bench exits 2', { output: output(bench) });
  t.equal(bench.stdout, '', 'nothing on stdout');
  t.match(
    bench.stderr,
    /^rocketwire bench: [^\n]*clone[^\n]*\n$/,
    'one line on stderr saying the benchmarks need a clone',
  );

  // An empty pcap (the global header, no packets): decoding it needs nothing but the output encoder.
  const pcap = path.join(project, 'empty.pcap');
  const header = Buffer.alloc(24);
  header.writeUInt32LE(0xa1b2c3d4, 0);
  header.writeUInt16LE(2, 4);
  header.writeUInt16LE(4, 6);
  header.writeUInt32LE(65535, 16);
  header.writeUInt32LE(1, 20);
  fs.writeFileSync(pcap, header);
  t.notOk(
    fs.existsSync(path.join(modules, '@msgpack/msgpack')),
    'the project has no @msgpack/msgpack (an optional peer dependency)',
  );
  const decode = run(process.execPath, [bin, 'decode', '--msgpack', pcap], project, 60_000);
  t.not(decode.status, 0, 'decode --msgpack fails', { output: output(decode) });
  t.match(
    decode.stderr,
    /^rocketwire decode: [^\n]*@msgpack\/msgpack[^\n]*\n$/,
    'one line naming the package to install',
  );
  const json = run(process.execPath, [bin, 'decode', '--json', pcap], project, 60_000);
  t.equal(json.status, 0, 'decode --json needs no optional package', { output: output(json) });
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
  t.equal(
    of('src/codec.ts'),
    '',
    'rocketwire/protocol: createRequest, encodeCommand, FrameDecoder, decodeCommand, a typed header',
  );
  t.equal(
    of('src/concurrent-sync.ts'),
    '',
    'consumer.start((msgs) => ConsumeConcurrentlyStatus.CONSUME_SUCCESS) type-checks',
  );
  t.equal(
    of('src/concurrent-async.ts'),
    '',
    "known problem (a): consumer.start(async (msgs) => { …; return 'CONSUME_SUCCESS'; }) must type-check. " +
      "TypeScript widens a lone literal returned from an async handler unless the handler type's promise accepts " +
      'any string (see AsyncConsumeResult in lib/consumer/core/consume-types.ts)',
  );
  t.equal(
    of('src/orderly.ts'),
    '',
    "known problem (a): an orderly consumer's consumer.start(async (msgs) => { …; return 'SUCCESS'; }) must " +
      'type-check; same cause (see AsyncConsumeResult in lib/consumer/core/consume-types.ts)',
  );
  t.equal(of('src/main.ts'), '', 'the program (startBroker, Producer.send, PushConsumer, clock, errors) type-checks');
  t.equal(
    of('src/idioms.ts'),
    '',
    'issue 28: an async handler returning nothing, start() against a dead name server, a logger object type-check',
  );
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

t.test("the README's first program, in the installed package, against an embedded broker", async (t) => {
  const program = readmeProgram(fs.readFileSync(path.join(root, 'README.md'), 'utf8'));
  const file = path.join(project, program.lang === 'ts' ? 'readme.mts' : 'readme.mjs');
  fs.writeFileSync(file, program.code);
  if (program.lang === 'ts') {
    t.fail('the README program is TypeScript: run it through tsc first');
    return;
  }
  const broker = await startBroker({ queues: 2, logger: false });
  t.teardown(() => broker.close());
  const r = await new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [file], { cwd: project, env: { ...env, NAMESRV_ADDR: broker.namesrv } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const kill = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('close', (status) => {
      clearTimeout(kill);
      resolve({ status, stdout, stderr });
    });
  });
  t.equal(r.status, 0, 'exits 0 by itself', { stdout: r.stdout, stderr: r.stderr });
  t.match(r.stdout, /received/, 'it printed what it received');
  t.equal(r.stderr, '', 'nothing on stderr');
});

t.test(
  "CommonJS: require('rocketwire') and require('rocketwire/broker') give the classes (Node >= 20.19)",
  async (t) => {
    const r = run(process.execPath, [path.join(project, 'src/require.cjs')], project, 30_000);
    t.equal(r.status, 0, 'exits 0', { output: output(r) });
    t.match(r.stdout, 'require ok');
  },
);
