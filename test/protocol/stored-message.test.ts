import t from 'tap';
import { deflateSync } from 'node:zlib';
import {
  createOffsetMsgId,
  decodeMessage,
  decodeMessages,
  encodeStoredMessage,
  MessageSysFlag,
  ProtocolError,
  storedMessageSize,
  UnsupportedCompressionError,
  type StoredMessageInit,
} from '../../protocol/index.js';
import { lz4FrameStore } from '../../protocol/lz4-frame.js';

function init(over: Partial<StoredMessageInit> = {}): StoredMessageInit {
  return {
    topic: 'TopicTest',
    queueId: 2,
    flag: 7,
    queueOffset: 128,
    commitLogOffset: 0x1234,
    sysFlag: 0,
    bornTimestamp: 1712345678901,
    bornHost: '192.168.1.10:54321',
    storeTimestamp: 1712345679000,
    storeHost: '192.168.1.20:10911',
    reconsumeTimes: 3,
    preparedTransactionOffset: 0,
    body: Buffer.from('hello world'),
    properties: { TAGS: 'TagA', KEYS: 'order-1', UNIQ_KEY: 'C0A8010A303918B4AAC27C5A1B2C0000', WAIT: 'true' },
    ...over,
  };
}

t.test('record size is 91 + N + T + P with IPv4 hosts and magic v1', async (t) => {
  const props = 'TAGS\u0001TagA';
  const rec = encodeStoredMessage(init({ properties: props }));
  t.equal(rec.length, 91 + 11 + 9 + props.length);
  t.equal(storedMessageSize(11, 9, props.length), rec.length);
  t.equal(rec.readInt32BE(0), rec.length, 'TOTALSIZE includes itself');
  t.equal(rec.readInt32BE(4), -626843481, 'magic v1');
  t.equal(rec.readInt32BE(36), 0, 'SYSFLAG at 36');
  t.equal(rec.readBigInt64BE(28), 0x1234n, 'PHYSICALOFFSET at 28');
  t.equal(rec.readBigInt64BE(20), 128n, 'QUEUEOFFSET at 20');
  t.equal(rec.readBigInt64BE(56), 1712345679000n, 'STORETIMESTAMP at 56');
  t.equal(rec.subarray(48, 56).toString('hex'), 'c0a8010a0000d431', 'born host = ip bytes + int32 port');
});

t.test('encode then decode gives every field back', async (t) => {
  const rec = encodeStoredMessage(init());
  const [m] = decodeMessages(rec);
  t.ok(m);
  t.match(m, {
    topic: 'TopicTest',
    queueId: 2,
    flag: 7,
    queueOffset: 128,
    commitLogOffset: 0x1234,
    sysFlag: 0,
    bornTimestamp: 1712345678901,
    bornHost: '192.168.1.10:54321',
    storeTimestamp: 1712345679000,
    storeHost: '192.168.1.20:10911',
    reconsumeTimes: 3,
    preparedTransactionOffset: 0,
    storeSize: rec.length,
    tags: 'TagA',
    keys: ['order-1'],
    msgId: 'C0A8010A303918B4AAC27C5A1B2C0000',
    offsetMsgId: 'C0A8011400002A9F0000000000001234',
  });
  t.equal(m!.body.toString(), 'hello world');
  t.equal(m!.body.buffer, rec.buffer, 'body is a view, not a copy');
  t.same(m!.properties, { TAGS: 'TagA', KEYS: 'order-1', UNIQ_KEY: 'C0A8010A303918B4AAC27C5A1B2C0000', WAIT: 'true' });
});

t.test('msgId falls back to the offset id without UNIQ_KEY', async (t) => {
  const [m] = decodeMessages(encodeStoredMessage(init({ properties: { TAGS: 'x' } })));
  t.equal(m!.msgId, 'C0A8011400002A9F0000000000001234');
  t.same(m!.keys, [], 'no keys: an empty array');
});

t.test('a pull body of several records decodes in order', async (t) => {
  const recs = [0, 1, 2].map((i) =>
    encodeStoredMessage(init({ queueOffset: 10 + i, commitLogOffset: 1000 * i, body: Buffer.from(`m${i}`) })),
  );
  const ms = decodeMessages(Buffer.concat(recs));
  t.same(
    ms.map((m) => m.queueOffset),
    [10, 11, 12],
  );
  t.same(
    ms.map((m) => m.body.toString()),
    ['m0', 'm1', 'm2'],
  );
  t.same(decodeMessages(Buffer.alloc(0)), [], 'empty body, no messages');
});

