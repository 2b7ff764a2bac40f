import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import t, { type Test } from 'tap';
import { RequestCode, ResponseCode, createRequest } from '../../protocol/index.js';
import { decodeReceiptHandle } from '../../protocol/pop-extra-info.js';
import { startBroker, type EmbeddedBroker } from '../../lib/broker/index.js';
import { ManualClock } from '../../lib/clock.js';
import { SimpleConsumer, type ReceivedMessage } from '../../lib/consumer/pop/simple-consumer.js';
import { client } from './helpers.js';
import { produce, uniqueName } from '../consumer/helpers.js';

// The embedded broker's POP (PopMessageProcessor, AckMessageProcessor,
// ChangeInvisibleTimeProcessor, PopReviveService), driven by rocketwire's SimpleConsumer. Broker
// and consumer share one ManualClock, so invisible times and revives run in milliseconds.

const INVISIBLE = 60_000;

async function setup(
  t: Test,
  opts: { dataDir?: string; clock?: ManualClock } = {},
): Promise<{ b: EmbeddedBroker; clock: ManualClock; topic: string; group: string }> {
  const clock = opts.clock ?? new ManualClock();
  const b = await startBroker({ queues: 4, clock, ...(opts.dataDir ? { dataDir: opts.dataDir } : {}) });
  t.teardown(() => b.close());
  return { b, clock, topic: uniqueName('PopT'), group: uniqueName('PopG') };
}

function consumer(
  t: Test,
  b: EmbeddedBroker,
  clock: ManualClock,
  topic: string,
  group: string,
  extra: Partial<ConstructorParameters<typeof SimpleConsumer>[0]> = {},
): SimpleConsumer {
  const c = new SimpleConsumer({
    namesrvAddr: b.namesrv,
    consumerGroup: group,
    topic,
    initMode: 'MIN',
    awaitDurationMs: 0,
    clock,
    instanceName: uniqueName('i'),
    ...extra,
  });
  t.teardown(() => c.shutdown());
  return c;
}

/** Receive until nothing comes (awaitDurationMs 0: every receive answers at once). */
async function drain(c: SimpleConsumer, rounds = 12): Promise<ReceivedMessage[]> {
  const out: ReceivedMessage[] = [];
  for (let i = 0; i < rounds; i++) out.push(...(await c.receive(32, INVISIBLE)));
  return out;
}

/** Every request the broker gets (code, header serialize type), ahead of its processor. */
function spy(b: EmbeddedBroker): { code: number; serializeType: string }[] {
  const seen: { code: number; serializeType: string }[] = [];
  const processors = b.instances[0]!.server['processors'] as Map<
    number,
    (req: { code: number; serializeType: string }, conn: unknown) => unknown
  >;
  for (const [code, fn] of processors) {
    processors.set(code, (req, conn) => {
      seen.push({ code, serializeType: req.serializeType });
      return fn(req, conn);
    });
  }
  return seen;
}

const bodies = (ms: ReceivedMessage[]): string[] => ms.map((m) => m.body.toString()).sort();

t.test('receive hands out every message once with a receipt handle; acked ones never come back', async (t) => {
  const { b, clock, topic, group } = await setup(t);
  await produce(b.namesrv, topic, 10, undefined, { single: true });
  const c = consumer(t, b, clock, topic, group);
  await c.start();
  const got = await drain(c);
  t.equal(got.length, 10, 'all 10 popped');
  t.equal(new Set(bodies(got)).size, 10, 'each once');
  for (const m of got) {
    const rh = decodeReceiptHandle(m.receiptHandle);
    t.equal(rh.brokerName, 'broker-a');
    t.equal(rh.queueId, m.queueId);
    t.equal(rh.queueOffset, m.queueOffset);
    t.equal(rh.retry, '0');
    t.equal(rh.invisibleTime, INVISIBLE);
    t.equal(m.topic, topic);
    t.equal(m.properties['1ST_POP_TIME'], String(rh.popTime));
  }
  for (const m of got) t.equal(await c.ack(m), 'OK');
  t.equal(b.instances[0]!.pop.checkpoints.size, 0, 'no checkpoint left open');
  clock.advance(INVISIBLE + 2000);
  t.same(await drain(c, 3), [], 'nothing is delivered again');
});

t.test(
  'messages not acked come back after the invisible time, from the pop retry topic, and their ack holds',
  async (t) => {
    const { b, clock, topic, group } = await setup(t);
    await produce(b.namesrv, topic, 6, undefined, { single: true });
    const c = consumer(t, b, clock, topic, group);
    await c.start();
    const got = await drain(c);
    t.equal(got.length, 6);
    const acked = got.slice(0, 2);
    for (const m of acked) await c.ack(m);
    clock.advance(INVISIBLE - 1000);
    t.same(await drain(c, 3), [], 'still invisible before the invisible time is over');
    clock.advance(3000);
    const again = await drain(c);
    t.same(bodies(again), bodies(got.slice(2)), 'the 4 not acked are delivered again, the acked 2 are not');
    for (const m of again) {
      t.equal(m.topic, topic, 'under the topic popped, not the retry topic');
      t.equal(m.reconsumeTimes, 1);
      t.equal(decodeReceiptHandle(m.receiptHandle).retry, '1', 'the receipt says it came from %RETRY%group_topic');
      t.equal(await c.ack(m), 'OK');
    }
    clock.advance(INVISIBLE + 2000);
    t.same(await drain(c, 3), [], 'acked retries never come back');
    t.ok(b.instances[0]!.topics.get(`%RETRY%${group}_${topic}`), 'the pop retry topic exists');
  },
);

