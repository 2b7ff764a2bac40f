import { readFileSync } from 'node:fs';
import t from 'tap';
import { encodeBatch, encodeProperties } from '../../protocol/index.js';
import { javaHashMapOrder } from '../../protocol/java-hash.js';
import { encodeMessageProperties, messageProperties, type Message } from '../../lib/producer/index.js';

interface GoldenBatch {
  name: string;
  hex: string;
  messages: { flag: number; bodyHex: string; properties: [string, string][]; propertiesString: string }[];
}

// Bytes produced by Apache RocketMQ 4.9.8's MessageDecoder.encodeMessages (test/fixtures/vectors).
const golden = JSON.parse(
  readFileSync(new URL('../../../test/fixtures/vectors/4.9.8/batches.json', import.meta.url), 'utf8'),
) as GoldenBatch[];

t.test("a Java Message's properties string, byte for byte (HashMap order)", async (t) => {
  const g = golden[0]!;
  const msgs: Message[] = [
    { topic: 'TopicTest', body: 'first', tags: 'TagA', keys: 'key-1' },
    {
      topic: 'TopicTest',
      body: 'second é',
      flag: 5,
      tags: 'TagB',
      keys: ['key-2', 'key-3'],
      properties: { custom: 'x\u0001y' },
    },
  ];
  for (let i = 0; i < msgs.length; i++) {
    const uniq = g.messages[i]!.properties.find(([k]) => k === 'UNIQ_KEY')![1];
    t.equal(encodeMessageProperties(msgs[i]!, uniq), g.messages[i]!.propertiesString, `message ${i}`);
    t.equal(
      encodeProperties(messageProperties(msgs[i]!, uniq)),
      g.messages[i]!.propertiesString,
      `message ${i} (as a map)`,
    );
  }
  const records = msgs.map((m, i) => ({
    body: Buffer.from(g.messages[i]!.bodyHex, 'hex'),
    flag: m.flag ?? 0,
    properties: encodeMessageProperties(m, g.messages[i]!.properties.find(([k]) => k === 'UNIQ_KEY')![1]),
  }));
  const javaBytes = Buffer.from(g.hex, 'hex');
  const ours = encodeBatch(records);
  t.equal(
    ours.toString('hex'),
    javaBytes.subarray(0, ours.length).toString('hex'),
    "the first two batch records match Java's bytes",
  );
});

t.test('numeric property names keep HashMap order (no JS object reordering)', async (t) => {
  const s = encodeMessageProperties({ topic: 'T', body: 'x', properties: { zeta: 'b', '10': 'a' } }, 'U');
  const names = s.split('\u0002').map((kv) => kv.split('\u0001')[0]);
  t.same(names, javaHashMapOrder(['WAIT', 'zeta', '10', 'UNIQ_KEY']));
  t.not(names[0], '10', 'a JS object would have put the integer-like key first');
});
