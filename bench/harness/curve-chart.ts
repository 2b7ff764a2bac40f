/**
 * One chart from several `rocketwire bench --curve … --json` runs (the docs' charts: every run's
 * line, so the spread shows):
 *
 *   node dist/bench/harness/curve-chart.js OUT.svg "TITLE" run1.json run2.json …
 */
import * as fs from 'node:fs';
import { renderCurveSvg, type ChartSeries } from './chart.js';
import type { CurvePoint } from './curve.js';
import { sizeSeries, type SizePoint } from './curve-size.js';

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
  if (axis === 'size') {
    series.push(...sizeSeries(run.points as unknown as SizePoint[], `, run ${i + 1}`));
    return;
  }
  series.push({ name: `rocketwire, run ${i + 1}`, points: run.points.map((p) => [p.x, p.rocketwire.msgsPerSec]) });
  const java = run.points.filter((p) => p.java);
  if (java.length > 0) series.push({ name: `Java, run ${i + 1}`, points: java.map((p) => [p.x, p.java!.msgsPerSec]) });
});
// rocketwire's runs first, then Java's, then the floor's, so the legend groups them
const rank = (name: string) => (name.startsWith('Java') ? 1 : name.startsWith('floor') ? 2 : 0);
series.sort((a, b) => rank(a.name) - rank(b.name));
const xLabel =
  axis === 'size'
    ? 'body size, bytes'
    : axis === 'queues'
      ? 'queues of the one topic'
      : 'topics subscribed (4 queues each)';
fs.writeFileSync(out, renderCurveSvg(title, xLabel, axis === 'size' ? 'MB/s of bodies' : 'messages / s', series));
