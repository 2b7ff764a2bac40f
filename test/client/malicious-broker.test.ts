// The client against a malicious broker or name server: each case a hostile
// answer or request from test/client/malicious-peer.ts, and what the client must do about it: a
// typed error naming the peer (addr) and the field, bounded work and memory (asserted as counts and
// sizes, never times), and no offset committed past a message not consumed.
import t, { type Test } from 'tap';
import {
  BrokerRequestRefusedError,
  MQClientInstance,
  PullOffsetError,
  ResponseFieldError,
  RouteLimitError,
  topicRouteToSubscribeQueues,
  type ConsumerInner,
} from '../../lib/client/index.js';
import { LitePullConsumer, PushConsumer, type ConsumerBrokerError } from '../../lib/consumer/index.js';
import { pushConsumerImpl } from '../../lib/consumer/push/push-consumer.js';
import { TransactionProducer } from '../../lib/producer/index.js';
import { RemotingConnection, RemotingUnmatchedResponsesError, RemotingClosedError } from '../../lib/remoting/index.js';
import {
  CheckTransactionStateRequestHeader,
  createRequest,
  createResponse,
  decodeMessagesSkipping,
  decodeProperties,
  encodeResetOffsetBody,
  encodeStoredMessage,
  MAX_PROPERTIES_ENTRIES,
  PropertiesLimitError,
  ProtocolError,
  RemotingFlag,
  RequestCode,
  ResponseCode,
  type MessageExt,
  type MessageQueue,
} from '../../protocol/index.js';
import { queueKey } from '../../protocol/internal.js';
import { routeJson } from './fake-cluster.js';
import { startMaliciousPeer, storedRecord, unmatchedResponse, type MaliciousPeer } from './malicious-peer.js';
import { until } from '../support/until.js';

let instanceSeq = 0;
function recordingLogger(): {
  warn: string[];
  logger: { debug(): void; info(): void; warn(m: string): void; error(m: string): void };
} {
  const warn: string[] = [];
  return {
    warn,
    logger: { debug() {}, info() {}, warn: (m: string) => void warn.push(m), error: (m: string) => void warn.push(m) },
  };
}
function instanceFor(
  t: Test,
  peer: MaliciousPeer,
  extra: Record<string, unknown> = {},
): { inst: MQClientInstance; warn: string[] } {
  const { warn, logger } = recordingLogger();
  const inst = MQClientInstance.acquire({
    namesrvAddr: peer.ns.addr,
    instanceName: `malicious-${process.pid}-${instanceSeq++}`,
    logger,
    ...extra,
  });
  t.teardown(() => inst.release());
  return { inst, warn };
}
async function peerWith(t: Test, routes: Record<string, string> = {}): Promise<MaliciousPeer> {
  const peer = await startMaliciousPeer({ routes });
  t.teardown(() => peer.close());
  return peer;
}
const oneQueue = (peer: MaliciousPeer): string =>
  routeJson([{ name: 'broker-a', addrs: { '0': peer.broker.addr }, queues: 1 }]);

// ------------------------------------------------------------------ routes

