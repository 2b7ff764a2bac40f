import { spawn } from 'node:child_process';
import t from 'tap';
import { ManualClock } from '../../lib/clock.js';
import { RequestCode } from '../../protocol/index.js';
import { until } from '../support/until.js';
import { spyOnBroker } from './broker-spy.js';
import { produce, uniqueName, withBroker } from './helpers.js';

const BIN = new URL('../../../bin/rocketwire.js', import.meta.url).pathname;

function cli(args: string[], timeoutMs = 30_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

t.test('consume --json --limit prints N messages, commits no further; offsets shows the lag', async (t) => {
  const broker = await withBroker();
  t.teardown(() => broker.close());
  const topic = uniqueName('T');
  const group = uniqueName('cg');
  // 41 messages: the last one is TagA, so the filtered run ends with everything committed (a filtered-out tail
  // is only committed when the next long poll returns, as in Java).
  await produce(broker.namesrv, topic, 41, (i) => ({
    tags: i % 2 === 0 ? 'TagA' : 'TagB',
    keys: `k${i}`,
    body: i === 3 ? Buffer.from([0xff, 0xfe, 0x00]) : `m${i}`,
  }));
  const r = await cli([
    'consume',
    '--namesrv',
    broker.namesrv,
    '--topic',
    topic,
    '--group',
    group,
    '--json',
    '--limit',
    '10',
    '--from',
    'first',
  ]);
  t.equal(r.code, 0, r.stderr);
  const lines = r.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  t.equal(lines.length, 10);
  for (const l of lines) {
    t.equal(l.topic, topic);
    t.type(l.queueId, 'number');
    t.type(l.queueOffset, 'number');
    t.type(l.msgId, 'string');
    t.match(l.tags, /^Tag[AB]$/);
    t.match(l.keys, /^k\d+$/);
    t.equal(l.reconsumeTimes, 0);
    t.type(l.properties, 'object');
    if (l.keys === 'k3')
      t.equal(l.bodyBase64, Buffer.from([0xff, 0xfe, 0x00]).toString('base64'), 'binary body as base64');
    else t.match(l.body, /^m\d+$/);
  }
  const o = await cli(['offsets', '--namesrv', broker.namesrv, '--topic', topic, '--group', group, '--json']);
  t.equal(o.code, 0, o.stderr);
  const rows = JSON.parse(o.stdout) as {
    brokerName: string;
    queueId: number;
    committed: number;
    max: number;
    lag: number;
  }[];
  t.equal(rows.length, 4);
  t.equal(
    rows.reduce((a, r) => a + r.max, 0),
    41,
  );
  const committed = rows.reduce((a, r) => a + Math.max(0, r.committed), 0);
  t.ok(committed <= 10, `no offset passes an unprinted message (committed ${committed})`);
  t.equal(
    rows.reduce((a, r) => a + r.lag, 0),
    41 - committed,
  );

  // Second run: filter TagA only, read the rest, exit when idle; the group's lag ends at 0.
  const r2 = await cli([
    'consume',
    '--namesrv',
    broker.namesrv,
    '--topic',
    topic,
    '--group',
    group,
    '--idle-exit',
    '2',
    '--expr',
    'TagA',
  ]);
  t.equal(r2.code, 0, r2.stderr);
  const textLines = r2.stdout.trim().split('\n');
  t.ok(textLines.length > 0 && textLines.every((l) => l.includes('tags=TagA')), 'only TagA printed');
  const o2 = await cli(['offsets', '--namesrv', broker.namesrv, '--topic', topic, '--group', group]);
  t.equal(o2.code, 0);
  t.match(o2.stdout, /total lag 0/);
});

t.test('SIGTERM stops consume cleanly: exit 0, everything printed is committed', async (t) => {
  const broker = await withBroker();
  t.teardown(() => broker.close());
  const topic = uniqueName('T');
  const group = uniqueName('cg');
  await produce(broker.namesrv, topic, 100);
  const child = spawn(
    process.execPath,
    [BIN, 'consume', '--namesrv', broker.namesrv, '--topic', topic, '--group', group, '--json'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let lines = 0;
  child.stdout.on('data', (d: Buffer) => (lines += d.toString().split('\n').length - 1));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const start = Date.now();
  while (lines < 100 && Date.now() - start < 20_000) await new Promise((r) => setTimeout(r, 20));
  child.kill('SIGTERM');
  t.equal(await exited, 0, 'exit code 0');
  t.equal(lines, 100);
  const o = await cli(['offsets', '--namesrv', broker.namesrv, '--topic', topic, '--group', group, '--json']);
  const rows = JSON.parse(o.stdout) as { lag: number }[];
  t.equal(
    rows.reduce((a, r) => a + r.lag, 0),
    0,
    'lag 0 after a clean stop',
  );
});

t.test('usage errors are one line and exit 2', async (t) => {
  const r = await cli(['consume', '--topic', 'x', '--group', 'g']);
  t.equal(r.code, 2);
  t.equal(r.stderr.trim().split('\n').length, 1);
  t.match(r.stderr, /--namesrv is required/);
  const r2 = await cli(['consume', '--namesrv', '127.0.0.1:1', '--topic', 'x', '--group', 'g', '--from', 'middle']);
  t.equal(r2.code, 2);
  t.match(r2.stderr, /--from/);
});

t.test('consume waits for a full stdout once for all handler calls (no listener leak warning)', async (t) => {
  const broker = await withBroker();
  t.teardown(() => broker.close());
  const topic = uniqueName('T');
  await produce(broker.namesrv, topic, 3000, () => ({ body: 'x'.repeat(2048) }));
  // The spy reads its clock only to stamp what it records.
  const seen = spyOnBroker(broker, new ManualClock(0));
  // A reader that does not read for a while: the pipe fills and every running handler call finds
  // stdout full at once (20 and more run concurrently).
  const child = spawn(
    process.execPath,
    [
      BIN,
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
      '3000',
      '--json',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdout.pause();
  // The child pulls every message while nothing reads its stdout: the pipe filled after a few dozen
  // lines, and every handler call since waits on it.
  const store = broker.instances[0]!.messageStore;
  const atEnd = (q: number): boolean =>
    seen.some(
      (s) =>
        s.code === RequestCode.PULL_MESSAGE &&
        s.ext.topic === topic &&
        Number(s.ext.queueId) === q &&
        Number(s.ext.queueOffset) >= store.getMaxOffset(topic, q),
    );
  await until(() => [0, 1, 2, 3].every(atEnd), 'the child to pull every queue to its end');
  let lines = 0;
  let rest = '';
  child.stdout.on('data', (d: Buffer) => {
    const text = rest + d.toString();
    const parts = text.split('\n');
    rest = parts.pop()!;
    lines += parts.length;
  });
  child.stdout.resume();
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  t.equal(code, 0, stderr);
  t.equal(lines, 3000, 'every message printed');
  t.notMatch(stderr, /MaxListenersExceeded/, 'no listener leak warning');
});

t.test('consume against a name server that refuses or speaks garbage ends with one line naming it', async (t) => {
  const refused = await cli(['consume', '--namesrv', '127.0.0.1:1', '--topic', 'T', '--group', 'g']);
  t.not(refused.code, 0, 'non-zero exit');
  t.equal(refused.stderr.trim().split('\n').length, 1, refused.stderr);
  t.match(refused.stderr, /127\.0\.0\.1:1/);

  const { createServer } = await import('node:net');
  const garbage = createServer((s) => s.on('data', () => s.write(Buffer.from('garbage!garbage!garbage!'))));
  await new Promise<void>((resolve) => garbage.listen(0, '127.0.0.1', resolve));
  t.teardown(() => garbage.close());
  const addr = `127.0.0.1:${(garbage.address() as { port: number }).port}`;
  const r = await cli(['consume', '--namesrv', addr, '--topic', 'T', '--group', 'g']);
  t.not(r.code, 0, 'non-zero exit');
  t.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  t.ok(r.stderr.includes(addr), 'the line names the address');
  t.notMatch(r.stderr, /\n\s+at /, 'no stack trace');
});

t.test('consume --limit with --idle-exit that stops first says so on stderr', async (t) => {
  const broker = await withBroker();
  t.teardown(() => broker.close());
  const topic = uniqueName('T');
  const group = uniqueName('cg');
  await produce(broker.namesrv, topic, 3, (i) => ({ body: `m${i}` }));
  const r = await cli([
    'consume',
    '--namesrv',
    broker.namesrv,
    '--topic',
    topic,
    '--group',
    group,
    '--limit',
    '100',
    '--idle-exit',
    '1',
    '--from',
    'first',
  ]);
  t.equal(r.code, 0, r.stderr);
  t.equal(r.stdout.trim().split('\n').length, 3, 'the 3 messages printed');
  t.equal(r.stderr, 'rocketwire consume: stopped by --idle-exit 1 before --limit 100: 3 messages consumed\n');
  const full = await cli([
    'consume',
    '--namesrv',
    broker.namesrv,
    '--topic',
    topic,
    '--group',
    uniqueName('cg'),
    '--limit',
    '3',
    '--idle-exit',
    '5',
    '--from',
    'first',
  ]);
  t.equal(full.stderr, '', 'nothing said when --limit was reached');
});
