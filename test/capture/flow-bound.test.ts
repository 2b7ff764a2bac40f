import t from 'tap';
import v8 from 'node:v8';
import vm from 'node:vm';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CaptureDecoder, CaptureOptionError, type CaptureProblem, type DecodedFrame } from '../../lib/capture/index.js';
import { CaptureDoctor } from '../../lib/capture/doctor/index.js';
import { DecodeStats } from '../../lib/capture/stats.js';
import { flowFloodPcap } from '../../bench/hostile/capture-flows.js';
import {
  createRequest,
  createResponse,
  encodeCommand,
  linkAll,
  pcap,
  TcpConnection,
  type Packet,
} from './build-pcap.js';
import { decodeCli } from './decode-cli.js';

// State kept for every TCP flow until its FIN or the end of the capture would let 200 000 flows of
// one partial frame each take 565 MB, 1 M flows (an 82 MB pcap) over 1 GB. Flows are bounded
// (maxFlows, least recently active evicted) and finished after
// flowIdleTimeoutMs of capture time; what they hold is bounded too (maxTotalBufferedBytes).

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;
const MiB = 1024 * 1024;

function decode(
  file: Buffer,
  options: ConstructorParameters<typeof CaptureDecoder>[1] = {},
  end = true,
): { decoder: CaptureDecoder; problems: CaptureProblem[]; frames: DecodedFrame[] } {
  const problems: CaptureProblem[] = [];
  const frames: DecodedFrame[] = [];
  const decoder = new CaptureDecoder({ frame: (f) => frames.push(f), problem: (p) => problems.push(p) }, options);
  for (let i = 0; i < file.length; i += MiB) decoder.push(file.subarray(i, i + MiB));
  if (end) decoder.end();
  return { decoder, problems, frames };
}

t.test(
  '200 000 flows of one partial frame each: flows held stay within maxFlows, and every flow is reported',
  async (t) => {
    const n = 200_000;
    const file = flowFloodPcap(n);
    t.equal(file.length, 24 + n * 82, '82 bytes of pcap per flow');
    gc();
    const before = process.memoryUsage().heapUsed;
    const problems: CaptureProblem[] = [];
    let evictedProblems = 0;
    let incomplete = 0;
    const decoder = new CaptureDecoder({
      frame: () => t.fail('no frame'),
      problem: (p) => {
        if (p.kind === 'flow-evicted') evictedProblems++;
        else if (p.kind === 'incomplete-frame') incomplete++;
        else problems.push(p);
      },
    });
    for (let i = 0; i < file.length; i += MiB) decoder.push(file.subarray(i, i + MiB));
    t.equal(decoder.openFlows, 65536, 'the default maxFlows');
    t.equal(decoder.counters.peakFlows, 65536, 'never more flows held than maxFlows');
    t.ok(
      decoder.counters.peakBufferedBytes <= 65536 * 12,
      `bytes held ${decoder.counters.peakBufferedBytes}: 12 per flow held`,
    );
    gc();
    // 65 536 flows of about 1 KiB each; before the bound, 200 000 flows of 2.5 KiB (565 MB RSS).
    const grown = process.memoryUsage().heapUsed - before;
    t.ok(
      grown < 160 * MiB,
      `heap grew by ${(grown / MiB).toFixed(1)} MiB with ${decoder.openFlows} flows held (bound 160 MiB)`,
    );
    t.equal(decoder.counters.flowsEvicted, n - 65536);
    t.equal(evictedProblems, n - 65536, "each evicted flow is a 'flow-evicted' problem");
    t.equal(incomplete, n - 65536, 'and its cut frame is reported as before');
    decoder.end();
    t.equal(incomplete, n, 'every cut frame reported by the end');
    t.equal(decoder.openFlows, 0);
    t.same(problems, [], 'nothing else');
  },
);

