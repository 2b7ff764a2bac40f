// Our SQL92 parser and evaluator against Apache RocketMQ's own SqlFilter: the vectors were written
// by test/interop/vectors/Sql92Vectors.java (FilterFactory "SQL92", evaluated as the broker's
// ExpressionMessageFilter does) from the cases in test/interop/vectors/sql92-cases.json.
import { readFileSync } from 'node:fs';
import t from 'tap';
import {
  SQL92_DEFAULT_MAX_LENGTH,
  SQL92_DEFAULT_MAX_NODES,
  compileSql92,
  SqlParseError,
} from '../../protocol/sql92/index.js';
import { fixturePath } from './vectors-fixtures.js';

interface Sql92Vectors {
  version: string;
  propertySets: Record<string, Record<string, string>>;
  cases: {
    expression: string;
    compiles: boolean;
    javaError?: string;
    results?: Record<string, boolean | null | 'error'>;
  }[];
}

for (const version of ['5.3.3']) {
  const v = JSON.parse(readFileSync(fixturePath(`vectors/sql92-${version}.json`), 'utf8')) as Sql92Vectors;

  t.test(`${version}: the expressions Java refuses, we refuse, naming a position inside the expression`, async (t) => {
    const refused = v.cases.filter((c) => !c.compiles);
    t.ok(refused.length >= 30, `${refused.length} refused expressions in the table`);
    for (const c of refused) {
      const err = t.throws(
        () => compileSql92(c.expression),
        SqlParseError,
        `${JSON.stringify(c.expression)} (Java: ${c.javaError})`,
      ) as SqlParseError;
      if (err instanceof SqlParseError) {
        t.ok(
          err.position >= 0 && err.position <= c.expression.length,
          `${JSON.stringify(c.expression)}: position ${err.position} is inside`,
        );
      }
    }
  });

  t.test(`${version}: the expressions Java compiles evaluate as Java's on every property set`, async (t) => {
    const compiled = v.cases.filter((c) => c.compiles);
    t.ok(compiled.length >= 100, `${compiled.length} compiled expressions in the table`);
    let checked = 0;
    const diffs: string[] = [];
    for (const c of compiled) {
      const f = compileSql92(c.expression);
      for (const [set, want] of Object.entries(c.results!)) {
        checked++;
        const got = f.evaluate(v.propertySets[set]!);
        if (got !== want)
          diffs.push(`${JSON.stringify(c.expression)} on ${set}: Java ${String(want)}, ours ${String(got)}`);
        // the broker delivers on TRUE only
        if (f.matches(v.propertySets[set]!) !== (want === true))
          diffs.push(`${JSON.stringify(c.expression)} on ${set}: matches() disagrees`);
      }
    }
    t.same(diffs, [], `${checked} evaluations equal Java's`);
  });

  t.test(
    `${version}: nodes bound every evaluation, and Java's expressions are far inside the default limits`,
    async (t) => {
      let maxLength = 0;
      let maxNodes = 0;
      const over: string[] = [];
      for (const c of v.cases.filter((c) => c.compiles)) {
        const f = compileSql92(c.expression, {
          maxLength: SQL92_DEFAULT_MAX_LENGTH,
          maxNodes: SQL92_DEFAULT_MAX_NODES,
        });
        maxLength = Math.max(maxLength, c.expression.length);
        maxNodes = Math.max(maxNodes, f.nodes);
        for (const set of Object.keys(c.results!)) {
          const meter = { steps: 0 };
          f.evaluate(v.propertySets[set]!, meter);
          if (meter.steps < 1 || meter.steps > f.nodes)
            over.push(`${JSON.stringify(c.expression)} on ${set}: ${meter.steps} steps, ${f.nodes} nodes`);
        }
      }
      t.same(over, [], "an evaluation takes at least one step and at most the expression's nodes");
      t.ok(
        maxLength * 100 < SQL92_DEFAULT_MAX_LENGTH && maxNodes * 100 < SQL92_DEFAULT_MAX_NODES,
        `longest ${maxLength} characters, most ${maxNodes} nodes`,
      );
    },
  );
}
