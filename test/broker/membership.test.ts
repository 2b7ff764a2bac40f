import t from 'tap';
import {
  RequestCode,
  ResponseCode,
  createRequest,
  createResponse,
  type RemotingCommand,
} from '../../protocol/index.js';
import { startBroker } from '../../lib/broker/index.js';
import { ManualClock } from '../../lib/clock.js';
import type { RemotingClient } from '../../lib/remoting/index.js';
import { client, ext, heartbeatRequest, pullRequest, sendRequest } from './helpers.js';
import { until } from '../support/until.js';

function member(): { c: RemotingClient; notified: string[] } {
  const c = client();
  const notified: string[] = [];
  c.registerProcessor(RequestCode.NOTIFY_CONSUMER_IDS_CHANGED, (req: RemotingCommand) => {
    notified.push(req.extFields?.consumerGroup ?? '?');
    return null;
  });
  return { c, notified };
}

async function consumerList(c: RemotingClient, addr: string, group: string): Promise<string[] | number> {
  const r = await c.invoke(
    addr,
    createRequest(RequestCode.GET_CONSUMER_LIST_BY_GROUP, { extFields: { consumerGroup: group } }),
  );
  if (r.code !== ResponseCode.SUCCESS) return r.code;
  return (JSON.parse(r.body!.toString()) as { consumerIdList: string[] }).consumerIdList;
}

t.test('heartbeat, membership and NOTIFY_CONSUMER_IDS_CHANGED on join, leave and expiry', async (t) => {
  const clock = new ManualClock();
  const b = await startBroker({ clock });
  t.teardown(() => b.close());
  const a = member();
  const bb = member();
  const observer = client();
  t.teardown(() => a.c.close());
  t.teardown(() => bb.c.close());
  t.teardown(() => observer.close());

  t.equal(await consumerList(observer, b.broker, 'grp'), ResponseCode.SYSTEM_ERROR, 'no consumer yet');
  const hb = await a.c.invoke(b.broker, heartbeatRequest('client-a', 'grp', [{ topic: 'T' }, { topic: '%RETRY%grp' }]));
  t.equal(hb.code, ResponseCode.SUCCESS);
  t.ok(hb.version >= 232, 'broker version >= V4_1_0_SNAPSHOT');
  t.equal(ext(hb, 'IS_SUPPORT_HEART_BEAT_V2'), 'true');
  await until(() => a.notified.length === 1, 'a notified of its own join', 3000);
  t.same(await consumerList(observer, b.broker, 'grp'), ['client-a']);

  // the retry topic now has a route
  const route = await observer.invoke(
    b.namesrv,
    createRequest(RequestCode.GET_ROUTEINFO_BY_TOPIC, { extFields: { topic: '%RETRY%grp' } }),
  );
  t.equal(route.code, ResponseCode.SUCCESS, 'retry topic routed after the heartbeat');
  t.match(route.body!.toString(), '"readQueueNums":1');

  await bb.c.invoke(b.broker, heartbeatRequest('client-b', 'grp', [{ topic: 'T' }, { topic: '%RETRY%grp' }]));
  await until(() => a.notified.length === 2 && bb.notified.length === 1, 'both notified of b joining', 3000);
  t.same(await consumerList(observer, b.broker, 'grp'), ['client-a', 'client-b']);

  // a repeated heartbeat with nothing new notifies nobody
  await a.c.invoke(b.broker, heartbeatRequest('client-a', 'grp', [{ topic: 'T' }, { topic: '%RETRY%grp' }]));
  // UNREGISTER_CLIENT of b notifies a
  const un = await bb.c.invoke(
    b.broker,
    createRequest(RequestCode.UNREGISTER_CLIENT, { extFields: { clientID: 'client-b', consumerGroup: 'grp' } }),
  );
  t.equal(un.code, ResponseCode.SUCCESS);
  await until(() => a.notified.length === 3, 'a notified of b leaving', 3000);
  t.equal(bb.notified.length, 1, 'b was not notified again (no longer a member), nor on the no-op heartbeat');
  t.same(await consumerList(observer, b.broker, 'grp'), ['client-a']);

  // b joins again, then its connection closes: a is told at once
  await bb.c.invoke(b.broker, heartbeatRequest('client-b', 'grp', [{ topic: 'T' }, { topic: '%RETRY%grp' }]));
  await until(() => a.notified.length === 4, 'a notified of b re-joining', 3000);
  await bb.c.close();
  await until(() => a.notified.length === 5, 'a notified of b disconnecting', 3000);
  t.same(await consumerList(observer, b.broker, 'grp'), ['client-a']);

  // a stops heartbeating: after 120 s (checked every 10 s) it is expired
  clock.advance(119_000);
  t.same(await consumerList(observer, b.broker, 'grp'), ['client-a'], 'still a member before 120 s');
  clock.advance(11_000);
  t.equal(
    await consumerList(observer, b.broker, 'grp'),
    ResponseCode.SYSTEM_ERROR,
    'expired after 120 s without heartbeat',
  );
});

