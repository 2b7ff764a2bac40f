import t from 'tap';
import { createRequest, createResponse, encodeCommand, RequestCode, ResponseCode } from '../../protocol/index.js';
import {
  heartbeat,
  ipTcp,
  link,
  linkAll,
  LINKTYPE,
  pcap,
  pcapng,
  pullFound,
  pullRequest,
  TcpConnection,
  ACK,
  PSH,
  type Link,
  type Packet,
} from './build-pcap.js';
import { decodeAll, summary } from './helpers.js';

const CLIENT = { ip: '10.0.0.5', port: 50000 };
const BROKER = { ip: '10.0.0.1', port: 10911 };

/** A consumer's conversation: heartbeat, a pull answered with 32 x 1 KiB messages, a pull not found, then FIN. */
function conversation(conn = new TcpConnection(CLIENT, BROKER), withHandshake = true): Packet[] {
  const hb = heartbeat(1);
  const pull = pullRequest(2, { queueOffset: 0, commitOffset: 0, sysFlag: 2 });
  const found = pullFound(pull, 32, { bodySize: 1024 });
  const pull2 = pullRequest(3, { queueOffset: 32, commitOffset: 32, sysFlag: 3 });
  const notFound = createResponse(pull2, ResponseCode.PULL_NOT_FOUND, {
    remark: 'OFFSET_OVERFLOW_ONE',
    serializeType: 'ROCKETMQ',
  });
  return [
    ...(withHandshake ? conn.handshake() : []),
    ...conn.send(true, encodeCommand(hb)),
    ...conn.send(false, encodeCommand(createResponse(hb, 0))),
    ...conn.send(true, encodeCommand(pull)),
    conn.ack(false),
    ...conn.send(false, encodeCommand(found)),
    conn.ack(true),
    ...conn.send(true, encodeCommand(pull2)),
    ...conn.send(false, encodeCommand(notFound)),
    conn.fin(true),
    conn.fin(false),
    conn.ack(true),
  ];
}

const EXPECTED = [
  'REQ HEART_BEAT #1',
  'RSP SUCCESS #1 for 34',
  'REQ PULL_MESSAGE #2',
  'RSP SUCCESS #2 for 11 msgs=32',
  'REQ PULL_MESSAGE #3',
  'RSP PULL_NOT_FOUND #3 for 11',
];

t.test('pcap over Ethernet: frames, addresses, times, pairing and messages', async (t) => {
  const file = pcap(linkAll('ethernet', conversation()), { linkType: LINKTYPE.ethernet });
  for (const chunk of [7, 100, 65536]) {
    const r = decodeAll(file, chunk);
    t.same(summary(r.frames), EXPECTED, `chunks of ${chunk}`);
    t.same(r.problems, []);
    t.equal(r.decoder.openFlows, 0, 'FIN on both sides closes the flow');
  }
  const { frames } = decodeAll(file);
  const pull = frames[2]!;
  t.equal(pull.src, '10.0.0.5:50000');
  t.equal(pull.dst, '10.0.0.1:10911');
  t.equal(typeof pull.ts, 'number');
  t.same(pull.extFields.topic, 'TopicTest');
  const found = frames[3]!;
  t.equal(found.src, '10.0.0.1:10911');
  t.equal(found.requestCode, RequestCode.PULL_MESSAGE);
  t.ok(found.latencyMs! > 0, 'latency from request to response');
  t.equal(found.remark, 'FOUND');
  t.equal(found.messages!.length, 32);
  const m = found.messages![5]!;
  t.equal(m.topic, 'TopicTest');
  t.equal(m.queueOffset, 5);
  t.equal(m.commitLogOffset, 5000);
  t.equal(m.msgId, 'UNIQ00000005');
  t.equal(m.bornHost, '10.0.0.5:50000');
  t.equal(m.storeHost, '10.0.0.1:10911');
  t.equal(Buffer.from(m.bodyBase64!, 'base64').length, 1024);
  t.same(m.properties.TAGS, 'TagA');
  t.equal(frames[5]!.serializeType, 'ROCKETMQ');
  t.same(frames[0]!.json, { clientID: '10.0.0.5@1', consumerDataSet: [{ groupName: 'cg1' }], producerDataSet: [] });
});

