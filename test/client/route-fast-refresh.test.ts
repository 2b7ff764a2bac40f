// The fast route refresh: a broker that refuses connections or drops one under a call makes the
// client instance ask the name server for the routes that name it at once, bounded per topic and
// in all (on the injected clock), instead of waiting for the 30 s poll.
import t, { type Test } from 'tap';
import { ManualClock } from '../../lib/clock.js';
import { FastRouteRefresh } from '../../lib/client/route-fast-refresh.js';
import { MQClientInstance } from '../../lib/client/index.js';
import { Producer } from '../../lib/producer/index.js';
import { RequestCode, type TopicRouteData } from '../../protocol/index.js';
import { refusedAddress, routeJson, startFakeBroker, startFakeNameServer } from './fake-cluster.js';
import { waitFor } from '../support/until.js';

/** A route whose one broker has the queues and a master. */
const withMaster: TopicRouteData = JSON.parse(routeJson([{ name: 'broker-a', addrs: { '0': 'b:1', '2': 'b:2' } }]));
/** The same broker between its master's death and the promotion: queues, no master. */
const masterless: TopicRouteData = JSON.parse(routeJson([{ name: 'broker-a', addrs: { '2': 'b:2' } }]));

function refresher(
  clock: ManualClock,
  topicsOf: Record<string, string[]>,
  opts = { minIntervalMs: 1000, maxPerSecond: 3 },
) {
  const asked: string[] = [];
  const r = new FastRouteRefresh({
    clock,
    ...opts,
    maxFollowUpMs: 30_000,
    topicsOfBroker: (addr) => topicsOf[addr] ?? [],
    refresh: async (topic) => {
      asked.push(topic);
      return withMaster;
    },
  });
  return { r, asked };
}

t.test(
  'a topic is refreshed at most once per fastRouteRefreshIntervalMs, then again on the next failure',
  async (t) => {
    const clock = new ManualClock();
    const { r, asked } = refresher(clock, { 'b:1': ['T'] });
    r.brokerFailed('b:1', new Error('ECONNREFUSED'));
    r.brokerFailed('b:1', new Error('ECONNREFUSED'));
    clock.advance(999);
    r.brokerFailed('b:1', new Error('ECONNREFUSED'));
    t.same(asked, ['T'], 'failures within the interval ask nothing more');
    clock.advance(1);
    r.brokerFailed('b:1', new Error('ECONNREFUSED'));
    t.same(asked, ['T', 'T'], 'the first failure after the interval asks again');
    r.brokerFailed('other:2', new Error('ECONNREFUSED'));
    t.same(asked, ['T', 'T'], 'an address no cached route names (a name server) asks nothing');
    t.same(r.counts, { started: 2, heldByTopicInterval: 2, heldByGlobalRate: 0 });
  },
);

t.test('all topics together at most fastRouteRefreshMaxPerSecond a second, every topic getting its turn', async (t) => {
  const clock = new ManualClock();
  const topics = ['A', 'B', 'C', 'D', 'E'];
  const { r, asked } = refresher(clock, { 'b:1': topics });
  r.brokerFailed('b:1');
  t.same(asked, ['A', 'B', 'C'], 'a burst of 3 (the bucket is full at start)');
  r.brokerFailed('b:1');
  t.same(asked, ['A', 'B', 'C'], 'nothing more without tokens');
  clock.advance(334);
  r.brokerFailed('b:1');
  t.same(asked, ['A', 'B', 'C', 'D'], 'one token a third of a second later goes to a topic not yet refreshed');
  clock.advance(333);
  r.brokerFailed('b:1');
  t.same(asked, ['A', 'B', 'C', 'D', 'E']);
  // Over 10 s of failures every 10 ms, the rate stays within 3 a second.
  const before = asked.length;
  for (let i = 0; i < 1000; i++) {
    clock.advance(10);
    r.brokerFailed('b:1');
  }
  const perSecond = (asked.length - before) / 10;
  t.ok(perSecond <= 3.1, `at most 3 refreshes a second under constant failures (${perSecond})`);
  t.ok(perSecond >= 2.5, `and the budget is used (${perSecond}/s)`);
});

t.test('a refresh that fails (name server down) is logged and bounded like any other', async (t) => {
  const clock = new ManualClock();
  let calls = 0;
  const r = new FastRouteRefresh({
    clock,
    minIntervalMs: 1000,
    maxPerSecond: 10,
    maxFollowUpMs: 30_000,
    topicsOfBroker: () => ['T'],
    refresh: async () => {
      calls++;
      throw new Error('no name server answered');
    },
  });
  for (let i = 0; i < 100; i++) {
    r.brokerFailed('b:1');
    clock.advance(50);
  }
  await Promise.resolve();
  t.equal(calls, 5, '5 s of failures every 50 ms: one refresh a second, no rejection escapes');
});

