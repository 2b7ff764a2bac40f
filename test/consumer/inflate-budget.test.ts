import { deflateSync } from 'node:zlib';
import { randomBytes } from 'node:crypto';
import t, { type Test } from 'tap';
import {
  LitePullConsumer,
  PushConsumer,
  type UndecodableMessageError,
  type MessageExt,
} from '../../lib/consumer/index.js';
import { litePullConsumerImpl } from '../../lib/consumer/lite-pull/lite-pull-consumer.js';
import { pushConsumerImpl } from '../../lib/consumer/push/push-consumer.js';
import { RemotingClient } from '../../lib/remoting/index.js';
import { RequestCode, createRequest } from '../../protocol/index.js';
import { SetMessageRequestModeRequestBody } from '../../protocol/body/pop-bodies.js';
import { createResponse, encodeStoredMessage, PullMessageResponseHeader, ResponseCode } from '../../protocol/index.js';
import { routeJson, startFakeNameServer } from '../client/fake-cluster.js';
import { fakeConsumerBroker } from '../cli/fake-consumer-broker.js';
import { SimpleConsumer, type ReceivedMessage } from '../../lib/consumer/pop/simple-consumer.js';
import { MQClientInstance } from '../../lib/client/index.js';
import { messageQueue } from '../../protocol/internal.js';
import type { EmbeddedBroker } from '../../lib/broker/index.js';
import { COMPRESSED_ZLIB, sendRaw } from '../cli/raw-send.js';
import { brokerOffsets, uniqueName, until, withBroker } from './helpers.js';

// A decompression bound per body (64 MiB) alone is not enough: 64 zlib bodies of 64 KB that
// inflate to 63 MiB each (4 GB from 4 MB on disk) would run every consumer past 1.5 GB. Each
// consumer inflates at most max(maxInflatedBytesPerPull, maxInflatedBodyBytes)
// per pull (the rest is pulled again, or inflated in a later round), its process queues count
// inflated bytes, and a body over maxInflatedBodyBytes is refused: sent back (push), left unacked
// (POP), reported and passed (lite pull); never dropped without a word.

const KIB = 1024;
const MIB = 1024 * KIB;

const zeros = new Map<number, Buffer>();
/** A zlib body of `size` zero bytes: 2 MiB → 2 KB, 63 MiB → 64 KB. Cached: one compression per size. */
function zeroBomb(size: number): Buffer {
  let b = zeros.get(size);
  if (!b) zeros.set(size, (b = deflateSync(Buffer.alloc(size), { level: 9 })));
  return b;
}

/** A legitimate body of `size` bytes that says which it is (`legit-<i>:` then filler). */
function legitBody(i: number, size: number): Buffer {
  const b = Buffer.alloc(size, 0x61 + (i % 26));
  b.write(`legit-${i}:`);
  return b;
}

interface Layout {
  /** Queue offsets of the bombs. */
  bombs: number[];
  /** Queue offset → the legitimate body stored there (inflated). */
  legit: Map<number, Buffer>;
  total: number;
}

/**
 * Stores on queue 0 of `topic`: a plain message, then `n` times (a bomb inflating to `bombSize`, a
 * compressed legitimate body of `legitSize`), then a plain message.
 */
async function storeBombs(
  b: EmbeddedBroker,
  topic: string,
  n: number,
  bombSize: number,
  legitSize: number,
): Promise<Layout> {
  const legit = new Map<number, Buffer>();
  const bombs: number[] = [];
  let off = 0;
  const plain = async (): Promise<void> => {
    const body = Buffer.from(`plain-${off}`);
    await sendRaw(b.broker, topic, 0, body, 0);
    legit.set(off++, body);
  };
  await plain();
  for (let i = 0; i < n; i++) {
    await sendRaw(b.broker, topic, 0, zeroBomb(bombSize), COMPRESSED_ZLIB);
    bombs.push(off++);
    const body = legitBody(i, legitSize);
    await sendRaw(b.broker, topic, 0, deflateSync(body), COMPRESSED_ZLIB);
    legit.set(off++, body);
  }
  await plain();
  return { bombs, legit, total: off };
}

