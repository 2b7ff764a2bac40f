import t from 'tap';
import { PendingTable } from '../../lib/remoting/pending-table.js';

const call = (opaque: number) => ({ opaque });

t.test('calls are found by opaque, in or out of order, and listed in opaque order', async (t) => {
  const tab = new PendingTable<{ opaque: number }>();
  for (const o of [5, 6, 9, 7, 2]) tab.set(call(o));
  t.equal(tab.size, 5);
  t.same(
    tab.values().map((c) => c.opaque),
    [2, 5, 6, 7, 9],
  );
  t.equal(tab.get(7)?.opaque, 7);
  t.equal(tab.get(8), undefined);
  t.ok(tab.delete(6));
  t.notOk(tab.delete(6), 'a call is removed once');
  t.notOk(tab.has(6));
  t.equal(tab.size, 4);
  t.ok(tab.delete(2) && tab.delete(9), 'the first and the last');
  t.same(
    tab.values().map((c) => c.opaque),
    [5, 7],
  );
  tab.set(call(6));
  t.same(
    tab.values().map((c) => c.opaque),
    [5, 6, 7],
    'a hole is filled again',
  );
  const again = call(7);
  tab.set(again);
  t.equal(tab.get(7), again, 'the same opaque replaces the call');
  t.equal(tab.size, 3);
});

t.test('a long-lived call at the head: the answered calls behind it are compacted away', async (t) => {
  const tab = new PendingTable<{ opaque: number }>();
  tab.set(call(1));
  for (let o = 2; o < 10_000; o++) {
    tab.set(call(o));
    if (o % 3 !== 0) tab.delete(o);
  }
  const missing: number[] = [];
  for (let o = 3; o < 10_000; o += 3) if (tab.get(o)?.opaque !== o) missing.push(o);
  t.same(missing, [], 'every call still waiting is found');
  t.equal(tab.size, 1 + 3333);
  for (let o = 3; o < 10_000; o += 3) tab.delete(o);
  t.same(
    tab.values().map((c) => c.opaque),
    [1],
  );
  t.ok(tab.delete(1));
  t.equal(tab.size, 0);
  t.same(tab.values(), []);
});
