// The embedded broker under a hostile client: requests known to have harmed it, then seeded
// mutations of every request code the broker and name server serve. After each batch the broker
// must be alive, serve a real Producer within 1 s (its send timeout), keep the process's RSS under
// DEFAULT_RSS_LIMIT_BYTES, have touched nothing next to its store folder, and keep the canary
// group's offsets across a restart. A failing seed is rerun with HOSTILE_SEED=<seed>.
import t from 'tap';
import {
  Operations,
  RequestCode,
  ResponseCode,
  createRequest,
  createResponse,
  decodeMessages,
  type RemotingCommand,
} from '../../protocol/internal.js';
import {
  assertHealthy,
  baselineRequest,
  garbageFrames,
  mutateRequest,
  nameKeysOf,
  seededRandom,
  startHostileTarget,
  surfaceBaselines,
  type HostileTarget,
} from './hostile.js';
import { client, heartbeatRequest, pullRequest, sendRequest } from './helpers.js';

const SEEDS = process.env.HOSTILE_SEED ? [Number(process.env.HOSTILE_SEED)] : [1, 13];
const MUTATIONS_PER_CODE = 40;

function sendBack(group: string, offset: number): RemotingCommand {
  return createRequest(RequestCode.CONSUMER_SEND_MSG_BACK, {
    extFields: Operations.CONSUMER_SEND_MSG_BACK.request.encode({
      offset,
      group,
      delayLevel: -1,
      originMsgId: '',
      originTopic: 'T2',
      unitMode: false,
      maxReconsumeTimes: 16,
    }),
  });
}

function createTopic(topic: string, readQueueNums: number, writeQueueNums: number): RemotingCommand {
  return createRequest(RequestCode.UPDATE_AND_CREATE_TOPIC, {
    extFields: {
      topic,
      defaultTopic: 'TBW102',
      readQueueNums: String(readQueueNums),
      writeQueueNums: String(writeQueueNums),
      perm: '6',
      topicFilterType: 'SINGLE_TAG',
      topicSysFlag: '0',
      order: 'false',
    },
  });
}

/**
 * One attack request and its answer, which must come within 5 s (a request timeout, not a timing
 * assertion): an 80 000-tag pull took 14 s before the fix, a 1 000-group heartbeat 13 s.
 */
async function send(target: HostileTarget, cmd: RemotingCommand): Promise<RemotingCommand> {
  const r = await target.sendRaw(cmd, { timeoutMs: 5000 });
  if (!r) throw new Error(`no answer to code ${cmd.code} within 5 s`);
  return r;
}

t.test(
  'issue 13 item 1: a group name cannot lead CONSUMER_SEND_MSG_BACK out of the store or into another topic',
  async (t) => {
    const target = await startHostileTarget();
    t.teardown(() => target.close());
    t.equal((await send(target, createTopic('T2', 1, 1))).code, ResponseCode.SUCCESS);
    for (const body of ['t2-a', 't2-b'])
      t.equal((await send(target, sendRequest('T2', body, { queueId: 0 }))).code, ResponseCode.SUCCESS);
    const attacker = await send(target, sendRequest('Attacker', 'attacker record', { queueId: 0 }));
    t.equal(attacker.code, ResponseCode.SUCCESS);
    const phys = parseInt(attacker.extFields!.msgId!.slice(-16), 16);

    for (const group of ['x/../../../escape_poc', 'x/../T2', '../../../escape_poc', 'x\\..\\..\\escape_poc', '..']) {
      const r = await send(target, sendBack(group, phys));
      t.equal(r.code, ResponseCode.INVALID_PARAMETER, `send-back as ${JSON.stringify(group)} is refused`);
      t.match(r.remark, /^group: The specified group: .*contains illegal characters/);
    }
    // the same names in a heartbeat (which creates %RETRY%<group>) and in a send's topic
    const hb = await send(target, heartbeatRequest('evil', 'x/../../../escape_poc', [{ topic: 'T2' }]));
    t.equal(hb.code, ResponseCode.INVALID_PARAMETER);
    t.match(hb.remark, /^consumerDataSet\[0\]\.groupName: /);
    t.equal(
      (await send(target, sendRequest('%RETRY%x/../../../escape_poc', 'x'))).code,
      ResponseCode.INVALID_PARAMETER,
    );

    await assertHealthy(t, target, { restart: true, label: 'after the traversal attempts' });
    const pulled = await send(target, pullRequest('T2', { sysFlag: 4, subscription: '*' }));
    t.equal(pulled.code, ResponseCode.SUCCESS);
    t.same(
      decodeMessages(pulled.body!).map((m) => m.body.toString()),
      ['t2-a', 't2-b'],
      "T2's own messages are still its queue 0 after a restart",
    );
  },
);

