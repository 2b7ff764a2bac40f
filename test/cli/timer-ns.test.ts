import t, { type Test } from 'tap';
import { startBroker } from '../../lib/broker/index.js';
import { ManualClock } from '../../lib/clock.js';
import { runCli } from './run-in-process.js';

// produce --delay-ms / --deliver-at and --namespace on produce, consume and offsets, against the embedded broker.

function oneErrorLine(t: Test, r: { code: number; stderr: string }, command: string, mention: RegExp): void {
  t.not(r.code, 0, 'exit status is non-zero');
  const lines = r.stderr.trimEnd().split('\n');
  t.equal(lines.length, 1, `one line on stderr: ${r.stderr}`);
  t.match(lines[0], new RegExp(`^rocketwire ${command}: `));
  t.match(lines[0], mention);
  t.notMatch(r.stderr, /\n\s+at /, 'no stack trace');
}

t.test(
  '--delay-ms parks the message on the broker until its time; a past --deliver-at is delivered at once',
  async (t) => {
    const clock = new ManualClock(Date.now());
    const broker = await startBroker({ clock });
    t.teardown(() => broker.close());
    const store = broker.instances[0]!.messageStore;
    const total = (topic: string): number =>
      [0, 1, 2, 3, 4, 5, 6, 7].reduce((n, q) => n + store.getMaxOffset(topic, q), 0);
    const r = await runCli([
      'produce',
      '--namesrv',
      broker.namesrv,
      '--topic',
      'CliTimer',
      '--body',
      'later',
      '--delay-ms',
      '60000',
    ]);
    t.equal(r.code, 0, r.stderr);
    t.equal(store.getMaxOffset('rmq_sys_wheel_timer', 0), 1, 'parked on the timer topic');
    t.equal(total('CliTimer'), 0, 'not on its topic yet');
    clock.advance(60_000);
    t.equal(total('CliTimer'), 1, 'delivered at its time');
    const past = await runCli([
      'produce',
      '--namesrv',
      broker.namesrv,
      '--topic',
      'CliPast',
      '--body',
      'now',
      '--deliver-at',
      String(Date.now() - 1000),
    ]);
    t.equal(past.code, 0, past.stderr);
    t.equal(total('CliPast'), 1, 'a past --deliver-at is stored at once, as for Java');
  },
);

t.test('bad timer and namespace flags: one line naming the flag', async (t) => {
  const ns = '127.0.0.1:1';
  const base = ['produce', '--namesrv', ns, '--topic', 'T', '--body', 'x'];
  oneErrorLine(
    t,
    await runCli([...base, '--delay-ms', '-5']),
    'produce',
    /--delay-ms must be an integer of at least 0/,
  );
  oneErrorLine(t, await runCli([...base, '--delay-ms', 'soon']), 'produce', /--delay-ms/);
  oneErrorLine(t, await runCli([...base, '--deliver-at', '12.5']), 'produce', /--deliver-at/);
  oneErrorLine(
    t,
    await runCli([...base, '--delay-ms', '5', '--deliver-at', '6']),
    'produce',
    /--delay-ms and --deliver-at exclude each other/,
  );
  oneErrorLine(
    t,
    await runCli([...base, '--delay-ms', '5', '--batch', '2']),
    'produce',
    /--delay-ms cannot be used with --batch/,
  );
  oneErrorLine(t, await runCli([...base, '--namespace', 'a%b']), 'produce', /namespace/);
  oneErrorLine(
    t,
    await runCli(['consume', '--namesrv', ns, '--topic', 'T', '--group', 'g', '--namespace', 'a b']),
    'consume',
    /namespace/,
  );
  oneErrorLine(
    t,
    await runCli(['offsets', '--namesrv', ns, '--topic', 'T', '--group', 'g', '--namespace', 'x.y']),
    'offsets',
    /--namespace/,
  );
});

t.test("--namespace: produce and consume meet in NS%topic; offsets shows the group's progress there", async (t) => {
  const broker = await startBroker({});
  t.teardown(() => broker.close());
  const store = broker.instances[0]!.messageStore;
  const p = await runCli([
    'produce',
    '--namesrv',
    broker.namesrv,
    '--topic',
    'CliNs',
    '--body',
    'inside',
    '--namespace',
    'NS_cli',
  ]);
  t.equal(p.code, 0, p.stderr);
  t.equal(
    [0, 1, 2, 3, 4, 5, 6, 7].reduce((n, q) => n + store.getMaxOffset('NS_cli%CliNs', q), 0),
    1,
    'stored under NS%topic',
  );
  const c = await runCli([
    'consume',
    '--namesrv',
    broker.namesrv,
    '--topic',
    'CliNs',
    '--group',
    'cli_ns_cg',
    '--namespace',
    'NS_cli',
    '--from',
    'first',
    '--limit',
    '1',
    '--json',
  ]);
  t.equal(c.code, 0, c.stderr);
  const line = JSON.parse(c.stdout.trim()) as { topic: string; body: string };
  t.same([line.topic, line.body], ['CliNs', 'inside'], 'consumed, the topic shown without the namespace');
  const o = await runCli([
    'offsets',
    '--namesrv',
    broker.namesrv,
    '--topic',
    'CliNs',
    '--group',
    'cli_ns_cg',
    '--namespace',
    'NS_cli',
    '--json',
  ]);
  t.equal(o.code, 0, o.stderr);
  const rows = JSON.parse(o.stdout) as Array<{ max: number }>;
  t.equal(
    rows.reduce((n, r) => n + r.max, 0),
    1,
    'offsets found NS%topic and its message',
  );
});