async function maxOffset(b: EmbeddedBroker, topic: string): Promise<number> {
  const inst = MQClientInstance.acquire({ namesrvAddr: b.namesrv, instanceName: uniqueName('probe') });
  try {
    return await inst.getMaxOffset(b.broker, messageQueue(topic, 'broker-a', 0));
  } finally {
    await inst.release();
  }
}

/** Highest RSS seen while `run` runs, sampled every 20 ms. */
async function peakRss<T>(run: () => Promise<T>): Promise<{ result: T; peak: number }> {
  let peak = process.memoryUsage.rss();
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, 20);
  try {
    const result = await run();
    return { result, peak: Math.max(peak, process.memoryUsage.rss()) };
  } finally {
    clearInterval(timer);
  }
}

// Small sizes for the logic: bombs of 2 MiB against a 1 MiB cap, legitimate bodies of 768 KiB, a
// budget of 2 MiB per pull (each pull inflates two or three legitimate bodies, then is cut).
const SMALL = { maxInflatedBodyBytes: 1 * MIB, maxInflatedBytesPerPull: 2 * MIB };

t.test(
  'push (concurrent): 64 bombs over maxInflatedBodyBytes go to the DLQ, the 66 messages around them arrive intact, each pull and queue bounded',
  async (t) => {
    const b = await withBroker({ queues: 1 });
    t.teardown(() => b.close());
    const topic = uniqueName('Bomb');
    const group = uniqueName('cg');
    const layout = await storeBombs(b, topic, 64, 2 * MIB, 768 * KIB);
    const c = new PushConsumer({
      group,
      namesrvAddr: b.namesrv,
      subscriptions: { [topic]: '*' },
      consumeFromWhere: 'first',
      ...SMALL,
      pullThresholdSizeForQueueMiB: 1,
      maxReconsumeTimes: 0,
      logger: false,
    });
    const events: UndecodableMessageError[] = [];
    c.on('undecodable', (e) => events.push(e));
    const got = new Map<number, Buffer>();
    await c.start(async (msgs) => {
      // slow enough for the cache to fill up, so flow control by size has something to stop
      await new Promise((r) => setTimeout(r, 2));
      for (const m of msgs) if (m.topic === topic) got.set(m.queueOffset, m.body);
    });
    t.teardown(() => c.shutdown());
    await until(
      () => got.size === layout.legit.size && c.stats().sendBackOk === 64,
      'the legitimate messages and the 64 send-backs',
      30_000,
    );
    for (const [off, body] of layout.legit)
      if (!got.get(off)?.equals(body)) t.fail(`message at ${off} not delivered intact`);
    t.equal(got.size, 66, 'every legitimate message, intact, none of the bombs');
    t.same(
      events.map((e) => e.queueOffset).sort((x, y) => x - y),
      layout.bombs,
      'one event per bomb, at its offset',
    );
    t.match(events[0], {
      name: 'UndecodableMessageError',
      disposition: 'sent-back',
      option: 'maxInflatedBodyBytes',
      limit: MIB,
      recordIntact: true,
      queueId: 0,
      topic,
    });
    t.match(events[0]!.message, /exceeds the limit of 1048576 bytes.*raise the option maxInflatedBodyBytes/);
    const s = c.stats();
    t.equal(s.inflate.refusedTooLarge, 64);
    t.ok(
      s.inflate.maxInflatedBytesOfPull <= 2 * MIB,
      `a pull inflated at most the budget (${s.inflate.maxInflatedBytesOfPull} bytes)`,
    );
    t.ok(s.inflate.budgetCuts >= 20, `pulls were cut at the budget and pulled again (${s.inflate.budgetCuts})`);
    const q = s.queues.find((x) => x.topic === topic)!;
    // flow control lets a pull out while the cache is under (1 + 1) MiB; that pull adds at most the budget
    t.ok(
      q.peakCachedBytes < 2 * MIB + 2 * MIB + 64 * KIB,
      `the queue held at most threshold + budget (${q.peakCachedBytes} bytes)`,
    );
    await until(async () => (await maxOffset(b, `%DLQ%${group}`)) === 64, 'the 64 bombs in the DLQ');
    await c.shutdown();
    const rows = await brokerOffsets(b.namesrv, topic, group);
    t.equal(rows[0]!.committed, layout.total, 'committed past everything: consumed or sent back');
    // The DLQ holds the bombs as stored (compressed): a reader with a larger cap inflates them.
    const reader = new PushConsumer({
      group: uniqueName('dlq'),
      namesrvAddr: b.namesrv,
      subscriptions: { [`%DLQ%${group}`]: '*' },
      consumeFromWhere: 'first',
    });
    const dlq: MessageExt[] = [];
    await reader.start((msgs) => {
      dlq.push(...msgs);
    });
    t.teardown(() => reader.shutdown());
    await until(() => dlq.length === 64, 'the DLQ read back');
    t.ok(
      dlq.every((m) => m.body.length === 2 * MIB),
      'each bomb inflates to its 2 MiB there',
    );
  },
);

