import t from 'tap';
import {
  createRequest,
  decodeCommand,
  encodeCommand,
  ProtocolError,
  type RemotingCommand,
} from '../../protocol/index.js';
import { javaHashMapOrder, javaHashMapOrderShared } from '../../protocol/java-hash.js';

// decodeCommand's error reporting and the header details that the Java vectors pinned down.

function frameOf(type: number, header: Buffer, body = Buffer.alloc(0)): Buffer {
  const b = Buffer.alloc(8 + header.length + body.length);
  b.writeInt32BE(4 + header.length + body.length, 0);
  b.writeInt32BE((type << 24) | header.length, 4);
  header.copy(b, 8);
  body.copy(b, 8 + header.length);
  return b;
}

function errorOf(fn: () => unknown): ProtocolError {
  try {
    fn();
  } catch (e) {
    if (e instanceof ProtocolError) return e;
    throw e;
  }
  throw new Error('expected a ProtocolError');
}

t.test('decodeCommand reports where a frame is damaged', async (t) => {
  t.equal(errorOf(() => decodeCommand(Buffer.alloc(7), 100)).offset, 100, 'short frame');
  const good = encodeCommand(createRequest(105, { extFields: { topic: 'T' } }));
  const wrongTotal = Buffer.from(good);
  wrongTotal.writeInt32BE(good.length, 0);
  t.match(errorOf(() => decodeCommand(wrongTotal)).message, /does not match/);
  const longHeader = Buffer.from(good);
  longHeader.writeInt32BE(good.length, 4);
  t.equal(errorOf(() => decodeCommand(longHeader, 1000)).offset, 1004, 'header length field');
  const badType = Buffer.from(good);
  badType[4] = 2;
  const e = errorOf(() => decodeCommand(badType, 10));
  t.equal(e.offset, 14);
  t.match(e.message, /unknown serialize type 2/);
});

t.test('JSON header errors are ProtocolErrors at the header offset', async (t) => {
  const cases: [string, RegExp][] = [
    ['{"code":1', /not valid JSON/],
    ['[1]', /not an object/],
    ['null', /not an object/],
    ['{"flag":0}', /no "code"/],
    ['{"code":2147483648}', /not an int32/],
    ['{"code":1.5}', /not an int32/],
    ['{"code":"1x"}', /not an int32/],
    ['{"code":"99999999999"}', /not an int32/],
    ['{"code":1,"extFields":[1]}', /extFields/],
    ['{"code":1,"extFields":"x"}', /extFields/],
    ['['.repeat(100000), /not valid JSON/],
  ];
  for (const [text, pattern] of cases) {
    const e = errorOf(() => decodeCommand(frameOf(0, Buffer.from(text)), 50));
    t.equal(e.offset, 58, `${text.slice(0, 30)}: offset of the header`);
    t.match(e.message, pattern);
  }
});

t.test('int fields given as digit strings are read as fastjson reads them', async (t) => {
  const d = decodeCommand(
    frameOf(0, Buffer.from('{"code":"11","flag":"2","opaque":"-7","version":"409","language":"JAVA"}')),
  );
  t.same([d.code, d.flag, d.opaque, d.version], [11, 2, -7, 409]);
  // checked with RemotingCommand.decode of 4.9.8 and 5.3.3: "language":0 reads as JAVA
  t.equal(decodeCommand(frameOf(0, Buffer.from('{"code":11,"language":0}'))).language, 'JAVA');
  t.equal(decodeCommand(frameOf(0, Buffer.from('{"code":11,"language":9}'))).language, 'GO');
  t.equal(decodeCommand(frameOf(0, Buffer.from('{"code":11,"language":99}'))).language, null);
});

t.test('ROCKETMQ header errors point at the bad length field', async (t) => {
  const h = Buffer.alloc(21);
  t.match(errorOf(() => decodeCommand(frameOf(1, h.subarray(0, 20)))).message, /shorter than 21/);
  const remark = Buffer.from(h);
  remark.writeInt32BE(5, 13);
  t.equal(errorOf(() => decodeCommand(frameOf(1, remark))).offset, 8 + 13, 'remark length');
  const negRemark = Buffer.from(h);
  negRemark.writeInt32BE(-1, 13);
  t.equal(errorOf(() => decodeCommand(frameOf(1, negRemark))).offset, 8 + 13);
  const ext = Buffer.from(h);
  ext.writeInt32BE(1, 17);
  t.equal(errorOf(() => decodeCommand(frameOf(1, ext))).offset, 8 + 17, 'ext length');
  // ext section with a key length running past it
  const entry = Buffer.concat([h, Buffer.from([0x00, 0x09, 0x61])]);
  entry.writeInt32BE(3, 17);
  t.equal(errorOf(() => decodeCommand(frameOf(1, entry))).offset, 8 + 21, 'key length');
  const cut = Buffer.concat([h, Buffer.from([0x00])]);
  cut.writeInt32BE(1, 17);
  t.match(errorOf(() => decodeCommand(frameOf(1, cut))).message, /cut short/);
});

