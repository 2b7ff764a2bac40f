// Typed instrumentation events (KafkaJS-style) of PushConsumer and Producer against the embedded
// broker: rebalance (queues before/after), pull (status, found count), flow-control pause and
// resume, offset commit, send (status, queue, batch size, failure), connect/disconnect and request
// timeout from the remoting client, crash of a queue's pull; and on() returning the remover.
import net from 'node:net';
import t from 'tap';
import { createRequest } from '../../protocol/index.js';
import {
  ConsumerEvents,
  type FlowControlEvent,
  type OffsetCommitEvent,
  type PullEvent,
  type RebalanceEvent,
} from '../../lib/consumer/core/events.js';
import { PushConsumer, pushConsumerImpl } from '../../lib/consumer/push/push-consumer.js';
import { PullMessageService } from '../../lib/consumer/core/pull-message-service.js';
import type { PullRequest } from '../../lib/consumer/core/pull-request.js';
import { ManualClock } from '../../lib/clock.js';
import { Producer } from '../../lib/producer/index.js';
import { ProducerEvents, type SendEvent } from '../../lib/producer/events.js';
import { RemotingClient } from '../../lib/remoting/index.js';
import type { ConnectionEvent, RequestTimeoutEvent } from '../../lib/remoting/events.js';
import { brokerOffsets, produce, uniqueName, until, withBroker } from '../consumer/helpers.js';

t.test('consumer: rebalance, pull and offset commit events; on() returns the remover', async (t) => {
  const broker = await withBroker();
  t.teardown(() => broker.close());
  const topic = uniqueName('EvT');
  await produce(broker.namesrv, topic, 8, () => ({}), { single: true });
  const consumer = new PushConsumer({
    consumerGroup: uniqueName('ev_cg'),
    namesrvAddr: broker.namesrv,
    consumeFromWhere: 'first',
  });
  consumer.subscribe(topic);
  const rebalances: RebalanceEvent[] = [];
  const pulls: PullEvent[] = [];
  const commits: OffsetCommitEvent[] = [];
  const connects: ConnectionEvent[] = [];
  const removed: unknown[] = [];
  t.equal(consumer.events, ConsumerEvents, 'consumer.events names them too');
  consumer.on(consumer.events.REBALANCE, (e) => rebalances.push(e));
  consumer.on(ConsumerEvents.PULL, (e) => pulls.push(e));
  consumer.on(ConsumerEvents.OFFSET_COMMIT, (e) => commits.push(e));
  consumer.on(ConsumerEvents.CONNECT, (e) => connects.push(e));
  const off = consumer.on(ConsumerEvents.PULL, (e) => removed.push(e));
  t.type(off, 'function', 'on() returns a function');
  off();
  let consumed = 0;
  await consumer.start(() => {
    consumed++;
    return 'CONSUME_SUCCESS';
  });
  await until(() => consumed === 8, 'eight messages consumed');
  await until(
    () => pulls.filter((p) => p.status === 'FOUND').reduce((n, p) => n + p.found, 0) === 8,
    'pull events for every message',
  );
  await consumer.shutdown();
  // How the eight messages spread over the queues depends on when the producer's first route
  // refresh replaced the TBW102 template (a new round-robin start, as Java's TopicPublishInfo):
  // the broker says where they went.
  const stored = await brokerOffsets(broker.namesrv, topic, uniqueName('probe_cg'));

  const main = rebalances.find((r) => r.topic === topic);
  t.ok(main, 'a rebalance event for the topic');
  t.same(main!.before, [], 'nothing held before the first rebalance');
  t.equal(main!.after.length, 4, 'the four queues after');
  t.same(main!.added, main!.after);
  t.same(main!.removed, []);
  const found = pulls.filter((p) => p.status === 'FOUND' && p.queue.topic === topic);
  t.ok(
    found.every((p) => p.found > 0 && p.brokerAddr.length > 0 && p.nextOffset > 0 && p.latencyMs >= 0),
    'FOUND pulls carry their count, broker and next offset',
  );
  t.same(removed, [], 'the removed listener never ran');
  // The final flush commits every queue that held messages at its end.
  const last = new Map<number, number>();
  for (const c of commits) if (c.queue.topic === topic) last.set(c.queue.queueId, c.offset);
  t.equal(
    stored.reduce((n, q) => n + q.max, 0),
    8,
    'the broker stored the eight messages',
  );
  t.same(
    [...last.entries()].filter(([, offset]) => offset > 0).sort((a, b) => a[0] - b[0]),
    stored
      .filter((q) => q.max > 0)
      .map((q) => [q.queueId, q.max])
      .sort((a, b) => a[0]! - b[0]!),
    "offset commit events with each queue's end offset",
  );
  t.ok(
    connects.length > 0 && connects.every((c) => typeof c.brokerAddr === 'string'),
    'connect events for the connections opened',
  );
});

