// Compressed bodies between rocketwire and the Java 5.3.3 client, offline (embedded broker):
//  - rocketwire's producer with compressType ZLIB and LZ4 → the Java push consumer: Java's own
//    MessageDecoder inflates every body (its sysFlag keeps the codec bits, COMPRESSED cleared) and
//    the bodies are byte-equal to what was sent, compressible and incompressible, over one 4 MiB block;
//  - a Java producer with -Drocketmq.message.compressType=LZ4 / ZSTD → rocketwire's push consumer.
import { createHash, randomBytes } from 'node:crypto';
import t from 'tap';
import { startBroker } from '../../lib/broker/index.js';
import { PushConsumer, type MessageExt } from '../../lib/consumer/index.js';
import { Producer } from '../../lib/producer/index.js';
import { MessageSysFlag } from '../../protocol/index.js';
import { until } from '../support/until.js';
import { V5_VERSION } from './harness.js';
import { expectedBody, javaProduce, sha1, startJavaConsumer } from './java-client.js';
import { interopReady } from './skip.js';

t.setTimeout(180_000);

/** Bodies that exercise the encoder: text, JSON, zeros, random (stored raw), and a large one. */
function bodies(): Buffer[] {
  const json = Buffer.from(
    JSON.stringify(
      Array.from({ length: 900 }, (_, i) => ({ id: i, sku: `SKU-${i % 37}`, qty: i % 5, note: 'as ordered' })),
    ),
  );
  const mixed = randomBytes(20_000);
  for (let i = 0; i < mixed.length; i += 3) mixed[i] = 0x41;
  return [
    Buffer.from('x'.repeat(5000)),
    json,
    Buffer.alloc(70_000),
    randomBytes(9000),
    mixed,
    Buffer.concat([json, json, randomBytes(300), json]),
    Buffer.from(Array.from({ length: 50_000 }, (_, i) => `line ${i % 211}\n`).join('')),
  ];
}

const CODEC_BITS = { ZLIB: MessageSysFlag.COMPRESSION_ZLIB_TYPE, LZ4: MessageSysFlag.COMPRESSION_LZ4_TYPE } as const;
const JAVA_CODEC_BITS = { ...CODEC_BITS, ZSTD: MessageSysFlag.COMPRESSION_ZSTD_TYPE } as const;

if (await interopReady(t, [V5_VERSION])) {
  const broker = await startBroker({ queues: 2 });
  t.teardown(() => broker.close());

  for (const codec of ['ZLIB', 'LZ4'] as const) {
    t.test(`rocketwire compressType ${codec} → Java push consumer: bodies byte-equal`, async (t) => {
      const topic = `RwCompress${codec}`;
      broker.instances[0]!.topics.ensure(topic, 2);
      const producer = new Producer({
        group: `rw_compress_${codec}_pg`,
        namesrvAddr: broker.namesrv,
        compressType: codec,
      });
      await producer.start();
      t.teardown(() => producer.shutdown());
      const list = bodies();
      const sent = new Map<string, Buffer>();
      for (const body of list) sent.set((await producer.send({ topic, body })).msgId, body);
      // one below the threshold goes as is
      const plain = Buffer.from('small body');
      sent.set((await producer.send({ topic, body: plain })).msgId, plain);

      const java = await startJavaConsumer({
        namesrv: broker.namesrv,
        topic,
        group: `java_compress_${codec}_cg`,
        expect: sent.size,
        timeoutMs: 60_000,
        from: 'first',
      });
      t.teardown(() => java.stop());
      const { messages } = await java.done;
      t.equal(messages.length, sent.size, 'the Java consumer received every message');
      for (const m of messages) {
        const body = sent.get(m.msgId)!;
        t.ok(body, `sent ${m.msgId}`);
        t.equal(m.bodyLength, body.length, `${m.msgId}: length`);
        t.equal(m.bodySha1, sha1(body), `${m.msgId}: body byte-equal`);
        t.equal(m.sysFlag & MessageSysFlag.COMPRESSED_FLAG, 0, 'Java cleared COMPRESSED after inflating');
        t.equal(
          m.sysFlag & MessageSysFlag.COMPRESSION_TYPE_MASK,
          body === plain ? 0 : CODEC_BITS[codec],
          body === plain ? 'a small body is not compressed' : `Java read the ${codec} codec bits`,
        );
      }
    });
  }

  for (const codec of ['LZ4', 'ZSTD', 'ZLIB'] as const) {
    t.test(`Java compressType ${codec} → rocketwire push consumer: bodies byte-equal`, async (t) => {
      const topic = `JavaCompress${codec}`;
      broker.instances[0]!.topics.ensure(topic, 2);
      const size = 9000;
      const count = 6;
      const { sent } = await javaProduce({
        namesrv: broker.namesrv,
        topic,
        count,
        size,
        jvmArgs: [`-Drocketmq.message.compressType=${codec}`],
      });
      t.equal(sent.length, count, 'the Java producer sent every message');
      const got: MessageExt[] = [];
      const consumer = new PushConsumer({
        consumerGroup: `rw_compress_${codec}_cg`,
        namesrvAddr: broker.namesrv,
        subscriptions: { [topic]: '*' },
        consumeFromWhere: 'first',
      });
      await consumer.start((msgs) => {
        got.push(...msgs);
        return 'CONSUME_SUCCESS';
      });
      t.teardown(() => consumer.shutdown());
      await until(() => got.length >= count, `${count} messages`, 30_000);
      const byId = new Map(got.map((m) => [m.msgId, m]));
      for (const s of sent) {
        const m = byId.get(s.msgId)!;
        t.equal(createHash('sha1').update(m.body).digest('hex'), sha1(expectedBody(s.i, size)), `#${s.i} byte-equal`);
        t.equal(m.sysFlag & MessageSysFlag.COMPRESSION_TYPE_MASK, JAVA_CODEC_BITS[codec], `#${s.i} came as ${codec}`);
      }
    });
  }
}
