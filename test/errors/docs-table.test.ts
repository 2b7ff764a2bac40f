// docs/errors.md has one row per error class, and each row's family, errorCode and retriable are
// the class's own: a new class, a renamed code or a changed rule fails here until the table says so.
import * as fs from 'node:fs';
import * as path from 'node:path';
import t from 'tap';
import { RULE_CLASSES, SAMPLES, errorClasses, root } from './catalogue.js';

const classes = await errorClasses();
const doc = fs.readFileSync(path.join(root, 'docs/errors.md'), 'utf8');

interface Row {
  cls: string;
  family: string;
  errorCode: string;
  retriable: string;
  when: string;
  todo: string;
}

/** Rows of the table whose first cell is a `ClassName`; cells split on `|` not preceded by `\`. */
function rows(markdown: string): Row[] {
  const out: Row[] = [];
  for (const line of markdown.split('\n')) {
    if (!line.startsWith('| `')) continue;
    const cells = line
      .slice(1, line.lastIndexOf('|'))
      .split(/(?<!\\)\|/)
      .map((c) => c.trim());
    const bare = (c: string | undefined): string => (c ?? '').replace(/^`|`$/g, '');
    out.push({
      cls: bare(cells[0]),
      family: bare(cells[1]),
      errorCode: bare(cells[2]),
      retriable: cells[3] ?? '',
      when: cells[4] ?? '',
      todo: cells[5] ?? '',
    });
  }
  return out;
}

const table = rows(doc);

t.test('the table has one row per error class, no more', async (t) => {
  const listed = table.map((r) => r.cls);
  t.same(
    listed.filter((n, i) => listed.indexOf(n) !== i),
    [],
    'no class listed twice',
  );
  t.same(
    classes.map((c) => c.name).filter((n) => !listed.includes(n)),
    [],
    'every class is in docs/errors.md',
  );
  t.same(
    listed.filter((n) => !classes.some((c) => c.name === n)),
    [],
    'no row for a class that does not exist',
  );
});

t.test("each row states the class's family, code and retriable, and says when and what to do", async (t) => {
  for (const info of classes) {
    const row = table.find((r) => r.cls === info.name);
    if (!row) continue; // reported above
    const err = new info.ctor(...(SAMPLES[info.name]!.args() as never[]));
    t.equal(row.family, info.parent, `${info.name}: family`);
    t.equal(row.errorCode, err.errorCode, `${info.name}: errorCode`);
    if (RULE_CLASSES.has(info.name)) {
      t.notOk(['yes', 'no'].includes(row.retriable), `${info.name}: the rule, not a fixed value (${row.retriable})`);
    } else {
      t.equal(row.retriable, err.retriable ? 'yes' : 'no', `${info.name}: retriable`);
    }
    t.ok(row.when.length > 10, `${info.name}: when it is thrown`);
    t.ok(row.todo.length > 3, `${info.name}: what to do`);
  }
});
