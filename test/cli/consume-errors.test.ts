import { spawn } from 'node:child_process';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { PassThrough } from 'node:stream';
import t, { type Test } from 'tap';
import { runCli, type CliRun } from './run-in-process.js';
import { ConsumeReporter } from '../../lib/cli/consume-reporter.js';
import { ConsumerBrokerError } from '../../lib/consumer/index.js';
import { RemotingConnectError } from '../../lib/remoting/index.js';
import { createResponse, RequestCode, ResponseCode } from '../../protocol/index.js';
import { refusedAddress, routeJson, startFakeNameServer } from '../client/fake-cluster.js';
import { fakeConsumerBroker } from './fake-consumer-broker.js';
import { produce, uniqueName, withBroker } from '../consumer/helpers.js';
import { COMPRESSED_ZLIB, sendRaw } from './raw-send.js';

type Run = CliRun;

const consume = (args: string[]): Promise<CliRun> => runCli(['consume', ...args]);

/** A name server whose route of `topic` names broker-a at `brokerAddr`. */
async function routeTo(t: Test, topic: string, brokerAddr: string): Promise<string> {
  const ns = await startFakeNameServer(
    new Map([[topic, routeJson([{ name: 'broker-a', addrs: { '0': brokerAddr } }])]]),
  );
  t.teardown(() => ns.close());
  return ns.addr;
}

