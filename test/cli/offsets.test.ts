import t from 'tap';
import { runCli, type CliRun } from './run-in-process.js';
import { RequestCode } from '../../protocol/index.js';
import { routeJson, startFakeNameServer, startFakeNode } from '../client/fake-cluster.js';

const offsets = (args: string[]): Promise<CliRun> => runCli(['offsets', ...args]);

t.test('offsets asks every queue at once and gives up after --timeout with one line', async (t) => {
  const broker = await startFakeNode();
  const never = (): Promise<null> => new Promise(() => undefined);
  for (const code of [RequestCode.QUERY_CONSUMER_OFFSET, RequestCode.GET_MIN_OFFSET, RequestCode.GET_MAX_OFFSET])
    broker.on(code, never);
  const ns = await startFakeNameServer(
    new Map([['T', routeJson([{ name: 'broker-a', addrs: { '0': broker.addr }, queues: 4 }])]]),
  );
  t.teardown(async () => {
    await ns.close();
    await broker.close();
  });
  const r = await offsets(['--namesrv', ns.addr, '--topic', 'T', '--group', 'cg', '--timeout', '300']);
  t.equal(r.code, 1);
  t.equal(r.stdout, '');
  t.match(
    r.stderr,
    new RegExp(`^rocketwire offsets: .*${broker.addr} timed out after \\d+ ms \\(timeout \\d+ ms\\)\\n$`),
  );
  const queues = new Set(broker.requestsOf(RequestCode.QUERY_CONSUMER_OFFSET).map((q) => q.extFields?.queueId));
  t.same(
    [...queues].sort(),
    ['0', '1', '2', '3'],
    'every queue was asked before the first answer was given up (one timeout, not one per queue)',
  );
});

t.test('offsets --timeout names its range', async (t) => {
  const r = await offsets(['--namesrv', '127.0.0.1:1', '--topic', 'T', '--group', 'g', '--timeout', '-1']);
  t.equal(r.code, 2);
  t.match(r.stderr, /^rocketwire offsets: --timeout must be an integer from 1 to 3600000, got -1\n$/);
});
