import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { collectExports, renderReport, repoRoot, REPORT_FILE, UPDATE_COMMAND } from './api-report.js';

const root = repoRoot();
const exportsByEntry = collectExports(root);

/** Lines only in one of the two texts, as -/+ lines (both are sorted lists, so this reads as a diff). */
function lineDiff(committed: string, generated: string): string {
  const a = committed.split('\n');
  const b = generated.split('\n');
  const inA = new Set(a);
  const inB = new Set(b);
  return [
    ...a.filter((l) => !inB.has(l)).map((l) => `- ${l}`),
    ...b.filter((l) => !inA.has(l)).map((l) => `+ ${l}`),
  ].join('\n');
}

t.test('the committed API report matches the built declarations', async (t) => {
  const generated = renderReport(exportsByEntry);
  const file = path.join(root, REPORT_FILE);
  const committed = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  if (committed !== generated) {
    t.comment(`${REPORT_FILE} is out of date (- committed, + built):\n${lineDiff(committed, generated)}`);
  }
  // tap prints the full diff of the two texts when they differ.
  t.equal(
    generated,
    committed,
    `${REPORT_FILE} lists the exports of the built entry points; when the API changes on purpose, ` +
      `run \`${UPDATE_COMMAND}\` and commit the file, otherwise fix the exports`,
  );
});

t.test('the report carries the declaration of each export, so a changed signature changes it', async (t) => {
  for (const [point, names] of exportsByEntry)
    t.same(
      names.filter((n) => n.signature.trim() === '').map((n) => n.name),
      [],
      `${point.specifier}: every name has its declaration`,
    );
  const report = renderReport(exportsByEntry);
  t.match(report, /^ {4}class Producer\b/m, 'a class is listed with its declaration');
  t.match(report, /^ {8}send\(/m, 'and its public methods with their parameters');
  t.notMatch(report, /^\s+private\b/m, 'private members are not the surface');
});

t.test('the entry points list their exports by name', async (t) => {
  for (const entry of [
    'lib/index.ts',
    'lib/broker/public.ts',
    'lib/capture/public.ts',
    'lib/testing/public.ts',
    'protocol/index.ts',
  ]) {
    const text = fs.readFileSync(path.join(root, entry), 'utf8');
    t.notMatch(text, /^\s*export\s+(type\s+)?\*/m, `${entry} has no export *`);
  }
});

t.test('rocketwire stays small and every name has a known kind', async (t) => {
  for (const [point, names] of exportsByEntry) {
    t.same(
      names.filter((n) => n.kind.startsWith('unknown')),
      [],
      `${point.specifier}: kinds`,
    );
    // A cap that only a new feature should move: each feature adds a class, its options and its
    // errors (transactions, request-reply, trace, SQL92, lite pull and POP), what a Node user names
    // in their own code (the handler shapes, health(), the logger, the state errors, the
    // LocalTransactionState constants and the event payloads, which get reference pages), and the
    // limits' errors with the inflate options and stats; then the message-trace views of the trace
    // query, the OpenTelemetry tracing option, the send path's options, compression type and
    // back-pressure error, the address server's error and the duplicate guard's options and store. The broker, the capture decoder and the
    // test cluster are subpaths, not counted here.
    if (point.specifier === 'rocketwire')
      t.ok(names.length <= 139, `rocketwire exports ${names.length} names (at most 139)`);
  }
  t.same(
    [...exportsByEntry.keys()].map((p) => p.specifier),
    ['rocketwire', 'rocketwire/broker', 'rocketwire/capture', 'rocketwire/protocol', 'rocketwire/testing'],
    'the entry points are those of package.json exports (the broker, the capture decoder and the test cluster are subpaths)',
  );
});
