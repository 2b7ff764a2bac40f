import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { decodeMulti } from '@msgpack/msgpack';
import t from 'tap';
import { createRequest, createResponse, encodeCommand, RequestCode, ResponseCode } from '../../protocol/index.js';
import { decodeCli } from './decode-cli.js';
import { heartbeat, LINKTYPE, linkAll, pcap, pullFound, pullRequest, TcpConnection } from './build-pcap.js';

const cli = decodeCli;

const dir = mkdtempSync(join(tmpdir(), 'rocketwire-decode-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

const pull = pullRequest(7, {
  topic: 'Orders',
  group: 'cg-orders',
  queueId: 2,
  queueOffset: 10,
  commitOffset: 10,
  sysFlag: 3,
});
const found = pullFound(pull, 3, { bodySize: 32 });
const hb = heartbeat(8);
const hbOk = createResponse(hb, ResponseCode.SUCCESS, { serializeType: 'ROCKETMQ' });
const oneway = createRequest(RequestCode.UPDATE_CONSUMER_OFFSET, {
  opaque: 9,
  oneway: true,
  extFields: { consumerGroup: 'cg-orders', topic: 'Orders', queueId: '2', commitOffset: '13' },
});
const frames = [pull, found, hb, hbOk, oneway].map((c) => encodeCommand(c));
const rawFile = join(dir, 'frames.bin');
writeFileSync(rawFile, Buffer.concat(frames));

t.test('raw frames: readable table by default', async (t) => {
  const r = await cli([rawFile]);
  t.equal(r.code, 0);
  t.equal(r.stderr, '');
  const lines = r.stdout.toString().trimEnd().split('\n');
  t.match(lines[0], /^REQ PULL_MESSAGE\(11\) #7 .*topic=Orders.* body=0$/);
  t.match(lines[1], /^RSP SUCCESS\(0\) #7 PULL_MESSAGE "FOUND" .* msgs=3$/);
  t.match(lines[2], /^ {4}msg Orders:2 queueOffset=10 msgId=UNIQ00000010 /);
  t.match(lines[5], /^REQ HEART_BEAT\(34\) #8 body=\d+ json=\{"clientID"/);
  t.match(lines[6], /^RSP SUCCESS\(0\) #8 HEART_BEAT \[ROCKETMQ\] body=0$/);
  t.match(lines[7], /^ONEWAY UPDATE_CONSUMER_OFFSET\(15\) #9 /);
});

t.test('raw frames: --json gives every field', async (t) => {
  const r = await cli([rawFile, '--json']);
  t.equal(r.code, 0);
  const objs = r.stdout
    .toString()
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l));
  t.equal(objs.length, 5);
  t.same(objs[0], {
    kind: 'request',
    code: 11,
    name: 'PULL_MESSAGE',
    opaque: 7,
    flag: 0,
    oneway: false,
    language: 'JAVA',
    version: 409,
    serializeType: 'JSON',
    remark: null,
    extFields: pull.extFields,
    bodyLength: 0,
  });
  const rsp = objs[1];
  t.equal(rsp.kind, 'response');
  t.equal(rsp.requestCode, 11, 'paired by opaque');
  t.equal(rsp.latencyMs, undefined, 'no times in a file of frames');
  t.equal(rsp.bodyLength, found.body!.length);
  t.equal(rsp.messages.length, 3);
  t.same(Object.keys(rsp.messages[0]), [
    'topic',
    'queueId',
    'queueOffset',
    'commitLogOffset',
    'sysFlag',
    'bornTimestamp',
    'bornHost',
    'storeTimestamp',
    'storeHost',
    'reconsumeTimes',
    'properties',
    'msgId',
    'offsetMsgId',
    'bodyBase64',
  ]);
  t.equal(rsp.messages[0].offsetMsgId, '0A00000100002A9F0000000000002710');
  t.equal(Buffer.from(rsp.messages[2].bodyBase64, 'base64').toString(), 'M'.repeat(32));
  t.same(objs[2].json.consumerDataSet, [{ groupName: 'cg1' }]);
  t.equal(objs[3].serializeType, 'ROCKETMQ');
  t.equal(objs[3].remark, null);
  t.same(objs[3].extFields, {});
  t.equal(objs[4].oneway, true);
  t.equal(objs[4].flag, 2);
});

t.test('raw frames: --msgpack stream of the same objects', async (t) => {
  const json = (await cli([rawFile, '--json'])).stdout
    .toString()
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l));
  const r = await cli([rawFile, '--msgpack']);
  t.equal(r.code, 0);
  const objs = [...decodeMulti(r.stdout)];
  t.same(objs, json);
});

t.test('--hex reads hex text with whitespace, from stdin', async (t) => {
  const hex = Buffer.concat(frames)
    .toString('hex')
    .replace(/(.{60})/g, '$1\n  ');
  const r = await cli(['--hex', '--json', '-'], Buffer.from(hex));
  t.equal(r.code, 0);
  t.equal(r.stdout.toString().trimEnd().split('\n').length, 5);
  const bad = await cli(['--hex', '-'], Buffer.from(encodeCommand(hb).toString('hex') + ' zz'));
  t.equal(bad.code, 1);
  t.match(bad.stdout.toString(), /^REQ HEART_BEAT/);
  t.equal(
    bad.stderr,
    `rocketwire decode: hex input: unexpected character "z" at character ${encodeCommand(hb).length * 2 + 1}\n`,
  );
});

t.test('stdin is decoded as it streams in', async (t) => {
  const input = new PassThrough();
  const all = Buffer.concat(frames);
  const done = cli(['-', '--json'], input);
  // Dribble the bytes in small pieces.
  for (let i = 0; i < all.length; i += 37) input.write(all.subarray(i, i + 37));
  input.end();
  const r = await done;
  t.equal(r.code, 0);
  t.equal(r.stdout.toString().trimEnd().split('\n').length, 5);
});

t.test('damaged input: earlier frames printed, one line on stderr, non-zero exit', async (t) => {
  const bad = Buffer.concat([frames[0]!, frames[2]!, Buffer.from('0000001005000000', 'hex'), frames[3]!]);
  const file = join(dir, 'bad.bin');
  writeFileSync(file, bad);
  const r = await cli([file, '--json']);
  t.equal(r.code, 1);
  t.equal(r.stdout.toString().trimEnd().split('\n').length, 2, 'the two frames before the damage');
  const at = frames[0]!.length + frames[2]!.length;
  t.equal(r.stderr, `rocketwire decode: damaged frame at byte ${at}: unknown serialize type 5\n`);
  t.notMatch(r.stderr, /\n\s+at /, 'no stack trace');

  const cut = join(dir, 'cut.bin');
  writeFileSync(cut, Buffer.concat(frames).subarray(0, frames[0]!.length + 20));
  const r2 = await cli([cut]);
  t.equal(r2.code, 1);
  t.equal(
    r2.stderr,
    `rocketwire decode: input ends inside the frame at byte ${frames[0]!.length} (20 of ${frames[1]!.length} bytes)\n`,
  );
});

t.test('usage errors and missing files are one line', async (t) => {
  const r = await cli([join(dir, 'nope.pcap')]);
  t.equal(r.code, 1);
  t.equal(r.stderr, `rocketwire decode: cannot read ${join(dir, 'nope.pcap')}: ENOENT\n`);
  const u = await cli([rawFile, '--json', '--msgpack']);
  t.equal(u.code, 2);
  const f = await cli([rawFile, '--filter', 'Orders']);
  t.equal(f.code, 2);
  t.match(f.stderr, /write topic=Orders or group=Orders/);
});

// A capture with two consumers' traffic for --filter and --stats.
function capture(): Buffer {
  const a = new TcpConnection({ ip: '10.0.0.5', port: 50000 }, { ip: '10.0.0.1', port: 10911 });
  const b = new TcpConnection(
    { ip: '10.0.0.6', port: 50001 },
    { ip: '10.0.0.1', port: 10911 },
    { ts: 1700000000.0005 },
  );
  const pkts = [...a.handshake(), ...b.handshake()];
  for (let i = 0; i < 4; i++) {
    const p = pullRequest(100 + i, {
      topic: 'Orders',
      group: 'cg-orders',
      queueId: 1,
      queueOffset: 10 * i,
      commitOffset: 10 * i,
      sysFlag: i === 0 ? 2 : 3,
    });
    pkts.push(...a.send(true, encodeCommand(p)));
    pkts.push(
      ...a.send(
        false,
        encodeCommand(
          i < 3 ? pullFound(p, 10) : createResponse(p, ResponseCode.PULL_NOT_FOUND, { remark: 'OFFSET_OVERFLOW_ONE' }),
        ),
      ),
    );
  }
  const u = createRequest(RequestCode.UPDATE_CONSUMER_OFFSET, {
    opaque: 200,
    oneway: true,
    extFields: { consumerGroup: 'cg-orders', topic: 'Orders', queueId: '1', commitOffset: '30' },
  });
  pkts.push(...a.send(true, encodeCommand(u)));
  const s = createRequest(RequestCode.SEND_MESSAGE_V2, {
    opaque: 300,
    extFields: {
      a: 'pg',
      b: 'Payments',
      c: 'TBW102',
      d: '4',
      e: '0',
      f: '0',
      g: '1700000000000',
      h: '0',
      i: 'TAGS\u0001x',
      j: '0',
      k: 'false',
      m: 'false',
    },
    body: Buffer.from('pay'),
  });
  pkts.push(...b.send(true, encodeCommand(s)));
  pkts.push(
    ...b.send(
      false,
      encodeCommand(createResponse(s, 0, { extFields: { msgId: 'X', queueId: '0', queueOffset: '0' } })),
    ),
  );
  return pcap(linkAll('ethernet', pkts), { linkType: LINKTYPE.ethernet });
}

t.test('capture: --json adds ts, src, dst, requestCode and latencyMs', async (t) => {
  const file = join(dir, 'c.pcap');
  writeFileSync(file, capture());
  const r = await cli([file, '--json']);
  t.equal(r.code, 0);
  t.equal(r.stderr, '');
  const objs = r.stdout
    .toString()
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l));
  t.equal(objs.length, 11);
  for (const o of objs) {
    t.equal(typeof o.ts, 'number');
    t.match(o.src, /^10\.0\.0\.\d:\d+$/);
    if (o.kind === 'response') {
      t.ok(o.requestCode === 11 || o.requestCode === 310, 'paired');
      t.ok(o.latencyMs > 0);
    }
  }
  t.same(Object.keys(objs[1]).slice(0, 8), ['ts', 'src', 'dst', 'kind', 'code', 'name', 'requestCode', 'latencyMs']);
});

t.test('capture: --filter by code, topic, group and address', async (t) => {
  const file = join(dir, 'c.pcap');
  writeFileSync(file, capture());
  const count = async (...f: string[]): Promise<number> => {
    const r = await cli([file, '--json', ...f.flatMap((x) => ['--filter', x])]);
    t.equal(r.code, 0);
    return r.stdout.toString().trim() === '' ? 0 : r.stdout.toString().trimEnd().split('\n').length;
  };
  t.equal(await count('PULL_MESSAGE'), 8, 'requests and their responses');
  t.equal(await count('11'), 8);
  t.equal(await count('code=PULL_NOT_FOUND'), 1, 'a response code name');
  t.equal(await count('topic=Payments'), 2);
  t.equal(await count('group=cg-orders'), 9);
  t.equal(await count('10.0.0.6'), 2, 'an address without port');
  t.equal(await count('addr=10.0.0.5:50000'), 9);
  t.equal(await count('SEND_MESSAGE_V2,UPDATE_CONSUMER_OFFSET'), 3, 'a comma list is OR');
  t.equal(await count('PULL_MESSAGE', 'topic=Payments'), 0, 'different kinds are AND');
});

t.test('capture: --stats', async (t) => {
  const file = join(dir, 'c.pcap');
  writeFileSync(file, capture());
  const r = await cli([file, '--stats', '--json']);
  t.equal(r.code, 0);
  const s = JSON.parse(r.stdout.toString());
  t.equal(s.byCode.PULL_MESSAGE.requests, 4);
  t.equal(s.byCode.PULL_MESSAGE.responses, 4);
  t.equal(s.byCode.PULL_MESSAGE.latencyMs.count, 4);
  t.ok(s.byCode.PULL_MESSAGE.latencyMs.p50 > 0);
  t.ok(s.byCode.PULL_MESSAGE.latencyMs.max >= s.byCode.PULL_MESSAGE.latencyMs.p99);
  t.same(s.pullResults, { FOUND: 3, NO_NEW_MSG: 1 });
  t.same(s.topics, ['Orders', 'Payments']);
  t.same(s.groups, ['cg-orders', 'pg']);
  t.equal(s.queues.length, 1);
  const q = s.queues[0];
  t.equal(q.group, 'cg-orders');
  t.equal(q.queueId, 1);
  t.equal(q.broker, '10.0.0.1:10911');
  t.same(
    q.commits.map((c: { offset: number; via: string }) => `${c.offset}/${c.via}`),
    ['10/pull', '20/pull', '30/pull', '30/update'],
  );
  t.equal(q.advancing, true);
  t.equal(q.pullResults.messages, 30);
  t.equal(q.unanswered, 0, 'every long poll came back');
  const text = await cli([file, '--stats']);
  t.match(text.stdout.toString(), /PULL_MESSAGE\(11\)\s+4/);
  t.match(text.stdout.toString(), /pull results: FOUND 3, NO_NEW_MSG 1/);
  t.match(text.stdout.toString(), /cg-orders Orders:1 @10\.0\.0\.1:10911: 4 pulls/);
  t.match(text.stdout.toString(), /offsets committed 4x: 10 … 30/);
});

t.test('capture: problems are reported and the exit code says data was lost', async (t) => {
  const file = join(dir, 't.pcap');
  const c = capture();
  writeFileSync(file, c.subarray(0, c.length - 5));
  const r = await cli([file]);
  t.equal(r.code, 1);
  t.match(
    r.stderr,
    /^rocketwire decode: capture truncated: packet \d+ at byte \d+ is cut short \(\d+ of \d+ bytes\)\n$/,
  );
  t.equal(
    r.stdout
      .toString()
      .trimEnd()
      .split('\n')
      .filter((l) => !l.startsWith('    ')).length,
    10,
    'every frame before the cut',
  );
});

t.test('--hex also reads a hex dump of a capture', async (t) => {
  const hex = capture()
    .toString('hex')
    .replace(/(.{64})/g, '$1\n');
  const r = await cli(['--hex', '--json', '-'], Buffer.from(hex));
  t.equal(r.code, 0);
  t.equal(r.stderr, '');
  const objs = r.stdout
    .toString()
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l));
  t.equal(objs.length, 11);
  t.equal(objs[0].src, '10.0.0.5:50000');
});

