import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import type { DecodedFrame } from '../../lib/capture/index.js';
import type { Finding } from '../../lib/capture/doctor/finding.js';
import {
  escapeHtml,
  jsonForScript,
  MAX_BUCKETS,
  renderReport,
  TimelineCollector,
  type ReportData,
} from '../../lib/capture/report/index.js';
import { createRequest, encodeCommand, RequestCode } from '../../protocol/index.js';
import { runCli } from '../cli/run-in-process.js';
import { pullFound, pullRequest } from './build-pcap.js';
import { decodeForReport, HOSTILE_GROUP, HOSTILE_TOPIC, reportCapture } from './report-fixture.js';

const dir = mkdtempSync(join(tmpdir(), 'rocketwire-report-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const capture = join(dir, 'c.pcap');
writeFileSync(capture, reportCapture());

/** The embedded data block of a report. */
function dataOf(html: string): ReportData {
  const m = /<script type="application\/json" id="data">([^<]*)<\/script>/.exec(html);
  if (!m) throw new Error('no data block');
  return JSON.parse(m[1]!) as ReportData;
}

const sum = (xs: readonly (number | null)[]): number => xs.reduce<number>((a, b) => a + (b ?? 0), 0);

t.test('decode --report writes the page and says where, in one line', async (t) => {
  const out = join(dir, 'r.html');
  const r = await runCli(['decode', capture, '--report', out]);
  t.equal(r.code, 0);
  t.equal(r.stderr, '');
  t.equal(r.stdout, `report written to ${out}\n`);
  const html = readFileSync(out, 'utf8');
  t.match(html, /^<!DOCTYPE html>/);
  t.same(
    readdirSync(dir).filter((f) => f.endsWith('.tmp')),
    [],
    'no temporary file left',
  );
  // Written again: the file is replaced whole.
  t.equal((await runCli(['decode', capture, '--report', out])).code, 0);
  t.equal(readFileSync(out, 'utf8'), html, 'the same capture gives the same page');
});

t.test("the report's numbers are --stats --json's, and its timelines add up to them", async (t) => {
  const out = join(dir, 'numbers.html');
  t.equal((await runCli(['decode', capture, '--report', out])).code, 0);
  const stats = JSON.parse((await runCli(['decode', capture, '--stats', '--json'])).stdout);
  const data = dataOf(readFileSync(out, 'utf8'));
  t.same(data.stats, stats, 'the embedded statistics are the same object');
  const tl = data.timelines;
  t.equal(tl.unit, 'ms');
  t.equal(tl.bucketWidth, 500, '30 s of capture in 500 ms buckets');
  t.equal(tl.buckets, 60, 'the last frame comes just under 30 s after the first');
  t.equal(tl.origin, Math.floor(stats.firstTs * 1000));
  t.equal(tl.queues.length, stats.queues.length);
  for (const q of stats.queues) {
    const line = tl.queues.find(
      (x) => x.group === q.group && x.topic === q.topic && x.queueId === q.queueId && x.broker === q.broker,
    );
    if (!line) {
      t.fail(`no timeline for ${q.topic}:${q.queueId}`);
      continue;
    }
    t.equal(sum(line.pulls), q.pulls, `${q.topic}:${q.queueId} pulls`);
    t.equal(sum(line.answered), q.pulls - q.unanswered, 'answered pulls');
    t.equal(sum(line.found), q.pullResults.FOUND ?? 0, 'FOUND pulls');
    t.equal(sum(line.messages), q.pullResults.messages ?? 0, 'messages found');
    t.equal([...line.committed].reverse().find((v) => v !== null) ?? null, q.lastCommit, 'last committed offset');
    for (const a of [line.pulls, line.answered, line.messages, line.committed, line.maxOffset, line.lag])
      t.equal(a.length, tl.buckets);
  }
  for (const r of tl.requestRates)
    t.equal(sum(r.requests), stats.byCode[r.name].requests, `${r.name} requests over time`);
  t.same(
    tl.requestRates.map((r) => r.name),
    Object.keys(stats.byCode),
  );
  for (const [name, row] of Object.entries(stats.byCode) as [string, { latencyMs: { count: number } | null }][]) {
    if (row.latencyMs === null) t.notOk(data.latencyHistograms[name], `${name} has no latencies`);
    else t.equal(sum(data.latencyHistograms[name]!), row.latencyMs.count, `${name} histogram counts every response`);
  }
  // The stalled queue: commits stay at 100 while maxOffset climbs, so the lag grows to 268 - 100.
  const stalled = tl.queues.find((q) => q.topic === 'Orders' && q.queueId === 1)!;
  const lag = stalled.lag.filter((v): v is number => v !== null);
  t.equal(lag[lag.length - 1], 168);
  t.ok(
    lag.every((v, i) => i === 0 || v >= lag[i - 1]!),
    'never shrinks',
  );
  const keeping = tl.queues.find((q) => q.topic === 'Orders' && q.queueId === 0)!;
  t.ok(
    keeping.lag.every((v) => v === null || v <= 5),
    'the queue that keeps up lags by at most one pull',
  );
});

t.test('capture strings are escaped everywhere: text, attributes, the data block', async (t) => {
  const { stats, timelines } = decodeForReport(reportCapture());
  const evil = '<svg onload="window.__pwned=3"></svg>';
  const findings: Finding[] = [
    {
      check: `lag-growing${evil}`,
      severity: 'error',
      summary: `committed offsets of ${HOSTILE_GROUP} do not advance`,
      meaning: `the consumer is stuck ${evil}`,
      evidence: {
        firstMs: 1_700_000_000_000,
        lastMs: 1_700_000_030_000,
        flow: evil,
        queue: `${HOSTILE_TOPIC}//3`,
        group: HOSTILE_GROUP,
        count: 1,
      },
    },
  ];
  const html = renderReport({ stats, timelines: timelines.toJSON(), findings, source: `x${evil}.pcap` });
  for (const s of [HOSTILE_GROUP, HOSTILE_TOPIC, evil, '<b>x</b>']) t.notOk(html.includes(s), `never raw: ${s}`);
  t.ok(html.includes(escapeHtml(HOSTILE_GROUP)), 'the group is there, escaped');
  t.ok(html.includes(escapeHtml(HOSTILE_TOPIC)), 'the topic is there, escaped');
  t.equal(html.match(/<script/g)!.length, 2, 'only the data block and the report\u2019s own script');
  t.equal(
    html.match(/<svg/g)!.length,
    (html.match(/<svg class="chart/g) ?? []).length,
    'every svg element is a chart of ours',
  );
  t.notMatch(html, /<img|<svg onload|<b>/i, 'no tag from the capture');
  const data = dataOf(html);
  t.equal(data.findings![0]!.evidence.flow, evil, 'the data block reads back unchanged');
  t.ok((data.stats as { groups: string[] }).groups.includes(HOSTILE_GROUP));
  t.equal(jsonForScript({ s: '</script><!--\u2028' }), '{"s":"\\u003c/script\\u003e\\u003c!--\\u2028"}');
});

t.test('self-contained: no address outside the page, one script allowed by its hash', async (t) => {
  const { stats, timelines } = decodeForReport(reportCapture());
  const html = renderReport({ stats, timelines: timelines.toJSON(), findings: [] });
  t.notMatch(html, /https?:\/\/|\/\/[a-z0-9.-]+\.[a-z]{2,}\//i, 'no URL');
  t.notMatch(html, /<(link|iframe|object|embed|img)\b/i);
  const csp = /<meta http-equiv="Content-Security-Policy" content="([^"]+)">/.exec(html)?.[1];
  t.ok(csp, 'a CSP');
  t.match(csp, /default-src 'none'/);
  const script = /<script>([\s\S]*?)<\/script>/.exec(html)![1]!;
  t.ok(
    csp!.includes(`'sha256-${createHash('sha256').update(script).digest('base64')}'`),
    'the CSP names the script by hash',
  );
  t.match(html, /<p id="findings-none">The doctor found nothing wrong\.<\/p>/, 'no findings');
  const notRun = renderReport({ stats, timelines: timelines.toJSON(), findings: null });
  t.match(notRun, /The doctor did not run on this capture\./, 'the doctor not run is not "nothing found"');
});

t.test('bad --report use is one line', async (t) => {
  const missing = join(dir, 'no-such-dir', 'r.html');
  const r = await runCli(['decode', capture, '--report', missing]);
  t.equal(r.code, 1);
  t.equal(r.stderr, `rocketwire decode: cannot write ${missing}: ENOENT\n`);
  t.equal(r.stdout, '');
  const d = await runCli(['decode', capture, '--report', dir]);
  t.equal(d.code, 1, 'a directory as the file');
  t.equal(d.stderr, `rocketwire decode: cannot write ${dir}: EISDIR\n`);
  t.same(
    readdirSync(dir).filter((f) => f.endsWith('.tmp')),
    [],
    'no temporary file left after a failed rename',
  );
  for (const other of ['--stats', '--json', '--msgpack']) {
    const u = await runCli(['decode', capture, '--report', join(dir, 'u.html'), other]);
    t.equal(u.code, 2, `--report with ${other}`);
    t.match(u.stderr, /--report excludes --stats, --json and --msgpack/);
    t.equal(u.stderr.trim().split('\n').length, 1);
  }
  const bad = await runCli(['decode', join(dir, 'nope.pcap'), '--report', join(dir, 'nope.html')]);
  t.equal(bad.code, 1);
  t.equal(bad.stderr, `rocketwire decode: cannot read ${join(dir, 'nope.pcap')}: ENOENT\n`);
  t.same(
    readdirSync(dir).filter((f) => f.startsWith('nope') || f.endsWith('.tmp')),
    [],
    'nothing written for a missing input',
  );
});

t.test('a file of frames (no capture times) is charted over frame numbers', async (t) => {
  const frames: Buffer[] = [];
  for (let i = 0; i < 5; i++) {
    const p = pullRequest(10 + i, {
      topic: 'T',
      group: 'g',
      queueId: 0,
      queueOffset: i * 2,
      commitOffset: i * 2,
      sysFlag: 3,
    });
    frames.push(encodeCommand(p), encodeCommand(pullFound(p, 2)));
  }
  frames.push(
    encodeCommand(
      createRequest(RequestCode.UPDATE_CONSUMER_OFFSET, {
        opaque: 99,
        oneway: true,
        extFields: { consumerGroup: 'g', topic: 'T', queueId: '0', commitOffset: '10' },
      }),
    ),
  );
  const file = join(dir, 'frames.bin');
  writeFileSync(file, Buffer.concat(frames));
  const out = join(dir, 'frames.html');
  t.equal((await runCli(['decode', file, '--report', out])).code, 0);
  const html = readFileSync(out, 'utf8');
  const data = dataOf(html);
  t.equal(data.timelines.unit, 'frame');
  t.equal(data.timelines.buckets, 11, 'one bucket a frame');
  t.same(data.timelines.queues[0]!.pulls, [1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 0]);
  t.same(data.timelines.queues[0]!.lag.slice(-1), [0], 'maxOffset 10, committed 10');
  t.match(html, /the charts run over frame numbers/);
  t.match(html, />frame 0</);
});

function pullFrame(ts: number, opaque: number, offset: number): DecodedFrame {
  const cmd = pullRequest(opaque, {
    topic: 'T',
    group: 'g',
    queueId: 0,
    queueOffset: offset,
    commitOffset: offset,
    sysFlag: 3,
  });
  return {
    cmd,
    ts,
    src: '10.0.0.5:1',
    dst: '10.0.0.1:10911',
    packet: opaque,
    offset: 0,
    frameLength: 100,
    request: null,
  };
}

t.test('a long capture stays within MAX_BUCKETS: buckets widen and keep their totals and latest values', async (t) => {
  const c = new TimelineCollector();
  // Three hours, one pull a second, each committing its own number.
  for (let i = 0; i < 3 * 3600; i++) c.add(pullFrame(1_700_000_000 + i, i + 1, i));
  const tl = c.toJSON();
  t.ok(tl.buckets <= MAX_BUCKETS);
  t.equal(tl.bucketWidth, 60_000, 'minutes');
  t.equal(tl.buckets, 180);
  const q = tl.queues[0]!;
  t.ok(
    q.pulls.every((n) => n === 60),
    'sixty pulls in every minute',
  );
  t.same(q.committed.slice(0, 3), [59, 119, 179], 'a bucket keeps its latest commit');
  t.equal(sum(tl.requestRates[0]!.requests), 3 * 3600);
  // A frame slightly before the first one (two flows interleaved) counts in the first bucket.
  c.add(pullFrame(1_699_999_999, 0, 0));
  t.equal(c.toJSON().queues[0]!.pulls[0], 61);
});

t.test('a capture that lost data still gets its report, and the exit code says so', async (t) => {
  const c = reportCapture();
  const cut = join(dir, 'cut.pcap');
  writeFileSync(cut, c.subarray(0, c.length - 5));
  const out = join(dir, 'cut.html');
  const r = await runCli(['decode', cut, '--report', out]);
  t.equal(r.code, 1);
  t.match(r.stderr, /^rocketwire decode: capture truncated: .*\n$/);
  t.equal(r.stdout, `report written to ${out}\n`);
  const html = readFileSync(out, 'utf8');
  t.equal((dataOf(html).stats as { problems: { lost: number } }).problems.lost, 1);
  t.match(html, /<b data-field="problems\.lost">1<\/b>/, 'shown on the page');
});
