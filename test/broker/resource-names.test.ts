// Topic and group names: TopicValidator / Validators.checkGroup's rules (protocol/resource-names.ts),
// checked once at the request boundary for every request code (lib/broker/resource-names.ts).
import t from 'tap';
import {
  Operations,
  RequestCode,
  ResponseCode,
  createRequest,
  buildSubscriptionData,
} from '../../protocol/internal.js';
import { checkGroupName, checkTopicName, isSystemTopic } from '../../protocol/resource-names.js';
import { startBroker } from '../../lib/broker/index.js';
import { BODY_NAMES, GROUP_HEADER_FIELDS, TOPIC_HEADER_FIELDS } from '../../lib/broker/resource-names.js';
import { BrokerOptionError } from '../../lib/broker/errors.js';
import { baselineRequest } from './hostile.js';
import { client } from './helpers.js';

t.test('the rules are TopicValidator and Validators.checkGroup of Apache RocketMQ develop', async (t) => {
  for (const ok of ['T', 'Topic_1-x', '%RETRY%g', '%DLQ%g', 'a|b', 'a'.repeat(127), '%RETRY%' + 'g'.repeat(248)])
    t.equal(checkTopicName(ok), null, ok.slice(0, 20));
  t.equal(checkTopicName(''), 'The specified topic is blank.');
  t.equal(checkTopicName('  '), 'The specified topic is blank.');
  t.equal(
    checkTopicName('x/../T2'),
    'The specified topic: x/../T2, contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$',
  );
  for (const bad of ['a.b', 'a b', 'a@b', 'a,b', 'a:b', 'ä', 'a\u0000', '..'])
    t.match(checkTopicName(bad), /contains illegal characters/, JSON.stringify(bad));
  t.equal(
    checkTopicName('a'.repeat(128)),
    `The specified topic: ${'a'.repeat(64)}…, is longer than topic max length: 127`,
  );
  t.match(checkTopicName('%DLQ%' + 'g'.repeat(251)), /is DLQ or Retry topic: .*longer than topic max length: 255$/);
  t.equal(checkGroupName('g'.repeat(120)), null);
  t.equal(
    checkGroupName('g'.repeat(121)),
    `The specified group: ${'g'.repeat(64)}…, is longer than group max length: 120`,
  );
  t.match(
    checkGroupName('x/../../../escape_poc'),
    /^The specified group: x\/\.\.\/\.\.\/\.\.\/escape_poc, contains illegal characters/,
  );
  t.equal(checkGroupName(undefined), 'The specified group is blank.');
  t.match(checkTopicName('new\nline'), /^The specified topic: new\\nline, /, 'a remark stays one line');
  t.ok(isSystemTopic('TBW102') && isSystemTopic('rmq_sys_x') && isSystemTopic('RMQ_SYS_TRACE_TOPIC'));
  t.notOk(isSystemTopic('%RETRY%g'));
});

t.test('every topic or group field of every request header is one the boundary checks', async (t) => {
  const unchecked: string[] = [];
  for (const op of Object.values(Operations)) {
    for (const f of op.request.fields) {
      if (f.kind !== 'string' || !/topic|group/i.test(f.name)) continue;
      if (!TOPIC_HEADER_FIELDS.has(f.name) && !GROUP_HEADER_FIELDS.has(f.name)) unchecked.push(`${op.name}.${f.name}`);
    }
  }
  // topicFilterType is not a name (UPDATE_AND_CREATE_TOPIC checks its value; the embedded broker does
  // not serve UPDATE_AND_CREATE_STATIC_TOPIC, which shares its header)
  t.same(unchecked, ['UPDATE_AND_CREATE_TOPIC.topicFilterType', 'UPDATE_AND_CREATE_STATIC_TOPIC.topicFilterType']);
  for (const code of [
    RequestCode.HEART_BEAT,
    RequestCode.LOCK_BATCH_MQ,
    RequestCode.UNLOCK_BATCH_MQ,
    RequestCode.CHECK_CLIENT_CONFIG,
  ])
    t.ok(BODY_NAMES[code], `body names of ${code}`);
});

