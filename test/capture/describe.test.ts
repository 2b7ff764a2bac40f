import { deflateSync } from 'node:zlib';
import t from 'tap';
import { describeCommand, frameJson } from '../../lib/capture/index.js';
import { createRequest, createResponse, encodeStoredMessage, RequestCode, ResponseCode } from '../../protocol/index.js';
import { storedMessages } from './build-pcap.js';

const req = { opaque: 1, serializeType: 'JSON' as const };

t.test('JSON bodies are parsed with the fastjson reader (numeric and object keys)', async (t) => {
  const body = Buffer.from('{"offsetTable":{{"brokerName":"b","queueId":0,"topic":"T"}:100},"table":{0:"a"}}');
  const d = describeCommand(createResponse(req, 0, { body }), { requestCode: RequestCode.GET_ALL_CONSUMER_OFFSET });
  t.same(d.json, { offsetTable: { '{"brokerName":"b","queueId":0,"topic":"T"}': 100 }, table: { 0: 'a' } });
  t.equal(d.bodyBase64, undefined);
  t.equal(d.requestCode, RequestCode.GET_ALL_CONSUMER_OFFSET);
});

t.test('other bodies are base64; a body that only looks like JSON too', async (t) => {
  const bin = Buffer.from([1, 2, 3, 250]);
  t.equal(describeCommand(createRequest(999, { body: bin })).bodyBase64, bin.toString('base64'));
  const notJson = Buffer.from('{not json at all');
  const d = describeCommand(createRequest(RequestCode.HEART_BEAT, { body: notJson }));
  t.equal(d.json, undefined);
  t.equal(d.bodyBase64, notJson.toString('base64'));
  t.equal(d.bodyLength, notJson.length);
  const empty = describeCommand(createRequest(RequestCode.HEART_BEAT));
  t.equal(empty.bodyLength, 0);
  t.equal(empty.bodyBase64, undefined);
  t.same(empty.extFields, {});
  t.equal(empty.remark, null);
});

t.test('stored messages: CONSUME_MESSAGE_DIRECTLY request, IPv6 hosts, compressed bodies', async (t) => {
  const body = Buffer.from('compressed body '.repeat(100));
  const rec = encodeStoredMessage({
    topic: 'T6',
    queueId: 3,
    queueOffset: 77,
    commitLogOffset: 123456,
    sysFlag: 0x1 | 0x300,
    bornTimestamp: 1700000000000,
    bornHost: '[fd00::5]:50000',
    storeTimestamp: 1700000000001,
    storeHost: '[fd00::1]:10911',
    body: deflateSync(body),
    properties: { KEYS: 'k1 k2' },
  });
  const d = describeCommand(
    createRequest(RequestCode.CONSUME_MESSAGE_DIRECTLY, { body: rec, extFields: { consumerGroup: 'g' } }),
  );
  t.equal(d.messages!.length, 1);
  const m = d.messages![0]!;
  t.equal(m.bornHost, '[fd00::5]:50000');
  t.equal(m.storeHost, '[fd00::1]:10911');
  t.equal(Buffer.from(m.bodyBase64!, 'base64').toString(), body.toString(), 'decompressed');
  t.equal(m.sysFlag & 1, 0, 'COMPRESSED cleared once decompressed');
  t.equal(m.msgId, m.offsetMsgId, 'no UNIQ_KEY: the offset id');
  t.equal(m.offsetMsgId.length, 56, 'IPv6 store host id');
  const noBodies = describeCommand(
    createRequest(RequestCode.CONSUME_MESSAGE_DIRECTLY, { body: rec }),
    {},
    { messageBodies: false },
  );
  t.equal(noBodies.messages![0]!.bodyBase64, undefined);
  t.equal(noBodies.messages![0]!.bodyLength, body.length);
});

t.test('a damaged pull body is given as base64 with the reason', async (t) => {
  const body = storedMessages(2).subarray(0, 150);
  const d = describeCommand(createResponse(req, ResponseCode.SUCCESS, { body }), {
    requestCode: RequestCode.PULL_MESSAGE,
  });
  t.equal(d.messages, undefined);
  t.match(d.bodyError, /stored message/);
  t.equal(d.bodyBase64, body.toString('base64'));
});

t.test('only successful message-carrying responses are read as messages', async (t) => {
  const body = storedMessages(1);
  t.ok(describeCommand(createResponse(req, 0, { body }), { requestCode: RequestCode.VIEW_MESSAGE_BY_ID }).messages);
  t.ok(describeCommand(createResponse(req, 0, { body }), { requestCode: RequestCode.QUERY_MESSAGE }).messages);
  t.notOk(
    describeCommand(createResponse(req, 0, { body }), { requestCode: RequestCode.GET_KV_CONFIG }).messages,
    'other request codes: not messages',
  );
  t.notOk(
    describeCommand(createResponse(req, ResponseCode.SYSTEM_ERROR, { body }), { requestCode: RequestCode.PULL_MESSAGE })
      .messages,
  );
});

t.test('frameJson writes exactly what JSON.stringify writes', async (t) => {
  const rec = encodeStoredMessage({
    topic: 'T "quoted" \\ \u0001',
    queueId: 1,
    queueOffset: 2,
    commitLogOffset: 3,
    bornTimestamp: 4,
    bornHost: '1.2.3.4:5',
    storeTimestamp: 6,
    storeHost: '[::1]:7',
    body: Buffer.from('x'),
    properties: { 'k"1': 'v\n1', UNIQ_KEY: 'U' },
  });
  const cases = [
    describeCommand(createResponse(req, 0, { body: Buffer.concat([rec, storedMessages(3)]), remark: 'FOUND\t"x"' }), {
      ts: 1.5,
      src: 'a',
      dst: 'b',
      requestCode: 11,
      latencyMs: 0.25,
    }),
    describeCommand(createRequest(RequestCode.CONSUME_MESSAGE_DIRECTLY, { body: rec }), {}, { messageBodies: false }),
    describeCommand(createRequest(RequestCode.HEART_BEAT, { body: Buffer.from('{"a":[1,2,{"b":null}]}') })),
    describeCommand(createRequest(999, { body: Buffer.from([0, 1, 2]), extFields: { '\u2028': '\ud800' } })),
  ];
  for (const d of cases) t.equal(frameJson(d), JSON.stringify(d));
});
