// What `rocketwire decode` loads: a decode of a small capture is mostly Node's start and the ESM
// loader (about half a millisecond a module), so the command reads the capture and protocol
// modules it uses one by one and loads the filter, the statistics, the report and the doctor only
// when asked for. Through protocol/index.js every start loaded some 80 modules instead of 40
// (`decode --help` 141 → 106 ms, docs/bench-log/performance-targets.md).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import t from 'tap';
import { encodeCommand } from '../../protocol/frame.js';
import { pullFound, pullRequest } from './build-pcap.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const bin = join(root, 'bin/rocketwire.js');
const distUrl = pathToFileURL(join(root, 'dist')).href + '/';
// A loader hook that names every file module on stderr as it is resolved.
const hook =
  'data:text/javascript,export async function resolve(s,c,n){const r=await n(s,c);' +
  'if(r.url.startsWith("file:"))process.stderr.write("LOADED "+r.url+"\\n");return r}';

const dir = mkdtempSync(join(tmpdir(), 'rocketwire-decode-modules-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const pull = pullRequest(7, {
  topic: 'Orders',
  group: 'cg',
  queueId: 2,
  queueOffset: 10,
  commitOffset: 10,
  sysFlag: 3,
});
const file = join(dir, 'frames.bin');
writeFileSync(file, Buffer.concat([encodeCommand(pull), encodeCommand(pullFound(pull, 3, { bodySize: 32 }))]));

function loaded(args: string[]): string[] {
  const r = spawnSync(process.execPath, ['--no-warnings', '--experimental-loader', hook, bin, 'decode', ...args], {
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`decode exited ${r.status}: ${r.stderr}`);
  // A module is resolved once for every import of it: each counts once.
  return [
    ...new Set(
      r.stderr
        .split('\n')
        .filter((l) => l.startsWith('LOADED '))
        .map((l) => l.slice(7)),
    ),
  ];
}

t.test('decode --json and the table load neither the protocol barrel nor the statistics', async (t) => {
  for (const args of [[file, '--json'], [file]]) {
    const urls = loaded(args);
    t.ok(
      urls.some((u) => u.endsWith('/lib/capture/describe.js')),
      `${args.join(' ')}: the decoder ran`,
    );
    const heavy = urls.filter((u) =>
      /\/protocol\/index\.js$|\/protocol\/(custom-header|body|sql92)\/|\/lib\/capture\/(index|stats|frame-filter)\.js$|\/lib\/capture\/(report|doctor)\//.test(
        u,
      ),
    );
    t.same(heavy, [], `${args.join(' ')}: nothing it does not use`);
    // Our own modules only: tap adds its loaders to the processes a test spawns.
    const ours = urls.filter((u) => u.startsWith(distUrl));
    t.ok(ours.length < 45, `${args.join(' ')}: ${ours.length} of rocketwire's modules`);
  }
});

t.test('--filter and --stats load what they need', async (t) => {
  t.ok(loaded([file, '--filter', 'topic=Orders']).some((u) => u.endsWith('/lib/capture/frame-filter.js')));
  t.ok(loaded([file, '--stats']).some((u) => u.endsWith('/lib/capture/stats.js')));
});