t.test('push (orderly): a bomb goes to the DLQ and the queue goes on in order', async (t) => {
  const b = await withBroker({ queues: 1 });
  t.teardown(() => b.close());
  const topic = uniqueName('BombOrderly');
  const group = uniqueName('cg');
  const layout = await storeBombs(b, topic, 8, 2 * MIB, 768 * KIB);
  const c = new PushConsumer({
    group,
    namesrvAddr: b.namesrv,
    subscriptions: { [topic]: '*' },
    consumeFromWhere: 'first',
    orderly: true,
    ...SMALL,
    logger: false,
  });
  const events: UndecodableMessageError[] = [];
  c.on('undecodable', (e) => events.push(e));
  const order: number[] = [];
  await c.start((msgs) => {
    for (const m of msgs) order.push(m.queueOffset);
  });
  t.teardown(() => c.shutdown());
  await until(() => order.length === layout.legit.size, 'the legitimate messages', 20_000);
  t.same(order, [...layout.legit.keys()], 'in queue order');
  t.same(
    events.map((e) => e.queueOffset),
    layout.bombs,
  );
  await until(
    async () => (await maxOffset(b, `%DLQ%${group}`)) === 8,
    'the 8 bombs in the DLQ (republished with RECONSUME_TIME = max)',
  );
  t.ok(c.stats().inflate.maxInflatedBytesOfPull <= 2 * MIB);
});

t.test(
  'lite pull: each bomb is reported with its queue and offset, then passed; the messages around it arrive',
  async (t) => {
    const b = await withBroker({ queues: 1 });
    t.teardown(() => b.close());
    const topic = uniqueName('BombLite');
    const layout = await storeBombs(b, topic, 64, 2 * MIB, 768 * KIB);
    const warned: string[] = [];
    const c = new LitePullConsumer({
      group: uniqueName('cg'),
      namesrvAddr: b.namesrv,
      consumeFromWhere: 'first',
      ...SMALL,
      logger: {
        debug: () => undefined,
        info: () => undefined,
        warn: (m: string) => void warned.push(m),
        error: () => undefined,
      },
    });
    c.subscribe(topic, '*');
    const events: UndecodableMessageError[] = [];
    c.on('undecodable', (e) => events.push(e));
    await c.start();
    t.teardown(() => c.shutdown());
    const got = new Map<number, Buffer>();
    await until(
      async () => {
        for (const m of await c.poll(100)) got.set(m.queueOffset, m.body);
        return got.size === layout.legit.size && events.length === 64;
      },
      'the legitimate messages and 64 events',
      30_000,
    );
    for (const [off, body] of layout.legit)
      if (!got.get(off)?.equals(body)) t.fail(`message at ${off} not delivered intact`);
    t.same(
      events.map((e) => e.queueOffset),
      layout.bombs,
      'one event per bomb, in order, at its offset',
    );
    t.match(events[0], {
      disposition: 'passed',
      queueId: 0,
      brokerName: 'broker-a',
      topic,
      option: 'maxInflatedBodyBytes',
      limit: MIB,
    });
    t.equal(
      warned.filter((w) => /passed the undecodable message/.test(w)).length,
      64,
      'and 64 warn lines on the logger',
    );
    const inflate = litePullConsumerImpl(c).counters.inflate;
    t.ok(
      inflate.maxInflatedBytesOfPull <= 2 * MIB,
      `a pull inflated at most the budget (${inflate.maxInflatedBytesOfPull})`,
    );
    t.ok(inflate.budgetCuts > 0);
  },
);

