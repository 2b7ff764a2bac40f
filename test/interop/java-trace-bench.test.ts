// `rocketwire bench --vs java,java-trace`: Java's DefaultMQPushConsumer without and with
// enableMsgTrace (RefClient consume-bench --trace) against the embedded broker. The report gives
// Java's traced ÷ untraced, and the java-trace rounds' records are in the trace topic, one
// SubBefore and one SubAfter per message, in Java's group; the untraced rounds wrote none.
import t from 'tap';
import { runCliProcess } from '../cli/run-in-process.js';
import { uniqueName, withBroker } from '../consumer/helpers.js';
import { distinctIds, subRecords } from '../trace/read-trace.js';
import { V5_VERSION } from './harness.js';
import { interopReady } from './skip.js';

t.setTimeout(150_000);

if (await interopReady(t, [V5_VERSION])) {
  t.test("java-trace: Java's traced consumer as a peer, its records in RMQ_SYS_TRACE_TOPIC", async (t) => {
    const broker = await withBroker({ traceTopicEnable: true });
    t.teardown(() => broker.close());
    const topic = uniqueName('BenchJavaTrace');
    const N = 1000;
    const r = await runCliProcess(
      [
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
        'java,java-trace',
        '--json',
      ],
      140_000,
    );
    t.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout) as {
      peers: { name: string; received: number; complete: boolean; msgsPerSec: number }[];
      traceRatios?: { rocketwire?: number; java?: number };
    };
    const java = report.peers.find((p) => p.name === 'java')!;
    const traced = report.peers.find((p) => p.name === 'java-trace')!;
    t.ok(java?.complete && java.received === N, 'java got every message');
    t.ok(traced?.complete && traced.received === N, 'java-trace got every message');
    t.equal(report.traceRatios?.java, traced.msgsPerSec / java.msgsPerSec, "Java's traced ÷ untraced");
    t.equal(report.traceRatios?.rocketwire, undefined, 'no rocketwire figure without --vs trace');

    const recs = await subRecords(
      broker.namesrv,
      (all) => distinctIds(all, 'SubBefore') >= N && distinctIds(all, 'SubAfter') >= N,
    );
    t.equal(distinctIds(recs, 'SubBefore'), N, 'a SubBefore for every message');
    t.equal(distinctIds(recs, 'SubAfter'), N, 'and a SubAfter');
    const groups = [...new Set(recs.map((x) => x.groupName))];
    t.equal(groups.length, 1, 'one group traced: the java-trace rounds');
    t.match(groups[0], /^java_bench_/, "Java's consumer group");
  });
}
