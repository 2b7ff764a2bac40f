/**
 * Run by in-flight-retention.test.ts under `node --expose-gc`: a connection's in-flight table with one
 * long poll parked while the process works (so that the table's storage reaches the old generation),
 * then 40 000 calls answered one after another. Prints how much the old generation grew meanwhile,
 * and how many mark-compacts ran, as JSON.
 */
import { PerformanceObserver, constants } from 'node:perf_hooks';
import * as v8 from 'node:v8';
import { ManualClock } from '../../lib/clock.js';
import { InFlightCalls, type Pending } from '../../lib/remoting/in-flight.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new TypeError('run with --expose-gc');

const clock = new ManualClock(0);
const table = new InFlightCalls('127.0.0.1:10911', clock);
let opaque = 1;
const call = (payload: unknown): Pending => ({
  opaque: opaque++,
  code: 11,
  start: 0,
  deadline: 30_000,
  timeoutMs: 30_000,
  // What a waiting caller holds on to: its promise's resolve, and through it what it will read.
  resolve: () => payload,
  reject: () => payload,
  signal: undefined,
});

table.add(call(null)); // the long poll, never answered here
for (let i = 0; i < 10; i++) table.add(call(null));
gc();
gc();
for (let o = 2; o <= 11; o++) table.take(o);

let major = 0;
const obs = new PerformanceObserver((list) => {
  for (const e of list.getEntries())
    if ((e as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) major++;
});
const oldUsed = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'old_space')!.space_used_size;
const calls = async (): Promise<void> => {
  for (let batch = 0; batch < 400; batch++) {
    for (let i = 0; i < 100; i++) {
      const p = call({ i, pad: new Array(16).fill(i) });
      table.add(p);
      table.take(p.opaque);
    }
    await new Promise((r) => setImmediate(r));
  }
};
// A first round lets the JIT settle: the code and feedback it makes also land in the old generation,
// and on a busy machine its background compiles finish later, inside the measured round.
await calls();
obs.observe({ entryTypes: ['gc'] });
const before = oldUsed();
await calls();
const grewBytes = oldUsed() - before;
await new Promise((r) => setTimeout(r, 10));
obs.disconnect();
process.stdout.write(JSON.stringify({ grewBytes, markCompacts: major, calls: 40_000 }) + '\n');
