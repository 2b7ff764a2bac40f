// Access control of the embedded broker: Apache's ACL 1.0 plain_acl.yml, checked
// before every request's processor. rocketwire's own clients (Producer, PushConsumer, AdminClient,
// raw RemotingClient) with the `acl` option are served with the right key and refused with a wrong
// secret, an unknown key or none; grants per topic and group; admin codes for admin accounts only;
// white-listed addresses served without a signature. Without the option nothing changes.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import t, { type Test } from 'tap';
import { startBroker } from '../../lib/broker/index.js';
import {
  type AclConfigError,
  PlainAclChecker,
  compileAclConfig,
  loadAclOption,
  type AclConfig,
} from '../../lib/broker/acl/index.js';
import { Producer } from '../../lib/producer/index.js';
import { PushConsumer } from '../../lib/consumer/index.js';
import { AdminClient } from '../../lib/admin/index.js';
import { RemotingClient, BrokerError, signRequest, type AclCredentials } from '../../lib/remoting/index.js';
import { RequestCode, ResponseCode, createRequest, type RemotingCommand } from '../../protocol/index.js';
import { sendRequest } from './helpers.js';

t.setTimeout(120_000);

const ADMIN: AclCredentials = { accessKey: 'rocketadmin', secretKey: 'admin-secret-1' };
const APP: AclCredentials = { accessKey: 'rocketapp1', secretKey: 'app-secret-1' };
const WRONG_SECRET: AclCredentials = { accessKey: APP.accessKey, secretKey: 'not-the-secret' };
const UNKNOWN: AclCredentials = { accessKey: 'nobody-here', secretKey: 'whatever-1' };

// Apache's own layout (distribution/conf/plain_acl.yml), comments and all
const PLAIN_ACL_YML = `# the embedded broker's ACL, issue 29 M5
globalWhiteRemoteAddresses:
  - 10.10.103.*

accounts:
  - accessKey: rocketadmin
    secretKey: admin-secret-1
    whiteRemoteAddress:
    # an admin may use every topic and group
    admin: true

  - accessKey: rocketapp1
    secretKey: app-secret-1
    whiteRemoteAddress: 192.168.1.*
    admin: false
    defaultTopicPerm: DENY
    defaultGroupPerm: DENY
    topicPerms:
      - AclPubSub=PUB|SUB
      - AclPubOnly=PUB
      - AclSubOnly=SUB
    groupPerms:
      # groups, not their retry topics
      - acl_app_cg=SUB
      - acl_app_pg=PUB|SUB

  - accessKey: "whitelisted"
    secretKey: 'white-secret-1'
    whiteRemoteAddress: 127.0.0.1
`;

function tmpFile(t: Test, name: string, content: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rocketwire-acl-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const f = path.join(dir, name);
  fs.writeFileSync(f, content);
  return f;
}

/** The BrokerError at the end of an error's cause chain. */
function brokerErrorOf(err: unknown): BrokerError | null {
  for (let e = err as { cause?: unknown } | undefined; e; e = e.cause as { cause?: unknown } | undefined) {
    if (e instanceof BrokerError) return e;
  }
  return null;
}

async function refusal(t: Test, p: Promise<unknown>, reason: RegExp, what: string): Promise<void> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  const be = brokerErrorOf(err);
  t.ok(be, `${what}: refused by the broker (${(err as Error | null)?.message ?? 'served'})`);
  t.equal(be?.code, ResponseCode.SYSTEM_ERROR, `${what}: SYSTEM_ERROR, as Apache 4.9`);
  t.match(be?.remark ?? '', /^org\.apache\.rocketmq\.acl\.common\.AclException: /, `${what}: Apache's remark`);
  t.match(be?.remark ?? '', reason, `${what}: ${reason}`);
}

function pullRequest(topic: string, group: string): RemotingCommand {
  return createRequest(RequestCode.PULL_MESSAGE, {
    extFields: {
      consumerGroup: group,
      topic,
      queueId: '0',
      queueOffset: '0',
      maxMsgNums: '32',
      sysFlag: '0',
      commitOffset: '0',
      suspendTimeoutMillis: '0',
      subscription: '*',
      subVersion: '0',
      expressionType: 'TAG',
    },
  });
}

