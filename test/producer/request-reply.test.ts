import t, { type Test } from 'tap';
import { ManualClock } from '../../lib/clock.js';
import { PushConsumer, type MessageExt } from '../../lib/consumer/index.js';
import {
  createReplyMessage,
  Producer,
  ProducerOptionError,
  RequestTimeoutError,
  SendFailedError,
} from '../../lib/producer/index.js';
import { BrokerError } from '../../lib/remoting/index.js';
import { createTopic, uniqueName, withBroker } from '../consumer/helpers.js';

/** A promise and its resolver, to wait on an event rather than poll. */
function deferred<T>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

async function startProducer(
  t: Test,
  namesrv: string,
  extra: Partial<ConstructorParameters<typeof Producer>[0]> = {},
): Promise<Producer> {
  const p = new Producer({ namesrvAddr: namesrv, group: uniqueName('pg'), instanceName: uniqueName('i'), ...extra });
  await p.start();
  t.teardown(() => p.shutdown());
  return p;
}

/**
 * A replier: a push consumer of `topic` whose handler answers each request with `answer(msg)`
 * through its own producer (createReplyMessage + send), as Java's examples do.
 */
async function startReplier(
  t: Test,
  namesrv: string,
  topic: string,
  answer: (m: MessageExt) => string | Buffer | null,
  seen: MessageExt[] = [],
): Promise<{ seen: MessageExt[]; producer: Producer }> {
  const producer = await startProducer(t, namesrv);
  const consumer = new PushConsumer({
    consumerGroup: uniqueName('cg'),
    namesrvAddr: namesrv,
    instanceName: uniqueName('i'),
    consumeFromWhere: 'first',
  });
  consumer.subscribe(topic, '*');
  await consumer.start(async (msgs) => {
    for (const m of msgs) {
      seen.push(m);
      const body = answer(m);
      if (body !== null) await producer.send(createReplyMessage(m, body));
    }
    return 'CONSUME_SUCCESS';
  });
  t.teardown(() => consumer.shutdown());
  return { seen, producer };
}

t.test('request() returns the reply a consumer sent with createReplyMessage + send', async (t) => {
  const broker = await withBroker();
  t.teardown(() => broker.close());
  const topic = uniqueName('RQ');
  await createTopic(broker.brokers, topic, 2);
  const { seen } = await startReplier(t, broker.namesrv, topic, (m) => `re:${m.body.toString()}`);
  const requester = await startProducer(t, broker.namesrv);
  const clientId = requester['clientInstance'].clientId;

  const reply = await requester.request({ topic, body: 'ping', tags: 'T', keys: 'k1' }, 10_000);
  t.equal(reply.body.toString(), 're:ping', 'the reply body');
  t.equal(reply.topic, 'DefaultCluster_REPLY_TOPIC', 'the reply topic of the cluster');
  const req = seen[0]!;
  t.match(
    req.properties,
    {
      CORRELATION_ID: /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
      REPLY_TO_CLIENT: clientId,
      TTL: '10000',
      CLUSTER: 'DefaultCluster',
      TAGS: 'T',
      KEYS: 'k1',
    },
    'the request carries a UUID, the client id and the TTL; the broker stamped CLUSTER',
  );
  t.notOk('MSG_TYPE' in req.properties, 'a request has no MSG_TYPE (Java sets none)');
  t.match(
    reply.properties,
    {
      MSG_TYPE: 'reply',
      CORRELATION_ID: req.properties.CORRELATION_ID,
      REPLY_TO_CLIENT: clientId,
      TTL: '10000',
      PUSH_REPLY_TIME: /^\d+$/,
      ARRIVE_TIME: /^\d+$/,
    },
    "the reply: copied properties, the broker's push time, the arrival time",
  );

  // several at once: each request gets its own reply
  const replies = await Promise.all(
    Array.from({ length: 20 }, (_, i) => requester.request({ topic, body: `n${i}` }, 10_000)),
  );
  t.same(
    replies.map((r) => r.body.toString()),
    Array.from({ length: 20 }, (_, i) => `re:n${i}`),
    '20 concurrent requests, each with its own reply',
  );
  t.equal(requester['replies']['table']!.size, 0, 'nothing left pending');

  // to a queue of the caller's choice, as Java's request(msg, selector, arg, timeout)
  const before = seen.length;
  await requester.request({ topic, body: 'q1' }, 10_000, {
    selector: (queues) => queues.find((q) => q.queueId === 1)!,
  });
  t.equal(seen[before]!.queueId, 1, 'the selector chose the queue of the request');
});