t.test('offset ids of one body follow each record across 2^32 and host changes', async (t) => {
  const cases: [string, number][] = [
    ['10.0.0.9:10911', 0xfffffffe],
    ['10.0.0.9:10911', 0x100000000],
    ['10.0.0.9:10911', 0x100000001],
    ['10.0.0.8:10911', 0x100000002],
    ['10.0.0.8:10911', 2 ** 52 + 7],
    ['10.0.0.8:10911', 0x1234],
  ];
  const body = Buffer.concat(
    cases.map(([storeHost, commitLogOffset]) => encodeStoredMessage(init({ storeHost, commitLogOffset }))),
  );
  t.same(
    decodeMessages(body).map((m) => m.offsetMsgId),
    cases.map(([storeHost, off]) => createOffsetMsgId(storeHost, off)),
  );
  t.same(
    decodeMessages(body).map((m) => m.offsetMsgId.slice(16)),
    [
      '00000000FFFFFFFE',
      '0000000100000000',
      '0000000100000001',
      '0000000100000002',
      '0010000000000007',
      '0000000000001234',
    ],
  );
});

t.test('records of different topics and hosts in one body keep their own values', async (t) => {
  const body = Buffer.concat([
    encodeStoredMessage(init({ topic: 'TopicAAA', bornHost: '10.0.0.1:1', storeHost: '10.0.0.9:10911' })),
    encodeStoredMessage(init({ topic: 'TopicBBB', bornHost: '10.0.0.2:1', storeHost: '10.0.0.8:10911' })),
    encodeStoredMessage(init({ topic: 'TopicBBB', bornHost: '10.0.0.2:2', storeHost: '10.0.0.8:10912' })),
  ]);
  const ms = decodeMessages(body);
  t.same(
    ms.map((m) => m.topic),
    ['TopicAAA', 'TopicBBB', 'TopicBBB'],
  );
  t.same(
    ms.map((m) => m.bornHost),
    ['10.0.0.1:1', '10.0.0.2:1', '10.0.0.2:2'],
  );
  t.same(
    ms.map((m) => m.storeHost),
    ['10.0.0.9:10911', '10.0.0.8:10911', '10.0.0.8:10912'],
  );
  t.same(
    ms.map((m) => m.offsetMsgId.slice(0, 16)),
    ['0A00000900002A9F', '0A00000800002A9F', '0A00000800002AA0'],
  );
});

t.test('IPv6 born and store hosts set the sysFlag bits and 20-byte fields', async (t) => {
  const rec = encodeStoredMessage(init({ bornHost: '[2001:db8::1]:5000', storeHost: '[::1]:10911', properties: {} }));
  t.equal(rec.length, 91 + 24 + 11 + 9, 'two IPv6 hosts add 24 bytes');
  const [m] = decodeMessages(rec);
  t.equal(m!.sysFlag, MessageSysFlag.BORNHOST_V6_FLAG | MessageSysFlag.STOREHOSTADDRESS_V6_FLAG);
  t.equal(m!.bornHost, '[2001:db8::1]:5000');
  t.equal(m!.storeHost, '[::1]:10911');
  t.equal(m!.offsetMsgId.length, 56, 'IPv6 offset ids are 56 hex chars');
  t.equal(m!.offsetMsgId, '00000000000000000000000000000001' + '00002A9F' + '0000000000001234');
  t.equal(m!.storeTimestamp, 1712345679000);
});

t.test('only the born host IPv6', async (t) => {
  const [m] = decodeMessages(encodeStoredMessage(init({ bornHost: '[fe80::a:b]:1' })));
  t.equal(m!.sysFlag, MessageSysFlag.BORNHOST_V6_FLAG);
  t.equal(m!.bornHost, '[fe80::a:b]:1');
  t.equal(m!.storeHost, '192.168.1.20:10911');
});

t.test('magic v2 carries a 2-byte topic length for long topics', async (t) => {
  const topic = 'T'.repeat(200);
  const rec = encodeStoredMessage(init({ topic }));
  t.equal(rec.readInt32BE(4), -626843477, 'v2 chosen for a topic over 127 bytes');
  const [m] = decodeMessages(rec);
  t.equal(m!.topic, topic);
  const short = encodeStoredMessage(init({ magic: 2 }));
  t.equal(short.length, encodeStoredMessage(init()).length + 1, 'v2 is one byte longer');
  t.equal(decodeMessages(short)[0]!.topic, 'TopicTest');
  t.throws(() => encodeStoredMessage(init({ topic, magic: 1 })), ProtocolError);
});

