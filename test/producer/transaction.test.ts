// Transactions on the embedded broker and one ManualClock: sendMessageInTransaction
// commits, rolls back or leaves a half message to the check-back, which the broker sends every
// transactionCheckInterval and the producer answers with its listener's checkLocalTransaction.
import t, { type Test } from 'tap';
import { startBroker, type EmbeddedBroker } from '../../lib/broker/index.js';
import { ManualClock } from '../../lib/clock.js';
import { RemotingClient } from '../../lib/remoting/index.js';
import {
  ProducerOptionError,
  TransactionProducer,
  type LocalTransactionState,
  type TransactionListener,
  type TransactionProducerOptions,
} from '../../lib/producer/index.js';
import { decodeOffsetMsgId, MessageSysFlag, type MessageExt } from '../../protocol/index.js';
import { pullTopic } from './transaction-helpers.js';
import { until } from '../support/until.js';

let n = 0;
const uniq = (p: string): string => `${p}_${process.pid}_${n++}`;

interface Setup {
  clock: ManualClock;
  broker: EmbeddedBroker;
  raw: RemotingClient;
  producer: TransactionProducer;
  topic: string;
  group: string;
  /** Committed messages of the topic as a consumer sees them. */
  visible(): Promise<MessageExt[]>;
  checked(): number;
}

async function setup(
  t: Test,
  listener: TransactionListener,
  opts: Partial<TransactionProducerOptions> = {},
  brokerOpts: Parameters<typeof startBroker>[0] = {},
): Promise<Setup> {
  const clock = new ManualClock();
  const broker = await startBroker({ queues: 2, clock, ...brokerOpts });
  const raw = new RemotingClient();
  const topic = uniq('TxTopic');
  const group = uniq('tx_pg');
  const producer = new TransactionProducer({
    namesrvAddr: broker.namesrv,
    group,
    clock,
    instanceName: uniq('tx'),
    transactionListener: listener,
    ...opts,
  });
  t.teardown(async () => {
    await producer.shutdown();
    await raw.close();
    await broker.close();
  });
  await producer.start();
  const checked = (): number => Object.values(producer.transactionStats().checked).reduce((a, b) => a + b, 0);
  return {
    clock,
    broker,
    raw,
    producer,
    topic,
    group,
    visible: () => pullTopic(raw, broker.broker, topic, 2),
    checked,
  };
}

const stateOfBody = (body: string): LocalTransactionState =>
  body.startsWith('c') ? 'COMMIT_MESSAGE' : body.startsWith('r') ? 'ROLLBACK_MESSAGE' : 'UNKNOW';

