// The matrix's own logic, without a broker: reading a tap file's TAP output into top-level tests,
// a cell's outcome from the runs (a failure, a crash outside the tests, a missing run and a skip all
// fail it), the page's refusal to render from a results file without every cell, and
// ROCKETWIRE_V5_VERSION's check.
import t from 'tap';
import { v5FromEnv } from '../support/maven-jars.js';
import { COLUMNS, FEATURES, RUNS } from './features.js';
import { renderCompatibility } from './render.js';
import { cellResult, type MatrixResults, type RunResult } from './results.js';
import { parseTap } from './tap-results.js';

const TAP = `TAP version 14
# Subtest: real RocketMQ 5.5.0: POP
    # Subtest: receive and ack
        ok 1 - popped 10
        not ok 2 - acked every handle
          ---
          found: 9
          wanted: 10
          ...
        1..2
    not ok 1 - receive and ack # time=12ms
    # Subtest: invisible time
        ok 1 - back after the invisible time
        1..1
    ok 2 - invisible time # time=1ms
    1..2
not ok 1 - real RocketMQ 5.5.0: POP # time=100ms
# Subtest: bad input
    ok 1 - refused
    1..1
ok 2 - bad input # time=3ms
1..2
`;

t.test('parseTap: top-level tests, subtests counted, failed assertions named by path', async (t) => {
  const s = parseTap(TAP);
  t.same(
    s.tests.map((x) => [x.name, x.ok, x.passed, x.failed]),
    [
      ['real RocketMQ 5.5.0: POP', false, 1, 2],
      ['bad input', true, 1, 0],
    ],
  );
  t.same(s.tests[0]!.failures, ['real RocketMQ 5.5.0: POP › receive and ack › acked every handle']);
  t.same(s.fileFailures, []);
  t.equal(s.skipped, undefined);
});

t.test('parseTap: a failure outside any test and a skipped file', async (t) => {
  const crashed = parseTap(
    'TAP version 14\nnot ok 1 - connect ECONNREFUSED 127.0.0.1:9876\n  ---\n  stack: x\n  ...\n1..1\n',
  );
  t.same(crashed.tests, []);
  t.same(crashed.fileFailures, ['connect ECONNREFUSED 127.0.0.1:9876']);
  t.equal(parseTap('TAP version 14\n1..0 # SKIP java not found\n').skipped, 'java not found');
});

function run(id: string, tap: string, exit: number | string = 0): RunResult {
  const s = parseTap(tap);
  return { id, suite: 'x', env: {}, exit, seconds: 1, tests: s.tests, fileFailures: s.fileFailures };
}

t.test('cellResult: pass, fail, a filtered proof, an unsupported refusal, no run', async (t) => {
  const r = run('pop@5.5.0', TAP, 1);
  const plan = { kind: 'run' as const, proofs: [{ run: 'pop@5.5.0' }] };
  const failed = cellResult('pop', '5.5.0', plan, [r]);
  t.equal(failed.outcome, 'fail');
  t.match(failed.reason, /acked every handle/);
  t.same([failed.passed, failed.failed], [2, 2]);

  const good = cellResult('x', '5.5.0', { kind: 'run', proofs: [{ run: 'pop@5.5.0', only: '^bad input$' }] }, [r]);
  t.equal(good.outcome, 'pass', 'the passing top-level test alone proves its cell');
  t.same(good.proofs, ['pop@5.5.0: bad input']);

  const refused = cellResult(
    'x',
    '5.5.0-proxy',
    { kind: 'run', proofs: [{ run: 'pop@5.5.0', only: '^bad' }], passedMeans: 'unsupported', note: 'refused' },
    [r],
  );
  t.same([refused.outcome, refused.reason], ['unsupported', 'refused']);

  t.equal(cellResult('x', '5.5.0', { kind: 'run', proofs: [{ run: 'nope' }] }, [r]).outcome, 'fail');
  const none = cellResult('x', '5.5.0', { kind: 'run', proofs: [{ run: 'pop@5.5.0', only: '^nothing' }] }, [r]);
  t.equal(none.outcome, 'fail', 'a proof with no test behind it is no proof');

  const crash = run('c', 'TAP version 14\nnot ok 1 - boom\n1..1\n', 1);
  t.equal(cellResult('x', '5.5.0', { kind: 'run', proofs: [{ run: 'c' }] }, [crash]).outcome, 'fail');
  const killed = run('k', '# Subtest: a\n    ok 1 - a\n    1..1\nok 1 - a\n', 'SIGKILL');
  t.equal(cellResult('x', '5.5.0', { kind: 'run', proofs: [{ run: 'k', only: '^a$' }] }, [killed]).outcome, 'fail');
  const skipped = { ...run('s', 'TAP version 14\n1..0 # SKIP java not found\n'), skipped: 'java not found' };
  t.equal(cellResult('x', '5.5.0', { kind: 'run', proofs: [{ run: 's' }] }, [skipped]).outcome, 'fail');

  t.same(cellResult('pop', '4.9.7', { kind: 'not-applicable', reason: 'no POP' }, []), {
    feature: 'pop',
    column: '4.9.7',
    outcome: 'not-applicable',
    reason: 'no POP',
    passed: 0,
    failed: 0,
    proofs: [],
  });
});

t.test('the page: every cell present or a clear refusal; a failed cell shows FAIL with its cause', async (t) => {
  const ok = '# Subtest: real RocketMQ 5.3.3\n    ok 1 - a\n    1..1\nok 1 - real RocketMQ 5.3.3\n';
  const runs = RUNS.map((r) => run(r.id, r.id === 'real-broker-pop@5.5.0' ? TAP : ok));
  const results: MatrixResults = {
    date: '2026-01-01',
    wallSeconds: 61,
    runs,
    cells: FEATURES.flatMap((f) => COLUMNS.map((c) => cellResult(f.key, c, f.cells[c], runs))),
  };
  const page = renderCompatibility(results);
  t.match(page, /\| POP [^\n]*\| \*\*FAIL\*\* \(2\/4\) \[\d+\]/);
  t.match(page, /failed: real RocketMQ 5\.5\.0: POP › receive and ack › acked every handle/);
  t.match(page, /took 1 min 1 s/);
  t.throws(() => renderCompatibility({ ...results, cells: results.cells.slice(1) }), /npm run test:matrix/);
});

t.test('ROCKETWIRE_V5_VERSION: 5.3.3 when unset, a 5.x.y release, anything else refused', async (t) => {
  t.equal(v5FromEnv(undefined), '5.3.3');
  t.equal(v5FromEnv(''), '5.3.3');
  t.equal(v5FromEnv('5.5.0'), '5.5.0');
  t.throws(() => v5FromEnv('4.9.7'), /ROCKETWIRE_V5_VERSION must be a 5\.x\.y/);
  t.throws(() => v5FromEnv('latest'), /ROCKETWIRE_V5_VERSION/);
});
