// POP consumption against the real Apache RocketMQ 5.3.3 broker (directly, not through the proxy:
// remoting POP does not work through the 5.x proxy, docs/protocol-facts.md#the-5x-proxy):
//  - rocketwire's SimpleConsumer: receive with long polling, ACK, BATCH_ACK, CHANGE_INVISIBLETIME;
//    what is not acked comes back after the invisible time (from %RETRY%group_topic, under the
//    topic popped, reconsumeTimes 1), what is acked never does;
//  - rocketwire's PushConsumer with clientRebalance=false in a group switched to POP pops (never
//    pulls), acks, and a RECONSUME_LATER comes back by CHANGE_INVISIBLETIME;
//  - Java 5.x's DefaultMQPushConsumer in pop mode (the group switched with SET_MESSAGE_REQUEST_MODE,
//    as `mqadmin setConsumeMode` does) and rocketwire in one group consume everything.
import t from 'tap';
import { RequestCode, ResponseCode, createRequest } from '../../protocol/index.js';
import { decodeReceiptHandle } from '../../protocol/pop-extra-info.js';
import { SetMessageRequestModeRequestBody } from '../../protocol/body/pop-bodies.js';
import { SimpleConsumer, type ReceivedMessage } from '../../lib/consumer/pop/simple-consumer.js';
import { Producer } from '../../lib/producer/index.js';
import { PushConsumer } from '../../lib/consumer/index.js';
import { delay, startRealCluster, V5_VERSION } from './harness.js';
import { javaSetMessageRequestMode, startJavaPopConsumer } from './java-pop.js';
import { interopReady } from './skip.js';

t.setTimeout(180_000);

const INVISIBLE_MS = 4000;

async function send(producer: Producer, topic: string, prefix: string, n: number): Promise<string[]> {
  const bodies: string[] = [];
  for (let i = 0; i < n; i += 50) {
    const batch = [];
    for (let k = i; k < Math.min(n, i + 50); k++) {
      bodies.push(`${prefix}-${k}`);
      batch.push({ topic, body: `${prefix}-${k}`, tags: 'P' });
    }
    await producer.sendBatch(batch);
  }
  return bodies;
}

/** Receive (and hand to `each`) until `done()` or `ms` pass. */
async function receiveUntil(
  c: SimpleConsumer,
  done: () => boolean,
  ms: number,
  each: (m: ReceivedMessage) => Promise<void> | void,
): Promise<void> {
  const end = Date.now() + ms;
  while (!done() && Date.now() < end) {
    for (const m of await c.receive(32, INVISIBLE_MS)) await each(m);
  }
}