t.test(
  'route data with absurd counts is refused, naming the name server and the field; real layouts pass',
  async (t) => {
    const peer = await peerWith(t);
    const { inst, warn } = instanceFor(t, peer);
    const route = (
      queueDatas: unknown[],
      brokerDatas: unknown[] = [{ brokerName: 'b', brokerAddrs: { 0: peer.broker.addr }, cluster: 'c' }],
      extra = {},
    ): string => JSON.stringify({ brokerDatas, queueDatas, filterServerTable: {}, ...extra });

    // 2^31 read queues: topicRouteSubscribeQueues would make 2^31 objects
    peer.routes.set(
      'Huge',
      route([{ brokerName: 'b', perm: 6, readQueueNums: 2 ** 31, writeQueueNums: 4, topicSysFlag: 0 }]),
    );
    const e1 = await inst.getTopicRoute('Huge').catch((e: unknown) => e);
    t.type(e1, RouteLimitError);
    t.match(e1, {
      addr: peer.ns.addr,
      topic: 'Huge',
      field: 'queueDatas[0].readQueueNums',
      value: 2 ** 31,
      limit: 131072,
      option: 'maxRouteQueues',
      retriable: false,
      errorCode: 'ERR_ROUTE_LIMIT',
    });
    t.match((e1 as Error).message, /exceeds maxRouteQueues \(131072\); route refused; raise the option maxRouteQueues/);
    t.equal(inst.cachedTopicRoute('Huge'), undefined, 'nothing cached');

    // many brokers, each with a few queues: the sum is over the limit
    const many = Array.from({ length: 4000 }, (_, i) => ({
      brokerName: `b${i}`,
      perm: 6,
      readQueueNums: 64,
      writeQueueNums: 64,
      topicSysFlag: 0,
    }));
    peer.routes.set('Sum', route(many));
    t.match(await inst.getTopicRoute('Sum').catch((e: unknown) => e), {
      name: 'RouteLimitError',
      field: 'queueDatas (queues of the route)',
      option: 'maxRouteQueues',
    });

    // 100 000 brokers (a 1 M one does not fit a 16 MiB frame): refused by count
    const brokers = Array.from({ length: 100_000 }, (_, i) => ({
      brokerName: `b${i}`,
      brokerAddrs: { 0: '10.0.0.1:10911' },
      cluster: 'c',
    }));
    peer.routes.set('Brokers', route([], brokers));
    t.match(await inst.getTopicRoute('Brokers').catch((e: unknown) => e), {
      name: 'RouteLimitError',
      addr: peer.ns.addr,
      field: 'brokerDatas.length',
      value: 100_000,
      limit: 4096,
      option: 'maxRouteBrokers',
    });

    // negative, fractional, orderTopicConf
    peer.routes.set(
      'Neg',
      route([{ brokerName: 'b', perm: 6, readQueueNums: -1, writeQueueNums: 4, topicSysFlag: 0 }]),
    );
    t.match(await inst.getTopicRoute('Neg').catch((e: unknown) => e), {
      name: 'RouteLimitError',
      field: 'queueDatas[0].readQueueNums',
      value: -1,
    });
    peer.routes.set(
      'Frac',
      route([{ brokerName: 'b', perm: 6, readQueueNums: 4, writeQueueNums: 1.5, topicSysFlag: 0 }]),
    );
    t.match(await inst.getTopicRoute('Frac').catch((e: unknown) => e), {
      name: 'RouteLimitError',
      field: 'queueDatas[0].writeQueueNums',
      value: 1.5,
    });
    peer.routes.set('Order', route([], undefined, { orderTopicConf: 'b:2147483647' }));
    t.match(await inst.getTopicRoute('Order').catch((e: unknown) => e), {
      name: 'RouteLimitError',
      field: 'orderTopicConf',
      value: 2147483647,
    });

    // a real large layout: 64 broker groups × 1024 queues = 65 536 queues
    const big = Array.from({ length: 64 }, (_, i) => ({
      name: `broker-${String(i).padStart(2, '0')}`,
      addrs: { '0': `10.0.${i}.1:10911`, '1': `10.0.${i}.2:10911` },
      queues: 1024,
    }));
    peer.routes.set('Big', routeJson(big));
    const ok = await inst.getTopicRoute('Big');
    t.equal(topicRouteToSubscribeQueues('Big', ok).length, 65_536, 'a 65 536-queue route is taken');

    // a route that goes bad keeps the last good one in use, and is logged once per name server and topic
    peer.routes.set(
      'Big',
      route([{ brokerName: 'b', perm: 6, readQueueNums: 2 ** 31, writeQueueNums: 4, topicSysFlag: 0 }]),
    );
    await inst.getTopicRoute('Big', { refresh: true }).catch(() => undefined);
    await inst.getTopicRoute('Big', { refresh: true }).catch(() => undefined);
    t.equal(inst.cachedTopicRoute('Big'), ok, 'the last good route stays');
    t.equal(warn.filter((w) => w.includes('route of Big')).length, 1, 'logged once');
    t.ok(
      warn.every((w) => w.includes(peer.ns.addr)),
      'every warning names the name server',
    );
  },
);

t.test('the route limits are options: a larger layout is taken when they are raised', async (t) => {
  const peer = await peerWith(t);
  const { inst } = instanceFor(t, peer, { maxRouteQueues: 300_000 });
  peer.routes.set('T', routeJson([{ name: 'broker-a', addrs: { '0': peer.broker.addr }, queues: 200_000 }]));
  t.equal(topicRouteToSubscribeQueues('T', await inst.getTopicRoute('T')).length, 200_000);
  t.throws(
    () => MQClientInstance.acquire({ namesrvAddr: peer.ns.addr, instanceName: 'bad-limit', maxRouteQueues: 10 }),
    { name: 'ClientOptionError', option: 'maxRouteQueues' },
  );
});

// ------------------------------------------------------------------ pulls: bodies and properties

const pullHeader = (queueOffset: number) => ({
  consumerGroup: 'cg',
  topic: 'T',
  queueId: 0,
  queueOffset,
  maxMsgNums: 32,
  sysFlag: 0,
  commitOffset: 0,
  suspendTimeoutMillis: 0,
  subVersion: 0,
});

t.test(
  'a pulled message claiming a 2 GiB body: refused by the decoder with the byte offset, no allocation',
  async (t) => {
    const peer = await peerWith(t, {});
    const { inst } = instanceFor(t, peer);
    const liar = storedRecord(0, { body: Buffer.from('tiny') });
    // BODYLENGTH sits after the fixed fields (IPv4 hosts): 4+4+4+4+4+8+8+4+8+8+8+8+4+8 = 84
    t.equal(liar.readInt32BE(84), 4, 'the body length field');
    liar.writeInt32BE(0x7fffffff, 84);
    peer.pull = (req) => peer.pullAnswer(req, 'FOUND', { nextBeginOffset: 2, maxOffset: 2 }, [liar, storedRecord(1)]);
    const before = process.memoryUsage().arrayBuffers;
    const r = await inst.pullMessage(peer.broker.addr, pullHeader(0), 3000);
    t.throws(() => r.messages, ProtocolError, 'the strict decoder refuses it');
    t.throws(() => r.messages, /body length 2147483647 exceeds the record/);
    const skipping = decodeMessagesSkipping(r.bodyBytes!);
    t.same(
      skipping.messages.map((m) => m.queueOffset),
      [1],
      'the message after it is kept',
    );
    t.match(skipping.undecodable, [{ recordIntact: true, queueOffset: 0, reason: /body length 2147483647/ }]);
    t.ok(process.memoryUsage().arrayBuffers - before < 64 * 1024 * 1024, 'nothing near 2 GiB was allocated');
  },
);

