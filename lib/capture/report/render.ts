import { createHash } from 'node:crypto';
import type { Finding } from '../doctor/finding.js';
import { LATENCY_HISTOGRAM_EDGES_MS, type DecodeStats } from '../stats.js';
import { escapeHtml, jsonForScript } from './escape.js';
import { histogramChart, timeChart, type ChartSeries } from './svg.js';
import { timelineQueueKey, type QueueTimeline, type Timelines } from './timeline.js';

export interface ReportInput {
  /** The statistics of the same frames: every number the report prints comes from its toJSON(), as `--stats --json` prints it. */
  stats: DecodeStats;
  timelines: Timelines;
  /** The doctor's findings; null when the doctor did not run (the report says so rather than "nothing found"). */
  findings: readonly Finding[] | null;
  /** What was decoded (a file name), shown in the title. */
  source?: string;
}

/** The part of `DecodeStats.toJSON()` the report reads. */
interface LatencySummary {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}
interface StatsQueue {
  group: string;
  topic: string;
  queueId: number;
  broker: string | null;
  pulls: number;
  unanswered: number;
  pullResults: Record<string, number>;
  pullLatencyMs: LatencySummary | null;
  commitCount: number;
  firstCommit: number | null;
  lastCommit: number | null;
  regressions: number;
}
interface StatsJson {
  frames: number;
  requests: number;
  onewayRequests: number;
  responses: number;
  unpairedResponses: number;
  bytes: number;
  firstTs: number | null;
  lastTs: number | null;
  byCode: Record<
    string,
    {
      code: number;
      requests: number;
      requestBytes: number;
      responses: number;
      responseBytes: number;
      responseCodes: Record<string, number>;
      latencyMs: LatencySummary | null;
    }
  >;
  pullResults: Record<string, number>;
  topics: string[];
  groups: string[];
  queues: StatsQueue[];
  problems: { lost: number; incompleteFrames: number; bufferLimitDrops: number; flowsEvicted?: number };
}

/** What the page embeds as `<script type="application/json" id="data">`. */
export interface ReportData {
  stats: Record<string, unknown>;
  timelines: Timelines;
  findings: readonly Finding[] | null;
  /** Per request code (by name, as in stats.byCode): counts per LATENCY_HISTOGRAM_EDGES_MS bucket. */
  latencyHistograms: Record<string, number[]>;
  latencyHistogramEdgesMs: readonly number[];
}

const STYLE = `
:root{--fg:#1d2330;--mute:#6b7384;--line:#d9dde5;--bg:#fff;--card:#f6f7f9;--err:#b42318;--warn:#b54708}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg);margin:0;padding:24px 32px;max-width:1100px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:32px 0 8px;border-bottom:1px solid var(--line);padding-bottom:4px}
h3{font-size:15px;margin:20px 0 6px}h3 .mute{font-weight:400;font-size:13px}.mute{color:var(--mute)}code,.mono{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12.5px}
.cards{display:flex;flex-wrap:wrap;gap:10px;margin:14px 0}.card{background:var(--card);border-radius:6px;padding:8px 12px;min-width:110px}
.card b{display:block;font-size:18px}.card span{color:var(--mute);font-size:12px}
table{border-collapse:collapse;width:100%;margin:6px 0 10px;font-size:13px}th,td{padding:4px 8px;border-bottom:1px solid var(--line);text-align:right;white-space:nowrap}
th{background:var(--card);font-weight:600;cursor:pointer;user-select:none}th:first-child,td:first-child{text-align:left}td.l,th.l{text-align:left;white-space:normal}
.sev-error{color:var(--err);font-weight:600}.sev-warning{color:var(--warn);font-weight:600}
.queue{border:1px solid var(--line);border-radius:8px;padding:4px 14px 10px;margin:14px 0}.queue h3 .mono{font-weight:400}
.nums{display:flex;flex-wrap:wrap;gap:4px 18px;font-size:13px;margin:4px 0 6px}.nums b{font-weight:600}
.hists{display:flex;flex-wrap:wrap;gap:8px}
svg.chart{display:block;max-width:100%;height:auto;margin:4px 0}
svg .ct{font-size:12px;font-weight:600;fill:var(--fg)}svg .lg{font-size:11px;fill:var(--fg)}svg .ax{font-size:10px;fill:var(--mute)}
svg .none{font-size:12px;fill:var(--mute)}svg .grid{stroke:#eceef2}svg .axis,svg .tick{stroke:#9aa1ae}
svg .line{fill:none;stroke-width:1.6}svg .area{opacity:.25;stroke:none}svg .hit{fill:transparent;stroke:none}
.s0{fill:#4e79a7;stroke:#4e79a7}.s1{fill:#f28e2b;stroke:#f28e2b}.s2{fill:#59a14f;stroke:#59a14f}.s3{fill:#e15759;stroke:#e15759}
.s4{fill:#76b7b2;stroke:#76b7b2}.s5{fill:#b07aa1;stroke:#b07aa1}.s6{fill:#9c755f;stroke:#9c755f}.s7{fill:#bab0ac;stroke:#bab0ac}
.qfind{margin:4px 0 8px;padding-left:18px;font-size:13px}
`;