t.test('"__proto__" from the network stays an ordinary ext field', async (t) => {
  const json = frameOf(
    0,
    Buffer.from('{"code":1,"extFields":{"__proto__":"x","a":"b"},"flag":0,"opaque":1,"version":1}'),
  );
  const cmd = createRequest(1, { extFields: { a: 'b' } });
  Object.defineProperty(cmd.extFields, '__proto__', { value: 'x', enumerable: true });
  for (const frame of [json, encodeCommand({ ...cmd, serializeType: 'ROCKETMQ' })]) {
    const d = decodeCommand(frame);
    t.equal(Object.getPrototypeOf(d.extFields), Object.prototype, 'prototype untouched');
    t.ok(Object.hasOwn(d.extFields!, '__proto__'));
    t.equal(Object.getOwnPropertyDescriptor(d.extFields, '__proto__')?.value, 'x');
    t.equal(d.extFields!.a, 'b');
  }
});

t.test('strings are encoded as Java encodes them', async (t) => {
  const cmd: RemotingCommand = createRequest(1, {
    remark: 'a\ud800b\u2028\u0085\u00a0',
    extFields: { k: '\udc00\ud83d\ude00' },
  });
  const json = encodeCommand(cmd).subarray(8).toString('latin1');
  t.match(json, /"remark":"a\?b\\u2028\\u0085\u00c2\u00a0"/, 'lone surrogate -> ?, U+2028 and C1 escaped, NBSP raw');
  t.match(json, /"k":"\?\u00f0\u009f\u0098\u0080"/, 'a surrogate pair stays one 4-byte character');
  const bin = encodeCommand({ ...cmd, serializeType: 'ROCKETMQ' });
  t.equal(decodeCommand(bin).remark, 'a?b\u2028\u0085\u00a0');
  t.equal(decodeCommand(bin).extFields!.k, '?\ud83d\ude00');
});

t.test('JSON ext key order follows the HashMap capacity asked for', async (t) => {
  const keys = ['i', 'k\u00e9y"\\', 'empty'];
  const ext = Object.fromEntries(keys.map((k) => [k, 'v']));
  const order = (cap?: number): string[] => {
    const text = encodeCommand(
      createRequest(1, { extFields: ext }),
      cap === undefined ? undefined : { extFieldsCapacity: cap },
    )
      .subarray(8)
      .toString();
    const inner = JSON.parse(text).extFields as Record<string, string>;
    return Object.keys(inner);
  };
  t.same(order(), javaHashMapOrder(keys, 16), 'default: new HashMap<>() as makeCustomHeaderToNet creates');
  t.same(order(), ['i', 'k\u00e9y"\\', 'empty'], '4.9.8 order (vector escapes.json)');
  t.same(order(256), ['k\u00e9y"\\', 'i', 'empty'], '5.3.3 addExtField order (new HashMap<>(256))');
  t.same(javaHashMapOrder([], 0), []);
});

t.test('the cached HashMap order is the computed one for every key list, capacity and eviction', async (t) => {
  // Lists that share keys in another order, or the same list at another capacity, must not be
  // taken for one another; more lists than the recent-list cache holds come back right too.
  const lists: string[][] = [
    ['i', 'k\u00e9y"\\', 'empty'],
    ['empty', 'i', 'k\u00e9y"\\'],
    ['topic', 'queueId'],
    ['queueId', 'topic'],
  ];
  for (let n = 0; n < 40; n++) lists.push(Array.from({ length: 1 + (n % 7) }, (_, i) => `f${(n * 7 + i) % 23}`));
  for (let round = 0; round < 3; round++) {
    for (const keys of lists) {
      for (const cap of [16, 256]) {
        t.same(
          javaHashMapOrderShared(keys, cap),
          javaHashMapOrder(keys.slice(), cap),
          `${keys.join(',')} @${cap}, round ${round}`,
        );
      }
    }
  }
  const fresh = ['a', 'b'];
  const first = javaHashMapOrderShared(fresh, 16);
  fresh.reverse(); // the cache must hold its own copy of the list it was given
  t.same(javaHashMapOrderShared(['a', 'b'], 16), first);
});

t.test('frames the length fields cannot describe are refused before allocating', async (t) => {
  const hugeRemark = 'x'.repeat(0x1000000);
  t.throws(() => encodeCommand(createRequest(1, { remark: hugeRemark })), ProtocolError, 'JSON header over 16 MiB - 1');
  t.throws(
    () => encodeCommand(createRequest(1, { remark: hugeRemark, serializeType: 'ROCKETMQ' })),
    ProtocolError,
    'ROCKETMQ header too',
  );
  // a body view claiming 2 GiB: only its length is read
  const fakeBody = { length: 0x80000000 } as unknown as Buffer;
  t.throws(() => encodeCommand({ ...createRequest(1), body: fakeBody }), ProtocolError, 'int32 total length');
});

t.test('int fields past int32 wrap in both header types instead of producing a header Java refuses', async (t) => {
  const cmd = createRequest(11, { opaque: 2 ** 31 });
  t.equal(decodeCommand(encodeCommand(cmd)).opaque, -(2 ** 31));
  t.equal(decodeCommand(encodeCommand({ ...cmd, serializeType: 'ROCKETMQ' })).opaque, -(2 ** 31));
});
