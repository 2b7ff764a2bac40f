// `npm run check`'s last step (after `biome ci` and `tsc`): the house rules of test/rules/rules.ts
// over lib/ and protocol/. Prints one line per violation and a summary; exits 1 when any rule is
// broken.
//
//   node dist/test/rules/check.js [--json]
import { floatingPromises, loadProgram, sourceRules, type Violation } from './rules.js';
import { repoRoot } from '../api/api-report.js';

const root = repoRoot();
const started = performance.now();
const violations: Violation[] = [...sourceRules(root), ...floatingPromises(loadProgram(root), root)];
const byRule = new Map<string, number>();
for (const v of violations) byRule.set(v.rule, (byRule.get(v.rule) ?? 0) + 1);

if (process.argv.includes('--json')) {
  process.stdout.write(`${JSON.stringify({ violations, byRule: Object.fromEntries(byRule) }, null, 2)}\n`);
} else {
  for (const v of violations) process.stdout.write(`${v.file}:${v.line}  ${v.rule}  ${v.message}\n`);
  const took = ((performance.now() - started) / 1000).toFixed(1);
  if (violations.length === 0)
    process.stdout.write(
      `rules: layers, import cycles, file length, bare errors, error placement, clock, floating promises: all clean (${took} s)\n`,
    );
  else
    process.stdout.write(
      `rules: ${violations.length} violations (${[...byRule].map(([r, n]) => `${r} ${n}`).join(', ')}) (${took} s)\n`,
    );
}
process.exitCode = violations.length === 0 ? 0 : 1;