t.test('issue 13 item 2: a group such as "evil,5:" is refused before it reaches consumerOffset.json', async (t) => {
  const target = await startHostileTarget();
  t.teardown(() => target.close());
  const commit = createRequest(RequestCode.UPDATE_CONSUMER_OFFSET, {
    extFields: { consumerGroup: 'evil,5:', topic: 'HostileCanaryTopic', queueId: '0', commitOffset: '5' },
  });
  const r = await send(target, commit);
  t.equal(r.code, ResponseCode.INVALID_PARAMETER);
  t.match(r.remark, /^consumerGroup: The specified group: evil,5:, contains illegal characters/);
  await assertHealthy(t, target, { restart: true });
});

t.test('issue 13 item 4: an 80 000-tag subscription is refused at once, in a pull and in a heartbeat', async (t) => {
  const target = await startHostileTarget();
  t.teardown(() => target.close());
  t.equal((await send(target, sendRequest('Tags', 'm', { tags: 't5' }))).code, ResponseCode.SUCCESS);
  const expression = Array.from({ length: 80_000 }, (_, i) => `t${i}`).join('||');
  const pull = await send(target, pullRequest('Tags', { sysFlag: 4, subscription: expression }));
  t.equal(pull.code, ResponseCode.SUBSCRIPTION_PARSE_FAILED);
  t.equal(
    pull.remark,
    "parse the consumer's subscription failed: the expression has more than 1024 tags (maxTagsPerSubscription)",
  );
  const hb = await send(target, heartbeatRequest('c1', 'TagsGroup', [{ topic: 'Tags', subString: expression }]));
  t.equal(hb.code, ResponseCode.INVALID_PARAMETER);
  t.equal(
    hb.remark,
    'consumerDataSet[0].subscriptionDataSet[0] has 80000 tags, allowing at most 1024 (maxTagsPerSubscription)',
  );
  t.notOk(target.broker.instances[0]!.consumers.find('TagsGroup'), 'the refused heartbeat registered nothing');
  await assertHealthy(t, target);
});

t.test('issue 13 item 4: with the bound raised, 80 000 tags parse in linear time and filter as before', async (t) => {
  const target = await startHostileTarget({ maxTagsPerSubscription: 100_000 });
  t.teardown(() => target.close());
  for (const tags of ['t79999', 'other'])
    t.equal((await send(target, sendRequest('Tags', tags, { tags, queueId: 0 }))).code, ResponseCode.SUCCESS);
  const expression = Array.from({ length: 80_000 }, (_, i) => `t${i}`).join('||');
  const pull = await send(target, pullRequest('Tags', { sysFlag: 4, subscription: expression }));
  t.equal(pull.code, ResponseCode.SUCCESS);
  t.same(
    decodeMessages(pull.body!).map((m) => m.body.toString()),
    ['t79999'],
    'the tag filter still applies',
  );
});

t.test('a heartbeat of 1 000 groups makes their retry topics with one topics.json write', async (t) => {
  const target = await startHostileTarget();
  t.teardown(() => target.close());
  const consumerDataSet = Array.from({ length: 1000 }, (_, i) => ({
    groupName: `G${i}`,
    subscriptionDataSet: [{ topic: 'T', subString: '*', tagsSet: [], codeSet: [], subVersion: 1 }],
  }));
  const hb = createRequest(RequestCode.HEART_BEAT, {
    body: Buffer.from(JSON.stringify({ clientID: 'c', producerDataSet: [], consumerDataSet })),
  });
  // one write per retry topic (each rewriting and fsyncing the whole file) took 13 s
  const r = await send(target, hb);
  t.equal(r.code, ResponseCode.SUCCESS);
  t.ok(target.broker.instances[0]!.topics.get('%RETRY%G999'), 'the retry topics exist');
  await assertHealthy(t, target, { restart: true });
  t.ok(target.broker.instances[0]!.topics.get('%RETRY%G999'), 'and were persisted');
});

