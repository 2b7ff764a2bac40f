/**
 * One chart from several `rocketwire bench --curve members [--simulated] --json` runs (every run's
 * lines, so the spread shows):
 *
 *   node dist/bench/harness/members-chart.js OUT.svg "TITLE" run1.json run2.json …
 *
 * The process curve: total msgs/s by processes, rocketwire's and Java's. The simulated curve: ms to
 * converge after a join and after a leave, by members.
 */
import * as fs from 'node:fs';
import { renderCurveSvg, type ChartSeries } from './chart.js';
import type { MembersPoint } from './members.js';
import type { SimPoint } from './members-sim.js';

const [out, title, ...files] = process.argv.slice(2);
if (!out || !title || files.length === 0) {
  process.stderr.write('usage: members-chart.js OUT.svg TITLE RUN.json…\n');
  process.exit(2);
}
const series: ChartSeries[] = [];
let simulated = false;
const runsOf = new Map<string, number>();
for (const file of files) {
  const run = JSON.parse(fs.readFileSync(file, 'utf8')) as { axis: string; broker: string; points: unknown[] };
  // a run on --namesrv is a real broker's (members-real.js); the runs are numbered per broker
  const broker = /name server/.test(run.broker) ? 'Apache' : 'embedded';
  runsOf.set(broker, (runsOf.get(broker) ?? 0) + 1);
  const label = `${broker} run ${runsOf.get(broker)}`;
  if (run.axis === 'members-simulated') {
    simulated = true;
    const points = (run.points as SimPoint[]).filter((p) => p.failed === undefined);
    series.push({ name: `after a join, ${label}`, points: points.map((p) => [p.members, p.join.ms]) });
    series.push({ name: `after a leave, ${label}`, points: points.map((p) => [p.members, p.leave.ms]) });
  } else {
    const points = run.points as MembersPoint[];
    const ok = points.filter((p) => !p.rocketwire.failed);
    series.push({ name: `rocketwire, ${label}`, points: ok.map((p) => [p.processes, p.rocketwire.msgsPerSec]) });
    const java = points.filter((p) => p.java && !p.java.failed);
    if (java.length > 0)
      series.push({ name: `Java, ${label}`, points: java.map((p) => [p.processes, p.java!.msgsPerSec]) });
  }
}
series.sort((a, b) => Number(a.name.startsWith('Java')) - Number(b.name.startsWith('Java')));
fs.writeFileSync(
  out,
  simulated
    ? renderCurveSvg(title, 'members in the group', 'ms to converge', series)
    : renderCurveSvg(title, 'consumer processes in the group', 'messages / s', series),
);
