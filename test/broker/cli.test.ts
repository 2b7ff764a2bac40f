import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { RequestCode, ResponseCode, createRequest } from '../../protocol/index.js';
import { startBroker } from '../../lib/broker/index.js';
import { client, decode, ext, pullRequest, sendRequest } from './helpers.js';

const bin = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../bin/rocketwire.js');

interface Ready {
  event: string;
  namesrv: string;
  broker: string;
  brokers: string[];
  data: string;
}

function runBroker(args: string[]): Promise<{ child: ChildProcess; ready: Ready; exited: Promise<number | null> }> {
  const child = spawn(process.execPath, [bin, 'broker', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const nl = out.indexOf('\n');
      if (nl >= 0) resolve({ child, ready: JSON.parse(out.slice(0, nl)) as Ready, exited });
    });
    child.on('exit', (code) => reject(new Error(`broker exited with ${code}: ${err}`)));
  });
}

t.test('CLI: ready line, SIGTERM, restart with the same --data keeps messages and committed offsets', async (t) => {
  const dir = t.testdir({});
  const first = await runBroker(['--namesrv-port', '0', '--broker-port', '0', '--data', dir, '--queues', '4']);
  t.teardown(() => first.child.kill('SIGKILL'));
  t.equal(first.ready.event, 'ready');
  t.equal(first.ready.data, dir);
  t.same(first.ready.brokers, [first.ready.broker]);
  t.match(first.ready.namesrv, /^127\.0\.0\.1:\d+$/);
  const c = client();
  t.teardown(() => c.close());
  for (let i = 0; i < 5; i++)
    t.equal(
      (await c.invoke(first.ready.broker, sendRequest('Durable', `m${i}`, { queueId: 2 }))).code,
      ResponseCode.SUCCESS,
    );
  await c.invokeOneway(
    first.ready.broker,
    createRequest(RequestCode.UPDATE_CONSUMER_OFFSET, {
      oneway: true,
      extFields: { consumerGroup: 'dg', topic: 'Durable', queueId: '2', commitOffset: '3' },
    }),
  );
  // a round trip makes sure the oneway update was processed
  await c.invoke(
    first.ready.broker,
    createRequest(RequestCode.GET_MAX_OFFSET, { extFields: { topic: 'Durable', queueId: '2' } }),
  );
  first.child.kill('SIGTERM');
  t.equal(await first.exited, 0, 'clean exit on SIGTERM');
  t.match(fs.readFileSync(path.join(dir, 'config', 'consumerOffset.json'), 'utf8'), '"Durable@dg":{2:3');
  await c.close();

  const second = await runBroker(['--namesrv-port', '0', '--broker-port', '0', '--data', dir]);
  t.teardown(() => second.child.kill('SIGKILL'));
  const c2 = client();
  t.teardown(() => c2.close());
  const q = await c2.invoke(
    second.ready.broker,
    createRequest(RequestCode.QUERY_CONSUMER_OFFSET, {
      extFields: { consumerGroup: 'dg', topic: 'Durable', queueId: '2' },
    }),
  );
  t.equal(ext(q, 'offset'), '3', 'committed offset survived');
  const pull = await c2.invoke(second.ready.broker, pullRequest('Durable', { queueId: 2 }));
  t.same(
    decode(pull).map((m) => m.body.toString()),
    ['m0', 'm1', 'm2', 'm3', 'm4'],
    'messages survived',
  );
  t.equal(decode(pull)[0]!.storeHost.split(':')[0], '127.0.0.1');
  const route = await c2.invoke(
    second.ready.namesrv,
    createRequest(RequestCode.GET_ROUTEINFO_BY_TOPIC, { extFields: { topic: 'Durable' } }),
  );
  t.equal(route.code, ResponseCode.SUCCESS, 'topic config survived');
  t.match(route.body!.toString(), '"writeQueueNums":4');
  const next = await c2.invoke(second.ready.broker, sendRequest('Durable', 'm5', { queueId: 2 }));
  t.equal(ext(next, 'queueOffset'), '5', 'queue offsets continue');
  second.child.kill('SIGTERM');
  t.equal(await second.exited, 0);
});

