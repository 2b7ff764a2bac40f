// Static topics (RIP-21) on two real 5.3.3 broker groups: a topic made by `mqadmin updateStaticTopic`
// on broker-a, a rocketwire producer and push consumer running on it, then its logic queues remapped
// to broker-b by `mqadmin remappingStaticTopic` while they run. Nothing is lost, the consumer's
// committed logic-queue offsets only grow (no reset, no OFFSET_ILLEGAL), and each logic queue's
// offsets run without a hole in each broker's stretch, the second stretch starting where the new
// leader's mapping item says. Then a Java consumer reads the whole topic and gets the same messages
// at the same logic offsets. Beside it, AdminClient.updateStaticTopic makes a second topic the same
// way, compared with mqadmin's: the routes' mappings and every broker's TopicQueueMappingDetail.
import t from 'tap';
import { AdminClient } from '../../lib/admin/index.js';
import { LitePullConsumer, PushConsumer } from '../../lib/consumer/index.js';
import { Producer } from '../../lib/producer/index.js';
import type { TopicConfigBody, TopicRouteData } from '../../protocol/index.js';
import { startRealCluster, V5_VERSION } from './harness.js';
import { mqadminBatch } from './java-admin.js';
import { startJavaConsumer } from './java-client.js';
import { interopReady } from './skip.js';
import { until } from '../support/until.js';
import { runCli } from '../cli/run-in-process.js';

t.setTimeout(240_000);

/** What a route says of a static topic, without the epoch (a time stamp) and the topic name. */
function routeShape(route: TopicRouteData) {
  const mapping = Object.entries(route.topicQueueMappingByBroker ?? {})
    .map(([b, i]) => ({
      broker: b,
      bname: i.bname,
      scope: i.scope,
      totalQueues: i.totalQueues,
      dirty: i.dirty,
      currIdMap: i.currIdMap,
    }))
    .sort((a, b) => (a.broker < b.broker ? -1 : 1));
  const queues = route.queueDatas
    .map((q) => ({ brokerName: q.brokerName, read: q.readQueueNums, write: q.writeQueueNums, perm: q.perm }))
    .sort((a, b) => (a.brokerName < b.brokerName ? -1 : 1));
  return { mapping, queues };
}

/** A broker's config and mapping detail of a static topic, without epoch and topic name. */
function detailShape(c: TopicConfigBody | null) {
  if (!c) return null;
  const d = c.mappingDetail;
  return {
    read: c.readQueueNums,
    write: c.writeQueueNums,
    perm: c.perm,
    mapping: d
      ? { bname: d.bname, scope: d.scope, totalQueues: d.totalQueues, dirty: d.dirty, hostedQueues: d.hostedQueues }
      : null,
  };
}