t.test('pcap byte orders and nanosecond timestamps give the same frames and times', async (t) => {
  const conn = new TcpConnection(CLIENT, BROKER, { ts: 1700000000.123456 });
  const pkts = linkAll('ethernet', conversation(conn));
  const base = decodeAll(pcap(pkts, { linkType: 1 }));
  for (const o of [{ bigEndian: true }, { nano: true }, { nano: true, bigEndian: true }]) {
    const r = decodeAll(pcap(pkts, { linkType: 1, ...o }));
    t.same(summary(r.frames), EXPECTED, JSON.stringify(o));
    t.same(
      r.frames.map((f) => f.ts),
      base.frames.map((f) => f.ts),
      'same timestamps',
    );
  }
  t.equal(base.frames[0]!.ts, 1700000000.127456, 'timestamp in seconds with microseconds');
});

t.test('segments out of order are put back in order', async (t) => {
  const pkts = conversation();
  // Reverse the order of the pull response's data segments (indexes found by size).
  const big = pkts
    .map((p, i) => [p, i] as const)
    .filter(([p]) => p.data.length > 1000)
    .map(([, i]) => i);
  const start = big[0]!;
  const end = big[big.length - 1]!;
  const reordered = [...pkts.slice(0, start), ...pkts.slice(start, end + 1).reverse(), ...pkts.slice(end + 1)];
  const r = decodeAll(pcap(linkAll('raw', reordered), { linkType: LINKTYPE.raw }));
  t.same(summary(r.frames), EXPECTED);
  t.same(r.lost, []);
});

t.test('exact and overlapping retransmissions are dropped', async (t) => {
  const pkts = conversation();
  const big = pkts.findIndex((p) => p.data.length > 1000);
  const seg = pkts[big]!;
  const next = pkts[big + 1]!;
  // Overlap: a segment starting 100 bytes into `seg` and running 200 bytes into `next`.
  const payloadA = seg.data.subarray(40);
  const payloadB = next.data.subarray(40);
  const seqA = seg.data.readUInt32BE(24);
  const overlap = ipTcp({
    src: BROKER.ip,
    dst: CLIENT.ip,
    sport: BROKER.port,
    dport: CLIENT.port,
    seq: seqA + 100,
    ack: 0,
    flags: ACK | PSH,
    payload: Buffer.concat([payloadA.subarray(100), payloadB.subarray(0, 200)]),
  });
  const withRetrans = [
    ...pkts.slice(0, big + 1),
    { ts: seg.ts, data: seg.data },
    { ts: seg.ts, data: overlap },
    ...pkts.slice(big + 1),
  ];
  const r = decodeAll(pcap(linkAll('raw', withRetrans), { linkType: LINKTYPE.raw }));
  t.same(summary(r.frames), EXPECTED);
  t.same(r.lost, []);
});

t.test('sequence numbers wrapping past 2^32', async (t) => {
  const conn = new TcpConnection(CLIENT, BROKER, { clientIsn: 0xffffff00, serverIsn: 0xfffff000 });
  const r = decodeAll(pcap(linkAll('ethernet', conversation(conn)), { linkType: 1 }));
  t.same(summary(r.frames), EXPECTED);
  t.same(r.lost, []);
});

