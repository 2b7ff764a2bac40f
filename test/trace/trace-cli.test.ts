// CLI --trace / --trace-topic on produce and consume against the embedded broker, and the one-line
// errors of bad trace options.
import t from 'tap';
import { PushConsumer, type MessageExt } from '../../lib/consumer/index.js';
import { decodeTraceData, type TraceContext } from '../../lib/trace/index.js';
import { runCli } from '../cli/run-in-process.js';
import { uniqueName, until, withBroker } from '../consumer/helpers.js';

t.test('produce --trace and consume --trace-topic write Pub and Sub records', async (t) => {
  const broker = await withBroker({ traceTopicEnable: true });
  t.teardown(() => broker.close());
  const topic = uniqueName('CliTrace');
  const traceTopic = uniqueName('CliTraceTopic');
  const p = await runCli([
    'produce',
    '--namesrv',
    broker.namesrv,
    '--topic',
    topic,
    '--count',
    '3',
    '--trace',
    '--trace-topic',
    traceTopic,
    '--json',
  ]);
  t.equal(p.code, 0, p.stderr);
  const c = await runCli([
    'consume',
    '--namesrv',
    broker.namesrv,
    '--topic',
    topic,
    '--group',
    uniqueName('cli_cg'),
    '--from',
    'first',
    '--limit',
    '3',
    '--trace-topic',
    traceTopic,
    '--json',
  ]);
  t.equal(c.code, 0, c.stderr);
  const recs: TraceContext[] = [];
  const reader = new PushConsumer({
    consumerGroup: uniqueName('reader'),
    namesrvAddr: broker.namesrv,
    consumeFromWhere: 'first',
  });
  reader.subscribe(traceTopic);
  await reader.start((msgs: MessageExt[]) => {
    for (const m of msgs) recs.push(...decodeTraceData(m.body.toString()));
    return 'CONSUME_SUCCESS';
  });
  t.teardown(() => reader.shutdown());
  await until(
    () =>
      recs.filter((r) => r.traceType === 'SubAfter').length >= 3 &&
      recs.filter((r) => r.traceType === 'Pub').length >= 3,
    'the records',
  );
  t.equal(recs.filter((r) => r.traceType === 'Pub').length, 3, 'three Pub records');
  t.equal(recs.filter((r) => r.traceType === 'SubBefore').length, 3, 'three SubBefore records');
  t.ok(recs.filter((r) => r.traceType === 'Pub').every((r) => r.groupName === 'rocketwire_produce' && r.success));
});

t.test('a bad --trace-topic is one line naming traceTopic, exit non-zero', async (t) => {
  const r = await runCli(['produce', '--namesrv', '127.0.0.1:1', '--topic', 'T', '--trace-topic', 'bad topic!']);
  t.not(r.code, 0);
  t.match(r.stderr, /traceTopic/);
  t.equal(r.stderr.trim().split('\n').length, 1, 'one line');
  t.notMatch(r.stderr, /\n\s+at /, 'no stack trace');
  const c = await runCli(['consume', '--namesrv', '127.0.0.1:1', '--topic', 'T', '--group', 'g', '--trace-topic', '']);
  t.not(c.code, 0);
  t.match(c.stderr, /traceTopic/);
});