t.test(
  'issue 13 item 5: absurd queue counts are refused naming the field, and nothing lands below queue 0',
  async (t) => {
    const target = await startHostileTarget();
    t.teardown(() => target.close());
    // the 2 000 000-queue topic last: before the fix its consume stats below were a 231 MB body
    const cases: [number, number, string][] = [
      [4, 2_147_483_647, 'writeQueueNums 2147483647 is out of range, allowing only 1 to 1024'],
      [4, -7, 'writeQueueNums -7 is out of range, allowing only 1 to 1024'],
      [0, 4, 'readQueueNums 0 is out of range, allowing only 1 to 1024'],
      [2_000_000, 2_000_000, 'readQueueNums 2000000 is out of range, allowing only 1 to 1024'],
    ];
    for (const [r, w, remark] of cases) {
      for (const to of ['broker', 'namesrv'] as const) {
        const res = await target.sendRaw(createTopic('Absurd', r, w), { to, timeoutMs: 1000 });
        t.equal(res?.code, ResponseCode.INVALID_PARAMETER, `${r}/${w} to the ${to}`);
        t.equal(res?.remark, remark);
      }
    }
    t.notOk(target.broker.instances[0]!.topics.get('Absurd'), 'no topic was made');
    const stats = await send(
      target,
      createRequest(RequestCode.GET_CONSUME_STATS, { extFields: { consumerGroup: 'g', topic: 'Absurd' } }),
    );
    t.equal(stats.code, ResponseCode.SUCCESS);
    t.ok((stats.body?.length ?? 0) < 1024, 'consume stats of the refused topic are empty');
    // an auto-created topic with a negative queue count is refused; a send that lets the broker pick a queue gets a real one
    const neg = await send(target, sendRequest('AutoNeg', 'x', { defaultTopicQueueNums: -7, queueId: -1 }));
    t.equal(neg.code, ResponseCode.INVALID_PARAMETER);
    t.equal(neg.remark, 'defaultTopicQueueNums -7 is out of range, allowing only 1 to 1024');
    const picked = await send(target, sendRequest('AutoPos', 'x', { defaultTopicQueueNums: 4, queueId: -1 }));
    t.equal(picked.code, ResponseCode.SUCCESS);
    t.ok(
      Number(picked.extFields?.queueId) >= 0 && Number(picked.extFields?.queueId) < 4,
      `queue ${picked.extFields?.queueId} is one of the topic's`,
    );
    // an offset commit for a queue the topic does not have
    const far = await send(
      target,
      createRequest(RequestCode.UPDATE_CONSUMER_OFFSET, {
        extFields: { consumerGroup: 'g', topic: 'AutoPos', queueId: '2147483647', commitOffset: '1' },
      }),
    );
    t.equal(far.code, ResponseCode.INVALID_PARAMETER);
    t.equal(far.remark, 'queueId 2147483647 is out of range, topic AutoPos has queues 0 to 3');
    await assertHealthy(t, target, { restart: true });
  },
);

t.test('GET_CONSUME_STATS of a group spread over more than 65 536 queues is refused before it is built', async (t) => {
  const target = await startHostileTarget();
  t.teardown(() => target.close());
  const batch: RemotingCommand[] = [];
  for (let i = 0; i < 65; i++) {
    batch.push(createTopic(`Wide${i}`, 1024, 1024));
    batch.push(
      createRequest(RequestCode.UPDATE_CONSUMER_OFFSET, {
        extFields: { consumerGroup: 'WideGroup', topic: `Wide${i}`, queueId: '0', commitOffset: '0' },
      }),
    );
  }
  const answers = await target.sendBatch(batch, { timeoutMs: 10_000 });
  t.same(
    answers.filter((a) => a?.code !== ResponseCode.SUCCESS),
    [],
    'the topics and offsets were made',
  );
  const stats = await send(
    target,
    createRequest(RequestCode.GET_CONSUME_STATS, { extFields: { consumerGroup: 'WideGroup' } }),
  );
  t.equal(stats.code, ResponseCode.SYSTEM_ERROR);
  t.equal(
    stats.remark,
    'the consume stats of group WideGroup span 66560 queues, more than 65536; ask for one topic at a time',
  );
  const one = await send(
    target,
    createRequest(RequestCode.GET_CONSUME_STATS, { extFields: { consumerGroup: 'WideGroup', topic: 'Wide7' } }),
  );
  t.equal(one.code, ResponseCode.SUCCESS, 'one topic at a time is answered');
  await assertHealthy(t, target);
});

