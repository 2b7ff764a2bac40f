import t from 'tap';
import {
  ConsumerSendMsgBackRequestHeader,
  decodeSendMessageRequestHeader,
  GetMaxOffsetResponseHeader,
  HeaderFieldError,
  PullMessageRequestHeader,
  PullMessageResponseHeader,
  QueryConsumerOffsetRequestHeader,
  ResetOffsetRequestHeader,
  SendMessageRequestHeader,
  SendMessageRequestHeaderV2,
  SendMessageResponseHeader,
  sendHeaderV1ToV2,
  sendHeaderV2ToV1,
  UnregisterClientRequestHeader,
  UpdateConsumerOffsetRequestHeader,
} from '../../protocol/index.js';
import { parseBoundaryType } from '../../protocol/custom-header/queue-offset.js';

// The 4.9 JSON example of docs/protocol-facts.md#pull.
const pullExt = {
  queueId: '0',
  maxMsgNums: '32',
  sysFlag: '3',
  suspendTimeoutMillis: '15000',
  commitOffset: '120',
  topic: 'TopicTest',
  queueOffset: '128',
  expressionType: 'TAG',
  subVersion: '1712345678000',
  consumerGroup: 'cg1',
  bname: 'broker-a',
};

t.test('PULL_MESSAGE request header of the fact sheet', async (t) => {
  const h = PullMessageRequestHeader.decode(pullExt);
  t.same(h, {
    consumerGroup: 'cg1',
    topic: 'TopicTest',
    queueId: 0,
    queueOffset: 128,
    maxMsgNums: 32,
    sysFlag: 3,
    commitOffset: 120,
    suspendTimeoutMillis: 15000,
    subVersion: 1712345678000,
    expressionType: 'TAG',
    bname: 'broker-a',
  });
  t.same(PullMessageRequestHeader.encode(h), pullExt, 'encode gives the same strings back');
  t.same(PullMessageRequestHeader.decode({ ...pullExt, commitOffset: '-1' }).commitOffset, -1);
});

t.test('missing or malformed fields name the key', async (t) => {
  const { queueOffset: _drop, ...missing } = pullExt;
  void _drop;
  const e = t.throws(() => PullMessageRequestHeader.decode(missing)) as HeaderFieldError;
  t.type(e, HeaderFieldError);
  t.equal(e.field, 'queueOffset');
  for (const bad of [' 1', '1 ', '1.0', '0x10', '', '1e3', 'abc', '2147483648']) {
    const err = t.throws(() => PullMessageRequestHeader.decode({ ...pullExt, queueId: bad })) as HeaderFieldError;
    t.equal(err?.field, 'queueId', `queueId ${JSON.stringify(bad)}`);
  }
  t.equal(
    PullMessageRequestHeader.decode({ ...pullExt, queueId: '+5' }).queueId,
    5,
    'Java parseInt accepts a plus sign',
  );
  t.equal(PullMessageRequestHeader.decode({ ...pullExt, queueId: '-2147483648' }).queueId, -2147483648);
  const big = t.throws(() =>
    PullMessageRequestHeader.decode({ ...pullExt, queueOffset: '9007199254740993' }),
  ) as HeaderFieldError;
  t.equal(big.field, 'queueOffset', 'longs beyond 2^53 are refused, not rounded');
  t.throws(() => PullMessageRequestHeader.decode(null), HeaderFieldError);
  t.throws(
    () => PullMessageRequestHeader.encode({ ...PullMessageRequestHeader.decode(pullExt), queueId: 1.5 }),
    HeaderFieldError,
  );
});

t.test('pull response header', async (t) => {
  const ext = {
    suggestWhichBrokerId: '0',
    nextBeginOffset: '160',
    minOffset: '0',
    maxOffset: '1000',
    topicSysFlag: '0',
    groupSysFlag: '0',
  };
  const h = PullMessageResponseHeader.decode(ext);
  t.same(h, {
    suggestWhichBrokerId: 0,
    nextBeginOffset: 160,
    minOffset: 0,
    maxOffset: 1000,
    topicSysFlag: 0,
    groupSysFlag: 0,
  });
  t.same(PullMessageResponseHeader.encode(h), ext);
});

