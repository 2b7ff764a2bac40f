// expect: decoded 2 frames: PULL_MESSAGE answered SUCCESS with 2 messages
// Capture decoding: CaptureDecoder reads pcap / pcapng (what `tcpdump -w` writes), reassembles the
// TCP streams, splits them into remoting frames and pairs each response with its request. Here the
// capture is built in memory (a pull and its answer carrying two stored messages), so no tcpdump
// and no broker are needed; `rocketwire decode FILE.pcap` prints the same from a file.
import { CaptureDecoder, describeCommand, frameContext } from 'rocketwire/capture';
import {
  createRequest,
  createResponse,
  encodeCommand,
  encodeStoredMessage,
  PullMessageRequestHeader,
  PullMessageResponseHeader,
  PullSysFlag,
  RequestCode,
  ResponseCode,
} from 'rocketwire/protocol';

const client = { ip: [127, 0, 0, 1], port: 50123 };
const broker = { ip: [127, 0, 0, 1], port: 10911 }; // 10911, 9876... are known RocketMQ ports

// A PULL_MESSAGE as the push consumer sends it, and the broker's answer.
const pull = createRequest(RequestCode.PULL_MESSAGE, {
  opaque: 42,
  extFields: PullMessageRequestHeader.encode({
    consumerGroup: 'cg1',
    topic: 'Orders',
    queueId: 0,
    queueOffset: 0,
    maxMsgNums: 32,
    sysFlag: PullSysFlag.FLAG_SUSPEND,
    commitOffset: 0,
    suspendTimeoutMillis: 15000,
    subVersion: 1,
    expressionType: 'TAG',
    subscription: '*',
  }),
});
const stored = [0, 1].map((i) =>
  encodeStoredMessage({
    topic: 'Orders',
    queueId: 0,
    queueOffset: i,
    commitLogOffset: i * 200,
    bornTimestamp: 1_760_000_000_000,
    bornHost: '127.0.0.1:50123',
    storeTimestamp: 1_760_000_000_001,
    storeHost: '127.0.0.1:10911',
    body: Buffer.from(`order ${i}`),
    properties: { TAGS: 'new', KEYS: `order-${i}` },
  }),
);
const found = createResponse(pull, ResponseCode.SUCCESS, {
  remark: 'FOUND',
  extFields: PullMessageResponseHeader.encode({
    suggestWhichBrokerId: 0,
    nextBeginOffset: 2,
    minOffset: 0,
    maxOffset: 2,
  }),
  body: Buffer.concat(stored),
});

// pcap: a global header, then one record per packet (raw IPv4 link type, so no Ethernet header).
const capture = Buffer.concat([
  pcapHeader(),
  packet(1_760_000_000, 0, client, broker, 1000, 5000, encodeCommand(pull)),
  packet(1_760_000_000, 3_200, broker, client, 5000, 1000 + encodeCommand(pull).length, encodeCommand(found)),
]);

const lines = [];
const decoder = new CaptureDecoder({
  frame(f) {
    // describeCommand gives what `rocketwire decode --json` prints: names, header fields, messages.
    const d = describeCommand(f.cmd, frameContext(f));
    const answer = d.kind === 'response' ? ` to code ${d.requestCode} after ${d.latencyMs} ms` : '';
    console.log(`${d.src} -> ${d.dst} ${d.kind} ${d.name}${answer} opaque ${d.opaque} ${JSON.stringify(d.extFields)}`);
    for (const m of d.messages ?? [])
      console.log(`  message ${m.topic}:${m.queueId}:${m.queueOffset} ${m.msgId} keys ${m.properties.KEYS}`);
    lines.push(d);
  },
  problem(p) {
    console.log(`problem: ${p.message}`);
  },
});
decoder.push(capture); // push chunks as they are read, then end()
decoder.end();

const [request, response] = lines;
if (!request || !response || response.requestCode !== RequestCode.PULL_MESSAGE)
  throw new Error('the pull and its answer were not paired');
console.log(
  `decoded ${lines.length} frames: ${request.name} answered ${response.name} with ${response.messages?.length ?? 0} messages`,
);

function pcapHeader() {
  const h = Buffer.alloc(24);
  h.writeUInt32LE(0xa1b2c3d4, 0); // microsecond timestamps, little-endian
  h.writeUInt16LE(2, 4);
  h.writeUInt16LE(4, 6);
  h.writeUInt32LE(65535, 16); // snap length
  h.writeUInt32LE(101, 20); // LINKTYPE_RAW: packets start with the IP header
  return h;
}

function packet(sec, usec, from, to, seq, ack, payload) {
  const ip = Buffer.alloc(20);
  ip[0] = 0x45; // IPv4, 20-byte header
  ip.writeUInt16BE(20 + 20 + payload.length, 2);
  ip[8] = 64; // TTL
  ip[9] = 6; // TCP
  Buffer.from(from.ip).copy(ip, 12);
  Buffer.from(to.ip).copy(ip, 16);
  const tcp = Buffer.alloc(20);
  tcp.writeUInt16BE(from.port, 0);
  tcp.writeUInt16BE(to.port, 2);
  tcp.writeUInt32BE(seq, 4);
  tcp.writeUInt32BE(ack, 8);
  tcp[12] = 5 << 4; // 20-byte header
  tcp[13] = 0x18; // PSH + ACK
  tcp.writeUInt16BE(65535, 14); // window
  const record = Buffer.alloc(16);
  const length = ip.length + tcp.length + payload.length;
  record.writeUInt32LE(sec, 0);
  record.writeUInt32LE(usec, 4);
  record.writeUInt32LE(length, 8);
  record.writeUInt32LE(length, 12);
  return Buffer.concat([record, ip, tcp, payload]);
}
