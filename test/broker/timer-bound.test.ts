import * as fs from 'node:fs';
import * as path from 'node:path';
import t, { type Test } from 'tap';
import { ResponseCode, decodeMessage } from '../../protocol/index.js';
import { SCHEDULE_TOPIC } from '../../protocol/internal.js';
import { startBroker, type EmbeddedBroker } from '../../lib/broker/index.js';
import type { Broker } from '../../lib/broker/broker.js';
import { parkUnder, type MessageInner } from '../../lib/broker/message-record.js';
import { TIMER_TOPIC, TimerHeap, resolveTimerSettings, transformTimerMessage } from '../../lib/broker/timer/index.js';
import { ManualClock } from '../../lib/clock.js';
import { client, sendRequest } from './helpers.js';

// The timer store holds at most timerMaxInMemory timers (the earliest), reads the rest
// back from the timer queue, inserts in O(log n), delivers a bounded number per turn, and a restart
// loses none and delivers none twice. Counts, not times.

function timerInner(topic: string, i: number, deliverAt: number, now: number): MessageInner {
  const m: MessageInner = {
    topic,
    queueId: 0,
    flag: 0,
    sysFlag: 0,
    bornTimestamp: now,
    bornHost: '127.0.0.1:1',
    reconsumeTimes: 0,
    preparedTransactionOffset: 0,
    body: Buffer.from(String(i)),
    properties: { TIMER_DELIVER_MS: String(deliverAt) },
  };
  const refusal = transformTimerMessage(m, resolveTimerSettings({}), now);
  if (refusal || m.topic !== TIMER_TOPIC) throw new Error(`not parked: ${refusal?.remark}`);
  return m;
}

/** Park timers as the send path does (straight into the store: 100 000 sends over a socket would take long). */
function park(b: Broker, topic: string, times: number[], now: number, first = 0): void {
  for (let i = 0; i < times.length; i++) {
    const r = b.messageStore.putMessages([timerInner(topic, first + i, times[i]!, now)]);
    if (r.status !== 'PUT_OK') throw new Error(r.status);
  }
}

/** The bodies delivered to topic queue 0, in queue order, with their TIMER_OUT_MS. */
function delivered(b: Broker, topic: string): Array<{ i: number; at: number }> {
  const cq = b.messageStore.queue(topic, 0);
  const out: Array<{ i: number; at: number }> = [];
  if (!cq) return out;
  for (let o = 0; o < cq.maxOffset; o++) {
    const m = decodeMessage(b.messageStore.lookMessageByOffset(cq.physOffsetAt(o))!, 0, { decompress: false });
    out.push({ i: Number(m.body.toString()), at: Number(m.properties.TIMER_OUT_MS) });
  }
  return out;
}

/** Advance in steps, checking after each that the store holds no more than its cap. */
function advanceChecking(t: Test, clock: ManualClock, b: Broker, ms: number, step: number, cap: number): void {
  let over = 0;
  for (let done = 0; done < ms; done += step) {
    clock.advance(Math.min(step, ms - done));
    if (b.timers!.stats().held > cap) over++;
  }
  t.equal(over, 0, `never more than ${cap} timers held`);
}

function inOrder(got: Array<{ i: number; at: number }>): boolean {
  for (let k = 1; k < got.length; k++) {
    const a = got[k - 1]!;
    const c = got[k]!;
    if (a.at > c.at || (a.at === c.at && a.i > c.i)) return false;
  }
  return true;
}

t.test('the heap: O(log n) moves per insert with descending keys, pops in key order with ties in store order', (t) => {
  const n = 100_000;
  const h = new TimerHeap(16);
  for (let i = 0; i < n; i++) h.push(10 * n - 10 * Math.floor(i / 4), i);
  const perInsert = h.moves / n;
  // a sorted array with splice moves n/2 elements per insert on average (50 000 here)
  t.ok(
    perInsert <= Math.log2(n) + 2,
    `moves per insert ${perInsert.toFixed(2)} ≤ log2(n) + 2 = ${(Math.log2(n) + 2).toFixed(2)}`,
  );
  const before = h.moves;
  let ok = true;
  let pAt = -Infinity;
  let pOff = -Infinity;
  let popped = 0;
  while (h.size > 0) {
    const at = h.minAt();
    const off = h.minOffset();
    if (at < pAt || (at === pAt && off < pOff)) ok = false;
    pAt = at;
    pOff = off;
    h.popMin();
    popped++;
  }
  t.equal(popped, n);
  t.ok(ok, 'popped in (time, offset) order');
  t.ok((h.moves - before) / n <= 2 * Math.log2(n) + 2, 'O(log n) moves per pop');
  t.end();
});

