// A server serves every request a peer sent before it went away, also when answering one of them
// fails because the peer is gone (as Apache's broker does: Netty reads a channel ahead of the
// answers). The Go client (rocketmq-client-go v2) sends its oneway sends and its offset commits at
// shutdown without the oneway flag and closes without waiting for the answers: before, the second
// answer's EPIPE made Node destroy the socket, and the requests still unread in the kernel were lost.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { RemotingServer } from '../../lib/remoting/index.js';
import { createRequest, createResponse, encodeCommand, ResponseCode } from '../../protocol/index.js';
import { until } from '../support/until.js';

const FIRST = 301; // the requests read in the first chunk; the server is busy with the first of them
const LATER = 302; // the requests the peer sends while it is busy, before it closes

// The peer: a separate process, so that it writes and closes while this one is blocked.
const PEER = `
const net = require('node:net');
const fs = require('node:fs');
const [port, first, later, busy, closed] = process.argv.slice(1);
const s = net.connect(Number(port), '127.0.0.1', () => {
  s.setNoDelay(true);
  s.write(Buffer.from(first, 'hex'));
  const wait = setInterval(() => {
    if (!fs.existsSync(busy)) return;
    clearInterval(wait);
    s.write(Buffer.from(later, 'hex'), () => {
      s.destroy();
      fs.writeFileSync(closed, '');
      process.exit(0);
    });
  }, 1);
});
`;

t.test('requests the peer sent before it closed are served though answering them fails (EPIPE)', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rw-peer-gone-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const busy = join(dir, 'busy');
  const closed = join(dir, 'closed');
  const server = new RemotingServer();
  const { port } = await server.listen(0, '127.0.0.1');
  t.teardown(() => server.close());
  const served: number[] = [];
  server.registerProcessor(FIRST, (req) => {
    served.push(FIRST);
    if (served.length === 1) {
      // Busy until the peer has sent the rest and closed: its requests wait unread in the kernel,
      // and the answers of this chunk go to a closed peer (the first write draws its reset, the
      // next one fails).
      writeFileSync(busy, '');
      const deadline = Date.now() + 20_000;
      while (!existsSync(closed) && Date.now() < deadline);
    }
    return createResponse(req, ResponseCode.SUCCESS);
  });
  server.registerProcessor(LATER, (req) => {
    served.push(LATER);
    return createResponse(req, ResponseCode.SUCCESS);
  });
  const frames = (code: number, n: number): string =>
    Buffer.concat(Array.from({ length: n }, () => encodeCommand(createRequest(code)))).toString('hex');
  const peer = spawn(process.execPath, ['-e', PEER, String(port), frames(FIRST, 3), frames(LATER, 5), busy, closed], {
    stdio: 'ignore',
  });
  const exited = new Promise((resolve) => peer.once('exit', resolve));
  t.teardown(() => peer.kill('SIGKILL'));
  await exited;
  await until(
    () => served.filter((c) => c === LATER).length === 5 || server.connections.size === 0,
    'the later requests served or the connection closed',
  );
  await until(() => server.connections.size === 0, 'the connection closed after the peer went');
  t.same(
    served,
    [FIRST, FIRST, FIRST, LATER, LATER, LATER, LATER, LATER],
    'every request the peer sent was served, in order',
  );
});
