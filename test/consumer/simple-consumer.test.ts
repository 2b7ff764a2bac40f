import * as os from 'node:os';
import t, { type Test } from 'tap';
import { RequestCode, ResponseCode, TopicRouteData, createResponse } from '../../protocol/index.js';
import { RemotingServer } from '../../lib/remoting/index.js';
import { SimpleConsumer } from '../../lib/consumer/pop/simple-consumer.js';
import { resolveSimpleConsumerOptions } from '../../lib/consumer/pop/simple-consumer-options.js';
import { PopNotSupportedError } from '../../lib/consumer/errors.js';
import { uniqueName } from './helpers.js';

// Peers that cannot serve POP over remoting, scripted: a 5.x proxy (its route names itself as
// every broker, P/GetTopicRouteActivity, and its remoting POP path does not work) and a broker
// without POP (4.x: REQUEST_CODE_NOT_SUPPORTED, which our RemotingServer answers for any code
// nobody registered, with Apache's remark).

async function fakeNameServer(
  t: Test,
  brokerAddr: (self: string) => string,
): Promise<{ addr: string; seen: number[] }> {
  const seen: number[] = [];
  const s = new RemotingServer();
  const a = await s.listen(0);
  const self = `127.0.0.1:${a.port}`;
  s.registerProcessor(RequestCode.GET_ROUTEINFO_BY_TOPIC, (req) =>
    createResponse(req, ResponseCode.SUCCESS, {
      body: TopicRouteData.encode({
        brokerDatas: [{ cluster: 'DefaultCluster', brokerName: 'broker-a', brokerAddrs: { '0': brokerAddr(self) } }],
        queueDatas: [{ brokerName: 'broker-a', readQueueNums: 4, writeQueueNums: 4, perm: 6, topicSysFlag: 0 }],
        filterServerTable: {},
      }),
    }),
  );
  for (const code of [RequestCode.POP_MESSAGE, RequestCode.ACK_MESSAGE, RequestCode.HEART_BEAT]) {
    s.registerProcessor(code, (req) => {
      seen.push(code);
      // the proxy's PullMessageActivity hits a NullPointerException on a POP (missing sysFlag)
      return createResponse(req, ResponseCode.SYSTEM_ERROR, { remark: 'java.lang.NullPointerException' });
    });
  }
  t.teardown(() => s.close());
  return { addr: self, seen };
}

t.test('through a 5.x proxy, receive fails with PopNotSupportedError before sending a POP', async (t) => {
  const proxy = await fakeNameServer(t, (self) => self);
  const c = new SimpleConsumer({
    namesrvAddr: proxy.addr,
    consumerGroup: uniqueName('g'),
    topic: 'T',
    awaitDurationMs: 0,
    instanceName: uniqueName('i'),
  });
  t.teardown(() => c.shutdown());
  await c.start();
  const err = await c.receive().catch((e: unknown) => e);
  t.type(err, PopNotSupportedError);
  t.match(err, { name: 'PopNotSupportedError', reason: 'proxy', addr: proxy.addr, message: /proxy/ });
  t.notOk(proxy.seen.includes(RequestCode.POP_MESSAGE), 'no POP reached the proxy');
});

t.test(
  "a proxy on this machine names itself at the machine's own address, not the 127.0.0.1 dialled: still a proxy",
  async (t) => {
    const own = Object.values(os.networkInterfaces())
      .flat()
      .find((i) => i && !i.internal && i.family === 'IPv4')?.address;
    if (!own) {
      t.comment('no non-loopback IPv4 address on this machine');
      return;
    }
    // the real 5.5.0 proxy answers routes naming `<own address>:<its port>` (real-broker-proxy.test.ts)
    const proxy = await fakeNameServer(t, (self) => `${own}:${self.split(':')[1]}`);
    const c = new SimpleConsumer({
      namesrvAddr: proxy.addr,
      consumerGroup: uniqueName('g'),
      topic: 'T',
      awaitDurationMs: 0,
      instanceName: uniqueName('i'),
    });
    t.teardown(() => c.shutdown());
    await c.start();
    await t.rejects(c.receive(), { name: 'PopNotSupportedError', reason: 'proxy' });
    t.notOk(proxy.seen.includes(RequestCode.POP_MESSAGE), 'no POP reached the proxy');
  },
);

t.test('a broker that answers REQUEST_CODE_NOT_SUPPORTED (4.x) gives PopNotSupportedError', async (t) => {
  const broker = new RemotingServer();
  const b = await broker.listen(0);
  t.teardown(() => broker.close());
  const ns = await fakeNameServer(t, () => `127.0.0.1:${b.port}`);
  const c = new SimpleConsumer({
    namesrvAddr: ns.addr,
    consumerGroup: uniqueName('g'),
    topic: 'T',
    awaitDurationMs: 0,
    instanceName: uniqueName('i'),
  });
  t.teardown(() => c.shutdown());
  await c.start();
  const err = await c.receive().catch((e: unknown) => e);
  t.match(err, {
    name: 'PopNotSupportedError',
    reason: 'request-code-not-supported',
    addr: `127.0.0.1:${b.port}`,
    message: /5\.x broker/,
  });
  t.match((err as Error).cause, {
    name: 'BrokerError',
    code: ResponseCode.REQUEST_CODE_NOT_SUPPORTED,
    remark: ' request type 200050 not supported',
  });
});

t.test('options are checked and named', async (t) => {
  const base = { namesrvAddr: '127.0.0.1:1', consumerGroup: 'g', topic: 'T' };
  t.match(resolveSimpleConsumerOptions(base), {
    invisibleDurationMs: 60_000,
    awaitDurationMs: 15_000,
    initMode: 1,
    expType: 'TAG',
    exp: '*',
    ackTimeoutMs: 3000,
  });
  t.throws(() => resolveSimpleConsumerOptions({ ...base, topic: '' }), {
    name: 'ConsumerOptionError',
    option: 'topic',
  });
  t.throws(() => resolveSimpleConsumerOptions({ ...base, invisibleDurationMs: 999 }), {
    name: 'ConsumerOptionError',
    option: 'invisibleDurationMs',
  });
  t.throws(() => resolveSimpleConsumerOptions({ ...base, initMode: 'FIRST' as never }), {
    name: 'ConsumerOptionError',
    option: 'initMode',
  });
  const c = new SimpleConsumer(base);
  await t.rejects(c.receive(), { name: 'ConsumerStateError' }, 'receive before start');
});