t.test(
  "SimpleConsumer (POP): bombs are left unacked for the broker's retry, the rest is received within the budget",
  async (t) => {
    const b = await withBroker({ queues: 1 });
    t.teardown(() => b.close());
    const topic = uniqueName('BombPop');
    const group = uniqueName('cg');
    const layout = await storeBombs(b, topic, 16, 2 * MIB, 768 * KIB);
    const c = new SimpleConsumer({
      group,
      namesrvAddr: b.namesrv,
      topic,
      initMode: 'MIN',
      awaitDurationMs: 0,
      invisibleDurationMs: 60_000,
      ...SMALL,
      logger: false,
    });
    const events: UndecodableMessageError[] = [];
    c.on('undecodable', (e) => events.push(e));
    await c.start();
    t.teardown(() => c.shutdown());
    const got = new Map<number, Buffer>();
    let largestReceive = 0;
    await until(
      async () => {
        const msgs: ReceivedMessage[] = await c.receive(32);
        let bytes = 0;
        for (const m of msgs) {
          got.set(m.queueOffset, m.body);
          bytes += m.body.length;
        }
        largestReceive = Math.max(largestReceive, bytes);
        if (msgs.length > 0) await c.ack(msgs);
        return got.size === layout.legit.size;
      },
      'the legitimate messages',
      20_000,
    );
    for (const [off, body] of layout.legit)
      if (!got.get(off)?.equals(body)) t.fail(`message at ${off} not delivered intact`);
    t.same(
      events.map((e) => e.queueOffset).sort((x, y) => x - y),
      layout.bombs,
      'one event per bomb',
    );
    t.match(events[0], { disposition: 'left-unacked', option: 'maxInflatedBodyBytes', topic });
    t.equal(
      b.instances[0]!.pop.checkpoints.inFlight(group, topic, 0),
      16,
      'the 16 bombs, and only they, are still unacked at the broker',
    );
    const s = c.stats();
    t.ok(
      s.inflate.maxInflatedBytesOfPull <= 2 * MIB,
      `a receive inflated at most the budget (${s.inflate.maxInflatedBytesOfPull})`,
    );
    t.ok(largestReceive <= 2 * MIB, 'and handed out at most that much');
    t.ok(s.inflate.budgetCuts > 0, 'popped messages past the budget waited for the next receive');
  },
);

