import t from 'tap';
import {
  assignReceiptHandles,
  decodeReceiptHandle,
  encodeMsgOffsetInfo,
  encodeOrderCountInfo,
  encodeReceiptHandle,
  encodeStartOffsetInfo,
  orderCountOffsetKey,
  parseMsgOffsetInfo,
  parseOrderCountInfo,
  parseStartOffsetInfo,
  popRealTopic,
  popRetryMarkOf,
  type PoppedMessageView,
} from '../../protocol/pop-extra-info.js';
import { BatchAckMessageRequestBody, bitSetFromBytes, bitSetToBytes } from '../../protocol/body/pop-bodies.js';
import { Operations } from '../../protocol/operations.js';
import { RequestCode } from '../../protocol/index.js';

// Golden strings printed by Apache RocketMQ 5.3.3's own classes (ExtraInfoUtil.buildExtraInfo,
// buildStartOffsetInfo, buildMsgOffsetInfo, buildQueueOffsetOrderCountInfo,
// buildQueueIdOrderCountInfo, getRealTopic, BatchAckMessageRequestBody.encode), run with the
// arguments written beside each one.

t.test('receipt handles as ExtraInfoUtil.buildExtraInfo writes them', async (t) => {
  // buildExtraInfo(100, 1700000000000, 60000, 3, "TopicA", "broker-a", 2, 103)
  const a = '100 1700000000000 60000 3 0 broker-a 2 103';
  t.equal(
    encodeReceiptHandle({
      ckQueueOffset: 100,
      popTime: 1700000000000,
      invisibleTime: 60000,
      reviveQid: 3,
      retry: popRetryMarkOf('TopicA'),
      brokerName: 'broker-a',
      queueId: 2,
      queueOffset: 103,
    }),
    a,
  );
  t.same(decodeReceiptHandle(a), {
    ckQueueOffset: 100,
    popTime: 1700000000000,
    invisibleTime: 60000,
    reviveQid: 3,
    retry: '0',
    brokerName: 'broker-a',
    queueId: 2,
    queueOffset: 103,
  });
  // buildExtraInfo(7, 1700000000001, 5000, 1, "%RETRY%gid_TopicA", "broker-b", 0, 9)
  t.equal(
    encodeReceiptHandle({
      ckQueueOffset: 7,
      popTime: 1700000000001,
      invisibleTime: 5000,
      reviveQid: 1,
      retry: popRetryMarkOf('%RETRY%gid_TopicA'),
      brokerName: 'broker-b',
      queueId: 0,
      queueOffset: 9,
    }),
    '7 1700000000001 5000 1 1 broker-b 0 9',
  );
  // buildExtraInfo(7, 1700000000001, 5000, 999, "%RETRY%gid+TopicA", "broker-b", 0, 9)
  t.equal(
    encodeReceiptHandle({
      ckQueueOffset: 7,
      popTime: 1700000000001,
      invisibleTime: 5000,
      reviveQid: 999,
      retry: popRetryMarkOf('%RETRY%gid+TopicA'),
      brokerName: 'broker-b',
      queueId: 0,
      queueOffset: 9,
    }),
    '7 1700000000001 5000 999 2 broker-b 0 9',
  );
  // getRealTopic(split("7 1 5000 1 1 broker-b 0 9"), "TopicA", "gid") and with r = 2
  t.equal(popRealTopic('TopicA', 'gid', '1'), '%RETRY%gid_TopicA');
  t.equal(popRealTopic('TopicA', 'gid', '2'), '%RETRY%gid+TopicA');
  t.equal(popRealTopic('TopicA', 'gid', '0'), 'TopicA');
  // a receipt handle the 5.3.3 broker handed out in real-broker-pop.test.ts
  t.equal(decodeReceiptHandle('0 1796142912110 4000 0 0 broker-a 2 0').queueId, 2);
});

t.test('a bad receipt handle is a HeaderFieldError naming extraInfo', async (t) => {
  t.throws(() => decodeReceiptHandle('1 2 3'), { name: 'HeaderFieldError', field: 'extraInfo' });
  t.throws(() => decodeReceiptHandle('x 2 3 4 0 b 0 1'), {
    name: 'HeaderFieldError',
    field: 'extraInfo',
    message: /ckQueueOffset/,
  });
  t.throws(() => decodeReceiptHandle('1 2 3 4 7 b 0 1'), {
    name: 'HeaderFieldError',
    field: 'extraInfo',
    message: /retry/,
  });
});