/**
 * The page's one script: capture times in the reader's time zone, and tables sorted by a click
 * on a column head. It reads only the page; the Content-Security-Policy allows it by its hash and
 * nothing else (no other script, no network).
 */
const SCRIPT = `
(function(){
  var data = JSON.parse(document.getElementById('data').textContent);
  var s = data.stats;
  var el = document.getElementById('local-time');
  if (el && typeof s.firstTs === 'number') el.textContent = new Date(s.firstTs * 1000).toLocaleString() + ' (your time zone)';
  document.querySelectorAll('table.sortable').forEach(function(table){
    table.querySelectorAll('th').forEach(function(th, col){
      th.addEventListener('click', function(){
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        var dir = th.getAttribute('data-dir') === 'asc' ? -1 : 1;
        th.setAttribute('data-dir', dir === 1 ? 'asc' : 'desc');
        rows.sort(function(a, b){
          var x = a.cells[col].getAttribute('data-sort') || a.cells[col].textContent;
          var y = b.cells[col].getAttribute('data-sort') || b.cells[col].textContent;
          var nx = Number(x), ny = Number(y);
          if (x !== '' && y !== '' && !isNaN(nx) && !isNaN(ny)) return (nx - ny) * dir;
          return x < y ? -dir : x > y ? dir : 0;
        });
        rows.forEach(function(r){ body.appendChild(r); });
      });
    });
  });
})();
`;

function num(v: number | null | undefined): string {
  return v === null || v === undefined ? '-' : String(v);
}

/** "12.5 s", "3 min 20 s", "250 ms". */
function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms * 1000) / 1000} ms`;
  if (ms < 60_000) return `${Math.round(ms / 10) / 100} s`;
  if (ms < 3_600_000) return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
  return `${Math.floor(ms / 3_600_000)} h ${Math.round((ms % 3_600_000) / 60_000)} min`;
}

function histogramLabel(i: number): string {
  const e = LATENCY_HISTOGRAM_EDGES_MS;
  const f = (ms: number): string => (ms >= 1000 ? `${ms / 1000}s` : String(ms));
  return i < e.length ? f(e[i]!) : `>${f(e[e.length - 1]!)}`;
}

/** A finding's evidence as one line. */
function evidenceText(f: Finding): string {
  const e = f.evidence;
  const parts: string[] = [];
  parts.push(
    e.firstMs === e.lastMs
      ? new Date(e.firstMs).toISOString()
      : `${new Date(e.firstMs).toISOString()} … ${new Date(e.lastMs).toISOString()}`,
  );
  if (e.flow !== undefined) parts.push(`flow ${e.flow}`);
  if (e.opaque !== undefined) parts.push(`opaque ${e.opaque}`);
  if (e.group !== undefined) parts.push(`group ${e.group}`);
  if (e.queue !== undefined) parts.push(`queue ${e.queue}`);
  if (e.code !== undefined) parts.push(`code ${e.code}`);
  parts.push(`seen ${e.count}×`);
  return parts.join(', ');
}

/** Does a finding's queue ("topic/brokerName/queueId", brokerName possibly empty) name this timeline's queue? */
function findingOnQueue(f: Finding, q: StatsQueue): boolean {
  const e = f.evidence;
  if (e.queue === undefined) return false;
  if (e.group !== undefined && e.group !== q.group) return false;
  const first = e.queue.indexOf('/');
  const last = e.queue.lastIndexOf('/');
  if (first < 0 || last === first) return false;
  return e.queue.slice(0, first) === q.topic && e.queue.slice(last + 1) === String(q.queueId);
}

function findingsTable(findings: readonly Finding[]): string {
  const rows = findings.map(
    (f, i) =>
      `<tr data-finding="${i}"><td class="l sev-${f.severity === 'error' ? 'error' : 'warning'}">${escapeHtml(f.severity)}</td>` +
      `<td class="l mono">${escapeHtml(f.check)}</td><td class="l">${escapeHtml(f.summary)}<div class="mute">${escapeHtml(f.meaning)}</div></td>` +
      `<td class="l mono">${escapeHtml(evidenceText(f))}</td></tr>`,
  );
  return `<table class="sortable" id="findings-table"><thead><tr><th class="l">severity</th><th class="l">check</th><th class="l">what was seen</th><th class="l">evidence</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