t.test('a frame claiming 2 GiB closes the connection with a ProtocolError naming the broker', async (t) => {
  const peer = await peerWith(t, {});
  peer.pull = () => null; // never answered: the raw frame comes instead
  const conn = await RemotingConnection.connect(peer.broker.addr);
  t.teardown(() => conn.close());
  const call = conn.invoke(createRequest(RequestCode.PULL_MESSAGE, { extFields: { queueOffset: '0' } }), {
    timeoutMs: 10_000,
  });
  const server = await peer.clientConnection();
  await until(() => peer.pulledAt.length > 0, 'the pull');
  const head = Buffer.alloc(8);
  head.writeInt32BE(0x7fffffff, 0);
  head.writeInt32BE(16, 4);
  peer.writeRaw(server, head);
  const err = await call.catch((e: unknown) => e);
  t.type(err, RemotingClosedError);
  t.match(err, { addr: peer.broker.addr });
  t.type((err as Error).cause, ProtocolError);
  t.equal(conn.stats().bufferedInputBytes, 0, 'nothing buffered for the announced frame');
});

t.test(
  'a properties string with millions of entries: refused after maxEntries, in the codec and in a pushed reply',
  async (t) => {
    const millions = 'k\u0001v\u0002'.repeat(2_000_000);
    const e = (() => {
      try {
        decodeProperties(millions);
      } catch (err) {
        return err;
      }
      return null;
    })();
    t.type(e, PropertiesLimitError);
    t.match(e, {
      field: 'properties',
      option: 'maxEntries',
      limit: MAX_PROPERTIES_ENTRIES,
      errorCode: 'ERR_PROPERTIES_LIMIT',
    });
    // the largest properties a broker can store (32 767 bytes) decodes
    const stored = Array.from({ length: 8191 }, (_, i) => `${(i % 36).toString(36)}\u0001${i}`)
      .join('\u0002')
      .slice(0, 32767);
    t.doesNotThrow(() => decodeProperties(stored));
    t.equal(
      Object.keys(decodeProperties('a\u0001b\u0002'.repeat(8191))).length,
      1,
      'duplicates are one entry, but still counted',
    );
    t.throws(() => decodeProperties('a\u0001b\u0002'.repeat(11), { maxEntries: 10 }), PropertiesLimitError);

    // pushed to a client as a reply's header field (a header can be 16 MiB)
    const peer = await peerWith(t, {});
    const { inst } = instanceFor(t, peer);
    await inst.pullMessage(peer.broker.addr, pullHeader(0), 3000); // opens the connection
    const server = await peer.clientConnection();
    const answer = await server.invoke(
      createRequest(RequestCode.PUSH_REPLY_MESSAGE_TO_CLIENT, {
        extFields: {
          producerGroup: 'pg',
          topic: 'T',
          defaultTopic: 'TBW102',
          defaultTopicQueueNums: '4',
          queueId: '0',
          flag: '0',
          sysFlag: '0',
          bornTimestamp: '1',
          bornHost: '10.0.0.1:1',
          storeTimestamp: '2',
          storeHost: '10.0.0.2:2',
          properties: millions,
        },
        body: Buffer.from('r'),
        serializeType: 'ROCKETMQ', // raw bytes: 4 per entry, where JSON would escape \u0001 in 6
      }),
      { timeoutMs: 10_000 },
    );
    t.equal(answer.code, ResponseCode.SYSTEM_ERROR, 'refused');
    t.equal(answer.remark, 'process reply message fail');
  },
);

// ------------------------------------------------------------------ pulls: offsets

