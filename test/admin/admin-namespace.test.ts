// AdminClient with a namespace on the embedded broker: operations take the application's topic and
// group names and send them wrapped (NS%name, as the namespaced producer and consumer created them);
// lists show this namespace's resources without it; a plain AdminClient sees the full names.
import t from 'tap';
import { AdminClient } from '../../lib/admin/index.js';
import { LitePullConsumer } from '../../lib/consumer/index.js';
import { Producer } from '../../lib/producer/index.js';
import { uniqueName, until, withBroker } from '../consumer/helpers.js';

t.test('namespace nsAdm: the application names in, the application names out', async (t) => {
  const b = await withBroker();
  t.teardown(() => b.close());
  const topic = uniqueName('AdmNs');
  const group = uniqueName('adm_ns_cg');
  const p = new Producer({ namesrvAddr: b.namesrv, group: uniqueName('pg'), namespace: 'nsAdm' });
  await p.start();
  for (let i = 0; i < 3; i++) await p.send({ topic, body: `b${i}`, keys: 'kk' });
  await p.shutdown();
  const c = new LitePullConsumer({ group, namesrvAddr: b.namesrv, consumeFromWhere: 'first', namespace: 'nsAdm' });
  c.subscribe(topic);
  await c.start();
  let n = 0;
  await until(async () => (n += (await c.poll(200)).length) >= 3, 'polled');
  await c.commitSync({ persist: true });

  const admin = new AdminClient({ namesrvAddr: b.namesrv, namespace: 'nsAdm' });
  const plain = new AdminClient({ namesrvAddr: b.namesrv });
  t.teardown(async () => {
    await c.shutdown();
    await admin.close();
    await plain.close();
  });
  t.ok((await plain.topicList()).includes(`nsAdm%${topic}`), 'the broker has nsAdm%topic');
  const mine = await admin.topicList();
  t.ok(mine.includes(topic), 'the namespaced admin lists the topic by its application name');
  t.notOk(
    mine.some((x) => x.includes('nsAdm')),
    'without the namespace (its retry topic is %RETRY%group)',
  );
  t.notOk(mine.includes('TBW102'), 'and only its namespace');
  t.equal(
    (await admin.topicStatus(topic)).reduce((a, q) => a + q.maxOffset, 0),
    3,
    'topicStatus(topic)',
  );
  const found = await admin.messageByKey(topic, 'kk');
  t.equal(found.length, 3, 'messageByKey(topic, key)');
  t.ok(
    found.every((f) => f.message.topic === topic),
    'found messages carry the application topic',
  );
  await until(async () => (await admin.consumerProgress(group)).queues.some((q) => q.consumerOffset > 0), 'progress');
  const progress = await admin.consumerProgress(group);
  t.equal(progress.group, group);
  t.ok(
    progress.queues.every((q) => q.topic === topic),
    'consumerProgress(group): the application topic',
  );
  t.equal(progress.totalLag, 0);
  t.ok(
    (await admin.groupList()).some((g) => g.groupName === group),
    'groupList names the group without the namespace',
  );
  t.ok(
    (await plain.groupList()).some((g) => g.groupName === `nsAdm%${group}`),
    'where the broker has nsAdm%group',
  );
  t.same(
    (await admin.consumerProgress(`nsAdm%${group}`)).queues.length,
    progress.queues.length,
    'a full name of the namespace is kept as it is',
  );
  // the operator commands name topics and groups by their application names too
  const changes = await admin.updateTopicPerm(topic, 4);
  t.ok(changes.length > 0 && changes.every((x) => x.perm === 4), 'updateTopicPerm(topic, 4)');
  t.equal((await plain.topicConfig(changes[0]!.addr, `nsAdm%${topic}`))?.perm, 4, 'written on nsAdm%topic');
  await admin.updateTopicPerm(topic, 6);
  const copy = uniqueName('adm_ns_copy');
  await admin.cloneGroupOffset(group, copy, topic, { offline: true });
  const p2 = new Producer({ namesrvAddr: b.namesrv, group: uniqueName('pg'), namespace: 'nsAdm' });
  await p2.start();
  await p2.send({ topic, body: 'more' });
  await p2.shutdown();
  const c2 = new LitePullConsumer({
    group: copy,
    namesrvAddr: b.namesrv,
    consumeFromWhere: 'first',
    namespace: 'nsAdm',
  });
  c2.subscribe(topic);
  await c2.start();
  const got: string[] = [];
  await until(async () => {
    for (const m of await c2.poll(200)) got.push(m.body.toString());
    return got.length > 0;
  }, 'the copy polled');
  got.push(...(await c2.poll(200)).map((m) => m.body.toString()));
  await c2.shutdown();
  t.same(got, ['more'], 'cloneGroupOffset(group, copy, topic): the copy starts where nsAdm%group is');
  const skipped = await admin.skipAccumulatedMessage(group, topic);
  t.equal(
    skipped.queues.reduce((a, q) => a + q.offset, 0),
    4,
    'skipAccumulatedMessage(group, topic): at the end of nsAdm%topic',
  );
  t.throws(() => new AdminClient({ namesrvAddr: b.namesrv, namespace: 'bad%ns' }), { name: 'ClientOptionError' });
});
