// A config file the broker cannot read is never replaced. The broker loads the
// .bak (Java's ConfigManager does too) and says so, or refuses to start with one line naming the
// file; every write keeps the previous file as .bak.
import * as fs from 'node:fs';
import * as path from 'node:path';
import t from 'tap';
import { ConfigFileError, startBroker } from '../../lib/broker/index.js';
import { ConsumerOffsetManager } from '../../lib/broker/consumer-offset-manager.js';
import { TopicConfigManager, newTopicConfig } from '../../lib/broker/topic-config.js';

const cfg = (dir: string, name: string): string => path.join(dir, 'config', name);

t.test('consumerOffset.json: every persist keeps the previous file as .bak', async (t) => {
  const dir = t.testdir({});
  const m = new ConsumerOffsetManager(dir, () => undefined);
  m.load();
  m.commit('g', 'T', 0, 1);
  m.persist();
  t.notOk(fs.existsSync(cfg(dir, 'consumerOffset.json.bak')), 'no .bak before there was a file');
  const first = fs.readFileSync(cfg(dir, 'consumerOffset.json'), 'utf8');
  m.commit('g', 'T', 0, 2);
  m.persist();
  t.equal(fs.readFileSync(cfg(dir, 'consumerOffset.json.bak'), 'utf8'), first, '.bak holds the previous version');
});

t.test('hostile group names (issue 13: evil,5:) survive a restart with every other group intact', async (t) => {
  const dir = t.testdir({});
  const m = new ConsumerOffsetManager(dir, () => undefined);
  m.load();
  const groups = ['cg1', 'evil,5:', 'a"b', 'x}{', 'ünï😀'];
  for (const [i, g] of groups.entries()) m.commit(g, 'T', 0, 100 + i);
  m.persist();
  const again = new ConsumerOffsetManager(dir, () => undefined);
  again.load();
  for (const [i, g] of groups.entries()) t.equal(again.query(g, 'T', 0), 100 + i, g);
});

t.test('an offset committed again unchanged does not rewrite the file', async (t) => {
  const dir = t.testdir();
  const m = new ConsumerOffsetManager(dir, () => undefined);
  m.load();
  m.commit('g', 'T', 0, 7);
  m.persist();
  const written = fs.statSync(cfg(dir, 'consumerOffset.json')).ino;
  m.commit('g', 'T', 0, 7);
  m.persist();
  t.equal(fs.statSync(cfg(dir, 'consumerOffset.json')).ino, written, 'the same file: no rewrite, no fsync');
  m.commit('g', 'T', 0, 8);
  m.persist();
  t.not(fs.statSync(cfg(dir, 'consumerOffset.json')).ino, written, 'a moved offset is written');
});

t.test(
  'an unreadable consumerOffset.json with a good .bak: loaded from the .bak, the bad file kept aside',
  async (t) => {
    const dir = t.testdir({});
    let b = await startBroker({ dataDir: dir, warn: () => undefined });
    b.instances[0]!.offsets.commit('cg1', 'T', 0, 41);
    b.instances[0]!.offsets.persist();
    b.instances[0]!.offsets.commit('cg1', 'T', 0, 42);
    await b.close();
    fs.writeFileSync(cfg(dir, 'consumerOffset.json'), '{\n\t"offsetTable":{\n\t\t"T@evil');
    const warnings: string[] = [];
    b = await startBroker({ dataDir: dir, warn: (l) => warnings.push(l) });
    t.teardown(() => b.close());
    t.equal(b.instances[0]!.offsets.query('cg1', 'T', 0), 41, 'the .bak (one flush older: a redelivery, never a loss)');
    t.match(
      warnings.join('\n'),
      /consumerOffset.json cannot be read .*loaded its backup .*moved the unreadable file to .*consumerOffset.json.unreadable/,
    );
    t.equal(
      fs.readFileSync(cfg(dir, 'consumerOffset.json.unreadable'), 'utf8'),
      '{\n\t"offsetTable":{\n\t\t"T@evil',
      'the unreadable file is kept as it was',
    );
  },
);

t.test('the logger option: the same damage report reaches a logger object at warn (issue 28)', async (t) => {
  const dir = t.testdir({});
  let b = await startBroker({ dataDir: dir, logger: false });
  b.instances[0]!.offsets.commit('cg1', 'T', 0, 41);
  b.instances[0]!.offsets.persist();
  b.instances[0]!.offsets.commit('cg1', 'T', 0, 42);
  await b.close();
  fs.writeFileSync(cfg(dir, 'consumerOffset.json'), '{"offsetTable":{"T@');
  const lines: { level: string; message: string }[] = [];
  const at = (level: string) => (message: string) => void lines.push({ level, message });
  b = await startBroker({
    dataDir: dir,
    logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') },
  });
  t.teardown(() => b.close());
  t.equal(
    lines.filter((l) => l.level === 'warn' && /consumerOffset.json cannot be read/.test(l.message)).length,
    1,
    'one warn line',
  );
});