t.test(
  'pull answers whose offsets cannot be true are refused with PullOffsetError naming the broker and the field',
  async (t) => {
    const peer = await peerWith(t, {});
    const { inst } = instanceFor(t, peer);
    const addr = peer.broker.addr;
    const pullAt = (o: number) => inst.pullMessage(addr, pullHeader(o), 3000).catch((e: unknown) => e);
    const cases: [
      string,
      (req: Parameters<MaliciousPeer['pull']>[0]) => ReturnType<MaliciousPeer['pullAnswer']>,
      number,
      Record<string, unknown>,
    ][] = [
      [
        'NO_NEW_MSG backwards',
        (req) => peer.pullAnswer(req, 'NO_NEW_MSG', { nextBeginOffset: 2, maxOffset: 4 }),
        4,
        { field: 'nextBeginOffset', value: 2 },
      ],
      [
        'negative',
        (req) => peer.pullAnswer(req, 'NO_MATCHED_MSG', { nextBeginOffset: -5, maxOffset: 4 }),
        4,
        { field: 'nextBeginOffset', value: -5 },
      ],
      [
        'FOUND past maxOffset',
        (req) => peer.pullAnswer(req, 'FOUND', { nextBeginOffset: 2 ** 53 - 1, maxOffset: 5 }, [storedRecord(4)]),
        4,
        { field: 'nextBeginOffset', value: 2 ** 53 - 1 },
      ],
      [
        'a message past the range',
        (req) =>
          peer.pullAnswer(req, 'FOUND', { nextBeginOffset: 6, maxOffset: 6 }, [storedRecord(4), storedRecord(2 ** 40)]),
        4,
        { field: 'queueOffset', value: 2 ** 40 },
      ],
      [
        'a message before the offset asked for',
        (req) => peer.pullAnswer(req, 'FOUND', { nextBeginOffset: 6, maxOffset: 6 }, [storedRecord(1)]),
        4,
        { field: 'queueOffset', value: 1 },
      ],
      [
        'OFFSET_ILLEGAL outside the queue',
        (req) => peer.pullAnswer(req, 'OFFSET_ILLEGAL', { nextBeginOffset: 900, minOffset: 0, maxOffset: 10 }),
        4,
        { field: 'nextBeginOffset', value: 900 },
      ],
      [
        'OFFSET_ILLEGAL backwards inside the queue',
        (req) => peer.pullAnswer(req, 'OFFSET_ILLEGAL', { nextBeginOffset: 0, minOffset: 0, maxOffset: 10 }),
        4,
        { field: 'nextBeginOffset', value: 0 },
      ],
    ];
    for (const [what, answer, at, fields] of cases) {
      peer.pull = answer;
      const e = await pullAt(at);
      t.type(e, PullOffsetError, what);
      t.match(e, { addr, topic: 'T', queueId: 0, requestOffset: at, errorCode: 'ERR_PULL_OFFSET', ...fields }, what);
    }
    // what real brokers send passes: a slave's NO_MATCHED at the offset asked for, a lost queue's correction backwards, OFFSET_RESET
    const fine: [(req: Parameters<MaliciousPeer['pull']>[0]) => ReturnType<MaliciousPeer['pullAnswer']>, number][] = [
      [(req) => peer.pullAnswer(req, 'NO_MATCHED_MSG', { nextBeginOffset: 40, maxOffset: 10 }), 40],
      [(req) => peer.pullAnswer(req, 'OFFSET_ILLEGAL', { nextBeginOffset: 10, minOffset: 0, maxOffset: 10 }), 40],
      [(req) => peer.pullAnswer(req, 'OFFSET_ILLEGAL', { nextBeginOffset: 0, minOffset: 0, maxOffset: 0 }), 40],
      [(req) => peer.pullAnswer(req, 'OFFSET_ILLEGAL', { nextBeginOffset: 5, minOffset: 5, maxOffset: 10 }), 1],
      [
        (req) =>
          peer.pullAnswer(req, 'FOUND', { nextBeginOffset: 6, maxOffset: 6 }, [storedRecord(4), storedRecord(5)]),
        4,
      ],
    ];
    for (const [answer, at] of fine) {
      peer.pull = answer;
      const r = await pullAt(at);
      t.notOk(r instanceof Error, `passes: ${(r as Error)?.message ?? ''}`);
    }
    const reset = (req: Parameters<MaliciousPeer['pull']>[0]) => {
      const a = peer.pullAnswer(req, 'OFFSET_ILLEGAL', { nextBeginOffset: 1, minOffset: 0, maxOffset: 10 });
      a.remark = 'OFFSET_RESET';
      return a;
    };
    peer.pull = reset;
    t.notOk((await pullAt(4)) instanceof Error, "5.x's OFFSET_RESET may move backwards inside the queue");

    // offsets past 2^53 in the header: ResponseFieldError naming the field
    peer.pull = (req) =>
      createResponse(req, ResponseCode.PULL_NOT_FOUND, {
        extFields: { suggestWhichBrokerId: '0', nextBeginOffset: '9007199254740993', minOffset: '0', maxOffset: '4' },
      });
    t.match(await pullAt(4), { name: 'ResponseFieldError', field: 'nextBeginOffset', addr });
    t.type(await pullAt(4), ResponseFieldError);
  },
);

/** A push consumer of T (one queue) on the peer, every failed pull retried after 5 ms. */
async function pushConsumerOn(
  t: Test,
  peer: MaliciousPeer,
  group: string,
): Promise<{ consumer: PushConsumer; got: number[]; errors: ConsumerBrokerError[] }> {
  const consumer = new PushConsumer({
    consumerGroup: group,
    namesrvAddr: peer.ns.addr,
    subscriptions: { T: '*' },
    consumeFromWhere: 'first',
    pullTimeDelayMsWhenException: 5,
    persistOffsetIntervalMs: 50,
    logger: false,
  });
  const errors: ConsumerBrokerError[] = [];
  consumer.on('brokerError', (e) => errors.push(e));
  const got: number[] = [];
  await consumer.start((msgs) => {
    got.push(...msgs.map((m) => m.queueOffset));
    return 'CONSUME_SUCCESS';
  });
  t.teardown(() => consumer.shutdown());
  return { consumer, got, errors };
}

