// The records the embedded broker stores for a fixed set of requests of every kind, compared byte for
// byte with test/broker/fixtures/stored-records.json (recorded before properties were stored as sent
// instead of decoded and encoded again). UPDATE_GOLDEN=1 records the file anew.
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { RequestCode, ResponseCode, createRequest, decodeMessage, type RemotingCommand } from '../../protocol/index.js';
import { startBroker } from '../../lib/broker/index.js';
import { ManualClock } from '../../lib/clock.js';
import { P1, P2, client } from './helpers.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const fixture = path.join(here, '..', '..', '..', 'test', 'broker', 'fixtures', 'stored-records.json');

const V2: Record<string, string> = {
  producerGroup: 'a',
  topic: 'b',
  defaultTopic: 'c',
  defaultTopicQueueNums: 'd',
  queueId: 'e',
  sysFlag: 'f',
  bornTimestamp: 'g',
  flag: 'h',
  properties: 'i',
  reconsumeTimes: 'j',
  unitMode: 'k',
  maxReconsumeTimes: 'l',
  batch: 'm',
};

function send(
  topic: string,
  body: string,
  properties: string,
  o: { queueId?: number; sysFlag?: number; reconsumeTimes?: number; maxReconsumeTimes?: number; v1?: boolean } = {},
): RemotingCommand {
  const f: Record<string, string> = {
    producerGroup: 'pg',
    topic,
    defaultTopic: 'TBW102',
    defaultTopicQueueNums: '4',
    queueId: String(o.queueId ?? 0),
    sysFlag: String(o.sysFlag ?? 0),
    bornTimestamp: '1700000000123',
    flag: '3',
    properties,
    reconsumeTimes: String(o.reconsumeTimes ?? 0),
    unitMode: 'false',
    batch: 'false',
  };
  if (o.maxReconsumeTimes !== undefined) f.maxReconsumeTimes = String(o.maxReconsumeTimes);
  const ext: Record<string, string> = {};
  for (const [k, v] of Object.entries(f)) ext[o.v1 ? k : V2[k]!] = v;
  return createRequest(o.v1 ? RequestCode.SEND_MESSAGE : RequestCode.SEND_MESSAGE_V2, {
    extFields: ext,
    body: Buffer.from(body),
  });
}

function batch(topic: string, headerProps: string, items: { body: string; props: string }[]): RemotingCommand {
  const parts = items.map((it) => {
    const b = Buffer.from(it.body);
    const pr = Buffer.from(it.props);
    const buf = Buffer.alloc(22 + b.length + pr.length);
    buf.writeInt32BE(buf.length, 0);
    buf.writeInt32BE(7, 12);
    buf.writeInt32BE(b.length, 16);
    b.copy(buf, 20);
    buf.writeInt16BE(pr.length, 20 + b.length);
    pr.copy(buf, 22 + b.length);
    return buf;
  });
  const req = send(topic, '', headerProps);
  req.code = RequestCode.SEND_BATCH_MESSAGE;
  req.extFields!.m = 'true';
  req.body = Buffer.concat(parts);
  return req;
}

const p = (...kv: string[]): string => {
  const out: string[] = [];
  for (let i = 0; i < kv.length; i += 2) out.push(kv[i]! + P1 + kv[i + 1]!);
  return out.join(P2);
};