t.test('opened flows with lower caps: flows and partial bytes held both stay within their caps', async (t) => {
  const n = 5000;
  const maxFlows = 1000;
  const maxTotalBufferedBytes = MiB;
  // A SYN, then 12 bytes of a 1 MiB frame: the framer is in sync and keeps a 4 KiB buffer per flow.
  const { decoder, problems } = decode(flowFloodPcap(n, { shape: 'opened' }), { maxFlows, maxTotalBufferedBytes });
  t.ok(decoder.counters.peakFlows <= maxFlows, `peak ${decoder.counters.peakFlows} flows (cap ${maxFlows})`);
  // one segment adds one flow's buffer before the bound is enforced
  t.ok(
    decoder.counters.peakBufferedBytes <= maxTotalBufferedBytes + 4096,
    `peak ${decoder.counters.peakBufferedBytes} bytes held (cap ${maxTotalBufferedBytes})`,
  );
  t.equal(decoder.counters.flowsEvicted, n - maxFlows);
  t.ok(decoder.counters.bufferLimitDrops > 0, 'the byte cap acted too');
  t.equal(problems.filter((p) => p.kind === 'flow-evicted').length, n - maxFlows);
  t.equal(decoder.bufferedBytes, 0);
});

t.test(
  'flows idle past flowIdleTimeoutMs of capture time are finished, their cut frame reported with the reason',
  async (t) => {
    // 100 flows one second apart; a flow is finished 10 s after its packet
    const { decoder, problems } = decode(flowFloodPcap(100, { spacingMicros: 1_000_000 }), {
      flowIdleTimeoutMs: 10_000,
    });
    t.ok(decoder.counters.peakFlows <= 11, `at most 11 flows held at once (${decoder.counters.peakFlows})`);
    t.equal(decoder.counters.flowsIdleClosed, 89, 'all but the last 11 finished as idle');
    t.equal(decoder.counters.flowsEvicted, 0);
    t.equal(problems.length, 100, 'one problem per flow');
    t.ok(problems.every((p) => p.kind === 'incomplete-frame' && p.lost));
    t.equal(
      problems[0]!.message,
      '10.0.0.0:1024 > 10.255.0.1:10911: stream ends inside what looks like a frame at byte 0 (12 of 1048576 bytes, its header incomplete): ' +
        'flow idle for over 10 s of capture time (flowIdleTimeoutMs) (packet 12)',
      'the same report as at the end of the capture, with the reason',
    );
    t.equal(
      problems[99]!.message,
      '10.0.0.0:1123 > 10.255.0.1:10911: stream ends inside what looks like a frame at byte 0 (12 of 1048576 bytes, its header incomplete) (packet 100)',
      'flows still open at the end: reported as before',
    );
    // capture time, not the wall clock: the same flows 1 ms apart are all held to the end
    const fast = decode(flowFloodPcap(100, { spacingMicros: 1000 }), { flowIdleTimeoutMs: 10_000 });
    t.equal(fast.decoder.counters.flowsIdleClosed, 0);
    t.equal(fast.decoder.counters.peakFlows, 100);
  },
);

t.test(
  'the least recently active flow is evicted, not the oldest opened; an evicted flow decodes again later',
  async (t) => {
    const a = new TcpConnection({ ip: '10.1.0.1', port: 40001 }, { ip: '10.255.0.1', port: 10911 });
    const b = new TcpConnection({ ip: '10.1.0.2', port: 40002 }, { ip: '10.255.0.1', port: 10911 });
    const c = new TcpConnection({ ip: '10.1.0.3', port: 40003 }, { ip: '10.255.0.1', port: 10911 });
    const req = (opaque: number): Buffer => encodeCommand(createRequest(105, { opaque, extFields: { topic: 'T' } }));
    const packets: Packet[] = [
      ...a.handshake(),
      ...a.send(true, req(1)),
      ...b.handshake(),
      ...b.send(true, req(2)),
      ...a.send(true, req(3)), // a is the most recently active now
      ...c.handshake(), // a third flow: b goes
      ...c.send(true, req(4)),
      ...b.send(true, req(5)), // b again: a new flow (joined mid-way), and a (idle longer than c) goes
    ];
    const { decoder, problems, frames } = decode(pcap(linkAll('ethernet', packets), { linkType: 1 }), { maxFlows: 2 });
    t.same(
      frames.map((f) => `${f.src} #${f.cmd.opaque}`),
      ['10.1.0.1:40001 #1', '10.1.0.2:40002 #2', '10.1.0.1:40001 #3', '10.1.0.3:40003 #4', '10.1.0.2:40002 #5'],
      'every frame decoded, the evicted flow again after it came back',
    );
    const evicted = problems.filter((p) => p.kind === 'flow-evicted');
    t.same(
      evicted.map((p) => p.flow),
      ['10.1.0.2:40002 > 10.255.0.1:10911', '10.1.0.1:40001 > 10.255.0.1:10911'],
      'b went first though a was opened before it (a was active since), then a',
    );
    t.match(
      evicted[0]!.message,
      /10\.1\.0\.2:40002 > 10\.255\.0\.1:10911: flow evicted: 2 flows open \(maxFlows\), the least recently active; what it held is dropped and a later packet starts a new flow \(packet \d+\)/,
    );
    t.type(evicted[0]!.ts, 'number', 'with the capture time');
    t.equal(decoder.counters.flowsEvicted, 2);
    t.equal(problems.length, 2, 'nothing was cut: only the evictions');
  },
);

