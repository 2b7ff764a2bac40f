import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import t from 'tap';
import type { Finding } from '../../lib/capture/doctor/finding.js';
import { renderReport } from '../../lib/capture/report/index.js';
import { runCli } from '../cli/run-in-process.js';
import { Browser, CHROMIUM, hasChromium } from './report-browser.js';
import { decodeForReport, HOSTILE_GROUP, HOSTILE_TOPIC, reportCapture } from './report-fixture.js';

// The report as a person sees it: headless Chromium (Debian's package, installed by
// .ci/install-deps) opens the page written by `decode --report`; nothing may fail on the way, and
// the numbers on the page must be those of `decode --stats --json`. CI sets
// ROCKETWIRE_REQUIRE_JAVA, so there the test must run.

const required = process.env.ROCKETWIRE_REQUIRE_JAVA !== undefined && process.env.ROCKETWIRE_REQUIRE_JAVA !== '';
const has = hasChromium();

/** Read back, in the page, what it shows: texts of the marked fields, sums of the chart marks. */
const READ_PAGE = `(() => {
  const fields = (root) => { const o = {}; root.querySelectorAll('[data-field]').forEach((e) => { o[e.getAttribute('data-field')] = e.textContent; }); return o; };
  const sumV = (root, sel) => Array.from(root.querySelectorAll(sel)).reduce((a, e) => a + Number(e.getAttribute('data-v')), 0);
  const values = (root, sel) => Array.from(root.querySelectorAll(sel)).map((e) => Number(e.getAttribute('data-v')));
  const codes = Array.from(document.querySelectorAll('#codes tbody tr')).map((tr) => Object.assign({ code: Number(tr.getAttribute('data-code')) }, fields(tr)));
  const hist = {};
  document.querySelectorAll('#histograms [data-code]').forEach((d) => { hist[d.getAttribute('data-code')] = sumV(d, 'rect[data-v]'); });
  const queues = Array.from(document.querySelectorAll('section.queue')).map((sec) => Object.assign(fields(sec), {
    charts: Array.from(sec.querySelectorAll('svg[data-chart]')).map((s) => s.getAttribute('data-chart')),
    chartWidths: Array.from(sec.querySelectorAll('svg[data-chart]')).map((s) => Math.round(s.getBoundingClientRect().width)),
    pullBars: sumV(sec, 'svg[data-chart="pulls"] g[data-series="pulls"] rect'),
    messageBars: sumV(sec, 'svg[data-chart="pulls"] g[data-series="messages"] rect'),
    lag: values(sec, 'svg[data-chart="lag"] circle[data-v]'),
    committed: values(sec, 'svg[data-chart="offsets"] g[data-series="committed"] circle[data-v]'),
    findings: Array.from(sec.querySelectorAll('.qfind li')).map((l) => l.textContent),
  }));
  const pullResults = {};
  document.querySelectorAll('#pull-results [data-status]').forEach((e) => { pullResults[e.getAttribute('data-status')] = Number(e.textContent); });
  const findings = Array.from(document.querySelectorAll('#findings-table tbody tr')).map((tr) => Array.from(tr.cells).map((c) => c.textContent));
  const none = document.getElementById('findings-none');
  // The one script sorts a table by a click on its head: requests, ascending.
  document.querySelectorAll('#codes th')[1].click();
  const sortedCodes = Array.from(document.querySelectorAll('#codes tbody tr')).map((tr) => Number(tr.getAttribute('data-code')));
  return {
    summary: fields(document.getElementById('summary')), codes, hist, queues, pullResults, findings,
    findingsNone: none ? none.textContent : null, sortedCodes,
    rateLines: document.querySelectorAll('svg[data-chart="request-rates"] g[data-series]').length,
    images: document.images.length, scripts: document.scripts.length, pwned: window.__pwned === undefined ? null : window.__pwned,
    localTime: (document.getElementById('local-time') || {}).textContent || '',
    embedded: JSON.parse(document.getElementById('data').textContent).stats,
    title: document.title,
  };
})()`;

interface Page {
  summary: Record<string, string>;
  codes: (Record<string, string> & { code: number })[];
  hist: Record<string, number>;
  queues: (Record<string, string> & {
    charts: string[];
    chartWidths: number[];
    pullBars: number;
    messageBars: number;
    lag: number[];
    committed: number[];
    findings: string[];
  })[];
  pullResults: Record<string, number>;
  findings: string[][];
  findingsNone: string | null;
  sortedCodes: number[];
  rateLines: number;
  images: number;
  scripts: number;
  pwned: unknown;
  localTime: string;
  embedded: unknown;
  title: string;
}