t.test(
  'push consumer: nextBeginOffset backwards, negative or past the queue never moves the offset backwards or past a message not consumed',
  async (t) => {
    const peer = await peerWith(t, {});
    peer.routes.set('T', oneQueue(peer));
    let round = 0;
    peer.pull = (req, from) => {
      round++;
      if (from === 0)
        return peer.pullAnswer(
          req,
          'FOUND',
          { nextBeginOffset: 4, maxOffset: 4 },
          [0, 1, 2, 3].map((o) => storedRecord(o)),
        );
      // then lies, in turn: backwards, negative, far ahead (NO_NEW_MSG would be committed as is), a message far ahead
      switch (round % 4) {
        case 0:
          return peer.pullAnswer(req, 'NO_NEW_MSG', { nextBeginOffset: 1, maxOffset: 4 });
        case 1:
          return peer.pullAnswer(req, 'NO_NEW_MSG', { nextBeginOffset: -3, maxOffset: 4 });
        case 2:
          return peer.pullAnswer(req, 'FOUND', { nextBeginOffset: 2 ** 52, maxOffset: 4 }, [storedRecord(4)]);
        default:
          return peer.pullAnswer(req, 'FOUND', { nextBeginOffset: 6, maxOffset: 6 }, [
            storedRecord(4),
            storedRecord(2 ** 52),
          ]);
      }
    };
    const { consumer, got, errors } = await pushConsumerOn(t, peer, 'cg-push');
    await until(() => got.length >= 4 && errors.length >= 12 && peer.broker.committed.get(0) === 4, 'the lies refused');
    const impl = pushConsumerImpl(consumer);
    const mq = impl.rebalance.heldQueues()[0]!;
    await consumer.shutdown();
    t.same(
      got.sort((a, b) => a - b),
      [0, 1, 2, 3],
      'the four real messages, once each; none of the lies delivered',
    );
    t.ok(
      peer.pulledAt.slice(1).every((o) => o === 4),
      `every later pull asks for offset 4 (${[...new Set(peer.pulledAt)].join(',')})`,
    );
    t.equal(impl.offsetStore.readMemory(mq), 4, 'the offset stays at 4');
    t.equal(peer.broker.committed.get(0), 4, 'committed 4: never backwards, never past an unconsumed message');
    const causes = errors.map((e) => e.cause);
    t.ok(
      causes.every((c) => c instanceof PullOffsetError),
      `every failure is a PullOffsetError (${causes
        .filter((c) => !(c instanceof PullOffsetError))
        .map((c) => String(c))
        .slice(0, 3)
        .join('; ')})`,
    );
    t.ok(
      errors.every((e) => e.message.includes(peer.broker.addr)),
      'naming the broker',
    );
    t.same(new Set(causes.map((c) => (c as PullOffsetError).field)), new Set(['nextBeginOffset', 'queueOffset']));
  },
);

t.test('lite pull consumer: the same lies leave its position and committed offset where they are', async (t) => {
  const peer = await peerWith(t, {});
  peer.routes.set('T', oneQueue(peer));
  let round = 0;
  peer.pull = (req, from) => {
    round++;
    if (from === 0)
      return peer.pullAnswer(
        req,
        'FOUND',
        { nextBeginOffset: 4, maxOffset: 4 },
        [0, 1, 2, 3].map((o) => storedRecord(o)),
      );
    return round % 2 === 0
      ? peer.pullAnswer(req, 'NO_NEW_MSG', { nextBeginOffset: 1, maxOffset: 4 })
      : peer.pullAnswer(req, 'OFFSET_ILLEGAL', { nextBeginOffset: 0, minOffset: 0, maxOffset: 4 });
  };
  const consumer = new LitePullConsumer({
    consumerGroup: 'cg-lite',
    namesrvAddr: peer.ns.addr,
    pullTimeDelayMsWhenException: 5,
    autoCommit: false,
    logger: false,
  });
  const errors: ConsumerBrokerError[] = [];
  consumer.on('brokerError', (e) => errors.push(e));
  consumer.subscribe('T', '*');
  await consumer.start();
  t.teardown(() => consumer.shutdown());
  const got: MessageExt[] = [];
  for (let i = 0; i < 200 && (got.length < 4 || errors.length < 10); i++) got.push(...(await consumer.poll(20)));
  t.same(
    got.map((m) => m.queueOffset),
    [0, 1, 2, 3],
  );
  t.ok(errors.length >= 10 && errors.every((e) => e.cause instanceof PullOffsetError), 'each lie refused');
  await consumer.commitSync();
  await until(() => peer.broker.committed.get(0) === 4, 'the commit');
  t.ok(
    peer.pulledAt.slice(1).every((o) => o === 4),
    `every later pull asks for offset 4 (${[...new Set(peer.pulledAt)].join(',')})`,
  );
  t.same((await consumer.poll(20)).length, 0, 'nothing delivered again');
});

// ------------------------------------------------------------------ unmatched responses

t.test(
  'responses to opaques never sent: the connection is closed after maxUnmatchedResponses, memory flat',
  async (t) => {
    const peer = await peerWith(t, {});
    const conn = await RemotingConnection.connect(peer.broker.addr);
    t.teardown(() => conn.close());
    await conn.invoke(createRequest(RequestCode.HEART_BEAT, { body: Buffer.from('{"clientID":"x"}') }));
    const closed = new Promise<Error | undefined>((resolve) => conn.once('close', resolve));
    const server = await peer.clientConnection();
    await peer.flood(server, 20_000, unmatchedResponse);
    const reason = await closed;
    t.type(reason, RemotingUnmatchedResponsesError);
    t.match(reason, {
      addr: peer.broker.addr,
      field: 'opaque',
      option: 'maxUnmatchedResponses',
      limit: 1000,
      errorCode: 'ERR_REMOTING_UNMATCHED_RESPONSES',
    });
    t.match(reason!.message, /reached maxUnmatchedResponses \(1000\); raise the option maxUnmatchedResponses/);
    const s = conn.stats();
    t.equal(s.unmatchedResponses, 1000, 'closed at the 1000th');
    t.ok(s.framesIn <= 1001, `no frame looked at after it (${s.framesIn})`);
    t.equal(s.bufferedInputBytes, 0);
  },
);