t.test(
  'push in POP mode: bombs are left unacked, the messages around them are consumed in rounds within the budget',
  async (t) => {
    const b = await withBroker({ queues: 1 });
    t.teardown(() => b.close());
    const topic = uniqueName('BombPopMode');
    const group = uniqueName('cg');
    const layout = await storeBombs(b, topic, 16, 2 * MIB, 768 * KIB);
    const rc = new RemotingClient();
    const body = SetMessageRequestModeRequestBody.encode({
      topic,
      consumerGroup: group,
      mode: 'POP',
      popShareQueueNum: 0,
    });
    t.equal((await rc.invoke(b.broker, createRequest(RequestCode.SET_MESSAGE_REQUEST_MODE, { body }))).code, 0);
    await rc.close();
    const c = new PushConsumer({
      group,
      namesrvAddr: b.namesrv,
      subscriptions: { [topic]: '*' },
      consumeFromWhere: 'first',
      clientRebalance: false,
      popInvisibleTimeMs: 60_000,
      ...SMALL,
      pullThresholdSizeForQueueMiB: 1,
      logger: false,
    });
    const events: UndecodableMessageError[] = [];
    c.on('undecodable', (e) => events.push(e));
    const got = new Map<number, Buffer>();
    await c.start(async (msgs) => {
      await new Promise((r) => setTimeout(r, 2));
      for (const m of msgs) got.set(m.queueOffset, m.body);
    });
    t.teardown(() => c.shutdown());
    await until(
      () => got.size === layout.legit.size && events.length === 16,
      'the legitimate messages and 16 events',
      20_000,
    );
    for (const [off, body] of layout.legit)
      if (!got.get(off)?.equals(body)) t.fail(`message at ${off} not delivered intact`);
    t.same(
      events.map((e) => e.queueOffset).sort((x, y) => x - y),
      layout.bombs,
    );
    t.match(events[0], { disposition: 'left-unacked', option: 'maxInflatedBodyBytes', topic });
    await until(
      () => b.instances[0]!.pop.checkpoints.inFlight(group, topic, 0) === 16,
      'only the 16 bombs left unacked',
    );
    const s = c.stats();
    t.ok(
      s.inflate.maxInflatedBytesOfPull <= 2 * MIB,
      `a round inflated at most the budget (${s.inflate.maxInflatedBytesOfPull})`,
    );
    t.ok(s.inflate.budgetCuts > 0, 'popped messages were inflated in rounds');
    const held = pushConsumerImpl(c).popService!.peakHeldBytes;
    t.ok(held < 1 * MIB + 2 * MIB, `the popped queue held at most its threshold + one round (${held} bytes)`);
  },
);

