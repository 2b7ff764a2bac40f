// The official Apache RocketMQ Go client (rocketmq-client-go v2, test/interop/go) against rocketwire's
// embedded broker: every send mode, push consume, orderly, transactions with check-back, SQL92,
// delay levels, retry and DLQ, offsets, the Go admin package, and Go ↔ rocketwire both ways. One
// broker for the file; each scenario has its own topics and groups.
import t, { type Test } from 'tap';
import type { EmbeddedBroker } from '../../lib/broker/index.js';
import { PushConsumer, type MessageExt } from '../../lib/consumer/index.js';
import { Producer } from '../../lib/producer/index.js';
import { SCHEDULE_TOPIC } from '../../protocol/index.js';
import { brokerOffsets, createTopic, drained, withBroker } from '../support/embedded-broker.js';
import { until, waitFor } from '../support/until.js';
import {
  goAdmin,
  goClientVersion,
  goProduce,
  checkedLines,
  startGoTx,
  startGoConsumer,
  type GoConsumeOptions,
  type GoProcess,
  type GoReceived,
} from './go-client.js';
import { goReady } from './skip.js';

t.setTimeout(180_000);

/** Level 1 waits 1 s (the delay scenario checks it was kept); every other level 100 ms, so retries come back at once. */
const DELAY_LEVELS = ['1s', ...Array.from({ length: 17 }, () => '100ms')].join(' ');

/** Whether the broker has a committed offset of `group` at the end of every queue of `topic` that holds messages. */
async function committedToEnd(broker: EmbeddedBroker, topic: string, group: string): Promise<boolean> {
  const rows = await brokerOffsets(broker.namesrv, topic, group);
  // an empty queue has nothing to commit: the Go client keeps no offset for it until a pull returns
  return rows.length > 0 && rows.every((r) => r.committed === r.max || r.max === 0);
}

function bodies(msgs: Array<{ body: string | Buffer }>): string[] {
  return msgs.map((m) => m.body.toString()).sort();
}

function range(prefix: string, from: number, to: number): string[] {
  return Array.from({ length: to - from }, (_, k) => `${prefix}${from + k}`).sort();
}

/** Stops a Go consumer at teardown if the test left it running (after a failure). */
function killAtTeardown(t: Test, p: GoProcess): void {
  t.teardown(() => p.kill());
}