t.test(
  'late answers to calls that timed out are not unmatched; maxUnmatchedResponses 0 never closes and holds nothing',
  async (t) => {
    const peer = await peerWith(t, {});
    const conn = await RemotingConnection.connect(peer.broker.addr, { maxUnmatchedResponses: 0 });
    t.teardown(() => conn.close());
    const held: { req: import('../../protocol/index.js').RemotingCommand }[] = [];
    let answerLater: (() => void) | undefined;
    peer.broker.on(
      RequestCode.GET_CONSUMER_LIST_BY_GROUP,
      (req) =>
        new Promise((resolve) => {
          held.push({ req });
          answerLater = () =>
            resolve(createResponse(req, ResponseCode.SUCCESS, { body: Buffer.from('{"consumerIdList":[]}') }));
        }),
    );
    const e = await conn
      .invoke(createRequest(RequestCode.GET_CONSUMER_LIST_BY_GROUP, { extFields: { consumerGroup: 'g' } }), {
        timeoutMs: 20,
      })
      .catch((x: unknown) => x);
    t.match(e, { name: 'RemotingTimeoutError' });
    answerLater!();
    await until(() => conn.stats().lateResponses === 1, 'the late answer');
    t.equal(conn.stats().unmatchedResponses, 0, 'a late answer is not an unmatched one');
    const server = await peer.clientConnection();
    await peer.flood(server, 20_000, unmatchedResponse);
    await until(() => conn.stats().unmatchedResponses === 20_000, 'the flood read');
    t.notOk(conn.closed, 'option 0: never closed');
    t.equal(conn.stats().inFlight, 0);
    t.equal(conn.stats().bufferedInputBytes, 0, 'each dropped frame leaves nothing behind');
  },
);

t.test('a client instance logs the unmatched-response close once, naming the broker and the option', async (t) => {
  const peer = await peerWith(t, {});
  const { inst, warn } = instanceFor(t, peer, { maxUnmatchedResponses: 50 });
  await inst.pullMessage(peer.broker.addr, pullHeader(0), 3000);
  const server = await peer.clientConnection();
  await peer.flood(server, 2000, unmatchedResponse);
  await until(() => warn.length > 0, 'the warning');
  t.equal(warn.length, 1);
  t.match(warn[0], new RegExp(`${peer.broker.addr}.*maxUnmatchedResponses \\(50\\)`));
  // and the next call opens a new connection
  t.notOk((await inst.pullMessage(peer.broker.addr, pullHeader(0), 3000)) instanceof Error);
});

// ------------------------------------------------------------------ requests the broker sends

t.test(
  'CHECK_TRANSACTION_STATE flood: one listener call at a time per half message, duplicates coalesced, the queue bounded',
  async (t) => {
    const peer = await peerWith(t, {});
    peer.routes.set('T', oneQueue(peer));
    const ends: Record<string, number> = {};
    peer.broker.on(RequestCode.END_TRANSACTION, (req) => {
      const id = req.extFields?.transactionId ?? '?';
      ends[id] = (ends[id] ?? 0) + 1;
      return null;
    });
    peer.broker.on(RequestCode.SEND_MESSAGE_V2, (req) =>
      createResponse(req, ResponseCode.SUCCESS, {
        extFields: { msgId: '0A00000100002A9F0000000000000001', queueId: '0', queueOffset: '0' },
      }),
    );
    const calls: Record<string, number> = {};
    let running = 0;
    let maxRunning = 0;
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    const producer = new TransactionProducer({
      group: 'pg',
      namesrvAddr: peer.ns.addr,
      logger: false,
      checkRequestHoldMax: 100,
      transactionListener: {
        executeLocalTransaction: () => 'UNKNOW',
        async checkLocalTransaction(msg) {
          const id = msg.properties.UNIQ_KEY!;
          calls[id] = (calls[id] ?? 0) + 1;
          running++;
          maxRunning = Math.max(maxRunning, running);
          await gate;
          running--;
          return 'COMMIT_MESSAGE';
        },
      },
    });
    await producer.start();
    t.teardown(() => producer.shutdown());
    await producer.send({ topic: 'T', body: 'x' }); // learns the route and connects
    const server = await peer.clientConnection();
    const check = (id: string, commitLogOffset: number) => {
      const body = encodeStoredMessage({
        topic: 'T',
        queueId: 0,
        queueOffset: 0,
        commitLogOffset,
        bornTimestamp: 1,
        bornHost: '10.0.0.1:1',
        storeTimestamp: 2,
        storeHost: '10.0.0.2:2',
        body: Buffer.from('half'),
        properties: { PGROUP: 'pg', UNIQ_KEY: id, TRAN_MSG: 'true' },
      });
      const extFields = CheckTransactionStateRequestHeader.encode({
        topic: 'RMQ_SYS_TRANS_HALF_TOPIC',
        tranStateTableOffset: 0,
        commitLogOffset,
        msgId: id,
        transactionId: id,
      });
      return createRequest(RequestCode.CHECK_TRANSACTION_STATE, { oneway: true, extFields, body });
    };
    // 5000 checks of one half message (each round re-stored under a new offset), then 500 of 250 others
    await peer.flood(server, 5000, (i) => check('TX-ONE', 10_000 + i));
    await peer.flood(server, 500, (i) => check(`TX-${i % 250}`, 20_000 + i));
    await until(
      () =>
        producer.transactionStats().checksCoalesced + producer.transactionStats().checksDropped >= 5000 + 500 - 1 - 100,
      'the flood read',
    );
    t.equal(calls['TX-ONE'], 1, 'the listener was asked once about TX-ONE');
    t.equal(maxRunning, 1, 'one call at a time (checkConcurrency 1)');
    const s = producer.transactionStats();
    t.equal(s.checksCoalesced, 4999 + 100, 'every duplicate of a waiting or running check coalesced');
    t.equal(
      s.checksDropped,
      2 * (250 - 100),
      'distinct halves past checkRequestHoldMax dropped, each time (the broker asks again)',
    );
    release();
    await until(() => producer.transactionStats().checked.COMMIT_MESSAGE === 101, 'the answers');
    await until(() => Object.values(ends).reduce((a, b) => a + b, 0) >= 101, 'the END_TRANSACTIONs');
    t.equal(ends['TX-ONE'], 1, 'one END_TRANSACTION for TX-ONE');
    t.ok(
      Object.values(calls).every((n) => n === 1),
      'no half message checked twice',
    );
  },
);

