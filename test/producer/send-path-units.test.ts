// autoBatch (Java's ProduceAccumulator) and async back-pressure (Java's semaphores) on a ManualClock,
// with a fake send underneath: when a batch goes out, what it carries, what each caller gets back,
// and when a send waits for a permit or gives up.
import t from 'tap';
import { ManualClock } from '../../lib/clock.js';
import { decodeBatch, decodeProperties, UniqKeyGenerator } from '../../protocol/index.js';
import { ProduceAccumulator } from '../../lib/producer/produce-accumulator.js';
import { AsyncBackpressure, FairSemaphore } from '../../lib/producer/async-backpressure.js';
import type { Prepared } from '../../lib/producer/send-preparation.js';
import {
  resolveProducerOptions,
  SendBackpressureTimeoutError,
  type ProducerOptions,
  type SendOptions,
  type SendResult,
} from '../../lib/producer/index.js';

interface Sent {
  p: Prepared;
  opts: SendOptions;
  answer: (r: Partial<SendResult> | Error) => void;
}

function accumulator(extra: Partial<ProducerOptions> = {}) {
  const clock = new ManualClock();
  const options = resolveProducerOptions({ namesrvAddr: '127.0.0.1:9876', group: 'g', autoBatch: true, ...extra });
  const sent: Sent[] = [];
  const acc = new ProduceAccumulator(options, clock, new UniqKeyGenerator({ ip: '10.0.0.1' }), {
    sendPrepared: (p, opts) =>
      new Promise<SendResult>((resolve, reject) => {
        sent.push({
          p,
          opts,
          answer: (r) =>
            r instanceof Error
              ? reject(r)
              : resolve({
                  status: 'SEND_OK',
                  msgId: p.uniqMsgId,
                  offsetMsgId: r.offsetMsgId ?? 'X',
                  messageQueue: { topic: p.topic, brokerName: 'a', queueId: 1 },
                  queueOffset: r.queueOffset ?? 0,
                }),
        });
      }),
  });
  return { acc, clock, sent };
}

t.test(
  "defaults are Java's: autoBatch off, 10 ms, 32 KiB, 32 MiB; back-pressure off, 10000 sends, 100 MiB",
  async (t) => {
    const o = resolveProducerOptions({ namesrvAddr: '127.0.0.1:9876', group: 'g' });
    t.same(
      [o.autoBatch, o.batchMaxDelayMs, o.batchMaxBytes, o.totalBatchMaxBytes],
      [false, 10, 32 * 1024, 32 * 1024 * 1024],
    );
    t.same(
      [o.enableBackpressureForAsyncMode, o.backPressureForAsyncSendNum, o.backPressureForAsyncSendSize],
      [true, 10_000, 100 * 1024 * 1024],
    );
    for (const [option, value] of [
      ['batchMaxDelayMs', 0],
      ['batchMaxDelayMs', 30_001],
      ['batchMaxBytes', 2 * 1024 * 1024 + 1],
      ['backPressureForAsyncSendNum', 9],
      ['backPressureForAsyncSendSize', 1024 * 1024 - 1],
    ] as const)
      t.throws(
        () => resolveProducerOptions({ namesrvAddr: '127.0.0.1:9876', group: 'g', [option]: value }),
        { name: 'ProducerOptionError', option },
        `${option} ${value}`,
      );
  },
);

t.test(
  'messages to one topic wait batchMaxDelayMs, then go as one batch; each caller gets its own result',
  async (t) => {
    const { acc, clock, sent } = accumulator();
    const results = ['m0', 'm1', 'm2'].map((body, i) =>
      acc.add({ topic: 'T', body, tags: 'x', keys: `k${i}`, properties: { n: String(i) } }, {}),
    );
    clock.advance(9);
    t.equal(sent.length, 0, 'nothing sent before 10 ms');
    clock.advance(1);
    t.equal(sent.length, 1, 'one send at 10 ms');
    const { p } = sent[0]!;
    t.equal(p.batch, true);
    t.equal(p.topic, 'T');
    const members = decodeBatch(p.body);
    t.same(
      members.map((m) => m.body.toString()),
      ['m0', 'm1', 'm2'],
      'members in send order',
    );
    const props = members.map((m) => m.properties);
    t.same(
      props.map((q) => [q.TAGS, q.KEYS, q.n]),
      [
        ['x', 'k0', '0'],
        ['x', 'k1', '1'],
        ['x', 'k2', '2'],
      ],
      'each member keeps its own tags, keys and properties',
    );
    t.equal(new Set(props.map((q) => q.UNIQ_KEY)).size, 3, 'each member has its own UNIQ_KEY');
    sent[0]!.answer({ queueOffset: 40, offsetMsgId: 'O0,O1,O2' });
    const got = await Promise.all(results);
    t.same(
      got.map((r) => [r.msgId, r.offsetMsgId, r.queueOffset]),
      props.map((q, i) => [q.UNIQ_KEY, `O${i}`, 40 + i]),
      "msgId, offsetMsgId and queueOffset of each caller's own message, as Java's splitSendResults",
    );
    t.equal(acc.heldBytes, 0, 'nothing held once the batch settled');
  },
);