/** Renders the self-contained HTML report: inline CSS, inline SVG, one inline script allowed by hash, no network. */
export function renderReport(input: ReportInput): string {
  const statsJson = input.stats.toJSON();
  const s = statsJson as unknown as StatsJson;
  const tl = input.timelines;
  const latencyHistograms: Record<string, number[]> = {};
  for (const [name, row] of Object.entries(s.byCode)) {
    const h = input.stats.latencyHistogram(row.code);
    if (h) latencyHistograms[name] = h;
  }
  const data: ReportData = {
    stats: statsJson,
    timelines: tl,
    findings: input.findings,
    latencyHistograms,
    latencyHistogramEdgesMs: LATENCY_HISTOGRAM_EDGES_MS,
  };

  const span = s.firstTs !== null && s.lastTs !== null ? (s.lastTs - s.firstTs) * 1000 : null;
  const xLabel = (i: number): string =>
    tl.unit === 'frame' ? `frame ${tl.origin + i * tl.bucketWidth}` : `+${duration(i * tl.bucketWidth)}`;
  const out: string[] = [];
  const title = `rocketwire capture report${input.source !== undefined ? ': ' + input.source : ''}`;
  const scriptHash = createHash('sha256').update(SCRIPT).digest('base64');
  out.push('<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">');
  out.push(
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-${scriptHash}'; img-src data:">`,
  );
  out.push('<meta name="viewport" content="width=device-width, initial-scale=1">');
  out.push(`<title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body>`);
  out.push(`<h1>${escapeHtml(title)}</h1>`);
  if (s.firstTs !== null && s.lastTs !== null) {
    out.push(
      `<div class="mute">${escapeHtml(new Date(s.firstTs * 1000).toISOString())} … ${escapeHtml(new Date(s.lastTs * 1000).toISOString())} (${escapeHtml(duration(span!))}); <span id="local-time"></span></div>`,
    );
  } else {
    out.push('<div class="mute">A file of frames without capture times: the charts run over frame numbers.</div>');
  }
  const card = (field: string, value: number | string, label: string): string =>
    `<div class="card"><b data-field="${field}">${escapeHtml(String(value))}</b><span>${escapeHtml(label)}</span></div>`;
  const findingCount = input.findings === null ? '-' : input.findings.length;
  out.push(
    `<div class="cards" id="summary">${card('frames', s.frames, 'frames')}${card('requests', s.requests, 'requests')}${card('onewayRequests', s.onewayRequests, 'of them oneway')}` +
      `${card('responses', s.responses, 'responses')}${card('unpairedResponses', s.unpairedResponses, 'unpaired responses')}${card('bytes', s.bytes, 'bytes')}` +
      `${card('queues', s.queues.length, 'consumer queues')}${card('problems.lost', s.problems.lost, 'problems that lost data')}${card('findings', findingCount, 'findings')}</div>`,
  );
  const evicted = s.problems.flowsEvicted ?? 0;
  if (evicted > 0) {
    out.push(
      `<p id="flows-evicted"><b data-field="problems.flowsEvicted">${evicted}</b> flows were evicted: the capture held more connections at once than the decoder tracks ` +
        '(maxFlows, <code>decode --max-flows</code>); each was finished early, a frame it was inside is counted as lost, and its later frames were decoded as a new flow.</p>',
    );
  }

  // Findings first: they are why one opens the report.
  out.push('<h2 id="findings">Findings</h2>');
  if (input.findings === null)
    out.push('<p class="mute" id="findings-none">The doctor did not run on this capture.</p>');
  else if (input.findings.length === 0) out.push('<p id="findings-none">The doctor found nothing wrong.</p>');
  else out.push(findingsTable(input.findings));

  // Requests per code.
  out.push('<h2 id="requests">Requests by code</h2>');
  const codeRows = Object.entries(s.byCode).map(([name, r]) => {
    const l = r.latencyMs;
    const rate = span !== null && span > 0 ? Math.round((r.requests / (span / 1000)) * 1000) / 1000 : null;
    const codes = Object.entries(r.responseCodes)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ');
    const td = (field: string, v: number | null | undefined): string =>
      `<td data-field="${field}" data-sort="${v ?? ''}">${num(v)}</td>`;
    return (
      `<tr data-code="${r.code}"><td data-sort="${escapeHtml(name)}"><span data-field="name">${escapeHtml(name)}</span> <span class="mute">(${r.code})</span></td>` +
      td('requests', r.requests) +
      td('ratePerSecond', rate) +
      td('responses', r.responses) +
      td('latencyMs.p50', l?.p50) +
      td('latencyMs.p90', l?.p90) +
      td('latencyMs.p99', l?.p99) +
      td('latencyMs.max', l?.max) +
      td('requestBytes', r.requestBytes) +
      td('responseBytes', r.responseBytes) +
      `<td class="l" data-field="responseCodes">${escapeHtml(codes || '-')}</td></tr>`
    );
  });
  out.push(
    '<table class="sortable" id="codes"><thead><tr><th>request code</th><th>requests</th><th>per s</th><th>responses</th><th>p50 ms</th><th>p90 ms</th><th>p99 ms</th><th>max ms</th>' +
      `<th>req bytes</th><th>resp bytes</th><th class="l">response codes</th></tr></thead><tbody>${codeRows.join('')}</tbody></table>`,
  );
  // Request rates over time: the busiest codes, one line each (more would be unreadable).
  const rates = [...tl.requestRates].sort((a, b) => sum(b.requests) - sum(a.requests) || a.code - b.code).slice(0, 8);
  if (rates.length > 0) {
    const perSecond = tl.unit === 'ms' ? 1000 / tl.bucketWidth : 1;
    const series: ChartSeries[] = rates.map((r, i) => ({
      name: r.name,
      kind: 'line',
      cls: `s${i}`,
      values: r.requests.map((c) => Math.round(c * perSecond * 1000) / 1000),
    }));
    const unit =
      tl.unit === 'ms' ? `per second, buckets of ${duration(tl.bucketWidth)}` : `per ${tl.bucketWidth} frames`;
    out.push(
      timeChart({
        chart: 'request-rates',
        title: `Requests ${unit}`,
        series,
        buckets: tl.buckets,
        xLabel,
        zeroBased: true,
        height: 200,
      }),
    );
  }
  const hists = Object.entries(latencyHistograms);
  if (hists.length > 0) {
    out.push(
      '<h3>Latency histograms <span class="mute">(a bar counts the responses above the label before it, up to its own)</span></h3><div class="hists" id="histograms">',
    );
    for (const [name, counts] of hists) {
      const code = s.byCode[name]!.code;
      out.push(
        `<div data-code="${code}">${histogramChart({ chart: `latency-${code}`, title: `${name} (${code}): ${sum(counts)} responses by latency, ms`, labels: counts.map((_, i) => histogramLabel(i)), counts })}</div>`,
      );
    }
    out.push('</div>');
  }
  if (Object.keys(s.pullResults).length > 0) {
    out.push(
      `<p id="pull-results">Pull results: ${Object.entries(s.pullResults)
        .map(([k, v]) => `${escapeHtml(k)} <b data-status="${escapeHtml(k)}">${v}</b>`)
        .join(', ')}</p>`,
    );
  }

  // Consumer queues.
  out.push('<h2 id="queues">Consumer queues</h2>');
  if (s.queues.length === 0) out.push('<p class="mute">No pulls or offset commits in this capture.</p>');
  const byKey = new Map<string, QueueTimeline>(tl.queues.map((q) => [timelineQueueKey(q), q]));
  s.queues.forEach((q, qi) => {
    const t = byKey.get(timelineQueueKey(q));
    const messages = q.pullResults.messages ?? 0;
    const lastLag = t ? ([...t.lag].reverse().find((v) => v !== null) ?? null) : null;
    const n = (field: string, label: string, v: number | null): string =>
      `<span>${escapeHtml(label)} <b data-field="${field}">${num(v)}</b></span>`;
    out.push(`<section class="queue" data-queue="${qi}">`);
    out.push(
      `<h3><span data-field="group">${escapeHtml(q.group)}</span> · <span class="mono"><span data-field="topic">${escapeHtml(q.topic)}</span>:<span data-field="queueId">${q.queueId}</span>` +
        `${q.broker !== null ? ` @ <span data-field="broker">${escapeHtml(q.broker)}</span>` : ''}</span></h3>`,
    );
    out.push(
      '<div class="nums">' +
        n('pulls', 'pulls', q.pulls) +
        n('unanswered', 'unanswered at the end', q.unanswered) +
        n('messages', 'messages found', messages) +
        n('commitCount', 'commits', q.commitCount) +
        n('firstCommit', 'first commit', q.firstCommit) +
        n('lastCommit', 'last commit', q.lastCommit) +
        n('regressions', 'went backwards', q.regressions) +
        n('lag', 'lag at the end', lastLag) +
        n('pullLatencyMs.p50', 'pull p50 ms', q.pullLatencyMs?.p50 ?? null) +
        n('pullLatencyMs.max', 'pull max ms', q.pullLatencyMs?.max ?? null) +
        '</div>',
    );
    const onQueue = (input.findings ?? []).filter((f) => findingOnQueue(f, q));
    if (onQueue.length > 0) {
      out.push(
        `<ul class="qfind">${onQueue.map((f) => `<li class="sev-${f.severity === 'error' ? 'error' : 'warning'}">${escapeHtml(f.check)}: ${escapeHtml(f.summary)}</li>`).join('')}</ul>`,
      );
    }
    if (t) {
      const carry = (vs: readonly (number | null)[]): (number | null)[] => {
        let last: number | null = null;
        return vs.map((v) => (last = v ?? last));
      };
      out.push(
        timeChart({
          chart: 'pulls',
          title: 'Pulls and messages found per bucket',
          buckets: tl.buckets,
          xLabel,
          zeroBased: true,
          series: [
            { name: 'pulls', kind: 'bar', cls: 's0', values: t.pulls },
            { name: 'messages', kind: 'bar', cls: 's1', values: t.messages },
          ],
        }),
      );
      out.push(
        timeChart({
          chart: 'offsets',
          title: 'Offsets: committed and the queue\u2019s max offset',
          buckets: tl.buckets,
          xLabel,
          zeroBased: false,
          series: [
            { name: 'max offset', kind: 'line', cls: 's2', values: carry(t.maxOffset) },
            { name: 'committed', kind: 'line', cls: 's0', values: carry(t.committed) },
          ],
        }),
      );
      out.push(
        timeChart({
          chart: 'lag',
          title: 'Lag: max offset minus committed',
          buckets: tl.buckets,
          xLabel,
          zeroBased: true,
          height: 120,
          series: [{ name: 'lag', kind: 'area', cls: 's3', values: t.lag }],
        }),
      );
    }
    out.push('</section>');
  });
  if (s.topics.length > 0 || s.groups.length > 0) {
    out.push(
      `<p class="mute">Topics: ${escapeHtml(s.topics.join(', ') || '-')}. Groups: ${escapeHtml(s.groups.join(', ') || '-')}.</p>`,
    );
  }
  out.push('<p class="mute">Made by rocketwire decode --report.</p>');
  out.push(`<script type="application/json" id="data">${jsonForScript(data)}</script>`);
  out.push(`<script>${SCRIPT}</script>`);
  out.push('</body></html>\n');
  return out.join('\n');
}

function sum(xs: readonly number[]): number {
  let t = 0;
  for (const x of xs) t += x;
  return t;
}
