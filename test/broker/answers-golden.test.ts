import t from 'tap';
import { RequestCode as RC, createRequest, decodeMessages, type RemotingCommand } from '../../protocol/index.js';
import { startBroker } from '../../lib/broker/index.js';
import { RemotingClient } from '../../lib/remoting/index.js';
import { ManualClock } from '../../lib/clock.js';

// The answers a client sees (code, remark, version, flag, extFields in wire order, JSON bodies) for
// one well-formed request of each kind the broker serves, recorded before the broker was split
// into processors over the operation table; the split keeps them byte for byte. Addresses and
// ports are masked; pulled records are compared by length (the store writes them). Every
// stored record carries MSG_REGION and TRACE_ON as Java's broker stores them (message trace),
// which the later offset msgIds and the pulled lengths include.
const EXPECTED = [
  '{"label":"send-v1-JSON","code":0,"remark":null,"version":409,"flag":1,"ext":[["queueId","0"],["TRACE_ON","true"],["MSG_REGION","DefaultRegion"],["msgId","7F000001PORTHEX0000000000000000"],["queueOffset","0"]],"body":null}',
  '{"label":"send-v2-JSON","code":0,"remark":null,"version":409,"flag":1,"ext":[["queueId","0"],["TRACE_ON","true"],["MSG_REGION","DefaultRegion"],["msgId","7F000001PORTHEX00000000000000BB"],["queueOffset","1"]],"body":null}',
  '{"label":"send-v1-ROCKETMQ","code":0,"remark":null,"version":409,"flag":1,"ext":[["queueId","0"],["TRACE_ON","true"],["MSG_REGION","DefaultRegion"],["msgId","7F000001PORTHEX0000000000000176"],["queueOffset","2"]],"body":null}',
  '{"label":"send-v2-ROCKETMQ","code":0,"remark":null,"version":409,"flag":1,"ext":[["queueId","0"],["TRACE_ON","true"],["MSG_REGION","DefaultRegion"],["msgId","7F000001PORTHEX0000000000000231"],["queueOffset","3"]],"body":null}',
  '{"label":"send-delay","code":0,"remark":null,"version":409,"flag":1,"ext":[["queueId","0"],["TRACE_ON","true"],["MSG_REGION","DefaultRegion"],["msgId","7F000001PORTHEX00000000000002EC"],["queueOffset","0"]],"body":null}',
  '{"label":"send-badqueue","code":1,"remark":"request queueId[9] is illegal, {\\"topicName\\":\\"G\\",\\"readQueueNums\\":4,\\"writeQueueNums\\":4,\\"perm\\":6,\\"topicFilterType\\":\\"SINGLE_TAG\\",\\"topicSysFlag\\":0,\\"order\\":false} Producer: CLIENT","version":409,"flag":1,"ext":[["TRACE_ON","true"],["MSG_REGION","DefaultRegion"]],"body":null}',
  '{"label":"send-forbidden","code":16,"remark":"Sending message to topic[SCHEDULE_TOPIC_XXXX] is forbidden.","version":409,"flag":1,"ext":[["TRACE_ON","true"],["MSG_REGION","DefaultRegion"]],"body":null}',
  '{"label":"send-batch","code":0,"remark":null,"version":409,"flag":1,"ext":[["queueId","0"],["TRACE_ON","true"],["MSG_REGION","DefaultRegion"],["msgId","7F000001PORTHEX00000000000003D8,7F000001PORTHEX0000000000000493"],["queueOffset","4"]],"body":null}',
  '{"label":"pull-found","code":0,"remark":"FOUND","version":409,"flag":1,"ext":[["suggestWhichBrokerId","0"],["groupSysFlag","0"],["nextBeginOffset","6"],["maxOffset","6"],["minOffset","0"],["topicSysFlag","0"]],"body":"len=1122"}',
  '{"label":"pull-tag","code":0,"remark":"FOUND","version":409,"flag":1,"ext":[["suggestWhichBrokerId","0"],["groupSysFlag","0"],["nextBeginOffset","6"],["maxOffset","6"],["minOffset","0"],["topicSysFlag","0"]],"body":"len=374"}',
  '{"label":"pull-notfound","code":21,"remark":"OFFSET_OVERFLOW_BADLY","version":409,"flag":1,"ext":[["suggestWhichBrokerId","0"],["groupSysFlag","0"],["nextBeginOffset","6"],["maxOffset","6"],["minOffset","0"],["topicSysFlag","0"]],"body":null}',
  '{"label":"pull-moved","code":21,"remark":"OFFSET_OVERFLOW_BADLY","version":409,"flag":1,"ext":[["suggestWhichBrokerId","0"],["groupSysFlag","0"],["nextBeginOffset","6"],["maxOffset","6"],["minOffset","0"],["topicSysFlag","0"]],"body":null}',
  '{"label":"pull-commit","code":0,"remark":"FOUND","version":409,"flag":1,"ext":[["suggestWhichBrokerId","0"],["groupSysFlag","0"],["nextBeginOffset","6"],["maxOffset","6"],["minOffset","0"],["topicSysFlag","0"]],"body":"len=1122"}',
  '{"label":"pull-nosub","code":24,"remark":"the consumer\'s group info not exist\\nSee http://rocketmq.apache.org/docs/faq/ for further details.","version":409,"flag":1,"ext":null,"body":null}',
  '{"label":"pull-lite","code":0,"remark":"FOUND","version":409,"flag":1,"ext":[["suggestWhichBrokerId","0"],["groupSysFlag","0"],["nextBeginOffset","6"],["maxOffset","6"],["minOffset","0"],["topicSysFlag","0"]],"body":"len=1122"}',
  '{"label":"pull-unknown","code":17,"remark":"topic[Nope] not exist, apply first please!\\nSee http://rocketmq.apache.org/docs/faq/ for further details.","version":409,"flag":1,"ext":null,"body":null}',
  '{"label":"query-offset","code":0,"remark":null,"version":409,"flag":1,"ext":[["offset","3"]],"body":null}',
  '{"label":"query-offset-none","code":22,"remark":"Not found, V3_0_6_SNAPSHOT maybe this group consumer boot first","version":409,"flag":1,"ext":null,"body":null}',
  '{"label":"update-offset","code":0,"remark":null,"version":409,"flag":1,"ext":null,"body":null}',
  '{"label":"max","code":0,"remark":null,"version":409,"flag":1,"ext":[["offset","6"]],"body":null}',
  '{"label":"min","code":0,"remark":null,"version":409,"flag":1,"ext":[["offset","0"]],"body":null}',
  '{"label":"search","code":0,"remark":null,"version":409,"flag":1,"ext":[["offset","0"]],"body":null}',
  '{"label":"earliest","code":0,"remark":null,"version":409,"flag":1,"ext":[["timestamp","1700000000000"]],"body":null}',
  '{"label":"heartbeat","code":0,"remark":null,"version":409,"flag":1,"ext":[["IS_SUB_CHANGE","true"],["IS_SUPPORT_HEART_BEAT_V2","true"]],"body":null}',
  '{"label":"consumer-list","code":0,"remark":null,"version":409,"flag":1,"ext":null,"body":"{\\"consumerIdList\\":[\\"10.0.0.1@1\\"]}"}',
  '{"label":"consumer-list-none","code":1,"remark":"no consumer for this group, zz","version":409,"flag":1,"ext":null,"body":null}',
  '{"label":"lock","code":0,"remark":null,"version":409,"flag":1,"ext":null,"body":"{\\"lockOKMQSet\\":[{\\"brokerName\\":\\"broker-a\\",\\"queueId\\":0,\\"topic\\":\\"G\\"},{\\"brokerName\\":\\"broker-a\\",\\"queueId\\":1,\\"topic\\":\\"G\\"}]}"}',
  '{"label":"lock-other","code":0,"remark":null,"version":409,"flag":1,"ext":null,"body":"{\\"lockOKMQSet\\":[]}"}',
  '{"label":"unlock","code":0,"remark":null,"version":409,"flag":1,"ext":null,"body":null}',
  '{"label":"check-config","code":0,"remark":null,"version":409,"flag":1,"ext":null,"body":null}',
  '{"label":"check-config-sql","code":1,"remark":"The broker does not support consumer to filter message by SQL92","version":409,"flag":1,"ext":null,"body":null}',
  '{"label":"topic-config","code":0,"remark":null,"version":409,"flag":1,"ext":null,"body":"{\\"order\\":false,\\"perm\\":6,\\"readQueueNums\\":4,\\"topicFilterType\\":\\"SINGLE_TAG\\",\\"topicName\\":\\"G\\",\\"topicSysFlag\\":0,\\"writeQueueNums\\":4}"}',
  '{"label":"topic-config-none","code":17,"remark":"topic[Nope] not exist, apply first please!\\nSee http://rocketmq.apache.org/docs/faq/ for further details.","version":409,"flag":1,"ext":null,"body":null}',
  '{"label":"consume-stats","code":0,"remark":null,"version":409,"flag":1,"ext":null,"body":"{\\"consumeTps\\":0.0,\\"offsetTable\\":{{\\"brokerName\\":\\"broker-a\\",\\"queueId\\":0,\\"topic\\":\\"G\\"}:{\\"brokerOffset\\":6,\\"consumerOffset\\":2,\\"lastTimestamp\\":1700000000000},{\\"brokerName\\":\\"broker-a\\",\\"queueId\\":1,\\"topic\\":\\"G\\"}:{\\"brokerOffset\\":0,\\"consumerOffset\\":0,\\"lastTimestamp\\":0},{\\"brokerName\\":\\"broker-a\\",\\"queueId\\":2,\\"topic\\":\\"G\\"}:{\\"brokerOffset\\":0,\\"consumerOffset\\":0,\\"lastTimestamp\\":0},{\\"brokerName\\":\\"broker-a\\",\\"queueId\\":3,\\"topic\\":\\"G\\"}:{\\"brokerOffset\\":0,\\"consumerOffset\\":0,\\"lastTimestamp\\":0}}}"}',
  '{"label":"create-topic","code":0,"remark":null,"version":409,"flag":1,"ext":null,"body":null}',
  '{"label":"view","code":0,"remark":null,"version":409,"flag":1,"ext":null,"body":"len=187"}',
  '{"label":"send-back","code":0,"remark":null,"version":409,"flag":1,"ext":null,"body":null}',
  '{"label":"send-back-dlq","code":0,"remark":null,"version":409,"flag":1,"ext":null,"body":null}',
  '{"label":"unregister","code":0,"remark":null,"version":409,"flag":1,"ext":null,"body":null}',
];