t.test('commit is visible at once, rollback never, unknown after the check-back answers', async (t) => {
  const checks: MessageExt[] = [];
  const s = await setup(t, {
    executeLocalTransaction: (msg) => stateOfBody(String(msg.body)),
    checkLocalTransaction: (msg) => {
      checks.push(msg);
      return Number(msg.properties.seq) % 2 === 0 ? 'COMMIT_MESSAGE' : 'ROLLBACK_MESSAGE';
    },
  });
  const results = [];
  const bodies = ['c0', 'c1', 'c2', 'r0', 'r1', 'u0', 'u1', 'u2', 'u3'];
  for (const [i, body] of bodies.entries()) {
    results.push(
      await s.producer.sendMessageInTransaction({
        topic: s.topic,
        body,
        tags: 'tx',
        keys: `k${i}`,
        properties: { seq: String(i) },
        delayTimeLevel: 3,
      }),
    );
  }
  t.same(
    results.map((r) => r.localTransactionState),
    bodies.map(stateOfBody),
  );
  t.ok(
    results.every((r) => r.status === 'SEND_OK' && r.transactionId === r.msgId),
    'the broker answers the UNIQ_KEY as transactionId',
  );

  await until(async () => (await s.visible()).length === 3, 'the three committed messages');
  let seen = await s.visible();
  t.same(seen.map((m) => String(m.body)).sort(), ['c0', 'c1', 'c2'], 'only the committed ones are visible');
  const c0 = seen.find((m) => String(m.body) === 'c0')!;
  t.equal(c0.msgId, results[0]!.msgId, 'msgId is the UNIQ_KEY of the send');
  t.equal(
    c0.sysFlag & MessageSysFlag.TRANSACTION_TYPE_MASK,
    MessageSysFlag.TRANSACTION_COMMIT_TYPE,
    'stored as a commit',
  );
  t.equal(c0.tags, 'tx');
  t.same(c0.keys, ['k0']);
  t.equal(c0.properties.seq, '0');
  t.equal(c0.properties.PGROUP, s.group);
  t.equal(c0.properties.DELAY, undefined, 'the delay level is ignored, as Java ignores it');
  // as the real 5.3.3 broker stores a commit (real-broker-transaction.test.ts)
  t.match(
    c0.properties,
    { TRAN_MSG: 'true', REAL_TOPIC: s.topic, REAL_QID: String(c0.queueId), __transactionId__: c0.msgId },
    'TRAN_MSG, REAL_TOPIC and REAL_QID stay, as on the real broker',
  );
  t.equal(
    c0.preparedTransactionOffset,
    decodeOffsetMsgId(results[0]!.offsetMsgId).commitLogOffset,
    "its prepared offset is the half message's commit-log offset",
  );
  t.equal(checks.length, 0, 'nothing checked before transactionCheckInterval');

  const broker = s.broker.instances[0]!.tx.check.counters;
  s.clock.advance(29_999);
  t.equal(broker.checks, 0, 'nothing checked at 29.999 s (a round runs inside advance())');
  s.clock.advance(1);
  await until(() => s.checked() === 4, 'the four unknown ones checked');
  t.same(
    checks.map((m) => String(m.body)).sort(),
    ['u0', 'u1', 'u2', 'u3'],
    'exactly the unknown ones are checked (not the rolled back)',
  );
  const u0 = checks.find((m) => String(m.body) === 'u0')!;
  t.equal(u0.topic, s.topic, 'the checked message carries its real topic');
  t.equal(u0.msgId, results[5]!.msgId, 'and its UNIQ_KEY');
  t.equal(u0.properties.TRANSACTION_CHECK_TIMES, '1');
  await until(async () => (await s.visible()).length === 5, 'the even checked ones committed');
  seen = await s.visible();
  t.same(
    seen.map((m) => String(m.body)).sort(),
    ['c0', 'c1', 'c2', 'u1', 'u3'],
    'seq 6 and 8 (u1, u3) committed, 5 and 7 rolled back',
  );

  s.clock.advance(30_000);
  t.equal(broker.checks, 4, 'nothing is checked again once every half message is ended');
  t.same(s.producer.transactionStats().ended, { COMMIT_MESSAGE: 3, ROLLBACK_MESSAGE: 2, UNKNOW: 4 });
  t.same(s.producer.transactionStats().checked, { COMMIT_MESSAGE: 2, ROLLBACK_MESSAGE: 2, UNKNOW: 0 });
});

t.test(
  'a checker that throws or hangs answers UNKNOW; after transactionCheckMax checks the broker discards',
  async (t) => {
    let calls = 0;
    const s = await setup(
      t,
      {
        executeLocalTransaction: () => 'UNKNOW',
        checkLocalTransaction: (msg) => {
          calls++;
          if (String(msg.body) === 'throws') throw new Error('database is down');
          return new Promise<LocalTransactionState>(() => undefined); // never answers
        },
      },
      { checkTimeoutMs: 5000, checkConcurrency: 2 },
      { transactionCheckMax: 3, transactionCheckInterval: 10_000 },
    );
    await s.producer.sendMessageInTransaction({ topic: s.topic, body: 'throws' });
    await s.producer.sendMessageInTransaction({ topic: s.topic, body: 'hangs' });
    // rounds at 10 s, 20 s, 30 s; the hanging check times out 5 s after each
    s.clock.advance(10_000);
    for (let round = 1; round <= 3; round++) {
      await until(() => calls === 2 * round, `round ${round}: both checked`);
      s.clock.advance(5000);
      await until(() => s.checked() === 2 * round, `round ${round}: both answered`);
      if (round < 3) s.clock.advance(5000);
    }
    const st = s.producer.transactionStats();
    t.same(st.checked, { COMMIT_MESSAGE: 0, ROLLBACK_MESSAGE: 0, UNKNOW: 6 }, 'every answer was UNKNOW');
    t.equal(st.checkFailures, 6, 'three throws and three timeouts');
    const tx = s.broker.instances[0]!.tx;
    s.clock.advance(5000);
    await until(() => tx.check.counters.discarded === 2, 'both discarded after 3 checks');
    t.equal(calls, 6, 'no fourth check');
    t.equal(tx.check.counters.checks, 6);
    const discarded = await pullTopic(s.raw, s.broker.broker, 'TRANS_CHECK_MAX_TIME_TOPIC', 1);
    t.same(discarded.map((m) => String(m.body)).sort(), ['hangs', 'throws'], 'moved to TRANS_CHECK_MAX_TIME_TOPIC');
    t.equal(discarded[0]!.properties.TRANSACTION_CHECK_TIMES, '3');
    t.equal((await s.visible()).length, 0, 'never visible');
    // the producer is still fine
    const r = await s.producer.sendMessageInTransaction({ topic: s.topic, body: 'after' }, undefined);
    t.equal(r.status, 'SEND_OK');
  },
);

