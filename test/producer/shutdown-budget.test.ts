import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import { ManualClock } from '../../lib/clock.js';
import { Producer } from '../../lib/producer/index.js';
import { RequestCode } from '../../protocol/index.js';
import { routeJson, startFakeBroker, startFakeNameServer } from '../client/fake-cluster.js';

const BIN = fileURLToPath(new URL('../../../bin/rocketwire.js', import.meta.url));

/** A cluster whose broker stores sends but never answers UNREGISTER_CLIENT. */
async function cluster(t: Test): Promise<{ ns: string; broker: Awaited<ReturnType<typeof startFakeBroker>> }> {
  const broker = await startFakeBroker();
  broker.on(RequestCode.UNREGISTER_CLIENT, () => new Promise(() => undefined));
  const ns = await startFakeNameServer(
    new Map([['TopicTest', routeJson([{ name: 'broker-a', addrs: { '0': broker.addr } }])]]),
  );
  t.teardown(async () => {
    await ns.close();
    await broker.close();
  });
  return { ns: ns.addr, broker };
}

t.test('shutdown({ timeoutMs }) stops waiting for an unregistration the broker never acknowledges', async (t) => {
  const { ns, broker } = await cluster(t);
  const clock = new ManualClock();
  const producer = new Producer({ namesrvAddr: ns, group: 'pg_shutdown', clock });
  await producer.start();
  await producer.send({ topic: 'TopicTest', body: 'x' });
  let done = false;
  const stopped = producer.shutdown({ timeoutMs: 500 }).then(() => (done = true));
  while (broker.requestsOf(RequestCode.UNREGISTER_CLIENT).length === 0) await new Promise((r) => setImmediate(r));
  clock.advance(499);
  await new Promise((r) => setImmediate(r));
  t.notOk(done, 'still waiting within the budget');
  clock.advance(1);
  await stopped;
  t.ok(done, 'resolved when the budget ran out (the API timeout of 3 s never passed)');
});

t.test('produce exits at once when the broker never acknowledges the unregistration', async (t) => {
  const { ns, broker } = await cluster(t);
  // --timeout is far longer than the child is allowed to live: before the fix the process stayed
  // alive for the whole of it after printing its summary, waiting on UNREGISTER_CLIENT.
  const r = await new Promise<{ code: number | null; stdout: string }>((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [BIN, 'produce', '--namesrv', ns, '--topic', 'TopicTest', '--count', '2', '--timeout', '120000'],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, DEBUG: '' },
      },
    );
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    const killer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(killer);
      resolve({ code, stdout });
    });
  });
  t.equal(r.code, 0, 'exited by itself, successfully');
  t.match(r.stdout, /^sent 2 failed 0/);
  t.equal(broker.requestsOf(RequestCode.UNREGISTER_CLIENT).length, 1, 'it did ask to unregister');
});
