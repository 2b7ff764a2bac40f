import t from 'tap';
import { decodeBatch, encodeBatch, ProtocolError } from '../../protocol/index.js';
import { appendBatchProperties } from '../../protocol/batch.js';

t.test('batch body layout and round trip', async (t) => {
  const body = encodeBatch([
    { body: Buffer.from('one'), flag: 1, properties: { UNIQ_KEY: 'U1', TAGS: 'A' } },
    { body: Buffer.from(''), properties: 'KEYS\u0001k' },
  ]);
  const first = 22 + 3 + 'UNIQ_KEY\u0001U1\u0002TAGS\u0001A'.length;
  t.equal(body.readInt32BE(0), first, 'TOTALSIZE = 22 + body + props (Java encodeMessage)');
  t.equal(body.readInt32BE(4), 0, 'MAGICCODE 0');
  t.equal(body.readInt32BE(8), 0, 'BODYCRC 0');
  t.equal(body.readInt32BE(12), 1, 'FLAG');
  t.equal(body.length, first + 22 + 6);
  const d = decodeBatch(body);
  t.equal(d.length, 2);
  t.equal(d[0]!.body.toString(), 'one');
  t.same(d[0]!.properties, { UNIQ_KEY: 'U1', TAGS: 'A' });
  t.equal(d[1]!.flag, 0);
  t.equal(d[1]!.propertiesText, 'KEYS\u0001k');
});

t.test('truncated batches are ProtocolErrors', async (t) => {
  const body = encodeBatch([{ body: Buffer.from('abc'), properties: { A: 'b' } }]);
  for (let n = 1; n < body.length; n++) t.throws(() => decodeBatch(body.subarray(0, n)), ProtocolError);
});

t.test('batch-level properties are appended like the broker does', async (t) => {
  t.equal(appendBatchProperties('A\u0001b', 'WAIT\u0001true'), 'A\u0001b\u0002WAIT\u0001true');
  t.equal(appendBatchProperties('A\u0001b\u0002', 'WAIT\u0001true'), 'A\u0001b\u0002WAIT\u0001true');
  t.equal(appendBatchProperties('', 'WAIT\u0001true'), 'WAIT\u0001true');
  t.equal(appendBatchProperties('A\u0001b', ''), 'A\u0001b');
});