/** A TCP server doing `onConnection` to each connection; closed (and its connections destroyed) at teardown. */
async function rawServer(t: Test, onConnection: (c: net.Socket) => void): Promise<string> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((c) => {
    sockets.add(c);
    c.on('error', () => undefined);
    onConnection(c);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(
    () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  );
  return `127.0.0.1:${(server.address() as net.AddressInfo).port}`;
}

function checkUnreached(t: Test, r: Run, brokerAddr: string): void {
  t.equal(r.code, 1, 'exit status 1: the broker was never reached');
  t.equal(r.stdout, '');
  const lines = r.stderr.trimEnd().split('\n');
  t.ok(lines.length >= 2 && lines.length <= 4, `a few lines, not one per retry: ${r.stderr}`);
  t.ok(
    lines.every((l) => l.startsWith('rocketwire consume: ')),
    'every line says who speaks',
  );
  t.match(
    lines[0],
    new RegExp(`to broker broker-a \\(${brokerAddr}\\) failed: `),
    'the first line names the broker and its address',
  );
  t.match(
    lines.at(-1),
    new RegExp(`^rocketwire consume: stopped without reaching broker broker-a \\(${brokerAddr}\\): `),
  );
  t.notMatch(r.stderr, /\n\s+at /, 'no stack trace');
}

t.test('a broker that refuses connections: named on stderr, exit 1 at --idle-exit', async (t) => {
  const dead = await refusedAddress();
  const r = await consume([
    '--namesrv',
    await routeTo(t, 'T', dead),
    '--topic',
    'T',
    '--group',
    'cg',
    '--idle-exit',
    '1',
  ]);
  checkUnreached(t, r, dead);
  t.match(r.stderr, /ECONNREFUSED|refused/);
});

t.test('a broker that answers garbage: named on stderr, exit 1 at --idle-exit', async (t) => {
  const addr = await rawServer(t, (c) => c.on('data', () => c.end('HTTP/1.1 400 Bad Request\r\n\r\n')));
  const r = await consume([
    '--namesrv',
    await routeTo(t, 'T', addr),
    '--topic',
    'T',
    '--group',
    'cg',
    '--idle-exit',
    '1',
  ]);
  checkUnreached(t, r, addr);
});

t.test('a broker that never answers: named on stderr, exit 1 at --idle-exit', async (t) => {
  const addr = await rawServer(t, () => undefined);
  const r = await consume([
    '--namesrv',
    await routeTo(t, 'T', addr),
    '--topic',
    'T',
    '--group',
    'cg',
    '--idle-exit',
    '1',
    '--timeout',
    '300',
  ]);
  checkUnreached(t, r, addr);
  const timeouts = [...r.stderr.matchAll(/timed out after \d+ ms \(timeout (\d+) ms\)/g)].map((m) => Number(m[1]));
  t.ok(
    timeouts.length > 0 && timeouts.every((ms) => ms <= 300),
    `--timeout 300 is what the requests waited: ${timeouts.join(', ')}`,
  );
});

t.test('a broker that answers everything but refuses every pull: named on stderr, exit 1 at --idle-exit', async (t) => {
  const broker = await fakeConsumerBroker((req) =>
    createResponse(req, ResponseCode.NO_PERMISSION, { remark: 'the broker pulling message is forbidden' }),
  );
  t.teardown(() => broker.close());
  const r = await consume([
    '--namesrv',
    await routeTo(t, 'T', broker.addr),
    '--topic',
    'T',
    '--group',
    'cg',
    '--idle-exit',
    '1',
  ]);
  checkUnreached(t, r, broker.addr);
  t.match(r.stderr, /PULL_MESSAGE to broker broker-a .*forbidden/);
  t.ok(broker.requestsOf(RequestCode.PULL_MESSAGE).length > 0, 'it did pull');
});

t.test('--orderly against a broker that refuses the queue locks: named on stderr, exit 1 at --idle-exit', async (t) => {
  const broker = await fakeConsumerBroker((req) => createResponse(req, ResponseCode.PULL_NOT_FOUND));
  broker.on(RequestCode.LOCK_BATCH_MQ, (req) =>
    createResponse(req, ResponseCode.SYSTEM_ERROR, { remark: 'lock service unavailable' }),
  );
  broker.on(RequestCode.UNLOCK_BATCH_MQ, (req) => createResponse(req, ResponseCode.SUCCESS));
  t.teardown(() => broker.close());
  const r = await consume([
    '--namesrv',
    await routeTo(t, 'T', broker.addr),
    '--topic',
    'T',
    '--group',
    'cg',
    '--orderly',
    '--idle-exit',
    '1',
  ]);
  checkUnreached(t, r, broker.addr);
  t.match(r.stderr, /LOCK_BATCH_MQ to broker broker-a .*lock service unavailable/);
  t.equal(broker.requestsOf(RequestCode.PULL_MESSAGE).length, 0, 'an unlocked orderly queue is not pulled');
});

t.test('a reachable broker with nothing to consume still exits 0 at --idle-exit', async (t) => {
  const broker = await withBroker();
  t.teardown(() => broker.close());
  const topic = uniqueName('T');
  await produce(broker.namesrv, topic, 1);
  const r = await consume([
    '--namesrv',
    broker.namesrv,
    '--topic',
    topic,
    '--group',
    uniqueName('cg'),
    '--idle-exit',
    '1',
  ]);
  t.equal(r.code, 0, r.stderr);
  t.equal(r.stderr, '');
});

t.test('the broker line repeats with back-off, counting the failures in between', async (t) => {
  let now = 0;
  const err = new PassThrough();
  let text = '';
  err.on('data', (d: Buffer) => (text += d.toString()));
  const rep = new ConsumeReporter(err, () => now);
  const fail = (): void =>
    rep.brokerError(
      new ConsumerBrokerError(
        'broker-a',
        '10.0.0.1:10911',
        'PULL_MESSAGE',
        new RemotingConnectError('10.0.0.1:10911', 'connect ECONNREFUSED'),
      ),
    );
  for (let i = 0; i < 5; i++) fail(); // at 0 s: one line, four kept back
  now = 2000;
  fail(); // 2 s later: the second line, with the count
  now = 5000;
  fail(); // within the next 4 s: kept back
  now = 6000;
  fail(); // 4 s after the second line: the third
  rep.brokerReachable('broker-a', '10.0.0.1:10911', 'GET_CONSUMER_LIST_BY_GROUP');
  now = 6001;
  fail(); // failing again after an answer: reported at once
  const lines = text.trimEnd().split('\n');
  t.equal(lines.length, 5, text);
  t.match(
    lines[0],
    /^rocketwire consume: PULL_MESSAGE to broker broker-a \(10\.0\.0\.1:10911\) failed: .*ECONNREFUSED$/,
  );
  t.match(lines[1], /\(4 more failures since the last report\)$/);
  t.match(lines[2], /\(1 more failure since the last report\)$/);
  t.equal(lines[3], 'rocketwire consume: broker broker-a (10.0.0.1:10911) answers again');
  t.notMatch(lines[4], /more failure/);
  t.equal(rep.neverReached().length, 1, 'failing now, and no pull of ours ever reached it');
  rep.brokerReachable('broker-a', '10.0.0.1:10911', 'PULL_MESSAGE');
  t.same(rep.neverReached(), [], 'a pull reached it');
  fail();
  t.same(rep.neverReached(), [], 'failing again after a pull reached it: still reached');
});

t.test('consume sends a poison message back, says so on stderr and exits 1', async (t) => {
  const broker = await withBroker({ queues: 1 });
  t.teardown(() => broker.close());
  const topic = uniqueName('T');
  await produce(broker.namesrv, topic, 1, () => ({ body: 'good-0' }), { single: true });
  await sendRaw(broker.broker, topic, 0, Buffer.from('not zlib'), COMPRESSED_ZLIB);
  await produce(broker.namesrv, topic, 1, () => ({ body: 'good-2' }), { single: true });
  const r = await consume([
    '--namesrv',
    broker.namesrv,
    '--topic',
    topic,
    '--group',
    uniqueName('cg'),
    '--from',
    'first',
    '--idle-exit',
    '1',
  ]);
  t.equal(r.code, 1);
  t.match(r.stdout, /body="good-0"/);
  t.match(r.stdout, /body="good-2"/);
  const lines = r.stderr.trimEnd().split('\n');
  t.equal(lines.length, 2, r.stderr);
  t.match(
    lines[0],
    new RegExp(
      `^rocketwire consume: sent back the undecodable message at ${topic} broker-a/0@1 \\(commit-log offset \\d+\\) \\(retry topic, then DLQ\\): ZLIB`,
    ),
  );
  t.equal(lines[1], 'rocketwire consume: 1 undecodable message was not consumed (see above)');
});

t.test('--from timestamp:MS names its range', async (t) => {
  const r = await consume(['--namesrv', '127.0.0.1:1', '--topic', 'T', '--group', 'g', '--from', 'timestamp:-5']);
  t.equal(r.code, 2);
  t.match(r.stderr, /^rocketwire consume: --from timestamp:MS must be an integer of at least 0, got -5\n$/);
});

t.test('consume | head: the reader going away ends the command quietly (no EPIPE stack trace), exit 0', async (t) => {
  const broker = await withBroker();
  t.teardown(() => broker.close());
  const topic = uniqueName('T');
  await produce(broker.namesrv, topic, 2000, () => ({ body: 'x'.repeat(200) }));
  const bin = fileURLToPath(new URL('../../../bin/rocketwire.js', import.meta.url));
  const child = spawn(
    process.execPath,
    [bin, 'consume', '--namesrv', broker.namesrv, '--topic', topic, '--group', uniqueName('cg'), '--from', 'first'],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, DEBUG: '' },
    },
  );
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  // Read the first chunk, then close our end of the pipe, as head does after its lines.
  await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
  child.stdout.destroy();
  const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  const code = await exited;
  clearTimeout(killer);
  t.equal(stderr, '', 'nothing on stderr');
  t.equal(code, 0);
});