t.test('changeInvisibleDuration moves the deadline; the new receipt acks it', async (t) => {
  const { b, clock, topic, group } = await setup(t);
  await produce(b.namesrv, topic, 1);
  const c = consumer(t, b, clock, topic, group);
  await c.start();
  const [m] = await drain(c);
  t.ok(m);
  clock.advance(1000);
  const moved = await c.changeInvisibleDuration(m!, 120_000);
  t.not(moved.receiptHandle, m!.receiptHandle, 'a new receipt handle');
  const rh = decodeReceiptHandle(moved.receiptHandle);
  t.equal(rh.invisibleTime, 120_000);
  t.equal(rh.popTime, clock.now(), 'counted from the change');
  t.equal(rh.ckQueueOffset, m!.queueOffset);
  clock.advance(INVISIBLE + 2000);
  t.same(await drain(c, 3), [], 'not back at the old deadline');
  clock.advance(60_000);
  const back = await drain(c, 3);
  t.same(bodies(back), [m!.body.toString()], 'back at the new deadline');

  // and a changed message that is acked with its new receipt stays acked
  await produce(b.namesrv, topic, 1);
  const [n] = (await drain(c, 6)).filter((x) => x.reconsumeTimes === 0);
  t.ok(n);
  const n2 = await c.changeInvisibleDuration(n!, 5000);
  t.equal(await c.ack(n2), 'OK');
  for (const x of back) await c.ack(x);
  clock.advance(130_000);
  t.same(await drain(c, 3), [], 'acked after the change: never back');
});

t.test('ack of several messages is one BATCH_ACK per broker', async (t) => {
  const { b, clock, topic, group } = await setup(t);
  await produce(b.namesrv, topic, 20, undefined, { single: true });
  const c = consumer(t, b, clock, topic, group);
  await c.start();
  const got = await drain(c);
  t.equal(got.length, 20);
  const seen = spy(b);
  t.equal(await c.ack(got), 'OK');
  t.equal(seen.filter((r) => r.code === RequestCode.BATCH_ACK_MESSAGE).length, 1, 'one BATCH_ACK');
  t.equal(seen.filter((r) => r.code === RequestCode.ACK_MESSAGE).length, 0, 'no single ACK');
  t.equal(b.instances[0]!.pop.checkpoints.size, 0, 'every checkpoint closed');
  clock.advance(INVISIBLE + 2000);
  t.same(await drain(c, 3), [], 'none comes back');
});

t.test('checkpoints survive a broker restart: what was not acked still comes back', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rw-pop-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const clock = new ManualClock();
  const topic = uniqueName('PopR');
  const group = uniqueName('PopRG');
  let b = await startBroker({ queues: 4, clock, dataDir: dir });
  await produce(b.namesrv, topic, 5, undefined, { single: true });
  let c = new SimpleConsumer({
    namesrvAddr: b.namesrv,
    consumerGroup: group,
    topic,
    initMode: 'MIN',
    awaitDurationMs: 0,
    clock,
    instanceName: uniqueName('i'),
  });
  await c.start();
  const got = await drain(c);
  t.equal(got.length, 5);
  await c.ack(got[0]!);
  await c.shutdown();
  await b.close();
  t.ok(fs.existsSync(path.join(dir, 'config', 'popCheckpoints.json')), 'checkpoints written to the store folder');

  b = await startBroker({ queues: 4, clock, dataDir: dir });
  t.teardown(() => b.close());
  c = consumer(t, b, clock, topic, group);
  await c.start();
  t.same(await drain(c, 3), [], 'the restart does not make them visible early');
  clock.advance(INVISIBLE + 2000);
  const back = await drain(c);
  t.same(bodies(back), bodies(got.slice(1)), 'the 4 not acked come back after the restart');
});