t.test('consumer: a second member of the group takes queues away, and the rebalance event says which', async (t) => {
  const broker = await withBroker();
  t.teardown(() => broker.close());
  const topic = uniqueName('EvRebal');
  await produce(broker.namesrv, topic, 1);
  const group = uniqueName('ev_cg');
  const a = new PushConsumer({ consumerGroup: group, namesrvAddr: broker.namesrv, instanceName: uniqueName('a') });
  a.subscribe(topic);
  const seen: RebalanceEvent[] = [];
  a.on(ConsumerEvents.REBALANCE, (e) => e.topic === topic && seen.push(e));
  await a.start(() => 'CONSUME_SUCCESS');
  t.teardown(() => a.shutdown());
  const b = new PushConsumer({ consumerGroup: group, namesrvAddr: broker.namesrv, instanceName: uniqueName('b') });
  b.subscribe(topic);
  await b.start(() => 'CONSUME_SUCCESS');
  t.teardown(() => b.shutdown());
  await until(() => seen.length >= 2, 'the second rebalance of the first member');
  t.equal(seen[0]!.after.length, 4, 'alone: all four queues');
  const second = seen[1]!;
  t.same(second.before, seen[0]!.after, 'before is what the previous event left');
  t.equal(second.after.length, 2, 'two members: two queues each');
  t.equal(second.removed.length, 2, 'two queues given up');
  t.same(second.added, []);
});

t.test('consumer: flow control pauses a queue over its cache limit and resumes it when drained', async (t) => {
  const broker = await withBroker({ queues: 1 });
  t.teardown(() => broker.close());
  const topic = uniqueName('EvFlow');
  await produce(broker.namesrv, topic, 10, () => ({}), { single: true });
  const consumer = new PushConsumer({
    consumerGroup: uniqueName('ev_cg'),
    namesrvAddr: broker.namesrv,
    consumeFromWhere: 'first',
    pullThresholdForQueue: 1,
    consumeThreadMin: 1,
  });
  consumer.subscribe(topic);
  const pauses: FlowControlEvent[] = [];
  const resumes: FlowControlEvent[] = [];
  consumer.on(ConsumerEvents.FLOW_CONTROL_PAUSE, (e) => pauses.push(e));
  consumer.on(ConsumerEvents.FLOW_CONTROL_RESUME, (e) => resumes.push(e));
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let consumed = 0;
  await consumer.start(async () => {
    await gate;
    consumed++;
    return 'CONSUME_SUCCESS';
  });
  t.teardown(() => consumer.shutdown());
  await until(() => pauses.some((p) => p.queue.topic === topic), 'a pause event');
  const remoting = pushConsumerImpl(consumer).instance!.remoting;
  t.equal(
    remoting['observers'].set.size,
    0,
    'nobody listens to connect/disconnect/requestTimeout: the remoting client is not observed',
  );
  const stop = consumer.on(ConsumerEvents.REQUEST_TIMEOUT, () => undefined);
  t.equal(remoting['observers'].set.size, 1, 'observed once someone listens');
  stop();
  const p = pauses.find((x) => x.queue.topic === topic)!;
  t.equal(p.reason, 'count', 'paused for the message count');
  t.ok(p.cachedMessages > 1, 'more cached than pullThresholdForQueue');
  t.ok(p.cachedBytes > 0);
  t.equal(pauses.filter((x) => x.queue.topic === topic).length, 1, 'one pause however many 50 ms re-checks');
  release();
  await until(
    () => consumed === 10 && resumes.some((r) => r.queue.topic === topic),
    'the cache drained and the queue resumed',
  );
  const r = resumes.find((x) => x.queue.topic === topic)!;
  t.equal(r.reason, 'count');
  t.ok(r.pausedMs! >= 0, 'how long it was paused');
});

