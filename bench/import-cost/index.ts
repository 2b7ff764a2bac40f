/**
 * What `import 'rocketwire'` costs a user, and what the packed tarball holds.
 *
 * Import cost: the median wall time of N cold runs (default 11) of
 * `node --input-type=module -e "await import('rocketwire')"` minus the median of the same with an
 * empty program, and the max RSS (`/usr/bin/time -f %M`, median of the same runs) minus bare
 * Node's. The CPU time (user + system, 10 ms steps) is reported too: on a shared machine it moves
 * less than the wall time. The runs alternate (empty, import, empty, …) so a busy minute weighs on both sides. They
 * run in a temporary folder whose node_modules/rocketwire is a symlink to this clone, so the name
 * resolves through package.json's `exports` to the built dist/ exactly as in an installed package.
 *
 * Tarball: size, unpacked size and file count of `npm pack --dry-run --json --ignore-scripts`.
 *
 * `--modules` also times each entry point and each lib/ folder's index alone (same method), to
 * see where the cost is.
 *
 * `--floor` measures what Node charges per module, whatever is in it: a chain of as many trivial
 * modules (`import './m2.js'; export const v1 = 1;`) as the import loads (counted along the static
 * imports from dist/lib/index.js). On this VM that floor is most of the import's cost, so the
 * number of modules, not their size, is what to cut next.
 *
 *   npx tsc -p tsconfig.json && node dist/bench/import-cost/index.js [--runs 11] [--modules] [--json]
 *       [--package DIR]   measure another built checkout (e.g. an older commit) instead of this one
 *
 * Run it under `flock /tmp/rocketwire-heavy.lock` on a shared machine.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const runs = Number(args[args.indexOf('--runs') + 1] ?? 11) || 11;
const wantModules = args.includes('--modules');
const json = args.includes('--json');
const wantFloor = args.includes('--floor');

// dist/bench/import-cost/index.js → the clone's root, or --package.
const pkgArg = args.indexOf('--package');
const REPO =
  pkgArg >= 0 && args[pkgArg + 1]
    ? path.resolve(args[pkgArg + 1]!)
    : path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

interface Sample {
  wallMs: number;
  rssKb: number;
  cpuMs: number;
}

function runOnce(dir: string, program: string): Sample {
  const t0 = process.hrtime.bigint();
  const r = spawnSync('/usr/bin/time', ['-f', '%M %U %S', process.execPath, '--input-type=module', '-e', program], {
    cwd: dir,
    encoding: 'utf8',
  });
  const wallMs = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`node -e ${JSON.stringify(program)} failed: ${r.stderr}`);
  const lines = r.stderr.trim().split('\n');
  const [rss, user, sys] = lines[lines.length - 1]!.split(' ').map(Number);
  return { wallMs, rssKb: rss!, cpuMs: (user! + sys!) * 1000 };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

interface Cost {
  program: string;
  wallMs: number;
  rssMb: number;
  cpuMs: number;
  wallMsRuns: number[];
}

/** Median extra wall time and RSS of `program` over an empty program, alternating runs. */
function cost(dir: string, program: string): Cost {
  const base: Sample[] = [];
  const prog: Sample[] = [];
  runOnce(dir, ''); // warm the file cache, not measured
  runOnce(dir, program);
  for (let i = 0; i < runs; i++) {
    base.push(runOnce(dir, ''));
    prog.push(runOnce(dir, program));
  }
  const wallMs = median(prog.map((s) => s.wallMs)) - median(base.map((s) => s.wallMs));
  const rssMb = (median(prog.map((s) => s.rssKb)) - median(base.map((s) => s.rssKb))) / 1024;
  const cpuMs = median(prog.map((s) => s.cpuMs)) - median(base.map((s) => s.cpuMs));
  return {
    program,
    wallMs: Math.round(wallMs * 10) / 10,
    rssMb: Math.round(rssMb * 10) / 10,
    cpuMs: Math.round(cpuMs),
    wallMsRuns: prog.map((s) => Math.round(s.wallMs)),
  };
}

