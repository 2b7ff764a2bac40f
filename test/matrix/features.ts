/**
 * What `npm run test:matrix` runs and what docs/compatibility.md shows: the suite runs (a test file
 * of test/interop with an environment), and the cells (feature × broker column), each proven by
 * some of a run's top-level tests, or not applicable / not run with the reason. run-matrix.ts runs
 * the runs and writes results.json; render.ts turns results.json into the page with the notes below.
 */

export const COLUMNS = ['4.9.7', '5.3.3', '5.5.0', '5.5.0-proxy'] as const;
export type Column = (typeof COLUMNS)[number];

export const COLUMN_TITLES: Record<Column, string> = {
  '4.9.7': 'Apache 4.9.7',
  '5.3.3': 'Apache 5.3.3',
  '5.5.0': 'Apache 5.5.0',
  '5.5.0-proxy': 'Apache 5.5.0 through the proxy',
};

/** One test file run once: `node dist/test/interop/<suite>.test.js` with `env`. */
export interface SuiteRun {
  /** Stable key in results.json, e.g. 'real-broker-pop@5.5.0'. */
  id: string;
  suite: string;
  env: Record<string, string>;
}

/** A part of a run's results: its top-level tests whose names match `only` (all when absent). */
export interface Proof {
  run: string;
  /** Regular expression source matched against top-level test names. */
  only?: string;
  /** Top-level names matching this are left out. */
  except?: string;
}

export type CellPlan =
  | { kind: 'run'; proofs: Proof[]; note?: string; passedMeans?: 'unsupported' }
  | { kind: 'not-applicable'; reason: string }
  | { kind: 'not-run'; reason: string };

export interface Feature {
  key: string;
  title: string;
  cells: Record<Column, CellPlan>;
}

const FEATURE_SUITES = ['transaction', 'timer', 'sql', 'trace', 'pop', 'lite-pull', 'admin', 'reply'] as const;
const V5_COLUMNS = ['5.3.3', '5.5.0'] as const;

const runId = (suite: string, version: string): string => `${suite}@${version}`;

export const RUNS: SuiteRun[] = [
  ...V5_COLUMNS.flatMap((v) =>
    FEATURE_SUITES.map((f) => ({
      id: runId(`real-broker-${f}`, v),
      suite: `real-broker-${f}`,
      env: { ROCKETWIRE_V5_VERSION: v },
    })),
  ),
  // 5.3.3, 5.5.0 and 4.9.7 in one file, one top-level test per release
  { id: 'rocketwire-real-broker', suite: 'rocketwire-real-broker', env: {} },
  { id: 'real-broker-v4@4.9.7', suite: 'real-broker-v4', env: {} },
  { id: 'real-broker-proxy@5.5.0', suite: 'real-broker-proxy', env: {} },
];

const NOT_ON_497 =
  'not run: the feature suites assume a 5.x broker (API codes, answers and versions they pin); 4.9.7 is proven for the first row only';
const NOT_THROUGH_PROXY =
  'not run: real-broker-proxy.test.ts covers the first row and POP; the feature suites talk to the broker directly';
const NO_TIMER_STORE = "not applicable: 4.9.7's broker has no timer store (timer messages came with 5.0)";
const NO_POP = "not applicable: 4.9.7's broker has no POP (PopMessageProcessor came with 5.0)";

function v5(suite: string, extra: Partial<Record<Column, CellPlan>> & { note?: string }): Record<Column, CellPlan> {
  const { note, ...over } = extra;
  const cell = (v: string): CellPlan => ({
    kind: 'run',
    proofs: [{ run: runId(`real-broker-${suite}`, v) }],
    ...(note ? { note } : {}),
  });
  return {
    '4.9.7': { kind: 'not-run', reason: NOT_ON_497 },
    '5.3.3': cell('5.3.3'),
    '5.5.0': cell('5.5.0'),
    '5.5.0-proxy': { kind: 'not-run', reason: NOT_THROUGH_PROXY },
    ...over,
  };
}

