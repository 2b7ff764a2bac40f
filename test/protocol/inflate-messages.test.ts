import { deflateSync } from 'node:zlib';
import t from 'tap';
import {
  decodeMessages,
  decodeMessagesSkipping,
  encodeStoredMessage,
  inflateMessages,
  MessageSysFlag,
} from '../../protocol/index.js';

// inflateMessages: the bodies of one pull inflate within a budget; a body over the
// per-body limit is refused without stopping the round; the first body of a round may always use
// the whole per-body limit, so a round makes progress and produces at most max(budget, limit).

const Z = MessageSysFlag.COMPRESSED_FLAG | MessageSysFlag.COMPRESSION_ZLIB_TYPE;
const KIB = 1024;

const rec = (offset: number, body: Buffer, sysFlag: number): Buffer =>
  encodeStoredMessage({
    topic: 'T',
    queueId: 0,
    queueOffset: offset,
    commitLogOffset: 1000 + offset * 200,
    sysFlag,
    body,
    properties: { UNIQ_KEY: `U${offset}` },
    bornTimestamp: 1,
    bornHost: '10.0.0.1:5000',
    storeTimestamp: 2,
    storeHost: '10.0.0.2:10911',
  });
const zipped = (o: number, size: number): Buffer => rec(o, deflateSync(Buffer.alloc(size, o)), Z);
const plain = (o: number): Buffer => rec(o, Buffer.from(`p${o}`), 0);

t.test('a round stops before the first body that does not fit in what is left of the budget', async (t) => {
  const body = Buffer.concat([
    plain(0),
    zipped(1, 40 * KIB),
    zipped(2, 40 * KIB),
    plain(3),
    zipped(4, 40 * KIB),
    zipped(5, 10 * KIB),
  ]);
  const { messages } = decodeMessagesSkipping(body, { decompress: false });
  t.ok(
    messages.every((m) => m.queueOffset % 3 === 0 || (m.sysFlag & MessageSysFlag.COMPRESSED_FLAG) !== 0),
    'decompress: false leaves bodies as stored',
  );
  const r1 = inflateMessages(messages, 0, { maxBodyBytes: 64 * KIB, budgetBytes: 100 * KIB });
  t.equal(r1.end, 4, 'stops at offset 4: 80 KiB spent, 40 KiB more would pass 100 KiB');
  t.equal(r1.keptBytes, 80 * KIB);
  t.equal(r1.inflatedBytes, 100 * KIB, 'the stopped decompression counts up to its limit');
  t.same(r1.refused, []);
  t.same(messages[1]!.body, Buffer.alloc(40 * KIB, 1));
  t.equal(messages[1]!.sysFlag & MessageSysFlag.COMPRESSED_FLAG, 0, 'an inflated body loses COMPRESSED');
  t.equal(
    messages[4]!.sysFlag & MessageSysFlag.COMPRESSED_FLAG,
    Z & MessageSysFlag.COMPRESSED_FLAG,
    'the rest stays compressed',
  );
  const r2 = inflateMessages(messages, r1.end, { maxBodyBytes: 64 * KIB, budgetBytes: 100 * KIB });
  t.equal(r2.end, 6, 'the next round takes the rest');
  t.same(
    messages.map((m) => m.body.length),
    [2, 40 * KIB, 40 * KIB, 2, 40 * KIB, 10 * KIB],
  );
  t.same(
    messages.map((m) => m.body),
    decodeMessages(body).map((m) => m.body),
    'as decodeMessages inflates them',
  );
});

t.test('a body over the per-body limit, or one that does not inflate, is refused and the round goes on', async (t) => {
  const body = Buffer.concat([
    zipped(0, 70 * KIB),
    zipped(1, 8 * KIB),
    rec(2, Buffer.from('not zlib'), Z),
    zipped(3, 8 * KIB),
  ]);
  const { messages } = decodeMessagesSkipping(body, { decompress: false });
  const r = inflateMessages(messages, 0, { maxBodyBytes: 64 * KIB, budgetBytes: 1024 * KIB });
  t.equal(r.end, 4);
  t.match(r.refused, [
    { index: 0, tooLarge: true, error: { name: 'InflatedBodyTooLargeError', limit: 64 * KIB } },
    { index: 2, tooLarge: false, error: { name: 'ProtocolError', message: /ZLIB/ } },
  ]);
  t.equal(messages[0]!.body.length < 1024, true, 'a refused message keeps its stored body');
  t.equal(messages[3]!.body.length, 8 * KIB);
});

t.test(
  'the first body of a round may use the whole per-body limit; a round never produces more than max(budget, limit)',
  async (t) => {
    const body = Buffer.concat([zipped(0, 60 * KIB), zipped(1, 60 * KIB), zipped(2, 60 * KIB)]);
    const { messages } = decodeMessagesSkipping(body, { decompress: false });
    let from = 0;
    let rounds = 0;
    while (from < messages.length) {
      const r = inflateMessages(messages, from, { maxBodyBytes: 64 * KIB, budgetBytes: 16 * KIB });
      t.equal(r.end, from + 1, 'one body per round when the budget is below one body');
      t.ok(r.inflatedBytes <= 64 * KIB);
      from = r.end;
      rounds++;
    }
    t.equal(rounds, 3);
    // bodies of 40 KiB, budget 100 KiB: never more than 100 KiB produced in a round, stopped outputs included
    const many = decodeMessagesSkipping(Buffer.concat(Array.from({ length: 20 }, (_, i) => zipped(i, 40 * KIB))), {
      decompress: false,
    }).messages;
    for (let f = 0; f < many.length; ) {
      const r = inflateMessages(many, f, { maxBodyBytes: 64 * KIB, budgetBytes: 100 * KIB });
      if (r.inflatedBytes > 100 * KIB) t.fail(`round from ${f} produced ${r.inflatedBytes}`);
      f = r.end;
    }
    t.pass('every round within 100 KiB');
  },
);
