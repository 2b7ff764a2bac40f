// A push consumer sends one heartbeat per rebalance round, not one per topic whose queues changed.
// Each changed topic gets a new subVersion, and the broker answers a pull whose subVersion is newer
// than the one it holds SUBSCRIPTION_NOT_LATEST, so the heartbeat carrying them must reach the
// broker before the round's first pulls; one heartbeat per changed topic made a first rebalance of
// T topics send T heartbeats each carrying all T subscriptions (T² bytes). Here 20 topics: the first
// round, and the round after a second member joins and every topic's share changes. Time runs on a
// ManualClock shared with the embedded broker, so no scheduled heartbeat or rebalance comes between.
import t from 'tap';
import { ManualClock } from '../../lib/clock.js';
import { startBroker } from '../../lib/broker/index.js';
import { PushConsumer, type MessageExt } from '../../lib/consumer/index.js';
import { pushConsumerImpl } from '../../lib/consumer/push/push-consumer.js';
import { REBALANCE_MIN_INTERVAL_MS } from '../../lib/consumer/core/rebalance-impl.js';
import type { RemotingConnection } from '../../lib/remoting/index.js';
import { RequestCode, ResponseCode, type RemotingCommand } from '../../protocol/index.js';
import { createTopic, produce } from '../support/embedded-broker.js';
import { uniqueName } from '../support/names.js';
import { until } from '../support/until.js';

const TOPICS = 20;

interface Heartbeat {
  kind: 'heartbeat';
  clientId: string;
  /** topic → subVersion, for the group under test; empty for a heartbeat without subscriptions. */
  subVersions: Map<string, number>;
}
interface Pull {
  kind: 'pull';
  clientId: string;
  topic: string;
  subVersion: number;
  answer: number;
}

