import { deflateSync } from 'node:zlib';
import t, { type Test } from 'tap';
import { PushConsumer, UndecodableMessageError, type MessageExt } from '../../lib/consumer/index.js';
import {
  createResponse,
  decodeMessagesSkipping,
  encodeStoredMessage,
  PullMessageResponseHeader,
  RequestCode,
  ResponseCode,
} from '../../protocol/index.js';
import { routeJson, startFakeNameServer } from '../client/fake-cluster.js';
import { fakeConsumerBroker } from '../cli/fake-consumer-broker.js';
import { COMPRESSED_ZLIB, sendRaw } from '../cli/raw-send.js';
import { brokerOffsets, produce, uniqueName, until, withBroker } from './helpers.js';

const rec = (offset: number, body: Buffer, sysFlag = 0, queueId = 1): Buffer =>
  encodeStoredMessage({
    topic: 'T',
    queueId,
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
const good = (o: number, queueId = 1): Buffer => rec(o, Buffer.from(`m${o}`), 0, queueId);

/** A broker whose one queue holds `good` messages, then a body that does not inflate. */
async function poisonedQueue(t: Test, good = 0) {
  const broker = await withBroker({ queues: 1 });
  t.teardown(() => broker.close());
  const topic = uniqueName('T');
  const group = uniqueName('cg');
  if (good > 0) await produce(broker.namesrv, topic, good, (i) => ({ body: `good-${i}` }), { single: true });
  await sendRaw(broker.broker, topic, 0, Buffer.from('garbage'), COMPRESSED_ZLIB);
  return { broker, topic, group };
}

/** A push consumer of `topic` from its first offset, collecting its 'undecodable' events. */
function watchedConsumer(namesrv: string, topic: string, group: string) {
  const consumer = new PushConsumer({
    consumerGroup: group,
    namesrvAddr: namesrv,
    subscriptions: { [topic]: '*' },
    consumeFromWhere: 'first',
  });
  const undecodable: UndecodableMessageError[] = [];
  consumer.on('undecodable', (e) => undecodable.push(e));
  return { consumer, undecodable };
}

t.test('decodeMessagesSkipping keeps the records around an undecodable one', async (t) => {
  // A COMPRESSED record whose body is not zlib: its frame is intact, its offsets are its own.
  const poison = rec(2, Buffer.from('not zlib at all'), COMPRESSED_ZLIB);
  const r1 = decodeMessagesSkipping(
    Buffer.concat([good(0), good(1), poison, good(3), rec(4, deflateSync('z'), COMPRESSED_ZLIB)]),
  );
  t.same(
    r1.messages.map((m) => m.queueOffset),
    [0, 1, 3, 4],
    'every decodable record is kept, before and after',
  );
  t.equal(r1.messages[3]!.body.toString(), 'z', 'a real compressed body still inflates');
  t.equal(r1.undecodable.length, 1);
  t.match(r1.undecodable[0], {
    recordIntact: true,
    queueId: 1,
    queueOffset: 2,
    commitLogOffset: 1400,
    length: poison.length,
    messagesBefore: 2,
    reason: /ZLIB/,
  });

  // 64 bytes of damage over the head of the third record: the stretch is skipped up to the next
  // record that decodes; the records after it are still there.
  const body = Buffer.concat([good(0), good(1), good(2), good(3), good(4)]);
  const third = good(0).length + good(1).length;
  body.fill(0xee, third, third + 64);
  const r2 = decodeMessagesSkipping(body);
  t.same(
    r2.messages.map((m) => m.queueOffset),
    [0, 1, 3, 4],
  );
  t.equal(r2.undecodable.length, 1);
  t.match(r2.undecodable[0], { recordIntact: false, position: third, length: good(2).length, messagesBefore: 2 });

  // Damage in the last record: everything before it is kept, the tail is one stretch.
  const tail = Buffer.concat([good(0), good(1)]);
  tail.fill(0, good(0).length + 4, good(0).length + 8);
  const r3 = decodeMessagesSkipping(tail);
  t.same(
    r3.messages.map((m) => m.queueOffset),
    [0],
  );
  t.match(r3.undecodable, [{ recordIntact: false, position: good(0).length, length: good(1).length }]);
});

t.test(
  'int64 fields a producer sets are decoded whatever their value; an offset beyond 2^53 makes the record undecodable',
  async (t) => {
    const huge = rec(0, Buffer.from('born in the far future'));
    huge.writeBigInt64BE(0x7fffffffffffffffn, 40); // bornTimestamp: Java's broker stores what the producer sent
    const r = decodeMessagesSkipping(Buffer.concat([huge, good(1)]));
    t.equal(r.undecodable.length, 0, 'a Long.MAX_VALUE bornTimestamp is no reason to drop a message');
    t.equal(r.messages[0]!.bornTimestamp, Number(9223372036854775807n), 'read as the nearest double');
    t.equal(r.messages[0]!.body.toString(), 'born in the far future');

    const badOffset = good(2);
    badOffset.writeBigInt64BE(2n ** 60n, 20); // queueOffset: a rounded one would be committed, so refused
    const r2 = decodeMessagesSkipping(Buffer.concat([good(1), badOffset, good(3)]));
    t.same(
      r2.messages.map((m) => m.queueOffset),
      [1, 3],
    );
    t.match(r2.undecodable, [
      { recordIntact: true, queueOffset: undefined, reason: /queue offset does not fit in 53 bits/ },
    ]);
  },
);

t.test(
  'decodeMessagesSkipping under random damage: never throws, keeps every record before the damage and every intact one after it',
  async (t) => {
    const records = Array.from({ length: 12 }, (_, i) => good(i));
    const starts: number[] = [];
    let at = 0;
    for (const r of records) {
      starts.push(at);
      at += r.length;
    }
    let seed = 12345;
    const rand = (n: number): number => {
      seed = (seed * 1103515245 + 12345) >>> 0;
      return seed % n;
    };
    for (let round = 0; round < 300; round++) {
      const body = Buffer.concat(records);
      const from = rand(body.length);
      const len = 1 + rand(64);
      for (let i = from; i < Math.min(body.length, from + len); i++) body[i] = rand(256);
      const r = decodeMessagesSkipping(body);
      const offsets = new Set(r.messages.map((m) => m.queueOffset));
      const lastStartBefore = (x: number): number => {
        let k = 0;
        while (k + 1 < starts.length && starts[k + 1]! < x) k++;
        return k;
      };
      const damagedFirst = lastStartBefore(from + 1);
      const damagedLast = lastStartBefore(from + len);
      for (let i = 0; i < records.length; i++) {
        if ((i < damagedFirst || i > damagedLast) && !offsets.has(i))
          t.fail(`round ${round}: intact record ${i} lost (damage ${from}+${len})`);
      }
      // What was decoded and what was skipped tile the body, in order (a record whose damage left it
      // decodable counts as decoded: without a CRC check nothing can tell).
      let p = 0;
      let m = 0;
      for (const u of r.undecodable) {
        while (m < u.messagesBefore) p += r.messages[m++]!.storeSize;
        if (u.position !== p) t.fail(`round ${round}: skipped stretch at ${u.position}, expected ${p}`);
        p += u.length;
      }
      while (m < r.messages.length) p += r.messages[m++]!.storeSize;
      if (p !== body.length) t.fail(`round ${round}: ends at ${p} of ${body.length}`);
    }
    t.pass('300 rounds');
  },
);

t.test('a poison message does not stop its queue: the consumer moves past it and says so once', async (t) => {
  const broker = await withBroker({ queues: 1 });
  t.teardown(() => broker.close());
  const topic = uniqueName('T');
  const group = uniqueName('cg');
  await produce(broker.namesrv, topic, 2, (i) => ({ body: `before-${i}` }), { single: true });
  await sendRaw(broker.broker, topic, 0, Buffer.from('this is not a zlib stream'), COMPRESSED_ZLIB);
  await produce(broker.namesrv, topic, 2, (i) => ({ body: `after-${i}` }), { single: true });

  const consumer = new PushConsumer({
    consumerGroup: group,
    namesrvAddr: broker.namesrv,
    subscriptions: { [topic]: '*' },
    consumeFromWhere: 'first',
  });
  const undecodable: UndecodableMessageError[] = [];
  consumer.on('undecodable', (e) => undecodable.push(e));
  const got: MessageExt[] = [];
  await consumer.start((msgs) => {
    got.push(...msgs);
    return 'CONSUME_SUCCESS';
  });
  t.teardown(() => consumer.shutdown());
  await until(() => got.length >= 4, 'the four good messages');
  t.same(got.map((m) => m.body.toString()).sort(), ['after-0', 'after-1', 'before-0', 'before-1']);
  t.equal(undecodable.length, 1, 'reported once');
  const e = undecodable[0]!;
  t.type(e, UndecodableMessageError);
  t.match(e, {
    name: 'UndecodableMessageError',
    topic,
    brokerName: 'broker-a',
    queueId: 0,
    queueOffset: 2,
    recordIntact: true,
    reason: /ZLIB/,
    disposition: 'sent-back',
    option: undefined,
  });
  t.type(e.physOffset, 'number');
  t.match(
    e.message,
    new RegExp(
      `^sent back the undecodable message at ${topic} broker-a/0@2 \\(commit-log offset \\d+\\) \\(retry topic, then DLQ\\): ZLIB`,
    ),
  );
  t.equal(consumer.stats().pullErrors, 0, 'not a pull failure retried every second');
  await until(
    () => consumer.stats().sendBackOk === 1,
    'the poison message sent back (issue 29 H3: nothing passed that was neither consumed nor sent back)',
  );
  t.equal(consumer.stats().inflate.refusedCorrupt, 1);
  await consumer.shutdown();
  const rows = await brokerOffsets(broker.namesrv, topic, group);
  t.equal(rows[0]!.committed, 5, 'the committed offset passes the skipped message');
});

t.test('a queue whose only new message is poison commits past it', async (t) => {
  const { broker, topic, group } = await poisonedQueue(t);
  const { consumer, undecodable } = watchedConsumer(broker.namesrv, topic, group);
  await consumer.start(() => 'CONSUME_SUCCESS');
  await until(() => undecodable.length > 0, 'the undecodable event');
  await consumer.shutdown();
  t.equal(undecodable.length, 1);
  const rows = await brokerOffsets(broker.namesrv, topic, group);
  t.equal(rows[0]!.committed, 1, 'committed past the skipped message');
});

t.test('shutdown while a poison message is being sent back: the send-back ends and the commit passes it', async (t) => {
  const { broker, topic, group } = await poisonedQueue(t);
  // hold the broker's answer to the send-back until the consumer is shutting down
  let release: () => void = () => undefined;
  const held = new Promise<void>((r) => (release = r));
  let sendBacks = 0;
  for (const b of broker.instances) {
    const processors = b.server['processors'];
    const back = processors.get(RequestCode.CONSUMER_SEND_MSG_BACK)!;
    processors.set(RequestCode.CONSUMER_SEND_MSG_BACK, async (req, conn) => {
      sendBacks++;
      await held;
      return back(req, conn);
    });
  }
  const { consumer, undecodable } = watchedConsumer(broker.namesrv, topic, group);
  await consumer.start(() => 'CONSUME_SUCCESS');
  await until(() => undecodable.length === 1 && sendBacks === 1, 'the event and the send-back at the broker');
  const stopping = consumer.shutdown();
  await until(() => consumer.state === 'SHUTTING_DOWN', 'shutting down');
  release();
  await stopping;
  const rows = await brokerOffsets(broker.namesrv, topic, group);
  t.equal(rows[0]!.committed, 1, 'committed past the message the broker took back (before: left at it)');
});

t.test(
  'a poison message that ends the pull: once the messages before it are consumed, the commit passes it too',
  async (t) => {
    const { broker, topic, group } = await poisonedQueue(t, 2);
    const { consumer, undecodable } = watchedConsumer(broker.namesrv, topic, group);
    let consumed = 0;
    await consumer.start((msgs) => {
      consumed += msgs.length;
      return 'CONSUME_SUCCESS';
    });
    await until(() => consumed === 2 && undecodable.length === 1, 'the two good messages and the event');
    // Shut down at once: the long poll that follows (15 s) has not come back, so nothing but the
    // skipped tail can have moved the offset past the poison message.
    await consumer.shutdown();
    const rows = await brokerOffsets(broker.namesrv, topic, group);
    t.equal(rows[0]!.committed, 3, 'committed past the poison message, not at it');
  },
);

t.test(
  'damaged bytes in the middle of a pull body: the messages around them are consumed, one event, committed past',
  async (t) => {
    const body = Buffer.concat([good(0, 0), good(1, 0), good(2, 0), good(3, 0)]);
    const third = good(0, 0).length * 2;
    body.fill(0xee, third, third + 40); // the head of the record at queue offset 2
    const broker = await fakeConsumerBroker((req) => {
      const from = Number(req.extFields!.queueOffset);
      if (from === 0) {
        return createResponse(req, ResponseCode.SUCCESS, {
          extFields: PullMessageResponseHeader.encode({
            suggestWhichBrokerId: 0,
            nextBeginOffset: 4,
            minOffset: 0,
            maxOffset: 4,
          }),
          body,
        });
      }
      return createResponse(req, ResponseCode.PULL_NOT_FOUND, {
        extFields: PullMessageResponseHeader.encode({
          suggestWhichBrokerId: 0,
          nextBeginOffset: from,
          minOffset: 0,
          maxOffset: 4,
        }),
      });
    });
    const ns = await startFakeNameServer(
      new Map([['T', routeJson([{ name: 'broker-a', addrs: { '0': broker.addr }, queues: 1 }])]]),
    );
    t.teardown(async () => {
      await ns.close();
      await broker.close();
    });
    const consumer = new PushConsumer({
      consumerGroup: 'cg',
      namesrvAddr: ns.addr,
      subscriptions: { T: '*' },
      consumeFromWhere: 'first',
    });
    const undecodable: UndecodableMessageError[] = [];
    consumer.on('undecodable', (e) => undecodable.push(e));
    const got: number[] = [];
    await consumer.start((msgs) => {
      got.push(...msgs.map((m) => m.queueOffset));
      return 'CONSUME_SUCCESS';
    });
    await until(() => got.length >= 3, 'the three intact messages');
    await consumer.shutdown();
    t.same(got.sort(), [0, 1, 3]);
    t.equal(undecodable.length, 1);
    t.match(undecodable[0], {
      topic: 'T',
      brokerName: 'broker-a',
      queueId: 0,
      queueOffset: 2,
      recordIntact: false,
      physOffset: undefined,
      bytes: good(2, 0).length,
    });
    t.match(
      undecodable[0]!.message,
      /^skipped \d+ damaged bytes of T broker-a\/0 from queue offset 2 on: stored message: /,
    );
    await until(() => broker.committed.get(0) === 4, 'the offset commit past the damaged record');
    t.equal(broker.committed.get(0), 4, 'the committed offset passes the damaged record');
  },
);
