import t, { type Test } from 'tap';
import { ResponseCode, type MessageExt } from '../../protocol/index.js';
import { startBroker, type EmbeddedBroker } from '../../lib/broker/index.js';
import { ManualClock } from '../../lib/clock.js';
import type { RemotingClient } from '../../lib/remoting/index.js';
import { client, decode, pullRequest, sendRequest } from './helpers.js';

// 5.x timer messages on the embedded broker (lib/broker/timer/), on a ManualClock:
// HookUtils#handleScheduleMessage's rules and TimerMessageStore's delivery.

async function pullAll(c: RemotingClient, b: EmbeddedBroker, topic: string, queueId = 0): Promise<MessageExt[]> {
  const r = await c.invoke(b.broker, pullRequest(topic, { queueId, maxMsgNums: 32 }));
  return r.code === ResponseCode.SUCCESS ? decode(r) : [];
}

async function setup(
  t: Test,
  opts: Parameters<typeof startBroker>[0] = {},
): Promise<{ b: EmbeddedBroker; c: RemotingClient; clock: ManualClock }> {
  const clock = new ManualClock();
  const b = await startBroker({ clock, ...opts });
  const c = client();
  t.teardown(async () => {
    await c.close();
    await b.close();
  });
  return { b, c, clock };
}

t.test(
  "TIMER_DELAY_MS: parked on rmq_sys_wheel_timer, delivered on its millisecond with Java's properties",
  async (t) => {
    const { b, c, clock } = await setup(t);
    const sentAt = clock.now();
    const res = await c.invoke(b.broker, sendRequest('TimerT', 'late', { properties: { TIMER_DELAY_MS: '3000' } }));
    t.equal(res.code, ResponseCode.SUCCESS);
    t.same(await pullAll(c, b, 'TimerT'), [], 'nothing on the topic at once');
    const parked = await pullAll(c, b, 'rmq_sys_wheel_timer');
    t.equal(parked.length, 1, 'the message waits on the timer topic');
    t.equal(parked[0]!.properties.REAL_TOPIC, 'TimerT');
    t.equal(parked[0]!.properties.TIMER_OUT_MS, String(sentAt + 3000));
    clock.advance(2999);
    t.same(await pullAll(c, b, 'TimerT'), [], 'not before its time');
    clock.advance(1);
    const got = await pullAll(c, b, 'TimerT');
    t.equal(got.length, 1, 'delivered at its time');
    const p = got[0]!.properties;
    t.equal(got[0]!.body.toString(), 'late');
    t.equal(p.REAL_TOPIC, undefined, 'REAL_TOPIC removed');
    t.equal(p.REAL_QID, undefined, 'REAL_QID removed');
    t.equal(p.TIMER_DELAY_MS, '3000', 'the original timer property stays');
    t.equal(p.TIMER_OUT_MS, String(sentAt + 3000));
    t.equal(p.TIMER_DEQUEUE_MS, String(sentAt + 3000));
    t.ok(Number(p.TIMER_ENQUEUE_MS) > 0, 'TIMER_ENQUEUE_MS added');
  },
);

t.test(
  'later messages that fall due earlier go first; DELIVER_MS, SEC and the precedence SEC > MS > DELIVER_MS',
  async (t) => {
    const { b, c, clock } = await setup(t);
    const now = clock.now();
    await c.invoke(b.broker, sendRequest('Order', 'five', { properties: { TIMER_DELAY_MS: '5000' } }));
    await c.invoke(b.broker, sendRequest('Order', 'one', { properties: { TIMER_DELIVER_MS: String(now + 1000) } }));
    await c.invoke(
      b.broker,
      sendRequest('Order', 'sec2', {
        properties: { TIMER_DELAY_SEC: '2', TIMER_DELAY_MS: '9000', TIMER_DELIVER_MS: String(now + 9000) },
      }),
    );
    await c.invoke(
      b.broker,
      sendRequest('Order', 'ms3', { properties: { TIMER_DELAY_MS: '3000', TIMER_DELIVER_MS: String(now + 9000) } }),
    );
    const seen: string[] = [];
    for (const step of [1000, 1000, 1000, 2000]) {
      clock.advance(step);
      seen.push((await pullAll(c, b, 'Order')).map((m) => m.body.toString()).join(','));
    }
    t.same(seen, ['one', 'one,sec2', 'one,sec2,ms3', 'one,sec2,ms3,five']);
  },
);

