// The sampling of the broker's stats items (lib/broker/broker-stats.ts), as Apache's StatsItem
// samples them, driven on a ManualClock: no timer is involved, the clock alone moves the windows.
import * as path from 'node:path';
import t from 'tap';
import { MessageStore } from '../../lib/broker/index.js';
import { socketAddressText } from '../../lib/broker/message-record.js';
import { ManualClock } from '../../lib/clock.js';
import { BrokerStatsManager, GROUP_GET_NUMS, TOPIC_PUT_NUMS, type StatsWindow } from '../../lib/broker/broker-stats.js';
import {
  decodeBrokerStatsData,
  encodeBrokerStatsData,
  decodeGroupList,
} from '../../protocol/body/broker-stats-bodies.js';
import { ProtocolError } from '../../protocol/index.js';

const S = 1000;
const MIN = 60 * S;
const HOUR = 60 * MIN;

function win(w: StatsWindow): [number, number, number] {
  return [w.sum, w.tps, w.avgpt];
}

t.test('a put shows in the minute window at the next 10-s tick, over the span since the zero sample', async (t) => {
  const clock = new ManualClock(0);
  const m = new BrokerStatsManager(clock);
  t.equal(m.view(TOPIC_PUT_NUMS, 'T'), null, 'nothing counted: no item (Java: "not exist")');
  clock.advance(3 * S);
  m.incTopicPutNums('T', 10, 1); // a batch of 10
  m.incTopicPutNums('T', 1, 1);
  let d = m.view(TOPIC_PUT_NUMS, 'T')!;
  t.same(win(d.statsMinute), [0, 0, 0], 'not sampled yet: the item exists, every window is 0');
  clock.advance(7 * S); // t = 10 s: the first tick after the puts
  d = m.view(TOPIC_PUT_NUMS, 'T')!;
  // samples (0 s: 0, 0) [the zero sample one interval before] and (10 s: 2 calls, 11)
  t.same(win(d.statsMinute), [11, 1.1, 5.5], 'sum 11 over 10 s; 5.5 messages per put');
  t.same(win(d.statsHour), [0, 0, 0], 'the hour window is sampled every 10 min only');
  t.same(win(d.statsDay), [0, 0, 0]);
  clock.advance(10 * S); // 20 s: a second sample, nothing new
  t.same(win(m.view(TOPIC_PUT_NUMS, 'T')!.statsMinute), [11, 11 / 20, 5.5], 'same sum over 20 s');
});

t.test('the minute window keeps 7 samples: a burst leaves it 60 s after its first sample', async (t) => {
  const clock = new ManualClock(0);
  const m = new BrokerStatsManager(clock);
  clock.advance(5 * S);
  m.incTopicPutNums('T', 6);
  clock.advance(55 * S); // t = 60 s: samples 0 (zero), 10 … 60 = 7 samples
  t.same(win(m.view(TOPIC_PUT_NUMS, 'T')!.statsMinute), [6, 0.1, 6], 'still in: the zero sample is the oldest');
  clock.advance(10 * S); // 70 s: the zero sample is dropped, the oldest is 10 s (value 6)
  t.same(win(m.view(TOPIC_PUT_NUMS, 'T')!.statsMinute), [0, 0, 0], 'gone from the minute window');
  clock.advance(530 * S); // 600 s: the first hour tick after the put
  const d = m.view(TOPIC_PUT_NUMS, 'T')!;
  t.same(win(d.statsHour), [6, 6 / 600, 6], 'the hour window: zero sample at 0, then 6 at 600 s');
  t.same(win(d.statsDay), [0, 0, 0], 'the day window waits for the hourly tick');
  clock.advance(3000 * S); // 3600 s
  t.same(win(m.view(TOPIC_PUT_NUMS, 'T')!.statsDay), [6, 6 / 3600, 6], 'the day window at the first hour');
});

t.test('windows slide: the hour window spans 60 min, the day window 24 h', async (t) => {
  const clock = new ManualClock(0);
  const m = new BrokerStatsManager(clock);
  clock.advance(1);
  m.incGroupGetNums('g', 'T', 4);
  // one more pull each 10 minutes for 2 hours
  for (let i = 1; i <= 12; i++) {
    clock.advance(10 * MIN);
    m.incGroupGetNums('g', 'T', 4);
  }
  const d = m.view(GROUP_GET_NUMS, 'T@g')!;
  // hour window: samples at 60 … 120 min (7), values 4×7 … 4×13 minus the value at 60 min
  t.equal(d.statsHour.sum, 24, 'six 10-min steps of 4');
  t.equal(d.statsHour.tps, 24 / 3600);
  t.equal(d.statsHour.avgpt, 4);
  t.equal(d.statsDay.sum, 48, 'day window: the zero sample at 0 h, then 24 at 1 h and 48 at 2 h');
  clock.advance(30 * HOUR);
  const later = m.view(GROUP_GET_NUMS, 'T@g')!;
  t.same(win(later.statsDay), [0, 0, 0], 'after a day without pulls the day window is empty');
  t.equal(m.view(GROUP_GET_NUMS, 'g@T'), null, 'the key is topic@group');
});