t.test('plain_acl.yml in Apache layout loads as Apache reads it', async (t) => {
  const data = loadAclOption(tmpFile(t, 'plain_acl.yml', PLAIN_ACL_YML));
  t.equal(data.accounts.size, 3);
  const app = data.accounts.get('rocketapp1')!;
  t.same(
    [...app.topicPerms!],
    [
      ['AclPubSub', 12],
      ['AclPubOnly', 4],
      ['AclSubOnly', 8],
    ],
  );
  t.same(
    [...app.groupPerms!],
    [
      ['acl_app_cg', 8],
      ['acl_app_pg', 12],
    ],
  );
  t.equal(app.defaultTopicPerm, 1, 'DENY');
  t.equal(data.accounts.get('rocketadmin')!.admin, true);
  t.equal(data.accounts.get('rocketadmin')!.topicPerms, null);
  t.equal(data.accounts.get('whitelisted')!.secretKey, 'white-secret-1', 'quoted scalars');
  t.ok(data.globalWhite[0]!.matches('10.10.103.7'));
  t.notOk(data.globalWhite[0]!.matches('10.10.104.7'));
  // the same in JSON
  const json = loadAclOption(
    tmpFile(
      t,
      'acl.json',
      JSON.stringify({ accounts: [{ accessKey: 'jsonuser', secretKey: 12345678, topicPerms: ['T=SUB'] }] }),
    ),
  );
  t.equal(
    json.accounts.get('jsonuser')!.secretKey,
    '12345678',
    'a numeric secret is its digits, as Apache reads 12345678',
  );
});

t.test('a configuration the broker cannot use is refused, naming the entry', async (t) => {
  const bad = (c: unknown): AclConfigError => {
    try {
      compileAclConfig(c as AclConfig);
    } catch (err) {
      return err as AclConfigError;
    }
    throw new Error('accepted');
  };
  t.match(bad({ accounts: [{ accessKey: 'short', secretKey: 'long-enough' }] }), {
    name: 'AclConfigError',
    errorCode: 'ERR_ACL_CONFIG',
    field: 'accounts[0].accessKey',
    message: /longer than 6/,
  });
  t.match(bad({ accounts: [{ accessKey: 'user-one', secretKey: 'secret-1', topicPerms: ['T=READ'] }] }), {
    field: 'accounts[0].topicPerms[0]',
    message: /"READ" is not a permission/,
  });
  t.match(bad({ accounts: [{ accessKey: 'user-one', secretKey: 'secret-1', topicPerm: ['T=SUB'] }] }), {
    field: 'accounts[0].topicPerm',
    message: /unknown key/,
  });
  t.match(
    bad({
      accounts: [
        { accessKey: 'user-one', secretKey: 'secret-1' },
        { accessKey: 'user-one', secretKey: 'secret-2' },
      ],
    }),
    { field: 'accounts[1].accessKey', message: /given twice/ },
  );
  t.match(bad({ globalWhiteRemoteAddresses: ['10.0.0.300'] }), { field: 'globalWhiteRemoteAddresses[0]' });
  const f = tmpFile(t, 'anchors.yml', 'accounts:\n  - &a\n    accessKey: user-one\n');
  t.throws(() => loadAclOption(f), { name: 'AclConfigError', file: f, message: /line 2: .*not supported/ });
  await t.rejects(startBroker({ acl: path.join(os.tmpdir(), 'no-such-acl-file.yml') }), {
    name: 'AclConfigError',
    message: /cannot be read/,
  });
});

