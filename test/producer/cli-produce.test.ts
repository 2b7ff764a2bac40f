import { spawn } from 'node:child_process';
import { once } from 'node:events';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import { createResponse, RequestCode, ResponseCode } from '../../protocol/index.js';
import { runCli, type CliRun } from '../cli/run-in-process.js';
import { refusedAddress, routeJson, startFakeBroker, startFakeNameServer } from '../client/fake-cluster.js';

const BIN = fileURLToPath(new URL('../../../bin/rocketwire.js', import.meta.url));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

const produce = (args: string[]): Promise<CliRun> => runCli(['produce', ...args]);

/** Runs the real command in a child process, as a user would (the process must exit by itself); killed after `limitMs`. */
function produceProcess(args: string[], limitMs = 15_000): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'produce', ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, DEBUG: '' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const killer = setTimeout(() => child.kill('SIGKILL'), limitMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(killer);
      resolve({ code, stdout, stderr });
    });
  });
}

async function cluster(t: Test): Promise<{ ns: string; broker: Awaited<ReturnType<typeof startFakeBroker>> }> {
  const broker = await startFakeBroker();
  const ns = await startFakeNameServer(
    new Map([['TopicTest', routeJson([{ name: 'broker-a', addrs: { '0': broker.addr } }])]]),
  );
  t.teardown(async () => {
    await ns.close();
    await broker.close();
  });
  return { ns: ns.addr, broker };
}

function oneErrorLine(t: Test, r: Run, mention: string | RegExp): void {
  t.not(r.code, 0, 'exit status is non-zero');
  const lines = r.stderr.trimEnd().split('\n');
  t.equal(lines.length, 1, `one line on stderr: ${r.stderr}`);
  t.match(lines[0], /^rocketwire produce: /);
  t.match(lines[0], mention);
  t.notMatch(r.stderr, /\n\s+at /, 'no stack trace');
}

t.test('sends --count messages of --size bytes and prints the summary', async (t) => {
  const { ns, broker } = await cluster(t);
  const r = await produce([
    '--namesrv',
    ns,
    '--topic',
    'TopicTest',
    '--count',
    '5',
    '--size',
    '100',
    '--tag',
    'TagA',
    '--keys',
    'k1 k2',
  ]);
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /^sent 5 failed 0 to TopicTest in [\d.]+ s: \d+ msgs\/s/);
  t.equal(broker.stored.length, 5);
  t.ok(broker.stored.every((s) => s.body!.length === 100));
  t.match(broker.stored[0]!.extFields!.i, /TAGS\u0001TagA/);
  t.match(broker.stored[0]!.extFields!.i, /KEYS\u0001k1 k2/);
});

t.test('--json prints one object; a single message reports its ids', async (t) => {
  const { ns, broker } = await cluster(t);
  const r = await produce(['--namesrv', ns, '--topic', 'TopicTest', '--body', 'hello', '--json']);
  t.equal(r.code, 0, r.stderr);
  const o = JSON.parse(r.stdout) as Record<string, unknown>;
  t.match(o, { topic: 'TopicTest', sent: 1, failed: 0, queue: /^broker-a\/\d$/, offsetMsgId: /^[0-9A-F]{32}$/ });
  t.equal(broker.stored[0]!.body!.toString(), 'hello');
});

t.test('--batch groups messages into SEND_BATCH_MESSAGE requests', async (t) => {
  const { ns, broker } = await cluster(t);
  const r = await produce([
    '--namesrv',
    ns,
    '--topic',
    'TopicTest',
    '--count',
    '7',
    '--batch',
    '3',
    '--concurrency',
    '1',
    '--json',
  ]);
  t.equal(r.code, 0, r.stderr);
  t.equal((JSON.parse(r.stdout) as { sent: number }).sent, 7);
  t.same(
    broker.stored.map((s) => s.code),
    [RequestCode.SEND_BATCH_MESSAGE, RequestCode.SEND_BATCH_MESSAGE, RequestCode.SEND_BATCH_MESSAGE],
  );
});