t.test(
  'a batch whose bodies pass batchMaxBytes goes at once; tags, waitStoreMsgOK and a chosen queue split batches',
  async (t) => {
    const { acc, clock, sent } = accumulator({ batchMaxBytes: 100 });
    void acc.add({ topic: 'T', body: Buffer.alloc(60) }, {});
    t.equal(sent.length, 0);
    void acc.add({ topic: 'T', body: Buffer.alloc(60) }, {});
    t.equal(sent.length, 1, '120 bytes > 100: sent without waiting for the delay');
    t.equal(decodeBatch(sent[0]!.p.body).length, 2);
    const q = { topic: 'T', brokerName: 'b', queueId: 3 };
    void acc.add({ topic: 'T', body: 'a', tags: 'x' }, {});
    void acc.add({ topic: 'T', body: 'b', tags: 'y' }, {});
    void acc.add({ topic: 'T', body: 'c', tags: 'x', waitStoreMsgOK: false }, {});
    void acc.add({ topic: 'T', body: 'd', tags: 'x' }, { queue: q });
    void acc.add({ topic: 'T', body: 'e', tags: 'x' }, {});
    clock.advance(10);
    const batches = sent.slice(1).map((s) => ({
      bodies: decodeBatch(s.p.body).map((m) => m.body.toString()),
      queue: s.opts.queue,
      wait: decodeProperties(s.p.properties).WAIT,
    }));
    t.same(
      batches,
      [
        { bodies: ['a', 'e'], queue: undefined, wait: 'true' },
        { bodies: ['b'], queue: undefined, wait: 'true' },
        { bodies: ['c'], queue: undefined, wait: 'false' },
        { bodies: ['d'], queue: q, wait: 'true' },
      ],
      'one batch per topic, queue, tags and waitStoreMsgOK',
    );
  },
);

t.test('which sends may join a batch, as Java canBatch; a batch never grows past maxMessageSize', async (t) => {
  const { acc, sent } = accumulator({ maxMessageSize: 1000, totalBatchMaxBytes: 500 });
  t.ok(acc.eligible({ topic: 'T', body: 'x' }, {}));
  t.notOk(acc.eligible({ topic: 'T', body: 'x', delayTimeLevel: 2 }, {}), 'delay level');
  t.notOk(acc.eligible({ topic: 'T', body: 'x', delayMs: 5000 }, {}), 'timer');
  t.notOk(acc.eligible({ topic: '%RETRY%g', body: 'x' }, {}), 'retry topic');
  t.notOk(acc.eligible({ topic: 'T', body: 'x' }, { timeoutMs: 100 }), 'a send with its own timeout');
  t.notOk(acc.eligible({ topic: 'T', body: 'x' }, { selector: (qs) => qs[0]! }), 'a selector');
  void acc.add({ topic: 'T', body: Buffer.alloc(450) }, {});
  t.ok(acc.eligible({ topic: 'T', body: 'x' }, {}), '450 bytes held < 500');
  void acc.add({ topic: 'T', body: Buffer.alloc(450) }, {});
  t.equal(sent.length, 1, 'the second 450-byte body would take the batch past 1000 bytes: the first went alone');
  t.notOk(acc.eligible({ topic: 'T', body: 'x' }, {}), '900 bytes held ≥ totalBatchMaxBytes: sent alone');
  await t.rejects(acc.add({ topic: 'T', body: Buffer.alloc(1001) }, {}), { name: 'MessageValidationError' });
});

t.test("a failed batch fails every caller's send with its error; flushAll sends what is gathering", async (t) => {
  const { acc, sent } = accumulator();
  const a = acc.add({ topic: 'T', body: 'a' }, {});
  const b = acc.add({ topic: 'T', body: 'b' }, {});
  const all = acc.flushAll();
  t.equal(sent.length, 1, 'flushAll sends without waiting for the delay');
  const boom = new Error('broker gone');
  sent[0]!.answer(boom);
  await t.rejects(a, boom);
  await t.rejects(b, boom);
  await all;
  t.equal(acc.heldBytes, 0);
});