t.test(
  "white addresses: global ones skip every check, an account's skips its signature (Apache semantics)",
  async (t) => {
    const checker = new PlainAclChecker(loadAclOption(tmpFile(t, 'plain_acl.yml', PLAIN_ACL_YML)));
    const create = createRequest(RequestCode.UPDATE_AND_CREATE_TOPIC, { extFields: { topic: 'X' } });
    t.match(
      checker.check(create, { remoteAddress: '10.10.103.9:4000' }),
      { allowed: true, via: 'global-white-address' },
      'anonymous admin code from a global white address',
    );
    t.match(checker.check(create, { remoteAddress: '10.10.104.9:4000' }), {
      allowed: false,
      reason: 'No accessKey is configured',
    });
    const unsigned = createRequest(RequestCode.UPDATE_AND_CREATE_TOPIC, {
      extFields: { topic: 'X', AccessKey: 'rocketapp1' },
    });
    t.match(checker.check(unsigned, { remoteAddress: '192.168.1.20:4000' }), {
      allowed: true,
      via: 'account-white-address',
      principal: 'rocketapp1',
    });
    t.match(checker.check(unsigned, { remoteAddress: '192.168.2.20:4000' }), {
      allowed: false,
      reason: 'Check signature failed for accessKey=rocketapp1',
    });
    const signedAdmin = createRequest(RequestCode.UPDATE_AND_CREATE_TOPIC, { extFields: { topic: 'X' } });
    signRequest(signedAdmin, APP);
    t.match(checker.check(signedAdmin, { remoteAddress: '[::1]:4000' }), {
      allowed: false,
      reason: 'Need admin permission for request code=17, but accessKey=rocketapp1 is not',
    });
    // QUERY_MESSAGE by unique key: Apache's broker leaves _UNIQUE_KEY_QUERY out of the signed content, its client signs it
    const q = createRequest(RequestCode.QUERY_MESSAGE, {
      extFields: { topic: 'AclSubOnly', key: 'k', maxNum: '32', beginTimestamp: '0', endTimestamp: '1' },
    });
    signRequest(q, APP);
    q.extFields!._UNIQUE_KEY_QUERY = 'true';
    t.match(
      checker.check(q, { remoteAddress: '127.0.0.1:1' }),
      { allowed: true },
      'signature without _UNIQUE_KEY_QUERY (Apache broker form)',
    );
    const q2 = createRequest(RequestCode.QUERY_MESSAGE, {
      extFields: {
        topic: 'AclSubOnly',
        key: 'k',
        maxNum: '32',
        beginTimestamp: '0',
        endTimestamp: '1',
        _UNIQUE_KEY_QUERY: 'true',
      },
    });
    signRequest(q2, APP);
    t.match(
      checker.check(q2, { remoteAddress: '127.0.0.1:1' }),
      { allowed: true },
      'signature with it (Java and rocketwire client form)',
    );
  },
);

