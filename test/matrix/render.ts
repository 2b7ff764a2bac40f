/**
 * docs/compatibility.md from test/matrix/results.json and the notes of features.ts. The page is
 * only ever written by this file (test/docs/compatibility.test.ts checks it byte for byte).
 *
 *   node dist/test/matrix/render.js           write docs/compatibility.md
 *   node dist/test/matrix/render.js --check   exit 1 when the page differs from what it would write
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { repoRoot } from '../support/maven-jars.js';
import { COLUMNS, COLUMN_TITLES, FEATURES, RUNS, type CellPlan } from './features.js';
import { readResults, type CellResult, type MatrixResults, type Outcome } from './results.js';

export const PAGE_PATH = ['docs', 'compatibility.md'];

const WORD: Record<Outcome, string> = {
  pass: 'pass',
  fail: '**FAIL**',
  'not-applicable': 'n/a',
  'not-run': 'not run',
  unsupported: 'unsupported',
};

function minutes(s: number): string {
  return s >= 60 ? `${Math.floor(s / 60)} min ${s % 60} s` : `${s} s`;
}

const cellKey = (feature: string, column: string): string => `${feature}|${column}`;

/** The page's text. Throws when results.json lacks a cell features.ts defines (rerun the matrix). */
export function renderCompatibility(results: MatrixResults): string {
  const byKey = new Map(results.cells.map((c) => [cellKey(c.feature, c.column), c]));
  const missing: string[] = [];
  for (const f of FEATURES) for (const c of COLUMNS) if (!byKey.has(cellKey(f.key, c))) missing.push(`${f.key} × ${c}`);
  for (const r of RUNS) if (!results.runs.some((x) => x.id === r.id)) missing.push(`run ${r.id}`);
  if (missing.length > 0)
    throw new Error(`test/matrix/results.json has no result for ${missing.join(', ')}: run \`npm run test:matrix\``);

  // notes are numbered in table order; identical texts share a number
  const notes: string[] = [];
  const noteNo = (text: string): number => {
    const i = notes.indexOf(text);
    if (i >= 0) return i + 1;
    notes.push(text);
    return notes.length;
  };
  const cellText = (cell: CellResult, plan: CellPlan): string => {
    const parts: string[] = [];
    if (cell.outcome === 'pass' || cell.outcome === 'fail') parts.push(`${cell.passed}/${cell.passed + cell.failed}`);
    const texts: string[] = [];
    if (cell.outcome === 'fail') texts.push(`failed: ${cell.reason ?? 'see the run below'}`);
    else if (cell.reason) texts.push(cell.reason);
    if (plan.kind === 'run' && plan.note && plan.note !== cell.reason) texts.push(plan.note);
    const refs = texts.map((t) => `[${noteNo(t)}]`).join('');
    return `${WORD[cell.outcome]}${parts.length ? ` (${parts.join(', ')})` : ''}${refs ? ` ${refs}` : ''}`;
  };

  const lines: string[] = [];
  lines.push('# Compatibility with Apache RocketMQ releases', '');
  lines.push(
    "What rocketwire's real-broker suites prove on each Apache RocketMQ release, from their last run",
    `(${results.date}; its ${results.runs.length} suite runs, one after another, took ${minutes(results.wallSeconds)}). Do not edit this page:`,
    '`npm run test:matrix` runs the suites and writes `test/matrix/results.json`, and',
    '`node dist/test/matrix/render.js` writes this page from it; a test of `npm test` checks the two agree.',
    '',
  );
  lines.push(
    'A cell says **pass** when every test of the suites proving it passed (subtests passed/run in',
    'brackets), **FAIL** with what failed, **n/a** when the release has no such feature, **not run** when no',
    'suite covers that pair yet, and **unsupported** when rocketwire refuses the feature there (the suite',
    'proves the refusal). Numbers in square brackets are the notes below the table.',
    '',
  );
  lines.push(`| Feature | ${COLUMNS.map((c) => COLUMN_TITLES[c]).join(' | ')} |`);
  lines.push(`| --- | ${COLUMNS.map(() => '---').join(' | ')} |`);
  for (const f of FEATURES) {
    const cells = COLUMNS.map((c) => cellText(byKey.get(cellKey(f.key, c))!, f.cells[c]));
    lines.push(`| ${f.title} | ${cells.join(' | ')} |`);
  }
  lines.push('', '## Notes', '');
  for (const [i, n] of notes.entries()) lines.push(`${i + 1}. ${n.replaceAll('\n', ' ')}`);

  lines.push('', '## Which suite proves each cell', '');
  lines.push(
    'The 5.3.3 and 5.5.0 columns run each feature suite of `test/interop/` with',
    '`ROCKETWIRE_V5_VERSION` set to the release: the broker and the Java client the suite talks to are',
    "that release's (`V5_VERSION` in `test/support/maven-jars.ts`; 5.3.3 when unset, as in `npm test`). The",
    '4.9.7 and proxy columns come from the suites written for them.',
    '',
  );
  lines.push('| Feature | Release | Proof |', '| --- | --- | --- |');
  for (const f of FEATURES)
    for (const c of COLUMNS) {
      const cell = byKey.get(cellKey(f.key, c))!;
      if (cell.proofs.length === 0) continue;
      lines.push(`| ${f.key} | ${c} | ${cell.proofs.map((p) => proofText(p)).join('; ')} |`);
    }

  lines.push('', '## The runs', '');
  lines.push(
    '| Run | Suite | Top-level tests passed | Subtests passed | Exit | Time |',
    '| --- | --- | --- | --- | --- | --- |',
  );
  for (const r of results.runs) {
    const ok = r.tests.filter((t) => t.ok).length;
    const passed = r.tests.reduce((s, t) => s + t.passed, 0);
    const all = r.tests.reduce((s, t) => s + t.passed + t.failed, 0);
    lines.push(
      `| ${r.id} | \`${r.suite}\` | ${ok}/${r.tests.length} | ${passed}/${all} | ${r.exit} | ${minutes(r.seconds)} |`,
    );
  }
  const failing = results.runs.filter((r) => r.tests.some((t) => !t.ok) || r.fileFailures.length > 0 || r.skipped);
  if (failing.length > 0) {
    lines.push('', '### Failures', '');
    for (const r of failing) {
      const items = [
        ...r.fileFailures.map((f) => `outside any test: ${f}`),
        ...(r.skipped ? [`skipped itself: ${r.skipped}`] : []),
        ...r.tests.filter((t) => !t.ok).flatMap((t) => (t.failures.length ? t.failures : [`${t.name} failed`])),
      ];
      lines.push(`* ${r.id}:`, ...items.map((i) => `  * ${i}`));
    }
  }
  return lines.join('\n') + '\n';
}

function proofText(proof: string): string {
  const [run, tests] = proof.split(/: (.*)/s);
  const r = RUNS.find((x) => x.id === run);
  const suite = r ? `\`test/interop/${r.suite}.test.ts\`` : run!;
  return tests ? `${suite} (${tests})` : suite;
}

export function pageFile(): string {
  return join(repoRoot(), ...PAGE_PATH);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const text = renderCompatibility(readResults());
  if (process.argv[2] === '--check') {
    if (readFileSync(pageFile(), 'utf8') !== text) {
      process.stderr.write(
        'docs/compatibility.md differs from test/matrix/results.json: run node dist/test/matrix/render.js\n',
      );
      process.exit(1);
    }
  } else {
    writeFileSync(pageFile(), text);
    process.stderr.write(`wrote ${pageFile()}\n`);
  }
}