t.test('answers to well-formed requests are unchanged', async (t) => {
  const clock = new ManualClock(1_700_000_000_000);
  const b = await startBroker({ queues: 4, clock });
  const c = new RemotingClient({ defaultTimeoutMs: 5000 });
  const out: string[] = [];
  const port = b.broker.split(':')[1];
  const portHex = Number(port).toString(16).toUpperCase().padStart(8, '0');
  const norm = (s: unknown): unknown =>
    s == null
      ? s
      : String(s)
          .split(b.broker)
          .join('BROKER')
          .split(portHex)
          .join('PORTHEX')
          .replace(/Producer: [\d.]+:\d+/, 'Producer: CLIENT');
  async function call(label: string, req: RemotingCommand): Promise<RemotingCommand> {
    const res = await c.invoke(b.broker, req);
    const ext = res.extFields ? Object.entries(res.extFields).map(([k, v]) => [k, norm(v)]) : null;
    let body: unknown = null;
    if (res.body)
      body =
        label.startsWith('pull') || label.startsWith('view') ? `len=${res.body.length}` : norm(res.body.toString());
    out.push(
      JSON.stringify({
        label,
        code: res.code,
        remark: norm(res.remark),
        version: res.version,
        flag: res.flag,
        ext,
        body,
      }),
    );
    return res;
  }
  const P1 = '\u0001',
    P2 = '\u0002';
  const props = (m: Record<string, string>): string =>
    Object.entries(m)
      .map(([k, v]) => k + P1 + v)
      .join(P2);
  let n = 0;
  const sendExt = (
    topic: string,
    o: { queueId?: number; tags?: string; props?: Record<string, string> } = {},
  ): Record<string, string> => ({
    producerGroup: 'pg',
    topic,
    defaultTopic: 'TBW102',
    defaultTopicQueueNums: '4',
    queueId: String(o.queueId ?? 0),
    sysFlag: '0',
    bornTimestamp: '1700000000000',
    flag: '0',
    properties: props({ UNIQ_KEY: 'K' + ++n, TAGS: o.tags ?? 'TagA', WAIT: 'true', ...(o.props ?? {}) }),
    reconsumeTimes: '0',
    unitMode: 'false',
    batch: 'false',
  });
  const v2 = (e: Record<string, string>): Record<string, string> => {
    const m: Record<string, string> = {
      producerGroup: 'a',
      topic: 'b',
      defaultTopic: 'c',
      defaultTopicQueueNums: 'd',
      queueId: 'e',
      sysFlag: 'f',
      bornTimestamp: 'g',
      flag: 'h',
      properties: 'i',
      reconsumeTimes: 'j',
      unitMode: 'k',
      maxReconsumeTimes: 'l',
      batch: 'm',
    };
    const o: Record<string, string> = {};
    for (const [k, v] of Object.entries(e)) o[m[k]!] = v;
    return o;
  };
  for (const st of ['JSON', 'ROCKETMQ'] as const) {
    await call(
      `send-v1-${st}`,
      createRequest(RC.SEND_MESSAGE, { extFields: sendExt('G'), body: Buffer.from('v1'), serializeType: st }),
    );
    await call(
      `send-v2-${st}`,
      createRequest(RC.SEND_MESSAGE_V2, {
        extFields: v2(sendExt('G', { tags: 'TagB' })),
        body: Buffer.from('v2'),
        serializeType: st,
      }),
    );
  }
  await call(
    'send-delay',
    createRequest(RC.SEND_MESSAGE_V2, {
      extFields: v2(sendExt('G', { props: { DELAY: '3' } })),
      body: Buffer.from('d'),
    }),
  );
  await call(
    'send-badqueue',
    createRequest(RC.SEND_MESSAGE_V2, { extFields: v2(sendExt('G', { queueId: 9 })), body: Buffer.from('x') }),
  );
  await call(
    'send-forbidden',
    createRequest(RC.SEND_MESSAGE_V2, { extFields: v2(sendExt('SCHEDULE_TOPIC_XXXX')), body: Buffer.from('x') }),
  );
  const batchItem = (body: string, p: Record<string, string>): Buffer => {
    const bb = Buffer.from(body),
      pr = Buffer.from(props(p));
    const buf = Buffer.alloc(22 + bb.length + pr.length);
    buf.writeInt32BE(buf.length, 0);
    buf.writeInt32BE(bb.length, 16);
    bb.copy(buf, 20);
    buf.writeInt16BE(pr.length, 20 + bb.length);
    pr.copy(buf, 22 + bb.length);
    return buf;
  };
  await call(
    'send-batch',
    createRequest(RC.SEND_BATCH_MESSAGE, {
      extFields: { ...v2(sendExt('G')), m: 'true' },
      body: Buffer.concat([batchItem('b1', { UNIQ_KEY: 'B1' }), batchItem('b2', { UNIQ_KEY: 'B2' })]),
    }),
  );
  const pull = (o: { off?: number; sys?: number; commit?: number; sub?: string }): RemotingCommand =>
    createRequest(RC.PULL_MESSAGE, {
      extFields: {
        consumerGroup: 'cg',
        topic: 'G',
        queueId: '0',
        queueOffset: String(o.off ?? 0),
        maxMsgNums: '32',
        sysFlag: String(o.sys ?? 4),
        commitOffset: String(o.commit ?? -1),
        suspendTimeoutMillis: '0',
        subscription: o.sub ?? '*',
        subVersion: '0',
        expressionType: 'TAG',
      },
    });
  await call('pull-found', pull({}));
  await call('pull-tag', pull({ sub: 'TagB' }));
  await call('pull-notfound', pull({ off: 8 }));
  await call('pull-moved', pull({ off: 100 }));
  await call('pull-commit', pull({ sys: 5, commit: 3 }));
  await call('pull-nosub', pull({ sys: 0 }));
  await call('pull-lite', createRequest(RC.LITE_PULL_MESSAGE, { extFields: pull({}).extFields }));
  await call('pull-unknown', createRequest(RC.PULL_MESSAGE, { extFields: { ...pull({}).extFields, topic: 'Nope' } }));
  await call(
    'query-offset',
    createRequest(RC.QUERY_CONSUMER_OFFSET, { extFields: { consumerGroup: 'cg', topic: 'G', queueId: '0' } }),
  );
  await call(
    'query-offset-none',
    createRequest(RC.QUERY_CONSUMER_OFFSET, { extFields: { consumerGroup: 'cg', topic: 'G', queueId: '3' } }),
  );
  await call(
    'update-offset',
    createRequest(RC.UPDATE_CONSUMER_OFFSET, {
      extFields: { consumerGroup: 'cg', topic: 'G', queueId: '0', commitOffset: '2' },
    }),
  );
  await call('max', createRequest(RC.GET_MAX_OFFSET, { extFields: { topic: 'G', queueId: '0' } }));
  await call('min', createRequest(RC.GET_MIN_OFFSET, { extFields: { topic: 'G', queueId: '0' } }));
  await call(
    'search',
    createRequest(RC.SEARCH_OFFSET_BY_TIMESTAMP, {
      extFields: { topic: 'G', queueId: '0', timestamp: '1700000000000' },
    }),
  );
  await call('earliest', createRequest(RC.GET_EARLIEST_MSG_STORETIME, { extFields: { topic: 'G', queueId: '0' } }));
  const hb = {
    clientID: '10.0.0.1@1',
    consumerDataSet: [
      {
        consumeFromWhere: 'CONSUME_FROM_LAST_OFFSET',
        consumeType: 'CONSUME_PASSIVELY',
        groupName: 'cg',
        messageModel: 'CLUSTERING',
        subscriptionDataSet: [
          {
            classFilterMode: false,
            codeSet: [],
            expressionType: 'TAG',
            subString: '*',
            subVersion: 1,
            tagsSet: [],
            topic: 'G',
          },
        ],
        unitMode: false,
      },
    ],
    producerDataSet: [{ groupName: 'pg' }],
  };
  await call('heartbeat', createRequest(RC.HEART_BEAT, { body: Buffer.from(JSON.stringify(hb)) }));
  await call('consumer-list', createRequest(RC.GET_CONSUMER_LIST_BY_GROUP, { extFields: { consumerGroup: 'cg' } }));
  await call(
    'consumer-list-none',
    createRequest(RC.GET_CONSUMER_LIST_BY_GROUP, { extFields: { consumerGroup: 'zz' } }),
  );
  const mqs = [0, 1].map((q) => ({ brokerName: 'broker-a', queueId: q, topic: 'G' }));
  await call(
    'lock',
    createRequest(RC.LOCK_BATCH_MQ, {
      body: Buffer.from(JSON.stringify({ clientId: 'c1', consumerGroup: 'cg', mqSet: mqs })),
    }),
  );
  await call(
    'lock-other',
    createRequest(RC.LOCK_BATCH_MQ, {
      body: Buffer.from(JSON.stringify({ clientId: 'c2', consumerGroup: 'cg', mqSet: mqs })),
    }),
  );
  await call(
    'unlock',
    createRequest(RC.UNLOCK_BATCH_MQ, {
      body: Buffer.from(JSON.stringify({ clientId: 'c1', consumerGroup: 'cg', mqSet: mqs })),
    }),
  );
  await call(
    'check-config',
    createRequest(RC.CHECK_CLIENT_CONFIG, {
      body: Buffer.from(
        JSON.stringify({
          clientId: 'c1',
          group: 'cg',
          subscriptionData: { ...hb.consumerDataSet[0]!.subscriptionDataSet[0]! },
        }),
      ),
    }),
  );
  await call(
    'check-config-sql',
    createRequest(RC.CHECK_CLIENT_CONFIG, {
      body: Buffer.from(
        JSON.stringify({
          clientId: 'c1',
          group: 'cg',
          subscriptionData: { ...hb.consumerDataSet[0]!.subscriptionDataSet[0]!, expressionType: 'SQL92' },
        }),
      ),
    }),
  );
  await call('topic-config', createRequest(RC.GET_TOPIC_CONFIG, { extFields: { topic: 'G' } }));
  await call('topic-config-none', createRequest(RC.GET_TOPIC_CONFIG, { extFields: { topic: 'Nope' } }));
  await call('consume-stats', createRequest(RC.GET_CONSUME_STATS, { extFields: { consumerGroup: 'cg' } }));
  await call(
    'create-topic',
    createRequest(RC.UPDATE_AND_CREATE_TOPIC, {
      extFields: {
        topic: 'Made',
        defaultTopic: 'TBW102',
        readQueueNums: '2',
        writeQueueNums: '2',
        perm: '6',
        topicFilterType: 'SINGLE_TAG',
        topicSysFlag: '0',
        order: 'false',
      },
    }),
  );
  const found = await c.invoke(b.broker, pull({}));
  const first = decodeMessages(found.body!)[0]!;
  await call('view', createRequest(RC.VIEW_MESSAGE_BY_ID, { extFields: { offset: String(first.commitLogOffset) } }));
  await call(
    'send-back',
    createRequest(RC.CONSUMER_SEND_MSG_BACK, {
      extFields: {
        offset: String(first.commitLogOffset),
        group: 'cg',
        delayLevel: '0',
        originMsgId: 'x',
        originTopic: 'G',
        unitMode: 'false',
        maxReconsumeTimes: '16',
      },
    }),
  );
  await call(
    'send-back-dlq',
    createRequest(RC.CONSUMER_SEND_MSG_BACK, {
      extFields: { offset: String(first.commitLogOffset), group: 'cg', delayLevel: '-1', unitMode: 'false' },
    }),
  );
  await call(
    'unregister',
    createRequest(RC.UNREGISTER_CLIENT, {
      extFields: { clientID: '10.0.0.1@1', producerGroup: 'pg', consumerGroup: 'cg' },
    }),
  );
  await c.close();
  await b.close();
  t.same(out, EXPECTED);
});
