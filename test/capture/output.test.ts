import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import t from 'tap';
import {
  CaptureDecoder,
  describeCommand,
  formatFrameText,
  frameContext,
  frameJson,
  jsonNumber,
  writeFrameJson,
  type DecodedFrame,
} from '../../lib/capture/index.js';
import { OutputBuffer } from '../../lib/capture/output-buffer.js';
import {
  createRequest,
  createResponse,
  encodeCommand,
  encodeStoredMessage,
  RequestCode,
  ResponseCode,
  type RemotingCommand,
} from '../../protocol/index.js';
import { decodeCli } from './decode-cli.js';
import {
  heartbeat,
  linkAll,
  LINKTYPE,
  pcap,
  pullFound,
  pullRequest,
  storedMessages,
  TcpConnection,
} from './build-pcap.js';

const dir = mkdtempSync(join(tmpdir(), 'rocketwire-output-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

/** Stored messages whose strings need escaping, hosts of both kinds, a compressed body, absurd timestamps. */
function oddMessages(): Buffer {
  const recs = [
    encodeStoredMessage({
      topic: 'T "quoted" \\ \u0001 ü €',
      queueId: 1,
      queueOffset: 2 ** 40 + 7,
      commitLogOffset: 2 ** 52 + 3,
      bornTimestamp: 4,
      bornHost: '1.2.3.4:5',
      storeTimestamp: 1_700_000_000_123,
      storeHost: '[::1]:7',
      body: Buffer.from('x'),
      properties: { 'k"1': 'v\n1', UNIQ_KEY: 'U"\u2028\ud800', '7': 'seven', KEYS: 'a b', TAGS: '\u{1f600}' },
    }),
    encodeStoredMessage({
      topic: 'T',
      queueId: 2,
      queueOffset: 999_999_999,
      commitLogOffset: 1_000_000_000,
      sysFlag: 0x1 | 0x300,
      bornTimestamp: 1_999_999_999_999,
      bornHost: '[fd00::5]:50000',
      storeTimestamp: 2 ** 31,
      storeHost: '[fd00::1]:10911',
      body: deflateSync(Buffer.from('compressed '.repeat(50))),
      properties: {},
    }),
    encodeStoredMessage({
      topic: 'T',
      queueId: 2,
      queueOffset: 0,
      commitLogOffset: 0,
      bornTimestamp: 0,
      bornHost: '10.0.0.5:1',
      storeTimestamp: 0,
      storeHost: '10.0.0.1:10911',
      body: Buffer.alloc(5000, 0xfe),
      properties: { TAGS: 'x' },
    }),
  ];
  // A producer may send any bornTimestamp (Long.MAX_VALUE, negative): read leniently, printed as doubles.
  recs[2]!.writeBigInt64BE(0x7fffffffffffffffn, 40);
  recs[1]!.writeBigInt64BE(-1_500_000_000_001n, 40);
  return Buffer.concat(recs);
}

/** Every kind of body the decoder describes, over two connections, responses split into segments. */
function commands(): { fromClient: boolean; conn: 0 | 1; cmd: RemotingCommand }[] {
  const out: { fromClient: boolean; conn: 0 | 1; cmd: RemotingCommand }[] = [];
  for (let i = 0; i < 6; i++) {
    const p = pullRequest(10 + i, { topic: i % 2 ? 'Orders' : 'Pay\u00e9', queueId: i % 3, queueOffset: 32 * i });
    out.push({ fromClient: true, conn: (i % 2) as 0 | 1, cmd: p });
    out.push({ fromClient: false, conn: (i % 2) as 0 | 1, cmd: pullFound(p, 20 + i, { bodySize: 700 + i }) });
  }
  const odd = pullRequest(50);
  out.push({ fromClient: true, conn: 0, cmd: odd });
  out.push({
    fromClient: false,
    conn: 0,
    cmd: createResponse(odd, ResponseCode.SUCCESS, { remark: 'FOUND\t"x"', body: oddMessages() }),
  });
  const damaged = pullRequest(51);
  out.push({ fromClient: true, conn: 0, cmd: damaged });
  out.push({
    fromClient: false,
    conn: 0,
    cmd: createResponse(damaged, ResponseCode.SUCCESS, { body: storedMessages(2).subarray(0, 150) }),
  });
  const hb = heartbeat(60);
  out.push({ fromClient: true, conn: 1, cmd: hb });
  out.push({
    fromClient: false,
    conn: 1,
    cmd: createResponse(hb, ResponseCode.SUCCESS, { serializeType: 'ROCKETMQ' }),
  });
  out.push({
    fromClient: true,
    conn: 1,
    cmd: createRequest(999, {
      opaque: 61,
      body: Buffer.from([0, 1, 2, 250]),
      extFields: { '\u2028': '\ud800', k: 'ü' },
    }),
  });
  out.push({
    fromClient: true,
    conn: 1,
    cmd: createRequest(RequestCode.UPDATE_CONSUMER_OFFSET, {
      opaque: 62,
      oneway: true,
      extFields: { consumerGroup: 'g', topic: 'T', queueId: '0', commitOffset: '3' },
    }),
  });
  out.push({
    fromClient: false,
    conn: 1,
    cmd: createRequest(RequestCode.CONSUME_MESSAGE_DIRECTLY, { opaque: 63, body: storedMessages(1) }),
  });
  const unpaired = createResponse(pullRequest(64), ResponseCode.SUCCESS, { body: storedMessages(3) });
  out.push({ fromClient: false, conn: 0, cmd: unpaired });
  return out;
}

function buildCapture(): Buffer {
  const conns = [
    new TcpConnection({ ip: '10.0.0.5', port: 50000 }, { ip: '10.0.0.1', port: 10911 }),
    new TcpConnection({ ip: '10.0.0.6', port: 50001 }, { ip: '10.0.0.1', port: 10911 }, { ts: 1700000000.0005 }),
  ];
  const pkts = [...conns[0]!.handshake(), ...conns[1]!.handshake()];
  for (const c of commands()) pkts.push(...conns[c.conn]!.send(c.fromClient, encodeCommand(c.cmd), 1000));
  return pcap(linkAll('ethernet', pkts), { linkType: LINKTYPE.ethernet });
}

/** What the CLI printed before it wrote lines straight into buffers: one description per frame. */
function reference(capture: Buffer, mode: 'json' | 'text'): string {
  let s = '';
  const dec = new CaptureDecoder({
    frame: (f: DecodedFrame) => {
      const d = describeCommand(f.cmd, frameContext(f), { messageBodies: mode === 'json' });
      s += (mode === 'json' ? frameJson(d) : formatFrameText(d)) + '\n';
    },
    problem: () => {},
  });
  // Small chunks: frames straddle them.
  for (let i = 0; i < capture.length; i += 3000) dec.push(capture.subarray(i, i + 3000));
  dec.end();
  return s;
}

const cli = decodeCli;

t.test('decode --json and the table print byte for byte what the frame descriptions give', async (t) => {
  const capture = buildCapture();
  const file = join(dir, 'all.pcap');
  writeFileSync(file, capture);
  for (const mode of ['json', 'text'] as const) {
    const want = reference(capture, mode);
    t.ok(want.split('\n').length > 20, `${mode}: the capture has frames`);
    t.match(
      want,
      mode === 'json' ? /"bodyError":"stored message/ : /body not decoded: stored message/,
      `${mode}: with a damaged body`,
    );
    const r = await cli(mode === 'json' ? [file, '--json'] : [file]);
    t.equal(r.code, 0);
    t.equal(r.stderr, '');
    t.equal(r.stdout.toString('hex'), Buffer.from(want).toString('hex'), `${mode}: same bytes`);
  }
  // The JSON lines are JSON.stringify's.
  for (const line of reference(capture, 'json').trimEnd().split('\n')) t.equal(JSON.stringify(JSON.parse(line)), line);
});

t.test('writeFrameJson writes frameJson(describeCommand()) and a newline', async (t) => {
  const ctx = { ts: 1.5, src: 'a', dst: 'b', requestCode: RequestCode.PULL_MESSAGE, latencyMs: 0.25 };
  for (const c of commands()) {
    const out = new OutputBuffer(64); // smaller than most lines: every piece goes to a new buffer
    const context = c.cmd.flag & 1 ? ctx : {};
    writeFrameJson(out, c.cmd, context);
    t.equal(
      Buffer.concat(out.take()).toString(),
      frameJson(describeCommand(c.cmd, context)) + '\n',
      `opaque ${c.cmd.opaque}`,
    );
  }
});

t.test('jsonNumber is JSON.stringify for numbers', async (t) => {
  const xs = [
    0,
    -0,
    1,
    -1,
    2 ** 31,
    2 ** 31 - 1,
    -(2 ** 31),
    -(2 ** 31) - 1,
    2 ** 53,
    2 ** 53 - 1,
    2 ** 53 + 2,
    1e9,
    1e9 - 1,
    1e9 + 1,
    1e12,
    1e12 - 1,
  ];
  xs.push(
    1.5,
    -1.5,
    NaN,
    Infinity,
    -Infinity,
    Number(9223372036854775807n),
    Number(-9223372036854775808n),
    1e21,
    1e-7,
    123456789012345,
    -1_500_000_000_001,
  );
  for (let k = 0; k <= 53; k++)
    for (let i = -2; i <= 2; i++) xs.push(2 ** k + i, k * 1e9 + i, Math.floor(Math.random() * 2 ** k));
  let bad = 0;
  for (const x of xs) if (jsonNumber(x) !== JSON.stringify(x)) bad++;
  t.equal(bad, 0, `${xs.length} numbers`);
});

t.test('OutputBuffer: UTF-8 as Buffer.from writes it, pieces handed out never written again', async (t) => {
  const out = new OutputBuffer(16);
  const pieces = ['abc', 'ü€\u{1f600}', 'lone \ud800 and \udc00', 'x'.repeat(100), '', 'tail'];
  const taken: Buffer[] = [];
  const copies: Buffer[] = [];
  for (const p of pieces) {
    out.text(p);
    out.ascii('|');
    out.bytes(Buffer.from([0x2b]));
    // Hand out after each piece, and keep a copy to check that later writes leave the views alone.
    for (const b of out.take()) {
      taken.push(b);
      copies.push(Buffer.from(b));
    }
  }
  t.equal(out.length, 0);
  t.equal(Buffer.concat(taken).toString('hex'), Buffer.from(pieces.map((p) => p + '|+').join('')).toString('hex'));
  t.same(taken, copies, 'views unchanged by later writes');
  out.text('end');
  t.equal(out.length, 3);
  t.equal(Buffer.concat(out.take()).toString(), 'end');
});
