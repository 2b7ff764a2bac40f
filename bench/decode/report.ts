/**
 * What `decode --report` costs beside `decode --stats`: a synthetic capture (Ethernet/IPv4/TCP)
 * of QUEUES consumer queues pulling 32 messages of 1 KiB every 12 s for ROUNDS_OF_PULLS rounds is
 * decoded in process with DecodeStats alone (the baseline, what --stats does) and with DecodeStats
 * plus the report's TimelineCollector, alternately, then the page is rendered. Warm-up, several
 * rounds, the median; the ratio is what to compare across machines. JSON on stdout.
 *
 *   node dist/bench/decode/report.js [--rounds 7] [--queues 64] [--pulls 50]
 */
import { CaptureDecoder, DecodeStats } from '../../lib/capture/index.js';
import { renderReport, TimelineCollector } from '../../lib/capture/report/index.js';
import { encodeCommand } from '../../protocol/index.js';
import {
  LINKTYPE,
  linkAll,
  pcap,
  pullFound,
  pullRequest,
  TcpConnection,
  type Packet,
} from '../../test/capture/build-pcap.js';

const args = process.argv.slice(2);
function opt(name: string, dflt: number): number {
  const i = args.indexOf(name);
  return i >= 0 && args[i + 1] !== undefined ? Number(args[i + 1]) : dflt;
}
const ROUNDS = opt('--rounds', 7);
const QUEUES = opt('--queues', 64);
const PULLS = opt('--pulls', 50);

function capture(): Buffer {
  const conns = Array.from(
    { length: 16 },
    (_, i) => new TcpConnection({ ip: '10.0.0.5', port: 50000 + i }, { ip: '10.0.0.1', port: 10911 }),
  );
  const pkts: Packet[] = conns.flatMap((c) => c.handshake());
  let opaque = 1;
  const offsets = new Array<number>(QUEUES).fill(0);
  for (let round = 0; round < PULLS; round++) {
    for (let q = 0; q < QUEUES; q++) {
      const c = conns[q % conns.length]!;
      c.ts = Math.max(c.ts, 1_700_000_000 + round * 12 + q * 0.1);
      const p = pullRequest(opaque++, {
        topic: 'Bench',
        group: 'cg',
        queueId: q,
        queueOffset: offsets[q]!,
        commitOffset: offsets[q]!,
        sysFlag: 3,
      });
      pkts.push(
        ...c.send(true, encodeCommand(p)),
        ...c.send(false, encodeCommand(pullFound(p, 32, { bodySize: 1024 }))),
      );
      offsets[q]! += 32;
    }
  }
  pkts.sort((a, b) => a.ts - b.ts);
  return pcap(linkAll('ethernet', pkts), { linkType: LINKTYPE.ethernet });
}

function decode(
  input: Buffer,
  withTimelines: boolean,
): { ms: number; stats: DecodeStats; timelines: TimelineCollector } {
  const stats = new DecodeStats();
  const timelines = new TimelineCollector();
  const t0 = performance.now();
  const d = new CaptureDecoder({
    frame: (f) => {
      stats.add(f);
      if (withTimelines) timelines.add(f);
    },
    problem: (p) => stats.addProblem(p),
  });
  for (let i = 0; i < input.length; i += 1 << 20) d.push(input.subarray(i, i + (1 << 20)));
  d.end();
  return { ms: performance.now() - t0, stats, timelines };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const input = capture();
const base: number[] = [];
const both: number[] = [];
const render: number[] = [];
let pageBytes = 0;
for (let r = 0; r <= ROUNDS; r++) {
  const a = decode(input, false);
  const b = decode(input, true);
  const t0 = performance.now();
  const html = renderReport({ stats: b.stats, timelines: b.timelines.toJSON(), findings: [] });
  const rms = performance.now() - t0;
  pageBytes = Buffer.byteLength(html);
  if (r === 0) continue; // warm-up
  base.push(a.ms);
  both.push(b.ms);
  render.push(rms);
}
console.log(
  JSON.stringify({
    captureBytes: input.length,
    queues: QUEUES,
    pullsPerQueue: PULLS,
    rounds: ROUNDS,
    statsMs: Math.round(median(base)),
    statsAndTimelinesMs: Math.round(median(both)),
    timelineOverhead: Math.round((median(both) / median(base)) * 1000) / 1000,
    renderMs: Math.round(median(render)),
    pageBytes,
  }),
);
