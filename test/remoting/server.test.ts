import t from 'tap';
import { once } from '../../lib/emitter.js';
import net from 'node:net';
import {
  RemotingFlag,
  RequestCode,
  ResponseCode,
  createRequest,
  createResponse,
  type RemotingCommand,
} from '../../protocol/index.js';
import { RemotingClient, type RemotingConnection, RemotingServer } from '../../lib/remoting/index.js';

async function startServer(
  t: { teardown(fn: () => unknown): void },
  options?: ConstructorParameters<typeof RemotingServer>[0],
) {
  const server = new RemotingServer(options);
  const { port } = await server.listen(0, '127.0.0.1');
  t.teardown(() => server.close());
  return { server, addr: `127.0.0.1:${port}` };
}

t.test('processors answer with the request opaque; unknown codes get REQUEST_CODE_NOT_SUPPORTED', async (t) => {
  const { server, addr } = await startServer(t);
  server.registerProcessor(RequestCode.GET_ROUTEINFO_BY_TOPIC, (req) =>
    createResponse(req, ResponseCode.SUCCESS, { body: Buffer.from(`route of ${req.extFields!.topic}`) }),
  );
  const client = new RemotingClient();
  t.teardown(() => client.close());
  const req = createRequest(RequestCode.GET_ROUTEINFO_BY_TOPIC, { extFields: { topic: 'T' } });
  const res = await client.invoke(addr, req);
  t.equal(res.code, ResponseCode.SUCCESS);
  t.equal(res.opaque, req.opaque);
  t.equal(res.body!.toString(), 'route of T');
  const unknown = await client.invoke(addr, createRequest(999));
  t.equal(unknown.code, ResponseCode.REQUEST_CODE_NOT_SUPPORTED);
  t.equal(unknown.remark, ' request type 999 not supported');
});

t.test('a processor that throws (or rejects) answers SYSTEM_ERROR with its message', async (t) => {
  const { server, addr } = await startServer(t);
  server.registerProcessor(1, () => {
    throw new Error('boom');
  });
  server.registerProcessor(2, async () => {
    throw new Error('async boom');
  });
  const client = new RemotingClient();
  t.teardown(() => client.close());
  const a = await client.invoke(addr, createRequest(1));
  t.equal(a.code, ResponseCode.SYSTEM_ERROR);
  t.equal(a.remark, 'boom');
  const b = await client.invoke(addr, createRequest(2));
  t.equal(b.code, ResponseCode.SYSTEM_ERROR);
  t.equal(b.remark, 'async boom');
});

t.test('an async processor may answer much later (long polling) while other calls go on', async (t) => {
  const { server, addr } = await startServer(t);
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  server.registerProcessor(RequestCode.PULL_MESSAGE, async (req) => {
    await held;
    return createResponse(req, ResponseCode.PULL_NOT_FOUND);
  });
  server.registerProcessor(RequestCode.HEART_BEAT, (req) => createResponse(req, ResponseCode.SUCCESS));
  const client = new RemotingClient();
  t.teardown(() => client.close());
  const pull = client.invoke(addr, createRequest(RequestCode.PULL_MESSAGE), { timeoutMs: 30_000 });
  const hb = await client.invoke(addr, createRequest(RequestCode.HEART_BEAT));
  t.equal(hb.code, ResponseCode.SUCCESS, 'a held pull does not block other calls');
  release();
  t.equal((await pull).code, ResponseCode.PULL_NOT_FOUND);
});

t.test('responses use the request serialize type, or the server type when forced', async (t) => {
  const echo = (req: RemotingCommand) => createResponse(req, 0, { extFields: { got: req.serializeType } });
  const plain = await startServer(t);
  plain.server.registerProcessor(7, echo);
  const forced = await startServer(t, { serializeType: 'JSON', forceSerializeType: true });
  forced.server.registerProcessor(7, echo);
  const client = new RemotingClient({ serializeType: 'ROCKETMQ' });
  t.teardown(() => client.close());
  const a = await client.invoke(plain.addr, createRequest(7));
  t.equal(a.extFields!.got, 'ROCKETMQ', 'the client sent ROCKETMQ');
  t.equal(a.serializeType, 'ROCKETMQ');
  const b = await client.invoke(forced.addr, createRequest(7));
  t.equal(b.extFields!.got, 'ROCKETMQ');
  t.equal(b.serializeType, 'JSON', 'a forced server answers in its own type and the client decodes it');
});