t.test('offset info strings as buildStartOffsetInfo / buildMsgOffsetInfo / order count write them', async (t) => {
  // buildStartOffsetInfo(sb, "TopicA", 0, 10); buildStartOffsetInfo(sb, "%RETRY%gid_TopicA", 0, 3)
  t.equal(
    encodeStartOffsetInfo([
      { retry: '0', queueId: 0, startOffset: 10 },
      { retry: '1', queueId: 0, startOffset: 3 },
    ]),
    '0 0 10;1 0 3',
  );
  // buildMsgOffsetInfo(sb, "TopicA", 0, [10, 11, 13]); buildMsgOffsetInfo(sb, "%RETRY%gid_TopicA", 0, [3])
  t.equal(
    encodeMsgOffsetInfo([
      { retry: '0', queueId: 0, offsets: [10, 11, 13] },
      { retry: '1', queueId: 0, offsets: [3] },
    ]),
    '0 0 10,11,13;1 0 3',
  );
  // buildQueueOffsetOrderCountInfo(sb, "TopicA", 1, 20, 2); buildQueueIdOrderCountInfo(sb, "TopicA", 1, 1)
  t.equal(
    encodeOrderCountInfo([
      { retry: '0', key: orderCountOffsetKey(1, 20), count: 2 },
      { retry: '0', key: '1', count: 1 },
    ]),
    '0 qo1%20 2;0 1 1',
  );
  t.same(
    [...parseStartOffsetInfo('0 0 10;1 0 3')],
    [
      ['0@0', 10],
      ['1@0', 3],
    ],
  );
  t.same(
    [...parseMsgOffsetInfo('0 0 10,11,13;1 0 3')],
    [
      ['0@0', [10, 11, 13]],
      ['1@0', [3]],
    ],
  );
  t.same(
    [...parseOrderCountInfo('0 qo1%20 2;0 1 1')],
    [
      ['0@qo1%20', 2],
      ['0@1', 1],
    ],
  );
  t.throws(() => parseStartOffsetInfo('0 0 1;0 0 2'), {
    name: 'HeaderFieldError',
    field: 'startOffsetInfo',
    message: /duplicate/,
  });
  t.throws(() => parseMsgOffsetInfo('0 0'), { name: 'HeaderFieldError', field: 'msgOffsetInfo' });
});

function msg(
  topic: string,
  queueId: number,
  queueOffset: number,
  properties: Record<string, string> = {},
): PoppedMessageView {
  return { topic, queueId, queueOffset, reconsumeTimes: 0, properties };
}

t.test('assignReceiptHandles builds POP_CK as processPopResponse does', async (t) => {
  const ms = [
    msg('T', 0, 10),
    msg('T', 0, 11),
    msg('T', 1, 5),
    msg('T', 0, 3, { POP_CK: '1 1700 5000 2 1 broker-a 0 3' }),
  ];
  assignReceiptHandles(
    ms,
    {
      popTime: 1700,
      invisibleTime: 5000,
      reviveQid: 2,
      startOffsetInfo: '0 0 10;0 1 5;1 0 1',
      msgOffsetInfo: '0 0 10,11;0 1 5;1 0 3',
    },
    'broker-a',
    false,
  );
  t.same(
    ms.map((m) => m.properties.POP_CK),
    [
      '10 1700 5000 2 0 broker-a 0 10',
      '10 1700 5000 2 0 broker-a 0 11',
      '5 1700 5000 2 0 broker-a 1 5',
      '1 1700 5000 2 1 broker-a 0 3',
    ],
    'a retry message keeps the broker-set POP_CK',
  );
  t.ok(ms.every((m) => m.properties['1ST_POP_TIME'] === '1700'));
  // an old broker without startOffsetInfo: the checkpoint starts at the queue's first message here
  const old = [msg('T', 0, 4), msg('T', 0, 6)];
  assignReceiptHandles(old, { popTime: 9, invisibleTime: 1000, reviveQid: 0 }, 'b', false);
  t.same(
    old.map((m) => m.properties.POP_CK),
    ['4 9 1000 0 0 b 0 4', '4 9 1000 0 0 b 0 6'],
  );
  // order pop: reconsumeTimes from orderCountInfo, per offset first, then per queue
  const ord = [msg('T', 1, 20), msg('T', 1, 21)];
  assignReceiptHandles(
    ord,
    {
      popTime: 9,
      invisibleTime: 1000,
      reviveQid: 999,
      startOffsetInfo: '0 1 20',
      msgOffsetInfo: '0 1 20,21',
      orderCountInfo: '0 qo1%20 2;0 1 1',
    },
    'b',
    true,
  );
  t.same(
    ord.map((m) => m.reconsumeTimes),
    [2, 1],
  );
  t.throws(
    () =>
      assignReceiptHandles(
        [msg('T', 3, 1)],
        { popTime: 1, invisibleTime: 1, reviveQid: 0, startOffsetInfo: '0 0 1', msgOffsetInfo: '0 0 1' },
        'b',
        false,
      ),
    { name: 'HeaderFieldError', field: 'startOffsetInfo' },
  );
});