t.test(
  'a requester that fetched the route before its first heartbeat still gets its reply (the broker knows its connection)',
  async (t) => {
    const broker = await withBroker();
    t.teardown(() => broker.close());
    const topic = uniqueName('RQ');
    await createTopic(broker.brokers, topic, 1);
    await startReplier(t, broker.namesrv, topic, (m) => `re:${m.body.toString()}`);
    const requester = await startProducer(t, broker.namesrv);
    // as the CLI does to report a bad topic in one line: the route is cached, no heartbeat sent yet
    await requester.fetchPublishMessageQueues(topic);
    const reply = await requester.request({ topic, body: 'first' }, 10_000);
    t.equal(reply.body.toString(), 're:first');
  },
);

t.test('a large reply is sent compressed and arrives inflated; sendReply() is the shortcut', async (t) => {
  const broker = await withBroker();
  t.teardown(() => broker.close());
  const topic = uniqueName('RQ');
  await createTopic(broker.brokers, topic, 2);
  const big = Buffer.alloc(64 * 1024, 'abcdefgh');
  const replierProducer = await startProducer(t, broker.namesrv);
  const consumer = new PushConsumer({
    consumerGroup: uniqueName('cg'),
    namesrvAddr: broker.namesrv,
    instanceName: uniqueName('i'),
    consumeFromWhere: 'first',
  });
  consumer.subscribe(topic, '*');
  const sent = deferred<Awaited<ReturnType<Producer['sendReply']>>>();
  await consumer.start(async (msgs) => {
    for (const m of msgs) sent.resolve(await replierProducer.sendReply(m, big));
    return 'CONSUME_SUCCESS';
  });
  t.teardown(() => consumer.shutdown());
  const requester = await startProducer(t, broker.namesrv);
  const reply = await requester.request({ topic, body: 'x' }, 10_000);
  t.ok(reply.body.equals(big), 'the 64 KiB body, inflated');
  t.equal(reply.sysFlag & 1, 0, 'COMPRESSED cleared once inflated');
  const r = await sent.promise;
  t.equal(r.status, 'SEND_OK');
  t.equal(r.messageQueue.topic, 'DefaultCluster_REPLY_TOPIC');
  t.not(r.offsetMsgId, '0', 'storeReplyMessageEnable (default): the answer carries the stored offset msgId');
});

t.test('no reply within the timeout: RequestTimeoutError naming the correlation id, on the clock', async (t) => {
  const broker = await withBroker();
  t.teardown(() => broker.close());
  const topic = uniqueName('RQ');
  await createTopic(broker.brokers, topic, 2);
  const clock = new ManualClock(Date.now());
  const got = deferred<MessageExt>();
  // a consumer that takes the request and never answers
  const consumer = new PushConsumer({
    consumerGroup: uniqueName('cg'),
    namesrvAddr: broker.namesrv,
    instanceName: uniqueName('i'),
    consumeFromWhere: 'first',
  });
  consumer.subscribe(topic, '*');
  await consumer.start((msgs) => {
    got.resolve(msgs[0]!);
    return 'CONSUME_SUCCESS';
  });
  t.teardown(() => consumer.shutdown());
  const requester = await startProducer(t, broker.namesrv, { clock });
  const pending = requester.request({ topic, body: 'nobody answers' }, 5000);
  const req = await got.promise;
  clock.advance(4999);
  t.equal(requester['replies']['table']!.size, 1, 'still waiting 1 ms before the timeout');
  clock.advance(1);
  const err = await pending.then(
    () => null,
    (e: unknown) => e,
  );
  t.type(err, RequestTimeoutError);
  t.match(err, {
    name: 'RequestTimeoutError',
    topic,
    correlationId: req.properties.CORRELATION_ID,
    timeoutMs: 5000,
    sendOk: true,
  });
  t.equal(
    (err as Error).message,
    `no reply to the request sent to topic ${topic} within 5000 ms (the broker stored the request; correlation id ${req.properties.CORRELATION_ID})`,
  );
  t.match(err, { errorCode: 'ERR_REQUEST_TIMEOUT', retriable: true });

  // the replier answers late: the broker still pushes it, the requester takes it and drops it
  const late = await startProducer(t, broker.namesrv);
  const r = await late.send(createReplyMessage(req, 'too late'));
  t.equal(r.status, 'SEND_OK', 'a late reply is accepted by the requester (Java answers SUCCESS and logs it)');
  t.equal(requester['replies']['table']!.size, 0);
});