t.test('the client stamps language and version', async (t) => {
  const { server, addr } = await startServer(t);
  server.registerProcessor(7, (req) =>
    createResponse(req, 0, { extFields: { language: String(req.language), version: String(req.version) } }),
  );
  const dflt = new RemotingClient();
  const custom = new RemotingClient({ language: 'OTHER', version: 479 });
  t.teardown(() => Promise.all([dflt.close(), custom.close()]));
  t.same((await dflt.invoke(addr, createRequest(7, { language: 'GO', version: 1 }))).extFields, {
    language: 'JAVA',
    version: '409',
  });
  t.same((await custom.invoke(addr, createRequest(7))).extFields, { language: 'OTHER', version: '479' });
});

t.test('server-initiated requests: answered ones and oneway ones', async (t) => {
  const { server, addr } = await startServer(t);
  const client = new RemotingClient();
  t.teardown(() => client.close());
  const seen: RemotingCommand[] = [];
  client.registerProcessor(RequestCode.GET_CONSUMER_RUNNING_INFO, (req) =>
    createResponse(req, ResponseCode.SUCCESS, { body: Buffer.from('{"running":true}') }),
  );
  client.registerProcessor(RequestCode.NOTIFY_CONSUMER_IDS_CHANGED, (req) => {
    seen.push(req);
    // even if the processor returns something, nothing goes back for a oneway request
    return createResponse(req, ResponseCode.SUCCESS);
  });
  server.registerProcessor(RequestCode.HEART_BEAT, (req) => createResponse(req, 0));
  const connected = once(server, 'connection');
  await client.invoke(addr, createRequest(RequestCode.HEART_BEAT));
  const [conn] = (await connected) as [RemotingConnection];
  const info = await conn.invoke(
    createRequest(RequestCode.GET_CONSUMER_RUNNING_INFO, { extFields: { consumerGroup: 'g' } }),
  );
  t.equal(info.code, ResponseCode.SUCCESS);
  t.equal(info.body!.toString(), '{"running":true}');
  t.equal(info.flag & RemotingFlag.RESPONSE, RemotingFlag.RESPONSE);

  await conn.invokeOneway(
    createRequest(RequestCode.NOTIFY_CONSUMER_IDS_CHANGED, { extFields: { consumerGroup: 'g' } }),
  );
  // a following normal call proves the oneway request was processed and left no answer behind
  const unknown = await conn.invoke(createRequest(4242));
  t.equal(unknown.code, ResponseCode.REQUEST_CODE_NOT_SUPPORTED);
  t.equal(unknown.remark, ' request type 4242 not supported');
  t.equal(seen.length, 1);
  t.equal(seen[0]!.flag & RemotingFlag.ONEWAY, RemotingFlag.ONEWAY);
  t.equal(conn.stats().unmatchedResponses, 0, 'no response came back for the oneway request');
  // an unknown oneway code gets no answer either (5.x behaviour)
  await conn.invokeOneway(createRequest(4243));
  await conn.invoke(createRequest(RequestCode.GET_CONSUMER_RUNNING_INFO));
  t.equal(conn.stats().unmatchedResponses, 0);
});

t.test('server close fails in-flight calls on its side and emits disconnect', async (t) => {
  const server = new RemotingServer();
  const { port } = await server.listen();
  const client = new RemotingClient();
  t.teardown(() => client.close());
  server.registerProcessor(1, () => new Promise<null>(() => undefined));
  const call = client.invoke(`127.0.0.1:${port}`, createRequest(1), { timeoutMs: 10_000 }).catch((e: Error) => e);
  await once(server, 'connection');
  t.equal(server.connections.size, 1);
  const disconnected = once(server, 'disconnect');
  await server.close();
  await disconnected;
  t.equal(server.connections.size, 0);
  const err = await call;
  t.equal((err as Error).name, 'RemotingClosedError');
});

t.test('a peer sending garbage loses its own connection only', async (t) => {
  const { server, addr } = await startServer(t);
  server.registerProcessor(7, (req) => createResponse(req, 0));
  const client = new RemotingClient();
  t.teardown(() => client.close());
  t.equal((await client.invoke(addr, createRequest(7))).code, 0);
  const [port] = [Number(addr.split(':')[1])];
  const bad = net.connect({ host: '127.0.0.1', port });
  await once(bad, 'connect');
  const disconnected = once(server, 'disconnect');
  bad.write(Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'));
  const [gone] = (await disconnected) as [RemotingConnection];
  t.not(gone.remoteAddress, undefined);
  await once(bad, 'close');
  t.equal((await client.invoke(addr, createRequest(7))).code, 0, 'the good client is unaffected');
  t.equal(server.connections.size, 1);
});
