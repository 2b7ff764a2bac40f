/**
 * One chart from several `rocketwire bench --curve … --json` runs (the docs' charts: every run's
 * line, so the spread shows):
 *
 *   node dist/bench/harness/curve-chart.js OUT.svg "TITLE" run1.json run2.json …
 */
import * as fs from 'node:fs';
import { renderCurveSvg, type ChartSeries } from './chart.js';
import type { CurvePoint } from './curve.js';

const [out, title, ...files] = process.argv.slice(2);
if (!out || !title || files.length === 0) {
  process.stderr.write('usage: curve-chart.js OUT.svg TITLE RUN.json…\n');
  process.exit(2);
}
let axis = 'queues';
const series: ChartSeries[] = [];
files.forEach((file, i) => {
  const run = JSON.parse(fs.readFileSync(file, 'utf8')) as { axis: string; points: CurvePoint[] };
  axis = run.axis;
  series.push({ name: `rocketwire, run ${i + 1}`, points: run.points.map((p) => [p.x, p.rocketwire.msgsPerSec]) });
  const java = run.points.filter((p) => p.java);
  if (java.length > 0) series.push({ name: `Java, run ${i + 1}`, points: java.map((p) => [p.x, p.java!.msgsPerSec]) });
});
// rocketwire's runs first, then Java's, so the legend groups them
series.sort((a, b) => Number(a.name.startsWith('Java')) - Number(b.name.startsWith('Java')));
const xLabel = axis === 'queues' ? 'queues of the one topic' : 'topics subscribed (4 queues each)';
fs.writeFileSync(out, renderCurveSvg(title, xLabel, 'messages / s', series));
