// 5.x auth (ACL 2.0) on a real Apache RocketMQ 5.3.3 broker with authentication and authorization
// on (the harness's keys: DefaultAuthenticationProvider / DefaultAuthorizationProvider over the
// Local metadata providers, the initial user a Super user): users and ACLs made by rocketwire's
// AdminClient and CLI are what mqadmin getUser / listUser / getAcl / listAcl print, character for
// character against `rocketwire admin auth`; those mqadmin makes are what rocketwire reads; and
// the broker then lets a rocketwire producer signing as the new user send where its ACL allows and
// refuses it elsewhere with the remark the embedded broker gives.
import t from 'tap';
import { AdminClient } from '../../lib/admin/index.js';
import { Producer } from '../../lib/producer/index.js';
import { BrokerError } from '../../lib/remoting/index.js';
import { ResponseCode } from '../../protocol/index.js';
import { runCli, type CliRun } from '../cli/run-in-process.js';
import { startRealCluster, V5_VERSION } from './harness.js';
import { mqadminBatch, type MqadminOutput } from './java-admin.js';
import { interopReady } from './skip.js';

t.setTimeout(180_000);

const root = { accessKey: 'rwroot', secretKey: 'rwroot-secret' };

if (await interopReady(t, [V5_VERSION])) {
  const started = Date.now();
  const cluster = await startRealCluster({ version: V5_VERSION, acl: root });
  t.teardown(() => cluster.stop({ graceful: false }));
  const ns = cluster.namesrv;
  const addr = cluster.brokers[0]!;
  await cluster.createTopic('AuthTopic', { queues: 2 });
  await cluster.createTopic('AuthOther', { queues: 2 });
  const admin = new AdminClient({ namesrvAddr: ns, acl: root, mqClientApiTimeoutMs: 10_000 });
  t.teardown(() => admin.close());
  const cli = (...args: string[]): Promise<CliRun> =>
    runCli([
      'admin',
      ...args,
      '--namesrv',
      ns,
      '--timeout',
      '10000',
      '--access-key',
      root.accessKey,
      '--secret-key',
      root.secretKey,
    ]);
  const out = (batch: MqadminOutput[], command: string): string => {
    const o = batch.find((b) => b.command === command);
    if (!o) throw new Error(`no mqadmin output for ${command}`);
    return o.output;
  };

  // rocketwire writes: a user by AdminClient with its ACL, a user by the CLI
  await admin.createUser({ username: 'rwuser', password: 'rwuser-secret' });
  await admin.createAcl({
    subject: 'User:rwuser',
    resources: ['Topic:AuthTopic', 'Group:auth_cg'],
    actions: ['Pub', 'Sub'],
    sourceIps: ['127.0.0.1'],
    decision: 'Allow',
  });
  const made = await cli(
    'auth',
    'user',
    'create',
    '--username',
    'rwcli',
    '--password',
    'rwcli-secret',
    '--broker',
    addr,
  );
  if (made.code !== 0) throw new Error(`auth user create: exit ${made.code}: ${made.stderr}`);
  const deny = await cli(
    'auth',
    'acl',
    'create',
    '--subject',
    'User:rwcli',
    '--resources',
    'Topic:Auth*',
    '--actions',
    'Sub',
    '--decision',
    'Deny',
    '--broker',
    addr,
  );
  if (deny.code !== 0) throw new Error(`auth acl create: exit ${deny.code}: ${deny.stderr}`);

  const batch = await mqadminBatch(
    ns,
    [
      `createUser -b ${addr} -u mquser -p mquser-secret`,
      `createAcl -b ${addr} -s User:mquser -r Topic:AuthTopic,Topic:Auth* -a Pub,Get -d Allow -i 10.0.0.0/8`,
      `listUser -b ${addr}`,
      `getUser -b ${addr} -u rwuser`,
      `getAcl -b ${addr} -s User:rwuser`,
      `getAcl -b ${addr} -s User:rwcli`,
      `listAcl -b ${addr}`,
    ],
    V5_VERSION,
    root,
  );

  t.test("mqadmin prints rocketwire's users and ACLs as rocketwire prints them", async (t) => {
    // what each prints after mqadmin's writes too, so both lists hold users of both tools
    const pairs: Array<[string, string[]]> = [
      [`listUser -b ${addr}`, ['auth', 'user', 'list', '--broker', addr]],
      [`getUser -b ${addr} -u rwuser`, ['auth', 'user', 'get', '--username', 'rwuser', '--broker', addr]],
      [`getAcl -b ${addr} -s User:rwuser`, ['auth', 'acl', 'get', '--subject', 'User:rwuser', '--broker', addr]],
      [`getAcl -b ${addr} -s User:rwcli`, ['auth', 'acl', 'get', '--subject', 'User:rwcli', '--broker', addr]],
      [`listAcl -b ${addr}`, ['auth', 'acl', 'list', '--broker', addr]],
    ];
    t.equal(made.stdout, `create user to ${addr} success.\n`, 'the CLI says what mqadmin createUser says');
    t.equal(out(batch, `createUser -b ${addr} -u mquser -p mquser-secret`), `create user to ${addr} success.\n`);
    for (const [mq, ours] of pairs) {
      const r = await cli(...ours);
      t.equal(r.stdout, out(batch, mq), `rocketwire admin ${ours.slice(0, 3).join(' ')} = mqadmin ${mq.split(' ')[0]}`);
    }
    t.match(out(batch, `listUser -b ${addr}`), /rwuser\s+rwuser-secret\s+Normal\s+enable/);
    t.match(
      out(batch, `getAcl -b ${addr} -s User:rwuser`),
      /User:rwuser\s+Custom\s+Topic:AuthTopic\s+\[Pub, Sub\]\s+\[127\.0\.0\.1\]\s+Allow/,
    );
  });

  t.test('rocketwire reads what mqadmin made', async (t) => {
    t.same(await admin.getUser('mquser', { brokerAddr: addr }), {
      username: 'mquser',
      password: 'mquser-secret',
      userType: 'Normal',
      userStatus: 'enable',
    });
    t.same(await admin.getAcl('User:mquser'), {
      subject: 'User:mquser',
      policies: [
        {
          policyType: 'Custom',
          entries: [
            { resource: 'Topic:AuthTopic', actions: ['Pub', 'Get'], sourceIps: ['10.0.0.0/8'], decision: 'Allow' },
            { resource: 'Topic:Auth*', actions: ['Pub', 'Get'], sourceIps: ['10.0.0.0/8'], decision: 'Allow' },
          ],
        },
      ],
    });
  });

  t.test('the real broker decides by the ACL rocketwire made', async (t) => {
    const send = async (who: { accessKey: string; secretKey: string }, topic: string): Promise<string> => {
      const p = new Producer({ group: 'auth_pg', namesrvAddr: ns, acl: who, retryTimesWhenSendFailed: 0 });
      await p.start();
      try {
        await p.send({ topic, body: 'x' });
        return 'sent';
      } catch (err) {
        for (let e: unknown = err; e; e = (e as { cause?: unknown }).cause)
          if (e instanceof BrokerError) return `${e.code} ${e.remark}`;
        throw err;
      } finally {
        await p.shutdown();
      }
    };
    const rw = { accessKey: 'rwuser', secretKey: 'rwuser-secret' };
    t.equal(await send(rw, 'AuthTopic'), 'sent');
    t.equal(
      await send(rw, 'AuthOther'),
      `${ResponseCode.NO_PERMISSION} User:rwuser has no permission to access Topic:AuthOther from 127.0.0.1, no matched policies.`,
    );
    t.equal(
      await send({ accessKey: 'rwuser', secretKey: 'wrong' }, 'AuthTopic'),
      `${ResponseCode.NO_PERMISSION} check signature failed.`,
    );
    // mqadmin's entries are for 10.0.0.0/8 only: from loopback nothing matches
    t.match(
      await send({ accessKey: 'mquser', secretKey: 'mquser-secret' }, 'AuthTopic'),
      /User:mquser has no permission to access Topic:AuthTopic from 127\.0\.0\.1, no matched policies\./,
    );
  });

  t.test('deletes by each tool are seen by the other', async (t) => {
    await admin.deleteUser('mquser', { brokerAddr: addr });
    await admin.deleteAcl('User:rwuser', 'Group:auth_cg', { brokerAddr: addr });
    const after = await mqadminBatch(
      ns,
      [`deleteUser -b ${addr} -u rwcli`, `listUser -b ${addr}`, `getAcl -b ${addr} -s User:rwuser`],
      V5_VERSION,
      root,
    );
    t.notMatch(out(after, `listUser -b ${addr}`), /mquser/, 'mqadmin no longer lists the user rocketwire deleted');
    t.notMatch(out(after, `getAcl -b ${addr} -s User:rwuser`), /Group:auth_cg/, 'nor the entry');
    t.same(
      (await admin.listUser()).map((u) => u.username),
      ['rwroot', 'rwuser'],
      'rocketwire no longer lists the user mqadmin deleted',
    );
  });

  t.test('wall time', async (t) => {
    t.comment(`real-broker auth test: ${((Date.now() - started) / 1000).toFixed(1)} s from cluster start`);
    t.pass();
  });
}