t.test('subscription checks of PULL_MESSAGE', async (t) => {
  const b = await startBroker();
  t.teardown(() => b.close());
  const c = client();
  t.teardown(() => c.close());
  await c.invoke(b.broker, sendRequest('Sub', 'x', { tags: 'A' }));
  const noGroup = await c.invoke(b.broker, pullRequest('Sub', { group: 'sg', sysFlag: 0 }));
  t.equal(noGroup.code, ResponseCode.SUBSCRIPTION_NOT_EXIST, 'no heartbeat, no FLAG_SUBSCRIPTION');
  const withFlag = await c.invoke(b.broker, pullRequest('Sub', { group: 'sg', sysFlag: 4, subscription: 'A' }));
  t.equal(withFlag.code, ResponseCode.SUCCESS, 'FLAG_SUBSCRIPTION needs no heartbeat');
  await c.invoke(b.broker, heartbeatRequest('cid', 'sg', [{ topic: 'Other', subVersion: 10 }]));
  const otherTopic = await c.invoke(b.broker, pullRequest('Sub', { group: 'sg', sysFlag: 0, subVersion: 10 }));
  t.equal(otherTopic.code, ResponseCode.SUBSCRIPTION_NOT_EXIST, 'topic not in the registered subscriptions');
  await c.invoke(b.broker, heartbeatRequest('cid', 'sg', [{ topic: 'Sub', subString: 'B', subVersion: 10 }]));
  const notLatest = await c.invoke(b.broker, pullRequest('Sub', { group: 'sg', sysFlag: 0, subVersion: 11 }));
  t.equal(notLatest.code, ResponseCode.SUBSCRIPTION_NOT_LATEST);
  const filtered = await c.invoke(b.broker, pullRequest('Sub', { group: 'sg', sysFlag: 0, subVersion: 10 }));
  t.equal(filtered.code, ResponseCode.PULL_RETRY_IMMEDIATELY, 'registered subscription "B" filters out tag A');
  // an older subVersion does not replace the subscription; a newer one does
  await c.invoke(b.broker, heartbeatRequest('cid', 'sg', [{ topic: 'Sub', subString: 'A', subVersion: 5 }]));
  t.equal(
    (await c.invoke(b.broker, pullRequest('Sub', { group: 'sg', sysFlag: 0, subVersion: 10 }))).code,
    ResponseCode.PULL_RETRY_IMMEDIATELY,
  );
  await c.invoke(b.broker, heartbeatRequest('cid', 'sg', [{ topic: 'Sub', subString: 'A', subVersion: 12 }]));
  t.equal(
    (await c.invoke(b.broker, pullRequest('Sub', { group: 'sg', sysFlag: 0, subVersion: 12 }))).code,
    ResponseCode.SUCCESS,
  );
  const sql = await c.invoke(
    b.broker,
    createRequest(RequestCode.CHECK_CLIENT_CONFIG, {
      body: Buffer.from(
        '{"clientId":"x","group":"sg","subscriptionData":{"expressionType":"SQL92","subString":"a > 1","topic":"Sub"}}',
      ),
    }),
  );
  t.equal(sql.code, ResponseCode.SYSTEM_ERROR);
  const tag = await c.invoke(
    b.broker,
    createRequest(RequestCode.CHECK_CLIENT_CONFIG, {
      body: Buffer.from(
        '{"clientId":"x","group":"sg","subscriptionData":{"expressionType":"TAG","subString":"*","topic":"Sub"}}',
      ),
    }),
  );
  t.equal(tag.code, ResponseCode.SUCCESS);
});

t.test('LOCK_BATCH_MQ / UNLOCK_BATCH_MQ with a 60 s lock lifetime', async (t) => {
  const clock = new ManualClock();
  const b = await startBroker({ clock });
  t.teardown(() => b.close());
  const c = client();
  t.teardown(() => c.close());
  const mq = (q: number) => ({ brokerName: 'broker-a', queueId: q, topic: 'T' });
  const lock = async (clientId: string, qs: number[]) => {
    const r = await c.invoke(
      b.broker,
      createRequest(RequestCode.LOCK_BATCH_MQ, {
        body: Buffer.from(JSON.stringify({ clientId, consumerGroup: 'og', mqSet: qs.map(mq) })),
      }),
    );
    return (JSON.parse(r.body!.toString()) as { lockOKMQSet: { queueId: number }[] }).lockOKMQSet
      .map((m) => m.queueId)
      .sort();
  };
  t.same(await lock('c1', [0, 1]), [0, 1]);
  t.same(await lock('c2', [1, 2]), [2], 'queue 1 is held by c1');
  t.same(await lock('c1', [0, 1]), [0, 1], 'renewal by the holder');
  await c.invoke(
    b.broker,
    createRequest(RequestCode.UNLOCK_BATCH_MQ, {
      body: Buffer.from(JSON.stringify({ clientId: 'c1', consumerGroup: 'og', mqSet: [mq(0)] })),
    }),
  );
  t.same(await lock('c2', [0]), [0], 'unlocked queue can be taken');
  clock.advance(60_001);
  t.same(await lock('c2', [1]), [1], 'expired lock can be taken');
});

t.test('GET_CONSUMER_RUNNING_INFO is forwarded to the named client', async (t) => {
  const b = await startBroker();
  t.teardown(() => b.close());
  const consumer = client();
  t.teardown(() => consumer.close());
  consumer.registerProcessor(RequestCode.GET_CONSUMER_RUNNING_INFO, (req: RemotingCommand) =>
    createResponse(req, ResponseCode.SUCCESS, {
      body: Buffer.from(`{"jstack":"${req.extFields?.jstackEnable}","properties":{}}`),
    }),
  );
  await consumer.invoke(b.broker, heartbeatRequest('the-client', 'rg', [{ topic: 'T' }]));
  const admin = client();
  t.teardown(() => admin.close());
  const ask = (clientId: string) =>
    admin.invoke(
      b.broker,
      createRequest(RequestCode.GET_CONSUMER_RUNNING_INFO, {
        extFields: { consumerGroup: 'rg', clientId, jstackEnable: 'false' },
      }),
    );
  const r = await ask('the-client');
  t.equal(r.code, ResponseCode.SUCCESS);
  t.equal(r.body!.toString(), '{"jstack":"false","properties":{}}');
  const missing = await ask('nobody');
  t.equal(missing.code, ResponseCode.SYSTEM_ERROR);
  t.equal(missing.remark, 'The Consumer <rg> <nobody> not online');
});
