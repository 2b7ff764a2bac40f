/**
 * Reads the TAP 14 stream a tap test file prints when run by node (subtests indented by four
 * spaces, each opened by `# Subtest: name` and closed by its own test point) into its top-level
 * tests: whether each passed, how many subtests it holds, and the names of the failed assertions.
 * Assertion counts are left out on purpose: they follow the data (one per message in some suites),
 * so results.json would change with every run for nothing.
 */

export interface TopLevelTest {
  name: string;
  ok: boolean;
  /** Subtests at any depth below this one, itself included, that passed / failed. */
  passed: number;
  failed: number;
  /** Failed test points below it, as `parent › child › assertion`, the first few only. */
  failures: string[];
}

export interface TapSummary {
  tests: TopLevelTest[];
  /** Failed assertions outside any subtest (e.g. a throw while the file set up its cluster). */
  fileFailures: string[];
  /** `1..0 # SKIP reason` at the top: the file skipped itself. */
  skipped?: string;
}

const POINT = /^((?: {4})*)(not ok|ok) \d+(?: - (.*?))?(?: # (SKIP|TODO)\S*(?: (.*))?| # time=.*)?$/i;
const SUBTEST = /^((?: {4})*)# Subtest: (.*)$/;
const MAX_FAILURES = 5;

interface Open {
  name: string;
  test?: TopLevelTest;
}

export function parseTap(text: string): TapSummary {
  const summary: TapSummary = { tests: [], fileFailures: [] };
  // the names of the subtests open at each depth (depth = indent / 4)
  const open: Open[] = [];
  let inYaml = -1;
  for (const line of text.split('\n')) {
    if (inYaml >= 0) {
      if (/^\s*\.\.\.\s*$/.test(line) && line.indexOf('...') === inYaml) inYaml = -1;
      continue;
    }
    const yaml = /^(\s*)---\s*$/.exec(line);
    if (yaml) {
      inYaml = yaml[1]!.length;
      continue;
    }
    const skip = /^1\.\.0 # SKIP\s*(.*)$/i.exec(line);
    if (skip) {
      summary.skipped = skip[1] || 'skipped';
      continue;
    }
    const sub = SUBTEST.exec(line);
    if (sub) {
      const depth = sub[1]!.length / 4;
      open.length = depth;
      const name = sub[2]!;
      open[depth] = depth === 0 ? { name, test: { name, ok: true, passed: 0, failed: 0, failures: [] } } : { name };
      continue;
    }
    const point = POINT.exec(line);
    if (!point) continue;
    const depth = point[1]!.length / 4;
    const ok = point[2]!.toLowerCase() === 'ok';
    const name = (point[3] ?? '').trim();
    const isSubtest = open.length === depth + 1 && open[depth]!.name === name;
    const top = open[0]?.test;
    if (isSubtest) {
      if (top) {
        countInto(top, ok);
        if (depth === 0) {
          top.ok = ok;
          summary.tests.push(top);
        }
      }
      open.length = depth;
      continue;
    }
    if (ok) continue;
    const path = [...open.slice(0, depth).map((o) => o.name), name].join(' › ');
    if (depth === 0 || !top) summary.fileFailures.push(path);
    else if (top.failures.length < MAX_FAILURES) top.failures.push(path);
  }
  return summary;
}

function countInto(test: TopLevelTest, ok: boolean): void {
  if (ok) test.passed++;
  else test.failed++;
}