t.test(
  'a bad topic or group in any field of any served request is INVALID_PARAMETER naming the field, before the handler runs',
  async (t) => {
    const b = await startBroker();
    t.teardown(() => b.close());
    const c = client();
    t.teardown(() => c.close());
    let checked = 0;
    for (const op of Object.values(Operations)) {
      for (const f of op.request.fields) {
        if (f.kind !== 'string' || !(TOPIC_HEADER_FIELDS.has(f.name) || GROUP_HEADER_FIELDS.has(f.name))) continue;
        for (const addr of [b.broker, b.namesrv]) {
          const req = baselineRequest(op);
          req.extFields![f.key] = 'x/../../../escape_poc';
          const res = await c.invoke(addr, req);
          if (res.code === ResponseCode.REQUEST_CODE_NOT_SUPPORTED) continue;
          checked++;
          t.equal(
            res.code,
            ResponseCode.INVALID_PARAMETER,
            `${op.name}.${f.name} at ${addr === b.broker ? 'broker' : 'namesrv'}`,
          );
          t.match(
            res.remark,
            new RegExp(
              `^${f.name}: The specified (topic|group): x/\\.\\./\\.\\./\\.\\./escape_poc, contains illegal characters`,
            ),
          );
        }
      }
    }
    t.ok(checked >= 30, `${checked} served fields checked`);
    // bodies: a heartbeat's subscription topic, a lock's queue topic, a client config check's group
    const hb = (topic: string, group: string, producerGroup: string): Buffer =>
      Buffer.from(
        JSON.stringify({
          clientID: 'c',
          consumerDataSet: [
            {
              groupName: group,
              subscriptionDataSet: [{ topic, subString: '*', tagsSet: [], codeSet: [], subVersion: 1 }],
            },
          ],
          producerDataSet: [{ groupName: producerGroup }],
        }),
      );
    const bodies: [number, Buffer, string][] = [
      [RequestCode.HEART_BEAT, hb('x/../T', 'G', 'P'), 'consumerDataSet[0].subscriptionDataSet[0].topic'],
      [RequestCode.HEART_BEAT, hb('T', 'G', 'P.x'), 'producerDataSet[0].groupName'],
      [
        RequestCode.LOCK_BATCH_MQ,
        Buffer.from(
          JSON.stringify({
            clientId: 'c',
            consumerGroup: 'G',
            mqSet: [{ brokerName: 'broker-a', queueId: 0, topic: '../T' }],
          }),
        ),
        'mqSet[0].topic',
      ],
      [
        RequestCode.UNLOCK_BATCH_MQ,
        Buffer.from(JSON.stringify({ clientId: 'c', consumerGroup: 'G/..', mqSet: [] })),
        'consumerGroup',
      ],
      [
        RequestCode.CHECK_CLIENT_CONFIG,
        Buffer.from(JSON.stringify({ clientId: 'c', group: 'a b', subscriptionData: { topic: 'T', subString: '*' } })),
        'group',
      ],
    ];
    for (const [code, body, path] of bodies) {
      const res = await c.invoke(b.broker, createRequest(code, { body }));
      t.equal(res.code, ResponseCode.INVALID_PARAMETER, path);
      t.equal(res.remark?.split(':')[0], path);
    }
    t.same(
      b.instances[0]!.topics.all()
        .map((x) => x.topicName)
        .filter((n) => checkTopicName(n)),
      [],
      'no topic with a bad name was made',
    );
    // a client-built subscription past maxTagsPerSubscription in CHECK_CLIENT_CONFIG
    const many = Array.from({ length: 1025 }, (_, i) => `t${i}`);
    const check = await c.invoke(
      b.broker,
      createRequest(RequestCode.CHECK_CLIENT_CONFIG, {
        body: Buffer.from(
          JSON.stringify({
            clientId: 'c',
            group: 'G',
            subscriptionData: {
              topic: 'T',
              subString: many.join('||'),
              tagsSet: many,
              codeSet: [],
              expressionType: 'TAG',
            },
          }),
        ),
      }),
    );
    t.equal(check.code, ResponseCode.INVALID_PARAMETER);
    t.equal(check.remark, 'subscriptionData has 1025 tags, allowing at most 1024 (maxTagsPerSubscription)');
  },
);

