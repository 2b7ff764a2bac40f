import t from 'tap';
import createDebug from 'debug';
import { format } from 'node:util';
import { createRequest, createResponse } from '../../protocol/index.js';
import { RemotingClient, RemotingServer } from '../../lib/remoting/index.js';

t.test('DEBUG=rocketwire:frames dumps every frame both ways; rocketwire:remoting logs connection events', async (t) => {
  const lines: string[] = [];
  const saved = createDebug.log;
  createDebug.log = (...args: unknown[]) => void lines.push(format(...args));
  createDebug.enable('rocketwire:frames,rocketwire:remoting');
  t.teardown(() => {
    createDebug.disable();
    createDebug.log = saved;
  });
  const server = new RemotingServer();
  server.registerProcessor(105, (req) => createResponse(req, 0, { remark: 'ok' }));
  const { port } = await server.listen();
  const client = new RemotingClient();
  t.teardown(async () => {
    await client.close();
    await server.close();
  });
  const req = createRequest(105, { extFields: { topic: 'T' } });
  await client.invoke(`127.0.0.1:${port}`, req);
  const frames = lines.filter((l) => l.includes('rocketwire:frames'));
  t.ok(
    frames.some((l) => l.includes(`request code=105 opaque=${req.opaque}`) && l.includes('"topic":"T"')),
    'request dumped',
  );
  t.ok(
    frames.some((l) => l.includes(`response code=0 opaque=${req.opaque}`) && l.includes('remark="ok"')),
    'response dumped',
  );
  t.ok(lines.some((l) => l.includes('rocketwire:remoting') && l.includes(`connected to 127.0.0.1:${port}`)));
});