t.test('properties with and without the trailing separator decode the same', async (t) => {
  const a = decodeMessages(encodeStoredMessage(init({ properties: 'TAGS\u0001A\u0002KEYS\u0001k' })))[0]!;
  const b = decodeMessages(encodeStoredMessage(init({ properties: 'TAGS\u0001A\u0002KEYS\u0001k\u0002' })))[0]!;
  t.same(a.properties, { TAGS: 'A', KEYS: 'k' });
  t.same(b.properties, a.properties);
});

t.test('UTF-8 topic, properties and large values survive', async (t) => {
  const [m] = decodeMessages(encodeStoredMessage(init({ topic: 'тема', properties: { KEYS: 'ключ 键', TAGS: 'ü' } })));
  t.equal(m!.topic, 'тема');
  t.same(m!.keys, ['ключ', '键'], "keys split on the space, as Java's getKeys().split(KEY_SEPARATOR)");
  const big = 2 ** 53 - 1;
  const [n] = decodeMessages(
    encodeStoredMessage(init({ queueOffset: big, commitLogOffset: 2 ** 40 + 5, preparedTransactionOffset: -1 })),
  );
  t.equal(n!.queueOffset, big);
  t.equal(n!.commitLogOffset, 2 ** 40 + 5);
  t.equal(n!.preparedTransactionOffset, -1);
});

t.test('zlib, lz4 and zstd bodies are decompressed and COMPRESSED cleared', async (t) => {
  const plain = Buffer.from('compress me '.repeat(50));
  const zlibRec = encodeStoredMessage(
    init({ body: deflateSync(plain), sysFlag: MessageSysFlag.COMPRESSED_FLAG | MessageSysFlag.COMPRESSION_ZLIB_TYPE }),
  );
  const old = encodeStoredMessage(init({ body: deflateSync(plain), sysFlag: MessageSysFlag.COMPRESSED_FLAG }));
  const lz4Rec = encodeStoredMessage(init({ body: lz4FrameStore(plain), sysFlag: 0x101 }));
  for (const [name, rec] of [
    ['zlib', zlibRec],
    ['zlib (type bits 0)', old],
    ['lz4', lz4Rec],
  ] as const) {
    const [m] = decodeMessages(rec);
    t.equal(m!.body.toString(), plain.toString(), `${name} body`);
    t.equal(m!.sysFlag & MessageSysFlag.COMPRESSED_FLAG, 0, `${name} COMPRESSED cleared`);
  }
  t.equal(decodeMessages(zlibRec)[0]!.sysFlag, MessageSysFlag.COMPRESSION_ZLIB_TYPE, 'codec bits kept, as Java');
  const raw = decodeMessages(zlibRec, { decompress: false })[0]!;
  t.same(raw.body, deflateSync(plain), 'decompress:false leaves the stored bytes');
  t.equal(raw.sysFlag, 0x301);
  const bad = encodeStoredMessage(init({ body: Buffer.from('not zlib'), sysFlag: 0x301 }));
  const err = t.throws(() => decodeMessages(bad)) as ProtocolError;
  t.type(err, ProtocolError);
  t.equal(err.offset, 88, 'offset points at the body');
  const unknown = encodeStoredMessage(init({ body: Buffer.from('x'), sysFlag: 0x501 }));
  t.throws(() => decodeMessages(unknown), UnsupportedCompressionError);
});

t.test('verifyCrc checks BODYCRC', async (t) => {
  const rec = encodeStoredMessage(init());
  t.equal(decodeMessages(rec, { verifyCrc: true }).length, 1);
  const forged = encodeStoredMessage(init({ bodyCRC: 12345 }));
  t.equal(decodeMessages(forged)[0]!.bodyCRC, 12345, 'not checked by default, like Java');
  const err = t.throws(() => decodeMessages(forged, { verifyCrc: true })) as ProtocolError;
  t.type(err, ProtocolError);
  t.equal(err.offset, 8);
});