/** A ConsumerInner that records what the client instance asks of it. */
function fakeConsumer(
  group: string,
  held: MessageQueue[],
): ConsumerInner & { resets: Map<string, number>[]; direct: MessageExt[]; rebalances: number } {
  const c = {
    groupName: group,
    messageModel: 'CLUSTERING' as const,
    consumeType: 'CONSUME_PASSIVELY' as const,
    consumeFromWhere: 'CONSUME_FROM_LAST_OFFSET',
    resets: [] as Map<string, number>[],
    direct: [] as MessageExt[],
    rebalances: 0,
    subscriptions: () => [
      {
        topic: 'T',
        subString: '*',
        tagsSet: [],
        codeSet: [],
        subVersion: 1,
        expressionType: 'TAG',
        classFilterMode: false,
      },
      {
        topic: `%RETRY%${group}`,
        subString: '*',
        tagsSet: [],
        codeSet: [],
        subVersion: 1,
        expressionType: 'TAG',
        classFilterMode: false,
      },
    ],
    doRebalance: () => void c.rebalances++,
    runningInfo: () => Buffer.from('{}'),
    consumeMessageDirectly: async (msg: MessageExt) => {
      c.direct.push(msg);
      return { autoCommit: true, consumeResult: 'CR_SUCCESS' as const, order: false, remark: '', spentTimeMills: 0 };
    },
    resetOffset: async (_topic: string, offsets: Map<string, number>) => void c.resets.push(offsets),
    consumerStatus: (topic: string): [MessageQueue, number][] =>
      held.filter((mq) => mq.topic === topic).map((mq) => [mq, 4]),
    persistOffsets: async () => undefined,
  };
  return c as never;
}

