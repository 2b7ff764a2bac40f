// The V1 recall handle (RecallMessageHandle.HandleV1): base64url with padding of
// "v1 topic broker timestamp uniqKey"; decoded as Java's decodeHandle accepts it.
import t from 'tap';
import { decodeRecallHandle, encodeRecallHandle } from '../../protocol/index.js';

const fields = {
  topic: 'Orders',
  brokerName: 'broker-a',
  timestamp: '1733300000001',
  messageId: 'AC11000100002A9F0000000000000000',
};

t.test('what Java writes: URL alphabet, padded', async (t) => {
  const h = encodeRecallHandle(fields);
  // Base64.getUrlEncoder().encodeToString("v1 Orders broker-a 1733300000001 AC1100…".getBytes(UTF_8))
  t.equal(h, Buffer.from(`v1 Orders broker-a 1733300000001 ${fields.messageId}`).toString('base64url') + '=');
  t.same(decodeRecallHandle(h), fields);
  const odd = encodeRecallHandle({ ...fields, topic: 'T?>' }); // bytes whose base64 has + and /
  t.notMatch(odd, /[+/]/);
  t.same(decodeRecallHandle(odd), { ...fields, topic: 'T?>' });
});

t.test("what Java's decodeHandle refuses is null; what it accepts decodes", async (t) => {
  const h = encodeRecallHandle(fields);
  t.same(decodeRecallHandle(h.replace(/=+$/, '')), fields, 'padding is optional');
  const plain = Buffer.from('v1 a b 1 id extra words').toString('base64');
  t.same(
    decodeRecallHandle(plain),
    { topic: 'a', brokerName: 'b', timestamp: '1', messageId: 'id' },
    'extra words ignored',
  );
  for (const bad of [
    '',
    'not a handle',
    Buffer.from('v2 a b 1 id').toString('base64url'),
    Buffer.from('v1 a b 1').toString('base64url'),
    Buffer.from('v1 a b 1 id>>>?').toString('base64'), // standard alphabet: + or /
    `${h}==`,
    'A',
  ]) {
    t.equal(decodeRecallHandle(bad), null, JSON.stringify(bad));
  }
  t.equal(decodeRecallHandle(42), null);
});
