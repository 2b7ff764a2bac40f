// The embedded broker pushes a reply (SEND_REPLY_MESSAGE_V2) only to the client whose
// request with that CORRELATION_ID it stored, within the request's TTL, once. Raw clients: a
// "victim" requester that counts the PUSH_REPLY_MESSAGE_TO_CLIENT it gets, and an attacker that
// heartbeats as a producer too. rocketwire's own request/reply across two brokers still works.
import t, { type Test } from 'tap';
import { startBroker, type EmbeddedBroker } from '../../lib/broker/index.js';
import { ManualClock } from '../../lib/clock.js';
import { createReplyMessage, Producer } from '../../lib/producer/index.js';
import { PushConsumer } from '../../lib/consumer/index.js';
import type { RemotingClient } from '../../lib/remoting/index.js';
import { RequestCode, ResponseCode, createResponse, type RemotingCommand } from '../../protocol/index.js';
import { client, heartbeatRequest, sendRequest } from './helpers.js';
import { until } from '../support/until.js';
import { createTopic, uniqueName } from '../consumer/helpers.js';

const TOPIC = 'ReqTopic';
const REPLY_TOPIC = 'DefaultCluster_REPLY_TOPIC';

async function setup(t: Test, opts: Parameters<typeof startBroker>[0] = {}) {
  const clock = new ManualClock();
  const b = await startBroker({ queues: 1, clock, ...opts });
  const victim = client();
  const attacker = client();
  const pushes: RemotingCommand[] = [];
  victim.registerProcessor(RequestCode.PUSH_REPLY_MESSAGE_TO_CLIENT, (req) => {
    pushes.push(req);
    return createResponse(req, ResponseCode.SUCCESS);
  });
  t.teardown(async () => {
    await victim.close();
    await attacker.close();
    await b.close();
  });
  t.equal(
    (await victim.invoke(b.broker, heartbeatRequest('victim@1', '', [], 'victim_pg'))).code,
    ResponseCode.SUCCESS,
  );
  t.equal(
    (await attacker.invoke(b.broker, heartbeatRequest('attacker@2', '', [], 'attacker_pg'))).code,
    ResponseCode.SUCCESS,
  );
  return { clock, b, victim, attacker, pushes };
}

function request(
  c: RemotingClient,
  b: EmbeddedBroker,
  correlationId: string,
  clientId: string,
  ttl = '3000',
): Promise<RemotingCommand> {
  return c.invoke(
    b.broker,
    sendRequest(TOPIC, 'question', {
      properties: { CORRELATION_ID: correlationId, REPLY_TO_CLIENT: clientId, TTL: ttl },
    }),
  );
}

function reply(
  c: RemotingClient,
  b: EmbeddedBroker,
  correlationId: string | undefined,
  clientId: string,
): Promise<RemotingCommand> {
  const properties: Record<string, string> = {
    REPLY_TO_CLIENT: clientId,
    MSG_TYPE: 'reply',
    TTL: '3000',
    CLUSTER: 'DefaultCluster',
  };
  if (correlationId !== undefined) properties.CORRELATION_ID = correlationId;
  return c.invoke(
    b.broker,
    sendRequest(REPLY_TOPIC, 'answer', { code: RequestCode.SEND_REPLY_MESSAGE_V2, properties }),
  );
}

t.test('L2: a forged reply is refused; the genuine one is pushed once, to its requester only', async (t) => {
  const { clock, b, victim, attacker, pushes } = await setup(t);
  const store = b.instances[0]!.messageStore;
  t.equal(
    (await request(victim, b, 'c-good', 'victim@1')).code,
    ResponseCode.SUCCESS,
    "the victim's request is stored",
  );

  const forged = await reply(attacker, b, 'c-forged', 'victim@1');
  t.equal(forged.code, ResponseCode.NO_PERMISSION, 'a reply to a correlation id nobody asked for: refused');
  t.equal(
    forged.remark,
    'reply refused: no request with CORRELATION_ID c-forged is waiting (never stored, answered already, or past its TTL)',
  );
  const none = await reply(attacker, b, undefined, 'victim@1');
  t.equal(none.code, ResponseCode.NO_PERMISSION);
  t.equal(none.remark, 'reply message properties[CORRELATION_ID] is null: a reply answers a request');
  const other = await reply(attacker, b, 'c-good', 'attacker@2');
  t.equal(other.code, ResponseCode.NO_PERMISSION, 'the right correlation id for another client: refused');
  t.equal(other.remark, 'reply refused: the request with CORRELATION_ID c-good was not sent by client <attacker@2>');
  t.equal(pushes.length, 0, 'nothing pushed to the victim');
  t.equal(store.getMaxOffset(REPLY_TOPIC, 0), 0, 'nothing stored in the reply topic');

  t.equal(
    (await reply(attacker, b, 'c-good', 'victim@1')).code,
    ResponseCode.SUCCESS,
    'the reply to the waiting request is pushed',
  );
  t.equal(pushes.length, 1);
  t.equal(
    (await reply(attacker, b, 'c-good', 'victim@1')).code,
    ResponseCode.NO_PERMISSION,
    'a second reply to it is refused',
  );
  t.equal(pushes.length, 1, 'one push in all');
  t.equal(store.getMaxOffset(REPLY_TOPIC, 0), 1, 'one reply stored');

  t.equal((await request(victim, b, 'c-slow', 'victim@1', '1000')).code, ResponseCode.SUCCESS);
  clock.advance(1001);
  t.equal(
    (await reply(attacker, b, 'c-slow', 'victim@1')).code,
    ResponseCode.NO_PERMISSION,
    "a reply past the request's TTL is refused",
  );
  t.equal(pushes.length, 1);
});