t.test('options are checked and named', async (t) => {
  const h = { frame: () => undefined, problem: () => undefined };
  t.throws(() => new CaptureDecoder(h, { maxFlows: 0 }), {
    name: 'CaptureOptionError',
    errorCode: 'ERR_CAPTURE_OPTION',
    option: 'maxFlows',
    limit: 1,
  });
  t.throws(() => new CaptureDecoder(h, { flowIdleTimeoutMs: -1 }), {
    name: 'CaptureOptionError',
    message: /flowIdleTimeoutMs must be an integer >= 0, got -1/,
  });
  t.throws(() => new CaptureDecoder(h, { maxTotalBufferedBytes: 1.5 }), CaptureOptionError);
  t.match(
    new CaptureOptionError('maxFlows', 0, 1).message,
    'capture decoder option maxFlows must be an integer >= 1, got 0',
  );
});

t.test('statistics, the doctor and the report say how many flows were evicted', async (t) => {
  const file = flowFloodPcap(300);
  const stats = new DecodeStats();
  const doctor = new CaptureDoctor();
  decode(file, { maxFlows: 100 }).problems.forEach((p) => {
    stats.addProblem(p);
    doctor.addProblem(p);
  });
  const j = stats.toJSON() as { problems: Record<string, number> };
  t.same(j.problems, { lost: 500, incompleteFrames: 300, bufferLimitDrops: 0, flowsEvicted: 200 });
  t.match(
    stats.toText(),
    'problems: 500 lost (300 incomplete frames, 0 dropped at the memory bound, 200 flows evicted past maxFlows)',
  );
  const [finding, ...rest] = doctor.finish();
  t.same(rest, []);
  t.match(finding, {
    check: 'flows-evicted',
    severity: 'warning',
    evidence: { count: 200, flow: '10.0.0.0:1024 -> 10.255.0.1:10911' },
  });
  t.ok(
    Math.abs(finding!.evidence.firstMs - 1700000000000.1) < 0.01 &&
      Math.abs(finding!.evidence.lastMs - 1700000000000.3) < 0.01,
    'capture times of the first and last eviction',
  );
  // within the caps nothing is added: the statistics of ordinary captures stay as they were
  const calm = new DecodeStats();
  for (const p of decode(file).problems) calm.addProblem(p);
  t.same((calm.toJSON() as { problems: unknown }).problems, { lost: 300, incompleteFrames: 300, bufferLimitDrops: 0 });
});

