// The group-members curve (rocketwire bench --curve members) at tiny sizes on the embedded broker:
// the simulated members (client instances in host processes) converge after start, join and leave,
// every message is handled, each member is its own client instance, and the heartbeat counters at
// the broker and at the members agree; the process curve's shares add up. No timing is asserted.
import t from 'tap';
import { averagingSplit, matchesSplit, runSimulatedMembers, simulatedTable } from '../../bench/harness/members-sim.js';
import { capOf, membersTable, runMembersCurve } from '../../bench/harness/members.js';
import { withBroker } from '../support/embedded-broker.js';

t.test('the averaging split and the convergence check', async (t) => {
  const queues = ['b:0', 'b:1', 'b:2', 'b:10', 'b:3'];
  const split = averagingSplit(queues, ['c@2', 'c@1']);
  // five queues, two clients: the first client id in order gets the extra queue; queue ids sort as numbers
  t.same(split.get('c@1'), ['b:0', 'b:1', 'b:2']);
  t.same(split.get('c@2'), ['b:3', 'b:10']);
  t.ok(
    matchesSplit(
      new Map([
        ['c@1', ['b:2', 'b:1', 'b:0']],
        ['c@2', ['b:10', 'b:3']],
      ]),
      split,
    ),
  );
  t.notOk(
    matchesSplit(
      new Map([
        ['c@1', ['b:0', 'b:1']],
        ['c@2', ['b:2', 'b:3', 'b:10']],
      ]),
      split,
    ),
    'a wrong split',
  );
  t.notOk(
    matchesSplit(
      new Map([
        ['c@1', ['b:0', 'b:1', 'b:2']],
        ['c@2', ['b:3', 'b:10']],
        ['c@3', ['b:3']],
      ]),
      split,
    ),
    'a queue still held by a member that left',
  );
  t.same(averagingSplit(['b:0'], ['c@1', 'c@2']).get('c@2'), [], 'more members than queues: the last hold none');
  t.same(
    capOf([
      { processes: 1, msgsPerSec: 100 },
      { processes: 2, msgsPerSec: 180 },
      { processes: 4, msgsPerSec: 190 },
      { processes: 8, msgsPerSec: 150 },
    ]),
    { processes: 2, msgsPerSec: 180 },
    'the cap: no later point is 10 % above it',
  );
});

t.test('1 and 3 simulated members: converged after start, join and leave; nothing lost', async (t) => {
  const broker = await withBroker();
  t.teardown(() => broker.close());
  const counts = broker.instances[0]!.consumers.heartbeats;
  const points = await runSimulatedMembers({
    namesrv: broker.namesrv,
    points: [1, 3],
    hosts: 2,
    heartbeatIntervalMs: 1000,
    useHeartbeatV2: false,
    rate: 50,
    holdMs: 200,
    phaseTimeoutMs: 60_000,
    prefix: 'members_sim',
    brokerHeartbeats: () => ({ ...counts }),
    log: () => {},
  });
  t.same(
    points.map((p) => [p.members, p.queues, p.hosts, p.instances]),
    [
      [1, 8, 1, 1],
      [3, 8, 2, 3],
    ],
    'each member is a client instance of its own',
  );
  for (const p of points) {
    t.ok(p.start.converged && p.join.converged && p.leave.converged, `${p.members}: converged in every phase`);
    t.ok(p.join.ms >= 0 && p.leave.ms >= 0, `${p.members}: convergence times measured`);
    t.ok(p.sent > 0, `${p.members}: messages flowed during the join and the leave`);
    t.equal(p.unique, p.sent, `${p.members}: every message sent was handled`);
    t.ok(p.join.rebalanceRuns >= p.members + 1, `${p.members}: every member rebalanced after the join`);
    t.ok(p.heartbeat.perSec > 0 && p.heartbeat.clientBytesPerSec > 0, `${p.members}: heartbeats counted`);
    // the broker's count also holds the bench producer's heartbeats, so it is at least the members'
    t.ok(p.heartbeat.brokerBytesPerSec! >= p.heartbeat.clientBytesPerSec * 0.5, `${p.members}: the broker took them`);
    t.ok(p.heartbeat.withoutSubBytes < p.heartbeat.fullBytes, `${p.members}: V2's body is smaller`);
  }
  const table = simulatedTable(points).trim().split('\n');
  t.equal(table.length, 2 + points.length, 'a header, a rule and a row per point');
  const columns = table[0]!.split('|').length;
  t.ok(
    table.every((row) => row.split('|').length === columns),
    'every row has the header’s columns',
  );
  t.match(table[0]!, /join → converged ms \| join duplicates \| leave → converged ms \| leave duplicates/);
  t.match(table[3]!, /^\| 3 \| 8 \| 2 \| /);
});

t.test('the process curve at 1 and 2 processes: shares add up, every message consumed', async (t) => {
  const broker = await withBroker();
  t.teardown(() => broker.close());
  const points = await runMembersCurve({
    namesrv: broker.namesrv,
    points: [1, 2],
    messages: 2000,
    size: 64,
    queues: 4,
    java: false,
    prefix: 'members_proc',
    stallTimeoutMs: 60_000,
    log: () => {},
  });
  t.same(
    points.map((p) => [p.processes, p.rocketwire.shares.length, p.rocketwire.complete]),
    [
      [1, 1, true],
      [2, 2, true],
    ],
  );
  for (const p of points) {
    const sum = p.rocketwire.shares.reduce((a, b) => a + b, 0);
    t.ok(Math.abs(sum - 1) < 1e-9, `${p.processes}: the shares add up to the whole`);
  }
  t.ok(
    points[1]!.rocketwire.shares.every((s) => s > 0),
    'both processes of the group consumed',
  );
  const table = membersTable(points).trim().split('\n');
  t.equal(table.length, 4);
  t.match(table[0]!, /\| processes \| messages \| rocketwire msgs\/s \| × 1 process \| shares % \|/);
});