t.test('failed sends: summary, one error line, exit 1', async (t) => {
  const { ns, broker } = await cluster(t);
  broker.on(RequestCode.SEND_MESSAGE_V2, (req) =>
    createResponse(req, ResponseCode.MESSAGE_ILLEGAL, { remark: 'nope' }),
  );
  const r = await produce(['--namesrv', ns, '--topic', 'TopicTest', '--count', '3']);
  t.equal(r.code, 1);
  t.match(r.stdout, /^sent 0 failed 3/);
  oneErrorLine(t, r, /3 of 3 messages failed; first error: .*MESSAGE_ILLEGAL.*nope/);
});

t.test('a refused name server: one line naming the address', async (t) => {
  const dead = await refusedAddress();
  const r = await produceProcess(['--namesrv', dead, '--topic', 'T', '--count', '1']);
  oneErrorLine(t, r, dead);
  t.match(r.stderr, /ECONNREFUSED|refused/);
});

t.test('a peer that answers garbage: one line naming the address', async (t) => {
  const server = net.createServer((c) => c.on('data', () => c.end('HTTP/1.1 400 Bad Request\r\n\r\n')));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  const addr = `127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  const r = await produceProcess(['--namesrv', addr, '--topic', 'T', '--count', '1']);
  oneErrorLine(t, r, addr);
});

t.test('a peer that never answers: one line within the timeout', async (t) => {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((c) => sockets.add(c));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(
    () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  );
  const addr = `127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  const r = await produceProcess(['--namesrv', addr, '--topic', 'T', '--count', '1', '--timeout', '300']);
  oneErrorLine(t, r, addr);
  t.match(r.stderr, /timed out/);
});

t.test('usage errors exit 2 with one line', async (t) => {
  for (const args of [
    ['--topic', 'T'],
    ['--namesrv', 'h:1'],
    ['--namesrv', 'nohost', '--topic', 'T'],
    ['--namesrv', 'h:1', '--topic', 'T', '--count', 'x'],
    ['--namesrv', 'h:1', '--topic', 'T', '--bogus'],
  ]) {
    const r = await produce(args);
    t.equal(r.code, 2, args.join(' '));
    t.equal(r.stderr.trimEnd().split('\n').length, 1);
  }
});

t.test('SIGINT stops sending and still prints the summary (exit 130)', async (t) => {
  const broker = await startFakeBroker();
  // A slow broker so that the run is still going when the signal arrives.
  broker.on(
    RequestCode.SEND_MESSAGE_V2,
    (req) =>
      new Promise((resolve) =>
        setTimeout(
          () =>
            resolve(
              createResponse(req, ResponseCode.SUCCESS, { extFields: { msgId: 'X', queueId: '0', queueOffset: '0' } }),
            ),
          20,
        ),
      ),
  );
  const ns = await startFakeNameServer(
    new Map([['TopicTest', routeJson([{ name: 'broker-a', addrs: { '0': broker.addr } }])]]),
  );
  t.teardown(async () => {
    await ns.close();
    await broker.close();
  });
  const child = spawn(
    process.execPath,
    [BIN, 'produce', '--namesrv', ns.addr, '--topic', 'TopicTest', '--count', '100000', '--concurrency', '1', '--json'],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, DEBUG: '' },
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  while (broker.requestsOf(RequestCode.SEND_MESSAGE_V2).length < 3) await new Promise((r) => setTimeout(r, 10));
  child.kill('SIGINT');
  const [code] = (await once(child, 'close')) as [number];
  t.equal(code, 130);
  const summary = JSON.parse(stdout) as { sent: number; failed: number };
  t.ok(summary.sent >= 3 && summary.sent < 100000, `sent ${summary.sent}`);
  t.match(stderr, /^rocketwire produce: interrupted after \d+ of 100000 messages\n$/);
});
