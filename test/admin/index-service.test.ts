// QUERY_MESSAGE's key index on the embedded broker: keys of KEYS and UNIQ_KEY are found after a
// restart, and after the index file was damaged or removed (rebuilt from the commit log); full
// files are sealed to disk, so the memory the index holds is bounded.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import t from 'tap';
import { startBroker } from '../../lib/broker/index.js';
import { AdminClient } from '../../lib/admin/index.js';
import { Producer } from '../../lib/producer/index.js';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rw-index-'));
t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
const indexFile = path.join(dataDir, 'index', '0.active');
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

const bodiesOf = async (admin: AdminClient, key: string): Promise<string[]> =>
  (await admin.messageByKey(topic, key)).map((f) => f.message.body.toString()).sort();

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
    t.same(
      (await admin.messageById(uniq, topic)).map((f) => f.message.body.toString()),
      ['b7'],
      'UNIQ_KEY',
    );
    t.same(await bodiesOf(admin, 'k'), [], 'a key is matched whole, not as a prefix');
    t.same((await admin.messageByKey(topic, 'k1', { maxNum: 2 })).length, 2, 'maxNum');
  });
});

t.test('the index survives a restart', async (t) => {
  await withCluster(async (admin) => {
    t.same(await bodiesOf(admin, 'k0'), ['b0', 'b2', 'b4', 'b6', 'b8']);
    t.same(
      (await admin.messageById(uniq, topic)).map((f) => f.message.body.toString()),
      ['b7'],
    );
  });
});

t.test('a damaged index file is cut and rebuilt from the commit log', async (t) => {
  const data = fs.readFileSync(indexFile);
  // garbage in the middle (entry 3), and a torn last entry
  data.fill(0xff, 3 * 28, 4 * 28);
  fs.writeFileSync(indexFile, data.subarray(0, data.length - 10));
  const warnings: string[] = [];
  await withCluster(async (admin) => {
    // a key indexed twice would answer its message twice
    t.same(await bodiesOf(admin, 'k1'), ['b1', 'b3', 'b5', 'b7', 'b9']);
    t.same(await bodiesOf(admin, 'id-9'), ['b9']);
  }, warnings);
  t.match(warnings.join('\n'), /0\.active: damaged after byte \d+; the rest is rebuilt from the commit log/);
  await withCluster(async (admin) => {
    t.same(await bodiesOf(admin, 'k1'), ['b1', 'b3', 'b5', 'b7', 'b9'], 'and so after the next restart');
  });
});

t.test('a missing index file is rebuilt from the commit log', async (t) => {
  fs.rmSync(indexFile);
  await withCluster(async (admin) => {
    t.same(await bodiesOf(admin, 'k0'), ['b0', 'b2', 'b4', 'b6', 'b8']);
    t.same(
      (await admin.messageById(uniq, topic)).map((f) => f.message.body.toString()),
      ['b7'],
    );
  });
});

t.test('a restart reads the commit log only after what the index file covers, keyless records included', async (t) => {
  const { IndexService } = await import('../../lib/broker/index-service.js');
  const { createMessageRecord } = await import('./record.js');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rw-index-unit-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const records = [
    createMessageRecord('T', { KEYS: 'a' }, 0),
    createMessageRecord('T', {}, 1),
    createMessageRecord('T', {}, 2),
  ];
  const log: Array<{ offset: number; record: Buffer }> = [];
  let at = 0;
  for (const r of records) {
    log.push({ offset: at, record: r });
    at += r.length;
  }
  const asked: number[] = [];
  const source = {
    commitLogEnd: at,
    records: (from: number) => {
      asked.push(from);
      return log.filter((x) => x.offset >= from);
    },
  };
  const first = new IndexService(dir, () => undefined);
  first.open(source);
  first.close();
  t.same(asked, [0]);
  const second = new IndexService(dir, () => undefined);
  second.open(source);
  t.same(asked, [0, at], 'the second open starts after the last (keyless) record');
  t.same(
    second.query('T', 'a', 64, 0, Number.MAX_SAFE_INTEGER).entries.map((e) => e.phys),
    [0],
  );
  second.close();
});