t.test('producer: send events for answered and failed attempts; on() returns the remover', async (t) => {
  const broker = await withBroker();
  t.teardown(() => broker.close());
  const topic = uniqueName('EvSend');
  const producer = new Producer({ namesrvAddr: broker.namesrv, group: uniqueName('ev_pg') });
  const sends: SendEvent[] = [];
  t.equal(producer.events, ProducerEvents);
  const off = producer.on(producer.events.SEND, (e) => sends.push(e));
  await producer.start();
  t.teardown(() => producer.shutdown());
  const r = await producer.send({ topic, body: 'one' });
  await producer.sendBatch([
    { topic, body: 'a' },
    { topic, body: 'b' },
  ]);
  await t.rejects(producer.send({ topic, body: 'x' }, { queue: { topic, brokerName: 'no-such-broker', queueId: 1 } }));
  off();
  await producer.send({ topic, body: 'not seen' });
  const stop = producer.on(ProducerEvents.SEND, () => {
    throw new Error('a listener bug');
  });
  t.equal(
    (await producer.send({ topic, body: 'still sent' })).status,
    'SEND_OK',
    'a throwing listener does not fail the send',
  );
  stop();
  t.equal(sends.length, 3, 'three attempts seen, none after the remover ran');
  t.match(sends[0], {
    topic,
    status: 'SEND_OK',
    messages: 1,
    queue: { topic, brokerName: r.messageQueue.brokerName, queueId: r.messageQueue.queueId },
  });
  t.ok(sends[0]!.latencyMs >= 0);
  t.match(sends[1], { topic, status: 'SEND_OK', messages: 2 });
  t.match(sends[2], {
    topic,
    status: 'FAILED',
    messages: 1,
    queue: { brokerName: 'no-such-broker', queueId: 1 },
    error: { name: 'NoRouteError' },
  });
});

t.test('remoting: connect, disconnect and request timeout reach the observers', async (t) => {
  // A peer that accepts and never answers, then hangs up.
  const sockets: net.Socket[] = [];
  const server = net.createServer((s) => sockets.push(s));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const addr = `127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  const client = new RemotingClient({ defaultTimeoutMs: 100 });
  t.teardown(async () => {
    await client.close();
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => server.close(() => r()));
  });
  const connected: ConnectionEvent[] = [];
  const disconnected: ConnectionEvent[] = [];
  const timeouts: RequestTimeoutEvent[] = [];
  const stop = client.observe({
    connected: (e) => connected.push(e),
    disconnected: (e) => disconnected.push(e),
    timedOut: (e) => timeouts.push(e),
  });
  await t.rejects(client.invoke(addr, createRequest(105), { timeoutMs: 50 }), { name: 'RemotingTimeoutError' });
  t.same(connected, [{ brokerAddr: addr }]);
  t.equal(timeouts.length, 1);
  t.match(timeouts[0], { brokerAddr: addr, code: 105 });
  t.ok(timeouts[0]!.timeoutMs <= 50, 'the time left after connecting');
  for (const s of sockets) s.destroy();
  await until(() => disconnected.length === 1, 'the disconnect');
  t.equal(disconnected[0]!.brokerAddr, addr);
  t.type(disconnected[0]!.error, Error, 'closed by the peer, with the reason');
  stop();
  await t.rejects(client.invoke(addr, createRequest(105), { timeoutMs: 50 }));
  t.equal(timeouts.length, 1, 'no event after the observer was removed');
});

t.test("a pull request whose handling throws is reported as a crash of that queue's pulls", async (t) => {
  const clock = new ManualClock();
  const crashes: { pr: PullRequest; err: unknown }[] = [];
  const handled: PullRequest[] = [];
  const service = new PullMessageService(
    (pr) => {
      handled.push(pr);
      if (pr.messageQueue.queueId === 0) throw new Error('boom');
    },
    clock,
    (pr, err) => crashes.push({ pr, err }),
  );
  service.start();
  const pr = (queueId: number) =>
    ({ messageQueue: { topic: 'T', brokerName: 'b', queueId } }) as unknown as PullRequest;
  service.executePullRequestImmediately(pr(0));
  service.executePullRequestImmediately(pr(1));
  await until(() => handled.length === 2, 'both handled');
  await service.shutdown();
  t.equal(crashes.length, 1, 'one crash');
  t.equal(crashes[0]!.pr.messageQueue.queueId, 0, 'naming the queue');
  t.match(crashes[0]!.err, { message: 'boom' });
  t.equal(handled[1]!.messageQueue.queueId, 1, 'the loop went on with the next queue');
});