t.test("a reply to a client the broker does not know fails with the broker's remark", async (t) => {
  const broker = await withBroker();
  t.teardown(() => broker.close());
  const replier = await startProducer(t, broker.namesrv, { retryTimesWhenSendFailed: 0 });
  const request = {
    properties: { CLUSTER: 'DefaultCluster', CORRELATION_ID: 'c-1', REPLY_TO_CLIENT: '10.0.0.9@gone', TTL: '3000' },
  };
  const err = await replier.sendReply(request, 'x').then(
    () => null,
    (e: unknown) => e,
  );
  t.type(err, SendFailedError);
  const cause = (err as SendFailedError).cause as BrokerError;
  t.type(cause, BrokerError);
  t.equal(cause.code, 1, 'SYSTEM_ERROR');
  t.equal(cause.remark, 'push reply message fail, channel of <10.0.0.9@gone> not found.');
  t.equal(cause.requestCode, 325, 'sent as SEND_REPLY_MESSAGE_V2');
});

t.test('a replier with sendMessageV1 sends SEND_REPLY_MESSAGE (324)', async (t) => {
  const broker = await withBroker();
  t.teardown(() => broker.close());
  const replier = await startProducer(t, broker.namesrv, { retryTimesWhenSendFailed: 0, sendMessageV1: true });
  const request = { properties: { CLUSTER: 'DefaultCluster', CORRELATION_ID: 'c-1', REPLY_TO_CLIENT: 'nobody' } };
  const err = (await replier.sendReply(request, 'x').then(
    () => null,
    (e: unknown) => e,
  )) as SendFailedError;
  t.equal((err.cause as BrokerError).requestCode, 324);
});

t.test('bad input is refused naming what is wrong', async (t) => {
  t.throws(() => createReplyMessage({ properties: {} }, 'x'), {
    name: 'MessageValidationError',
    field: 'CLUSTER',
    message:
      'cannot reply to this message: it has no CLUSTER property (the broker did not store it, or it is not a request)',
  });
  t.throws(() => createReplyMessage({ properties: { CLUSTER: 'C' } }, 'x'), {
    name: 'MessageValidationError',
    field: 'REPLY_TO_CLIENT',
  });
  t.throws(() => createReplyMessage({ properties: { CLUSTER: 'C', REPLY_TO_CLIENT: 'x' } }, 'x'), {
    name: 'MessageValidationError',
    field: 'CORRELATION_ID',
  });
  t.throws(() => createReplyMessage(null as never, 'x'), { name: 'MessageValidationError', field: 'request' });

  const broker = await withBroker();
  t.teardown(() => broker.close());
  const p = await startProducer(t, broker.namesrv);
  const badCluster = createReplyMessage(
    { properties: { CLUSTER: 'bad/name', REPLY_TO_CLIENT: 'x', CORRELATION_ID: 'y' } },
    'x',
  );
  await t.rejects(
    p.send(badCluster),
    { name: 'MessageValidationError', field: 'topic' },
    'a cluster name no topic can carry',
  );
  for (const bad of [0, -1, 1.5, Number.NaN, '100', 2 ** 31]) {
    await t.rejects(
      p.request({ topic: 'T', body: 'x' }, bad as number),
      { name: 'ProducerOptionError', option: 'timeoutMs' },
      `timeoutMs ${String(bad)}`,
    );
  }
  await t.rejects(
    p.request({ topic: 'T', body: 'x', properties: { CORRELATION_ID: 'mine' } }, 1000),
    { name: 'MessageValidationError', field: 'properties' },
    'CORRELATION_ID stays reserved',
  );
  await t.rejects(p.request({ topic: 'bad topic', body: 'x' }, 1000), {
    name: 'MessageValidationError',
    field: 'topic',
  });
  t.type(new ProducerOptionError('timeoutMs', 'm'), ProducerOptionError);
});

