// The pieces of the embedded broker's access control on their own: the YAML subset
// reader of plain_acl.yml, white-address patterns, what each request code needs, and requests
// built to confuse the checker (no body, a huge key, an undecodable heartbeat).
import t from 'tap';
import {
  ADMIN_CODES,
  PlainAclChecker,
  Permission,
  YamlSubsetError,
  compileAclConfig,
  expandIPv6,
  hostOfRemoteAddress,
  parseAddressPattern,
  parseYamlSubset,
  requestAccess,
} from '../../lib/broker/acl/index.js';
import { signRequest } from '../../lib/remoting/index.js';
import { RequestCode, createRequest, encodeHeartbeatData, encodeLockBatchBody } from '../../protocol/index.js';

t.test('YAML subset: what plain_acl.yml files use', async (t) => {
  t.same(
    parseYamlSubset(`---
# comment
globalWhiteRemoteAddresses: ['10.0.0.*', "192.168.0.{1,2}"]   # flow sequence, quoted
accounts:
- accessKey: RocketMQ        # sequence at the key's own indentation
  secretKey: 12345678
  whiteRemoteAddress:
  admin: False
  topicPerms: []
  groupPerms:
  - "g#1=SUB"
  -   g2=PUB|SUB
- accessKey: 'it''s-me'
  nested:
    - - a
      - b
    -
      k: v
`),
    {
      globalWhiteRemoteAddresses: ['10.0.0.*', '192.168.0.{1,2}'],
      accounts: [
        {
          accessKey: 'RocketMQ',
          secretKey: '12345678',
          whiteRemoteAddress: null,
          admin: false,
          topicPerms: [],
          groupPerms: ['g#1=SUB', 'g2=PUB|SUB'],
        },
        { accessKey: "it's-me", nested: [['a', 'b'], { k: 'v' }] },
      ],
    },
  );
  t.equal(parseYamlSubset(''), null, 'empty');
  t.equal(parseYamlSubset('# only a comment\n'), null);
  t.same(
    parseYamlSubset('a: ::1\nb: "x\\ty"\nc: ~\n'),
    { a: '::1', b: 'x\ty', c: null },
    'an IPv6 value is not a key; escapes; ~',
  );
  const refused: Array<[string, RegExp]> = [
    ['a:\n\tb: 1\n', /line 2: tabs/],
    ['a: &x 1\n', /line 1: .*anchors/],
    ['a: *x\n', /line 1: .*aliases/],
    ['a: |\n  text\n', /line 1: .*block scalars/],
    ['a: 1\na: 2\n', /line 2: duplicate key "a"/],
    ['a: {b: 1}\n', /line 1: flow mappings/],
    ['a:\n  - x\n  y: 1\n', /line 3/],
    ['a: "open\n', /line 1: unterminated/],
    ['a: 1\n---\nb: 2\n', /line 2: only one document/],
    ['a:\n  plain\n  continued\n', /line 3: multi-line/],
  ];
  for (const [doc, reason] of refused) t.throws(() => parseYamlSubset(doc), reason, JSON.stringify(doc));
  t.throws(() => parseYamlSubset('a: |\n'), YamlSubsetError);
  t.same(
    parseYamlSubset('__proto__: 1\n'),
    JSON.parse('{"__proto__":"1"}'),
    'a __proto__ key is an own key, not the prototype',
  );
});

