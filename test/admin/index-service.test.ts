// QUERY_MESSAGE's key index on the embedded broker: keys of KEYS and UNIQ_KEY are found after a
// restart, and after the index file was damaged or removed (rebuilt from the commit log).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import t from 'tap';
import { startBroker } from '../../lib/broker/index.js';
import { AdminClient } from '../../lib/admin/index.js';
import { Producer } from '../../lib/producer/index.js';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rw-index-'));
t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
const indexFile = path.join(dataDir, 'index', 'keys.idx');
const topic = 'IndexTopic';

async function withCluster<T>(fn: (admin: AdminClient) => Promise<T>, warnings: string[] = []): Promise<T> {
  const b = await startBroker({ dataDir, queues: 2, warn: (l) => warnings.push(l) });
  const admin = new AdminClient({ namesrvAddr: b.namesrv });
  try {
    return await fn(admin);
  } finally {
    await admin.close();
    await b.close();
  }
}

const bodiesOf = async (admin: AdminClient, key: string): Promise<string[]> => (await admin.messageByKey(topic, key)).map((f) => f.message.body.toString()).sort();

let uniq = '';
t.test('keys are indexed as messages are stored', async (t) => {
  await withCluster(async (admin) => {
    const p = new Producer({ namesrvAddr: admin.instance.options.namesrvAddrs.join(';'), group: 'index_pg' });
    await p.start();
    for (let i = 0; i < 10; i++) {
      const r = await p.send({ topic, body: `b${i}`, keys: [`k${i % 2}`, `id-${i}`] });
      if (i === 7) uniq = r.msgId;
    }
    await p.send({ topic, body: 'no keys' });
    await p.shutdown();
    t.same(await bodiesOf(admin, 'k1'), ['b1', 'b3', 'b5', 'b7', 'b9']);
    t.same(await bodiesOf(admin, 'id-4'), ['b4']);
    t.same((await admin.messageById(uniq, topic)).map((f) => f.message.body.toString()), ['b7'], 'UNIQ_KEY');
    t.same(await bodiesOf(admin, 'k'), [], 'a key is matched whole, not as a prefix');
    t.same((await admin.messageByKey(topic, 'k1', { maxNum: 2 })).length, 2, 'maxNum');
  });
});

t.test('the index survives a restart', async (t) => {
  await withCluster(async (admin) => {
    t.same(await bodiesOf(admin, 'k0'), ['b0', 'b2', 'b4', 'b6', 'b8']);
    t.same((await admin.messageById(uniq, topic)).map((f) => f.message.body.toString()), ['b7']);
  });
});

t.test('a damaged index file is cut and rebuilt from the commit log', async (t) => {
  const text = fs.readFileSync(indexFile, 'utf8');
  const lines = text.split('\n');
  // garbage in the middle, and a torn last line
  fs.writeFileSync(indexFile, [...lines.slice(0, 5), '{"k":"Index', ...lines.slice(6)].join('\n').slice(0, -10));
  const warnings: string[] = [];
  await withCluster(async (admin) => {
    t.same(await bodiesOf(admin, 'k1'), ['b1', 'b3', 'b5', 'b7', 'b9']);
    t.same(await bodiesOf(admin, 'id-9'), ['b9']);
  }, warnings);
  t.match(warnings.join('\n'), /keys\.idx: damaged after byte \d+; the rest is rebuilt from the commit log/);
  t.equal(fs.readFileSync(indexFile, 'utf8').split('\n').filter((l) => l.includes('"IndexTopic#k1"')).length, 5, 'no entry twice after the rebuild');
});

t.test('a missing index file is rebuilt from the commit log', async (t) => {
  fs.rmSync(indexFile);
  await withCluster(async (admin) => {
    t.same(await bodiesOf(admin, 'k0'), ['b0', 'b2', 'b4', 'b6', 'b8']);
    t.same((await admin.messageById(uniq, topic)).map((f) => f.message.body.toString()), ['b7']);
  });
});

t.test('a restart reads the commit log only after what the index file covers, keyless records included', async (t) => {
  const { IndexService } = await import('../../lib/broker/index-service.js');
  const { createMessageRecord } = await import('./record.js');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rw-index-unit-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const records = [createMessageRecord('T', { KEYS: 'a' }, 0), createMessageRecord('T', {}, 1), createMessageRecord('T', {}, 2)];
  const log: Array<{ offset: number; record: Buffer }> = [];
  let at = 0;
  for (const r of records) {
    log.push({ offset: at, record: r });
    at += r.length;
  }
  const asked: number[] = [];
  const source = { commitLogEnd: at, records: (from: number) => (asked.push(from), log.filter((x) => x.offset >= from)) };
  const first = new IndexService(dir, () => undefined);
  first.open(source);
  first.close();
  t.same(asked, [0]);
  const second = new IndexService(dir, () => undefined);
  second.open(source);
  t.same(asked, [0, at], 'the second open starts after the last (keyless) record');
  t.same(second.query('T', 'a', 64, 0, Number.MAX_SAFE_INTEGER).entries.map((e) => e.phys), [0]);
  second.close();
});

t.test('a commit log that lost its tail: keys of the lost records go, and new records where they were are indexed', async (t) => {
  const { IndexService } = await import('../../lib/broker/index-service.js');
  const { createMessageRecord } = await import('./record.js');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rw-index-cut-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const kept = createMessageRecord('T', { KEYS: 'kept' }, 0);
  const lost = createMessageRecord('T', { KEYS: 'lost' }, 1);
  const first = new IndexService(dir, () => undefined);
  first.open({ commitLogEnd: kept.length + lost.length, records: () => [{ offset: 0, record: kept }, { offset: kept.length, record: lost }] });
  first.close();
  const warnings: string[] = [];
  const second = new IndexService(dir, (l) => warnings.push(l));
  second.open({ commitLogEnd: kept.length, records: (from) => (from <= 0 ? [{ offset: 0, record: kept }] : []) });
  t.match(warnings.join('\n'), /commit log ends at \d+; 1 keys of lost records dropped/);
  const again = createMessageRecord('T', { KEYS: 'new' }, 1);
  second.add('T', { KEYS: 'new' }, kept.length, again.length, 3);
  const phys = (idx: InstanceType<typeof IndexService>, k: string): number[] => idx.query('T', k, 64, 0, Number.MAX_SAFE_INTEGER).entries.map((e) => e.phys);
  t.same([phys(second, 'kept'), phys(second, 'lost'), phys(second, 'new')], [[0], [], [kept.length]]);
  second.close();
  const third = new IndexService(dir, () => undefined);
  third.open({ commitLogEnd: kept.length + again.length, records: () => [] });
  t.same([phys(third, 'kept'), phys(third, 'lost'), phys(third, 'new')], [[0], [], [kept.length]], 'and so after the next restart');
});