t.test('L2: the waiting requests are bounded by maxPendingReplyRequests; the check can be turned off', async (t) => {
  const { b, victim, attacker, pushes } = await setup(t, { maxPendingReplyRequests: 2 });
  const table = b.instances[0]!.replyRequests!;
  for (const id of ['r1', 'r2', 'r3']) await request(victim, b, id, 'victim@1');
  t.equal(table.size, 2, 'at most 2 remembered');
  t.equal(table.evicted, 1, 'the oldest forgotten');
  t.equal((await reply(attacker, b, 'r1', 'victim@1')).code, ResponseCode.NO_PERMISSION, 'its reply is refused');
  t.equal((await reply(attacker, b, 'r3', 'victim@1')).code, ResponseCode.SUCCESS);
  t.equal(pushes.length, 1);
  await t.rejects(startBroker({ maxPendingReplyRequests: 0 }), {
    name: 'BrokerOptionError',
    option: 'maxPendingReplyRequests',
  });
  await t.rejects(startBroker({ checkReplyRequests: 'yes' as never }), {
    name: 'BrokerOptionError',
    option: 'checkReplyRequests',
  });

  const open = await setup(t, { checkReplyRequests: false });
  t.equal(open.b.instances[0]!.replyRequests, null);
  t.equal(
    (await reply(open.attacker, open.b, 'anything', 'victim@1')).code,
    ResponseCode.SUCCESS,
    'checkReplyRequests: false pushes any reply, as Apache does',
  );
  t.equal(open.pushes.length, 1);
});

t.test('L2: rocketwire request/reply through a cluster of two brokers (one table for both)', async (t) => {
  const b = await startBroker({ brokers: 2, queues: 2 });
  t.teardown(() => b.close());
  const topic = uniqueName('RQ2');
  await createTopic(b.brokers, topic, 2);
  const replier = new Producer({ group: uniqueName('rep_pg'), namesrvAddr: b.namesrv });
  await replier.start();
  t.teardown(() => replier.shutdown());
  const consumer = new PushConsumer({
    consumerGroup: uniqueName('rep_cg'),
    namesrvAddr: b.namesrv,
    instanceName: uniqueName('i'),
    consumeFromWhere: 'first',
  });
  consumer.subscribe(topic, '*');
  await consumer.start(async (msgs) => {
    for (const m of msgs) await replier.send(createReplyMessage(m, `re:${m.body.toString()}`));
    return 'CONSUME_SUCCESS';
  });
  t.teardown(() => consumer.shutdown());
  const requester = new Producer({ group: uniqueName('req_pg'), namesrvAddr: b.namesrv });
  await requester.start();
  t.teardown(() => requester.shutdown());
  const replies: string[] = [];
  for (let i = 0; i < 8; i++) replies.push((await requester.request({ topic, body: `q${i}` }, 10_000)).body.toString());
  t.same(
    replies,
    Array.from({ length: 8 }, (_, i) => `re:q${i}`),
    'every request answered',
  );
  const brokersWithReplies = b.instances.filter(
    (x) => x.messageStore.getMaxOffset('DefaultCluster_REPLY_TOPIC', 0) > 0,
  ).length;
  t.comment(`replies stored on ${brokersWithReplies} of 2 brokers`);
  t.equal(b.instances[0]!.replyRequests, b.instances[1]!.replyRequests, 'the brokers share one table');
  // the requester has its reply before the broker reads the push's answer: wait for that
  await until(() => b.instances[0]!.replyRequests!.size === 0, 'the last push answered', 3000);
  t.equal(b.instances[0]!.replyRequests!.size, 0, 'every answered request forgotten');
});