t.test(
  'FairSemaphore: waiters served in order, a timed-out waiter gives up, an oversized request takes all',
  async (t) => {
    const clock = new ManualClock();
    const s = new FairSemaphore(10, clock);
    t.ok(s.tryAcquire(5));
    const order: string[] = [];
    const big = s.acquire(10, 1000).then((ok) => order.push(`big:${ok}`));
    const small = s.acquire(1, 1000).then((ok) => order.push(`small:${ok}`));
    t.notOk(s.tryAcquire(1), 'a free permit is not taken past waiters');
    await Promise.resolve();
    t.same(order, [], 'small waits behind big although 5 permits are free');
    s.release(5);
    await big;
    t.same(order, ['big:true'], 'big first');
    const late = s.acquire(1, 300);
    clock.advance(300);
    t.equal(await late, false, 'timed out after 300 ms');
    s.release(10);
    await small;
    t.same(order, ['big:true', 'small:true']);
    t.equal(s.cost(50), 10, 'a request above capacity costs the capacity');
  },
);

t.test(
  'back-pressure: the 11th send waits for a permit, runs when one settles, and times out with a typed error',
  async (t) => {
    const clock = new ManualClock();
    const bp = new AsyncBackpressure(
      { backPressureForAsyncSendNum: 10, backPressureForAsyncSendSize: 1024 * 1024 },
      clock,
    );
    const settle: (() => void)[] = [];
    const started: number[] = [];
    const send = (i: number) => (leftMs: number) => {
      started.push(i);
      return new Promise<number>((resolve) => settle.push(() => resolve(leftMs)));
    };
    const first = Array.from({ length: 10 }, (_, i) => bp.run('T', 100, 3000, send(i)));
    const eleventh = bp.run('T', 100, 3000, send(10));
    t.equal(started.length, 10, 'ten run, the eleventh waits');
    t.equal(bp.num.waiting, 1);
    clock.advance(40);
    settle[0]!();
    await first[0];
    t.equal(await Promise.race([eleventh.then(() => 'done'), Promise.resolve('pending')]), 'pending');
    t.same(started.slice(-1), [10], 'the eleventh runs once a send settled');
    settle[10]!();
    t.equal(await eleventh, 2960, 'with the budget left after its 40 ms wait');
    bp.run('T', 100, 3000, send(11)); // takes the freed permit
    const twelfth = bp.run('T', 100, 3000, send(12));
    clock.advance(3000);
    await t.rejects(twelfth, {
      name: 'SendBackpressureTimeoutError',
      limit: 'backPressureForAsyncSendNum',
      capacity: 10,
    });
    t.ok((await twelfth.catch((e) => e)) instanceof SendBackpressureTimeoutError);
    t.notOk(started.includes(12), 'a send that timed out waiting never ran');
  },
);

t.test('back-pressure by bytes: sends wait while their bodies would pass backPressureForAsyncSendSize', async (t) => {
  const clock = new ManualClock();
  const MiB = 1024 * 1024;
  const bp = new AsyncBackpressure({ backPressureForAsyncSendNum: 10, backPressureForAsyncSendSize: MiB }, clock);
  let release!: () => void;
  const held = bp.run('T', 0.75 * MiB, 3000, () => new Promise<void>((r) => (release = r)));
  let ran = false;
  const next = bp.run('T', 0.5 * MiB, 3000, async () => {
    ran = true;
  });
  t.equal(bp.size.inUse, 0.75 * MiB);
  t.notOk(ran, '0.75 + 0.5 MiB > 1 MiB: waits');
  t.equal(bp.num.inUse, 2, 'while holding its count permit');
  release();
  await held;
  await next;
  t.ok(ran);
  t.equal(bp.num.inUse + bp.size.inUse, 0, 'every permit given back');
  const hold = bp.run('T', MiB, 3000, () => new Promise<void>(() => undefined));
  const starved = bp.run('T', 10, 500, async () => undefined);
  clock.advance(500);
  await t.rejects(starved, { name: 'SendBackpressureTimeoutError', limit: 'backPressureForAsyncSendSize' });
  t.equal(bp.num.inUse, 1, 'the timed-out send gave its count permit back');
  void hold;
});
