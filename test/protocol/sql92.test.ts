import t from 'tap';
import { MAX_SQL_NESTING, MAX_SQL_TREE_DEPTH } from '../../protocol/sql92/parser.js';
import { compileSql92, SqlLimitError, SqlParseError } from '../../protocol/sql92/index.js';

t.test('the issue’s example: a BETWEEN 10 AND 19 AND b = ’x’', async (t) => {
  const f = compileSql92("a BETWEEN 10 AND 19 AND b = 'x'");
  t.equal(f.expression, "a BETWEEN 10 AND 19 AND b = 'x'");
  t.equal(f.matches({ a: '15', b: 'x' }), true);
  t.equal(f.matches({ a: '15', b: 'y' }), false);
  t.equal(f.matches({ a: '25', b: 'x' }), false);
  t.equal(f.matches({ b: 'x' }), false, 'a missing property matches nothing');
  const n = Array.from({ length: 100 }, (_, i) => i).filter((i) =>
    compileSql92('a BETWEEN 10 AND 19').matches({ a: String(i) }),
  ).length;
  t.equal(n, 10, 'a = 0..99: exactly 10 match');
});

t.test('properties may be an object (own keys only), a Map or a function', async (t) => {
  const f = compileSql92('constructor IS NULL AND TAGS = ’A’'.replace(/’/g, "'"));
  t.equal(f.matches({ TAGS: 'A' }), true, 'an inherited Object.prototype member is not a property');
  t.equal(f.matches(new Map([['TAGS', 'A']])), true);
  t.equal(
    f.matches((n) => (n === 'TAGS' ? 'A' : undefined)),
    true,
  );
});

t.test('a parse error names the position, line and column', async (t) => {
  const err = t.throws(() => compileSql92("a = 5 AND b == 'x'"), SqlParseError) as SqlParseError;
  t.match(err, { name: 'SqlParseError', position: 13, line: 1, column: 14, expression: "a = 5 AND b == 'x'" });
  t.match(err.message, /position 13 \(line 1, column 14\)/);
  const multi = t.throws(() => compileSql92('a = 5\nAND b ! 1'), SqlParseError) as SqlParseError;
  t.match(multi, { position: 12, line: 2, column: 7 });
  t.match(multi.reason, /unexpected character "!"/);
  const end = t.throws(() => compileSql92('a = 5 AND'), SqlParseError) as SqlParseError;
  t.match(end, { position: 9 });
  t.match(end.reason, /end of the expression/);
});

t.test('nesting and tree depth are bounded, so a hostile expression cannot overflow the stack', async (t) => {
  const deep = '('.repeat(MAX_SQL_NESTING + 1) + 'a = 1' + ')'.repeat(MAX_SQL_NESTING + 1);
  t.match(
    t.throws(() => compileSql92(deep), SqlParseError),
    { reason: /nested deeper than/ },
  );
  const ok = '('.repeat(MAX_SQL_NESTING - 1) + 'a = 1' + ')'.repeat(MAX_SQL_NESTING - 1);
  t.equal(compileSql92(ok).matches({ a: '1' }), true);
  const nots = 'NOT '.repeat(100_000) + 'a = 1';
  t.throws(() => compileSql92(nots), SqlParseError);
  const ors = Array.from({ length: MAX_SQL_TREE_DEPTH + 1 }, (_, i) => `a = ${i}`).join(' OR ');
  t.match(
    t.throws(() => compileSql92(ors), SqlParseError),
    { reason: /deeper than/ },
  );
  const fewer = Array.from({ length: 400 }, (_, i) => `a = ${i}`).join(' OR ');
  t.equal(compileSql92(fewer).matches({ a: '399' }), true);
});

/** A balanced OR of `n` comparisons `a=<k>`: the shape of the evaluation-budget attack. */
function balancedOr(n: number, lo = 0): string {
  return n === 1 ? `a=${10000 + lo}` : `(${balancedOr(n >> 1, lo)} OR ${balancedOr(n - (n >> 1), lo + (n >> 1))})`;
}

t.test(
  'maxLength and maxNodes refuse an expression with SqlLimitError naming the bound (issue 29, H1/H2)',
  async (t) => {
    const big = balancedOr(2048);
    const long = t.throws(
      () => compileSql92(big, { maxLength: 1000, options: { maxLength: 'sqlMaxLength' } }),
      SqlLimitError,
    ) as SqlLimitError;
    t.match(long, {
      name: 'SqlLimitError',
      errorCode: 'ERR_SQL_LIMIT',
      limit: 'maxLength',
      max: 1000,
      actual: big.length,
      option: 'sqlMaxLength',
      position: 1000,
    });
    t.ok(long instanceof SqlParseError, 'a SqlParseError: refused as an expression that does not parse');
    t.match(
      long.message,
      new RegExp(
        `${big.length} characters exceed maxLength \\(1000\\) at position 1000 .*; raise the option sqlMaxLength$`,
      ),
    );

    // 2048 comparisons: 2048 × 3 nodes (a, the literal, =) + 2047 ORs
    t.equal(compileSql92(big).nodes, 4 * 2048 - 1);
    const many = t.throws(() => compileSql92(big, { maxNodes: 100 }), SqlLimitError) as SqlLimitError;
    t.match(many, { limit: 'maxNodes', max: 100, option: 'maxNodes' });
    t.ok(
      many.actual > 100 && many.actual <= 102,
      `the parser stopped where the count passed the bound (${many.actual})`,
    );
    t.ok(many.position < big.length / 10, `early in the expression (position ${many.position} of ${big.length})`);
    t.equal(
      compileSql92(big, { maxLength: big.length, maxNodes: 4 * 2048 - 1 }).matches({ a: '12047' }),
      true,
      'at the bounds it compiles',
    );
  },
);

