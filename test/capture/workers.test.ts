// `rocketwire decode --workers N`: worker threads own the TCP flows of one hash class each and
// their output is merged by packet number, so the bytes (stdout and stderr) are those of one
// decoder, whatever happens where: frames completed in many flows at once, problems found by the
// reader, by the header parser and inside flows, flows finished by the idle timeout at another
// worker's packet, flows still open at the end of the capture.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { CaptureDecoder } from '../../lib/capture/capture-decoder.js';
import { FramePrinter, type FrameOutputMode } from '../../lib/capture/frame-printer.js';
import { OutputBuffer } from '../../lib/capture/output-buffer.js';
import { ParallelDecoder } from '../../lib/capture/parallel/parallel-decoder.js';
import { encodeCommand } from '../../protocol/frame.js';
import { linkAll, LINKTYPE, pcap, pullFound, pullRequest, TcpConnection, type Packet } from './build-pcap.js';
import { decodeCli } from './decode-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'rocketwire-workers-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

const FLOWS = 12;
const ROUNDS = 6;
/** The idle timeout the captures are decoded with (seconds): flow 5 goes quiet for longer. */
const IDLE_S = 1;

/**
 * Twelve consumer connections to two brokers, their packets interleaved in time, with a problem of
 * every origin: a response segment lost (flow 3), segments out of order (flow 4), a flow that goes
 * quiet inside a frame for longer than the idle timeout while the others go on (flow 5), a packet
 * cut by the snaplen (flow 2), a reset (flow 8), a closed connection (flow 9), flows ending inside
 * a frame at the end (7 and 10), a packet whose IP header is damaged, and a last record cut short.
 */
function multiFlowCapture(): Buffer {
  const conns = Array.from(
    { length: FLOWS },
    (_, i) =>
      new TcpConnection(
        { ip: `10.0.0.${20 + i}`, port: 50000 + i },
        { ip: i % 3 === 0 ? '10.0.0.2' : '10.0.0.1', port: 10911 },
        { clientIsn: (i * 0x1f3a5c7b) >>> 0, serverIsn: (0xfffff000 + i * 977) >>> 0, ts: 1_700_000_000 + i * 0.0001 },
      ),
  );
  const pkts: Packet[] = conns.flatMap((c) => c.handshake());
  let opaque = 1;
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < FLOWS; i++) {
      const c = conns[i]!;
      if ((i === 5 && round > 1) || (i === 8 && round > 2) || (i === 9 && round > 3)) continue;
      c.ts = Math.max(c.ts, 1_700_000_000 + round * 0.4 + i * 0.003);
      const req = pullRequest(opaque++, { topic: i % 2 ? 'Orders' : 'Payments', group: `cg${i % 4}`, queueId: i % 4 });
      pkts.push(...c.send(true, encodeCommand(req)));
      const segs = c.send(false, encodeCommand(pullFound(req, 3 + (i % 3), { bodySize: 300 + i * 17 })), 700);
      if (i === 3 && round === 2) segs.splice(1, 1);
      if (i === 4 && round === 1) [segs[1], segs[2]] = [segs[2]!, segs[1]!];
      if (i === 5 && round === 1) segs.length = 1; // then quiet: finished by the idle timeout
      if ((i === 7 || i === 10) && round === ROUNDS - 1) segs.length = 2; // open at the end
      if (i === 2 && round === 3) {
        const cut = segs[1]!;
        segs[1] = { ts: cut.ts, data: cut.data.subarray(0, cut.data.length - 90), origLen: cut.data.length };
      }
      pkts.push(...segs);
      if (round % 2 === 1) pkts.push(c.ack(true));
    }
  }
  pkts.push(conns[8]!.rst(true));
  pkts.push(conns[9]!.fin(true), conns[9]!.fin(false));
  const linked = linkAll('ethernet', pkts).map((p, n) => ({ ...p, n }));
  linked.sort((a, b) => a.ts - b.ts || a.n - b.n);
  // A damaged IPv4 header (length 16) among them: the reader's problem, at its place.
  const damaged = Buffer.from(linked[40]!.data);
  damaged[14] = 0x44;
  linked.splice(41, 0, { ts: linked[40]!.ts, data: damaged, n: -1 });
  const file = pcap(linked, { linkType: LINKTYPE.ethernet });
  return file.subarray(0, file.length - 30); // the last record cut short
}

const capture = multiFlowCapture();
const file = join(dir, 'flows.pcap');
writeFileSync(file, capture);

