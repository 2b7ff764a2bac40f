import t from 'tap';
import { startBroker } from '../../lib/broker/index.js';
import { ManualClock } from '../../lib/clock.js';
import { runCli } from './run-in-process.js';

// rocketwire recall: produce --delay-ms prints the recall handle, recall withdraws the message (the
// embedded broker never delivers it); a bad handle is a usage error, a refusal exits 1 with the broker's remark.

t.test('produce --delay-ms prints the handle; recall withdraws the message', async (t) => {
  const clock = new ManualClock(Date.now());
  const broker = await startBroker({ clock, queues: 1, recallMessageEnable: true });
  t.teardown(() => broker.close());
  const store = broker.instances[0]!.messageStore;
  const ns = ['--namesrv', broker.namesrv, '--topic', 'CliRecall'];
  const sent = await runCli(['produce', ...ns, '--body', 'later', '--delay-ms', '60000', '--json']);
  t.equal(sent.code, 0, sent.stderr);
  const { msgId, recallHandle } = JSON.parse(sent.stdout) as { msgId: string; recallHandle: string };
  t.ok(recallHandle, 'the summary carries the recall handle');
  const text = await runCli(['produce', ...ns, '--body', 'kept', '--delay-ms', '60000']);
  t.match(text.stdout, / recallHandle=[A-Za-z0-9_=-]+/, 'the text summary too');

  const r = await runCli(['recall', ...ns, recallHandle]);
  t.equal(r.code, 0, r.stderr);
  t.equal(r.stdout, `recalled ${msgId} of CliRecall\n`);
  // the handle's time is the delivery time + 1 ms: past it, a recall is refused
  clock.advance(60_001);
  t.equal(store.getMaxOffset('CliRecall', 0), 1, 'only the message not recalled was delivered');

  const bad = await runCli(['recall', ...ns, 'nope']);
  t.equal(bad.code, 2);
  t.match(bad.stderr, /^rocketwire recall: recall handle is invalid\n$/);
  const late = await runCli(['recall', ...ns, '--json', recallHandle]);
  t.equal(late.code, 1);
  t.match(late.stderr, /recall failed, timestamp invalid/);
  const none = await runCli(['recall', ...ns]);
  t.equal(none.code, 2);
  t.match(none.stderr, /give exactly one recall handle/);
});

t.test('a broker that does not serve recalls: exit 1 with its remark', async (t) => {
  const broker = await startBroker({ queues: 1 });
  t.teardown(() => broker.close());
  const ns = ['--namesrv', broker.namesrv, '--topic', 'CliNoRecall'];
  const sent = await runCli(['produce', ...ns, '--body', 'x', '--delay-ms', '60000', '--json']);
  const { recallHandle } = JSON.parse(sent.stdout) as { recallHandle: string };
  const r = await runCli(['recall', ...ns, recallHandle]);
  t.equal(r.code, 1);
  t.match(r.stderr, /recall failed, operation is forbidden/);
});
