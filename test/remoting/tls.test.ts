import t from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ResponseCode, createRequest, createResponse } from '../../protocol/index.js';
import { RemotingClient, RemotingConnectError, RemotingServer } from '../../lib/remoting/index.js';

// A throw-away self-signed certificate for 127.0.0.1, made at test time (test-only, never committed).
function makeCert(): { key: Buffer; cert: Buffer } | string {
  const dir = mkdtempSync(join(tmpdir(), 'rocketwire-tls-'));
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
        '-days',
        '1',
        '-subj',
        '/CN=localhost',
        '-addext',
        'subjectAltName=IP:127.0.0.1,DNS:localhost',
      ],
      { stdio: 'ignore' },
    );
    return { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) };
  } catch (err) {
    return `openssl could not make a test certificate: ${(err as Error).message}`;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const made = makeCert();
const skip = typeof made === 'string' ? made : false;

t.test('calls over TLS with a self-signed certificate', { skip }, async (t) => {
  const { key, cert } = made as { key: Buffer; cert: Buffer };
  const server = new RemotingServer({ tls: { key, cert } });
  server.registerProcessor(105, (req) =>
    createResponse(req, ResponseCode.SUCCESS, { body: Buffer.from(`secure ${req.extFields!.topic}`) }),
  );
  const { port } = await server.listen();
  t.teardown(() => server.close());
  const addr = `127.0.0.1:${port}`;

  const trusting = new RemotingClient({ tls: { ca: cert } });
  t.teardown(() => trusting.close());
  const res = await trusting.invoke(addr, createRequest(105, { extFields: { topic: 'T' } }));
  t.equal(res.body!.toString(), 'secure T');
  const [conn] = [...server.connections];
  t.ok(conn, 'the server has the TLS connection');

  // a client that does not trust the certificate fails to connect, naming the address
  const strict = new RemotingClient({ tls: true });
  t.teardown(() => strict.close());
  const err = await strict.invoke(addr, createRequest(105)).catch((e: unknown) => e);
  t.type(err, RemotingConnectError);
  t.equal((err as RemotingConnectError).addr, addr);
  t.match((err as Error).message, addr);

  // a plain-TCP client talking to the TLS port does not get an answer it can decode: it times out or
  // sees the connection closed, but never a fake success
  const plain = new RemotingClient();
  t.teardown(() => plain.close());
  const perr = await plain.invoke(addr, createRequest(105), { timeoutMs: 200 }).catch((e: unknown) => e);
  t.type(perr, Error);
});