// The real sizes: bombs of 64 KB zlib bodies inflating to 63 MiB each (under the default 64 MiB
// cap, so legitimate messages by the rules) and a 4 MB body inflating to 60 MB, through each
// consumer with its defaults. What is asserted is the bound on what one pull inflates and one queue
// holds; four bombs are enough to pass both bounds (4 × 63 MiB > 100 MiB + 64 MiB) and arrive in
// one pull. The 64-body bomb itself, 4 GiB inflated per consumer, is bench/hostile's (--bombs 64):
// here it made the suite's slowest file depend on how busy the machine's cores were.
const BOMBS = 4;
t.test('bombs at full size and a 4 MB body of 60 MB, through each consumer with its defaults', async (t) => {
  const b = await withBroker({ queues: 1 });
  t.teardown(() => b.close());
  const topic = uniqueName('BigBomb');
  const bomb = zeroBomb(63 * MIB);
  t.ok(bomb.length < 66 * KIB, `a 63 MiB body in ${bomb.length} bytes`);
  const big = Buffer.concat([randomBytes(3_900_000), Buffer.alloc(56_100_000)]);
  const bigZ = deflateSync(big);
  t.ok(bigZ.length <= 4 * 1000 * 1000, `the 60 MB body compresses to ${bigZ.length} bytes`);
  await sendRaw(b.broker, topic, 0, Buffer.from('first'), 0);
  await sendRaw(b.broker, topic, 0, bigZ, COMPRESSED_ZLIB);
  for (let i = 0; i < BOMBS; i++) await sendRaw(b.broker, topic, 0, bomb, COMPRESSED_ZLIB);
  await sendRaw(b.broker, topic, 0, Buffer.from('last'), 0);
  const total = BOMBS + 3;
  const quiet = false as const;
  const check = (t: Test, what: string, sizes: Map<number, number>, bigBody: Buffer | undefined, rss: number): void => {
    t.equal(sizes.size, total, `${what}: every message`);
    t.ok(bigBody?.equals(big), `${what}: the 60 MB body intact`);
    t.equal([...sizes.values()].filter((n) => n === 63 * MIB).length, BOMBS, `${what}: the ${BOMBS} bodies of 63 MiB`);
    t.comment(`${what}: peak RSS ${Math.round(rss / MIB)} MiB`);
    t.ok(rss < 1536 * MIB, `${what}: RSS stayed under the 1.5 GB the issue saw (${Math.round(rss / MIB)} MiB)`);
  };

  await t.test('push', async (t) => {
    const c = new PushConsumer({
      group: uniqueName('cg'),
      namesrvAddr: b.namesrv,
      subscriptions: { [topic]: '*' },
      consumeFromWhere: 'first',
      logger: quiet,
    });
    const sizes = new Map<number, number>();
    let bigBody: Buffer | undefined;
    const { peak } = await peakRss(async () => {
      await c.start((msgs) => {
        for (const m of msgs) {
          sizes.set(m.queueOffset, m.body.length);
          if (m.queueOffset === 1) bigBody = Buffer.from(m.body);
        }
      });
      await until(() => sizes.size === total, 'every message', 40_000);
    });
    const s = c.stats();
    await c.shutdown();
    check(t, 'push', sizes, bigBody, peak);
    t.ok(
      s.inflate.maxInflatedBytesOfPull <= 64 * MIB,
      `push: a pull inflated at most 64 MiB (${s.inflate.maxInflatedBytesOfPull})`,
    );
    const q = s.queues.find((x) => x.topic === topic)!;
    t.comment(`push: ${JSON.stringify(s.inflate)}, peakCachedBytes ${q.peakCachedBytes}`);
    t.ok(
      q.peakCachedBytes <= 101 * MIB + 64 * MIB,
      `push: the queue held at most 100 MiB + one pull (${Math.round(q.peakCachedBytes / MIB)} MiB)`,
    );
  });

  await t.test('lite pull', async (t) => {
    const c = new LitePullConsumer({
      group: uniqueName('cg'),
      namesrvAddr: b.namesrv,
      consumeFromWhere: 'first',
      logger: quiet,
    });
    c.subscribe(topic, '*');
    const sizes = new Map<number, number>();
    let bigBody: Buffer | undefined;
    const { peak } = await peakRss(async () => {
      await c.start();
      await until(
        async () => {
          for (const m of await c.poll(100)) {
            sizes.set(m.queueOffset, m.body.length);
            if (m.queueOffset === 1) bigBody = Buffer.from(m.body);
          }
          return sizes.size === total;
        },
        'every message',
        40_000,
      );
    });
    const inflate = { ...litePullConsumerImpl(c).counters.inflate };
    await c.shutdown();
    check(t, 'lite pull', sizes, bigBody, peak);
    t.comment(`lite pull: ${JSON.stringify(inflate)}`);
    t.ok(
      inflate.maxInflatedBytesOfPull <= 64 * MIB,
      `lite pull: a pull inflated at most 64 MiB (${inflate.maxInflatedBytesOfPull})`,
    );
  });

  await t.test('SimpleConsumer', async (t) => {
    const c = new SimpleConsumer({
      group: uniqueName('cg'),
      namesrvAddr: b.namesrv,
      topic,
      initMode: 'MIN',
      awaitDurationMs: 0,
      logger: quiet,
    });
    const sizes = new Map<number, number>();
    let bigBody: Buffer | undefined;
    const { peak } = await peakRss(async () => {
      await c.start();
      await until(
        async () => {
          const msgs = await c.receive(32);
          for (const m of msgs) {
            sizes.set(m.queueOffset, m.body.length);
            if (m.queueOffset === 1) bigBody = Buffer.from(m.body);
          }
          if (msgs.length > 0) await c.ack(msgs);
          return sizes.size === total;
        },
        'every message',
        40_000,
      );
    });
    const s = c.stats();
    await c.shutdown();
    check(t, 'SimpleConsumer', sizes, bigBody, peak);
    t.comment(`SimpleConsumer: ${JSON.stringify(s.inflate)}`);
    t.ok(
      s.inflate.maxInflatedBytesOfPull <= 64 * MIB,
      `SimpleConsumer: a receive inflated at most 64 MiB (${s.inflate.maxInflatedBytesOfPull})`,
    );
  });
});