/** Every kind of send the broker stores, with property strings canonical and not. */
function requests(): { name: string; req: RemotingCommand }[] {
  const u = (n: number): string => `7F0000010000000000000000${String(n).padStart(8, '0')}`;
  const list: { name: string; req: RemotingCommand }[] = [
    { name: 'plain', req: send('Gold', 'a', p('UNIQ_KEY', u(1), 'WAIT', 'true', 'TAGS', 'TagA', 'KEYS', 'k1 k2')) },
    { name: 'v1', req: send('Gold', 'b', p('UNIQ_KEY', u(2), 'WAIT', 'true'), { v1: true }) },
    { name: 'trailing separator', req: send('Gold', 'c', p('UNIQ_KEY', u(3), 'TAGS', 'T') + P2) },
    { name: 'empty properties', req: send('Gold', 'd', '') },
    { name: 'no UNIQ_KEY', req: send('Gold', 'e', p('TAGS', 'NoKey')) },
    { name: 'duplicate names', req: send('Gold', 'f', p('TAGS', 'one', 'UNIQ_KEY', u(4), 'TAGS', 'two')) },
    { name: 'empty value and empty name', req: send('Gold', 'g', `A${P1}${P2}${P1}x${P2}UNIQ_KEY${P1}${u(5)}`) },
    { name: 'short and unseparated segments', req: send('Gold', 'h', `ab${P2}nosep${P2}${P2}K${P1}v`) },
    { name: 'numeric names', req: send('Gold', 'i', p('UNIQ_KEY', u(6), '7', 'seven', '01', 'x', 'b', 'y')) },
    { name: '__proto__ name', req: send('Gold', 'j', p('UNIQ_KEY', u(7), '__proto__', 'p', 'TAGS', 'P')) },
    { name: 'value holding \\u0001', req: send('Gold', 'k', p('UNIQ_KEY', u(8), 'X', `a${P1}b`)) },
    {
      name: 'broker names already present (same values)',
      req: send(
        'Gold',
        'l',
        p('MSG_REGION', 'DefaultRegion', 'UNIQ_KEY', u(9), 'TRACE_ON', 'true', 'CLUSTER', 'DefaultCluster'),
      ),
    },
    {
      name: 'broker names already present (other values)',
      req: send('Gold', 'm', p('CLUSTER', 'Other', 'TRACE_ON', 'false', 'UNIQ_KEY', u(10), 'MSG_REGION', 'R')),
    },
    { name: 'unicode', req: send('Gold', 'n', p('UNIQ_KEY', u(11), 'KEYS', 'ключ 键', 'TAGS', 'é')) },
    { name: 'delay level', req: send('Gold', 'o', p('UNIQ_KEY', u(12), 'DELAY', '3', 'WAIT', 'true')) },
    { name: 'delay level past the max', req: send('Gold', 'p', p('UNIQ_KEY', u(13), 'DELAY', '99')) },
    { name: 'timer', req: send('Gold', 'q', p('UNIQ_KEY', u(14), 'TIMER_DELAY_SEC', '30')) },
    {
      name: 'transaction half',
      req: send('Gold', 'r', p('UNIQ_KEY', u(15), 'TRAN_MSG', 'true', 'PGROUP', 'pg'), { sysFlag: 4 }),
    },
    {
      name: 'retry topic under the limit',
      req: send('%RETRY%cg', 's', p('UNIQ_KEY', u(16), 'RETRY_TOPIC', 'Gold', 'DELAY', '3'), { reconsumeTimes: 2 }),
    },
    {
      name: 'retry topic past the limit (DLQ)',
      req: send('%RETRY%cg', 't', p('UNIQ_KEY', u(17), 'DELAY', '3', 'RETRY_TOPIC', 'Gold'), {
        reconsumeTimes: 3,
        maxReconsumeTimes: 3,
      }),
    },
    {
      name: 'batch (Java layout: WAIT in header and items)',
      req: batch('GoldBatch', p('WAIT', 'true'), [
        { body: 'b1', props: p('UNIQ_KEY', u(18), 'WAIT', 'true', 'TAGS', 'A') },
        { body: 'b2', props: p('WAIT', 'true', 'UNIQ_KEY', u(19)) },
      ]),
    },
    {
      name: 'batch (header and item disagree, item without properties)',
      req: batch('GoldBatch', p('WAIT', 'false', 'X', 'h'), [
        { body: 'b3', props: p('UNIQ_KEY', u(20), 'WAIT', 'true') },
        { body: 'b4', props: '' },
        { body: 'b5', props: p('X', 'h', 'Y', 'i') + P2 },
      ]),
    },
    { name: 'batch (empty header)', req: batch('GoldBatch', '', [{ body: 'b6', props: p('UNIQ_KEY', u(21)) }]) },
  ];
  return list;
}

/** Every record of the commit log with the born host's port zeroed (the test's socket port varies). */
function storedRecords(dir: string): { topic: string; body: string; sha256: string; properties: string }[] {
  const segDir = path.join(dir, 'commitlog');
  const out: { topic: string; body: string; sha256: string; properties: string }[] = [];
  for (const f of fs.readdirSync(segDir).sort()) {
    const data = fs.readFileSync(path.join(segDir, f));
    let at = 0;
    while (at + 8 <= data.length) {
      const size = data.readInt32BE(at);
      if (size <= 0 || data.readInt32BE(at + 4) === (0xcbd43194 | 0)) break;
      const rec = Buffer.from(data.subarray(at, at + size));
      // the test's socket ports vary: born host port (IPv4 layout: 4 address bytes then the port)
      // and store host port (the broker's, after the store timestamp)
      rec.writeInt32BE(0, 48 + 4);
      rec.writeInt32BE(0, 64 + 4);
      const m = decodeMessage(rec, 0, { decompress: false });
      // IPv4 hosts and a one-byte topic length: body length at 84, then body, topic, properties
      const bodyLen = rec.readInt32BE(84);
      const topicLen = rec.readUInt8(88 + bodyLen);
      const propsAt = 89 + bodyLen + topicLen;
      out.push({
        topic: m.topic,
        body: m.body.toString(),
        sha256: crypto.createHash('sha256').update(rec).digest('hex'),
        properties: JSON.stringify(rec.subarray(propsAt + 2).toString('utf8')),
      });
      at += size;
    }
  }
  return out;
}

t.test('stored records are byte for byte those recorded for the same requests', async (t) => {
  const dataDir = t.testdir({});
  const clock = new ManualClock(1_700_000_100_000);
  const b = await startBroker({ queues: 4, dataDir, clock, timerWheelEnable: true });
  const c = client();
  t.teardown(() => c.close());
  const answers: Record<string, number> = {};
  for (const { name, req } of requests()) {
    const res = await c.invoke(b.broker, req);
    answers[name] = res.code;
    clock.advance(1);
  }
  await b.close();
  const records = storedRecords(dataDir);
  t.ok(
    Object.values(answers).every((code) => code === ResponseCode.SUCCESS),
    `every send stored: ${JSON.stringify(answers)}`,
  );
  if (process.env.UPDATE_GOLDEN === '1') {
    fs.mkdirSync(path.dirname(fixture), { recursive: true });
    fs.writeFileSync(fixture, `${JSON.stringify({ answers, records }, null, 1)}\n`);
    t.pass('fixture recorded');
    return;
  }
  const golden = JSON.parse(fs.readFileSync(fixture, 'utf8')) as { answers: typeof answers; records: typeof records };
  t.same(answers, golden.answers, 'the same answers');
  t.equal(records.length, golden.records.length, 'as many records');
  for (let i = 0; i < golden.records.length; i++) {
    t.same(records[i], golden.records[i], `record ${i} (${golden.records[i]!.topic} ${golden.records[i]!.body})`);
  }
});