if (await interopReady(t, [V5_VERSION])) {
  t.test(`real RocketMQ ${V5_VERSION}: POP`, async (t) => {
    // POP needs the timer wheel (the harness turns it off to save memory): without it the broker
    // answers SYSTEM_ERROR "pop message is forbidden because timerWheelEnable is false"
    const cluster = await startRealCluster({ version: V5_VERSION, brokerConfig: { timerWheelEnable: true } });
    t.teardown(() => cluster.stop({ graceful: false }));
    await cluster.createTopic('RwPop', { queues: 4 });
    await cluster.createTopic('RwPopMix', { queues: 4 });
    await cluster.createTopic('RwPopPush', { queues: 4 });
    await cluster.createTopic('RwPopOrder', { queues: 1 });
    await cluster.createTopic('RwPopOrder2', { queues: 2 });
    const producer = new Producer({ group: 'rw_pop_pg', namesrvAddr: cluster.namesrv });
    await producer.start();
    t.teardown(() => producer.shutdown());

    t.test(
      'POP_MESSAGE in a ROCKETMQ binary header, as Java writes it, arrives truncated and is refused',
      async (t) => {
        // the raw connection encodes like Java: the int16 code field gets 200050 & 0xffff = 3442
        const res = await cluster.invoke(
          cluster.brokers[0]!,
          createRequest(RequestCode.POP_MESSAGE, {
            serializeType: 'ROCKETMQ',
            extFields: {
              consumerGroup: 'g',
              topic: 'RwPop',
              queueId: '-1',
              maxMsgNums: '1',
              invisibleTime: '5000',
              pollTime: '0',
              bornTime: '0',
              initMode: '0',
            },
          }),
        );
        t.equal(res.code, ResponseCode.REQUEST_CODE_NOT_SUPPORTED);
        t.equal(res.remark, ' request type 3442 not supported', 'the remark the embedded broker also gives');
      },
    );

    t.test(
      'rocketwire: receive, ack, batch ack, changeInvisibleDuration; what is not acked comes back, what is acked never does',
      async (t) => {
        const sent = await send(producer, 'RwPop', 'pop', 20);
        const c = new SimpleConsumer({
          namesrvAddr: cluster.namesrv,
          consumerGroup: 'rw_pop_cg',
          topic: 'RwPop',
          initMode: 'MIN',
          awaitDurationMs: 1000,
        });
        await c.start();
        t.teardown(() => c.shutdown());
        const first = new Map<string, ReceivedMessage>();
        const t0 = Date.now();
        await receiveUntil(
          c,
          () => first.size === 20,
          20_000,
          (m) => void first.set(m.body.toString(), m),
        );
        t.same([...first.keys()].sort(), [...sent].sort(), 'all 20 popped, once each');
        const sample = [...first.values()][0]!;
        t.comment(`receipt handle from 5.3.3: "${sample.receiptHandle}" (first pops took ${Date.now() - t0} ms)`);
        const rh = decodeReceiptHandle(sample.receiptHandle);
        t.equal(rh.brokerName, 'broker-a');
        t.equal(rh.queueOffset, sample.queueOffset);
        t.equal(rh.invisibleTime, INVISIBLE_MS);
        t.equal(rh.retry, '0');
        t.ok(sample.properties['1ST_POP_TIME'], '1ST_POP_TIME set');

        const list = [...first.values()];
        const single = list.slice(0, 10);
        const batch = list.slice(10, 16);
        const changed = list[16]!;
        const left = list.slice(17);
        for (const m of single) t.equal(await c.ack(m), 'OK', `ack ${m.body.toString()}`);
        t.equal(await c.ack(batch), 'OK', 'one batch ack of 6');
        const moved = await c.changeInvisibleDuration(changed, 2000);
        t.not(moved.receiptHandle, changed.receiptHandle, 'CHANGE_INVISIBLETIME gives a new receipt handle');
        t.equal(await c.ack(moved), 'OK', 'the new receipt handle acks it');

        // the 3 not acked come back after their invisible time (the broker's revive service runs
        // about every second and waits for late acks, so a few seconds after it)
        const again = new Map<string, ReceivedMessage>();
        const t1 = Date.now();
        await receiveUntil(
          c,
          () => again.size >= 3,
          45_000,
          async (m) => {
            again.set(m.body.toString(), m);
            t.equal(await c.ack(m), 'OK');
          },
        );
        t.comment(`redelivered ${again.size} after ${Date.now() - t1} ms (invisible time ${INVISIBLE_MS} ms)`);
        t.same(
          [...again.keys()].sort(),
          left.map((m) => m.body.toString()).sort(),
          'exactly the 3 not acked came back',
        );
        for (const m of again.values()) {
          t.equal(m.topic, 'RwPop', 'under the topic popped');
          t.equal(m.reconsumeTimes, 1);
          t.equal(decodeReceiptHandle(m.receiptHandle).retry, '1', 'from %RETRY%group_topic');
        }
        // nothing else within one more invisible time (the acked ones shared the checkpoints of the 3 that came back)
        const extra: string[] = [];
        const end = Date.now() + INVISIBLE_MS;
        while (Date.now() < end) for (const m of await c.receive(32, INVISIBLE_MS)) extra.push(m.body.toString());
        t.same(extra, [], 'acked messages (single, batch, changed) never came back');
      },
    );

    t.test(
      'rocketwire order pop: a queue is handed out in order, and held while a popped message is not acked',
      async (t) => {
        const first = await send(producer, 'RwPopOrder', 'ord', 5);
        const c = new SimpleConsumer({
          namesrvAddr: cluster.namesrv,
          consumerGroup: 'rw_pop_order_cg',
          topic: 'RwPopOrder',
          initMode: 'MIN',
          awaitDurationMs: 0,
          orderly: true,
        });
        await c.start();
        t.teardown(() => c.shutdown());
        let got: ReceivedMessage[] = [];
        const t0 = Date.now();
        while (got.length === 0 && Date.now() - t0 < 10_000) got = await c.receive(32, 10_000);
        t.same(
          got.map((m) => m.body.toString()),
          first,
          'the 5 in queue order',
        );
        t.ok(
          got.every((m) => decodeReceiptHandle(m.receiptHandle).reviveQid === 999),
          'order-pop receipt handles (reviveQid 999)',
        );
        const more = await send(producer, 'RwPopOrder', 'ord-b', 2);
        t.same(
          await c.receive(32, 10_000),
          [],
          'nothing more from the queue while popped messages are neither acked nor visible again',
        );
        for (const m of got) t.equal(await c.ack(m), 'OK');
        let next: ReceivedMessage[] = [];
        const t1 = Date.now();
        while (next.length === 0 && Date.now() - t1 < 10_000) next = await c.receive(32, 10_000);
        t.same(
          next.map((m) => m.body.toString()),
          more,
          'after the acks the queue goes on',
        );
        for (const m of next) await c.ack(m);
      },
    );

    t.test(
      'rocketwire order pop, two consumers: a queue is held by one at a time; after an expiry it comes back from the first offset not acked',
      async (t) => {
        // what test/broker/pop-order.test.ts checks on the embedded broker, on 5.3.3
        const topic = 'RwPopOrder2';
        const group = 'rw_pop_order2_cg';
        const inv = 3000;
        for (const q of [0, 1]) {
          for (let i = 0; i < 6; i++)
            await producer.send({ topic, body: `q${q}-${i}` }, { selector: (qs) => qs.find((m) => m.queueId === q)! });
        }
        const mk = (): SimpleConsumer =>
          new SimpleConsumer({
            namesrvAddr: cluster.namesrv,
            consumerGroup: group,
            topic,
            initMode: 'MIN',
            awaitDurationMs: 0,
            orderly: true,
          });
        const a = mk();
        const c = mk();
        await a.start();
        await c.start();
        t.teardown(() => a.shutdown());
        t.teardown(() => c.shutdown());
        const names = (ms: ReceivedMessage[]): string[] => ms.map((m) => m.body.toString());
        let first: ReceivedMessage[] = [];
        const t0 = Date.now();
        while (first.length === 0 && Date.now() - t0 < 10_000) first = await a.receive(3, inv);
        const qa = first[0]!.queueId;
        const qb = qa === 0 ? 1 : 0;
        t.same(
          names(first),
          [0, 1, 2].map((i) => `q${qa}-${i}`),
          'a batch smaller than a queue: one queue, from its start, in order',
        );
        const second = await c.receive(32, inv);
        t.same(
          names(second),
          Array.from({ length: 6 }, (_, i) => `q${qb}-${i}`),
          'the other consumer gets only the other queue',
        );
        t.equal(await c.ack(second), 'OK');
        t.equal(await a.ack(first[0]!), 'OK', 'ack of the first only');
        t.same(await c.receive(32, inv), [], 'the held queue gives nothing to anyone');
        let again: ReceivedMessage[] = [];
        const t1 = Date.now();
        while (again.length === 0 && Date.now() - t1 < 15_000) {
          again = await c.receive(32, inv);
          if (again.length === 0) await delay(200);
        }
        t.comment(`the held queue came back ${Date.now() - t1} ms after the ack (invisible time ${inv} ms)`);
        t.same(
          names(again),
          [1, 2, 3, 4, 5].map((i) => `q${qa}-${i}`),
          'from the first offset not acked, in order',
        );
        t.same(
          again.map((m) => m.reconsumeTimes),
          [1, 1, 0, 0, 0],
          'reconsumeTimes from orderCountInfo: 1 for the ones handed out before',
        );
        t.equal(await a.ack(first[1]!), 'OK', 'a late ack from the expired pop is answered OK ...');
        t.same(await a.receive(32, inv), [], '... and does not free the queue the other consumer holds');
        t.equal(await c.ack(again), 'OK');
      },
    );

    t.test(
      'rocketwire PushConsumer (clientRebalance=false) in a group switched to POP: pops, acks, never pulls; a failed message comes back',
      async (t) => {
        const group = 'rw_pop_push_cg';
        const topic = 'RwPopPush';
        // SET_MESSAGE_REQUEST_MODE as a raw request (the Java admin's path is the next subtest's)
        const res = await cluster.invoke(
          cluster.brokers[0]!,
          createRequest(RequestCode.SET_MESSAGE_REQUEST_MODE, {
            body: SetMessageRequestModeRequestBody.encode({
              topic,
              consumerGroup: group,
              mode: 'POP',
              popShareQueueNum: 0,
            }),
          }),
        );
        t.equal(res.code, ResponseCode.SUCCESS, 'the 5.3.3 broker takes our SET_MESSAGE_REQUEST_MODE body');
        const seen: { body: string; reconsumeTimes: number; popCk: string | undefined }[] = [];
        let failed = false;
        const consumer = new PushConsumer({
          consumerGroup: group,
          namesrvAddr: cluster.namesrv,
          subscriptions: { [topic]: '*' },
          consumeFromWhere: 'first',
          clientRebalance: false,
          popInvisibleTimeMs: 20_000,
        });
        await consumer.start((msgs) => {
          for (const m of msgs)
            seen.push({ body: m.body.toString(), reconsumeTimes: m.reconsumeTimes, popCk: m.properties.POP_CK });
          // the first delivery of push-7 fails: CHANGE_INVISIBLETIME by popDelayLevel[0] = 10 s
          if (!failed && msgs.some((m) => m.body.toString() === 'push-7')) {
            failed = true;
            return 'RECONSUME_LATER';
          }
          return 'CONSUME_SUCCESS';
        });
        t.teardown(() => consumer.shutdown());
        const sent = await send(producer, topic, 'push', 40);
        const t0 = Date.now();
        const done = (): boolean =>
          new Set(seen.map((s) => s.body)).size === 40 && seen.some((s) => s.body === 'push-7' && s.reconsumeTimes > 0);
        while (!done() && Date.now() - t0 < 40_000) await delay(100);
        t.same([...new Set(seen.map((s) => s.body))].sort(), [...sent].sort(), 'all 40 consumed');
        t.ok(
          seen.every((s) => s.popCk),
          'every delivery came by POP',
        );
        const again = seen.filter((s) => s.body === 'push-7' && s.reconsumeTimes > 0);
        t.equal(again.length, 1, 'the failed message came back once');
        t.comment(`the failed message came back ${Date.now() - t0} ms after the sends (popDelayLevel[0] = 10 s)`);
        t.equal(consumer.stats().queues.filter((q) => q.topic === topic).length, 0, 'no queue of the topic was pulled');
        t.equal(seen.filter((s) => s.body !== 'push-7').length, 39, 'no other message was delivered twice');
      },
    );

    t.test('Java DefaultMQPushConsumer in pop mode and rocketwire share a group and consume everything', async (t) => {
      const group = 'rw_pop_mix_cg';
      const topic = 'RwPopMix';
      await javaSetMessageRequestMode({
        namesrv: cluster.namesrv,
        brokers: cluster.brokers,
        topic,
        group,
        mode: 'POP',
      });
      const java = await startJavaPopConsumer({ namesrv: cluster.namesrv, topic, group, timeoutMs: 60_000 });
      t.teardown(() => java.stop());
      const sent1 = await send(producer, topic, 'mix-a', 50);
      // Java pops alone first: it really is in pop mode and gets the messages
      const tJava = Date.now();
      while (java.messages.length < 50 && Date.now() - tJava < 30_000) await delay(100);
      t.equal(
        new Set(java.messages.map((m) => Buffer.from(m.body!, 'base64').toString())).size,
        50,
        'Java popped the first 50',
      );
      t.ok(
        java.messages.every((m) => m.popCk && decodeReceiptHandle(m.popCk).brokerName === 'broker-a'),
        "every Java message has a receipt handle rocketwire's codec reads",
      );

      const c = new SimpleConsumer({
        namesrvAddr: cluster.namesrv,
        consumerGroup: group,
        topic,
        initMode: 'MIN',
        awaitDurationMs: 1000,
      });
      await c.start();
      t.teardown(() => c.shutdown());
      const sent2 = await send(producer, topic, 'mix-b', 150);
      const rw = new Set<string>();
      const all = (): Set<string> =>
        new Set([...rw, ...java.messages.map((m) => Buffer.from(m.body!, 'base64').toString())]);
      await receiveUntil(
        c,
        () => all().size >= 200,
        40_000,
        async (m) => {
          rw.add(m.body.toString());
          await c.ack(m);
        },
      );
      const union = all();
      t.same([...union].sort(), [...sent1, ...sent2].sort(), 'every message consumed by one of them');
      t.comment(
        `of 150 sent while both ran: rocketwire ${[...rw].filter((b) => b.startsWith('mix-b')).length}, Java ${java.messages.filter((m) => Buffer.from(m.body!, 'base64').toString().startsWith('mix-b')).length}`,
      );
    });
  });
}
