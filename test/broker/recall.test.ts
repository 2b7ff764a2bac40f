import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import t, { type Test } from 'tap';
import { startBroker, type EmbeddedBroker } from '../../lib/broker/index.js';
import { ManualClock } from '../../lib/clock.js';
import { MessageValidationError, Producer } from '../../lib/producer/index.js';
import { BrokerError, type RemotingClient } from '../../lib/remoting/index.js';
import { createRequest, RequestCode, ResponseCode, type MessageExt } from '../../protocol/index.js';
import { decodeRecallHandle, encodeRecallHandle } from '../../protocol/recall-handle.js';
import { client, decode, pullRequest } from './helpers.js';

// RECALL_MESSAGE (370) on the embedded broker, as Apache's RecallMessageProcessor and
// TimerMessageStore: a timer message's send result carries a recall handle; recalling it writes a
// delete marker and the timer store drops the message when it comes due; refusals carry Apache's
// codes and remarks. On a ManualClock.

async function pullAll(c: RemotingClient, b: EmbeddedBroker, topic: string): Promise<MessageExt[]> {
  const r = await c.invoke(b.broker, pullRequest(topic, { queueId: 0, maxMsgNums: 32 }));
  return r.code === ResponseCode.SUCCESS ? decode(r) : [];
}

async function setup(t: Test, opts: Parameters<typeof startBroker>[0] = {}) {
  const clock = new ManualClock();
  const b = await startBroker({ clock, queues: 1, recallMessageEnable: true, ...opts });
  b.instances[0]!.topics.ensure('RecallT', 1);
  b.instances[0]!.topics.ensure('OtherT', 1);
  const c = client();
  const producer = new Producer({ group: 'recall_pg', namesrvAddr: b.namesrv, clock });
  await producer.start();
  t.teardown(async () => {
    await producer.shutdown();
    await c.close();
    await b.close();
  });
  return { b, c, clock, producer };
}

async function brokerError(p: Promise<unknown>): Promise<BrokerError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof BrokerError) return err;
    throw err;
  }
  throw new Error('expected a BrokerError');
}

t.test('a recalled timer message is never delivered; the others are, at their time', async (t) => {
  const { b, c, clock, producer } = await setup(t);
  const a = await producer.send({ topic: 'RecallT', body: 'recalled', delayMs: 3000 });
  const k = await producer.send({ topic: 'RecallT', body: 'kept', delayMs: 3000 });
  t.ok(a.recallHandle && k.recallHandle, 'a parked timer message has a recall handle');
  const h = decodeRecallHandle(a.recallHandle!)!;
  const parked = (await pullAll(c, b, 'rmq_sys_wheel_timer'))[0]!;
  t.same(
    h,
    {
      topic: 'RecallT',
      brokerName: b.instances[0]!.brokerName,
      timestamp: String(Number(parked.properties.TIMER_OUT_MS) + 1),
      messageId: a.msgId,
    },
    'v1 topic broker TIMER_OUT_MS+1 UNIQ_KEY',
  );
  t.equal(await producer.recallMessage('RecallT', a.recallHandle!), a.msgId, 'answers the message id');
  clock.advance(3000);
  t.same(
    (await pullAll(c, b, 'RecallT')).map((m) => m.body.toString()),
    ['kept'],
    'only the message not recalled reaches the topic',
  );
  clock.advance(60_000);
  t.same(
    (await pullAll(c, b, 'RecallT')).map((m) => m.body.toString()),
    ['kept'],
    'and the delete marker never does either',
  );
  const markers = (await pullAll(c, b, 'rmq_sys_wheel_timer')).filter((m) => m.properties.TIMER_DEL_UNIQKEY);
  t.equal(markers.length, 1, 'the marker was written to the timer topic');
  t.equal(markers[0]!.properties.TIMER_DEL_UNIQKEY, `RecallT+${a.msgId}`);
  t.equal(markers[0]!.tags, '_RECALL_TAG_');
  t.equal(markers[0]!.properties.PGROUP, 'recall_pg');

  const plain = await producer.send({ topic: 'RecallT', body: 'now' });
  t.equal(plain.recallHandle, undefined, 'a message delivered at once has none');
  const batch = await producer.sendBatch([{ topic: 'RecallT', body: 'b' }]);
  t.equal(batch.recallHandle, undefined, 'nor a batch');
});