t.test('shutdown fails the requests still waiting', async (t) => {
  const broker = await withBroker();
  t.teardown(() => broker.close());
  const topic = uniqueName('RQ');
  await createTopic(broker.brokers, topic, 2);
  const got = deferred<MessageExt>();
  await startReplier(t, broker.namesrv, topic, (m) => {
    got.resolve(m);
    return null;
  });
  const p = new Producer({ namesrvAddr: broker.namesrv, group: uniqueName('pg'), instanceName: uniqueName('i') });
  await p.start();
  const pending = p.request({ topic, body: 'x' }, 60_000).then(
    () => null,
    (e: unknown) => e,
  );
  await got.promise; // the request reached a consumer that does not answer
  await p.shutdown();
  t.match(await pending, {
    name: 'ProducerStateError',
    state: 'SHUTDOWN',
    message: /shut down while request .* to topic .* waited/,
  });
});

t.test('RequestFutureTable: one timer for the earliest deadline; a reply ends exactly its own request', async (t) => {
  const { RequestFutureTable } = await import('../../lib/producer/request-reply.js');
  const clock = new ManualClock(1000);
  const table = new RequestFutureTable(clock);
  const outcome = (p: Promise<MessageExt>): Promise<string> =>
    p.then(
      (m) => `reply ${m.body.toString()}`,
      (e: RequestTimeoutError) => `timeout ${e.correlationId}`,
    );
  const late = outcome(table.add('late', 'T', 3000));
  const early = outcome(table.add('early', 'T', 1000));
  const answered = outcome(table.add('answered', 'T', 2000));
  t.equal(clock.pending, 1, 'one timer for three requests');
  t.equal(
    table.complete({ properties: { CORRELATION_ID: 'answered' }, body: Buffer.from('a') } as unknown as MessageExt),
    true,
  );
  t.equal(
    table.complete({ properties: { CORRELATION_ID: 'answered' }, body: Buffer.from('again') } as unknown as MessageExt),
    false,
    'a second reply to the same request finds nothing',
  );
  t.equal(
    table.complete({ properties: {}, body: Buffer.from('x') } as unknown as MessageExt),
    false,
    'a reply without CORRELATION_ID',
  );
  clock.advance(1000);
  t.equal(await early, 'timeout early');
  t.equal(table.size, 1);
  clock.advance(1999);
  t.equal(table.size, 1, 'the later one waits to its own deadline');
  clock.advance(1);
  t.equal(await late, 'timeout late');
  t.equal(await answered, 'reply a');
  t.equal(clock.pending, 0, 'no timer left when nothing waits');
});

