import t from 'tap';
import { RequestCode, ResponseCode, createRequest, type MessageExt } from '../../protocol/index.js';
import { startBroker, type EmbeddedBroker } from '../../lib/broker/index.js';
import { ManualClock } from '../../lib/clock.js';
import type { RemotingClient } from '../../lib/remoting/index.js';
import { client, decode, heartbeatRequest, pullRequest, sendRequest } from './helpers.js';

async function pullAll(c: RemotingClient, b: EmbeddedBroker, topic: string, queueId = 0): Promise<MessageExt[]> {
  const r = await c.invoke(b.broker, pullRequest(topic, { queueId, maxMsgNums: 32 }));
  return r.code === ResponseCode.SUCCESS ? decode(r) : [];
}

function sendBack(m: MessageExt, group: string, delayLevel: number, maxReconsumeTimes?: number) {
  const ext: Record<string, string> = {
    offset: String(m.commitLogOffset),
    group,
    delayLevel: String(delayLevel),
    originMsgId: m.msgId,
    originTopic: m.properties.RETRY_TOPIC ?? m.topic,
    unitMode: 'false',
  };
  if (maxReconsumeTimes !== undefined) ext.maxReconsumeTimes = String(maxReconsumeTimes);
  return createRequest(RequestCode.CONSUMER_SEND_MSG_BACK, { extFields: ext });
}

t.test('send-back goes through the delay levels into %RETRY%group, then to %DLQ%group after 16', async (t) => {
  const clock = new ManualClock();
  const b = await startBroker({ clock });
  t.teardown(() => b.close());
  const c = client();
  t.teardown(() => c.close());
  // the heartbeat creates the retry topic; its own connection expires while hours pass below
  const hb = client();
  t.teardown(() => hb.close());
  await hb.invoke(b.broker, heartbeatRequest('cid', 'rg', [{ topic: 'Work' }, { topic: '%RETRY%rg' }]));
  const sent = await c.invoke(
    b.broker,
    sendRequest('Work', 'payload', { tags: 'T1', properties: { UNIQ_KEY: 'UNIQ-1' } }),
  );
  t.equal(sent.code, ResponseCode.SUCCESS);
  let current = (await pullAll(c, b, 'Work'))[0]!;
  const firstOffsetMsgId = current.offsetMsgId;
  const levels = [10, 30, 60, 120, 180, 240, 300, 360, 420, 480, 540, 600, 1200, 1800, 3600, 7200].map((s) => s * 1000);
  let retryOffset = 0;
  for (let i = 0; i < 16; i++) {
    const r = await c.invoke(b.broker, sendBack(current, 'rg', 0));
    t.equal(r.code, ResponseCode.SUCCESS, `send back #${i + 1}`);
    const retryBefore = await c.invoke(b.broker, pullRequest('%RETRY%rg', { offset: retryOffset }));
    t.equal(retryBefore.code, ResponseCode.PULL_NOT_FOUND, `#${i + 1} not delivered before its delay`);
    clock.advance(levels[i]! - 1);
    t.equal(
      (await c.invoke(b.broker, pullRequest('%RETRY%rg', { offset: retryOffset }))).code,
      ResponseCode.PULL_NOT_FOUND,
      `#${i + 1} not 1 ms early`,
    );
    clock.advance(1);
    const got = decode(await c.invoke(b.broker, pullRequest('%RETRY%rg', { offset: retryOffset })));
    t.equal(got.length, 1, `#${i + 1} delivered after ${levels[i]} ms`);
    current = got[0]!;
    retryOffset++;
    t.equal(current.reconsumeTimes, i + 1);
    t.equal(current.properties.RETRY_TOPIC, 'Work');
    t.equal(
      current.properties.ORIGIN_MESSAGE_ID,
      firstOffsetMsgId,
      'ORIGIN_MESSAGE_ID: offset msgId of the first delivery',
    );
    t.equal(current.properties.DELAY, undefined, 'DELAY cleared on delivery');
    t.equal(current.properties.REAL_TOPIC, '%RETRY%rg');
    t.equal(current.msgId, 'UNIQ-1', 'UNIQ_KEY kept');
    t.equal(current.tags, 'T1');
    t.equal(current.body.toString(), 'payload');
  }
  // reconsumeTimes 16 ≥ 16: straight to the DLQ, no delay
  const last = await c.invoke(b.broker, sendBack(current, 'rg', 0));
  t.equal(last.code, ResponseCode.SUCCESS);
  const dlq = await pullAll(c, b, '%DLQ%rg');
  t.equal(dlq.length, 1, 'in %DLQ%rg at once');
  t.equal(dlq[0]!.reconsumeTimes, 17);
  t.equal(dlq[0]!.properties.RETRY_TOPIC, 'Work');
  const route = await c.invoke(
    b.namesrv,
    createRequest(RequestCode.GET_ROUTEINFO_BY_TOPIC, { extFields: { topic: '%DLQ%rg' } }),
  );
  t.equal(route.code, ResponseCode.SUCCESS, 'the DLQ has a route');
});

