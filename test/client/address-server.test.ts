// Name-server discovery from an HTTP address server, as Java's TopAddressing: with no namesrvAddr,
// the list comes from http://{namesrvDomain}/rocketmq/{subgroup} at start and every 2 minutes.
import http from 'node:http';
import t from 'tap';
import { ManualClock } from '../../lib/clock.js';
import { addressServerUrlOf, MQClientInstance, resolveClientOptions } from '../../lib/client/index.js';
import { Producer } from '../../lib/producer/index.js';
import { PushConsumer } from '../../lib/consumer/index.js';
import { RequestCode } from '../../protocol/index.js';
import { routeJson, startFakeBroker, startFakeNameServer } from './fake-cluster.js';
import { until } from '../support/until.js';

/** An address server on loopback answering GET /rocketmq/{subgroup} with `answer.body` (status `answer.status`). */
async function startAddressServer(t: { teardown(f: () => unknown): void }) {
  const answer = { status: 200, body: '' };
  const asked: string[] = [];
  const server = http.createServer((req, res) => {
    asked.push(req.url ?? '');
    res.writeHead(answer.status, { 'content-type': 'text/plain' });
    res.end(answer.body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  let closed = false;
  const close = (): Promise<void> => {
    if (closed) return Promise.resolve();
    closed = true;
    server.closeAllConnections();
    return new Promise<void>((r) => server.close(() => r()));
  };
  t.teardown(close);
  return { domain: `127.0.0.1:${port}`, answer, asked, close };
}

t.test("the URL is Java's MixAll.getWSAddr()", async (t) => {
  t.equal(addressServerUrlOf('jmenv.tbsite.net', undefined), 'http://jmenv.tbsite.net:8080/rocketmq/nsaddr');
  t.equal(addressServerUrlOf('ns.example:9000', 'unit1'), 'http://ns.example:9000/rocketmq/unit1');
  const env = { ...process.env };
  t.teardown(() => {
    process.env = env;
  });
  delete process.env.NAMESRV_ADDR;
  process.env.ROCKETMQ_NAMESRV_DOMAIN = 'addr.example';
  process.env.ROCKETMQ_NAMESRV_DOMAIN_SUBGROUP = 'sub';
  const o = resolveClientOptions({});
  t.equal(o.addressServerUrl, 'http://addr.example:8080/rocketmq/sub', 'the environment variables name it');
  t.same(o.namesrvAddrs, []);
  t.equal(resolveClientOptions({ namesrvAddr: '127.0.0.1:9876' }).addressServerUrl, '', 'namesrvAddr wins');
  delete process.env.ROCKETMQ_NAMESRV_DOMAIN;
  t.throws(() => resolveClientOptions({}), { name: 'ClientOptionError', option: 'namesrvAddr' });
  t.throws(() => resolveClientOptions({ namesrvDomain: 'a/b' }), {
    name: 'ClientOptionError',
    option: 'namesrvDomain',
  });
  t.throws(() => resolveClientOptions({ namesrvDomain: 'a', namesrvDomainSubgroup: 'x/y' }), {
    name: 'ClientOptionError',
    option: 'namesrvDomainSubgroup',
  });
});

t.test(
  'start fetches the list; a changed list is used from the next poll; a down server keeps the last one',
  async (t) => {
    const broker = await startFakeBroker();
    t.teardown(() => broker.close());
    const route = new Map([['T', routeJson([{ name: 'broker-a', addrs: { '0': broker.addr } }])]]);
    const ns1 = await startFakeNameServer(route);
    const ns2 = await startFakeNameServer(route);
    t.teardown(() => Promise.all([ns1.close(), ns2.close()]));
    const as = await startAddressServer(t);
    // Java's clearNewLine: trimmed, and only the first line counts
    as.answer.body = `  ${ns1.addr}\r\nignored\n`;

    const clock = new ManualClock();
    const events: Array<{ addr: string; error?: string }> = [];
    const warnings: string[] = [];
    const infos: string[] = [];
    const logger = {
      debug() {},
      info: (m: string) => void infos.push(m),
      warn: (m: string) => void warnings.push(m),
      error: (m: string) => void warnings.push(m),
    };
    const producer = new Producer({
      group: 'address_server_pg',
      namesrvDomain: as.domain,
      namesrvDomainSubgroup: 'nsaddr-unit',
      clock,
      logger,
    });
    producer.on('nameServerError', (e) => events.push({ addr: e.addr, error: e.error.message }));
    producer.on('nameServerReachable', (e) => events.push({ addr: e.addr }));
    await producer.start();
    t.teardown(() => producer.shutdown());
    t.same(as.asked, ['/rocketmq/nsaddr-unit'], 'one fetch at start, at /rocketmq/{subgroup}');
    const r1 = await producer.send({ topic: 'T', body: 'one' });
    t.equal(r1.status, 'SEND_OK');
    t.ok(ns1.requestsOf(RequestCode.GET_ROUTEINFO_BY_TOPIC).length > 0, 'the route came from the listed name server');
    const instance = producer['clientInstance'];
    t.same(instance.nameServerAddresses(), [ns1.addr]);

    // the list changes: picked up by the first poll, 10 s after start, then every 2 minutes
    as.answer.body = `${ns2.addr};${ns1.addr}`;
    clock.advance(9_999);
    t.equal(as.asked.length, 1, 'no poll before 10 s');
    clock.advance(1);
    await until(() => instance.nameServerAddresses()[0] === ns2.addr, 'the new list in use');
    t.same(instance.nameServerAddresses(), [ns2.addr, ns1.addr]);
    t.ok(
      infos.some((m) => m.includes(`name server address changed, old=${ns1.addr}, new=${ns2.addr};${ns1.addr}`)),
      'the change is logged at info',
    );
    const before = ns2.requestsOf(RequestCode.GET_ROUTEINFO_BY_TOPIC).length;
    await instance.getTopicRoute('T', { refresh: true });
    t.equal(ns2.requestsOf(RequestCode.GET_ROUTEINFO_BY_TOPIC).length, before + 1, 'routes are asked of the new list');

    // the address server fails: the last list stays, a warning once, an event per failed poll
    as.answer.status = 503;
    clock.advance(120_000);
    await until(() => events.length === 1, 'a nameServerError event');
    t.match(events[0], { addr: `http://${as.domain}/rocketmq/nsaddr-unit`, error: /HTTP 503/ });
    await as.close();
    clock.advance(120_000);
    await until(() => events.length === 2, 'a second nameServerError event (server down)');
    t.equal(warnings.filter((w) => w.includes('address server')).length, 1, 'one warning for the episode');
    t.match(warnings[0], new RegExp(`keeping ${ns2.addr};${ns1.addr}`));
    t.same(instance.nameServerAddresses(), [ns2.addr, ns1.addr], 'the last list is kept');
    const r2 = await producer.send({ topic: 'T', body: 'two' });
    t.equal(r2.status, 'SEND_OK', 'sends go on with the last list');
  },
);

t.test('an address server that cannot be reached at start: a typed error, or a start that polls on', async (t) => {
  const as = await startAddressServer(t);
  await as.close();
  const producer = new Producer({ group: 'address_server_down_pg', namesrvDomain: as.domain, logger: false });
  await t.rejects(producer.start(), {
    name: 'AddressServerError',
    url: `http://${as.domain}/rocketmq/nsaddr`,
    retriable: true,
  });
  const consumer = new PushConsumer({
    group: 'address_server_down_cg',
    namesrvDomain: as.domain,
    subscriptions: { T: '*' },
    logger: false,
  });
  await t.rejects(
    consumer.start(() => 'CONSUME_SUCCESS'),
    { name: 'AddressServerError' },
  );
  const tolerant = MQClientInstance.acquire({
    namesrvDomain: as.domain,
    startWithoutNameServer: true,
    instanceName: 'address_server_tolerant',
    logger: false,
  });
  t.teardown(() => tolerant.release());
  await tolerant.start();
  t.same(tolerant.nameServerAddresses(), [], 'startWithoutNameServer: started with no list, the polls go on');
});

t.test('a 200 answer that is no name server list is refused and keeps the last one', async (t) => {
  const as = await startAddressServer(t);
  as.answer.body = '<html>login</html>';
  const producer = new Producer({ group: 'address_server_html_pg', namesrvDomain: as.domain, logger: false });
  await t.rejects(producer.start(), { name: 'AddressServerError', message: /not a name server list/ });
});