t.test('storeReplyMessageEnable: false pushes the reply without storing it', async (t) => {
  const broker = await withBroker({ storeReplyMessageEnable: false });
  t.teardown(() => broker.close());
  const topic = uniqueName('RQ');
  await createTopic(broker.brokers, topic, 1);
  const sent = deferred<Awaited<ReturnType<Producer['sendReply']>>>();
  const replierProducer = await startProducer(t, broker.namesrv);
  const consumer = new PushConsumer({
    consumerGroup: uniqueName('cg'),
    namesrvAddr: broker.namesrv,
    instanceName: uniqueName('i'),
    consumeFromWhere: 'first',
  });
  consumer.subscribe(topic, '*');
  await consumer.start(async (msgs) => {
    for (const m of msgs) sent.resolve(await replierProducer.sendReply(m, 'pong'));
    return 'CONSUME_SUCCESS';
  });
  t.teardown(() => consumer.shutdown());
  const requester = await startProducer(t, broker.namesrv);
  const reply = await requester.request({ topic, body: 'ping' }, 10_000);
  t.equal(reply.body.toString(), 'pong');
  const r = await sent.promise;
  t.match(
    r,
    { status: 'SEND_OK', offsetMsgId: '0', queueOffset: 0 },
    'the answer of a push alone: msgId "0", offset 0',
  );
  t.equal(
    broker.instances[0]!.messageStore.getMaxOffset('DefaultCluster_REPLY_TOPIC', 0),
    0,
    'nothing stored in the reply topic',
  );
});

t.test('the client answers a PUSH_REPLY_MESSAGE_TO_CLIENT it cannot read as Java does, and carries on', async (t) => {
  const { MQClientInstance } = await import('../../lib/client/index.js');
  const { createRequest, Operations, ResponseCode } = await import('../../protocol/internal.js');
  const instance = MQClientInstance.acquire({ namesrvAddr: '127.0.0.1:1', instanceName: uniqueName('i') });
  t.teardown(() => instance.release());
  const taken: MessageExt[] = [];
  instance.onReplyMessage((m) => {
    taken.push(m);
    return true;
  });
  const processor = (
    instance.remoting as unknown as {
      processors: Map<number, (r: unknown, c: unknown) => Promise<{ code: number; remark: string | null }>>;
    }
  ).processors.get(326)!;
  const op = Operations.PUSH_REPLY_MESSAGE_TO_CLIENT;
  const fields = {
    producerGroup: 'pg',
    topic: 'DefaultCluster_REPLY_TOPIC',
    defaultTopic: 'TBW102',
    defaultTopicQueueNums: 4,
    queueId: 0,
    sysFlag: 0,
    bornTimestamp: 1,
    flag: 0,
    properties: 'CORRELATION_ID\u0001c-1\u0002MSG_TYPE\u0001reply\u0002',
    bornHost: '127.0.0.1:1',
    storeHost: '127.0.0.1:2',
    storeTimestamp: 3,
  };
  const push = (ext: Record<string, string>, body: Buffer): Promise<{ code: number; remark: string | null }> =>
    Promise.resolve().then(() =>
      processor(createRequest(op.code, { extFields: ext, body }), { remoteAddress: '127.0.0.1:10911' }),
    );

  const good = await push(op.request.encode(fields), Buffer.from('pong'));
  t.equal(good.code, ResponseCode.SUCCESS);
  t.match(taken[0], {
    topic: 'DefaultCluster_REPLY_TOPIC',
    bornHost: '127.0.0.1:1',
    storeHost: '127.0.0.1:2',
    storeTimestamp: 3,
    properties: { CORRELATION_ID: 'c-1', ARRIVE_TIME: /^\d+$/ },
  });
  t.equal(taken[0]!.body.toString(), 'pong');

  const garbled = await push(op.request.encode({ ...fields, sysFlag: 1 }), Buffer.from('not zlib'));
  t.match(
    garbled,
    { code: ResponseCode.SYSTEM_ERROR, remark: 'process reply message fail' },
    'a body flagged compressed that does not inflate',
  );
  const ext = op.request.encode(fields);
  delete ext.storeHost;
  await t.rejects(
    push(ext, Buffer.from('x')),
    { name: 'HeaderFieldError', field: 'storeHost' },
    'a missing field: the connection answers SYSTEM_ERROR naming it',
  );
  t.equal(taken.length, 1, 'only the good reply was handed on');
});

t.test('storeReplyMessageEnable must be a boolean', async (t) => {
  const { startBroker } = await import('../../lib/broker/index.js');
  await t.rejects(startBroker({ storeReplyMessageEnable: 'no' as never }), {
    name: 'BrokerOptionError',
    option: 'storeReplyMessageEnable',
    message: 'storeReplyMessageEnable must be true or false, got "no"',
  });
});