if (await goReady(t)) {
  const broker = await withBroker({
    enablePropertyFilter: true,
    transactionCheckInterval: 1000,
    transactionTimeOut: 3000,
    messageDelayLevel: DELAY_LEVELS,
  });
  t.teardown(() => broker.close());
  const namesrv = broker.namesrv;
  t.comment(`rocketmq-client-go ${goClientVersion()}`);

  /**
   * Runs a Go push consumer until it has had `expect` deliveries and shut down (which sends its
   * offsets), then checks that the broker holds the group's offsets at the end of every queue of the
   * topic: every message was delivered (those returned) or passed over, none is left to come.
   */
  async function goConsumeAll(t: Test, o: GoConsumeOptions & { expect: number }): Promise<GoReceived[]> {
    const go = await startGoConsumer(o);
    killAtTeardown(t, go);
    const { messages, summary } = await go.finished();
    t.match(summary, { complete: true }, `${o.group}: ${o.expect} deliveries`);
    // The Go client sends its offsets at shutdown as oneway UPDATE_CONSUMER_OFFSETs: its process may
    // be gone before the broker (in this process) has read them, so wait for them to land.
    t.ok(await waitFor(() => committedToEnd(broker, o.topic, o.group)), `${o.group} committed ${o.topic} to its end`);
    return messages;
  }

  t.test(
    'Go producer: sync, async, oneway and batch sends are each stored once; a Go push consumer gets them all',
    async (t) => {
      const topic = 'GoSendModes';
      await createTopic(broker.brokers, topic, 4);
      const modes = ['sync', 'async', 'oneway', 'batch'] as const;
      for (const mode of modes) {
        const { sent, summary } = await goProduce({
          namesrv,
          topic,
          count: 20,
          mode,
          batchSize: 10,
          body: `${mode}-{i}`,
          tag: 'TagA',
          keys: `${mode}-key-{i}`,
          props: 'i={i}',
        });
        t.match(summary, { sent: 20, failed: 0 }, `${mode}: 20 sent, none failed`);
        if (mode !== 'oneway') {
          const places = new Set(sent.map((s) => `${s.queueId}@${s.queueOffset}`));
          t.equal(places.size, 20, `${mode}: 20 distinct queue offsets`);
        }
      }
      await until(
        () => [0, 1, 2, 3].reduce((n, q) => n + broker.instances[0]!.messageStore.getMaxOffset(topic, q), 0) === 81,
        'the 20 oneway sends stored',
      );
      const messages = await goConsumeAll(t, { namesrv, topic, group: 'go_send_modes_cg', expect: 81 });
      // 80 and the oneway run's closing sync send (body "fence", see test/interop/go/main.go)
      t.same(
        bodies(messages),
        [...modes.flatMap((m) => range(`${m}-`, 0, 20)), 'fence'].sort(),
        'every message once, none other',
      );
      const m = messages.find((x) => x.body === 'batch-7')!;
      t.match(
        m,
        { tags: 'TagA', keys: 'batch-key-7', properties: { i: '7' }, reconsumeTimes: 0 },
        'tag, keys and properties kept',
      );
    },
  );

  t.test(
    'Go → rocketwire and rocketwire → Go: bodies (one compressed by each), tags, keys, properties and msgIds',
    async (t) => {
      await createTopic(broker.brokers, 'GoToRw', 4);
      await createTopic(broker.brokers, 'RwToGo', 4);
      const big = 'x'.repeat(10_000); // over both clients' 4 KiB compression threshold
      const { sent } = await goProduce({
        namesrv,
        topic: 'GoToRw',
        count: 10,
        tag: 'FromGo',
        keys: 'gk-{i}',
        props: 'n={i},src=go',
      });
      await goProduce({ namesrv, topic: 'GoToRw', count: 1, body: big });
      const seen: MessageExt[] = [];
      const rw = new PushConsumer({ consumerGroup: 'rw_from_go_cg', namesrvAddr: namesrv, consumeFromWhere: 'first' });
      rw.subscribe('GoToRw');
      await rw.start((msgs) => {
        seen.push(...msgs);
        return 'CONSUME_SUCCESS';
      });
      t.teardown(() => rw.shutdown());
      await until(
        async () => seen.length >= 11 && (await drained(rw, namesrv, 'rw_from_go_cg', ['GoToRw'])),
        'rocketwire drained GoToRw',
      );
      t.same(
        bodies(seen),
        [...range('go-', 0, 10), big].sort(),
        'rocketwire got every Go message once, the big one decompressed',
      );
      const m3 = seen.find((m) => m.body.toString() === 'go-3')!;
      t.match(m3, { tags: 'FromGo', keys: ['gk-3'], userProperties: { n: '3', src: 'go' } });
      t.equal(m3.msgId, sent.find((s) => s.i === 3)!.msgId, "rocketwire's msgId is the Go producer's");

      const producer = new Producer({ group: 'rw_to_go_pg', namesrvAddr: namesrv });
      await producer.start();
      t.teardown(() => producer.shutdown());
      const ids = new Map<string, string>();
      for (let i = 0; i < 10; i++) {
        const r = await producer.send({
          topic: 'RwToGo',
          body: `rw-${i}`,
          tags: 'FromRw',
          keys: [`rk-${i}`],
          properties: { n: String(i) },
        });
        ids.set(`rw-${i}`, r.msgId);
      }
      await producer.send({ topic: 'RwToGo', body: big });
      const messages = await goConsumeAll(t, { namesrv, topic: 'RwToGo', group: 'go_from_rw_cg', expect: 11 });
      t.same(
        bodies(messages),
        [...range('rw-', 0, 10), big].sort(),
        'Go got every rocketwire message once, the big one decompressed',
      );
      const g3 = messages.find((m) => m.body === 'rw-3')!;
      t.match(g3, { tags: 'FromRw', keys: 'rk-3', properties: { n: '3' }, msgId: ids.get('rw-3') });
    },
  );

  t.test(
    'Go orderly: each sharding key on one queue, consumed in send order, a suspended message retried in place',
    async (t) => {
      const topic = 'GoOrderly';
      await createTopic(broker.brokers, topic, 4);
      const { summary } = await goProduce({ namesrv, topic, count: 40, sharding: 4, body: '{i}' });
      t.match(summary, { sent: 40, failed: 0 });
      // every message's first delivery is suspended (SUSPEND_CURRENT_QUEUE_A_MOMENT): 80 deliveries
      const go = await startGoConsumer({
        namesrv,
        topic,
        group: 'go_orderly_cg',
        orderly: true,
        retryFirst: true,
        expect: 80,
      });
      killAtTeardown(t, go);
      const { messages } = await go.finished();
      const ok = messages.filter((m) => m.status === 'CONSUME_SUCCESS');
      t.same(ok.map((m) => m.body).sort(), range('', 0, 40), 'each message consumed once after its suspension');
      const byKey = new Map<number, { queues: Set<number>; order: number[] }>();
      for (const m of ok) {
        const i = Number(m.body);
        const k = byKey.get(i % 4) ?? { queues: new Set(), order: [] };
        k.queues.add(m.queueId);
        k.order.push(i);
        byKey.set(i % 4, k);
      }
      for (const [key, { queues, order }] of byKey) {
        t.equal(queues.size, 1, `key s${key} on one queue`);
        t.same(
          order,
          [...order].sort((a, b) => a - b),
          `key s${key} consumed in send order`,
        );
      }
      // in place: a queue's next message is delivered only once the suspended one has succeeded
      const perQueue = new Map<number, string[]>();
      for (const m of messages) perQueue.set(m.queueId, [...(perQueue.get(m.queueId) ?? []), `${m.body}:${m.status}`]);
      for (const [q, seq] of perQueue) {
        const expected = seq
          .filter((_, k) => k % 2 === 1)
          .flatMap((s) => [s.replace('CONSUME_SUCCESS', 'SUSPEND_CURRENT_QUEUE_A_MOMENT'), s]);
        t.same(seq, expected, `queue ${q}: every message suspended once, then succeeded, before the next`);
      }
    },
  );

  t.test(
    'Go TransactionProducer: committed and checked-back messages only, each end once, check-back only for unknown ones',
    async (t) => {
      const topic = 'GoTx';
      await createTopic(broker.brokers, topic, 4);
      const tx = await startGoTx({ namesrv, topic, group: 'go_tx_pg', commit: 10, rollback: 10, check: 10 });
      killAtTeardown(t, tx);
      t.match(await tx.waitFor((l) => l.type === 'ended', 'every half message sent'), { sent: 30, failed: 0 });
      const max = broker.instances[0]!;
      const held = () => [0, 1, 2, 3].reduce((n, q) => n + max.messageStore.getMaxOffset(topic, q), 0);
      await until(
        () => held() === 15 && checkedLines(tx).length >= 10,
        () => `the 10 committed and the 5 even checked messages on the topic (${held()})`,
        30_000,
      );
      const { summary } = await tx.stop();
      t.match(summary, { sent: 30, failed: 0, checked: 10, complete: true });
      t.same(
        checkedLines(tx).filter((c) => c.body !== 'check'),
        [],
        'no committed or rolled back message was checked',
      );
      t.equal(max.tx.end.counters.refused, 0, 'no end of the Go producer was refused');
      const go = await startGoConsumer({ namesrv, topic, group: 'go_tx_cg', expect: 15 });
      killAtTeardown(t, go);
      const { messages } = await go.finished();
      t.same(
        messages.map((m) => `${m.body}:${m.properties.i}`).sort(),
        [...range('commit:', 0, 10), ...[20, 22, 24, 26, 28].map((i) => `check:${i}`)].sort(),
      );
    },
  );

  t.test('Go SQL92 selector: exactly the matching messages, the rest passed over', async (t) => {
    const topic = 'GoSql';
    await createTopic(broker.brokers, topic, 4);
    await goProduce({ namesrv, topic, count: 30, mode: 'batch', props: 'a={i}' });
    // Run until the group's offsets reach the end of every queue: the non-matching messages after the
    // last match are passed over only by a later pull, after the tenth delivery.
    const go = await startGoConsumer({ namesrv, topic, group: 'go_sql_cg', sql: 'a BETWEEN 10 AND 19', expect: 0 });
    killAtTeardown(t, go);
    await until(
      async () => go.messages().length >= 10 && (await committedToEnd(broker, topic, 'go_sql_cg')),
      'Go consumed GoSql to its end',
      30_000,
    );
    const { messages } = await go.stop();
    t.same(bodies(messages), range('go-', 10, 20));
  });

  t.test('Go delay level: the message waits its level in the schedule topic, then reaches its own topic', async (t) => {
    const topic = 'GoDelay';
    await createTopic(broker.brokers, topic, 4);
    const scheduledBefore = broker.instances[0]!.messageStore.getMaxOffset(SCHEDULE_TOPIC, 0);
    await goProduce({ namesrv, topic, count: 3, delay: 1 });
    t.equal(
      broker.instances[0]!.messageStore.getMaxOffset(SCHEDULE_TOPIC, 0) - scheduledBefore,
      3,
      'stored in level 1 of SCHEDULE_TOPIC_XXXX',
    );
    const go = await startGoConsumer({ namesrv, topic, group: 'go_delay_cg', expect: 3 });
    killAtTeardown(t, go);
    const { messages } = await go.finished();
    t.same(bodies(messages), range('go-', 0, 3));
    for (const m of messages) {
      t.ok(m.storeTimestamp - m.bornTimestamp >= 1000, `${m.body} put on ${topic} no sooner than level 1's 1 s`);
      t.match(m.properties, { REAL_TOPIC: topic }, `${m.body} carries its real topic`);
    }
  });

  t.test(
    'Go retry and DLQ: a failed message comes back with reconsumeTimes 1; past maxReconsumeTimes it goes to %DLQ%',
    async (t) => {
      const topic = 'GoRetry';
      const group = 'go_retry_cg';
      await createTopic(broker.brokers, topic, 4);
      // The Go client reads the retry topic's route before its first heartbeat creates the topic, then
      // waits for its next rebalance (20 s): a group that ran before has it, as this one now does.
      await createTopic(broker.brokers, `%RETRY%${group}`, 1);
      await goProduce({ namesrv, topic, count: 10, body: 'r-{i}' });
      await goProduce({ namesrv, topic, count: 2, body: 'dlq-{i}' });
      // r-*: failed once then consumed (20 deliveries); dlq-*: 1 + maxReconsumeTimes 2 deliveries each (6)
      const go = await startGoConsumer({
        namesrv,
        topic,
        group,
        retryFirst: true,
        failPrefix: 'dlq-',
        maxReconsume: 2,
        expect: 26,
      });
      killAtTeardown(t, go);
      const { messages } = await go.finished();
      const second = messages.filter((m) => m.body.startsWith('r-') && m.status === 'CONSUME_SUCCESS');
      t.same(bodies(second), range('r-', 0, 10), 'every r- message consumed on its second delivery');
      t.ok(
        second.every((m) => m.reconsumeTimes === 1 && m.topic === topic),
        'redelivered with reconsumeTimes 1, on its own topic',
      );
      t.same(
        messages.filter((m) => m.body === 'dlq-0').map((m) => m.reconsumeTimes),
        [0, 1, 2],
        'dlq-0 delivered 1 + maxReconsumeTimes times',
      );
      const dlq: MessageExt[] = [];
      const reader = new PushConsumer({
        consumerGroup: 'rw_go_dlq_reader',
        namesrvAddr: namesrv,
        consumeFromWhere: 'first',
      });
      reader.subscribe(`%DLQ%${group}`);
      await reader.start((msgs) => {
        dlq.push(...msgs);
        return 'CONSUME_SUCCESS';
      });
      t.teardown(() => reader.shutdown());
      await until(() => dlq.length >= 2, 'both dlq- messages in %DLQ%go_retry_cg', 30_000);
      t.same(bodies(dlq), ['dlq-0', 'dlq-1'], 'the DLQ holds exactly the messages that kept failing');
    },
  );

  t.test('Go offsets: a Go group resumes where it stopped, and so does rocketwire in the same group', async (t) => {
    const topic = 'GoOffsets';
    const group = 'go_offsets_cg';
    await createTopic(broker.brokers, topic, 4);
    await goProduce({ namesrv, topic, count: 10, body: 'a-{i}' });
    t.same(bodies(await goConsumeAll(t, { namesrv, topic, group, expect: 10 })), range('a-', 0, 10));

    await goProduce({ namesrv, topic, count: 5, body: 'b-{i}' });
    const seen: MessageExt[] = [];
    const rw = new PushConsumer({ consumerGroup: group, namesrvAddr: namesrv, consumeFromWhere: 'first' });
    rw.subscribe(topic);
    await rw.start((msgs) => {
      seen.push(...msgs);
      return 'CONSUME_SUCCESS';
    });
    await until(
      async () => seen.length >= 5 && (await drained(rw, namesrv, group, [topic])),
      'rocketwire drained GoOffsets',
    );
    await rw.shutdown();
    t.same(bodies(seen), range('b-', 0, 5), "rocketwire went on from the Go group's offsets");

    await goProduce({ namesrv, topic, count: 5, body: 'c-{i}' });
    const againMessages = await goConsumeAll(t, { namesrv, topic, group, expect: 5 });
    t.same(bodies(againMessages), range('c-', 0, 5), "Go went on from rocketwire's offsets");
  });

  t.test('Go admin: create a topic on the broker, list topics, groups and queues, delete the topic', async (t) => {
    const topic = 'GoAdminTopic';
    const [addr] = broker.brokers;
    t.match(await goAdmin({ namesrv, op: 'create-topic', broker: addr, topic, queues: 3 }), { error: null });
    t.same(
      (await goAdmin({ namesrv, op: 'queues', topic })).queues,
      [0, 1, 2].map((queueId) => ({ brokerName: 'broker-a', queueId })),
    );
    const { summary } = await goProduce({ namesrv, topic, count: 6 });
    t.match(summary, { sent: 6, failed: 0 }, 'the Go producer sends to it');
    const list = await goAdmin({ namesrv, op: 'topic-list' });
    t.ok((list.topics as string[]).includes(topic), 'FetchAllTopicList names it');
    const groups = await goAdmin({ namesrv, op: 'groups', broker: addr });
    t.ok(
      (groups.groups as string[]).includes('go_offsets_cg'),
      'GetAllSubscriptionGroup names a group that consumed here',
    );
    t.match(await goAdmin({ namesrv, op: 'delete-topic', topic }), { error: null });
    const after = await goAdmin({ namesrv, op: 'topic-list' });
    t.notOk((after.topics as string[]).includes(topic), 'gone from the topic list');
    t.equal(broker.instances[0]!.topics.get(topic), undefined, 'gone from the broker');
  });
}