t.test(
  'a past or present delivery time is stored at once with its properties; DELAY wins over the timer',
  async (t) => {
    const { b, c, clock } = await setup(t);
    await c.invoke(
      b.broker,
      sendRequest('Past', 'p', { properties: { TIMER_DELIVER_MS: String(clock.now() - 60_000) } }),
    );
    await c.invoke(b.broker, sendRequest('Past', 'zero', { properties: { TIMER_DELAY_MS: '0' } }));
    const got = await pullAll(c, b, 'Past');
    t.same(
      got.map((m) => m.body.toString()),
      ['p', 'zero'],
    );
    t.equal(got[0]!.properties.TIMER_DELIVER_MS, String(clock.now() - 60_000), 'kept');
    t.equal(got[0]!.properties.TIMER_OUT_MS, undefined, 'never went through the wheel');

    await c.invoke(b.broker, sendRequest('Lvl', 'l', { properties: { DELAY: '1', TIMER_DELAY_MS: '60000' } }));
    clock.advance(1000);
    const lvl = await pullAll(c, b, 'Lvl');
    t.equal(lvl.length, 1, 'delivered after level 1 (1 s), not after 60 s');
    t.equal(
      lvl[0]!.properties.TIMER_DELAY_MS,
      undefined,
      'the timer property was dropped, as HookUtils#checkIfTimerMessage does',
    );
  },
);

t.test('bad timer values: MESSAGE_ILLEGAL; a wheel that is off: SYSTEM_ERROR', async (t) => {
  const { b, c } = await setup(t);
  const nan = await c.invoke(b.broker, sendRequest('Bad', 'x', { properties: { TIMER_DELAY_MS: 'soon' } }));
  t.equal(nan.code, ResponseCode.MESSAGE_ILLEGAL);
  t.match(nan.remark, /timer message illegal/);
  const far = await c.invoke(
    b.broker,
    sendRequest('Bad', 'x', { properties: { TIMER_DELAY_SEC: String(3 * 86_400 + 1) } }),
  );
  t.equal(far.code, ResponseCode.MESSAGE_ILLEGAL, 'beyond timerMaxDelaySec');
  t.match(far.remark, /max delay 259200000ms/);
  const del = await c.invoke(
    b.broker,
    sendRequest('Bad', 'x', { properties: { TIMER_DELIVER_MS: '1', TIMER_DEL_UNIQKEY: 'k' } }),
  );
  t.equal(del.code, ResponseCode.MESSAGE_ILLEGAL, 'a delete marker for a time gone by');
  t.same(await pullAll(c, b, 'Bad'), []);

  const off = await setup(t, { timerWheelEnable: false });
  const r = await off.c.invoke(off.b.broker, sendRequest('Off', 'x', { properties: { TIMER_DELAY_MS: '1000' } }));
  t.equal(r.code, ResponseCode.SYSTEM_ERROR);
  t.match(r.remark, /timerWheelEnable is false/);
});

t.test('timerPrecisionMs floors the delivery time as Java does (an exact multiple one slot earlier)', async (t) => {
  const { b, c, clock } = await setup(t, { timerPrecisionMs: 1000 });
  const base = clock.now(); // 1_700_000_000_000: a multiple of 1000
  await c.invoke(b.broker, sendRequest('Prec', 'a', { properties: { TIMER_DELIVER_MS: String(base + 2500) } }));
  await c.invoke(b.broker, sendRequest('Prec', 'b', { properties: { TIMER_DELIVER_MS: String(base + 4000) } }));
  const parked = await pullAll(c, b, 'rmq_sys_wheel_timer');
  t.same(
    parked.map((m) => Number(m.properties.TIMER_OUT_MS) - base),
    [2000, 3000],
  );
});

t.test(
  'timer messages survive a restart: what was delivered is not delivered again, the rest comes on time',
  async (t) => {
    const dir = t.testdir({});
    const clock = new ManualClock();
    let b = await startBroker({ clock, dataDir: dir });
    const c = client();
    t.teardown(() => c.close());
    await c.invoke(b.broker, sendRequest('Keep', 'late', { properties: { TIMER_DELAY_MS: '5000' } }));
    await c.invoke(b.broker, sendRequest('Keep', 'early', { properties: { TIMER_DELAY_MS: '1000' } }));
    await c.invoke(b.broker, sendRequest('Keep', 'later', { properties: { TIMER_DELAY_MS: '8000' } }));
    clock.advance(2000);
    t.same(
      (await pullAll(c, b, 'Keep')).map((m) => m.body.toString()),
      ['early'],
    );
    await b.close();
    clock.advance(1000);
    b = await startBroker({ clock, dataDir: dir });
    t.teardown(() => b.close());
    t.same(
      (await pullAll(c, b, 'Keep')).map((m) => m.body.toString()),
      ['early'],
      'nothing new, nothing twice',
    );
    clock.advance(2000);
    t.same(
      (await pullAll(c, b, 'Keep')).map((m) => m.body.toString()),
      ['early', 'late'],
    );
    await b.close();
    // the broker was down when 'later' fell due: it is delivered at once on start
    clock.advance(10_000);
    b = await startBroker({ clock, dataDir: dir });
    t.same(
      (await pullAll(c, b, 'Keep')).map((m) => m.body.toString()),
      ['early', 'late', 'later'],
    );
  },
);