t.test('the heap against a sorted reference: random pushes, popMin and popMax', (t) => {
  let seed = 29;
  const rnd = (m: number): number => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % m;
  };
  const h = new TimerHeap(4);
  const ref: Array<[number, number]> = [];
  const cmp = (a: [number, number], b: [number, number]): number => a[0] - b[0] || a[1] - b[1];
  let mismatches = 0;
  for (let step = 0; step < 20_000; step++) {
    const op = rnd(10);
    if (op < 5 || ref.length === 0) {
      const k: [number, number] = [rnd(50), step];
      h.push(k[0], k[1]);
      ref.push(k);
      ref.sort(cmp);
    } else if (op < 8) {
      if (h.minAt() !== ref[0]![0] || h.minOffset() !== ref[0]![1]) mismatches++;
      h.popMin();
      ref.shift();
    } else {
      const last = ref[ref.length - 1]!;
      if (h.maxAt() !== last[0] || h.maxOffset() !== last[1]) mismatches++;
      h.popMax();
      ref.pop();
    }
    if (h.size !== ref.length) mismatches++;
  }
  t.equal(mismatches, 0);
  t.end();
});

/** A ManualClock that counts the timers set and the distinct delays asked for. */
class CountingClock extends ManualClock {
  sets = 0;
  readonly delays = new Set<number>();
  override setTimeout(fn: () => void, ms: number): ReturnType<ManualClock['setTimeout']> {
    this.sets++;
    this.delays.add(ms);
    return super.setTimeout(fn, ms);
  }
}

t.test(
  '100 000 pending timers, cap 10 000: at most 10 000 held, all delivered once in time order, a bounded number per turn',
  async (t) => {
    const clock = new CountingClock();
    const cap = 10_000;
    const perTick = 256;
    const eb = await startBroker({ clock, timerMaxInMemory: cap, timerDeliverPerTick: perTick });
    t.teardown(() => eb.close());
    const b = eb.instances[0]!;
    const n = 100_000;
    const now = clock.now();
    // descending delivery times (the timer attack), ten on each millisecond: ties keep store order
    const times = Array.from({ length: n }, (_, i) => now + 1000 + 10 * Math.floor((n - 1 - i) / 10));
    const setsBefore = clock.sets;
    park(b, 'Bound', times, now);
    // Node keeps a list per distinct timer delay for good (160 B of heap each): 100 000 descending
    // timers must not arm 100 000 clock timers of distinct delays
    t.ok(clock.sets - setsBefore <= 64, `clock timers armed while parking: ${clock.sets - setsBefore}`);
    const s0 = b.timers!.stats();
    t.equal(s0.pending, n, 'all pending');
    t.equal(s0.held, cap, 'only the cap is held');
    t.ok(s0.evicted >= n - cap, 'the rest stay in the timer queue');
    t.ok(
      s0.heapMoves / n <= Math.log2(cap) + 4,
      `heap moves per timer ${(s0.heapMoves / n).toFixed(2)}: O(log n), not a splice`,
    );
    advanceChecking(t, clock, b, 1000 + 10 * n, 5000, cap);
    const got = delivered(b, 'Bound');
    t.equal(got.length, n, 'every timer delivered');
    t.equal(new Set(got.map((g) => g.i)).size, n, 'none twice');
    t.ok(inOrder(got), 'in (time, store order) order');
    t.ok(clock.delays.size <= 64, `distinct delays asked of the clock: ${clock.delays.size}`);
    const s = b.timers!.stats();
    t.equal(s.pending, 0);
    t.equal(s.held, 0);
    t.ok(s.heldPeak <= cap, `peak held ${s.heldPeak} ≤ ${cap}`);
    t.ok(s.deliveredPerTickPeak <= perTick, `at most ${perTick} delivered per turn (peak ${s.deliveredPerTickPeak})`);
    // every pass reads at most the whole queue, and one starts only after half the cap was delivered
    t.ok(s.scans <= 2 * Math.ceil(n / (cap / 2)) + 2, `passes over the queue: ${s.scans}`);
  },
);

t.test('a million-due burst is delivered a bounded number per turn', async (t) => {
  const clock = new ManualClock();
  const eb = await startBroker({ clock, timerDeliverPerTick: 100 });
  t.teardown(() => eb.close());
  const b = eb.instances[0]!;
  const now = clock.now();
  park(
    b,
    'Burst',
    Array.from({ length: 5000 }, () => now + 1000),
    now,
  );
  clock.advance(1000);
  t.equal(delivered(b, 'Burst').length, 5000, 'all delivered within the same millisecond of the clock');
  t.equal(b.timers!.stats().deliveredPerTickPeak, 100, 'never more than timerDeliverPerTick in one turn');
});