interface Latency {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}
interface Stats {
  frames: number;
  requests: number;
  onewayRequests: number;
  responses: number;
  unpairedResponses: number;
  bytes: number;
  byCode: Record<
    string,
    {
      code: number;
      requests: number;
      responses: number;
      requestBytes: number;
      responseBytes: number;
      latencyMs: Latency | null;
    }
  >;
  pullResults: Record<string, number>;
  queues: {
    group: string;
    topic: string;
    queueId: number;
    broker: string | null;
    pulls: number;
    unanswered: number;
    pullResults: Record<string, number>;
    commitCount: number;
    firstCommit: number | null;
    lastCommit: number | null;
    regressions: number;
    pullLatencyMs: Latency | null;
  }[];
  problems: { lost: number };
}

const shown = (v: number | null | undefined): string => (v === null || v === undefined ? '-' : String(v));

t.test(
  'the report renders in headless Chromium, without errors, showing the numbers of --stats --json',
  {
    skip:
      !required && !has
        ? `${CHROMIUM} is not installed (apt-get install chromium; set ROCKETWIRE_REQUIRE_JAVA to make this test mandatory)`
        : false,
  },
  async (t) => {
    t.ok(has, `${CHROMIUM} runs`);
    if (!has) return;
    const dir = mkdtempSync(join(tmpdir(), 'rocketwire-report-chromium-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const capture = join(dir, 'c.pcap');
    writeFileSync(capture, reportCapture());
    const file = join(dir, 'report.html');
    t.equal((await runCli(['decode', capture, '--report', file])).code, 0);
    const stats = JSON.parse((await runCli(['decode', capture, '--stats', '--json'])).stdout) as Stats;
    const doctored = await runCli(['decode', capture, '--doctor', '--json']);
    const doctor = JSON.parse(doctored.stdout) as { findings: Finding[] };
    t.equal(doctored.code, 3, 'the doctor finds the stalled queue, the SYSTEM_BUSY and the held poll of the fixture');

    const browser = await Browser.launch();
    t.teardown(() => browser.close());
    const shot = process.env.ROCKETWIRE_REPORT_SCREENSHOT;
    const { value: page, errors } = await browser.open<Page>(
      pathToFileURL(file).href,
      READ_PAGE,
      shot ? (png) => writeFileSync(shot, png) : undefined,
    );
    t.same(
      errors,
      { exceptions: [], consoleErrors: [], logErrors: [], requests: [] },
      'no exception, no console or CSP error, no request',
    );

    t.same(page.embedded, stats, 'the data block');
    t.same(page.summary, {
      frames: String(stats.frames),
      requests: String(stats.requests),
      onewayRequests: String(stats.onewayRequests),
      responses: String(stats.responses),
      unpairedResponses: String(stats.unpairedResponses),
      bytes: String(stats.bytes),
      queues: String(stats.queues.length),
      'problems.lost': String(stats.problems.lost),
      findings: String(doctor.findings.length),
    });
    t.same(
      page.codes.map((c) => c.code),
      Object.values(stats.byCode).map((r) => r.code),
      'a row per request code',
    );
    for (const row of page.codes) {
      const [name, r] = Object.entries(stats.byCode).find(([, v]) => v.code === row.code)!;
      t.equal(row.name, name);
      for (const k of ['requests', 'responses', 'requestBytes', 'responseBytes'] as const)
        t.equal(row[k], String(r[k]), `${name} ${k}`);
      for (const k of ['p50', 'p90', 'p99', 'max'] as const)
        t.equal(row[`latencyMs.${k}`], shown(r.latencyMs?.[k]), `${name} ${k}`);
      if (r.latencyMs)
        t.equal(page.hist[String(r.code)], r.latencyMs.count, `${name}: the histogram's bars add up to its responses`);
      else t.notOk(String(r.code) in page.hist, `${name}: no histogram without latencies`);
    }
    const byRequests = Object.values(stats.byCode)
      .sort((a, b) => a.requests - b.requests)
      .map((r) => r.code);
    t.same(page.sortedCodes, byRequests, 'the table sorts by a click (the script ran)');
    t.equal(page.rateLines, Object.keys(stats.byCode).length, 'a request-rate line per code');
    t.same(page.pullResults, stats.pullResults);
    t.equal(page.findingsNone, null, 'the doctor ran');
    t.same(
      page.findings.map((r) => r.slice(0, 3)),
      doctor.findings.map((f) => [f.severity, f.check, f.summary + f.meaning]),
      'the findings of decode --doctor (what was seen, then what it means), in its order',
    );

    t.equal(page.queues.length, stats.queues.length, 'a section per consumer queue');
    page.queues.forEach((q, i) => {
      const s = stats.queues[i]!;
      const what = `${s.topic}:${s.queueId}`;
      t.same(
        [q.group, q.topic, q.queueId, q.broker],
        [s.group, s.topic, String(s.queueId), s.broker ?? undefined],
        `${what}: its names, as text`,
      );
      for (const k of ['pulls', 'unanswered', 'commitCount', 'firstCommit', 'lastCommit', 'regressions'] as const)
        t.equal(q[k], shown(s[k]), `${what} ${k}`);
      t.equal(q.messages, String(s.pullResults.messages ?? 0), `${what} messages`);
      t.equal(q['pullLatencyMs.p50'], shown(s.pullLatencyMs?.p50));
      t.equal(q['pullLatencyMs.max'], shown(s.pullLatencyMs?.max));
      t.same(q.charts, ['pulls', 'offsets', 'lag'], `${what}: three charts`);
      t.ok(
        q.chartWidths.every((w) => w > 300),
        `${what}: the charts are laid out`,
      );
      t.equal(q.pullBars, s.pulls, `${what}: the pull bars add up to its pulls`);
      t.equal(q.messageBars, s.pullResults.messages ?? 0, `${what}: the message bars add up to its messages`);
      if (s.lastCommit !== null)
        t.equal(
          q.committed[q.committed.length - 1],
          s.lastCommit,
          `${what}: the committed line ends at the last commit`,
        );
    });
    const stalled = page.queues.find((q) => q.topic === 'Orders' && q.queueId === '1')!;
    t.equal(stalled.lag[stalled.lag.length - 1], 168, 'the stalled queue ends 168 behind');
    t.ok(
      stalled.lag.every((v, i) => i === 0 || v >= stalled.lag[i - 1]!),
      'and its lag never shrank',
    );
    t.equal(
      page.queues.find((q) => q.group === HOSTILE_GROUP)?.topic,
      HOSTILE_TOPIC,
      'the hostile names shown as text',
    );
    t.equal(page.images, 0, 'no element made from a capture string');
    t.equal(page.scripts, 2, 'the data block and the report\u2019s script, no other');
    t.equal(page.pwned, null, 'no capture string ran');
    t.match(page.localTime, /your time zone/);
    t.match(page.title, /^rocketwire capture report: /);

    // Findings built by hand: their evidence rendered, and each on its own queue only.
    const { stats: s2, timelines } = decodeForReport(reportCapture());
    const findings: Finding[] = [
      {
        check: 'lag-growing',
        severity: 'error',
        summary: 'committed offset of cg-orders on Orders/broker-a/1 stays at 100 while maxOffset goes 108 → 268',
        meaning: 'the consumer does not finish messages: a handler that hangs, or a consumer that is gone',
        evidence: {
          firstMs: 1_700_000_000_000,
          lastMs: 1_700_000_030_000,
          queue: 'Orders/broker-a/1',
          group: 'cg-orders',
          count: 60,
        },
      },
      {
        check: 'error-response',
        severity: 'warning',
        summary: `SYSTEM_BUSY to SEND_MESSAGE_V2 <script>window.__pwned=4</script>`,
        meaning: 'the broker sheds load',
        evidence: {
          firstMs: 1_700_000_010_100,
          lastMs: 1_700_000_010_100,
          flow: '10.0.0.6:50001 -> 10.0.0.1:10911',
          code: 2,
          opaque: 5,
          count: 1,
        },
      },
    ];
    const withFindings = join(dir, 'findings.html');
    writeFileSync(withFindings, renderReport({ stats: s2, timelines: timelines.toJSON(), findings, source: 'c.pcap' }));
    const second = await browser.open<Page>(pathToFileURL(withFindings).href, READ_PAGE);
    t.same(second.errors, { exceptions: [], consoleErrors: [], logErrors: [], requests: [] });
    t.equal(second.value.summary.findings, '2');
    t.same(
      second.value.findings.map((r) => r.slice(0, 2)),
      [
        ['error', 'lag-growing'],
        ['warning', 'error-response'],
      ],
    );
    t.match(second.value.findings[1]![2], /<script>window\.__pwned=4<\/script>/, 'shown as text');
    t.match(
      second.value.findings[0]![3],
      /^2023-11-14T22:13:20\.000Z … 2023-11-14T22:13:50\.000Z, group cg-orders, queue Orders\/broker-a\/1, seen 60×$/,
    );
    t.match(second.value.findings[1]![3], /flow 10\.0\.0\.6:50001 -> 10\.0\.0\.1:10911, opaque 5, code 2, seen 1×/);
    t.same(
      second.value.queues.find((q) => q.queueId === '1')!.findings,
      [`lag-growing: ${findings[0]!.summary}`],
      'the finding also sits on its queue',
    );
    t.same(second.value.queues.find((q) => q.queueId === '0')!.findings, [], 'and on no other');
    t.equal(second.value.pwned, null);
  },
);