t.test('nodes count what an evaluation costs: a value BETWEEN shares counts once per use', async (t) => {
  // each level evaluates the one below twice (Java's createBetween shares its value the same way)
  let e = 'a';
  const nodes: number[] = [];
  for (let level = 0; level < 12; level++) {
    e = `-(${e} BETWEEN 1 AND 2)`;
    nodes.push(compileSql92(`${e} IS NULL`).nodes);
  }
  t.ok(nodes[11]! > 2 ** 12, `12 levels, ${e.length} characters: ${nodes[11]} nodes`);
  const f = compileSql92(`${e} IS NULL`);
  const meter = { steps: 0 };
  t.equal(f.evaluate({ a: '1' }, meter), true);
  t.ok(
    meter.steps > 2 ** 12 && meter.steps <= f.nodes,
    `one evaluation took ${meter.steps} steps: more than 2^12, at most the ${f.nodes} nodes`,
  );
  // 30 levels would be a billion steps per message: refused by the default bound, parsed in a moment
  let deep = 'a';
  for (let level = 0; level < 30; level++) deep = `-(${deep} BETWEEN 1 AND 2)`;
  t.match(
    t.throws(() => compileSql92(`${deep} IS NULL`, { maxNodes: 4096 }), SqlLimitError),
    { limit: 'maxNodes' },
  );
});

t.test('ignoredFrom: where SelectorParser stops reading, as Java it ignores the rest', async (t) => {
  t.equal(compileSql92("a LIKE 'x%'").ignoredFrom, 2);
  t.equal(compileSql92('a = 0x10').ignoredFrom, 5);
  t.equal(compileSql92('a = 1 -- comment').ignoredFrom, 6, 'a -- comment needs its line end');
  t.equal(compileSql92('a = 1 -- comment\n').ignoredFrom, null);
  t.equal(compileSql92('  a = 1  ').ignoredFrom, null);
});

t.test('evaluate says what Java computed; only TRUE matches', async (t) => {
  t.equal(compileSql92('a = 5').evaluate({ a: 'x' }), 'error', 'a String that is not an int: Java throws');
  t.equal(
    compileSql92("a = 5 OR b = 'x'").matches({ a: 'x', b: 'x' }),
    false,
    'a throw anywhere fails the whole expression',
  );
  t.equal(compileSql92('a = 5').evaluate({}), null);
  t.equal(compileSql92('a = 3000000000').matches({ a: '3000000000' }), true, 'a literal beyond int is a Long');
  t.equal(compileSql92('a > 5.0').matches({ a: 'NaN' }), true, 'Double.compare puts NaN above everything');
});

t.test('the lexer is linear on "--" without a line end (issue 29, H1: it was quadratic)', async (t) => {
  const { TokenStream } = await import('../../protocol/sql92/lexer.js');
  for (const n of [1000, 100_000]) {
    const src = `a = ${'-'.repeat(n)}1`;
    const ts = new TokenStream(src);
    let tokens = 0;
    while (ts.consume().kind !== 'EOF') tokens++;
    t.equal(tokens, n + 3, `${n} dashes: every "-" is a token (no line end, so no comment)`);
    t.ok(
      ts.lineEndScanned <= src.length + 1,
      `${n} dashes: ${ts.lineEndScanned} characters read looking for line ends, at most the expression's ${src.length} + 1`,
    );
  }
  // a line end after them: the first "--" starts a comment that runs to it
  const withEnd = new TokenStream(`a = 1 --${'-'.repeat(1000)}\n OR b = 2`);
  const kinds: string[] = [];
  for (let k = withEnd.consume(); k.kind !== 'EOF'; k = withEnd.consume()) kinds.push(k.kind);
  t.same(
    kinds,
    ['ID', '=', 'DECIMAL', 'OR', 'ID', '=', 'DECIMAL'],
    'the comment runs to its line end, the tokens after it are read',
  );
  t.same(
    compileSql92(`a = ${'-'.repeat(4)}1`).evaluate({ a: '1' } as never),
    compileSql92('a = 1').evaluate({ a: '1' } as never),
    'an even run of "-" without a line end is a double negation, as before',
  );
});
