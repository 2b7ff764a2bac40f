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
  t.throws(() => new AdminClient({ namesrvAddr: b.namesrv, namespace: 'bad%ns' }), { name: 'ClientOptionError' });
});
