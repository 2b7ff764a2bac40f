import t from 'tap';
import { createHmac } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { RequestCode, ResponseCode, createRequest, createResponse } from '../../protocol/index.js';
import {
  RemotingClient,
  RemotingServer,
  aclSignedContent,
  signRequest,
  verifyRequestSignature,
  type AclCredentials,
} from '../../lib/remoting/index.js';
import type { AclVector } from '../protocol/vectors-fixtures.js';

// Compiled to dist/test/remoting/, the fixtures stay in the source tree.
const fixture = fileURLToPath(new URL('../../../test/fixtures/acl/signatures.json', import.meta.url));

const missing = existsSync(fixture) ? false : `golden signatures not generated yet (${fixture} is missing)`;
t.test('signatures match the ones Java AclClientRPCHook produced', { skip: missing }, async (t) => {
  const vectors = JSON.parse(readFileSync(fixture, 'utf8')) as AclVector[];
  t.ok(vectors.length > 0);
  for (const v of vectors) {
    const req = createRequest(RequestCode.QUERY_CONSUMER_OFFSET, {
      extFields: { ...v.extFields },
      body: v.bodyHex ? Buffer.from(v.bodyHex, 'hex') : null,
    });
    const creds: AclCredentials = { accessKey: v.accessKey, secretKey: v.secretKey };
    if (v.securityToken !== undefined) creds.securityToken = v.securityToken;
    const sig = signRequest(req, creds);
    t.equal(sig, v.signature, `${v.name}: signature`);
    t.same(req.extFields, v.signedExtFields, `${v.name}: extFields after signing`);
    const check = verifyRequestSignature(req, (ak) => (ak === v.accessKey ? v.secretKey : undefined));
    t.ok(check.ok, `${v.name}: the verifier accepts it`);
  }
});

t.test('signed content is the values sorted by key (Java TreeMap order), then the body', async (t) => {
  const ext = { topic: 'T', consumerGroup: 'g', AccessKey: 'ak', Signature: 'ignored', Zed: 'z' };
  // "AccessKey" < "Zed" < "consumerGroup" < "topic": upper case sorts before lower case
  t.equal(aclSignedContent(ext, Buffer.from('BODY')).toString(), 'akzgTBODY');
  const req = createRequest(14, { extFields: { topic: 'T', consumerGroup: 'g' }, body: Buffer.from('BODY') });
  const sig = signRequest(req, { accessKey: 'ak', secretKey: 'sk' });
  t.equal(sig, createHmac('sha1', 'sk').update('akgTBODY').digest('base64'));
  t.equal(req.extFields!.Signature, sig);
  t.equal(req.extFields!.AccessKey, 'ak');
  t.notOk('SecurityToken' in req.extFields!);
});

t.test("signing does not modify the caller's extFields object", async (t) => {
  const shared = { topic: 'T' };
  const req = createRequest(14, { extFields: shared });
  signRequest(req, { accessKey: 'ak', secretKey: 'sk', securityToken: 'tok' });
  t.same(shared, { topic: 'T' });
  t.equal(req.extFields!.SecurityToken, 'tok');
});

t.test('a server checks the signatures a client puts on every request', async (t) => {
  const server = new RemotingServer();
  const { port } = await server.listen();
  t.teardown(() => server.close());
  const addr = `127.0.0.1:${port}`;
  const secrets: Record<string, string> = { RocketMQ: '12345678' };
  server.registerProcessor(RequestCode.QUERY_CONSUMER_OFFSET, (req) => {
    const r = verifyRequestSignature(req, (ak) => secrets[ak]);
    if (!r.ok) return createResponse(req, ResponseCode.NO_PERMISSION, { remark: r.reason });
    return createResponse(req, ResponseCode.SUCCESS, { extFields: { offset: '42' } });
  });
  const good = new RemotingClient({ acl: { accessKey: 'RocketMQ', secretKey: '12345678' } });
  const wrongSecret = new RemotingClient({ acl: { accessKey: 'RocketMQ', secretKey: 'nope' } });
  const unknownKey = new RemotingClient({ acl: { accessKey: 'who', secretKey: 'x' } });
  const none = new RemotingClient();
  t.teardown(() => Promise.all([good, wrongSecret, unknownKey, none].map((c) => c.close())));
  const req = () =>
    createRequest(RequestCode.QUERY_CONSUMER_OFFSET, {
      extFields: { consumerGroup: 'cg', topic: 'T', queueId: '0' },
      body: Buffer.from('payload'),
    });
  const ok = await good.invoke(addr, req());
  t.equal(ok.code, ResponseCode.SUCCESS);
  t.equal(ok.extFields!.offset, '42');
  // the ROCKETMQ header carries the same fields, so signing works there too
  const bin = new RemotingClient({ serializeType: 'ROCKETMQ', acl: { accessKey: 'RocketMQ', secretKey: '12345678' } });
  t.teardown(() => bin.close());
  t.equal((await bin.invoke(addr, req())).code, ResponseCode.SUCCESS);
  const bad = await wrongSecret.invoke(addr, req());
  t.equal(bad.code, ResponseCode.NO_PERMISSION);
  t.match(bad.remark, 'signature mismatch');
  t.match((await unknownKey.invoke(addr, req())).remark, 'unknown AccessKey who');
  t.match((await none.invoke(addr, req())).remark, 'no AccessKey');

  // fields an rpcHook adds are signed with the rest
  const hooked = new RemotingClient({
    acl: { accessKey: 'RocketMQ', secretKey: '12345678' },
    rpcHook: (r) => void (r.extFields = { ...r.extFields, ns: 'tenant-a' }),
  });
  t.teardown(() => hooked.close());
  t.equal((await hooked.invoke(addr, req())).code, ResponseCode.SUCCESS);

  // a body changed after signing is detected
  const tampered = req();
  signRequest(tampered, { accessKey: 'RocketMQ', secretKey: '12345678' });
  tampered.body = Buffer.from('PAYLOAD');
  t.notOk(verifyRequestSignature(tampered, (ak) => secrets[ak]).ok);
});
