import t from 'tap';
import { createRequest, decodeCommand, encodeCommand, FrameDecoder } from '../../protocol/index.js';

// The worked examples of docs/protocol-facts.md#frames: GET_ROUTEINFO_BY_TOPIC in both serialize types.
t.test('GET_ROUTEINFO_BY_TOPIC encodes as the fact sheet shows', async (t) => {
  const req = createRequest(105, { opaque: 1, version: 409, extFields: { topic: 'TopicTest' } });
  const json = encodeCommand(req);
  t.equal(json.length, 139);
  t.equal(json.subarray(0, 8).toString('hex'), '0000008700000083');
  t.equal(
    json.subarray(8).toString(),
    '{"code":105,"extFields":{"topic":"TopicTest"},"flag":0,"language":"JAVA","opaque":1,"serializeTypeCurrentRPC":"JSON","version":409}',
  );
  const bin = encodeCommand({ ...req, serializeType: 'ROCKETMQ' });
  t.equal(
    bin.toString('hex'),
    '0000002d01000029' +
      '0069' +
      '00' +
      '0199' +
      '00000001' +
      '00000000' +
      '00000000' +
      '00000014' +
      '0005' +
      Buffer.from('topic').toString('hex') +
      '00000009' +
      Buffer.from('TopicTest').toString('hex'),
  );
  for (const frame of [json, bin]) {
    const d = decodeCommand(frame);
    t.equal(d.code, 105);
    t.equal(d.opaque, 1);
    t.same(d.extFields, { topic: 'TopicTest' });
  }
});

t.test('decoder splits two frames fed one byte at a time', async (t) => {
  const a = encodeCommand(createRequest(34, { opaque: 7, body: Buffer.from('hello') }));
  const b = encodeCommand(createRequest(11, { opaque: 8, serializeType: 'ROCKETMQ', extFields: { k: 'v' } }));
  const all = Buffer.concat([a, b]);
  const dec = new FrameDecoder();
  const got: number[] = [];
  for (let i = 0; i < all.length; i++) dec.push(all.subarray(i, i + 1), (f) => got.push(decodeCommand(f).opaque));
  t.same(got, [7, 8]);
});