interface Pack {
  sizeBytes: number;
  unpackedBytes: number;
  files: number;
}

/** The package's files reached from `entry` by static imports (relative specifiers only). */
function staticGraph(entry: string): Set<string> {
  const seen = new Set<string>();
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = fs.readFileSync(file, 'utf8');
    for (const m of text.matchAll(
      /^(?:import|export)\s[^;]*?from\s*['"](\.[^'"]+)['"]|^import\s*['"](\.[^'"]+)['"]/gm,
    )) {
      visit(path.resolve(path.dirname(file), m[1] ?? m[2]!));
    }
  };
  visit(entry);
  return seen;
}

/** A chain of `n` trivial modules in `dir`; returns the first one's path. */
function writeChain(dir: string, n: number): string {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'package.json'), '{"type":"module"}\n');
  for (let i = 1; i <= n; i++) {
    const next = i < n ? `import './m${i + 1}.js';\n` : '';
    fs.writeFileSync(path.join(dir, `m${i}.js`), `${next}export const v${i} = ${i};\n`);
  }
  return path.join(dir, 'm1.js');
}

function pack(): Pack {
  const r = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: REPO, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`npm pack failed: ${r.stderr}`);
  const [info] = JSON.parse(r.stdout) as Array<{ size: number; unpackedSize: number; entryCount: number }>;
  return { sizeBytes: info!.size, unpackedBytes: info!.unpackedSize, files: info!.entryCount };
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rw-import-cost-'));
try {
  fs.mkdirSync(path.join(dir, 'node_modules'));
  fs.symlinkSync(REPO, path.join(dir, 'node_modules', 'rocketwire'), 'dir');
  const report: Record<string, unknown> = { node: process.version, runs };
  report.import = cost(dir, "await import('rocketwire')");
  if (wantModules) {
    const pkg = JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')) as {
      exports: Record<string, unknown>;
    };
    const entries: Record<string, Cost> = {};
    for (const sub of Object.keys(pkg.exports)) {
      if (sub === '.' || sub.endsWith('.json')) continue;
      const name = 'rocketwire' + sub.slice(1);
      entries[name] = cost(dir, `await import('${name}')`);
    }
    for (const folder of fs.readdirSync(path.join(REPO, 'dist', 'lib'))) {
      const index = path.join(REPO, 'dist', 'lib', folder, 'index.js');
      if (folder === 'cli' || !fs.existsSync(index)) continue;
      entries[`lib/${folder}`] = cost(dir, `await import(${JSON.stringify(index)})`);
    }
    report.modules = entries;
  }
  if (wantFloor) {
    const modules = staticGraph(path.join(REPO, 'dist', 'lib', 'index.js')).size;
    const first = writeChain(path.join(dir, 'chain'), modules);
    report.floor = { modules, ...cost(dir, `await import(${JSON.stringify(first)})`) };
  }
  report.pack = pack();
  if (json) {
    process.stdout.write(JSON.stringify(report, null, 2) + '\n');
  } else {
    const imp = report.import as Cost;
    const p = report.pack as Pack;
    process.stdout.write(
      `import 'rocketwire': +${imp.wallMs} ms wall, +${imp.rssMb} MB max RSS, +${imp.cpuMs} ms CPU over bare node (${process.version}, median of ${runs})\n`,
    );
    for (const [name, c] of Object.entries((report.modules ?? {}) as Record<string, Cost>)) {
      process.stdout.write(`  ${name.padEnd(22)} +${c.wallMs} ms wall, +${c.rssMb} MB, +${c.cpuMs} ms CPU\n`);
    }
    const floor = report.floor as (Cost & { modules: number }) | undefined;
    if (floor)
      process.stdout.write(
        `  floor: ${floor.modules} trivial modules +${floor.wallMs} ms wall, +${floor.rssMb} MB, +${floor.cpuMs} ms CPU\n`,
      );
    process.stdout.write(
      `tarball: ${(p.sizeBytes / 1024).toFixed(1)} kB packed, ${(p.unpackedBytes / 1024).toFixed(1)} kB unpacked, ${p.files} files\n`,
    );
  }
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
