// 5.x auth (ACL 2.0) on the embedded broker with authentication and authorization on: users and
// ACLs made with AdminClient and `rocketwire admin auth`, then a producer signing as that user is
// allowed on the topic its ACL allows and refused (NO_PERMISSION, Apache's remark) on another;
// a disabled user, a deleted ACL, a user who may not manage users, a Super user made by a normal
// one; what survives a restart; the printed tables; and the bad input a user meets.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import t from 'tap';
import { AdminClient, AdminArgumentError, AdminPermissionError } from '../../lib/admin/index.js';
import { startBroker, type EmbeddedBroker } from '../../lib/broker/index.js';
import { Producer } from '../../lib/producer/index.js';
import { BrokerError } from '../../lib/remoting/index.js';
import { ResponseCode } from '../../protocol/index.js';
import { runCli, type CliRun } from '../cli/run-in-process.js';

const root = { accessKey: 'root', secretKey: 'root-secret' };
const alice = { accessKey: 'alice', secretKey: 'alice-secret' };
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rw-auth-broker-'));
t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
const start = (): Promise<EmbeddedBroker> =>
  startBroker({
    dataDir,
    queues: 2,
    auth: {
      authenticationEnabled: true,
      authorizationEnabled: true,
      initAuthenticationUser: { username: root.accessKey, password: root.secretKey },
    },
  });
let broker = await start();
t.teardown(() => broker.close());
let admin = new AdminClient({ namesrvAddr: broker.namesrv, acl: root });
t.teardown(() => admin.close());

const cli = (...args: string[]): Promise<CliRun> =>
  runCli([
    'admin',
    ...args,
    '--namesrv',
    broker.namesrv,
    '--access-key',
    root.accessKey,
    '--secret-key',
    root.secretKey,
  ]);

/** The broker's refusal behind a failed send (the producer does not retry NO_PERMISSION). */
function brokerErrorOf(err: unknown): BrokerError | undefined {
  for (let e: unknown = err; e; e = (e as { cause?: unknown }).cause) if (e instanceof BrokerError) return e;
  return undefined;
}

async function sendAs(who: { accessKey: string; secretKey: string }, topic: string): Promise<string> {
  const p = new Producer({ group: 'auth_pg', namesrvAddr: broker.namesrv, acl: who, retryTimesWhenSendFailed: 0 });
  await p.start();
  try {
    await p.send({ topic, body: 'hello' });
    return 'sent';
  } catch (err) {
    const b = brokerErrorOf(err);
    if (!b) throw err;
    return `${b.code} ${b.remark}`;
  } finally {
    await p.shutdown();
  }
}

await admin.createOrUpdateTopic({ topic: 'AuthOrders' });
await admin.createOrUpdateTopic({ topic: 'AuthRefunds' });

t.test('a user and an ACL made by AdminClient decide what a producer may send', async (t) => {
  t.same(await admin.createUser({ username: 'alice', password: alice.secretKey }), [broker.broker]);
  await admin.createAcl({
    subject: 'User:alice',
    resources: ['Topic:AuthOrders'],
    actions: ['Pub'],
    decision: 'Allow',
  });
  t.equal(await sendAs(alice, 'AuthOrders'), 'sent', 'allowed on the topic of its ACL');
  t.equal(
    await sendAs(alice, 'AuthRefunds'),
    `${ResponseCode.NO_PERMISSION} User:alice has no permission to access Topic:AuthRefunds from 127.0.0.1, no matched policies.`,
    "refused on another topic, with Apache 5.3's remark",
  );
  t.equal(
    await sendAs({ accessKey: 'alice', secretKey: 'not-hers' }, 'AuthOrders'),
    `${ResponseCode.NO_PERMISSION} check signature failed.`,
  );
  t.match(await sendAs({ accessKey: 'mallory', secretKey: 'x' }, 'AuthOrders'), /User:mallory is not found\./);

  await admin.createAcl({ subject: 'alice', resources: ['Topic:Auth*'], actions: ['Pub'], decision: 'Deny' });
  t.equal(await sendAs(alice, 'AuthOrders'), 'sent', 'the literal Allow is more specific than the prefix Deny');
  t.match(await sendAs(alice, 'AuthRefunds'), /the decision is deny\.$/);

  t.same(await admin.getUser('alice'), {
    username: 'alice',
    password: alice.secretKey,
    userType: 'Normal',
    userStatus: 'enable',
  });
  t.same(await admin.getAcl('User:alice'), {
    subject: 'User:alice',
    policies: [
      {
        policyType: 'Custom',
        entries: [
          { resource: 'Topic:AuthOrders', actions: ['Pub'], decision: 'Allow' },
          { resource: 'Topic:Auth*', actions: ['Pub'], decision: 'Deny' },
        ],
      },
    ],
  });
  t.same(
    (await admin.listAcl({ resource: 'Orders' }))[0]?.policies[0]?.entries.map((e) => e.resource),
    ['Topic:AuthOrders'],
    'listAcl filters entries by resource',
  );
  t.same(
    (await admin.listUser()).map((u) => u.username),
    ['alice', 'root'],
  );
  t.same(
    (await admin.listUser('ali')).map((u) => u.username),
    ['alice'],
  );

  await admin.updateUser({ username: 'alice', userStatus: 'disable' });
  t.match(await sendAs(alice, 'AuthOrders'), /User:alice is disabled\./);
  await admin.updateUser({ username: 'alice', userStatus: 'enable' });
  await admin.deleteAcl('User:alice', 'Topic:AuthOrders');
  t.match(
    await sendAs(alice, 'AuthOrders'),
    /the decision is deny\./,
    'with its Allow entry deleted the prefix Deny decides',
  );
  await admin.deleteAcl('User:alice');
  t.equal(await admin.getAcl('User:alice'), null, 'the whole ACL deleted');
  t.match(await sendAs(alice, 'AuthOrders'), /no matched policies\./);
});