t.test(
  'a commit log that lost its tail: keys of the lost records go, and new records where they were are indexed',
  async (t) => {
    const { IndexService } = await import('../../lib/broker/index-service.js');
    const { createMessageRecord } = await import('./record.js');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rw-index-cut-'));
    t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
    const kept = createMessageRecord('T', { KEYS: 'kept' }, 0);
    const lost = createMessageRecord('T', { KEYS: 'lost' }, 1);
    const first = new IndexService(dir, () => undefined);
    first.open({
      commitLogEnd: kept.length + lost.length,
      records: () => [
        { offset: 0, record: kept },
        { offset: kept.length, record: lost },
      ],
    });
    first.close();
    const warnings: string[] = [];
    const second = new IndexService(dir, (l) => warnings.push(l));
    second.open({ commitLogEnd: kept.length, records: (from) => (from <= 0 ? [{ offset: 0, record: kept }] : []) });
    t.match(warnings.join('\n'), /but the commit log ends at \d+; the keys after \d+ are indexed again/);
    const again = createMessageRecord('T', { KEYS: 'new' }, 1);
    second.add('T', { KEYS: 'new' }, kept.length, again.length, 3);
    const phys = (idx: InstanceType<typeof IndexService>, k: string): number[] =>
      idx.query('T', k, 64, 0, Number.MAX_SAFE_INTEGER).entries.map((e) => e.phys);
    t.same([phys(second, 'kept'), phys(second, 'lost'), phys(second, 'new')], [[0], [], [kept.length]]);
    second.close();
    const third = new IndexService(dir, () => undefined);
    third.open({ commitLogEnd: kept.length + again.length, records: () => [] });
    t.same(
      [phys(third, 'kept'), phys(third, 'lost'), phys(third, 'new')],
      [[0], [], [kept.length]],
      'and so after the next restart',
    );
  },
);

t.test('full index files are sealed to disk and still answer, across a restart', async (t) => {
  const { IndexService } = await import('../../lib/broker/index-service.js');
  const { createMessageRecord } = await import('./record.js');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rw-index-seal-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const log: Array<{ offset: number; record: Buffer }> = [];
  let at = 0;
  const tuning = { entriesPerFile: 16, slotsPerFile: 4, flushEntries: 3 };
  const first = new IndexService(dir, () => undefined, tuning);
  first.open({ commitLogEnd: 0, records: () => [] });
  for (let i = 0; i < 100; i++) {
    const props = { KEYS: `k${i % 3} only-${i}` };
    const r = createMessageRecord('T', props, i);
    log.push({ offset: at, record: r });
    first.add('T', props, at, r.length, 1000 + i);
    at += r.length;
  }
  const phys = (idx: InstanceType<typeof IndexService>, k: string, max = 64): number[] =>
    idx.query('T', k, max, 0, Number.MAX_SAFE_INTEGER).entries.map((e) => e.phys);
  const expectK1 = log
    .filter((_, i) => i % 3 === 1)
    .map((x) => x.offset)
    .reverse();
  t.same(phys(first, 'k1'), expectK1, 'newest first, from the open file and the sealed ones');
  t.same(phys(first, 'only-5'), [log[5]!.offset]);
  t.same(phys(first, 'k1', 4), expectK1.slice(0, 4), 'maxNum');
  t.same(
    first.query('T', 'k1', 64, 1000 + 90, 1000 + 95).entries.map((e) => e.storeTimestamp),
    [1094, 1091],
    'the store-time range',
  );
  first.close();
  const sealed = fs.readdirSync(path.join(dir, 'index')).filter((n) => n.endsWith('.idx'));
  t.ok(sealed.length >= 10, `200 keys in files of 16 entries: ${sealed.length} sealed`);
  const asked: number[] = [];
  const second = new IndexService(dir, () => undefined, tuning);
  second.open({
    commitLogEnd: at,
    records: (from) => {
      asked.push(from);
      return log.filter((x) => x.offset >= from);
    },
  });
  t.same(asked, [at], 'nothing indexed again after a clean close');
  t.same(phys(second, 'k1'), expectK1);
  t.same(phys(second, 'only-99'), [log[99]!.offset]);
  second.close();
});

t.test('keys of one hash are answered together, and the admin client keeps the matching ones (as Java)', async (t) => {
  // "Aa" and "BB" have the same Java String#hashCode, and so do "T#Aa" and "T#BB"
  const { IndexService } = await import('../../lib/broker/index-service.js');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rw-index-hash-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const idx = new IndexService(dir, () => undefined);
  idx.open({ commitLogEnd: 0, records: () => [] });
  idx.add('T', { KEYS: 'Aa' }, 0, 10, 1);
  idx.add('T', { KEYS: 'BB' }, 10, 10, 2);
  t.same(
    idx.query('T', 'Aa', 64, 0, 10).entries.map((e) => e.phys),
    [10, 0],
  );
  idx.close();
  await withCluster(async (admin) => {
    const p = new Producer({ namesrvAddr: admin.instance.options.namesrvAddrs.join(';'), group: 'index_hash_pg' });
    await p.start();
    await p.send({ topic, body: 'aa', keys: 'Aa' });
    await p.send({ topic, body: 'bb', keys: 'BB' });
    await p.shutdown();
    t.same(await bodiesOf(admin, 'Aa'), ['aa']);
    t.same(await bodiesOf(admin, 'BB'), ['bb']);
  });
});

t.test('the JSON-lines index of an earlier version is removed and the index rebuilt', async (t) => {
  const legacy = path.join(dataDir, 'index', 'keys.idx');
  fs.writeFileSync(legacy, '{"k":"IndexTopic#k1","p":0,"n":1,"t":1}\n');
  fs.rmSync(indexFile);
  await withCluster(async (admin) => {
    t.same(await bodiesOf(admin, 'k0'), ['b0', 'b2', 'b4', 'b6', 'b8']);
  });
  t.notOk(fs.existsSync(legacy));
});
