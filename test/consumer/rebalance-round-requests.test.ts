// What one rebalance round asks the broker. Java asks, per subscribed topic, one broker for the
// group's client ids, then each newly assigned queue's start offset, one request after the other:
// a first round of T topics × Q queues costs T consumer-list queries and T × Q offset queries in
// sequence before the first pull (at 256 topics × 4 queues about 1 300 round trips). The group's
// list does not depend on the topic, so a round asks each broker for it once; a topic's start
// offsets are asked together, a bounded number at a time. Time runs on a ManualClock shared with
// the embedded broker, so no scheduled round or heartbeat comes between.
import t from 'tap';
import { ManualClock } from '../../lib/clock.js';
import { startBroker } from '../../lib/broker/index.js';
import { PushConsumer, LitePullConsumer, type MessageExt } from '../../lib/consumer/index.js';
import { pushConsumerImpl } from '../../lib/consumer/push/push-consumer.js';
import { START_OFFSET_CONCURRENCY } from '../../lib/consumer/core/rebalance-impl.js';
import { createResponse, RequestCode, ResponseCode, type RemotingCommand } from '../../protocol/index.js';
import { createTopic, produce } from '../support/embedded-broker.js';
import { uniqueName } from '../support/names.js';
import { until } from '../support/until.js';

/** Counts a request code at the broker, and how many of it were unanswered at once at most. */
function watch(broker: Awaited<ReturnType<typeof startBroker>>, code: number) {
  const seen = { count: 0, inFlight: 0, maxInFlight: 0 };
  const processors = broker.instances[0]!.server['processors'];
  const fn = processors.get(code)!;
  processors.set(code, async (req: RemotingCommand, conn) => {
    seen.count++;
    seen.inFlight++;
    seen.maxInFlight = Math.max(seen.maxInFlight, seen.inFlight);
    // The answer waits for the next turn of the event loop, so requests the client had already
    // written are read first: one client waiting for each answer before the next request still
    // shows one in flight.
    await new Promise<void>((resolve) => setImmediate(resolve));
    try {
      return await fn(req, conn);
    } finally {
      seen.inFlight--;
    }
  });
  return seen;
}

t.test('a push consumer first round: one consumer-list query, start offsets asked together', async (t) => {
  const TOPICS = 12;
  const QUEUES = 8;
  const clock = new ManualClock();
  const broker = await startBroker({ queues: QUEUES, clock });
  t.teardown(() => broker.close());
  const topics = Array.from({ length: TOPICS }, (_, i) => uniqueName(`R${i}_`));
  for (const topic of topics) {
    await createTopic(broker.brokers, topic, QUEUES);
    await produce(broker.namesrv, topic, 1, (i) => ({ body: `${topic}/${i}` }));
  }
  const lists = watch(broker, RequestCode.GET_CONSUMER_LIST_BY_GROUP);
  const offsets = watch(broker, RequestCode.QUERY_CONSUMER_OFFSET);

  const got = new Set<string>();
  const c = new PushConsumer({
    consumerGroup: uniqueName('cg'),
    namesrvAddr: broker.namesrv,
    consumeFromWhere: 'first',
    clock,
    subscriptions: Object.fromEntries(topics.map((topic) => [topic, '*'])),
  });
  await c.start((msgs: MessageExt[]) => {
    for (const m of msgs) got.add(m.body.toString());
    return 'CONSUME_SUCCESS';
  });
  t.teardown(() => c.shutdown());
  await until(
    () => got.size === TOPICS,
    () => `every message consumed (${got.size} of ${TOPICS})`,
  );

  const impl = pushConsumerImpl(c);
  t.equal(impl.rebalance.counts.runs, 1, 'one round so far');
  // the subscribed topics and the group's retry topic, all on the one broker
  t.equal(lists.count, 1, `one GET_CONSUMER_LIST_BY_GROUP for ${TOPICS + 1} topics`);
  t.equal(c.assignment().length, TOPICS * QUEUES + 1, 'every queue taken');
  t.equal(offsets.count, TOPICS * QUEUES + 1, 'one start-offset query per queue taken');
  t.ok(offsets.maxInFlight > 1, `start offsets asked together (${offsets.maxInFlight} at once at most)`);
  t.ok(
    offsets.maxInFlight <= START_OFFSET_CONCURRENCY,
    `no more than ${START_OFFSET_CONCURRENCY} at once (${offsets.maxInFlight})`,
  );
});

t.test('a failed consumer-list answer is asked again for the next topic of the round', async (t) => {
  const clock = new ManualClock();
  const broker = await startBroker({ queues: 2, clock });
  t.teardown(() => broker.close());
  const topics = [uniqueName('F0_'), uniqueName('F1_')];
  for (const topic of topics) await createTopic(broker.brokers, topic, 2);
  const processors = broker.instances[0]!.server['processors'];
  const fn = processors.get(RequestCode.GET_CONSUMER_LIST_BY_GROUP)!;
  let asked = 0;
  processors.set(RequestCode.GET_CONSUMER_LIST_BY_GROUP, (req: RemotingCommand, conn) => {
    asked++;
    // the first answer of the round is a system error; the ones after it are the broker's own
    if (asked === 1) return createResponse(req, ResponseCode.SYSTEM_ERROR, { remark: 'busy' });
    return fn(req, conn);
  });
  const c = new LitePullConsumer({
    consumerGroup: uniqueName('cg'),
    namesrvAddr: broker.namesrv,
    clock,
  });
  c.subscribe(topics[0]!, '*').subscribe(topics[1]!, '*');
  await c.start();
  t.teardown(() => c.shutdown());
  // one topic's list failed; the next topic asked again and got an answer
  t.equal(asked, 2, 'asked twice: once failed, once answered');
  t.ok(c.assignment().length >= 2, `the topic after the failure was assigned (${c.assignment().length} queues)`);
});