t.test(
  'a broker that answers a pull with 200 bombs (12.8 MB frame, 12.6 GB inflated): each pull inflates at most 64 MiB and is cut there',
  async (t) => {
    // The embedded and Java brokers send at most 256 KiB of messages per pull from memory; a hostile
    // (or reconfigured) broker may fill a 16 MiB frame, and every body of it would be inflated.
    const bomb = zeroBomb(63 * MIB);
    const record = (offset: number): Buffer =>
      encodeStoredMessage({
        topic: 'T',
        queueId: 0,
        queueOffset: offset,
        commitLogOffset: offset * 70_000,
        sysFlag: COMPRESSED_ZLIB,
        body: bomb,
        properties: {},
        bornTimestamp: 1,
        bornHost: '10.0.0.1:5000',
        storeTimestamp: 2,
        storeHost: '10.0.0.2:10911',
      });
    const pulledFrom: number[] = [];
    const broker = await fakeConsumerBroker((req) => {
      const from = Number(req.extFields!.queueOffset);
      pulledFrom.push(from);
      return createResponse(req, ResponseCode.SUCCESS, {
        extFields: PullMessageResponseHeader.encode({
          suggestWhichBrokerId: 0,
          nextBeginOffset: from + 200,
          minOffset: 0,
          maxOffset: 1000,
        }),
        body: Buffer.concat(Array.from({ length: 200 }, (_, i) => record(from + i))),
      });
    });
    const ns = await startFakeNameServer(
      new Map([['T', routeJson([{ name: 'broker-a', addrs: { '0': broker.addr }, queues: 1 }])]]),
    );
    t.teardown(async () => {
      await ns.close();
      await broker.close();
    });
    const c = new PushConsumer({
      group: 'cg',
      namesrvAddr: ns.addr,
      subscriptions: { T: '*' },
      consumeFromWhere: 'first',
      logger: false,
    });
    const got: number[] = [];
    const { peak } = await peakRss(async () => {
      await c.start((msgs) => {
        for (const m of msgs) if (m.body.length === 63 * MIB) got.push(m.queueOffset);
      });
      await until(() => got.length >= 3, 'three bombs consumed', 20_000);
    });
    const s = c.stats();
    await c.shutdown();
    t.same(
      pulledFrom.slice(0, 3),
      [0, 1, 2],
      'each pull was cut after its first 63 MiB body, the next one starts at the first body not inflated',
    );
    t.same(got.slice(0, 3), [0, 1, 2]);
    t.ok(
      s.inflate.maxInflatedBytesOfPull <= 64 * MIB,
      `at most 64 MiB inflated per pull (${s.inflate.maxInflatedBytesOfPull})`,
    );
    t.comment(`hostile broker: peak RSS ${Math.round(peak / MIB)} MiB`);
    t.ok(peak < 1536 * MIB, `RSS ${Math.round(peak / MIB)} MiB`);
  },
);

t.test('the inflate options are checked and named', async (t) => {
  t.throws(() => new PushConsumer({ group: 'g', namesrvAddr: 'h:1', maxInflatedBodyBytes: 10 }), {
    name: 'ConsumerOptionError',
    option: 'maxInflatedBodyBytes',
  });
  t.throws(() => new PushConsumer({ group: 'g', namesrvAddr: 'h:1', maxInflatedBytesPerPull: 2 ** 31 }), {
    name: 'ConsumerOptionError',
    option: 'maxInflatedBytesPerPull',
  });
  t.throws(() => new LitePullConsumer({ group: 'g', namesrvAddr: 'h:1', maxInflatedBytesPerPull: 1.5 }), {
    name: 'ConsumerOptionError',
    option: 'maxInflatedBytesPerPull',
  });
  t.throws(() => new SimpleConsumer({ group: 'g', namesrvAddr: 'h:1', topic: 'T', maxInflatedBodyBytes: -1 }), {
    name: 'ConsumerOptionError',
    option: 'maxInflatedBodyBytes',
  });
});