t.test('rocketwire clients against the embedded broker with --acl', async (t) => {
  const warnings: string[] = [];
  const b = await startBroker({
    acl: tmpFile(t, 'plain_acl.yml', PLAIN_ACL_YML),
    queues: 2,
    warn: (l) => warnings.push(l),
  });
  t.teardown(() => b.close());
  const admin = new AdminClient({ namesrvAddr: b.namesrv, acl: ADMIN });
  t.teardown(() => admin.close());
  for (const topic of ['AclPubSub', 'AclPubOnly', 'AclSubOnly', 'AclOther'])
    await admin.createOrUpdateTopic({ topic, readQueueNums: 2, writeQueueNums: 2 });

  const producer = (acl: AclCredentials | undefined, group = 'acl_app_pg'): Producer => {
    const p = new Producer({ group, namesrvAddr: b.namesrv, retryTimesWhenSendFailed: 0, ...(acl ? { acl } : {}) });
    t.teardown(() => p.shutdown());
    return p;
  };

  await t.test('the right key: sends and consumes', async (t) => {
    const p = producer(APP);
    await p.start();
    for (let i = 0; i < 5; i++) await p.send({ topic: 'AclPubSub', body: `m${i}` });
    t.pass('5 signed sends served');
    const got = new Set<string>();
    let done!: () => void;
    const all = new Promise<void>((r) => (done = r));
    const c = new PushConsumer({
      consumerGroup: 'acl_app_cg',
      namesrvAddr: b.namesrv,
      acl: APP,
      subscriptions: { AclPubSub: '*' },
      consumeFromWhere: 'first',
    });
    t.teardown(() => c.shutdown());
    await c.start((msgs) => {
      for (const m of msgs) got.add(m.body.toString());
      if (got.size >= 5) done();
      return 'CONSUME_SUCCESS';
    });
    await all;
    t.equal(got.size, 5, 'the signed push consumer (heartbeat, pull, offset commits) receives all 5');
  });

  await t.test('a wrong secret, an unknown key, no key: refused', async (t) => {
    const wrong = producer(WRONG_SECRET);
    await wrong.start();
    await refusal(
      t,
      wrong.send({ topic: 'AclPubSub', body: 'x' }),
      /Check signature failed for accessKey=rocketapp1$/,
      'wrong secret',
    );
    const unknown = producer(UNKNOWN);
    await unknown.start();
    await refusal(t, unknown.send({ topic: 'AclPubSub', body: 'x' }), /No acl config for nobody-here$/, 'unknown key');
    const anonymous = producer(undefined);
    await anonymous.start();
    await refusal(t, anonymous.send({ topic: 'AclPubSub', body: 'x' }), /No accessKey is configured$/, 'anonymous');
    const anonAdmin = new AdminClient({ namesrvAddr: b.namesrv });
    t.teardown(() => anonAdmin.close());
    await refusal(t, anonAdmin.deleteTopic('AclPubSub'), /No accessKey is configured$/, 'anonymous topic deletion');
    t.ok(b.instances[0]!.topics.get('AclPubSub'), 'the topic is still there');
  });

  await t.test('per-topic and per-group grants', async (t) => {
    const rc = new RemotingClient({ acl: APP, defaultTimeoutMs: 5000 });
    t.teardown(() => rc.close());
    const send = async (topic: string): Promise<RemotingCommand> =>
      rc.invoke(b.broker, sendRequest(topic, 'grant', { queueId: 0 }));
    t.equal((await send('AclPubOnly')).code, ResponseCode.SUCCESS, 'send to a PUB topic');
    const pulled = await rc.invoke(b.broker, pullRequest('AclPubOnly', 'acl_app_cg'));
    t.equal(pulled.code, ResponseCode.SYSTEM_ERROR, 'pull of a PUB-only topic refused');
    t.match(pulled.remark, /No default permission for topic=AclPubOnly$/);
    const sendSub = await send('AclSubOnly');
    t.match(
      sendSub,
      { code: ResponseCode.SYSTEM_ERROR, remark: /No default permission for topic=AclSubOnly$/ },
      'send to a SUB-only topic refused',
    );
    t.not(
      (await rc.invoke(b.broker, pullRequest('AclSubOnly', 'acl_app_cg'))).code,
      ResponseCode.SYSTEM_ERROR,
      'pull of a SUB topic served',
    );
    t.match(
      await send('AclOther'),
      { code: ResponseCode.SYSTEM_ERROR, remark: /No default permission for topic=AclOther$/ },
      'a topic not named: default DENY',
    );
    t.match(
      await rc.invoke(b.broker, pullRequest('AclSubOnly', 'someone_elses_cg')),
      { code: ResponseCode.SYSTEM_ERROR, remark: /No default permission for group=someone_elses_cg$/ },
      'a group not named: default DENY',
    );
    const p = producer(APP);
    await p.start();
    await refusal(
      t,
      p.send({ topic: 'AclSubOnly', body: 'x' }),
      /No default permission for topic=AclSubOnly$/,
      'Producer to a SUB-only topic',
    );
  });

  await t.test('admin codes: refused to an ordinary account, served to the admin', async (t) => {
    const app = new AdminClient({ namesrvAddr: b.namesrv, acl: APP });
    t.teardown(() => app.close());
    await refusal(
      t,
      app.createOrUpdateTopic({ topic: 'AclNewTopic' }),
      /Need admin permission for request code=17, but accessKey=rocketapp1 is not$/,
      'create topic',
    );
    t.notOk(b.instances[0]!.topics.get('AclNewTopic'), 'not created');
    await refusal(t, app.deleteTopic('AclPubSub'), /request code=215/, 'delete topic');
    t.ok(b.instances[0]!.topics.get('AclPubSub'), 'not deleted');
    await refusal(t, app.createGroup('acl_new_group'), /request code=200/, 'create group');
    await refusal(t, app.resetOffset('acl_app_cg', 'AclPubSub', { to: 'first' }), /request code=222/, 'reset offset');
    // the name server's own topic creation and route deletion are admin codes too
    const rc = new RemotingClient({ acl: APP, defaultTimeoutMs: 5000 });
    t.teardown(() => rc.close());
    const nsCreate = createRequest(RequestCode.UPDATE_AND_CREATE_TOPIC, {
      extFields: {
        topic: 'AclViaNamesrv',
        defaultTopic: 'TBW102',
        readQueueNums: '1',
        writeQueueNums: '1',
        perm: '6',
        topicFilterType: 'SINGLE_TAG',
        topicSysFlag: '0',
        order: 'false',
      },
    });
    t.match(
      await rc.invoke(b.namesrv, nsCreate),
      { code: ResponseCode.SYSTEM_ERROR, remark: /Need admin permission for request code=17/ },
      'name server topic creation',
    );
    t.match(
      await rc.invoke(
        b.namesrv,
        createRequest(RequestCode.DELETE_TOPIC_IN_NAMESRV, { extFields: { topic: 'AclPubSub' } }),
      ),
      { code: ResponseCode.SYSTEM_ERROR },
      'name server route deletion',
    );
    const anon = new RemotingClient({ defaultTimeoutMs: 5000 });
    t.teardown(() => anon.close());
    t.equal(
      (
        await anon.invoke(
          b.namesrv,
          createRequest(RequestCode.GET_ROUTEINFO_BY_TOPIC, { extFields: { topic: 'AclPubSub' } }),
        )
      ).code,
      ResponseCode.SUCCESS,
      "routes stay open, as on Apache's name server",
    );

    t.same(
      await admin.createOrUpdateTopic({ topic: 'AclNewTopic', readQueueNums: 1, writeQueueNums: 1 }),
      [b.broker],
      'the admin creates',
    );
    await admin.createGroup('acl_new_group');
    const reset = await admin.resetOffset('acl_app_cg', 'AclPubSub', { to: 'first' });
    t.ok(reset.queues.length > 0, 'the admin resets offsets');
    await admin.deleteTopic('AclNewTopic');
    t.notOk(b.instances[0]!.topics.get('AclNewTopic'), 'the admin deletes');
  });

  await t.test('a white-listed account address needs no signature', async (t) => {
    const rc = new RemotingClient({ defaultTimeoutMs: 5000 });
    t.teardown(() => rc.close());
    const req = sendRequest('AclOther', 'white', { queueId: 0 });
    req.extFields = { ...req.extFields, AccessKey: 'whitelisted' };
    t.equal(
      (await rc.invoke(b.broker, req)).code,
      ResponseCode.SUCCESS,
      'AccessKey whitelisted from 127.0.0.1, no Signature: served',
    );
    const other = sendRequest('AclOther', 'white', { queueId: 0 });
    other.extFields = { ...other.extFields, AccessKey: APP.accessKey };
    t.match(
      await rc.invoke(b.broker, other),
      { code: ResponseCode.SYSTEM_ERROR, remark: /Check signature failed/ },
      'an account white-listed elsewhere still needs its signature',
    );
  });

  await t.test('refusals are logged once per peer, key and reason', async (t) => {
    const lines = warnings.filter((l) => /refused/.test(l));
    t.ok(
      lines.some((l) =>
        /broker-a refused SEND_MESSAGE_V2 \(310\) from 127\.0\.0\.1:\d+: Check signature failed for accessKey=rocketapp1/.test(
          l,
        ),
      ),
      'the wrong secret',
    );
    t.ok(
      lines.some((l) => /name server refused UPDATE_AND_CREATE_TOPIC \(17\)/.test(l)),
      'the name server too',
    );
    const anonymousSends = lines.filter((l) => /No accessKey is configured/.test(l) && /SEND_MESSAGE/.test(l));
    t.equal(anonymousSends.length, 1, "one line for the anonymous producer's sends");
  });
});

