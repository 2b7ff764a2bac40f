import t from 'tap';
import v8 from 'node:v8';
import vm from 'node:vm';
import { CaptureDecoder, DecodeStats, type CaptureProblem } from '../../lib/capture/index.js';
import { createRequest, encodeCommand, linkAll, pcap, TcpConnection, type Packet } from './build-pcap.js';
import { decodeAll, summary } from './helpers.js';

// `decode` must not reserve a frame's announced size at once (a capture of 8 000 flows each showing
// the first packet of a large frame would take 130 GB of virtual memory), nor exit 0 on a flow
// whose first frame never completes. Memory must follow the bytes seen, be
// bounded across flows, and every incomplete frame be reported.

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;
const MiB = 1024 * 1024;
const head = encodeCommand(createRequest(310, { extFields: { topic: 'T' } }));

/** The first `have` bytes of a JSON request frame that announces `size` bytes. */
function halfFrame(size: number, have: number): Buffer {
  const f = Buffer.alloc(Math.max(have, 8));
  f.writeInt32BE(size - 4, 0);
  f.writeInt32BE(head.length - 8, 4);
  head.copy(f, 8, 8, Math.min(head.length, Math.max(have, 8)));
  return f.subarray(0, have);
}

function flow(i: number, port = 10911): TcpConnection {
  return new TcpConnection(
    { ip: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, port: 40000 + (i % 20000) },
    { ip: '10.255.0.1', port },
  );
}

t.test('8 000-style capture: thousands of flows holding the head of a 16 MiB frame', async (t) => {
  const n = 3000;
  const packets: Packet[] = [];
  for (let i = 0; i < n; i++) {
    const c = flow(i);
    packets.push(...c.handshake(), ...c.send(true, halfFrame(16 * MiB, 1000)));
  }
  const file = pcap(linkAll('ethernet', packets), { linkType: 1 });
  gc();
  const before = process.memoryUsage().arrayBuffers;
  const problems: CaptureProblem[] = [];
  const dec = new CaptureDecoder({ frame: () => t.fail('no frame'), problem: (p) => problems.push(p) });
  for (let i = 0; i < file.length; i += 65536) dec.push(file.subarray(i, i + 65536));
  t.equal(dec.openFlows, n);
  const held = dec.bufferedBytes;
  // 3 000 x 4 KiB (the smallest buffer) = 12 MiB; before the fix 3 000 x 16 MiB = 47 GiB reserved
  t.ok(held <= n * 4096, `${n} flows hold ${(held / MiB).toFixed(1)} MiB (bound ${(n * 4096) / MiB} MiB)`);
  gc();
  const grown = process.memoryUsage().arrayBuffers - before;
  t.ok(grown < 64 * MiB, `buffers grew by ${(grown / MiB).toFixed(1)} MiB (bound 64 MiB)`);
  dec.end();
  t.equal(dec.bufferedBytes, 0, 'nothing held at the end');
  const incomplete = problems.filter((p) => p.kind === 'incomplete-frame');
  t.equal(incomplete.length, n, 'every cut frame reported');
  t.ok(
    incomplete.every((p) => p.lost),
    'as lost data (the CLI exits 1)',
  );
  t.equal(dec.counters.incompleteFrames, n);
});

t.test('a bound across flows: the flows idle longest drop what they hold, and say so', async (t) => {
  const n = 400;
  const limit = 1 * MiB;
  const packets: Packet[] = [];
  for (let i = 0; i < n; i++) {
    const c = flow(i);
    // ten packets of a 1 MiB frame each: 14.6 KB per flow, 5.8 MB in all
    packets.push(...c.handshake(), ...c.send(true, Buffer.concat([halfFrame(MiB, 1460), Buffer.alloc(13140, 0x41)])));
  }
  const problems: CaptureProblem[] = [];
  const dec = new CaptureDecoder(
    { frame: () => undefined, problem: (p) => problems.push(p) },
    { maxTotalBufferedBytes: limit },
  );
  const file = pcap(linkAll('ethernet', packets), { linkType: 1 });
  for (let i = 0; i < file.length; i += 65536) dec.push(file.subarray(i, i + 65536));
  // one segment adds at most what it carries to one flow's buffer (doubling it), then the bound is enforced
  t.ok(
    dec.counters.peakBufferedBytes <= limit + 64 * 1024,
    `peak ${dec.counters.peakBufferedBytes} bytes (limit ${limit})`,
  );
  t.ok(dec.bufferedBytes <= limit, `${dec.bufferedBytes} bytes held after the last packet`);
  const dropped = problems.filter((p) => p.kind === 'buffer-limit');
  t.ok(
    dropped.length > 0 && dropped.every((p) => p.lost),
    `${dropped.length} flows dropped their partial frame, each reported as lost`,
  );
  t.match(
    dropped[0]!.message,
    /10\.0\.0\.0:40000 > 10\.255\.0\.1:10911: frame at stream byte 0 \(1048576 bytes\) dropped after \d+ bytes: bytes held across flows over the limit of 1048576/,
  );
  t.equal(dec.counters.bufferLimitDrops, dropped.length);
  dec.end();
});

