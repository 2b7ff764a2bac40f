// 5.x auth (ACL 2.0) policy matching, as Apache's auth module decides: Resource.of's three
// patterns (LITERAL, PREFIXED, ANY) and the any-type resource `*`, action matching (All covers
// every action), source IPs (exact or CIDR), the most specific matching entry decides (literal over
// prefix over any, a longer prefix over a shorter one), Deny over Allow for the same resource, the
// Custom policy before the Default one; and the AuthChecker's refusals with Apache's remarks.
import t from 'tap';
import {
  AuthChecker,
  AuthStore,
  authNeeds,
  matchPolicyEntry,
  parseResource,
  resourceKey,
  resourceMatches,
  sourceIpMatches,
  validSourceIp,
  type Acl,
  type PolicyEntry,
} from '../../lib/broker/acl/index.js';
import { createRequest, RequestCode, ResponseCode } from '../../protocol/index.js';
import { signRequest } from '../../lib/remoting/acl.js';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const r = (k: string) => {
  const x = parseResource(k);
  if (x === null) throw new Error(`unreadable ${k}`);
  return x;
};
const entry = (
  resource: string,
  decision: 'Allow' | 'Deny',
  actions: PolicyEntry['actions'] = ['Pub'],
  sourceIps: string[] = [],
): PolicyEntry => ({
  resource: r(resource),
  actions,
  sourceIps,
  decision,
});
const acl = (...entries: PolicyEntry[]): Acl => ({ subject: 'User:u', policies: [{ policyType: 'Custom', entries }] });
const decide = (a: Acl, topic: string, actions: PolicyEntry['actions'] = ['Pub'], ip = '10.0.0.1') =>
  matchPolicyEntry(a, r(`Topic:${topic}`), actions, ip)?.decision ?? 'none';

t.test('resource keys read and written as Java does', async (t) => {
  t.same(parseResource('Topic:orders'), { type: 'Topic', name: 'orders', pattern: 'LITERAL' });
  t.same(parseResource('topic:ord*'), { type: 'Topic', name: 'ord', pattern: 'PREFIXED' }, 'type in any case');
  t.same(parseResource('Group:*'), { type: 'Group', name: null, pattern: 'ANY' });
  t.same(parseResource('*'), { type: 'Any', name: null, pattern: 'ANY' });
  t.equal(parseResource('Queue:x'), null, 'an unknown type is no resource');
  t.equal(parseResource(' '), null);
  for (const k of ['Topic:orders', 'Topic:ord*', 'Group:*', '*', 'Cluster:DefaultCluster'])
    t.equal(resourceKey(r(k)), k, `${k} round-trips`);
  t.ok(resourceMatches(r('Topic:ord*'), r('Topic:orders')));
  t.notOk(resourceMatches(r('Topic:ord*'), r('Topic:refunds')));
  t.notOk(resourceMatches(r('Topic:*'), r('Group:orders')), 'Topic:* is topics only');
  t.ok(resourceMatches(r('*'), r('Group:orders')), '* is every resource');
  t.notOk(resourceMatches(r('Topic:orders'), r('Topic:orders2')), 'a literal is the name itself');
});

t.test('the most specific entry decides; Deny wins a tie', async (t) => {
  t.equal(decide(acl(entry('Topic:*', 'Allow')), 'orders'), 'Allow');
  t.equal(
    decide(acl(entry('Topic:*', 'Allow'), entry('Topic:orders', 'Deny')), 'orders'),
    'Deny',
    'a literal Deny over Topic:* Allow',
  );
  t.equal(
    decide(acl(entry('Topic:orders', 'Deny'), entry('Topic:*', 'Allow')), 'orders2'),
    'Allow',
    'other topics stay allowed',
  );
  t.equal(
    decide(acl(entry('Topic:*', 'Deny'), entry('Topic:orders', 'Allow')), 'orders'),
    'Allow',
    'a literal Allow over Topic:* Deny',
  );
  t.equal(
    decide(acl(entry('Topic:ord*', 'Deny'), entry('Topic:orders', 'Allow')), 'orders'),
    'Allow',
    'literal over prefix',
  );
  t.equal(
    decide(acl(entry('Topic:o*', 'Allow'), entry('Topic:ord*', 'Deny')), 'orders'),
    'Deny',
    'the longer prefix decides',
  );
  t.equal(decide(acl(entry('Topic:ord*', 'Deny'), entry('Topic:o*', 'Allow')), 'orders'), 'Deny', 'in either order');
  t.equal(decide(acl(entry('*', 'Deny'), entry('Topic:*', 'Allow')), 'x'), 'Allow', 'a typed resource over *');
  t.equal(
    decide(acl(entry('Topic:orders', 'Allow'), entry('Topic:orders', 'Deny')), 'orders'),
    'Deny',
    'same resource: Deny wins',
  );
  t.equal(
    decide(acl(entry('Topic:orders', 'Deny'), entry('Topic:orders', 'Allow')), 'orders'),
    'Deny',
    'in either order',
  );
  t.equal(decide(acl(entry('Topic:orders', 'Allow')), 'refunds'), 'none', 'no entry: no decision');
});