t.test('a global white address serves anonymous clients; without acl nothing is checked', async (t) => {
  const open = await startBroker({ acl: { globalWhiteRemoteAddresses: ['127.0.0.*'], accounts: [] }, queues: 1 });
  t.teardown(() => open.close());
  const anonAdmin = new AdminClient({ namesrvAddr: open.namesrv });
  t.teardown(() => anonAdmin.close());
  t.same(
    await anonAdmin.createOrUpdateTopic({ topic: 'WhiteTopic', readQueueNums: 1, writeQueueNums: 1 }),
    [open.broker],
    '127.0.0.* is white: anonymous admin served',
  );
  const closed = await startBroker({
    acl: { globalWhiteRemoteAddresses: ['10.0.0.*'], accounts: [] },
    queues: 1,
    warn: () => undefined,
  });
  t.teardown(() => closed.close());
  const anon2 = new AdminClient({ namesrvAddr: closed.namesrv });
  t.teardown(() => anon2.close());
  await refusal(
    t,
    anon2.createOrUpdateTopic({ topic: 'WhiteTopic', readQueueNums: 1, writeQueueNums: 1 }),
    /No accessKey is configured/,
    '10.0.0.* does not cover 127.0.0.1',
  );
  const none = await startBroker({ queues: 1 });
  t.teardown(() => none.close());
  const anon3 = new AdminClient({ namesrvAddr: none.namesrv });
  t.teardown(() => anon3.close());
  t.same(
    await anon3.createOrUpdateTopic({ topic: 'OpenTopic', readQueueNums: 1, writeQueueNums: 1 }),
    [none.broker],
    'no acl option: anonymous served, as before',
  );
});