/** One client flow to port 10911 that carries all but the last 10 bytes of a PULL request. */
function cutFirstFrame(withHandshake: boolean): Buffer {
  const c = new TcpConnection({ ip: '10.0.0.7', port: 50007 }, { ip: '10.0.0.1', port: 10911 });
  const frame = encodeCommand(pullRequest(1));
  const pkts = [
    ...(withHandshake ? c.handshake() : []),
    ...c.send(true, frame.subarray(0, frame.length - 10)),
    c.fin(true),
  ];
  return pcap(linkAll('ethernet', pkts), { linkType: LINKTYPE.ethernet });
}

t.test('a flow whose first frame never completes: one line, exit 1 (the connection seen from its start)', async (t) => {
  const file = join(dir, 'cut-first.pcap');
  writeFileSync(file, cutFirstFrame(true));
  const r = await cli([file]);
  t.equal(r.code, 1, 'exit 1: a frame was lost');
  t.equal(r.stdout.toString(), '');
  t.match(
    r.stderr,
    /^rocketwire decode: 10\.0\.0\.7:50007 > 10\.0\.0\.1:10911: stream ends inside the frame at byte 0 \(\d+ of \d+ bytes\)[^\n]*\n$/,
  );
});

// The capture joined the connection mid-way: the stream framer's end() reports the cut scan
// candidate as an incomplete frame, which the CLI prints as one line and exits 1 on.
t.test('a flow joined mid-way whose first frame never completes: one line, exit 1', async (t) => {
  const file = join(dir, 'cut-first-midway.pcap');
  writeFileSync(file, cutFirstFrame(false));
  const r = await cli([file]);
  t.equal(r.code, 1, 'exit 1: a frame was lost');
  t.match(r.stderr, /^rocketwire decode: 10\.0\.0\.7:50007 > 10\.0\.0\.1:10911: .*ends inside .*\n$/);
});