t.test('white-address patterns (Apache RemoteAddressStrategyFactory forms)', async (t) => {
  const m = (p: string, host: string): boolean => parseAddressPattern(p).matches(host);
  t.ok(m('*', '8.8.8.8'));
  t.ok(m('*.*.*.*', '::1'));
  t.notOk(m('', '127.0.0.1'), 'blank matches nothing');
  t.ok(m('192.168.1.*', '192.168.1.200'));
  t.notOk(m('192.168.1.*', '192.168.10.2'));
  t.ok(m('192.168.*.*', '192.168.77.1'));
  t.ok(m('192.168.1.1-50', '192.168.1.50'));
  t.notOk(m('192.168.1.1-50', '192.168.1.51'));
  t.ok(m('10.0.0-31.*', '10.0.31.9'));
  t.ok(m('192.168.0.{1,2}', '192.168.0.2'));
  t.notOk(m('192.168.0.{1,2}', '192.168.0.3'));
  t.ok(m('10.0.0.1,10.0.0.2', '10.0.0.2'));
  t.ok(m('::1', '0:0:0:0:0:0:0:1'), 'IPv6 compared expanded');
  t.ok(m('fe80::1,::1', '::1'));
  t.equal(expandIPv6('::ffff:1.2.3.4'), '0000:0000:0000:0000:0000:FFFF:0102:0304');
  t.equal(hostOfRemoteAddress('[::1]:10911'), '::1');
  t.equal(hostOfRemoteAddress('127.0.0.1:10911'), '127.0.0.1');
  for (const bad of ['10.0.0.300', '10.0.0.50-1', 'fe80::*', '10.0.*', 'host.example', '::{1,2}']) {
    t.throws(() => parseAddressPattern(bad), { name: 'AddressPatternError', pattern: bad }, bad);
  }
});

t.test('what each request needs', async (t) => {
  const need = (code: number, extFields: Record<string, string>, body?: Buffer) =>
    requestAccess(createRequest(code, { extFields, ...(body ? { body } : {}) }));
  t.same(need(RequestCode.SEND_MESSAGE_V2, { a: 'pg', b: 'T' }).resources, [
    { kind: 'topic', name: 'T', needed: Permission.PUB },
  ]);
  t.same(
    need(RequestCode.SEND_MESSAGE, { producerGroup: 'pg', topic: '%RETRY%cg' }).resources,
    [{ kind: 'group', name: 'cg', needed: Permission.SUB }],
    "a send to a retry topic is its group's",
  );
  t.same(
    need(RequestCode.SEND_BATCH_MESSAGE, { a: 'pg', b: 'T' }).resources,
    [{ kind: 'topic', name: 'T', needed: Permission.PUB }],
    'batches too (Apache 4.9: not checked)',
  );
  t.same(need(RequestCode.PULL_MESSAGE, { consumerGroup: 'cg', topic: 'T' }).resources, [
    { kind: 'topic', name: 'T', needed: Permission.SUB },
    { kind: 'group', name: 'cg', needed: Permission.SUB },
  ]);
  t.same(
    need(RequestCode.QUERY_CONSUMER_OFFSET, { consumerGroup: 'cg', topic: 'T' }),
    { code: 14, admin: false, resources: [] },
    'offset queries: signature only, as Apache',
  );
  const hb = encodeHeartbeatData({
    clientID: 'c',
    producerDataSet: [{ groupName: 'pg' }],
    consumerDataSet: [
      {
        groupName: 'cg',
        consumeType: 'CONSUME_PASSIVELY',
        messageModel: 'CLUSTERING',
        consumeFromWhere: 'CONSUME_FROM_LAST_OFFSET',
        unitMode: false,
        subscriptionDataSet: ['T1', '%RETRY%cg'].map((topic) => ({
          classFilterMode: false,
          topic,
          subString: '*',
          tagsSet: [],
          codeSet: [],
          subVersion: 0,
          expressionType: 'TAG',
        })),
      },
    ],
  });
  t.same(
    need(RequestCode.HEART_BEAT, {}, hb).resources,
    [
      { kind: 'group', name: 'cg', needed: Permission.SUB },
      { kind: 'topic', name: 'T1', needed: Permission.SUB },
    ],
    'a heartbeat: each consumer group once, its subscriptions',
  );
  const lock = encodeLockBatchBody({
    consumerGroup: 'cg',
    clientId: 'c',
    mqSet: [{ topic: 'T', brokerName: 'b', queueId: 0 }],
  });
  t.same(
    need(RequestCode.LOCK_BATCH_MQ, {}, lock).resources.map((r) => r.name),
    ['cg', 'T'],
  );
  for (const code of [17, 25, 215, 200, 207, 222, 216, 314, 3001, 3010])
    t.ok(ADMIN_CODES.has(code), `admin code ${code}`);
  for (const code of [10, 11, 14, 34, 105, 310]) t.notOk(ADMIN_CODES.has(code), `not admin ${code}`);
});

