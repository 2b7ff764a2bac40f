// The codecs the operation table gained so that no request or answer is built by hand: the
// heartbeat answer's header, CHECK_TRANSACTION_STATE's bname, GetConsumerStatusBody, the
// namespaceV2 and send-trace fields; and protocol/operation-codec.ts, which turns a row into
// frames. No Java capture of these exists in test/interop/vectors: the expected bytes are the ones
// rocketwire wrote by hand before these codecs (field names as in apache/rocketmq: MixAll,
// RpcRequestHeader, GetConsumerStatusBody).
import t from 'tap';
import {
  CheckTransactionStateRequestHeader,
  createResponse,
  decodeGetConsumerStatusBody,
  decodeOperationRequest,
  encodeGetConsumerStatusBody,
  encodeOperationRequest,
  encodeOperationResponse,
  GetConsumerStatusBody,
  HeartbeatResponseHeader,
  NamespaceV2Fields,
  Operations,
  ProtocolError,
  ResponseCode,
  SendResponseTraceFields,
  toJavaJson,
  messageQueueToJson,
} from '../../protocol/internal.js';

t.test('HeartbeatResponseHeader: the two MixAll keys a 5.x broker adds, in its order', async (t) => {
  const ext = HeartbeatResponseHeader.encode({ isSupportHeartBeatV2: true, isSubChange: true });
  t.same(Object.entries(ext), [
    ['IS_SUPPORT_HEART_BEAT_V2', 'true'],
    ['IS_SUB_CHANGE', 'true'],
  ]);
  t.same(HeartbeatResponseHeader.decode(ext), { isSupportHeartBeatV2: true, isSubChange: true });
  t.same(HeartbeatResponseHeader.decode(null), {}, 'a 4.9 broker answers with no fields');
  t.equal(Operations.HEART_BEAT.response, HeartbeatResponseHeader);
});

t.test('CHECK_TRANSACTION_STATE carries bname after its own fields', async (t) => {
  const header = {
    topic: 'RMQ_SYS_TRANS_HALF_TOPIC',
    commitLogOffset: 1234,
    offsetMsgId: 'AC11000100002A9F00000000000004D2',
    tranStateTableOffset: 7,
    msgId: 'U1',
    transactionId: 'U1',
    bname: 'broker-a',
  };
  const ext = CheckTransactionStateRequestHeader.encode(header);
  t.same(Object.keys(ext), [
    'tranStateTableOffset',
    'commitLogOffset',
    'msgId',
    'transactionId',
    'offsetMsgId',
    'topic',
    'bname',
  ]);
  t.same(CheckTransactionStateRequestHeader.decode(ext), header);
  const { bname: _, ...without } = header;
  t.notOk('bname' in CheckTransactionStateRequestHeader.encode(without), 'optional, as RpcRequestHeader.bname');
});

t.test('GetConsumerStatusBody: as the Java client writes it, and back', async (t) => {
  const mq = { topic: 'T', brokerName: 'broker-a', queueId: 1 };
  const table: Array<[typeof mq, number]> = [
    [mq, 42],
    [{ ...mq, queueId: 0 }, 7],
  ];
  const bytes = encodeGetConsumerStatusBody({ messageQueueTable: table });
  const handWritten = Buffer.from(
    toJavaJson(
      { consumerTable: {}, messageQueueTable: new Map(table.map(([q, o]) => [messageQueueToJson(q), o])) },
      { nonStandard: true },
    ),
    'utf8',
  );
  t.same(bytes, handWritten, 'the bytes the client answered before the codec');
  const byQueue = (a: [typeof mq, number], b: [typeof mq, number]) => a[0].queueId - b[0].queueId;
  t.same(decodeGetConsumerStatusBody(bytes).messageQueueTable.sort(byQueue), [...table].sort(byQueue));
  t.equal(GetConsumerStatusBody.encode, encodeGetConsumerStatusBody);
  t.equal(Operations.GET_CONSUMER_STATUS_FROM_CLIENT.responseBody, GetConsumerStatusBody);
  t.same(decodeGetConsumerStatusBody(Buffer.from('{}')).messageQueueTable, []);
  t.throws(
    () =>
      decodeGetConsumerStatusBody(
        Buffer.from('{"messageQueueTable":{{"brokerName":"b","queueId":0,"topic":"T"}:"x"}}'),
      ),
    ProtocolError,
  );
});

t.test('namespaceV2 and send-trace fields', async (t) => {
  t.same(Object.entries(NamespaceV2Fields.encode({ nsd: true, ns: 'NS1' })), [
    ['nsd', 'true'],
    ['ns', 'NS1'],
  ]);
  t.same(Object.entries(SendResponseTraceFields.encode({ MSG_REGION: 'DefaultRegion', TRACE_ON: 'true' })), [
    ['MSG_REGION', 'DefaultRegion'],
    ['TRACE_ON', 'true'],
  ]);
});

t.test('operation-codec: a row turned into frames and back', async (t) => {
  const op = Operations.QUERY_CONSUMER_OFFSET;
  const req = encodeOperationRequest(op, { consumerGroup: 'g', topic: 'T', queueId: 3 }, null, {
    version: 433,
    oneway: false,
    stampExtFields: (ext) => Object.assign(ext, NamespaceV2Fields.encode({ nsd: true, ns: 'N' })),
  });
  t.equal(req.code, op.code);
  t.same(req.extFields, { consumerGroup: 'g', topic: 'T', queueId: '3', nsd: 'true', ns: 'N' });
  t.same(decodeOperationRequest(op, req).header, { consumerGroup: 'g', topic: 'T', queueId: 3 });
  t.equal(encodeOperationRequest(Operations.HEART_BEAT, {}, null).extFields, null, 'no fields: no extFields');

  const answer = encodeOperationResponse(op, req, { header: { offset: 9 } });
  t.same(answer, createResponse(req, ResponseCode.SUCCESS, { extFields: { offset: '9' } }));
  const failed = encodeOperationResponse(op, req, { code: ResponseCode.QUERY_NOT_FOUND, remark: 'none' });
  t.same(failed, createResponse(req, ResponseCode.QUERY_NOT_FOUND, { remark: 'none' }), 'no header: no extFields');
  const raw = encodeOperationResponse(Operations.PULL_MESSAGE, req, { body: Buffer.from('x') });
  t.same(raw.body, Buffer.from('x'));
  const encoded = encodeOperationResponse(Operations.GET_CONSUMER_RUNNING_INFO, req, { bodyBytes: Buffer.from('{}') });
  t.same(encoded.body, Buffer.from('{}'), 'a body encoded once is passed through');
});