t.test("refusals: Apache's codes and remarks", async (t) => {
  const { b, c, clock, producer } = await setup(t);
  const r = await producer.send({ topic: 'RecallT', body: 'x', delayMs: 10_000 });
  const handle = r.recallHandle!;
  const other = await brokerError(producer.recallMessage('OtherT', handle));
  t.match(other, { code: ResponseCode.ILLEGAL_OPERATION, remark: 'recall failed, topic not match' });
  const elsewhere = encodeRecallHandle({ ...decodeRecallHandle(handle)!, brokerName: 'broker-nope' });
  t.match(await brokerError(producer.recallMessage('RecallT', elsewhere)), {
    code: ResponseCode.ILLEGAL_OPERATION,
    remark: 'recall failed, broker service not available',
  });
  // the client refuses a handle that does not decode, as Java's DefaultMQProducerImpl; the broker too
  await t.rejects(producer.recallMessage('RecallT', 'not a handle'), MessageValidationError);
  const raw = await c.invoke(
    b.broker,
    createRequest(RequestCode.RECALL_MESSAGE, { extFields: { topic: 'RecallT', recallHandle: 'djIgYQ==' } }),
  );
  t.match(raw, { code: ResponseCode.ILLEGAL_OPERATION, remark: 'recall handle is invalid' });
  const unknown = await c.invoke(
    b.broker,
    createRequest(RequestCode.RECALL_MESSAGE, { extFields: { topic: 'NoSuchTopic', recallHandle: handle } }),
  );
  t.match(unknown, { code: ResponseCode.TOPIC_NOT_EXIST, remark: 'recall failed, the topic[NoSuchTopic] not exist' });
  // a well-formed handle of a message that never existed is accepted, as by Apache (nothing is looked up)
  const ghost = encodeRecallHandle({ ...decodeRecallHandle(handle)!, messageId: 'AC110001000000000000000000000000' });
  t.equal(await producer.recallMessage('RecallT', ghost), 'AC110001000000000000000000000000');
  clock.advance(10_000);
  t.equal((await pullAll(c, b, 'RecallT')).length, 1, 'delivered: it was not the one recalled');
  // the handle's time is TIMER_OUT_MS + 1: past it, the recall is refused
  clock.advance(1);
  t.match(await brokerError(producer.recallMessage('RecallT', handle)), {
    code: ResponseCode.ILLEGAL_OPERATION,
    remark: 'recall failed, timestamp invalid',
  });
});

t.test('off by default, as Apache (recallMessageEnable=false): NO_PERMISSION', async (t) => {
  const { producer } = await setup(t, { recallMessageEnable: undefined });
  const r = await producer.send({ topic: 'RecallT', body: 'x', delayMs: 5000 });
  t.ok(r.recallHandle, 'the handle is given anyway');
  t.match(await brokerError(producer.recallMessage('RecallT', r.recallHandle!)), {
    code: ResponseCode.NO_PERMISSION,
    remark: 'recall failed, operation is forbidden',
  });
});

t.test('a recall survives a broker restart before the message falls due', async (t) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rw-recall-'));
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const clock = new ManualClock();
  const first = await startBroker({ clock, dataDir, queues: 1, recallMessageEnable: true });
  first.instances[0]!.topics.ensure('RecallT', 1);
  const producer = new Producer({ group: 'recall_pg', namesrvAddr: first.namesrv, clock });
  await producer.start();
  const a = await producer.send({ topic: 'RecallT', body: 'recalled', delayMs: 5000 });
  await producer.send({ topic: 'RecallT', body: 'kept', delayMs: 5000 });
  await producer.recallMessage('RecallT', a.recallHandle!);
  await producer.shutdown();
  await first.close();

  const again = await startBroker({ clock, dataDir, queues: 1, recallMessageEnable: true });
  const c = client();
  t.teardown(async () => {
    await c.close();
    await again.close();
  });
  clock.advance(5000);
  t.same(
    (await pullAll(c, again, 'RecallT')).map((m) => m.body.toString()),
    ['kept'],
    'the recalled message stays undelivered after the restart',
  );
});
