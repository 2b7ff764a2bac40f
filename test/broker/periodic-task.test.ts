// OnDemandTask: a periodic task that holds a timer only while it has work, and when woken runs at
// the tick an always-armed task (scheduleEvery) would have run at.
import t from 'tap';
import { ManualClock } from '../../lib/clock.js';
import { OnDemandTask, scheduleEvery } from '../../lib/broker/periodic-task.js';

t.test('an idle task holds no timer; a woken one runs on the grid of an always-armed one', async (t) => {
  const clock = new ManualClock(1_000);
  const runs: number[] = [];
  let work = 0;
  const task = new OnDemandTask(
    clock,
    500,
    () => {
      runs.push(clock.now());
      if (work > 0) work--;
      return work > 0;
    },
    () => t.fail('no error expected'),
  );
  const always: number[] = [];
  const stopAlways = scheduleEvery(
    clock,
    500,
    () => always.push(clock.now()),
    () => undefined,
  );
  t.teardown(() => {
    task.stop();
    stopAlways();
  });
  t.equal(task.armed, false, 'not armed until woken');
  clock.advance(1_700); // now 2 700
  t.same(runs, []);
  work = 2;
  task.wake();
  task.wake(); // a second wake while armed changes nothing
  t.equal(task.armed, true);
  clock.advance(2_000); // to 4 700
  t.same(runs, [3_000, 3_500], 'runs while work is left, at ticks the always-armed task had');
  t.ok(
    runs.every((at) => always.includes(at)),
    'the same instants as scheduleEvery',
  );
  t.equal(task.armed, false, 'disarmed once no work is left');
  work = 1;
  task.wake(); // at 4 700: the next tick is 5 000
  clock.advance(299);
  t.same(runs, [3_000, 3_500]);
  clock.advance(1);
  t.same(runs, [3_000, 3_500, 5_000]);
});

t.test('a run that throws is reported and tried again at the next tick; stop cancels', async (t) => {
  const clock = new ManualClock(0);
  const errors: unknown[] = [];
  let calls = 0;
  const task = new OnDemandTask(
    clock,
    100,
    () => {
      calls++;
      if (calls === 1) throw new Error('disk');
      return true;
    },
    (err) => errors.push(err),
  );
  task.wake();
  clock.advance(100);
  t.equal(errors.length, 1);
  t.equal(task.armed, true, 'a failed run keeps its work');
  clock.advance(100);
  t.equal(calls, 2);
  task.stop();
  t.equal(clock.pending, 0, 'stop clears the timer');
  task.wake();
  t.equal(task.armed, false, 'a stopped task is not woken again');
  clock.advance(1_000);
  t.equal(calls, 2);
});