t.test('the CLI: --max-flows, --max-buffered-bytes, --flow-idle-timeout', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rw-flows-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'flood.pcap');
  writeFileSync(file, flowFloodPcap(300, { spacingMicros: 100_000 }));
  const stats = await decodeCli([file, '--stats', '--json', '--max-flows', '100']);
  t.equal(stats.code, 1, 'data was lost');
  t.match(JSON.parse(stats.stdout.toString()), { problems: { flowsEvicted: 200, incompleteFrames: 300 } });
  t.match(stats.stderr, 'flow evicted: 100 flows open (maxFlows)');
  const doctor = await decodeCli([file, '--doctor', '--json', '--max-flows', '100']);
  t.equal(doctor.code, 3);
  t.match(JSON.parse(doctor.stdout.toString()), { findings: [{ check: 'flows-evicted', evidence: { count: 200 } }] });
  const report = join(dir, 'r.html');
  t.equal((await decodeCli([file, '--report', report, '--max-flows', '100'])).code, 1);
  t.match(
    readFileSync(report, 'utf8'),
    /<p id="flows-evicted"><b data-field="problems.flowsEvicted">200<\/b> flows were evicted/,
  );
  // flows 0.1 s apart, idle after 1 s: at most 11 held, no eviction, each cut frame with its reason
  const idle = await decodeCli([file, '--stats', '--json', '--flow-idle-timeout', '1']);
  t.match(JSON.parse(idle.stdout.toString()).problems, { incompleteFrames: 300 });
  t.notOk('flowsEvicted' in JSON.parse(idle.stdout.toString()).problems);
  t.match(idle.stderr, 'flow idle for over 1 s of capture time (flowIdleTimeoutMs)');
  const opened = join(dir, 'opened.pcap');
  writeFileSync(opened, flowFloodPcap(300, { shape: 'opened' }));
  const bytes = await decodeCli([opened, '--stats', '--json', '--max-buffered-bytes', '10000']);
  t.ok(JSON.parse(bytes.stdout.toString()).problems.bufferLimitDrops > 0, 'the byte cap');
  for (const [flag, value] of [
    ['--max-flows', '0'],
    ['--flow-idle-timeout', '-1'],
    ['--max-buffered-bytes', 'x'],
  ] as const) {
    const r = await decodeCli([file, flag, value]);
    t.equal(r.code, 2, `${flag} ${value}: bad usage`);
    t.match(r.stderr, flag);
  }
});

t.test(
  'requests awaiting answers are bounded across flows: the flow that asked longest ago forgets its own',
  async (t) => {
    // Before, each direction of each flow remembered up to 65 536 requests: maxFlows × 65 536 in all.
    const conns = Array.from(
      { length: 10 },
      (_, i) => new TcpConnection({ ip: `10.2.0.${i + 1}`, port: 41000 + i }, { ip: '10.255.0.1', port: 10911 }),
    );
    const packets: Packet[] = [];
    for (const [i, c] of conns.entries()) {
      packets.push(...c.handshake());
      for (let k = 0; k < 100; k++)
        packets.push(
          ...c.send(true, encodeCommand(createRequest(105, { opaque: i * 1000 + k, extFields: { topic: 'T' } }))),
        );
    }
    // the first and the last flow answer their first request
    packets.push(...conns[0]!.send(false, encodeCommand(createResponse(createRequest(105, { opaque: 0 }), 0))));
    packets.push(...conns[9]!.send(false, encodeCommand(createResponse(createRequest(105, { opaque: 9000 }), 0))));
    const { decoder, frames } = decode(
      pcap(linkAll('ethernet', packets), { linkType: 1 }),
      { maxTotalPendingRequests: 250 },
      false,
    );
    t.equal(decoder.counters.peakPendingRequests, 250, 'never more requests remembered than the cap');
    // two flows' worth held at a time: the first eight flows forgot theirs
    t.equal(decoder.counters.pendingRequestsForgotten, 800);
    t.equal(decoder.pendingRequests, 199, 'the last two flows, less the one answered');
    decoder.end();
    t.equal(decoder.pendingRequests, 0, 'nothing held after the end');
    const responses = frames
      .filter((f) => f.cmd.opaque === 0 || f.cmd.opaque === 9000)
      .filter((f) => f.src === '10.255.0.1:10911');
    t.same(
      responses.map((f) => [f.cmd.opaque, f.request?.code ?? null]),
      [
        [0, null],
        [9000, 105],
      ],
      'the flow that asked longest ago forgot, the latest did not',
    );
    t.equal(decoder.counters.flowsEvicted, 0, 'no flow was evicted for it');
  },
);