t.test('BATCH_ACK body byte for byte as BatchAckMessageRequestBody.encode (fastjson, BitSet as base64)', async (t) => {
  // BatchAck{c gid, t TopicA, r 0, so 10, q 2, rq 3, pt 1700000000000, it 60000, b {0,3,9}}, brokerName broker-a
  const java =
    '{"acks":[{"b":"CQI=","c":"gid","it":60000,"pt":1700000000000,"q":2,"r":"0","rq":3,"so":10,"t":"TopicA"}],"brokerName":"broker-a"}';
  const value = {
    brokerName: 'broker-a',
    acks: [
      {
        consumerGroup: 'gid',
        topic: 'TopicA',
        retry: '0' as const,
        startOffset: 10,
        queueId: 2,
        reviveQueueId: 3,
        popTime: 1700000000000,
        invisibleTime: 60000,
        bits: [0, 3, 9],
      },
    ],
  };
  t.equal(BatchAckMessageRequestBody.encode(value).toString(), java);
  t.same(BatchAckMessageRequestBody.decode(Buffer.from(java)), value);
  t.same(bitSetFromBytes(bitSetToBytes([])), []);
  t.same([...bitSetToBytes([0, 3, 9])], [0x09, 0x02], 'BitSet.toByteArray layout');
  t.same(
    BatchAckMessageRequestBody.decode(
      Buffer.from(
        '{"brokerName":"b","acks":[{"consumerGroup":"g","topic":"T","retry":"1","startOffset":1,"queueId":0,"reviveQueueId":0,"popTime":1,"invisibleTime":1,"bitSet":"AQ=="}]}',
      ),
    ).acks[0]!.bits,
    [0],
    "fastjson's alternate names",
  );
  t.throws(() => BatchAckMessageRequestBody.decode(Buffer.from('{"acks":[{"c":"g","t":"T","r":"9"}]}')), {
    name: 'ProtocolError',
  });
});

t.test('the POP rows of the operation table', async (t) => {
  t.equal(Operations.POP_MESSAGE.code, RequestCode.POP_MESSAGE);
  t.equal(Operations.POP_MESSAGE.code, 200050);
  const h = Operations.POP_MESSAGE.request.encode({
    consumerGroup: 'g',
    topic: 'T',
    queueId: -1,
    maxMsgNums: 32,
    invisibleTime: 60000,
    pollTime: 15000,
    bornTime: 1,
    initMode: 1,
    expType: 'TAG',
    exp: '*',
    order: false,
  });
  t.same(h, {
    consumerGroup: 'g',
    topic: 'T',
    queueId: '-1',
    maxMsgNums: '32',
    invisibleTime: '60000',
    pollTime: '15000',
    bornTime: '1',
    initMode: '1',
    expType: 'TAG',
    exp: '*',
    order: 'false',
  });
  t.throws(() => Operations.POP_MESSAGE.response.decode({ popTime: '1', invisibleTime: '1', reviveQid: '1' }), {
    name: 'HeaderFieldError',
    field: 'restNum',
  });
  t.same(
    Operations.CHANGE_MESSAGE_INVISIBLETIME.response.decode({ popTime: '5', invisibleTime: '6', reviveQid: '7' }),
    { popTime: 5, invisibleTime: 6, reviveQid: 7 },
  );
  t.equal(Operations.BATCH_ACK_MESSAGE.code, 200151);
});