t.test(
  `a consumer of ${TOPICS} topics sends one heartbeat per rebalance round, before the round's pulls`,
  async (t) => {
    const clock = new ManualClock();
    const broker = await startBroker({ queues: 2, clock });
    t.teardown(() => broker.close());
    const group = uniqueName('cg');
    const topics = Array.from({ length: TOPICS }, (_, i) => uniqueName(`T${i}_`));
    for (const topic of topics) {
      await createTopic(broker.brokers, topic, 2);
      await produce(broker.namesrv, topic, 2, (i) => ({ body: `${topic}/${i}` }));
    }

    // Every HEART_BEAT and PULL_MESSAGE in the order the broker took them; a pull is told apart by the
    // connection, which the heartbeat on it names.
    const seen: (Heartbeat | Pull)[] = [];
    const clientOf = new WeakMap<RemotingConnection, string>();
    const processors = broker.instances[0]!.server['processors'];
    const heartbeat = processors.get(RequestCode.HEART_BEAT)!;
    processors.set(RequestCode.HEART_BEAT, (req: RemotingCommand, conn) => {
      const data = JSON.parse(req.body!.toString()) as {
        clientID: string;
        consumerDataSet: { groupName: string; subscriptionDataSet: { topic: string; subVersion: number }[] }[];
      };
      const mine = data.consumerDataSet.find((cd) => cd.groupName === group);
      clientOf.set(conn, data.clientID);
      seen.push({
        kind: 'heartbeat',
        clientId: data.clientID,
        subVersions: new Map((mine?.subscriptionDataSet ?? []).map((s) => [s.topic, s.subVersion])),
      });
      return heartbeat(req, conn);
    });
    const pull = processors.get(RequestCode.PULL_MESSAGE)!;
    processors.set(RequestCode.PULL_MESSAGE, async (req: RemotingCommand, conn) => {
      const entry: Pull = {
        kind: 'pull',
        clientId: clientOf.get(conn) ?? '?',
        topic: req.extFields!.topic!,
        subVersion: Number(req.extFields!.subVersion),
        answer: -1,
      };
      seen.push(entry);
      const res = await pull(req, conn);
      // a suspended long poll answers later; its code is then the one the consumer gets
      entry.answer = res?.code ?? -1;
      return res;
    });

    // While A's round asks the broker for consumer lists and start offsets, a pull A sent of any
    // topic would carry the subVersion A holds now: the broker must hold it already (or a newer one).
    let consumerA: PushConsumer | null = null;
    const ahead: string[] = [];
    const checkVersions = () => {
      if (!consumerA) return;
      const registered = broker.instances[0]!.consumers.find(group)?.subscriptions;
      for (const [topic, sub] of pushConsumerImpl(consumerA).subscriptionInner) {
        const held = registered?.get(topic)?.subVersion ?? -1;
        if (sub.subVersion > held) ahead.push(`${topic}: ${sub.subVersion} > ${held}`);
      }
    };
    for (const code of [RequestCode.GET_CONSUMER_LIST_BY_GROUP, RequestCode.QUERY_CONSUMER_OFFSET]) {
      const fn = processors.get(code)!;
      processors.set(code, (req: RemotingCommand, conn) => {
        if (consumerA && clientOf.get(conn) === consumerA.clientId) checkVersions();
        return fn(req, conn);
      });
    }

    const got = new Set<string>();
    const start = async (name: string, created: (c: PushConsumer) => void = () => {}) => {
      const c = new PushConsumer({
        consumerGroup: group,
        namesrvAddr: broker.namesrv,
        consumeFromWhere: 'first',
        clock,
        instanceName: uniqueName(name),
        subscriptions: Object.fromEntries(topics.map((topic) => [topic, '*'])),
      });
      created(c);
      await c.start((msgs: MessageExt[]) => {
        for (const m of msgs) got.add(m.body.toString());
        return 'CONSUME_SUCCESS';
      });
      t.teardown(() => c.shutdown());
      return c;
    };

    const a = await start('a', (c) => {
      consumerA = c;
    });
    const aImpl = pushConsumerImpl(a);
    const aId = aImpl.clientId;
    await until(
      () => got.size === TOPICS * 2,
      () => `every message consumed (${got.size} of ${TOPICS * 2})`,
    );
    const aBeats = () => seen.filter((s): s is Heartbeat => s.kind === 'heartbeat' && s.clientId === aId);
    // start() sends one heartbeat before the first round (the broker learns the group), then the
    // round takes every queue of the 20 topics and the retry topic: 21 topics changed, one heartbeat.
    t.equal(aImpl.rebalance.counts.runs, 1, 'one rebalance round so far');
    t.equal(aBeats().length, 2, "start()'s heartbeat and one for the round (not one per topic: 21 changed)");
    const roundBeat = aBeats()[1]!;
    const firstPull = seen.findIndex((s) => s.kind === 'pull' && s.clientId === aId);
    t.ok(firstPull > seen.indexOf(roundBeat), "the round's heartbeat reached the broker before its first pull");
    for (const topic of topics)
      t.ok(
        roundBeat.subVersions.get(topic)! >= aImpl.subscriptionInner.get(topic)!.subVersion,
        `the round's heartbeat carries ${topic}'s new subVersion`,
      );
    const aPulls = seen.filter((s): s is Pull => s.kind === 'pull' && s.clientId === aId);
    const aPulled = new Set(aPulls.map((p) => p.topic));
    t.ok(
      topics.every((topic) => aPulled.has(topic)),
      'every topic pulled',
    );
    t.same(
      aPulls.filter(
        (p) => p.answer === ResponseCode.SUBSCRIPTION_NOT_LATEST || p.answer === ResponseCode.SUBSCRIPTION_NOT_EXIST,
      ),
      [],
      'no pull refused for a subscription the broker did not know yet',
    );

    // The client's first scheduled heartbeat (1 s after start) goes now, not amid the rounds below.
    const scheduledBefore = aBeats().length;
    clock.advance(1000);
    await until(() => aBeats().length > scheduledBefore, "A's first scheduled heartbeat");

    // A second member: the broker tells A, whose next round gives up one queue of each topic.
    const beatsBefore = aBeats().length;
    const runsBefore = aImpl.rebalance.counts.runs;
    const seenBefore = seen.length;
    const b = await start('b');
    const bId = pushConsumerImpl(b).clientId;
    // A round a notification asks for starts 1 s after the member's previous round ended (Java's
    // minInterval): the clock moves on only while such a round waits.
    const spaced = [aImpl.rebalance, pushConsumerImpl(b).rebalance];
    const letSpacedRoundsRun = (): void => {
      if (spaced.some((r) => r['wakeSpacing'] !== null)) clock.advance(REBALANCE_MIN_INTERVAL_MS);
    };
    await until(
      () => {
        letSpacedRoundsRun();
        return a.assignment().filter((mq) => topics.includes(mq.topic)).length === TOPICS;
      },
      () => `A holds one queue of each topic (${a.assignment().length})`,
    );
    await until(
      () => {
        letSpacedRoundsRun();
        return b.assignment().filter((mq) => topics.includes(mq.topic)).length === TOPICS;
      },
      () => `B holds one queue of each topic (${b.assignment().length})`,
    );
    const rounds = aImpl.rebalance.counts.runs - runsBefore;
    const beats = aBeats().length - beatsBefore;
    t.ok(rounds >= 1, `A rebalanced (${rounds} round(s))`);
    t.ok(beats >= 1 && beats <= rounds, `A sent ${beats} heartbeat(s) in ${rounds} round(s): at most one a round`);
    // B's queues are its own once its round's heartbeat is answered: then it pulls them
    const bPulled = () =>
      new Set(seen.slice(seenBefore).flatMap((s) => (s.kind === 'pull' && s.clientId === bId ? [s.topic] : [])));
    await until(
      () => topics.every((topic) => bPulled().has(topic)),
      () => `B pulled every topic (${bPulled().size})`,
    );
    t.same(
      seen
        .slice(seenBefore)
        .filter(
          (s) =>
            s.kind === 'pull' &&
            (s.answer === ResponseCode.SUBSCRIPTION_NOT_LATEST || s.answer === ResponseCode.SUBSCRIPTION_NOT_EXIST),
        ),
      [],
      'no pull of either member refused for its subscription',
    );
    t.same(ahead, [], 'during the rounds, no subVersion of A ran ahead of what the broker held');
  },
);