t.test('garbage frames: the broker drops the connection and lives on', async (t) => {
  const target = await startHostileTarget();
  t.teardown(() => target.close());
  const rng = seededRandom(7);
  for (const frame of garbageFrames(rng)) await target.sendRaw(frame, { timeoutMs: 500 });
  await assertHealthy(t, target, { label: 'garbage frames' });
});

t.test('seeded mutations of every request code the broker and name server serve', async (t) => {
  const target = await startHostileTarget();
  t.teardown(() => target.close());
  // which codes are served: the ones not answered REQUEST_CODE_NOT_SUPPORTED
  const served: { op: (typeof Operations)[keyof typeof Operations]; to: 'broker' | 'namesrv' }[] = [];
  for (const op of Object.values(Operations)) {
    for (const to of ['broker', 'namesrv'] as const) {
      const r = await target.sendRaw(baselineRequest(op), { to, timeoutMs: 1000 });
      if (r && r.code !== ResponseCode.REQUEST_CODE_NOT_SUPPORTED) served.push({ op, to });
    }
  }
  const names = served.map((s) => `${s.to}:${s.op.name}`);
  for (const must of [
    'broker:SEND_MESSAGE_V2',
    'broker:PULL_MESSAGE',
    'broker:CONSUMER_SEND_MSG_BACK',
    'broker:HEART_BEAT',
    'broker:UPDATE_CONSUMER_OFFSET',
    'broker:UPDATE_AND_CREATE_TOPIC',
    'broker:GET_CONSUME_STATS',
    'broker:LOCK_BATCH_MQ',
    'namesrv:GET_ROUTEINFO_BY_TOPIC',
    'namesrv:UPDATE_AND_CREATE_TOPIC',
  ]) {
    t.ok(names.includes(must), `${must} is served and mutated`);
  }
  for (const seed of SEEDS) {
    const rng = seededRandom(seed);
    for (const { op, to } of served) {
      const base = baselineRequest(op);
      const batch = Array.from({ length: MUTATIONS_PER_CODE }, () => mutateRequest(rng, base, nameKeysOf(op)));
      await target.sendBatch(batch, { to, timeoutMs: 2000 });
      await assertHealthy(t, target, { restart: true, label: `seed ${seed}, ${to} ${op.name}` });
    }
  }
});

t.test(
  'issue 29 item 10: seeded mutations of the newer surfaces (transactions, timers, SQL92, POP, replies), from real state',
  async (t) => {
    const target = await startHostileTarget({ enablePropertyFilter: true });
    t.teardown(() => target.close());
    const surfaces = await surfaceBaselines(target);
    t.ok(surfaces.length >= 10, `${surfaces.length} surface requests built from a half message, a pop and the rest`);
    for (const seed of SEEDS) {
      const rng = seededRandom(seed);
      for (const s of surfaces) {
        const batch = Array.from({ length: MUTATIONS_PER_CODE }, () => mutateRequest(rng, s.base, s.nameKeys));
        await target.sendBatch(batch, { timeoutMs: 2000 });
        await assertHealthy(t, target, { restart: seed === SEEDS[0], label: `seed ${seed}, ${s.label}` });
      }
    }
  },
);

