import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import {
  ConsumeConcurrentlyStatus,
  ConsumeOrderlyStatus,
  PushConsumer,
  parseOffsetsFile,
  type MessageExt,
} from '../../lib/consumer/index.js';
import { drained } from '../support/embedded-broker.js';
import { FAST_DELAY_LEVELS, produce, uniqueName, until, withBroker } from './helpers.js';

t.test(
  'orderly: one call at a time per queue, offsets in order, a suspended message holds its queue until it succeeds',
  async (t) => {
    const broker = await withBroker();
    t.teardown(() => broker.close());
    const topic = uniqueName('T');
    const group = uniqueName('cg');
    await produce(broker.namesrv, topic, 400, (i) => ({ body: `m${i}` }));
    const perQueue = new Map<number, number[]>();
    const active = new Set<number>();
    let overlap = 0;
    let suspended = 0;
    const c = new PushConsumer({
      consumerGroup: group,
      namesrvAddr: broker.namesrv,
      consumeFromWhere: 'first',
      orderly: true,
      suspendCurrentQueueTimeMillis: 20,
      lockIntervalMs: 300,
    });
    c.subscribe(topic);
    await c.start(async (msgs: MessageExt[]) => {
      const q = msgs[0]!.queueId;
      if (active.has(q)) overlap++;
      active.add(q);
      await new Promise((r) => setImmediate(r));
      active.delete(q);
      const m = msgs[0]!;
      if (m.queueOffset === 10 && m.reconsumeTimes < 2) {
        suspended++;
        return ConsumeOrderlyStatus.SUSPEND_CURRENT_QUEUE_A_MOMENT;
      }
      perQueue.set(q, [...(perQueue.get(q) ?? []), m.queueOffset]);
      return ConsumeOrderlyStatus.SUCCESS;
    });
    t.teardown(() => c.shutdown());
    await until(() => [...perQueue.values()].reduce((a, l) => a + l.length, 0) === 400, 'all consumed');
    t.equal(overlap, 0, 'never two calls on one queue at once');
    for (const [q, offs] of perQueue)
      t.same(
        offs,
        offs.map((_, i) => offs[0]! + i),
        `queue ${q}: offsets consecutive and in order`,
      );
    t.ok(suspended >= 2, 'the suspended message was retried locally');
    t.ok(
      c
        .stats()
        .queues.filter((q) => q.topic === topic)
        .every((q) => q.locked),
      'queues locked on the broker',
    );
  },
);

t.test(
  'orderly with maxReconsumeTimes: a message that keeps failing goes to the DLQ and the queue moves on',
  async (t) => {
    const broker = await withBroker({ messageDelayLevel: FAST_DELAY_LEVELS });
    t.teardown(() => broker.close());
    const topic = uniqueName('T');
    const group = uniqueName('cg');
    await produce(broker.namesrv, topic, 3, (i) => ({ body: `m${i}` }));
    const done: string[] = [];
    const c = new PushConsumer({
      consumerGroup: group,
      namesrvAddr: broker.namesrv,
      consumeFromWhere: 'first',
      orderly: true,
      suspendCurrentQueueTimeMillis: 10,
      maxReconsumeTimes: 2,
    });
    c.subscribe(topic);
    await c.start((msgs: MessageExt[]) => {
      if (msgs[0]!.body.toString() === 'm1') return ConsumeOrderlyStatus.SUSPEND_CURRENT_QUEUE_A_MOMENT;
      done.push(msgs[0]!.body.toString());
      return ConsumeOrderlyStatus.SUCCESS;
    });
    t.teardown(() => c.shutdown());
    const dlq: MessageExt[] = [];
    const reader = new PushConsumer({
      consumerGroup: uniqueName('dlqreader'),
      namesrvAddr: broker.namesrv,
      consumeFromWhere: 'first',
      rebalanceIntervalMs: 200,
    });
    reader.subscribe(`%DLQ%${group}`);
    await until(() => done.length === 2, 'the other messages consumed');
    await reader.start((msgs) => {
      dlq.push(...msgs);
      return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
    });
    t.teardown(() => reader.shutdown());
    await until(() => dlq.length === 1, 'the failing message in the DLQ');
    t.equal(dlq[0]!.body.toString(), 'm1');
    t.equal(c.stats().republished, 1, 'republished once through the internal producer path');
  },
);

t.test(
  'broadcasting: every member gets every message; offsets live in the local file and survive a restart',
  async (t) => {
    const broker = await withBroker();
    const dir = mkdtempSync(path.join(tmpdir(), 'rw-offsets-'));
    t.teardown(async () => {
      await broker.close();
      rmSync(dir, { recursive: true, force: true });
    });
    const topic = uniqueName('T');
    const group = uniqueName('cg');
    await produce(broker.namesrv, topic, 100, (i) => ({ body: `m${i}` }));
    const make = (instanceName: string, sink: string[]): PushConsumer => {
      const c = new PushConsumer({
        consumerGroup: group,
        namesrvAddr: broker.namesrv,
        messageModel: 'BROADCASTING',
        consumeFromWhere: 'first',
        offsetStoreDir: dir,
        instanceName,
        persistOffsetIntervalMs: 100,
      });
      c.subscribe(topic);
      void sink;
      return c;
    };
    const a: string[] = [];
    const b: string[] = [];
    const ca = make('A', a);
    const cb = make('B', b);
    const handler = (sink: string[]) => (msgs: MessageExt[]) => {
      for (const m of msgs) sink.push(m.body.toString());
      // Failures are dropped in broadcasting: this one is never seen again.
      return msgs[0]!.body.toString() === 'm7'
        ? ConsumeConcurrentlyStatus.RECONSUME_LATER
        : ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
    };
    await ca.start(handler(a));
    await cb.start(handler(b));
    t.teardown(() => Promise.all([ca.shutdown(), cb.shutdown()]).then(() => undefined));
    await until(() => a.length === 100 && b.length === 100, 'both members got all 100');
    t.equal(new Set(a).size, 100);
    t.equal(new Set(b).size, 100);
    await ca.shutdown();
    const file = path.join(dir, ca.clientId, group, 'offsets.json');
    const entries = parseOffsetsFile(readFileSync(file, 'utf8'))!;
    t.equal(
      entries.filter((e) => e.mq.topic === topic).reduce((s, e) => s + e.offset, 0),
      100,
      'file holds the end offsets',
    );
    await produce(broker.namesrv, topic, 10, (i) => ({ body: `n${i}` }));
    const a2: string[] = [];
    const ca2 = make('A', a2);
    await ca2.start(handler(a2));
    t.teardown(() => ca2.shutdown());
    await until(() => a2.length === 10, 'restarted member resumes from the file');
    await until(() => drained(ca2, broker.namesrv, group, [topic]), 'every queue pulled to its end and consumed');
    t.same(a2.sort(), Array.from({ length: 10 }, (_, i) => `n${i}`).sort(), 'only the new messages');
  },
);