t.test('CLI: after SIGKILL every acknowledged message is still there', async (t) => {
  const dir = t.testdir({});
  const first = await runBroker(['--namesrv-port', '0', '--broker-port', '0', '--data', dir]);
  t.teardown(() => first.child.kill('SIGKILL'));
  const c = client();
  t.teardown(() => c.close());
  for (let i = 0; i < 20; i++)
    t.equal(
      (await c.invoke(first.ready.broker, sendRequest('Crash', `c${i}`, { queueId: i % 2 }))).code,
      ResponseCode.SUCCESS,
    );
  first.child.kill('SIGKILL');
  await first.exited;
  await c.close();
  const second = await runBroker(['--namesrv-port', '0', '--broker-port', '0', '--data', dir]);
  t.teardown(() => second.child.kill('SIGKILL'));
  const c2 = client();
  t.teardown(() => c2.close());
  for (const q of [0, 1]) {
    const got = decode(await c2.invoke(second.ready.broker, pullRequest('Crash', { queueId: q })));
    t.same(
      got.map((m) => m.body.toString()),
      Array.from({ length: 10 }, (_, i) => `c${i * 2 + q}`),
      `queue ${q} complete`,
    );
  }
  second.child.kill('SIGTERM');
  t.equal(await second.exited, 0);
});

t.test('CLI: --brokers 2 serves two brokers with their own stores', async (t) => {
  const dir = t.testdir({});
  const run = await runBroker(['--namesrv-port', '0', '--broker-port', '0', '--brokers', '2', '--data', dir]);
  t.teardown(() => run.child.kill('SIGKILL'));
  t.equal(run.ready.brokers.length, 2);
  const c = client();
  t.teardown(() => c.close());
  await c.invoke(run.ready.brokers[1]!, sendRequest('OnB', 'x'));
  t.ok(fs.existsSync(path.join(dir, 'broker-b', 'commitlog')), 'broker-b has its own store');
  const r = await c.invoke(
    run.ready.namesrv,
    createRequest(RequestCode.GET_ROUTEINFO_BY_TOPIC, { extFields: { topic: 'TBW102' } }),
  );
  t.equal((JSON.parse(r.body!.toString()) as { brokerDatas: unknown[] }).brokerDatas.length, 2);
  run.child.kill('SIGTERM');
  t.equal(await run.exited, 0);
});

t.test('CLI: a bad option is one line on stderr and a non-zero exit', async (t) => {
  const child = spawn(process.execPath, [bin, 'broker', '--brokers', 'many'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((r) => child.on('exit', r));
  t.not(code, 0);
  t.equal(err.trim().split('\n').length, 1);
  t.match(err, /--brokers must be an integer/);
});

t.test('a malformed frame closes only that connection', async (t) => {
  const b = await startBroker();
  t.teardown(() => b.close());
  const c = client();
  t.teardown(() => c.close());
  await c.invoke(b.broker, sendRequest('Iso', 'before'));
  const [host, port] = b.broker.split(':');
  const sock = net.connect(Number(port), host);
  await new Promise<void>((r) => sock.once('connect', () => r()));
  const closed = new Promise<void>((r) => sock.once('close', () => r()));
  sock.on('error', () => undefined);
  // serialize type 7 does not exist
  sock.write(Buffer.from([0, 0, 0, 8, 7, 0, 0, 0, 0, 0, 0, 0]));
  await closed;
  t.pass('the bad connection was closed');
  const after = await c.invoke(b.broker, sendRequest('Iso', 'after'));
  t.equal(after.code, ResponseCode.SUCCESS, 'other clients are still served');
  t.same(
    decode(await c.invoke(b.broker, pullRequest('Iso'))).map((m) => m.body.toString()),
    ['before', 'after'],
  );
});