t.test('who may manage users and ACLs', async (t) => {
  const asAlice = new AdminClient({ namesrvAddr: broker.namesrv, acl: alice });
  t.teardown(() => asAlice.close());
  const refused = await asAlice.createUser({ username: 'eve', password: 'eve-secret' }).catch((e: unknown) => e);
  t.ok(refused instanceof AdminPermissionError, 'a normal user without a Cluster grant is refused');
  t.match((refused as AdminPermissionError).message, /User:alice has no permission to access Cluster:DefaultCluster/);
  await admin.createAcl({
    subject: 'User:alice',
    resources: ['Cluster:DefaultCluster'],
    actions: ['Update', 'Get'],
    decision: 'Allow',
  });
  await asAlice.createUser({ username: 'eve', password: 'eve-secret' });
  const superByNormal = await asAlice
    .createUser({ username: 'boss', password: 'boss-secret', userType: 'Super' })
    .catch((e: unknown) => e);
  t.ok(
    superByNormal instanceof BrokerError && superByNormal.code === ResponseCode.SYSTEM_ERROR,
    'only a Super user makes a Super user',
  );
  t.match((superByNormal as BrokerError).remark, 'The super user can only be create by super user');
  await t.rejects(asAlice.deleteUser('root'), AdminPermissionError, 'nor deletes one');
  await t.rejects(admin.createUser({ username: 'eve', password: 'again' }), {
    name: 'AdminPermissionError',
    message: /The user is existed/,
  });
  await t.rejects(admin.getAcl('User:nobody'), { message: /The subject is not exist\./ });
  await admin.deleteUser('eve');
  t.equal(await admin.getUser('eve'), null);
});

t.test('bad input is a typed error before anything is sent', async (t) => {
  await t.rejects(
    admin.createAcl({ subject: 'User:alice', resources: ['Queue:x'], actions: ['Pub'], decision: 'Allow' }),
    AdminArgumentError,
  );
  await t.rejects(
    admin.createAcl({ subject: 'User:alice', resources: ['Topic:x'], actions: ['Publish'], decision: 'Allow' }),
    AdminArgumentError,
  );
  await t.rejects(
    admin.createAcl({ subject: 'Role:x', resources: ['Topic:x'], actions: ['Pub'], decision: 'Allow' }),
    AdminArgumentError,
  );
  await t.rejects(admin.updateUser({ username: 'alice' }), AdminArgumentError, 'nothing to update');
  const bad = await cli(
    'auth',
    'acl',
    'create',
    '--subject',
    'User:alice',
    '--resources',
    'Topic:x',
    '--actions',
    'Pub',
    '--decision',
    'Maybe',
  );
  t.equal(bad.code, 2, 'a bad --decision is a usage error');
  const noAction = await cli('auth', 'user', 'rename', '--username', 'alice');
  t.not(noAction.code, 0);
  t.match(noAction.stderr, /create, update, delete, get, list/);
});

