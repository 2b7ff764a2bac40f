// `rocketwire bench --vs trace`: the push consumer with enableTrace as a peer of the untraced
// rounds. The report gives traced ÷ untraced, and the peer's records are really in the broker's
// trace topic: a SubBefore and a SubAfter for every message it consumed, and none from the
// untraced rounds.
import t from 'tap';
import { uniqueName, withBroker } from '../consumer/helpers.js';
import { distinctIds, subRecords } from '../trace/read-trace.js';
import { runCliProcess } from '../cli/run-in-process.js';

t.test(
  'bench --vs trace: traced ÷ untraced in the report, and a SubBefore and a SubAfter per message in the trace topic',
  async (t) => {
    const broker = await withBroker({ traceTopicEnable: true });
    t.teardown(() => broker.close());
    const topic = uniqueName('BenchTrace');
    const N = 1500;
    const r = await runCliProcess([
      'bench',
      '--namesrv',
      broker.namesrv,
      '--topic',
      topic,
      '--messages',
      String(N),
      '--size',
      '128',
      '--queues',
      '2',
      '--rounds',
      '1',
      '--warmup',
      '0',
      '--latency-messages',
      '0',
      '--vs',
      'trace',
      '--json',
    ]);
    t.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout) as {
      consumed: number;
      consumeMsgsPerSec: number;
      peers: {
        name: string;
        received: number;
        complete: boolean;
        msgsPerSec: number;
        traceBacklog?: number;
        traceDropped?: number;
      }[];
      traceRatios?: { rocketwire?: number; java?: number };
    };
    t.equal(report.consumed, N, 'the untraced rounds got every message');
    const peer = report.peers.find((p) => p.name === 'trace')!;
    t.ok(peer && peer.received === N && peer.complete, 'the traced consumer got every message');
    t.equal(peer.traceDropped, 0, 'no trace record lost');
    t.ok(
      typeof peer.traceBacklog === 'number' && peer.traceBacklog >= 0 && peer.traceBacklog <= 2 * N,
      'its backlog at the last message is reported',
    );
    t.ok(report.traceRatios?.rocketwire !== undefined, 'the traced ÷ untraced ratio');
    t.equal(
      report.traceRatios!.rocketwire,
      peer.msgsPerSec / report.consumeMsgsPerSec,
      'the traced rate over the untraced one',
    );
    t.equal(report.traceRatios!.java, undefined, 'no Java figure without java and java-trace');

    const recs = await subRecords(
      broker.namesrv,
      (all) => distinctIds(all, 'SubBefore') >= N && distinctIds(all, 'SubAfter') >= N,
    );
    t.equal(distinctIds(recs, 'SubBefore'), N, 'a SubBefore for every message');
    t.equal(distinctIds(recs, 'SubAfter'), N, 'and a SubAfter');
    t.equal(recs.length, 2 * N, 'one of each per message (one message per handler call)');
    const groups = [...new Set(recs.map((x) => x.groupName))];
    t.equal(groups.length, 1, 'all from one group: only the traced peer traced');
    t.match(groups[0], /^rocketwire_bench/, "the bench's group");
    t.ok(
      recs.filter((x) => x.traceType === 'SubAfter').every((x) => x.success),
      'every call a success',
    );
  },
);

t.test('bench --vs trace runs one consumer per client', async (t) => {
  const r = await runCliProcess(['bench', '--consumers', '2', '--vs', 'trace']);
  t.equal(r.code, 2);
  t.equal(r.stderr.trim().split('\n').length, 1, 'one line');
  t.match(r.stderr, /not trace/);
});