t.test('a receive waits (long polling) and is answered as soon as a message arrives', async (t) => {
  const { b, clock, topic, group } = await setup(t);
  await produce(b.namesrv, topic, 1);
  const c = consumer(t, b, clock, topic, group, { awaitDurationMs: 15_000 });
  await c.start();
  t.equal((await c.receive(32, INVISIBLE)).length, 1);
  let done = false;
  const pending = c.receive(32, INVISIBLE).finally(() => (done = true));
  for (let i = 0; i < 200 && b.instances[0]!.pop.pollingNum === 0; i++) await new Promise((r) => setTimeout(r, 5));
  t.equal(b.instances[0]!.pop.pollingNum, 1, 'the pop waits on the broker');
  t.equal(done, false);
  await produce(b.namesrv, topic, 1);
  const got = await pending;
  t.same(bodies(got), ['message-0']);
  t.equal(b.instances[0]!.pop.pollingNum, 0);

  // with nothing arriving, the poll time ends it with no messages (POLLING_TIMEOUT)
  const empty = c.receive(32, INVISIBLE);
  for (let i = 0; i < 200 && b.instances[0]!.pop.pollingNum === 0; i++) await new Promise((r) => setTimeout(r, 5));
  clock.advance(15_000);
  t.same(await empty, []);
});

t.test(
  'a POP code truncated to int16 (as Java writes 200050 in a ROCKETMQ header) is answered REQUEST_CODE_NOT_SUPPORTED',
  async (t) => {
    const { b } = await setup(t);
    const raw = client('ROCKETMQ');
    t.teardown(() => raw.close());
    const truncated = (RequestCode.POP_MESSAGE << 16) >> 16;
    t.equal(truncated, 3442);
    const res = await raw.invoke(
      b.broker,
      createRequest(truncated, { extFields: { consumerGroup: 'g', topic: 't' }, serializeType: 'ROCKETMQ' }),
    );
    t.equal(res.code, ResponseCode.REQUEST_CODE_NOT_SUPPORTED);
    t.equal(res.remark, ' request type 3442 not supported', "Apache's remark");
  },
);

t.test('a consumer whose serialize type is ROCKETMQ still pops: codes above int16 go with JSON headers', async (t) => {
  const { b, clock, topic, group } = await setup(t);
  await produce(b.namesrv, topic, 3, undefined, { single: true });
  const seen = spy(b);
  const c = consumer(t, b, clock, topic, group, { serializeType: 'ROCKETMQ' });
  await c.start();
  const got = await drain(c, 4);
  t.equal(got.length, 3);
  for (const m of got) t.equal(await c.ack(m), 'OK');
  const pops = seen.filter((r) => r.code === RequestCode.POP_MESSAGE || r.code === RequestCode.ACK_MESSAGE);
  t.ok(pops.length >= 5, 'the POPs and ACKs reached the broker');
  t.same([...new Set(pops.map((r) => r.serializeType))], ['JSON'], 'POP and ACK arrived as JSON');
});

t.test('bad input: the broker names what is wrong', async (t) => {
  const { b, clock, topic, group } = await setup(t);
  const c = consumer(t, b, clock, 'NoSuchTopic', group);
  await t.rejects(c.start(), /NoSuchTopic|route/i, 'no route for an unknown topic');
  const c2 = consumer(t, b, clock, topic, group);
  await produce(b.namesrv, topic, 1);
  await c2.start();
  await t.rejects(c2.receive(33), { name: 'ConsumerOptionError', option: 'maxMessages' });
  await t.rejects(c2.receive(1, 10), { name: 'ConsumerOptionError', option: 'invisibleDurationMs' });
  t.throws(() => new SimpleConsumer({ namesrvAddr: b.namesrv, consumerGroup: group, topic, awaitDurationMs: -1 }), {
    name: 'ConsumerOptionError',
    option: 'awaitDurationMs',
  });
  const raw = client();
  t.teardown(() => raw.close());
  const pop = (fields: Record<string, string>) =>
    raw.invoke(
      b.broker,
      createRequest(RequestCode.POP_MESSAGE, {
        extFields: {
          consumerGroup: group,
          topic,
          queueId: '-1',
          maxMsgNums: '1',
          invisibleTime: '1000',
          pollTime: '0',
          bornTime: '0',
          initMode: '0',
          ...fields,
        },
      }),
    );
  t.equal((await pop({ maxMsgNums: '33' })).code, ResponseCode.INVALID_PARAMETER, 'more than 32');
  t.equal((await pop({ topic: 'Nope' })).code, ResponseCode.TOPIC_NOT_EXIST);
  t.equal((await pop({ queueId: '99' })).code, ResponseCode.INVALID_PARAMETER, 'a queue the topic does not have');
  t.equal(
    (await pop({ bornTime: String(clock.now() - 10_000) })).code,
    ResponseCode.POLLING_TIMEOUT,
    'born too long ago',
  );
  const noInv = await pop({ invisibleTime: 'x' });
  t.equal(noInv.code, ResponseCode.SYSTEM_ERROR);
  t.match(noInv.remark, /invisibleTime/);
  const ack = await raw.invoke(
    b.broker,
    createRequest(RequestCode.ACK_MESSAGE, {
      extFields: { consumerGroup: group, topic, queueId: '0', extraInfo: '0 1 2 3 0 broker-a 0 0', offset: '999' },
    }),
  );
  t.equal(ack.code, ResponseCode.NO_MESSAGE, 'an offset outside the queue');
});