t.test('requests built to confuse the checker are refused, not thrown', async (t) => {
  const checker = new PlainAclChecker(
    compileAclConfig({
      accounts: [
        { accessKey: 'account1', secretKey: 'secret-1', defaultTopicPerm: 'PUB|SUB', defaultGroupPerm: 'SUB' },
      ],
    }),
  );
  const ch = { remoteAddress: '127.0.0.1:1' };
  t.match(
    checker.check(createRequest(RequestCode.SEND_MESSAGE_V2), ch),
    { allowed: false, reason: 'No accessKey is configured' },
    'no extFields at all',
  );
  const badHb = createRequest(RequestCode.HEART_BEAT, { body: Buffer.from('{"consumerDataSet":7}') });
  signRequest(badHb, { accessKey: 'account1', secretKey: 'secret-1' });
  t.match(
    checker.check(badHb, ch),
    { allowed: false, reason: /^the HEART_BEAT body cannot be read: / },
    'an undecodable heartbeat',
  );
  const huge = createRequest(RequestCode.SEND_MESSAGE_V2, {
    extFields: { b: 'T', AccessKey: 'k'.repeat(1 << 20), Signature: 'x' },
  });
  const d = checker.check(huge, ch);
  t.equal(d.allowed, false);
  t.ok(
    !d.allowed && d.remark.length > 1 << 20,
    'a 1 MiB unknown key is named in the remark, as Apache does (the frame bound limits it)',
  );
  const shortSig = createRequest(RequestCode.SEND_MESSAGE_V2, { extFields: { b: 'T' } });
  signRequest(shortSig, { accessKey: 'account1', secretKey: 'secret-1' });
  t.match(checker.check(shortSig, ch), { allowed: true, principal: 'account1', via: 'signature' });
  shortSig.extFields!.Signature = shortSig.extFields!.Signature!.slice(1);
  t.match(
    checker.check(shortSig, ch),
    { allowed: false, reason: 'Check signature failed for accessKey=account1' },
    'a signature one character short',
  );
  const body = createRequest(RequestCode.SEND_MESSAGE_V2, { extFields: { b: 'T' }, body: Buffer.from('original') });
  signRequest(body, { accessKey: 'account1', secretKey: 'secret-1' });
  body.body = Buffer.from('tampered');
  t.match(checker.check(body, ch), { allowed: false, reason: /Check signature failed/ }, 'the body is signed');
  const trace = createRequest(RequestCode.SEND_MESSAGE_V2, { extFields: { b: 'RMQ_SYS_TRACE_TOPIC' } });
  signRequest(trace, { accessKey: 'account1', secretKey: 'secret-1' });
  const denyAll = new PlainAclChecker(
    compileAclConfig({ accounts: [{ accessKey: 'account1', secretKey: 'secret-1' }] }),
  );
  t.match(denyAll.check(trace, ch), { allowed: true }, 'PUB to RMQ_SYS_TRACE_TOPIC is always allowed (Apache)');
  const ns = new PlainAclChecker(compileAclConfig({ accounts: [] }), 'namesrv');
  t.match(
    ns.check(createRequest(RequestCode.GET_ROUTEINFO_BY_TOPIC, { extFields: { topic: 'T' } }), ch),
    { allowed: true, via: 'open' },
    'name server: routes open',
  );
  t.match(
    ns.check(createRequest(RequestCode.DELETE_TOPIC_IN_NAMESRV, { extFields: { topic: 'T' } }), ch),
    { allowed: false },
    'name server: admin codes checked',
  );
});