t.test('actions, source IPs, Custom before Default', async (t) => {
  t.equal(decide(acl(entry('Topic:orders', 'Allow', ['Sub'])), 'orders', ['Pub']), 'none', 'Sub does not grant Pub');
  t.equal(decide(acl(entry('Topic:orders', 'Allow', ['All'])), 'orders', ['Pub']), 'Allow', 'All grants Pub');
  t.equal(
    decide(acl(entry('Topic:orders', 'Allow', ['Sub'])), 'orders', ['Pub', 'Sub']),
    'Allow',
    'one of the needed actions is enough',
  );
  t.equal(decide(acl(entry('Topic:orders', 'Allow', ['Pub'], ['10.0.0.0/8'])), 'orders', ['Pub'], '10.1.2.3'), 'Allow');
  t.equal(
    decide(acl(entry('Topic:orders', 'Allow', ['Pub'], ['10.0.0.0/8'])), 'orders', ['Pub'], '192.168.0.1'),
    'none',
  );
  t.ok(sourceIpMatches(['::1'], '::1'));
  t.ok(sourceIpMatches(['fd00::/8'], 'fd00::5'));
  t.ok(validSourceIp('10.0.0.0/8') && validSourceIp('::1') && !validSourceIp('10.0.0.0/33') && !validSourceIp('host'));
  const both: Acl = {
    subject: 'User:u',
    policies: [
      { policyType: 'Default', entries: [entry('Topic:*', 'Deny')] },
      { policyType: 'Custom', entries: [entry('Topic:orders', 'Allow')] },
    ],
  };
  t.equal(decide(both, 'orders'), 'Allow', 'Custom decides when one of its entries matches');
  t.equal(decide(both, 'refunds'), 'Deny', 'else Default');
});

t.test('what requests need', async (t) => {
  const send = createRequest(RequestCode.SEND_MESSAGE_V2, { extFields: { a: 'pg', b: 'orders' } });
  t.same(authNeeds(send, 'C'), [{ resource: r('Topic:orders'), actions: ['Pub'] }]);
  const create = createRequest(RequestCode.UPDATE_AND_CREATE_TOPIC, { extFields: { topic: 'orders' } });
  t.same(authNeeds(create, 'C'), [{ resource: r('Topic:orders'), actions: ['Create'] }]);
  t.same(authNeeds(createRequest(RequestCode.AUTH_LIST_USER, {}), 'C'), [
    { resource: r('Cluster:C'), actions: ['Get'] },
  ]);
  t.same(authNeeds(createRequest(RequestCode.AUTH_CREATE_USER, {}), 'C'), [
    { resource: r('Cluster:C'), actions: ['Update'] },
  ]);
  t.same(
    authNeeds(createRequest(RequestCode.GET_BROKER_CLUSTER_INFO, {}), 'C'),
    [],
    'no resource: authentication only',
  );
});

t.test('AuthChecker: authentication then authorization, with Apache 5.3 remarks', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rw-auth-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const store = new AuthStore(dir, () => {});
  store.load();
  store.createUser({ username: 'root', password: 'rootpass', userType: 'Super', userStatus: undefined });
  store.createUser({ username: 'alice', password: 'alicepass', userType: undefined, userStatus: undefined });
  store.putAcl({
    subject: 'User:alice',
    policies: [{ policyType: 'Custom', entries: [entry('Topic:orders', 'Allow')] }],
  });
  const checker = new AuthChecker(store, {
    authenticationEnabled: true,
    authorizationEnabled: true,
    authenticationWhitelist: new Set(),
    authorizationWhitelist: new Set(),
    clusterName: 'DefaultCluster',
  });
  const ch = { remoteAddress: '127.0.0.1:5000' };
  const send = (topic: string, who?: { accessKey: string; secretKey: string }) => {
    const req = createRequest(RequestCode.SEND_MESSAGE_V2, { extFields: { a: 'pg', b: topic } });
    if (who) signRequest(req, who);
    return checker.check(req, ch);
  };
  const remark = (d: ReturnType<typeof send>) => (d.allowed ? 'allowed' : `${d.responseCode} ${d.remark}`);
  t.equal(remark(send('orders')), `${ResponseCode.NO_PERMISSION} username cannot be null.`);
  t.equal(
    remark(send('orders', { accessKey: 'bob', secretKey: 'x' })),
    `${ResponseCode.NO_PERMISSION} User:bob is not found.`,
  );
  t.equal(
    remark(send('orders', { accessKey: 'alice', secretKey: 'wrong' })),
    `${ResponseCode.NO_PERMISSION} check signature failed.`,
  );
  t.equal(remark(send('orders', { accessKey: 'alice', secretKey: 'alicepass' })), 'allowed');
  t.equal(
    remark(send('refunds', { accessKey: 'alice', secretKey: 'alicepass' })),
    `${ResponseCode.NO_PERMISSION} User:alice has no permission to access Topic:refunds from 127.0.0.1, no matched policies.`,
  );
  t.equal(
    remark(send('refunds', { accessKey: 'root', secretKey: 'rootpass' })),
    'allowed',
    'a Super user passes everything',
  );
  store.updateUser({ username: 'alice', password: undefined, userType: undefined, userStatus: 'disable' });
  t.equal(
    remark(send('orders', { accessKey: 'alice', secretKey: 'alicepass' })),
    `${ResponseCode.NO_PERMISSION} User:alice is disabled.`,
  );

  const reloaded = new AuthStore(dir, () => {});
  reloaded.load();
  t.same(
    reloaded.listUsers(undefined).map((u) => [u.username, u.userType, u.userStatus]),
    [
      ['alice', 'Normal', 'disable'],
      ['root', 'Super', 'enable'],
    ],
    'users persist',
  );
  t.equal(
    resourceKey(reloaded.getAcl('User:alice')!.policies[0]!.entries[0]!.resource),
    'Topic:orders',
    'ACLs persist',
  );
  reloaded.deleteUser('alice');
  t.equal(reloaded.findAcl('User:alice'), undefined, "a user's deletion removes its ACL");
});