t.test('a flow that dropped its partial frame stays in sync: the next frame is decoded', async (t) => {
  const victim = flow(0);
  const packets: Packet[] = [...victim.handshake()];
  const big = encodeCommand(createRequest(310, { opaque: 1, body: Buffer.alloc(200_000, 0x42) }));
  const next = encodeCommand(createRequest(105, { opaque: 2, extFields: { topic: 'After' } }));
  packets.push(...victim.send(true, big.subarray(0, 50_000)));
  // other flows fill the bound, so the victim (idle longest) drops its 50 KB
  for (let i = 1; i <= 20; i++) {
    const c = flow(i);
    packets.push(...c.handshake(), ...c.send(true, halfFrame(MiB, 20_000)));
  }
  packets.push(...victim.send(true, big.subarray(50_000)), ...victim.send(true, next));
  const r = decodeAll(pcap(linkAll('ethernet', packets), { linkType: 1 }), 4096, { maxTotalBufferedBytes: 256 * 1024 });
  const mine = r.frames.filter((f) => f.src === '10.0.0.0:40000');
  t.same(summary(mine), ['REQ GET_ROUTEINFO_BY_TOPIC #2'], 'the frame after the dropped one is found on time');
  t.ok(
    r.lost.some((p) => p.kind === 'buffer-limit' && p.flow === '10.0.0.0:40000 > 10.255.0.1:10911'),
    'the drop is reported for the victim',
  );
  t.notOk(
    r.lost.some((p) => /damaged|resynchronising/.test(p.message) && p.flow?.startsWith('10.0.0.0:40000')),
    'no resynchronisation needed',
  );
});

t.test(
  'out-of-order segments held for a hole count too, and are dropped (then reported as a gap) past the bound',
  async (t) => {
    const n = 30;
    const packets: Packet[] = [];
    const frames = Array.from({ length: 40 }, (_, k) =>
      encodeCommand(createRequest(105, { opaque: k + 1, body: Buffer.alloc(1000, 0x43) })),
    );
    for (let i = 0; i < n; i++) {
      const c = flow(i);
      const hs = c.handshake();
      const segs = c.send(true, Buffer.concat(frames));
      // the first segment is lost (never captured): everything after it waits for the hole
      packets.push(...hs, ...segs.slice(1));
    }
    const limit = 256 * 1024;
    const r = decodeAll(pcap(linkAll('ethernet', packets), { linkType: 1 }), 65536, { maxTotalBufferedBytes: limit });
    t.ok(
      r.decoder.counters.peakBufferedBytes <= limit + 2048,
      `peak ${r.decoder.counters.peakBufferedBytes} bytes held (limit ${limit})`,
    );
    const drops = r.lost.filter((p) => p.kind === 'buffer-limit');
    t.ok(
      drops.length > 0 && drops.every((p) => /out-of-order bytes dropped/.test(p.message)),
      `${drops.length} flows dropped their out-of-order bytes, reported`,
    );
    t.ok(
      r.lost.some((p) => /bytes missing/.test(p.message)),
      'and the hole is reported as missing bytes',
    );
    t.equal(r.decoder.bufferedBytes, 0);
  },
);

t.test("a flow whose first frame's header never completes is reported (it said nothing)", async (t) => {
  for (const [label, port, handshake] of [
    ['RocketMQ port, joined mid-way', 10911, false],
    ['other port, connection seen opening', 5555, true],
  ] as const) {
    const c = flow(7, port);
    const packets = [...(handshake ? c.handshake() : []), ...c.send(true, halfFrame(16 * MiB, 20))];
    const r = decodeAll(pcap(linkAll('ethernet', packets), { linkType: 1 }));
    t.equal(r.lost.length, 1, `${label}: one lost problem`);
    t.equal(r.lost[0]!.kind, 'incomplete-frame');
    t.match(
      r.lost[0]!.message,
      `ends inside what looks like a frame at byte 0 (20 of ${16 * MiB} bytes, its header incomplete)`,
    );
    t.equal(r.decoder.counters.incompleteFrames, 1);
  }
  // an ordinary flow that ends on a frame boundary reports nothing
  const c = flow(8);
  const ok = decodeAll(
    pcap(linkAll('ethernet', [...c.handshake(), ...c.send(true, head), c.fin(true)]), { linkType: 1 }),
  );
  t.equal(ok.problems.length, 0);
});

t.test('DecodeStats counts incomplete frames and drops when told of problems', async (t) => {
  const stats = new DecodeStats();
  const c = flow(3);
  const packets = [...c.handshake(), ...c.send(true, head), ...c.send(true, halfFrame(MiB, 3000))];
  const dec = new CaptureDecoder({ frame: (f) => stats.add(f), problem: (p) => stats.addProblem(p) });
  dec.push(pcap(linkAll('ethernet', packets), { linkType: 1 }));
  dec.end();
  const j = stats.toJSON() as {
    frames: number;
    problems: { lost: number; incompleteFrames: number; bufferLimitDrops: number };
  };
  t.equal(j.frames, 1);
  t.same(j.problems, { lost: 1, incompleteFrames: 1, bufferLimitDrops: 0 });
  t.match(stats.toText(), /problems: 1 lost \(1 incomplete frames, 0 dropped at the memory bound\)/);
});