t.test('rocketwire admin auth prints what mqadmin prints', async (t) => {
  const made = await cli('auth', 'user', 'create', '--username', 'carol', '--password', 'carol-secret');
  t.equal(made.stdout, `create user to ${broker.broker} success.\n`, made.stderr);
  const acl = await cli(
    'auth',
    'acl',
    'create',
    '--subject',
    'User:carol',
    '--resources',
    'Topic:AuthOrders,Group:cg',
    '--actions',
    'Pub,Sub',
    '--source-ips',
    '127.0.0.1',
    '--decision',
    'Allow',
  );
  t.equal(acl.stdout, `create acl to ${broker.broker} success.\n`, acl.stderr);
  const got = await cli('auth', 'user', 'get', '--username', 'carol');
  t.equal(
    got.stdout,
    `${'#UserName'.padEnd(16)}  ${'#Password'.padEnd(22)}  ${'#UserType'.padEnd(22)}  ${'#UserStatus'.padEnd(22)}\n` +
      `${'carol'.padEnd(16)}  ${'carol-secret'.padEnd(22)}  ${'Normal'.padEnd(22)}  ${'enable'.padEnd(22)}\n`,
  );
  const acls = await cli('auth', 'acl', 'get', '--subject', 'User:carol');
  const row = (...c: string[]) => [16, 10, 22, 20, 24, 10].map((w, i) => c[i]!.padEnd(w)).join('  ');
  t.equal(
    acls.stdout,
    [
      row('#Subject', '#PolicyType', '#Resource', '#Actions', '#SourceIp', '#Decision'),
      row('User:carol', 'Custom', 'Topic:AuthOrders', '[Pub, Sub]', '[127.0.0.1]', 'Allow'),
      row('User:carol', 'Custom', 'Group:cg', '[Pub, Sub]', '[127.0.0.1]', 'Allow'),
    ].join('\n') + '\n',
  );
  const json = await cli('auth', 'user', 'list', '--filter', 'car', '--json');
  t.same(JSON.parse(json.stdout), [
    { username: 'carol', password: 'carol-secret', userType: 'Normal', userStatus: 'enable' },
  ]);
  const unsigned = await runCli(['admin', 'auth', 'user', 'list', '--namesrv', broker.namesrv]);
  t.equal(unsigned.code, 1, 'without credentials the broker refuses');
  t.match(unsigned.stderr, /username cannot be null/);
});

t.test("with a namespace, ACL resources name the application's topics and groups", async (t) => {
  const nsAdmin = new AdminClient({ namesrvAddr: broker.namesrv, acl: root, namespace: 'shop' });
  t.teardown(() => nsAdmin.close());
  await nsAdmin.createUser({ username: 'dave', password: 'dave-secret' });
  await nsAdmin.createAcl({
    subject: 'User:dave',
    resources: ['Topic:Orders', 'Group:*', 'Cluster:DefaultCluster'],
    actions: ['Pub'],
    decision: 'Allow',
  });
  t.same(
    (await admin.getAcl('User:dave'))?.policies[0]?.entries.map((e) => e.resource),
    ['Topic:shop%Orders', 'Group:shop%*', 'Cluster:DefaultCluster'],
    "stored with the namespace (Group:* becomes the namespace's prefix)",
  );
  t.same(
    (await nsAdmin.getAcl('User:dave'))?.policies[0]?.entries.map((e) => e.resource),
    ['Topic:Orders', 'Group:*', 'Cluster:DefaultCluster'],
    'read back without it',
  );
  await nsAdmin.deleteAcl('User:dave', 'Topic:Orders');
  t.same((await admin.getAcl('User:dave'))?.policies[0]?.entries.length, 2, "deleted by the application's name");
  await nsAdmin.deleteUser('dave');
});

t.test('users and ACLs survive a restart', async (t) => {
  await admin.close();
  await broker.close();
  broker = await start();
  admin = new AdminClient({ namesrvAddr: broker.namesrv, acl: root });
  t.same(
    (await admin.listUser()).map((u) => u.username),
    ['alice', 'carol', 'root'],
  );
  t.same((await admin.getAcl('User:carol'))?.policies[0]?.entries.length, 2);
  await admin.createOrUpdateTopic({ topic: 'AuthOrders' });
  t.equal(await sendAs({ accessKey: 'carol', secretKey: 'carol-secret' }, 'AuthOrders'), 'sent');
});