t.test('IPv6 with an extension header', async (t) => {
  const conn = new TcpConnection({ ip: 'fd00::5', port: 50000 }, { ip: 'fd00::1', port: 10911 });
  const pkts = conversation(conn).map((p) => {
    // Re-build each packet with a hop-by-hop header before TCP.
    const d = p.data;
    const tcp = d.subarray(40);
    return {
      ...p,
      data: ipTcp({
        src: d.readUInt16BE(8 + 14) === 5 ? 'fd00::5' : 'fd00::1',
        dst: d.readUInt16BE(24 + 14) === 5 ? 'fd00::5' : 'fd00::1',
        sport: tcp.readUInt16BE(0),
        dport: tcp.readUInt16BE(2),
        seq: tcp.readUInt32BE(4),
        ack: tcp.readUInt32BE(8),
        flags: tcp[13]!,
        payload: tcp.subarray(20),
        hopByHop: true,
      }),
    };
  });
  const r = decodeAll(pcap(linkAll('ethernet', pkts), { linkType: 1 }));
  t.same(summary(r.frames), EXPECTED);
  t.equal(r.frames[2]!.src, '[fd00::5]:50000');
  t.equal(r.frames[2]!.dst, '[fd00::1]:10911');
});

t.test('link types: VLAN, QinQ, Linux cooked v1/v2, BSD null/loop, raw IP, IPv4 options', async (t) => {
  for (const kind of ['vlan', 'qinq', 'sll', 'sll2', 'null', 'loop', 'raw'] as Link[]) {
    const r = decodeAll(pcap(linkAll(kind, conversation()), { linkType: LINKTYPE[kind] }));
    t.same(summary(r.frames), EXPECTED, kind);
    t.same(r.problems, [], kind);
  }
  const withOptions = conversation().map((p) => {
    const d = p.data;
    const tcp = d.subarray(20);
    return {
      ...p,
      data: ipTcp({
        src: `${d[12]}.${d[13]}.${d[14]}.${d[15]}`,
        dst: `${d[16]}.${d[17]}.${d[18]}.${d[19]}`,
        sport: tcp.readUInt16BE(0),
        dport: tcp.readUInt16BE(2),
        seq: tcp.readUInt32BE(4),
        ack: tcp.readUInt32BE(8),
        flags: tcp[13]!,
        payload: tcp.subarray(20),
        ipOptions: Buffer.from([1, 1, 1, 0]),
      }),
    };
  });
  t.same(
    summary(decodeAll(pcap(linkAll('raw', withOptions), { linkType: 12 })).frames),
    EXPECTED,
    'IPv4 options, DLT_RAW 12',
  );
});

t.test('a capture that starts in the middle of a connection finds the next frame', async (t) => {
  const pkts = conversation();
  const big = pkts.findIndex((p) => p.data.length > 1000);
  // Start 3 segments into the 33 KiB pull response: its rest is skipped, later frames decode.
  const r = decodeAll(pcap(linkAll('ethernet', pkts.slice(big + 3)), { linkType: 1 }));
  t.same(summary(r.frames), ['REQ PULL_MESSAGE #3', 'RSP PULL_NOT_FOUND #3 for 11']);
  t.same(r.lost, [], 'joining mid-way loses nothing that was captured');
});

t.test('a lost packet: the gap is reported, decoding resynchronises and goes on', async (t) => {
  const pkts = conversation();
  const big = pkts.findIndex((p) => p.data.length > 1000);
  const dropped = [...pkts.slice(0, big + 4), ...pkts.slice(big + 5)];
  const r = decodeAll(pcap(linkAll('ethernet', dropped), { linkType: 1 }));
  t.same(summary(r.frames), [
    'REQ HEART_BEAT #1',
    'RSP SUCCESS #1 for 34',
    'REQ PULL_MESSAGE #2',
    'REQ PULL_MESSAGE #3',
    'RSP PULL_NOT_FOUND #3 for 11',
  ]);
  t.equal(r.lost.length, 1, 'one problem line');
  t.match(
    r.lost[0]!.message,
    /^10\.0\.0\.1:10911 > 10\.0\.0\.5:50000: 1460 bytes missing at stream byte 5943, inside the frame at byte 103 \(37177 bytes\), which is skipped \(packet \d+\)$/,
  );
});