t.test(
  'UPDATE_AND_CREATE_TOPIC refuses system topics, bad perm and filter types; maxQueueNums is configurable',
  async (t) => {
    const b = await startBroker({ maxQueueNums: 16 });
    t.teardown(() => b.close());
    const c = client();
    t.teardown(() => c.close());
    const create = (topic: string, f: Record<string, string> = {}): ReturnType<typeof createRequest> =>
      createRequest(RequestCode.UPDATE_AND_CREATE_TOPIC, {
        extFields: {
          topic,
          defaultTopic: 'TBW102',
          readQueueNums: '4',
          writeQueueNums: '4',
          perm: '6',
          topicFilterType: 'SINGLE_TAG',
          topicSysFlag: '0',
          order: 'false',
          ...f,
        },
      });
    const answers: [ReturnType<typeof createRequest>, string][] = [
      [create('TBW102', { writeQueueNums: '2000000' }), 'The topic[TBW102] is conflict with system topic.'],
      [create('SCHEDULE_TOPIC_XXXX'), 'The topic[SCHEDULE_TOPIC_XXXX] is conflict with system topic.'],
      [create('rmq_sys_mine'), 'The topic[rmq_sys_mine] is conflict with system topic.'],
      [create('Q', { readQueueNums: '17' }), 'readQueueNums 17 is out of range, allowing only 1 to 16'],
      [create('Q', { perm: '-1' }), 'perm -1 is invalid, allowing only 0 to 7 (PermName)'],
      [create('Q', { perm: '8' }), 'perm 8 is invalid, allowing only 0 to 7 (PermName)'],
      [
        create('Q', { topicFilterType: '../x' }),
        'topicFilterType "../x" is invalid, allowing only SINGLE_TAG or MULTI_TAG',
      ],
    ];
    for (const [req, remark] of answers) {
      for (const addr of [b.broker, b.namesrv]) {
        const res = await c.invoke(addr, { ...req, extFields: { ...req.extFields } });
        t.equal(res.code, ResponseCode.INVALID_PARAMETER, remark);
        t.equal(res.remark, remark);
      }
    }
    t.equal(b.instances[0]!.topics.get('TBW102')!.writeQueueNums, 8, 'the template topic is unchanged');
    t.equal(
      (await c.invoke(b.broker, create('Q', { readQueueNums: '16', writeQueueNums: '16' }))).code,
      ResponseCode.SUCCESS,
    );
    await t.rejects(
      startBroker({ maxQueueNums: 0 }),
      new BrokerOptionError('maxQueueNums', 'must be an integer in [1, 65535], got 0'),
    );
    await t.rejects(startBroker({ maxTagsPerSubscription: -1 }), {
      name: 'BrokerOptionError',
      option: 'maxTagsPerSubscription',
    });
  },
);

t.test('buildSubscriptionData keeps FilterAPI semantics with sets, and stops at maxTags', async (t) => {
  const sd = buildSubscriptionData('T', ' a || b ||a|| Aa||BB ', 1);
  t.same(sd.tagsSet, ['a', 'b', 'Aa', 'BB'], 'each tag once, in first-seen order');
  t.equal(sd.codeSet.length, 3, '"Aa" and "BB" share one hash code');
  t.same(buildSubscriptionData('T', 'a||b', 1, 'TAG', { maxTags: 2 }).tagsSet, ['a', 'b']);
  t.throws(() => buildSubscriptionData('T', 'a||b||c', 1, 'TAG', { maxTags: 2 }), {
    name: 'FilterExpressionError',
    message: 'the expression has more than 2 tags',
  });
  t.throws(() => buildSubscriptionData('T', '||', 1), { name: 'FilterExpressionError' });
});