t.test('booleans parse like Boolean.parseBoolean', async (t) => {
  const base = { topic: 'T', group: 'g', timestamp: '1' };
  t.equal(ResetOffsetRequestHeader.decode({ ...base, isForce: 'TRUE' }).isForce, true);
  t.equal(ResetOffsetRequestHeader.decode({ ...base, isForce: 'yes' }).isForce, false);
  t.equal(ResetOffsetRequestHeader.encode({ topic: 'T', group: 'g', timestamp: 5, isForce: false }).isForce, 'false');
  t.equal(
    QueryConsumerOffsetRequestHeader.decode({
      consumerGroup: 'g',
      topic: 'T',
      queueId: '1',
      setZeroIfNotFound: 'false',
    }).setZeroIfNotFound,
    false,
  );
  t.equal(parseBoundaryType('Upper'), 'UPPER');
  t.equal(parseBoundaryType(undefined), 'LOWER');
});

t.test('SEND_MESSAGE_V2 example of §5.4 and the V1 <-> V2 key mapping', async (t) => {
  const ext = {
    a: 'pg1',
    b: 'TopicTest',
    c: 'TBW102',
    d: '4',
    e: '2',
    f: '0',
    g: '1712345678901',
    h: '0',
    i: 'TAGS\u0001TagA\u0002KEYS\u0001order-1\u0002UNIQ_KEY\u0001C0A8010A303918B4AAC27C5A1B2C0000\u0002WAIT\u0001true',
    j: '0',
    k: 'false',
    m: 'false',
    n: 'broker-a',
  };
  const h = SendMessageRequestHeaderV2.decode(ext);
  t.match(h, {
    producerGroup: 'pg1',
    topic: 'TopicTest',
    defaultTopic: 'TBW102',
    defaultTopicQueueNums: 4,
    queueId: 2,
    sysFlag: 0,
    bornTimestamp: 1712345678901,
    flag: 0,
    reconsumeTimes: 0,
    unitMode: false,
    batch: false,
    bname: 'broker-a',
  });
  t.same(SendMessageRequestHeaderV2.encode(h), ext);
  const v1 = SendMessageRequestHeader.encode(h);
  t.equal(v1.producerGroup, 'pg1');
  t.same(sendHeaderV1ToV2(v1), ext);
  t.same(sendHeaderV2ToV1(ext), v1);
  t.same(decodeSendMessageRequestHeader(310, ext), h);
  t.same(decodeSendMessageRequestHeader(10, v1), h);
  t.same(decodeSendMessageRequestHeader(320, ext), h);
  const e = t.throws(() => SendMessageRequestHeaderV2.decode({ ...ext, g: 'now' })) as HeaderFieldError;
  t.equal(e.field, 'g');
});

t.test('send response header keeps MSG_REGION and TRACE_ON', async (t) => {
  const ext = {
    msgId: 'C0A8011400002A9F0000000000001234',
    queueId: '1',
    queueOffset: '42',
    MSG_REGION: 'DefaultRegion',
    TRACE_ON: 'true',
  };
  const h = SendMessageResponseHeader.decode(ext);
  t.equal(h.queueOffset, 42);
  t.equal(h.MSG_REGION, 'DefaultRegion');
  t.same(SendMessageResponseHeader.encode(h), ext);
});

t.test('other headers encode and decode', async (t) => {
  const sb = {
    offset: 4660,
    group: 'cg1',
    delayLevel: 0,
    originMsgId: 'X',
    originTopic: 'T',
    unitMode: false,
    maxReconsumeTimes: 16,
    bname: 'b',
  };
  t.same(ConsumerSendMsgBackRequestHeader.decode(ConsumerSendMsgBackRequestHeader.encode(sb)), sb);
  t.same(ConsumerSendMsgBackRequestHeader.encode(sb).unitMode, 'false');
  const up = { consumerGroup: 'g', topic: 'T', queueId: 3, commitOffset: 99 };
  t.same(UpdateConsumerOffsetRequestHeader.encode(up), {
    consumerGroup: 'g',
    topic: 'T',
    queueId: '3',
    commitOffset: '99',
  });
  t.same(GetMaxOffsetResponseHeader.decode({ offset: '0' }), { offset: 0 });
  t.same(UnregisterClientRequestHeader.encode({ clientID: 'c', consumerGroup: 'g' }), {
    clientID: 'c',
    consumerGroup: 'g',
  });
  t.same(UnregisterClientRequestHeader.keys, {
    clientID: 'clientID',
    producerGroup: 'producerGroup',
    consumerGroup: 'consumerGroup',
  });
});