t.test(
  "RESET_CONSUMER_CLIENT_OFFSET outside the queue's min/max (or negative) is refused; inside it is applied",
  async (t) => {
    const peer = await peerWith(t, {});
    peer.routes.set('T', oneQueue(peer));
    peer.minOffset = 2;
    peer.maxOffset = 10;
    const { inst, warn } = instanceFor(t, peer);
    await inst.getTopicRoute('T');
    const mq: MessageQueue = { topic: 'T', brokerName: 'broker-a', queueId: 0 };
    const c = fakeConsumer('cg-reset', [mq]);
    inst.registerConsumer('cg-reset', c);
    await inst.pullMessage(peer.broker.addr, pullHeader(0), 3000);
    const server = await peer.clientConnection();
    const reset = (offset: number, table: [MessageQueue, number][] = [[mq, offset]]) =>
      server.invokeOneway(
        createRequest(RequestCode.RESET_CONSUMER_CLIENT_OFFSET, {
          oneway: true,
          extFields: { topic: 'T', group: 'cg-reset', timestamp: '0', isForce: 'true' },
          body: encodeResetOffsetBody({ offsetTable: table }),
        }),
      );
    for (const bad of [-1, 11, 1, 2 ** 53 + 2]) await reset(bad);
    await until(() => warn.length === 4, 'four refusals');
    t.equal(c.resets.length, 0, 'no offset moved');
    t.match(
      warn[0],
      new RegExp(
        `RESET_CONSUMER_CLIENT_OFFSET from ${peer.broker.addr.replace(/\./g, '\\.')} refused: offsetTable\\[.*\\] -1 is not an offset`,
      ),
    );
    t.ok(
      warn.some((w) => /offsetTable\[.*\] 11 is outside the queue's \[2, 10\] on /.test(w)),
      'past max',
    );
    t.ok(
      warn.some((w) => /offsetTable\[.*\] 1 is outside the queue's \[2, 10\] on /.test(w)),
      'below min',
    );
    t.ok(
      warn.some((w) => /offsetTable\[.*\] 9007199254740994 is not an offset/.test(w)),
      'past 2^53',
    );
    await reset(2);
    await reset(10);
    await until(() => c.resets.length === 2, 'the two good resets');
    t.same(
      c.resets.map((m) => m.get(queueKey(mq))),
      [2, 10],
    );
    // a table larger than maxRouteQueues is refused before anything is asked
    const huge = Array.from({ length: 140_000 }, (_, i): [MessageQueue, number] => [
      { topic: 'T', brokerName: 'b', queueId: i },
      0,
    ]);
    const asked = peer.broker.requestsOf(RequestCode.GET_MAX_OFFSET).length;
    await reset(0, huge);
    await until(() => warn.length === 5, 'the refusal');
    t.match(warn[4], /offsetTable.size 140000 exceeds maxRouteQueues/);
    t.equal(peer.broker.requestsOf(RequestCode.GET_MAX_OFFSET).length, asked, 'nothing asked of the broker for it');
    t.equal(c.resets.length, 2);
  },
);

t.test(
  'CONSUME_MESSAGE_DIRECTLY for a topic the group does not subscribe is refused; its own topics are consumed',
  async (t) => {
    const peer = await peerWith(t, {});
    const { inst, warn } = instanceFor(t, peer);
    const c = fakeConsumer('cg-direct', []);
    inst.registerConsumer('cg-direct', c);
    await inst.pullMessage(peer.broker.addr, pullHeader(0), 3000);
    const server = await peer.clientConnection();
    const direct = (topic: string) =>
      server.invoke(
        createRequest(RequestCode.CONSUME_MESSAGE_DIRECTLY, {
          extFields: { consumerGroup: 'cg-direct', clientId: inst.clientId, msgId: 'X', brokerName: 'broker-a' },
          body: storedRecord(0, { topic }),
        }),
      );
    const refused = await direct('SomeoneElsesTopic');
    t.equal(refused.code, ResponseCode.SYSTEM_ERROR);
    t.match(
      refused.remark,
      new RegExp(
        `CONSUME_MESSAGE_DIRECTLY from ${peer.broker.addr.replace(/\./g, '\\.')} refused: topic SomeoneElsesTopic is not subscribed by consumer group cg-direct`,
      ),
    );
    t.equal(c.direct.length, 0, 'the handler never saw it');
    t.equal(warn.length, 1);
    t.equal((await direct('T')).code, ResponseCode.SUCCESS);
    t.equal((await direct('%RETRY%cg-direct')).code, ResponseCode.SUCCESS);
    t.equal(c.direct.length, 2);
    t.ok(
      new BrokerRequestRefusedError({ addr: 'a:1', requestCode: 309, field: 'topic', value: 'x', why: 'y' })
        .retriable === false,
    );
  },
);

t.test('NOTIFY_CONSUMER_IDS_CHANGED storm: one rebalance in flight, the rest coalesced into one more', async (t) => {
  const peer = await peerWith(t, {});
  peer.routes.set('T', oneQueue(peer));
  const { consumer } = await pushConsumerOn(t, peer, 'cg-storm');
  const counts = pushConsumerImpl(consumer).rebalance.counts;
  await until(() => counts.runs >= 1 && peer.pulledAt.length > 0, 'the first rebalance');
  // hold the next rebalance inside its GET_CONSUMER_LIST_BY_GROUP while the storm arrives
  let release: () => void = () => undefined;
  const gate = new Promise<void>((r) => (release = r));
  const asked = peer.broker.requestsOf(RequestCode.GET_CONSUMER_LIST_BY_GROUP).length;
  const list = peer.broker.requestsOf(RequestCode.HEART_BEAT);
  const clientId = (JSON.parse(list[list.length - 1]!.body!.toString()) as { clientID: string }).clientID;
  peer.broker.on(RequestCode.GET_CONSUMER_LIST_BY_GROUP, async (req) => {
    await gate;
    return createResponse(req, ResponseCode.SUCCESS, {
      body: Buffer.from(JSON.stringify({ consumerIdList: [clientId] })),
    });
  });
  const runsBefore = counts.runs;
  const requestedBefore = counts.requested;
  const server = await peer.clientConnection();
  const notify = () =>
    createRequest(RequestCode.NOTIFY_CONSUMER_IDS_CHANGED, { oneway: true, extFields: { consumerGroup: 'cg-storm' } });
  await peer.flood(server, 1, notify);
  await until(
    () => peer.broker.requestsOf(RequestCode.GET_CONSUMER_LIST_BY_GROUP).length > asked,
    'the held rebalance',
  );
  await peer.flood(server, 5000, notify);
  await until(() => counts.requested - requestedBefore >= 5001, 'the storm read');
  t.equal(counts.runs - runsBefore, 1, 'one rebalance in flight during the storm');
  release();
  await until(
    () => peer.broker.requestsOf(RequestCode.GET_CONSUMER_LIST_BY_GROUP).length >= asked + 2,
    'the coalesced one',
  );
  // A third round would start inside the same run, before it ends.
  await until(() => pushConsumerImpl(consumer).rebalance['running'] === null, 'the coalesced round to end');
  t.equal(counts.runs - runsBefore, 2, '5001 notifications, two rebalances: the one in flight and one more');
  t.equal(peer.broker.requestsOf(RequestCode.GET_CONSUMER_LIST_BY_GROUP).length - asked, 2);
  void RemotingFlag;
});