t.test('the body CRC is CRC-32 masked with 0x7FFFFFFF', async (t) => {
  // CRC-32("123456789") = 0xCBF43926; masked = 0x4BF43926
  const rec = encodeStoredMessage(init({ body: Buffer.from('123456789') }));
  t.equal(rec.readInt32BE(8), 0x4bf43926);
});

t.test('every truncation and garbage input is a ProtocolError with an offset, never a RangeError', async (t) => {
  const two = Buffer.concat([
    encodeStoredMessage(init()),
    encodeStoredMessage(init({ bornHost: '[::2]:1', storeHost: '[::3]:2', magic: 2 })),
  ]);
  let errors = 0;
  for (let n = 1; n < two.length; n++) {
    const first = two.readInt32BE(0);
    if (n === first) continue; // a whole first record is a valid body
    try {
      decodeMessages(two.subarray(0, n));
      t.fail(`truncation to ${n} bytes decoded`);
    } catch (e) {
      if (!(e instanceof ProtocolError)) throw e;
      t.ok(e.offset >= 0 && e.offset <= n, `offset ${e.offset} inside ${n}`);
      errors++;
    }
  }
  t.equal(errors, two.length - 2);
  // flip every byte of the first record: must decode or throw ProtocolError
  const one = encodeStoredMessage(init());
  for (let i = 0; i < one.length; i++) {
    const c = Buffer.from(one);
    c[i] ^= 0xff;
    try {
      decodeMessages(c);
    } catch (e) {
      if (!(e instanceof ProtocolError)) t.fail(`byte ${i}: ${String(e)}`);
    }
  }
  const blank = Buffer.alloc(16);
  blank.writeInt32BE(16, 0);
  blank.writeInt32BE(0xcbd43194 | 0, 4);
  t.throws(() => decodeMessages(blank), /blank/);
  t.throws(() => decodeMessages(Buffer.from('garbage garbage garbage')), ProtocolError);
});

t.test('decodeMessage reads one record at an offset and reports base offsets', async (t) => {
  const rec = encodeStoredMessage(init());
  const buf = Buffer.concat([Buffer.alloc(5), rec]);
  t.equal(decodeMessage(buf, 5).topic, 'TopicTest');
  const err = t.throws(() => decodeMessages(rec.subarray(0, 20), { baseOffset: 1000 })) as ProtocolError;
  t.equal(err.offset, 1000);
});

t.test('a property named __proto__ stays a plain property', async (t) => {
  const [m] = decodeMessages(encodeStoredMessage(init({ properties: '__proto__\u0001x\u0002TAGS\u0001a' })));
  t.equal(Object.getPrototypeOf(m!.properties), Object.prototype);
  t.equal(Object.getOwnPropertyDescriptor(m!.properties, '__proto__')?.value, 'x');
});

t.test('encoder validates its input', async (t) => {
  t.throws(() => encodeStoredMessage(init({ bornHost: 'nohost' })), ProtocolError);
  t.throws(() => encodeStoredMessage(init({ queueOffset: 1.5 })), ProtocolError);
  t.throws(() => encodeStoredMessage(init({ queueId: 2 ** 31 })), ProtocolError);
  t.throws(() => encodeStoredMessage(init({ properties: { K: 'v'.repeat(40000) } })), /exceed/);
});

t.test('userProperties: only what the producer set, computed once; properties keeps everything', async (t) => {
  const [m] = decodeMessages(
    encodeStoredMessage(
      init({
        properties: {
          TAGS: 'a',
          KEYS: 'k1 k2',
          UNIQ_KEY: 'U',
          WAIT: 'true',
          MIN_OFFSET: '0',
          CONSUME_START_TIME: '1',
          orderId: '42',
          region: 'eu',
          __SHARDINGKEY: 's',
        },
      }),
    ),
  );
  t.same(
    m!.userProperties,
    { orderId: '42', region: 'eu', __SHARDINGKEY: 's' },
    "the system names of Java's STRING_HASH_SET are left out",
  );
  t.equal(m!.userProperties, m!.userProperties, 'the same object on every access');
  t.equal(m!.properties.UNIQ_KEY, 'U');
  t.same(m!.keys, ['k1', 'k2']);
  const json = JSON.parse(JSON.stringify(m)) as { keys: string[]; userProperties: Record<string, string> };
  t.same(json.keys, ['k1', 'k2'], 'JSON shows keys');
  t.same(json.userProperties.orderId, '42', 'JSON shows userProperties');
});