t.test('a restart with pending timers beyond the cap loses none and delivers none twice', async (t) => {
  const dir = t.testdir({});
  const clock = new ManualClock();
  const cap = 1000;
  let eb: EmbeddedBroker = await startBroker({ clock, dataDir: dir, timerMaxInMemory: cap });
  const n = 20_000;
  const now = clock.now();
  // interleaved far and near times: later offsets often fall due earlier
  const times = Array.from({ length: n }, (_, i) => now + 1000 + ((i * 7919) % n));
  park(eb.instances[0]!, 'Restart', times, now);
  t.equal(eb.instances[0]!.timers!.stats().held, cap);
  clock.advance(1000 + n / 2);
  const before = delivered(eb.instances[0]!, 'Restart');
  t.ok(before.length > 0 && before.length < n, `part delivered before the restart (${before.length})`);
  await eb.close();
  eb = await startBroker({ clock, dataDir: dir, timerMaxInMemory: cap });
  t.teardown(() => eb.close());
  const b = eb.instances[0]!;
  clock.advance(0); // the start-up pass reads 8 192 entries per turn
  t.equal(b.timers!.stats().pending, n - before.length, 'the restart finds exactly the undelivered ones');
  advanceChecking(t, clock, b, n, 1000, cap);
  const got = delivered(b, 'Restart');
  t.equal(got.length, n, 'all delivered');
  t.equal(new Set(got.map((g) => g.i)).size, n, 'none twice');
  t.ok(inOrder(got), 'in time order across the restart');
});

t.test('an old checkpoint (delivered offsets listed) is honoured', async (t) => {
  const clock = new ManualClock();
  const now = clock.now();
  const dir = t.testdir({});
  let eb = await startBroker({ clock, dataDir: dir });
  park(eb.instances[0]!, 'Old', [now + 1000, now + 2000, now + 3000, now + 4000], now);
  await eb.close();
  // the earlier checkpoint format: offset 0 and the listed offset 2 were delivered
  fs.writeFileSync(path.join(dir, 'config', 'timerCheck.json'), JSON.stringify({ deliveredBelow: 1, delivered: [2] }));
  eb = await startBroker({ clock, dataDir: dir });
  t.teardown(() => eb.close());
  const b = eb.instances[0]!;
  t.equal(b.timers!.stats().pending, 2);
  clock.advance(5000);
  t.same(
    delivered(b, 'Old').map((g) => g.i),
    [1, 3],
  );
});

t.test('a record sent straight to the timer topic naming it as its real topic is dropped, not looped', async (t) => {
  const clock = new ManualClock();
  const lines: string[] = [];
  const eb = await startBroker({ clock, warn: (l) => lines.push(l) });
  const c = client();
  t.teardown(async () => {
    await c.close();
    await eb.close();
  });
  const r = await c.invoke(
    eb.broker,
    sendRequest(TIMER_TOPIC, 'loop', {
      properties: { TIMER_OUT_MS: String(clock.now() + 10), REAL_TOPIC: TIMER_TOPIC, REAL_QID: '0' },
    }),
  );
  t.equal(r.code, ResponseCode.SUCCESS);
  clock.advance(100);
  const b = eb.instances[0]!;
  t.equal(b.messageStore.queue(TIMER_TOPIC, 0)!.maxOffset, 1, 'not written back to the timer topic');
  t.equal(b.timers!.stats().pending, 0);
  t.match(lines.join('\n'), /names rmq_sys_wheel_timer as its real topic: dropped/);
});

t.test('delay levels: a burst falling due together is delivered at most 64 per turn, all of it', async (t) => {
  const clock = new ManualClock();
  const eb = await startBroker({ clock });
  t.teardown(() => eb.close());
  const b = eb.instances[0]!;
  const n = 3000;
  let refused = 0;
  for (let i = 0; i < n; i++) {
    const m = timerInner('Delayed', i, clock.now() + 5000, clock.now());
    // the same message as a delay-level-1 one instead, parked as the send path parks it
    m.topic = 'Delayed';
    m.queueId = 0;
    m.properties = { DELAY: '1' };
    parkUnder(m, SCHEDULE_TOPIC, 0);
    if (b.messageStore.putMessages([m]).status !== 'PUT_OK') refused++;
  }
  t.equal(refused, 0);
  clock.advance(1000);
  const got = delivered(b, 'Delayed');
  t.equal(got.length, n, 'all delivered when due');
  t.same(
    got.slice(0, 3).map((g) => g.i),
    [0, 1, 2],
    'in store order',
  );
  t.ok(
    b.delayService!.deliveredPerTickPeak <= 64,
    `at most 64 per turn (peak ${b.delayService!.deliveredPerTickPeak})`,
  );
});
