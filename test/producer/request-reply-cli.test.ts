import t from 'tap';
import { runCli } from '../cli/run-in-process.js';
import { createTopic, uniqueName, withBroker } from '../consumer/helpers.js';

t.test(
  'rocketwire request gets the replies of rocketwire consume --reply, offline on the embedded broker',
  async (t) => {
    const broker = await withBroker();
    t.teardown(() => broker.close());
    const topic = uniqueName('Echo');
    await createTopic(broker.brokers, topic, 2);
    const replier = runCli([
      'consume',
      '--namesrv',
      broker.namesrv,
      '--topic',
      topic,
      '--group',
      uniqueName('cg'),
      '--from',
      'first',
      '--limit',
      '3',
      '--json',
      '--reply',
      're:{body}',
    ]);
    const r = await runCli([
      'request',
      '--namesrv',
      broker.namesrv,
      '--topic',
      topic,
      '--body',
      'ping',
      '--count',
      '3',
      '--timeout',
      '20000',
      '--json',
    ]);
    t.equal(r.code, 0, r.stderr);
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    t.equal(lines.length, 4, 'three replies and the summary');
    for (const l of lines.slice(0, 3)) {
      t.equal(l.body, 're:ping');
      t.match(l.correlationId, /^[0-9a-f-]{36}$/);
      t.match(l.properties, { MSG_TYPE: 'reply', CORRELATION_ID: l.correlationId });
      t.type(l.latencyMs, 'number');
    }
    t.match(lines[3], { summary: { topic, replies: 3, failed: 0, medianMs: Number, p99Ms: Number } });
    const c = await replier;
    t.equal(c.code, 0, c.stderr);
    const consumed = c.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { body: string; properties: Record<string, string> });
    t.equal(consumed.length, 3);
    t.same(
      consumed.map((m) => m.properties.CORRELATION_ID).sort(),
      lines
        .slice(0, 3)
        .map((l) => l.correlationId)
        .sort(),
      'consume printed the requests it answered',
    );
  },
);

t.test('rocketwire request: no replier, bad options', async (t) => {
  const broker = await withBroker();
  t.teardown(() => broker.close());
  const topic = uniqueName('Nobody');
  await createTopic(broker.brokers, topic, 1);
  const r = await runCli(['request', '--namesrv', broker.namesrv, '--topic', topic, '--body', 'x', '--timeout', '300']);
  t.equal(r.code, 1);
  t.equal(r.stdout, '');
  t.match(
    r.stderr,
    new RegExp(
      `^rocketwire request: no reply to the request sent to topic ${topic} within 300 ms \\(the broker stored the request; correlation id [0-9a-f-]{36}\\)\\n`,
    ),
  );
  t.match(r.stderr, /1 of 1 requests got no reply/);
  t.notMatch(r.stderr, /\n\s+at /, 'no stack trace');

  const usage: [string[], RegExp][] = [
    [['request', '--namesrv', broker.namesrv, '--topic', topic], /--body is required/],
    [['request', '--namesrv', broker.namesrv, '--topic', topic, '--body', ''], /--body must not be empty/],
    [
      ['request', '--namesrv', broker.namesrv, '--topic', topic, '--body', 'x', '--count', '0'],
      /--count must be an integer from 1 to 1000000, got 0/,
    ],
    [
      ['request', '--namesrv', broker.namesrv, '--topic', topic, '--body', 'x', '--timeout', 'soon'],
      /--timeout must be an integer from 1 to 3600000, got "soon"/,
    ],
    [
      ['request', '--namesrv', broker.namesrv, '--topic', 'bad topic', '--body', 'x'],
      /topic "bad topic" may only contain/,
    ],
    [
      ['consume', '--namesrv', broker.namesrv, '--topic', topic, '--group', 'g', '--reply', ''],
      /--reply must not be empty/,
    ],
  ];
  for (const [args, message] of usage) {
    const u = await runCli(args);
    t.not(u.code, 0, args.join(' '));
    t.match(u.stderr, message, args.join(' '));
    t.equal(u.stderr.trim().split('\n').length, 1, 'one line');
  }
});