t.test('an item asleep for a thousand years catches up in `keep` samples, not one per missed tick', async (t) => {
  // 3 × 10^9 missed 10-s ticks: a sample per tick would not finish within the test's timeout
  const clock = new ManualClock(0);
  const m = new BrokerStatsManager(clock);
  m.incTopicPutNums('T', 3);
  clock.advance(1000 * 365 * 24 * HOUR);
  m.incTopicPutNums('T', 2);
  t.same(win(m.view(TOPIC_PUT_NUMS, 'T')!.statsDay), [0, 0, 0], 'the 3 of long ago are out of every window');
  clock.advance(10 * S);
  t.equal(m.view(TOPIC_PUT_NUMS, 'T')!.statsMinute.sum, 2, 'the new 2 are in at the next tick');
});

t.test('items are bounded: the least recently counted is forgotten', async (t) => {
  const clock = new ManualClock(0);
  const m = new BrokerStatsManager(clock, { maxItems: 3 });
  for (const topic of ['A', 'B', 'C']) m.incTopicPutNums(topic);
  m.incTopicPutNums('A'); // A is now the most recent
  m.incTopicPutNums('D');
  t.equal(m.itemCount(TOPIC_PUT_NUMS), 3);
  t.equal(m.view(TOPIC_PUT_NUMS, 'B'), null, 'B was the least recently counted');
  t.not(m.view(TOPIC_PUT_NUMS, 'A'), null);
});

t.test('a deleted topic or group loses its items (autoDeleteUnusedStats)', async (t) => {
  const clock = new ManualClock(0);
  const m = new BrokerStatsManager(clock);
  m.incTopicPutNums('T');
  m.incGroupGetNums('g1', 'T', 1);
  m.incGroupGetNums('g2', 'T', 1);
  m.incGroupGetNums('g1', 'U', 1);
  m.onGroupDeleted('g1');
  t.equal(m.view(GROUP_GET_NUMS, 'T@g1'), null);
  t.equal(m.view(GROUP_GET_NUMS, 'U@g1'), null);
  t.not(m.view(GROUP_GET_NUMS, 'T@g2'), null);
  m.onTopicDeleted('T');
  t.equal(m.view(TOPIC_PUT_NUMS, 'T'), null);
  t.equal(m.view(GROUP_GET_NUMS, 'T@g2'), null);
  t.equal(m.view('NO_SUCH_SET', 'T'), null, 'an unknown stats name reads as an unknown item, as in Java');
});

t.test('one manager per store', async (t) => {
  const clock = new ManualClock(0);
  const store = (dir: string) =>
    new MessageStore({ dir, storeHost: socketAddressText('127.0.0.1', 10911), clock, flushIntervalMs: 60_000 });
  const root = t.testdir({ a: {}, b: {} });
  const a = store(path.join(root, 'a'));
  const b = store(path.join(root, 'b'));
  t.equal(a.stats, a.stats);
  t.not(a.stats, b.stats);
});

t.test('BrokerStatsData and GroupList bodies', async (t) => {
  const body = encodeBrokerStatsData({
    statsMinute: { sum: 11, tps: 1.1, avgpt: 5.5 },
    statsHour: { sum: 0, tps: 0, avgpt: 0 },
    statsDay: { sum: 3, tps: 3 / 3600, avgpt: 1 },
  });
  t.equal(
    body.toString(),
    `{"statsDay":{"avgpt":1.0,"sum":3,"tps":${3 / 3600}},"statsHour":{"avgpt":0.0,"sum":0,"tps":0.0},"statsMinute":{"avgpt":5.5,"sum":11,"tps":1.1}}`,
    'fields sorted as fastjson writes them, a whole double with its fraction',
  );
  t.same(decodeBrokerStatsData(body).statsMinute, { sum: 11, tps: 1.1, avgpt: 5.5 });
  t.same(decodeBrokerStatsData(Buffer.from('{}')).statsDay, { sum: 0, tps: 0, avgpt: 0 }, 'absent = 0, as fastjson');
  t.throws(() => decodeBrokerStatsData(Buffer.from('{"statsDay":5}')), ProtocolError);
  t.same(decodeGroupList(Buffer.from('{"groupList":["a","b"]}')).groupList, ['a', 'b']);
  t.throws(() => decodeGroupList(Buffer.from('{"groupList":[1]}')), ProtocolError);
});