if (await interopReady(t, [V5_VERSION])) {
  const cluster = await startRealCluster({ version: V5_VERSION, brokers: 2 });
  t.teardown(() => cluster.stop({ graceful: false }));
  const [brokerA, brokerB] = cluster.brokerNames as [string, string];
  const [addrA, addrB] = cluster.brokers as [string, string];
  const admin = new AdminClient({ namesrvAddr: cluster.namesrv });
  t.teardown(() => admin.close());
  const mappedRoute = async (topic: string, leader: string, ids: number): Promise<TopicRouteData> => {
    let route: TopicRouteData | null = null;
    await until(
      async () => {
        route = await admin.topicRoute(topic).catch(() => null);
        const led = route?.topicQueueMappingByBroker?.[leader]?.currIdMap ?? {};
        return Object.keys(led).length === ids;
      },
      `${topic}: ${leader} leading ${ids} logic queues in the route`,
      30_000,
    );
    return route!;
  };

  t.test('updateStaticTopic: rocketwire writes what mqadmin writes', async (t) => {
    const [made] = await mqadminBatch(cluster.namesrv, [`updateStaticTopic -t StaticJ -b ${brokerA} -qn 4`]);
    t.match(made!.output, /The new mapping data is written to file/, 'mqadmin made StaticJ');
    const ours = await admin.updateStaticTopic({ topic: 'StaticR', brokers: [brokerA], queueNums: 4 });
    t.same(
      ours.brokers.map((b) => [b.brokerName, b.logicQueues]),
      [
        [brokerA, [0, 1, 2, 3]],
        [brokerB, []],
      ],
      'all four logic queues on broker-a; broker-b of the same cluster learns the (empty) mapping, as mqadmin does',
    );
    const routeJ = await mappedRoute('StaticJ', brokerA, 4);
    const routeR = await mappedRoute('StaticR', brokerA, 4);
    t.same(routeShape(routeR), routeShape(routeJ), 'the same route: queue datas and topicQueueMappingByBroker');
    t.same(routeShape(routeJ).mapping[0]?.currIdMap, { 0: 0, 1: 1, 2: 2, 3: 3 });
    for (const addr of [addrA, addrB]) {
      const j = detailShape(await admin.topicConfig(addr, 'StaticJ', { mapping: true }));
      const r = detailShape(await admin.topicConfig(addr, 'StaticR', { mapping: true }));
      t.same(r, j, `the same config and TopicQueueMappingDetail on ${addr}`);
    }
    await t.rejects(
      admin.updateStaticTopic({ topic: 'StaticR', brokers: [brokerA], queueNums: 2 }),
      { name: 'StaticTopicError', message: /cannot shrink/ },
      'a static topic never shrinks (as mqadmin)',
    );
    // Growing it: the new logic queues go to the least loaded target, here broker-b.
    const grown = await admin.updateStaticTopic({ topic: 'StaticR', brokers: [brokerA, brokerB], queueNums: 6 });
    t.same(
      grown.brokers.map((b) => [b.brokerName, b.logicQueues]),
      [
        [brokerA, [0, 1, 2, 3]],
        [brokerB, [4, 5]],
      ],
    );
    t.ok(grown.epoch > ours.epoch, 'a new epoch');
    await mappedRoute('StaticR', brokerB, 2);
    // The CLI: a static topic over the whole cluster, two logic queues, one on each broker.
    const cli = await runCli([
      'admin',
      'topic',
      'update-static',
      '--topic',
      'StaticC',
      '--queues',
      '2',
      '--clusters',
      cluster.clusterName,
      '--namesrv',
      cluster.namesrv,
      '--json',
    ]);
    t.equal(cli.code, 0, cli.stderr);
    const printed = JSON.parse(cli.stdout) as { totalQueues: number; brokers: Array<{ logicQueues: number[] }> };
    t.equal(printed.totalQueues, 2);
    t.same(
      printed.brokers.map((b) => b.logicQueues.length),
      [1, 1],
      'update-static --clusters: one logic queue on each broker (least loaded first)',
    );
    const routeC = await mappedRoute('StaticC', brokerA, 1);
    t.equal(Object.keys(routeC.topicQueueMappingByBroker?.[brokerB]?.currIdMap ?? {}).length, 1);
  });

  t.test(
    'remapped to broker-b while a producer and a push consumer run: nothing lost, offsets only grow',
    async (t) => {
      const topic = 'StaticJ';
      const producer = new Producer({
        namesrvAddr: cluster.namesrv,
        group: 'static_pg',
        pollNameServerIntervalMs: 1000,
      });
      await producer.start();
      t.teardown(() => producer.shutdown());
      const consumer = new PushConsumer({
        consumerGroup: 'static_cg',
        namesrvAddr: cluster.namesrv,
        subscriptions: { [topic]: '*' },
        consumeFromWhere: 'first',
        pollNameServerIntervalMs: 1000,
        rebalanceIntervalMs: 2000,
        persistOffsetIntervalMs: 500,
      });
      t.teardown(() => consumer.shutdown());
      /** key → logic queue and offset of each delivery. */
      const received = new Map<string, Array<{ queueId: number; offset: number }>>();
      let deliveries = 0;
      const commits = new Map<number, Array<{ offset: number; addr: string }>>();
      const illegal: string[] = [];
      consumer.on('offsetCommit', (e) => {
        // The group's retry topic is committed too; only the static topic's logic queues count here.
        if (e.queue.topic !== topic) return;
        let list = commits.get(e.queue.queueId);
        if (!list) commits.set(e.queue.queueId, (list = []));
        list.push({ offset: e.offset, addr: e.brokerAddr });
      });
      consumer.on('pull', (e) => {
        if (e.status === 'OFFSET_ILLEGAL') illegal.push(`${e.queue.queueId}@${e.nextOffset}`);
      });
      await consumer.start((msgs, ctx) => {
        for (const m of msgs) {
          const key = m.body.toString();
          let list = received.get(key);
          if (!list) received.set(key, (list = []));
          list.push({ queueId: ctx.messageQueue.queueId, offset: m.queueOffset });
          deliveries++;
        }
        return 'CONSUME_SUCCESS';
      });

      // The producer keeps at most 16 messages ahead of the consumer, and runs until told to stop.
      const sent: Array<{ key: string; queueId: number; offset: number; brokerName: string }> = [];
      const sendFailures: string[] = [];
      let stop = false;
      const producing = (async () => {
        for (let i = 0; !stop; i++) {
          await until(() => stop || sent.length - received.size < 16, 'the consumer to catch up', Infinity);
          if (stop) break;
          const key = `m-${i}`;
          try {
            const r = await producer.send({ topic, body: key, keys: key });
            sent.push({
              key,
              queueId: r.messageQueue.queueId,
              offset: r.queueOffset,
              brokerName: r.messageQueue.brokerName,
            });
          } catch (err) {
            // Counted, and the message is not expected: the assertion below wants none of these.
            sendFailures.push(`${key}: ${(err as Error).message}`);
          }
        }
      })();

      await until(
        () => received.size >= 200,
        () => `200 messages before the remap (got ${received.size})`,
        60_000,
      );
      t.same([...new Set(sent.map((s) => s.brokerName))], ['__syslo__global__'], 'sends name the logic queues');
      const before = new Map([...commits].map(([q, l]) => [q, l[l.length - 1]!.offset]));

      const [remap] = await mqadminBatch(cluster.namesrv, [`remappingStaticTopic -t ${topic} -b ${brokerB}`]);
      t.notMatch(remap!.stderr, /Exception/, 'mqadmin remappingStaticTopic ran');
      await mappedRoute(topic, brokerB, 4);
      // Counted from here: the producer kept sending to broker-a while mqadmin's JVM started.
      const sentAtRemap = sent.length;
      // Every logic queue: a commit at broker-b, and 200 more messages through.
      await until(
        () =>
          [0, 1, 2, 3].every((q) => commits.get(q)?.some((c) => c.addr === addrB)) &&
          received.size >= sentAtRemap + 200,
        () => `commits at broker-b for every logic queue and 200 more messages (got ${received.size - sentAtRemap})`,
        90_000,
      );
      stop = true;
      await producing;
      await until(
        () => sent.every((s) => received.has(s.key)),
        () => `every sent message consumed (missing ${sent.filter((s) => !received.has(s.key)).length})`,
        60_000,
      );
      // The consumer commits everything it consumed, at broker-b, in logic offsets.
      const lastConsumed = (q: number): number =>
        Math.max(
          ...[...received.values()]
            .flat()
            .filter((r) => r.queueId === q)
            .map((r) => r.offset),
        );
      await until(
        () =>
          [0, 1, 2, 3].every((q) => {
            const l = commits.get(q);
            const last = l?.[l.length - 1];
            return last !== undefined && last.addr === addrB && last.offset === lastConsumed(q) + 1;
          }),
        () => `every logic queue committed through its last message at broker-b`,
        30_000,
      );
      t.same(sendFailures, [], 'no send failed: a refused send to the old leader is retried at the new one');
      t.equal(received.size, sent.length, `all ${sent.length} sent messages consumed`);
      t.comment(`${sent.length} sent, ${deliveries} deliveries (${deliveries - received.size} redeliveries)`);

      const topicConfigB = await admin.topicConfig(addrB, topic, { mapping: true });
      for (const q of [0, 1, 2, 3]) {
        const items = topicConfigB?.mappingDetail?.hostedQueues[q] ?? [];
        t.equal(items.length, 2, `logic queue ${q}: a stretch on broker-a, then one on broker-b`);
        const cut = items[1]!.logicOffset;
        const sends = sent.filter((s) => s.queueId === q);
        const got = [
          ...new Set(
            [...received.values()]
              .flat()
              .filter((r) => r.queueId === q)
              .map((r) => r.offset),
          ),
        ].sort((a, b) => a - b);
        // A send taken by broker-b before the remap decided where its stretch starts is answered with
        // queueOffset −1 (Apache's SendMessageProcessor: the item's logicOffset is still −1); it is
        // stored, and consumed, at an offset of the new stretch.
        const undecided = sends.filter((s) => s.offset < 0).map((s) => s.key);
        t.equal(got.length, sends.length, `logic queue ${q}: one offset consumed per message sent to it`);
        t.same(
          got.filter((o) => !undecided.some((k) => received.get(k)![0]!.offset === o)),
          sends
            .filter((s) => s.offset >= 0)
            .map((s) => s.offset)
            .sort((a, b) => a - b),
          `logic queue ${q}: the offsets the sends were given are the ones consumed`,
        );
        t.ok(
          undecided.every((k) => received.get(k)![0]!.offset >= cut),
          `logic queue ${q}: ${undecided.length} sends answered with offset −1 were consumed in the new stretch`,
        );
        const first = got.filter((o) => o < cut);
        const second = got.filter((o) => o >= cut);
        t.same(
          first,
          first.map((_, i) => i),
          `logic queue ${q}: 0..${first.length - 1} on broker-a, no hole`,
        );
        t.same(
          second,
          second.map((_, i) => cut + i),
          `logic queue ${q}: from ${cut} on broker-b, no hole`,
        );
        t.ok(second.length > 0, `logic queue ${q} got messages after the remap`);
        const offs = commits.get(q)!.map((c) => c.offset);
        t.ok(
          offs.every((o, i) => i === 0 || o >= offs[i - 1]!),
          `logic queue ${q}: committed offsets never go back (${offs[0]} … ${offs[offs.length - 1]})`,
        );
        t.ok(
          offs[offs.length - 1]! > (before.get(q) ?? 0),
          `logic queue ${q}: committed past its offset before the remap`,
        );
      }
      t.same(illegal, [], 'no pull answered OFFSET_ILLEGAL: no offset was reset');

      // rocketwire's lite pull consumer reads it all too, across both stretches of every logic queue.
      const lite = new LitePullConsumer({
        consumerGroup: 'static_lite_cg',
        namesrvAddr: cluster.namesrv,
        consumeFromWhere: 'first',
      });
      lite.subscribe(topic);
      await lite.start();
      t.teardown(() => lite.shutdown());
      const liteOffsets = new Map<string, number>();
      await until(
        async () => {
          for (const m of await lite.poll(100)) liteOffsets.set(m.body.toString(), m.queueOffset);
          return liteOffsets.size >= sent.length;
        },
        () => `the lite pull consumer to read all ${sent.length} (got ${liteOffsets.size})`,
        60_000,
      );
      t.same(
        sent.filter((s) => liteOffsets.get(s.key) !== received.get(s.key)![0]!.offset).map((s) => s.key),
        [],
        'LitePullConsumer: every message, at the logic offset the push consumer saw',
      );
      await lite.shutdown();

      // An orderly push consumer: locks at each logic queue's leader, every queue in order across its stretches.
      const orderly = new PushConsumer({
        consumerGroup: 'static_orderly_cg',
        namesrvAddr: cluster.namesrv,
        subscriptions: { [topic]: '*' },
        consumeFromWhere: 'first',
        orderly: true,
      });
      t.teardown(() => orderly.shutdown());
      const inOrder = new Map<number, number[]>();
      let orderlySeen = 0;
      await orderly.start((msgs, ctx) => {
        let list = inOrder.get(ctx.messageQueue.queueId);
        if (!list) inOrder.set(ctx.messageQueue.queueId, (list = []));
        for (const m of msgs) list.push(m.queueOffset);
        orderlySeen += msgs.length;
        return 'SUCCESS';
      });
      await until(
        () => orderlySeen >= sent.length,
        () => `the orderly consumer to read all ${sent.length} (got ${orderlySeen})`,
        60_000,
      );
      t.same(
        [...inOrder].filter(([, offs]) => offs.some((o, i) => i > 0 && o <= offs[i - 1]!)).map(([q]) => q),
        [],
        'orderly: every logic queue delivered in offset order, once, across the remap',
      );
      t.equal(orderlySeen, sent.length, 'orderly: every message once');
      await orderly.shutdown();

      // Java's client reads the whole static topic from the start: the same messages at the same logic offsets.
      const java = await startJavaConsumer({
        namesrv: cluster.namesrv,
        topic,
        group: 'static_java_cg',
        from: 'first',
        expect: sent.length,
        timeoutMs: 60_000,
      });
      const got = await java.done;
      const javaOffsets = new Map(got.messages.map((m) => [m.keys, m.queueOffset]));
      t.equal(new Set(got.messages.map((m) => m.keys)).size, sent.length, 'Java consumed every message');
      t.same(
        sent.filter((s) => javaOffsets.get(s.key) !== received.get(s.key)![0]!.offset).map((s) => s.key),
        [],
        'at the logic offsets rocketwire consumed them',
      );
    },
  );
}