t.test(
  'issue 29 M1, M2, L1, L2: a forged END_TRANSACTION, repeated ends, POP nonsense and a forged reply are refused, and the broker stays healthy',
  async (t) => {
    const target = await startHostileTarget();
    t.teardown(() => target.close());
    const store = target.broker.instances[0]!.messageStore;
    const offsetOf = (res: RemotingCommand): number => Number(BigInt('0x' + res.extFields!.msgId!.slice(-16)));
    const endTx = (res: RemotingCommand, uniq: string, commitOrRollback: number): RemotingCommand =>
      createRequest(RequestCode.END_TRANSACTION, {
        extFields: Operations.END_TRANSACTION.request.encode({
          producerGroup: 'hostile_pg',
          tranStateTableOffset: Number(res.extFields!.queueOffset),
          commitLogOffset: offsetOf(res),
          commitOrRollback,
          fromTransactionCheck: false,
          msgId: uniq,
          transactionId: uniq,
          topic: 'HostileTx',
        }),
      });
    const uniqOf = (req: RemotingCommand): string => /UNIQ_KEY\u0001([0-9A-F]+)/.exec(req.extFields!.i!)![1]!;

    // M1: a normal message dressed as a half, committed into the op topic
    const forgedReq = sendRequest('HostileTx', 'forged', {
      properties: { PGROUP: 'hostile_pg', REAL_TOPIC: 'RMQ_SYS_TRANS_OP_HALF_TOPIC', REAL_QID: '0' },
    });
    const forged = await send(target, forgedReq);
    t.equal(forged.code, ResponseCode.SUCCESS);
    t.equal((await send(target, endTx(forged, uniqOf(forgedReq), 8))).code, ResponseCode.SYSTEM_ERROR, 'M1: refused');
    t.equal(store.getMaxOffset('RMQ_SYS_TRANS_OP_HALF_TOPIC', 0), 0, 'M1: no op record forged');
    // M2: one half, three commits
    const halfReq = sendRequest('HostileTx', 'half', {
      properties: { TRAN_MSG: 'true', PGROUP: 'hostile_pg' },
      sysFlag: 4,
    });
    const half = await send(target, halfReq);
    for (let i = 0; i < 3; i++)
      t.equal((await send(target, endTx(half, uniqOf(halfReq), 8))).code, ResponseCode.SUCCESS);
    const onTopic = [0, 1, 2, 3].reduce((n, q) => n + store.getMaxOffset('HostileTx', q), 0);
    t.equal(onTopic, 2, 'M2: the forged send and one committed message');

    // L1: a pop that makes everything visible at once, an ack of 100 000 fields
    const pop = createRequest(RequestCode.POP_MESSAGE, {
      extFields: {
        consumerGroup: 'hostile_pop_cg',
        topic: 'HostileTx',
        queueId: '-1',
        maxMsgNums: '32',
        invisibleTime: '-1',
        pollTime: '0',
        bornTime: '0',
        initMode: '0',
      },
    });
    t.equal((await send(target, pop)).code, ResponseCode.INVALID_PARAMETER, 'L1: invisibleTime -1 refused');
    const ack = createRequest(RequestCode.ACK_MESSAGE, {
      extFields: {
        consumerGroup: 'hostile_pop_cg',
        topic: 'HostileTx',
        queueId: '0',
        extraInfo: Array.from({ length: 100_000 }, () => '0').join(' '),
        offset: '0',
      },
    });
    t.equal((await send(target, ack)).code, ResponseCode.INVALID_PARAMETER, 'L1: 100 000 fields refused');

    // L2: a forged reply to a live client
    const victim = client();
    t.teardown(() => victim.close());
    let pushed = 0;
    victim.registerProcessor(RequestCode.PUSH_REPLY_MESSAGE_TO_CLIENT, (req) => {
      pushed++;
      return createResponse(req, ResponseCode.SUCCESS);
    });
    await victim.invoke(target.brokerAddr, heartbeatRequest('victim@9', '', [], 'victim_pg'));
    const reply = sendRequest('DefaultCluster_REPLY_TOPIC', 'forged', {
      code: RequestCode.SEND_REPLY_MESSAGE_V2,
      properties: { CORRELATION_ID: 'guessed', REPLY_TO_CLIENT: 'victim@9', MSG_TYPE: 'reply' },
    });
    t.equal((await send(target, reply)).code, ResponseCode.NO_PERMISSION, 'L2: refused');
    t.equal(pushed, 0, 'L2: nothing pushed');
    await assertHealthy(t, target, { restart: true, label: 'issue 29 M1 M2 L1 L2' });
  },
);