t.test('a gap across frame boundaries is found by scanning for the next frame', async (t) => {
  const conn = new TcpConnection(CLIENT, BROKER);
  const frames = [1, 2, 3, 4, 5, 6].map((i) =>
    encodeCommand(createRequest(RequestCode.GET_MAX_OFFSET, { opaque: i, extFields: { topic: 'T', queueId: '0' } })),
  );
  const pkts = [...conn.handshake(), ...conn.send(true, Buffer.concat(frames), 150)];
  // Drop the 2nd segment: it holds the end of frame 1 and the start of frame 2.
  const r = decodeAll(pcap(linkAll('raw', [...pkts.slice(0, 4), ...pkts.slice(5)]), { linkType: 101 }));
  const got = r.frames.map((f) => f.opaque);
  t.ok(got.includes(6) && !got.includes(2), `frames after the gap decode (${got.join(',')})`);
  t.equal(r.lost.length, 1);
});

t.test('pcapng: two interfaces with their own link types and resolutions, either byte order', async (t) => {
  const a = conversation(new TcpConnection(CLIENT, BROKER, { ts: 1700000000.5 }));
  const b = conversation(
    new TcpConnection({ ip: '10.0.0.6', port: 40000 }, { ip: '10.0.0.2', port: 9876 }, { ts: 1700000000.5005 }),
  );
  const packets: Packet[] = [];
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (a[i]) packets.push({ ...a[i]!, data: link('ethernet', a[i]!.data), iface: 0 });
    if (b[i]) packets.push({ ...b[i]!, data: link('sll2', b[i]!.data), iface: 1 });
  }
  for (const bigEndian of [false, true]) {
    const file = pcapng([{ linkType: 1 }, { linkType: 276, tsresol: 9 }], packets, { bigEndian, extraBlocks: true });
    const r = decodeAll(file, 333);
    t.same(r.problems, []);
    const byFlow = (port: string): string[] =>
      summary(r.frames.filter((f) => f.src!.endsWith(port) || f.dst!.endsWith(port)));
    t.same(byFlow(':10911'), EXPECTED, `interface 0 (${bigEndian ? 'BE' : 'LE'})`);
    t.same(byFlow(':9876'), EXPECTED, 'interface 1');
    t.equal(r.frames.find((f) => f.dst === '10.0.0.2:9876')!.ts, 1700000000.5045, 'nanosecond interface time');
  }
});

t.test('pcapng simple packet blocks', async (t) => {
  const file = pcapng([{ linkType: 1 }], linkAll('ethernet', conversation()), { simple: true });
  const r = decodeAll(file);
  t.same(summary(r.frames), EXPECTED);
});

t.test('truncated capture: frames before the cut are printed, the cut is reported', async (t) => {
  // Without the closing packets, so that the cut falls inside the last frame.
  const file = pcap(linkAll('ethernet', conversation().slice(0, -3)), { linkType: 1 });
  const r = decodeAll(file.subarray(0, file.length - 30));
  t.same(summary(r.frames), EXPECTED.slice(0, 5));
  t.equal(r.lost.length >= 1, true);
  t.match(r.lost[0]!.message, /capture truncated: packet \d+ at byte \d+ is cut short/);
  const ng = pcapng([{ linkType: 1 }], linkAll('ethernet', conversation()));
  const r2 = decodeAll(ng.subarray(0, ng.length - 10));
  t.match(r2.lost[0]!.message, /capture truncated: block at byte \d+/);
});

t.test('a packet cut by the snaplen loses its frame, the rest decodes', async (t) => {
  const pkts = linkAll('ethernet', conversation());
  const big = pkts.findIndex((p) => p.data.length > 1000);
  const cut = pkts.map((p, i) => (i === big + 2 ? { ...p, data: p.data.subarray(0, 200), origLen: p.data.length } : p));
  const r = decodeAll(pcap(cut, { linkType: 1, snaplen: 200 }));
  t.same(summary(r.frames), [
    'REQ HEART_BEAT #1',
    'RSP SUCCESS #1 for 34',
    'REQ PULL_MESSAGE #2',
    'REQ PULL_MESSAGE #3',
    'RSP PULL_NOT_FOUND #3 for 11',
  ]);
  t.match(r.lost[0]!.message, /cut by snaplen \(captured 200 of 1514 bytes\)/);
  t.match(
    r.lost[1]!.message,
    /\d+ bytes missing at stream byte \d+, inside the frame at byte \d+ \(\d+ bytes\), which is skipped/,
  );
  t.equal(r.lost.length, 2);
});

