import t from 'tap';
import { decodeResetOffsetBody } from '../../protocol/index.js';
import { formatOffsetsFile, parseOffsetsFile } from '../../lib/consumer/offset-store.js';

// The BROADCASTING offsets file is Java's OffsetSerializeWrapper, written by protocol's
// ResetOffsetBody codec (object map keys, fastjson's escapes) and read back by the tolerant reader.
t.test('the local offsets file round-trips through the reader and protocol codec, odd topic names included', async (t) => {
  const entries = [
    { mq: { topic: 'T"x\u2028y', brokerName: 'broker-1', queueId: 3 }, offset: 12 },
    { mq: { topic: 'A', brokerName: 'b', queueId: 0 }, offset: 0 },
  ];
  const text = formatOffsetsFile(entries);
  t.match(text, /^\{"offsetTable":\{\{"brokerName":/, 'object keys, as fastjson writes the wrapper');
  t.ok(text.includes('\\u2028'), 'U+2028 escaped as fastjson does');
  const sortByOffset = <E extends { offset: number }>(xs: E[]): E[] => [...xs].sort((a, b) => a.offset - b.offset);
  t.same(sortByOffset(parseOffsetsFile(text)!), sortByOffset(entries));
  t.same(
    sortByOffset(decodeResetOffsetBody(Buffer.from(text)).offsetTable.map(([mq, offset]) => ({ mq, offset }))),
    sortByOffset(entries),
  );
});