/** One decoder in this thread, printing as the CLI does. */
function single(mode: FrameOutputMode, chunk: number): { out: Buffer; problems: string[] } {
  const out = new OutputBuffer();
  const printer = new FramePrinter(out, mode, null, null);
  const problems: string[] = [];
  const dec = new CaptureDecoder(
    { frame: (f) => printer.frame(f), problem: (p) => problems.push(p.message) },
    { flowIdleTimeoutMs: IDLE_S * 1000 },
  );
  for (let i = 0; i < capture.length; i += chunk) dec.push(capture.subarray(i, i + chunk));
  dec.end();
  return { out: Buffer.concat(out.take()), problems };
}

t.test('the capture has what the test is about', async (t) => {
  const { out, problems } = single('text', 1 << 20);
  const text = out.toString();
  t.ok(text.split('\n').length > 100, 'many frames');
  const all = problems.join('\n');
  t.match(all, /flow idle for over 1 s/, 'a flow finished by the idle timeout');
  t.match(all, /damaged packet \(IPv4 header length 16\)/, 'a damaged header');
  t.match(all, /cut by snaplen/, 'a packet cut by the snaplen');
  t.match(all, /capture truncated/, 'a record cut short');
  t.match(
    all,
    /10\.0\.0\.27:50007.*stream ended inside a frame|10\.0\.0\.1:10911 > 10\.0\.0\.27:50007/,
    'a flow open at the end',
  );
});

t.test('ParallelDecoder prints, byte for byte and problem for problem, what one decoder prints', async (t) => {
  for (const mode of ['json', 'text'] as const) {
    // Small chunks: many batches, merged as they come.
    const want = single(mode, 3000);
    for (const workers of [2, 3, 4]) {
      const out = new OutputBuffer();
      const problems: string[] = [];
      const par = new ParallelDecoder({
        workers,
        format: 'pcap',
        mode,
        filterTerms: [],
        decoder: { flowIdleTimeoutMs: IDLE_S * 1000 },
        sink: { bytes: (b) => out.append(b), problem: (p) => problems.push(p.message) },
      });
      try {
        for (let i = 0; i < capture.length; i += 3000) {
          par.push(capture.subarray(i, i + 3000));
          await par.drain();
        }
        await par.end();
      } finally {
        await par.close();
      }
      const owned = par.ownedPackets;
      t.equal(owned.length, workers);
      t.ok(
        owned.every((n) => n > 0),
        `${mode}, ${workers} workers: each owns flows (${owned.join(', ')} packets)`,
      );
      const got = Buffer.concat(out.take());
      t.equal(got.length, want.out.length, `${mode}, ${workers} workers: as many bytes`);
      t.ok(got.equals(want.out), `${mode}, ${workers} workers: the same bytes`);
      t.same(problems, want.problems, `${mode}, ${workers} workers: the same problems in the same order`);
    }
  }
});

t.test('decode --workers N prints what --workers 1 prints, every output and filter', async (t) => {
  const common = ['--flow-idle-timeout', String(IDLE_S)];
  const cases: string[][] = [
    ['--json'],
    [],
    ['--msgpack'],
    ['--filter', 'topic=Orders'],
    ['--json', '--filter', '10.0.0.2'],
  ];
  for (const args of cases) {
    const one = await decodeCli([file, ...common, ...args, '--workers', '1']);
    t.equal(one.code, 1, `${args.join(' ')}: the capture lost data`);
    t.ok(one.stdout.length > 1000, `${args.join(' ')}: frames printed`);
    for (const workers of ['2', '3']) {
      const n = await decodeCli([file, ...common, ...args, '--workers', workers]);
      t.equal(n.code, one.code, `${args.join(' ')} --workers ${workers}: exit code`);
      t.ok(n.stdout.equals(one.stdout), `${args.join(' ')} --workers ${workers}: stdout byte for byte`);
      t.equal(n.stderr, one.stderr, `${args.join(' ')} --workers ${workers}: stderr`);
    }
  }
});

t.test('--workers is checked; what needs every frame in one place runs in one thread', async (t) => {
  const bad = await decodeCli([file, '--workers', '0']);
  t.equal(bad.code, 2);
  t.match(bad.stderr, /--workers must be/);
  for (const args of [['--stats'], ['--doctor', '--json']]) {
    const one = await decodeCli([file, ...args]);
    const n = await decodeCli([file, ...args, '--workers', '2']);
    t.equal(n.code, one.code, `${args.join(' ')}: exit code`);
    t.ok(n.stdout.equals(one.stdout), `${args.join(' ')}: the same output`);
  }
});
