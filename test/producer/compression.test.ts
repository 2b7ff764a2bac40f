// The producer's compressType / compressLevel: Java's defaults, the checks at construction, the
// sysFlag codec bits and bytes each codec sends, and batches left as they are (as Java's tryToCompressMessage).
import { inflateSync } from 'node:zlib';
import t, { type Test } from 'tap';
import {
  Producer,
  ProducerOptionError,
  resolveProducerOptions,
  type ProducerOptions,
} from '../../lib/producer/index.js';
import { decodeBatch, decompress } from '../../protocol/index.js';
import { zstdCompressionAvailable } from '../../protocol/compression-encode.js';
import { lz4FrameDecompress } from '../../protocol/lz4-frame.js';
import { routeJson, startFakeBroker, startFakeNameServer } from '../client/fake-cluster.js';

let seq = 0;
async function producerOn(t: Test, extra: Partial<ProducerOptions>) {
  const b = await startFakeBroker();
  const ns = await startFakeNameServer(
    new Map([['TopicTest', routeJson([{ name: 'broker-a', addrs: { '0': b.addr }, queues: 1 }])]]),
  );
  t.teardown(async () => {
    await ns.close();
    await b.close();
  });
  const p = new Producer({
    namesrvAddr: ns.addr,
    group: 'pg_compress',
    instanceName: `pc${process.pid}_${++seq}`,
    startWithoutNameServer: true,
    ...extra,
  });
  await p.start();
  t.teardown(() => p.shutdown());
  return { p, b };
}

const json = Buffer.from(
  JSON.stringify(Array.from({ length: 400 }, (_, i) => ({ id: i, status: ['NEW', 'PAID'][i % 2], amount: i * 3 }))),
);

t.test('defaults are Java system properties: ZLIB at level 5', async (t) => {
  const o = resolveProducerOptions({ namesrvAddr: 'h:1', group: 'g' });
  t.equal(o.compressType, 'ZLIB');
  t.equal(o.compressLevel, 5);
  t.equal(
    resolveProducerOptions({ namesrvAddr: 'h:1', group: 'g', compressType: ' lz4 ' as never }).compressType,
    'LZ4',
    'any case, trimmed, as CompressionType.of',
  );
});

t.test('bad codec names and levels are ProducerOptionErrors naming the option', async (t) => {
  const opt = (o: Partial<ProducerOptions>) => () => new Producer({ namesrvAddr: 'h:1', group: 'g', ...o });
  t.throws(opt({ compressType: 'GZIP' as never }), {
    name: 'ProducerOptionError',
    option: 'compressType',
    message: /ZLIB, LZ4 or ZSTD/,
  });
  t.throws(opt({ compressLevel: 10 }), { option: 'compressLevel', message: /between 0 and 9/ }, 'zlib stops at 9');
  t.throws(opt({ compressType: 'LZ4', compressLevel: 1.5 }), { name: 'ProducerOptionError', option: 'compressLevel' });
  t.doesNotThrow(opt({ compressType: 'LZ4', compressLevel: 17 }), 'LZ4 has no level of its own (Java ignores it)');
  if (!zstdCompressionAvailable()) {
    // the runtime is checked when the producer is made, not at its first large body
    let err: unknown;
    try {
      opt({ compressType: 'ZSTD' })();
    } catch (e) {
      err = e;
    }
    t.ok(err instanceof ProducerOptionError, 'new Producer throws ProducerOptionError');
    const e = err as ProducerOptionError;
    t.equal(e.option, 'compressType');
    t.match(e.message, /22\.15 or 23\.8/, 'names the Node.js versions that have zstd');
    t.match(e.message, process.versions.node, 'and the one running');
  } else {
    t.throws(opt({ compressType: 'ZSTD', compressLevel: 23 }), { option: 'compressLevel', message: /-131072 and 22/ });
  }
});

t.test('LZ4: a frame Java reads, sysFlag 0x101; below the threshold as is', async (t) => {
  const { p, b } = await producerOn(t, { compressType: 'LZ4' });
  await p.send({ topic: 'TopicTest', body: json });
  await p.send({ topic: 'TopicTest', body: 'small' });
  const [a, s] = b.stored;
  t.equal(a!.extFields!.f, String(0x101));
  t.ok(a!.body!.length < json.length / 2, `compressed to ${a!.body!.length} of ${json.length} bytes`);
  t.same(lz4FrameDecompress(a!.body!), json);
  t.equal(s!.extFields!.f, '0');
});

t.test('ZLIB at the level asked for, sysFlag 0x301', async (t) => {
  const { p, b } = await producerOn(t, { compressLevel: 9, compressMsgBodyOverHowmuch: 100 });
  await p.send({ topic: 'TopicTest', body: json });
  const { deflateSync } = await import('node:zlib');
  t.equal(b.stored[0]!.extFields!.f, String(0x301));
  t.same(b.stored[0]!.body, deflateSync(json, { level: 9 }), 'a level-9 zlib stream');
  t.same(inflateSync(b.stored[0]!.body!), json);
});

t.test(
  'ZSTD where node:zlib has it, sysFlag 0x201',
  { skip: !zstdCompressionAvailable() && 'no zstd in this Node.js' },
  async (t) => {
    const { p, b } = await producerOn(t, { compressType: 'ZSTD', compressLevel: 3 });
    await p.send({ topic: 'TopicTest', body: json });
    t.equal(b.stored[0]!.extFields!.f, String(0x201));
    t.same(decompress(b.stored[0]!.body!, 'ZSTD'), json);
  },
);

t.test('batches are never compressed, whatever the codec (Java skips MessageBatch)', async (t) => {
  const { p, b } = await producerOn(t, { compressType: 'LZ4', compressMsgBodyOverHowmuch: 10 });
  await p.sendBatch([
    { topic: 'TopicTest', body: json },
    { topic: 'TopicTest', body: json },
  ]);
  const req = b.stored[0]!;
  t.equal(req.extFields!.f, '0');
  t.same(
    decodeBatch(req.body!).map((m) => m.body),
    [json, json],
    'the members as sent',
  );
});