for (const [name, bad] of [
  ['consumerOffset.json', '{"offsetTable":{"T@g":{0:'],
  ['topics.json', '{"topicConfigTable":{"T":{"readQueueNums":"x"'],
  ['delayOffset.json', 'garbage'],
] as const) {
  t.test(`an unreadable ${name} and no .bak: the broker refuses to start and leaves the file as it is`, async (t) => {
    const dir = t.testdir({ config: { [name]: bad } });
    const err = await startBroker({ dataDir: dir, warn: () => undefined }).then(
      () => null,
      (e: unknown) => e,
    );
    t.type(err, ConfigFileError);
    t.equal((err as ConfigFileError).file, cfg(dir, name));
    t.match((err as Error).message, /cannot be read .*refusing to start so that the file is not overwritten/);
    t.notMatch((err as Error).message, /\n/, 'one line');
    t.equal(fs.readFileSync(cfg(dir, name), 'utf8'), bad, 'not overwritten, not deleted');
  });

  t.test(`an unreadable ${name} and an unreadable .bak: refused too`, async (t) => {
    const dir = t.testdir({ config: { [name]: bad, [`${name}.bak`]: '' } });
    await t.rejects(startBroker({ dataDir: dir, warn: () => undefined }), { name: 'ConfigFileError' });
    t.equal(fs.readFileSync(cfg(dir, name), 'utf8'), bad);
  });
}

t.test('topics.json: unreadable with a good .bak, topics come back from it', async (t) => {
  const dir = t.testdir({});
  const m = new TopicConfigManager(dir, () => undefined);
  m.load();
  m.put({ ...newTopicConfig('Orders', 3), order: true });
  m.put(newTopicConfig('Other', 2));
  fs.writeFileSync(cfg(dir, 'topics.json'), '{"topicConfigTable":');
  const warnings: string[] = [];
  const again = new TopicConfigManager(dir, (l) => warnings.push(l));
  again.load();
  t.same(
    again.get('Orders'),
    { ...newTopicConfig('Orders', 3), order: true },
    'the .bak has the topic with its settings',
  );
  t.equal(again.get('Other'), undefined, 'the .bak is one change older');
  t.match(warnings.join('\n'), /topics.json cannot be read/);
});

t.test('a missing file with a .bak (a crash between Java-style renames): loaded from .bak', async (t) => {
  const dir = t.testdir({ config: { 'consumerOffset.json.bak': '{"offsetTable":{"T@g":{"0":9}}}' } });
  const warnings: string[] = [];
  const m = new ConsumerOffsetManager(dir, (l) => warnings.push(l));
  m.load();
  t.equal(m.query('g', 'T', 0), 9);
  t.match(warnings.join('\n'), /is missing; loaded its backup/);
});

t.test('a manager whose load failed never writes', async (t) => {
  const dir = t.testdir({ config: { 'consumerOffset.json': 'x' } });
  const m = new ConsumerOffsetManager(dir, () => undefined);
  t.throws(() => m.load(), { name: 'ConfigFileError' });
  m.commit('g', 'T', 0, 1);
  m.persist(true);
  t.equal(fs.readFileSync(cfg(dir, 'consumerOffset.json'), 'utf8'), 'x');
});

t.test('committed offsets past what the store holds after a restart are named', async (t) => {
  const dir = t.testdir({});
  let b = await startBroker({ dataDir: dir, warn: () => undefined });
  const inner = {
    topic: 'Gone',
    queueId: 0,
    flag: 0,
    sysFlag: 0,
    bornTimestamp: 1,
    bornHost: '127.0.0.1:1',
    reconsumeTimes: 0,
    preparedTransactionOffset: 0,
    body: Buffer.from('x'),
    properties: {},
  };
  for (let i = 0; i < 6; i++) t.equal(b.instances[0]!.messageStore.putMessages([inner]).status, 'PUT_OK');
  b.instances[0]!.offsets.commit('cg', 'Gone', 0, 5);
  await b.close();
  for (const f of ['commitlog', 'consumequeue', 'checkpoint.json']) fs.rmSync(path.join(dir, f), { recursive: true });
  const warnings: string[] = [];
  b = await startBroker({ dataDir: dir, warn: (l) => warnings.push(l) });
  t.teardown(() => b.close());
  t.match(warnings.join('\n'), /committed offset 5 of Gone@cg queue 0 is past the queue's max offset 0/);
});

t.test(
  'an offset the file could not hold exactly is refused, so one commit cannot make the file unreadable',
  async (t) => {
    const dir = t.testdir({});
    const m = new ConsumerOffsetManager(dir, () => undefined);
    m.load();
    m.commit('g', 'T', 0, 7);
    m.commit('g', 'T', 1, 2 ** 60);
    m.commit('g', 'T', 2, Number.NaN);
    m.persist();
    const again = new ConsumerOffsetManager(dir, () => undefined);
    again.load();
    t.equal(again.query('g', 'T', 0), 7);
    t.equal(again.query('g', 'T', 1), undefined);
  },
);
