import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { escapeControl, escapeJsonText } from '../../lib/capture/format-text.js';
import { encodeStoredMessage } from '../../protocol/index.js';
import { createRequest, createResponse, encodeCommand, RequestCode, ResponseCode } from '../../protocol/index.js';
import { pullRequest } from '../capture/build-pcap.js';
import { decodeCli } from '../capture/decode-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'rocketwire-decode-input-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

t.test('a file that is not a capture says so and names its first bytes', async (t) => {
  const file = join(dir, 'package.json');
  writeFileSync(file, '{\n  "name": "x"\n}\n');
  const r = await decodeCli([file]);
  t.equal(r.code, 1);
  t.equal(
    r.stderr,
    `rocketwire decode: ${file} is not a pcap or pcapng file (starts with 7b 0a 20 20), nor RocketMQ remoting frames (frame length 2064261152 is out of range)\n`,
  );
  t.equal(r.stdout.length, 0);
  const stdin = await decodeCli(['-'], Buffer.from('<html><body>'));
  t.equal(stdin.code, 1);
  t.match(
    stdin.stderr,
    /^rocketwire decode: stdin is not a pcap or pcapng file \(starts with 3c 68 74 6d\), nor RocketMQ remoting frames \(.*\)\n$/,
  );
  const hex = await decodeCli(['--hex', '-'], Buffer.from('7b0a2020 7b0a2020'));
  t.match(
    hex.stderr,
    /^rocketwire decode: stdin is not a pcap or pcapng file \(starts with 7b 0a 20 20\)/,
    '--hex: the bytes the hex stands for',
  );
});

t.test('a file of frames damaged after the first frame still says where', async (t) => {
  const file = join(dir, 'frames-then-junk.bin');
  writeFileSync(file, Buffer.concat([encodeCommand(pullRequest(1)), Buffer.from('{\n  "junk": 1}')]));
  const r = await decodeCli([file]);
  t.equal(r.code, 1);
  t.match(r.stdout.toString(), /^REQ PULL_MESSAGE\(11\) #1 /);
  t.match(r.stderr, /^rocketwire decode: damaged frame at byte \d+/);
  t.notMatch(r.stderr, /not a pcap/);
});

t.test('escapeControl and escapeJsonText write controls as \\xNN', async (t) => {
  t.equal(
    escapeControl('a\x1b[2Jb\x07c\x7f\x9bd\u00e9'),
    'a\\x1b[2Jb\\x07c\\x7f\\x9bd\u00e9',
    'C0, DEL and C1; other characters as they are',
  );
  t.equal(escapeJsonText(JSON.stringify('a\x1bb\n"q"')), '"a\\x1bb\\n\\"q\\""');
  t.equal(escapeJsonText(JSON.stringify('lit\\u001b')), '"lit\\\\u001b"', 'a backslash typed before u001b is text');
  t.equal(escapeJsonText(JSON.stringify('\x9b')), '"\\x9b"', 'JSON leaves C1 raw; we do not');
});

/** Strings a hostile or broken client could put in a frame: a title change, a screen clear, a C1 CSI, a bell. */
const TOPIC = 'T\x1b]0;owned\x07';
const GROUP = 'cg\x9b2J';
const RAW = /[\x00-\x09\x0b-\x1f\x7f-\x9f]/;

t.test(
  'control characters from a capture are escaped in every text output, and kept as they are in JSON',
  async (t) => {
    const pull = pullRequest(7, { topic: TOPIC, group: GROUP, queueId: 1 });
    const record = encodeStoredMessage({
      topic: TOPIC,
      queueId: 1,
      queueOffset: 0,
      commitLogOffset: 0,
      bornTimestamp: 1700000000000,
      bornHost: '10.0.0.5:50000',
      storeTimestamp: 1700000000100,
      storeHost: '10.0.0.1:10911',
      body: Buffer.from('x'),
      properties: { TAGS: 'tag\x1b[31m', KEYS: 'k\x07', UNIQ_KEY: 'U1' },
    });
    const found = createResponse(pull, ResponseCode.SUCCESS, {
      remark: 'FOUND\x1b[2J',
      extFields: { nextBeginOffset: '1', minOffset: '0', maxOffset: '1', suggestWhichBrokerId: '0' },
      body: record,
    });
    const hb = createRequest(RequestCode.HEART_BEAT, {
      opaque: 8,
      body: Buffer.from(
        JSON.stringify({ clientID: 'c\x1b[8m', consumerDataSet: [{ groupName: GROUP }], producerDataSet: [] }),
      ),
    });
    const commit = createRequest(RequestCode.UPDATE_CONSUMER_OFFSET, {
      opaque: 9,
      oneway: true,
      extFields: { consumerGroup: GROUP, topic: TOPIC, queueId: '1', commitOffset: '1' },
    });
    const pull2 = pullRequest(10, { topic: TOPIC, group: GROUP, queueId: 2 });
    const refused = createResponse(pull2, ResponseCode.SUBSCRIPTION_NOT_EXIST, {
      remark: `no subscription of ${GROUP}`,
    });
    const file = join(dir, 'hostile.bin');
    writeFileSync(file, Buffer.concat([pull, found, hb, commit, pull2, refused].map((c) => encodeCommand(c))));

    const text = await decodeCli([file]);
    t.equal(text.code, 0, text.stderr);
    const out = text.stdout.toString();
    t.notMatch(out, RAW, 'no raw control character in the frames');
    t.match(out, 'topic=T\\x1b]0;owned\\x07');
    t.match(out, 'consumerGroup=cg\\x9b2J');
    t.match(out, '"FOUND\\x1b[2J"');
    t.match(out, 'msg T\\x1b]0;owned\\x07:1 ');
    t.match(out, 'tags=tag\\x1b[31m keys=k\\x07');
    t.match(out, '"clientID":"c\\x1b[8m"');

    const stats = await decodeCli([file, '--stats']);
    t.equal(stats.code, 0, stats.stderr);
    t.notMatch(stats.stdout.toString(), RAW, 'no raw control character in --stats');
    t.match(stats.stdout.toString(), 'topics: T\\x1b]0;owned\\x07');
    t.match(stats.stdout.toString(), 'groups: cg\\x9b2J');

    const doctor = await decodeCli([file, '--doctor']);
    t.equal(doctor.code, 3, 'the refused pull is a finding');
    t.notMatch(doctor.stdout.toString(), RAW, 'no raw control character in --doctor');
    t.match(doctor.stdout.toString(), 'cg\\x9b2J');

    const json = await decodeCli([file, '--json']);
    t.equal(json.code, 0);
    const frames = json.stdout
      .toString()
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { extFields: Record<string, string>; remark: string | null });
    t.equal(frames[0]!.extFields.topic, TOPIC, 'JSON keeps the bytes (JSON escapes them itself)');
    t.equal(frames[1]!.remark, 'FOUND\x1b[2J');
  },
);