t.test('a local transaction that throws ends UNKNOW and the check-back commits it', async (t) => {
  const s = await setup(t, {
    executeLocalTransaction: () => {
      throw new Error('boom');
    },
    checkLocalTransaction: () => 'COMMIT_MESSAGE',
  });
  const r = await s.producer.sendMessageInTransaction({ topic: s.topic, body: 'x' });
  t.equal(r.localTransactionState, 'UNKNOW');
  s.clock.advance(30_000);
  await until(async () => (await s.visible()).length === 1, 'committed by the check-back');
});

t.test(
  'with a namespace (typed on its options): the half message lives in NS%topic, the check-back sees the topic as sent',
  async (t) => {
    const checkedTopics: string[] = [];
    const s = await setup(
      t,
      {
        executeLocalTransaction: () => 'UNKNOW',
        checkLocalTransaction: (msg) => {
          checkedTopics.push(msg.topic);
          return 'COMMIT_MESSAGE';
        },
      },
      { namespace: 'txNs' },
    );
    const r = await s.producer.sendMessageInTransaction({ topic: s.topic, body: 'x' });
    t.equal(r.messageQueue.topic, s.topic, 'the send result names the topic without the namespace');
    s.clock.advance(30_000);
    await until(async () => (await pullTopic(s.raw, s.broker.broker, `txNs%${s.topic}`, 2)).length === 1, 'committed');
    t.same(checkedTopics, [s.topic], 'the listener saw the topic as the application named it');
    t.equal((await s.visible()).length, 0, 'nothing under the bare topic');
  },
);

t.test('no live producer of the group: the check round finds no channel and asks nobody', async (t) => {
  const s = await setup(t, { executeLocalTransaction: () => 'UNKNOW', checkLocalTransaction: () => 'COMMIT_MESSAGE' });
  await s.producer.sendMessageInTransaction({ topic: s.topic, body: 'orphan' });
  await s.producer.shutdown();
  const tx = s.broker.instances[0]!.tx;
  await until(() => !s.broker.instances[0]!.consumers.producerGroups.has(s.group), 'the producer unregistered');
  s.clock.advance(30_000);
  t.equal(tx.check.counters.noChannel, 1, 'one check with no channel');
  t.equal(tx.check.counters.checks, 0);
});

t.test('bad options name the option', async (t) => {
  const base = { namesrvAddr: '127.0.0.1:9876', group: 'tx_bad' };
  const listener: TransactionListener = {
    executeLocalTransaction: () => 'COMMIT_MESSAGE',
    checkLocalTransaction: () => 'COMMIT_MESSAGE',
  };
  const bad: Array<[string, Record<string, unknown>]> = [
    ['transactionListener', {}],
    ['transactionListener', { transactionListener: { executeLocalTransaction: () => 'COMMIT_MESSAGE' } }],
    ['checkTimeoutMs', { transactionListener: listener, checkTimeoutMs: 0 }],
    ['checkConcurrency', { transactionListener: listener, checkConcurrency: 1.5 }],
    ['checkRequestHoldMax', { transactionListener: listener, checkRequestHoldMax: -1 }],
  ];
  for (const [option, extra] of bad) {
    t.throws(
      () => new TransactionProducer({ ...base, ...extra } as unknown as TransactionProducerOptions),
      { name: 'ProducerOptionError', option },
      option,
    );
  }
  t.ok(new ProducerOptionError('x', 'y') instanceof Error);
});