export const FEATURES: Feature[] = [
  {
    key: 'basics',
    title: 'Producer and push consumer (plain, batch, tags, retry, orderly, shared group with Java)',
    cells: {
      '4.9.7': {
        kind: 'run',
        proofs: [{ run: 'rocketwire-real-broker', only: '^real RocketMQ 4\\.9\\.7$' }, { run: 'real-broker-v4@4.9.7' }],
        note: "with real-broker-v4.test.ts: 4.9's wire differences (route JSON, heartbeat, offset answers) and raw pulls",
      },
      '5.3.3': { kind: 'run', proofs: [{ run: 'rocketwire-real-broker', only: '^real RocketMQ 5\\.3\\.3$' }] },
      '5.5.0': { kind: 'run', proofs: [{ run: 'rocketwire-real-broker', only: '^real RocketMQ 5\\.5\\.0$' }] },
      '5.5.0-proxy': {
        kind: 'run',
        proofs: [{ run: 'real-broker-proxy@5.5.0', except: '^POP ' }],
        note: "the proxy's remoting endpoint as the name server: sends, concurrent and orderly push consumers, retry, offsets; a topic needs message.type=NORMAL for plain sends",
      },
    },
  },
  {
    key: 'transactions',
    title: 'Transactions (commit, rollback, check-back; Java both ways)',
    cells: v5('transaction', {
      '5.5.0': {
        kind: 'run',
        proofs: [{ run: runId('real-broker-transaction', '5.5.0') }],
        note: "broker check timings shortened for the test; 5.5.0's committed record no longer carries REAL_TOPIC and REAL_QID (5.3.3's does), and the suite checks each release's record",
      },
      note: 'broker check timings shortened for the test (transactionCheckInterval=1000, transactionTimeOut=3000)',
    }),
  },
  {
    key: 'timers',
    title: 'Timer messages (delayMs / deliverAt) and namespaces',
    cells: v5('timer', {
      '4.9.7': { kind: 'not-applicable', reason: NO_TIMER_STORE },
      note: "needs timerWheelEnable=true (Apache's default; the suite's brokers turn it off unless asked)",
    }),
  },
  {
    key: 'sql92',
    title: 'SQL92 filters (push, lite pull, POP; Java both ways)',
    cells: v5('sql', { note: 'needs enablePropertyFilter=true on the broker (default false)' }),
  },
  {
    key: 'trace',
    title: 'Message trace (Pub/Sub records read by mqadmin queryMsgTraceById)',
    cells: v5('trace', { note: 'needs traceTopicEnable=true (or a trace topic created by hand)' }),
  },
  {
    key: 'pop',
    title: 'POP (SimpleConsumer, push consumer in POP mode, with Java in one group)',
    cells: v5('pop', {
      '4.9.7': { kind: 'not-applicable', reason: NO_POP },
      '5.5.0-proxy': {
        kind: 'run',
        proofs: [{ run: 'real-broker-proxy@5.5.0', only: '^POP ' }],
        passedMeans: 'unsupported',
        note: 'remoting POP does not work through the proxy: the SimpleConsumer refuses with PopNotSupportedError and sends no POP (the test proves the refusal)',
      },
      note: 'needs timerWheelEnable=true: without it the broker answers "pop message is forbidden"',
    }),
  },
  {
    key: 'lite-pull',
    title: "Lite pull (with Java's DefaultLitePullConsumer in one group, seek)",
    cells: v5('lite-pull', {}),
  },
  {
    key: 'admin',
    title: '`rocketwire admin` compared with mqadmin on the same cluster',
    cells: v5('admin', {
      '5.5.0': {
        kind: 'run',
        proofs: [{ run: runId('real-broker-admin', '5.5.0') }],
        note: "5.5.0's broker re-creates a group at once when mqadmin deleteSubGroup removes it (autoCreateSubscriptionGroup on): it stays listed with the defaults, and the suite checks that on 5.5.0; its mqadmin pretty-prints topicRoute",
      },
    }),
  },
  {
    key: 'reply',
    title: 'Request–reply (Java both ways)',
    cells: v5('reply', {
      note: "the Java requester is the 5.5.0 client: the 5.3.3 client's sync request() gives up once its request is stored",
    }),
  },
];