t.test('delayLevel -1 and header maxReconsumeTimes send to the DLQ; unknown offsets fail', async (t) => {
  const clock = new ManualClock();
  const b = await startBroker({ clock });
  t.teardown(() => b.close());
  const c = client();
  t.teardown(() => c.close());
  await c.invoke(b.broker, sendRequest('W2', 'a'));
  await c.invoke(b.broker, sendRequest('W2', 'b'));
  const [a, bm] = await pullAll(c, b, 'W2');
  t.equal((await c.invoke(b.broker, sendBack(a!, 'g2', -1))).code, ResponseCode.SUCCESS);
  t.same(
    (await pullAll(c, b, '%DLQ%g2')).map((m) => m.body.toString()),
    ['a'],
    'delayLevel -1 → DLQ',
  );
  t.equal((await c.invoke(b.broker, sendBack(bm!, 'g2', 0, 0))).code, ResponseCode.SUCCESS);
  t.same(
    (await pullAll(c, b, '%DLQ%g2')).map((m) => m.body.toString()),
    ['a', 'b'],
    'maxReconsumeTimes 0 → DLQ',
  );
  const bad = await c.invoke(
    b.broker,
    createRequest(RequestCode.CONSUMER_SEND_MSG_BACK, {
      extFields: { offset: '123456789', group: 'g2', delayLevel: '0' },
    }),
  );
  t.equal(bad.code, ResponseCode.SYSTEM_ERROR);
  t.equal(bad.remark, 'look message by offset failed, 123456789');
  // an explicit level: level 1 = 1 s
  await c.invoke(b.broker, sendBack(a!, 'g2', 1));
  t.equal((await pullAll(c, b, '%RETRY%g2')).length, 0);
  clock.advance(1000);
  t.equal((await pullAll(c, b, '%RETRY%g2')).length, 1, 'level 1 delivered after 1 s');
});

t.test('producer DELAY property and client-side resends to %RETRY% past the limit', async (t) => {
  const clock = new ManualClock();
  const b = await startBroker({ clock });
  t.teardown(() => b.close());
  const c = client();
  t.teardown(() => c.close());
  const r = await c.invoke(b.broker, sendRequest('Later', 'x', { properties: { DELAY: '2' }, queueId: 3 }));
  t.equal(r.code, ResponseCode.SUCCESS);
  t.equal(r.extFields?.queueId, '3');
  t.equal((await pullAll(c, b, 'Later', 3)).length, 0);
  const parked = decode(await c.invoke(b.broker, pullRequest('SCHEDULE_TOPIC_XXXX', { queueId: 1 })));
  t.equal(parked[0]!.properties.REAL_TOPIC, 'Later');
  t.equal(parked[0]!.properties.REAL_QID, '3');
  clock.advance(5000);
  const delivered = await pullAll(c, b, 'Later', 3);
  t.equal(delivered.length, 1, 'delivered to REAL_TOPIC / REAL_QID after 5 s');
  // a fallback resend (SEND_MESSAGE_V2 to %RETRY%) whose reconsumeTimes reached the max goes to the DLQ
  const resend = await c.invoke(
    b.broker,
    sendRequest('%RETRY%g3', 'again', { reconsumeTimes: 16, maxReconsumeTimes: 16, properties: { DELAY: '3' } }),
  );
  t.equal(resend.code, ResponseCode.SUCCESS);
  t.same(
    (await pullAll(c, b, '%DLQ%g3')).map((m) => m.body.toString()),
    ['again'],
  );
});

t.test('delayed messages survive a restart and are delivered on time', async (t) => {
  const dir = t.testdir({});
  const clock = new ManualClock();
  let b = await startBroker({ clock, dataDir: dir });
  const c = client();
  t.teardown(() => c.close());
  await c.invoke(b.broker, sendRequest('Persist', 'x', { properties: { DELAY: '3' } }));
  clock.advance(4000);
  await b.close();
  b = await startBroker({ clock, dataDir: dir });
  t.teardown(() => b.close());
  t.equal((await pullAll(c, b, 'Persist')).length, 0);
  clock.advance(6000);
  t.equal((await pullAll(c, b, 'Persist')).length, 1);
});
