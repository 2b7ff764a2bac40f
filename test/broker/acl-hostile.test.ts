// The hostile-client machinery (test/broker/hostile.ts) against a broker with access control:
// seeded mutations of every request code, unsigned, never reach a processor (each is
// refused with Apache's AclException remark or, oneway, not answered, and nothing is written); the
// same mutations signed by an ordinary account never run an admin code. The broker then serves a
// signed producer as before.
import t from 'tap';
import { ADMIN_CODES } from '../../lib/broker/acl/index.js';
import { Producer } from '../../lib/producer/index.js';
import { signRequest } from '../../lib/remoting/index.js';
import { Operations, ResponseCode } from '../../protocol/internal.js';
import { baselineRequest, mutateRequest, nameKeysOf, seededRandom, startHostileTarget } from './hostile.js';

t.setTimeout(180_000);

const SEED = process.env.HOSTILE_SEED ? Number(process.env.HOSTILE_SEED) : 29;
const MUTATIONS_PER_CODE = 20;
const APP = { accessKey: 'hostileapp', secretKey: 'hostile-secret-1' };

t.test('seeded mutations of every request code cannot get past the access check', async (t) => {
  const refusals: string[] = [];
  const target = await startHostileTarget({
    canary: false,
    acl: { accounts: [{ ...APP, defaultTopicPerm: 'PUB|SUB', defaultGroupPerm: 'SUB' }] },
    warn: (l) => refusals.push(l),
  });
  t.teardown(() => target.close());
  const b = target.broker.instances[0]!;
  const topicsBefore = b.topics
    .all()
    .map((c) => c.topicName)
    .sort();
  const logEnd = b.messageStore.commitLogEnd;
  const rng = seededRandom(SEED);
  let unsigned = 0;
  let signedAdmin = 0;
  const unexpected: string[] = [];
  for (const op of Object.values(Operations)) {
    const base = baselineRequest(op);
    for (const to of ['broker', 'namesrv'] as const) {
      // the name server checks only its admin codes, as it serves routes to anyone
      if (to === 'namesrv' && !ADMIN_CODES.has(op.code)) continue;
      const batch = Array.from({ length: MUTATIONS_PER_CODE }, () => mutateRequest(rng, base, nameKeysOf(op)));
      const answers = await target.sendBatch(batch, { to, timeoutMs: 2000 });
      answers.forEach((a, i) => {
        if (a === null) return; // oneway, or a frame the decoder dropped the connection for
        unsigned++;
        if (
          a.code !== ResponseCode.SYSTEM_ERROR ||
          !/^org\.apache\.rocketmq\.acl\.common\.AclException: /.test(a.remark ?? '')
        ) {
          unexpected.push(`${to} ${op.name} #${i}: ${a.code} ${a.remark}`);
        }
      });
    }
    if (ADMIN_CODES.has(op.code)) {
      const batch = Array.from({ length: MUTATIONS_PER_CODE }, () => {
        const m = mutateRequest(rng, base, nameKeysOf(op));
        signRequest(m, APP);
        return m;
      });
      const answers = await target.sendBatch(batch, { timeoutMs: 2000 });
      answers.forEach((a, i) => {
        if (a === null) return;
        signedAdmin++;
        if (
          a.code !== ResponseCode.SYSTEM_ERROR ||
          !/Need admin permission for request code=\d+, but accessKey=hostileapp is not$/.test(a.remark ?? '')
        ) {
          unexpected.push(`signed ${op.name} #${i}: ${a.code} ${a.remark}`);
        }
      });
    }
  }
  t.same(unexpected, [], 'every answer is an ACL refusal');
  t.ok(unsigned > 1000, `${unsigned} unsigned mutated requests answered, all refused`);
  t.ok(signedAdmin > 50, `${signedAdmin} signed admin requests of an ordinary account answered, all refused`);
  t.same(
    b.topics
      .all()
      .map((c) => c.topicName)
      .sort(),
    topicsBefore,
    'no topic created or deleted',
  );
  t.equal(b.messageStore.commitLogEnd, logEnd, 'nothing written to the commit log');
  t.ok(
    refusals.length > 0 && refusals.length < 2000,
    `refusals logged once per peer, key and reason: ${refusals.length} lines`,
  );

  const producer = new Producer({
    namesrvAddr: target.namesrvAddr,
    group: 'HostileAclProducer',
    acl: APP,
    retryTimesWhenSendFailed: 0,
  });
  t.teardown(() => producer.shutdown());
  await producer.start();
  await producer.send({ topic: 'HostileAclAfter', body: 'still serving' });
  t.ok(b.messageStore.commitLogEnd > logEnd, 'a signed producer is served after the storm');
});