t.test('non-RocketMQ flows produce nothing; RocketMQ on another port is recognised', async (t) => {
  const http = new TcpConnection({ ip: '10.0.0.7', port: 41000 }, { ip: '10.0.0.8', port: 80 });
  const tls = new TcpConnection({ ip: '10.0.0.7', port: 41001 }, { ip: '10.0.0.8', port: 443 });
  const tlsHello = Buffer.concat([Buffer.from('160301020001', 'hex'), Buffer.alloc(512, 0x33)]);
  const other = new TcpConnection({ ip: '10.0.0.7', port: 41002 }, { ip: '10.0.0.9', port: 20000 });
  const q = createRequest(RequestCode.GET_ROUTEINFO_BY_TOPIC, { opaque: 9, extFields: { topic: 'T' } });
  const pkts = [
    ...http.handshake(),
    ...http.send(true, Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n')),
    ...http.send(false, Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello')),
    ...tls.handshake(),
    ...tls.send(true, tlsHello),
    ...other.handshake(),
    ...other.send(true, encodeCommand(q)),
    ...other.send(
      false,
      encodeCommand(createResponse(q, ResponseCode.TOPIC_NOT_EXIST, { remark: 'No topic route info' })),
    ),
  ];
  // HTTP on 8080 and 8081, which are RocketMQ proxy ports too: from the SYN, and joined mid-way.
  const web = new TcpConnection({ ip: '10.0.0.7', port: 41004 }, { ip: '10.0.0.8', port: 8080 });
  pkts.push(
    ...web.handshake(),
    ...web.send(true, Buffer.from('POST /api HTTP/1.1\r\nContent-Length: 3000\r\n\r\n' + 'x'.repeat(3000))),
  );
  const web2 = new TcpConnection({ ip: '10.0.0.7', port: 41005 }, { ip: '10.0.0.8', port: 8081 });
  pkts.push(...web2.send(false, Buffer.from('HTTP/1.1 200 OK\r\n\r\n' + '{"k":1}'.repeat(500))));
  // Also a mid-stream binary flow on an unknown port.
  const noise = new TcpConnection({ ip: '10.0.0.7', port: 41003 }, { ip: '10.0.0.8', port: 5432 });
  pkts.push(...noise.send(true, Buffer.from(Array.from({ length: 3000 }, (_, i) => (i * 7919) & 0xff))));
  const r = decodeAll(pcap(linkAll('ethernet', pkts), { linkType: 1 }));
  t.same(summary(r.frames), ['REQ GET_ROUTEINFO_BY_TOPIC #9', 'RSP TOPIC_NOT_EXIST #9 for 105']);
  t.same(r.problems, []);
});

t.test('problems: IPv4 fragments and unknown link types are reported', async (t) => {
  const frag = ipTcp({
    src: '10.0.0.5',
    dst: '10.0.0.1',
    sport: 50000,
    dport: 10911,
    seq: 1,
    flags: ACK,
    payload: Buffer.alloc(10),
    fragment: 0x2000,
  });
  const r = decodeAll(pcap([{ ts: 1, data: link('ethernet', frag) }], { linkType: 1 }));
  t.match(r.lost[0]!.message, /packet 1: IPv4 fragment skipped/);
  const r2 = decodeAll(pcap([{ ts: 1, data: Buffer.alloc(40) }], { linkType: 147 }));
  t.match(r2.lost[0]!.message, /unknown link type 147/);
});

t.test('RST closes the flow and memory follows open flows only', async (t) => {
  const pkts: Packet[] = [];
  for (let i = 0; i < 50; i++) {
    const c = new TcpConnection({ ip: '10.0.0.5', port: 30000 + i }, BROKER);
    const hb = heartbeat(i);
    pkts.push(
      ...c.handshake(),
      ...c.send(true, encodeCommand(hb)),
      ...c.send(false, encodeCommand(createResponse(hb, 0))),
      c.rst(true),
    );
  }
  const r = decodeAll(pcap(linkAll('ethernet', pkts), { linkType: 1 }));
  t.equal(r.frames.length, 100);
  t.equal(r.decoder.openFlows, 0);
  t.same(r.lost, []);
});

t.test('a response whose request was not captured still shows its stored messages', async (t) => {
  const pkts = conversation();
  const big = pkts.findIndex((p) => p.data.length > 1000);
  const r = decodeAll(pcap(linkAll('ethernet', pkts.slice(big - 1)), { linkType: 1 }));
  const found = r.frames.find((f) => f.messages);
  t.ok(found, 'pull result decoded without its request');
  t.equal(found!.requestCode, undefined);
  t.equal(found!.messages!.length, 32);
});

t.test('--port: a flow joined mid-way on an unknown port is searched for frames for as long as it takes', async (t) => {
  const conn = new TcpConnection(CLIENT, { ip: '10.0.0.1', port: 20001 });
  const pull = pullRequest(2);
  const big = encodeCommand(pullFound(pull, 8, { bodySize: 1024 }));
  const notify = createRequest(RequestCode.NOTIFY_CONSUMER_IDS_CHANGED, {
    opaque: 3,
    oneway: true,
    extFields: { consumerGroup: 'cg1' },
  });
  // Only the broker's direction, joined after 2 segments: ~6 KiB of message bodies before the next frame.
  const pkts = [...conn.send(false, big), ...conn.send(false, encodeCommand(notify))];
  const file = pcap(linkAll('raw', pkts.slice(2)), { linkType: 101 });
  const ignored = decodeAll(file, 4096, { probeBytes: 1024 });
  t.same(summary(ignored.frames), [], 'not recognised within the probe budget');
  t.same(ignored.problems, [], 'and no noise about it');
  const forced = decodeAll(file, 4096, { probeBytes: 1024, ports: [20001] });
  t.same(summary(forced.frames), ['REQ NOTIFY_CONSUMER_IDS_CHANGED #3']);
  t.same(forced.lost, []);
});

t.test('frames one way make an unknown-port connection RocketMQ both ways', async (t) => {
  const conn = new TcpConnection(CLIENT, { ip: '10.0.0.1', port: 20002 });
  const pull = pullRequest(2);
  const big = encodeCommand(pullFound(pull, 8, { bodySize: 1024 }));
  const hb = heartbeat(3);
  const pkts = [
    ...conn.send(false, big),
    ...conn.send(true, encodeCommand(hb)),
    ...conn.send(false, encodeCommand(createResponse(hb, 0))),
  ];
  const r = decodeAll(pcap(linkAll('raw', pkts.slice(2)), { linkType: 101 }), 4096, { probeBytes: 1024 });
  t.same(summary(r.frames), ['REQ HEART_BEAT #3', 'RSP SUCCESS #3 for 34']);
});

t.test('pcapng: a second section (other byte order) starts its own interfaces', async (t) => {
  const a = pcapng([{ linkType: 1 }], linkAll('ethernet', conversation()));
  const b = pcapng(
    [{ linkType: 113 }],
    linkAll('sll', conversation(new TcpConnection({ ip: '10.0.0.9', port: 50001 }, BROKER))),
    { bigEndian: true },
  );
  const r = decodeAll(Buffer.concat([a, b]), 1000);
  t.same(summary(r.frames), [...EXPECTED, ...EXPECTED]);
  t.equal(r.frames[6]!.src, '10.0.0.9:50001');
  t.same(r.problems, []);
});
