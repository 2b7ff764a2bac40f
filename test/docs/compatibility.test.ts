// docs/compatibility.md is rendered from test/matrix/results.json (written by `npm run test:matrix`):
// the committed page must be exactly what the renderer makes of the committed results file, so
// neither can be edited, nor the matrix's features and notes changed, without the other.
import { readFileSync } from 'node:fs';
import t from 'tap';
import { pageFile, renderCompatibility } from '../matrix/render.js';
import { readResults } from '../matrix/results.js';

t.test('docs/compatibility.md is what test/matrix/results.json renders to', async (t) => {
  let expected: string;
  try {
    expected = renderCompatibility(readResults());
  } catch (err) {
    t.fail(`cannot render the page: ${(err as Error).message}`);
    return;
  }
  const actual = readFileSync(pageFile(), 'utf8');
  if (actual === expected) {
    t.pass('the page matches the results file');
    return;
  }
  const a = actual.split('\n');
  const e = expected.split('\n');
  let line = 0;
  while (line < a.length && a[line] === e[line]) line++;
  t.fail(
    `docs/compatibility.md differs from what test/matrix/results.json renders to, first at line ${line + 1}:\n` +
      `  page:     ${JSON.stringify(a[line] ?? '(end of file)')}\n  rendered: ${JSON.stringify(e[line] ?? '(end of file)')}\n` +
      'Do not edit the page: run `npm run test:matrix` (runs the suites, writes the results file and the page), ' +
      'or `npx tsc -p tsconfig.json && node dist/test/matrix/render.js` to render the committed results again.',
  );
});