t.test('a route that comes back without a master is asked again, 1 s, 2 s, 4 s … until it has one', async (t) => {
  const clock = new ManualClock();
  const at: number[] = [];
  let route = masterless;
  const start = clock.now();
  const r = new FastRouteRefresh({
    clock,
    minIntervalMs: 1000,
    maxPerSecond: 10,
    maxFollowUpMs: 4000,
    topicsOfBroker: () => ['T'],
    refresh: async () => {
      at.push(clock.now() - start);
      return route;
    },
  });
  t.teardown(() => r.stop());
  const settle = () => new Promise((res) => setImmediate(res));
  r.brokerFailed('b:1');
  for (let i = 0; i < 16; i++) {
    await settle();
    clock.advance(500);
  }
  await settle();
  t.same(at, [0, 1000, 3000, 7000], 'no failure needed: the follow-ups double up to maxFollowUpMs');
  route = withMaster;
  for (let i = 0; i < 20; i++) {
    await settle();
    clock.advance(500);
  }
  await settle();
  t.same(at, [0, 1000, 3000, 7000, 11000], 'the first answer with a master ends them');
});

/**
 * The promotion, scripted: the route names a master that is gone (a refused address); the name
 * server then lists another master under the same broker name. The clock never reaches the 30 s
 * poll, so only the fast refresh can take the producer there.
 */
async function promotion(t: Test, fastRouteRefresh: boolean) {
  const clock = new ManualClock();
  const dead = await refusedAddress();
  const promoted = await startFakeBroker();
  t.teardown(() => promoted.close());
  const routes = new Map([['T', routeJson([{ name: 'broker-a', addrs: { '0': dead } }])]]);
  const ns = await startFakeNameServer(routes);
  t.teardown(() => ns.close());
  const producer = new Producer({
    group: `fast_refresh_pg_${fastRouteRefresh}`,
    namesrvAddr: ns.addr,
    clock,
    fastRouteRefresh,
    retryTimesWhenSendFailed: 0,
    logger: false,
  });
  await producer.start();
  t.teardown(() => producer.shutdown());
  // the instance's first route poll (10 ms after start); the next is 30 s away
  clock.advance(20);
  const instance = producer['clientInstance'];
  const routeAsks = () => ns.requestsOf(RequestCode.GET_ROUTEINFO_BY_TOPIC).filter((r) => r.extFields?.topic === 'T');
  await t.rejects(producer.send({ topic: 'T', body: 'before the promotion' }), 'the dead master refuses');
  routes.set('T', routeJson([{ name: 'broker-a', addrs: { '0': promoted.addr } }]));
  const asksAfterPromotion = routeAsks().length;
  clock.advance(1000);
  // the send right after the promotion still goes to the dead master (the cached route); its failure is the signal
  await producer.send({ topic: 'T', body: 'at the promotion' }).catch(() => undefined);
  await waitFor(() => instance.findBrokerMasterAddress('broker-a') === promoted.addr, fastRouteRefresh ? 5000 : 500);
  return { producer, promoted, routeAsks, asksAfterPromotion };
}

t.test('producer: a refused master makes the route refresh at once, and sends go to the promoted master', async (t) => {
  const { producer, promoted, routeAsks, asksAfterPromotion } = await promotion(t, true);
  t.ok(routeAsks().length > asksAfterPromotion, 'the failure asked the name server for the route');
  const r = await producer.send({ topic: 'T', body: 'after the promotion' });
  t.equal(r.status, 'SEND_OK', 'sent to the promoted master without waiting for the 30 s poll');
  t.equal(promoted.stored.length, 1, 'the promoted master stored it');
});

t.test('fastRouteRefresh: false keeps Java behaviour: the dead master stays until the poll', async (t) => {
  const { producer, promoted, routeAsks, asksAfterPromotion } = await promotion(t, false);
  t.equal(routeAsks().length, asksAfterPromotion, 'no route asked for on the failure');
  await t.rejects(producer.send({ topic: 'T', body: 'after the promotion' }), 'still the dead master');
  t.equal(promoted.stored.length, 0);
});

t.test('fastRouteRefresh options are checked', async (t) => {
  const ns = await startFakeNameServer(new Map());
  t.teardown(() => ns.close());
  t.throws(() => MQClientInstance.acquire({ namesrvAddr: ns.addr, fastRouteRefreshIntervalMs: 10 }), {
    name: 'ClientOptionError',
    option: 'fastRouteRefreshIntervalMs',
  });
  t.throws(() => MQClientInstance.acquire({ namesrvAddr: ns.addr, fastRouteRefreshMaxPerSecond: 0 }), {
    name: 'ClientOptionError',
    option: 'fastRouteRefreshMaxPerSecond',
  });
});
