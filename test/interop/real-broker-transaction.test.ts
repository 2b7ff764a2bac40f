// Transactions, proven on a real Apache RocketMQ 5.3.3 broker with the stock Java client
// both ways: 100 committed + 100 rolled back + 100 left unknown and answered at the check-back
// (commit for an even seq, rollback for an odd one). A consumer of the other side sees exactly the
// 100 committed and the 50 even checked ones.
//
// The broker runs checks every second (transactionCheckInterval=1000) for half messages older than
// 3 s (transactionTimeOut=3000), and writes op records within 200 ms (transactionOpBatchInterval),
// so an ended message is never checked and every unknown one is checked once, within the budget.
import t from 'tap';
import { PushConsumer } from '../../lib/consumer/index.js';
import type { MessageExt } from '../../protocol/index.js';
import { runCli } from '../cli/run-in-process.js';
import { brokerOffsets, until } from '../consumer/helpers.js';
import { startRealCluster, V53_VERSION, V5_VERSION } from './harness.js';
import { javaConsume } from './java-client.js';
import { javaTxProduce } from './java-tx.js';
import { interopReady } from './skip.js';

t.setTimeout(240_000);

const COUNT = 100;
/** The seqs a consumer must see: commit run 0..99 and the even ones of the check run. */
const evens = Array.from({ length: COUNT / 2 }, (_, k) => 2 * k);

if (await interopReady(t, [V5_VERSION])) {
  const cluster = await startRealCluster({
    version: V5_VERSION,
    brokerConfig: { transactionCheckInterval: 1000, transactionTimeOut: 3000, transactionOpBatchInterval: 200 },
  });
  t.teardown(() => cluster.stop({ graceful: false }));

  t.test('rocketwire producing (produce --transaction), Java consuming', async (t) => {
    const topic = 'RwTxTopic';
    await cluster.createTopic(topic, { queues: 4 });
    const produce = (mode: string, extra: string[] = []) =>
      runCli([
        'produce',
        '--namesrv',
        cluster.namesrv,
        '--topic',
        topic,
        '--count',
        String(COUNT),
        '--body',
        mode,
        '--transaction',
        mode,
        '--group',
        `rw_tx_${mode}`,
        '--json',
        ...extra,
      ]);
    const began = Date.now();
    const commit = await produce('commit');
    t.equal(commit.code, 0, commit.stderr);
    const rollback = await produce('rollback');
    t.equal(rollback.code, 0, rollback.stderr);
    const checkBegan = Date.now();
    const check = await produce('check', ['--check-timeout', '60']);
    t.equal(check.code, 0, check.stderr);
    const checkMs = Date.now() - checkBegan;
    const summary = JSON.parse(check.stdout) as { transaction: Record<string, number> };
    t.match(summary.transaction, { checked: COUNT, committed: COUNT / 2, rolledBack: COUNT / 2, unchecked: 0 });
    t.comment(
      `rocketwire: 300 transactions in ${Date.now() - began} ms; the check run (send + every check-back answered) took ${checkMs} ms`,
    );

    const got = await javaConsume({
      namesrv: cluster.namesrv,
      topic,
      group: 'java_tx_cg',
      expect: 150,
      from: 'first',
      timeoutMs: 60_000,
    });
    t.equal(got.summary.received, 150);
    const seqs = (body: string) =>
      got.messages
        .filter((m) => Buffer.from(m.body ?? '', 'base64').toString() === body)
        .map((m) => Number(m.properties.seq))
        .sort((a, b) => a - b);
    t.same(
      seqs('commit'),
      Array.from({ length: COUNT }, (_, i) => i),
      'Java sees every committed message once',
    );
    t.same(seqs('check'), evens, 'and the 50 even checked ones');
    t.same(seqs('rollback'), [], 'no rolled back one');
    const m = got.messages.find((x) => Buffer.from(x.body ?? '', 'base64').toString() === 'commit')!;
    t.equal(m.sysFlag & 0xc, 8, 'stored as a commit (sysFlag TRANSACTION_COMMIT_TYPE)');
    // 5.3.3's EndTransactionProcessor writes the properties string before it clears these three
    // from the map, so the committed record keeps them; 5.5.0's clears REAL_TOPIC and REAL_QID
    // first, so only TRAN_MSG stays (docs/protocol-facts.md#transaction-commit)
    t.match(m.properties, { TRAN_MSG: 'true', __transactionId__: m.properties.UNIQ_KEY }, 'TRAN_MSG stays');
    if (V5_VERSION === V53_VERSION) {
      t.match(m.properties, { REAL_TOPIC: topic, REAL_QID: /^\d$/ }, '5.3.3: REAL_TOPIC and REAL_QID stay');
    } else {
      t.same(
        [m.properties.REAL_TOPIC, m.properties.REAL_QID],
        [undefined, undefined],
        `${V5_VERSION}: REAL_TOPIC and REAL_QID are gone`,
      );
    }
    t.equal(m.properties.PGROUP, 'rw_tx_commit');
    const max = (await brokerOffsets(cluster.namesrv, topic, 'java_tx_cg')).reduce((a, q) => a + q.max, 0);
    t.equal(max, 150, 'the broker holds exactly 150 messages on the topic');
  });

  t.test('Java TransactionMQProducer producing, rocketwire consuming', async (t) => {
    const topic = 'JavaTxTopic';
    await cluster.createTopic(topic, { queues: 4 });
    const { summary, checked } = await javaTxProduce({
      namesrv: cluster.namesrv,
      topic,
      group: 'java_tx_pg',
      commit: COUNT,
      rollback: COUNT,
      check: COUNT,
    });
    t.match(summary, {
      sent: 300,
      failed: 0,
      checked: COUNT,
      checkCommitted: COUNT / 2,
      checkRolledBack: COUNT / 2,
      unchecked: 0,
    });
    t.equal(checked.filter((c) => c.body !== 'check').length, 0, 'no committed or rolled back message was checked');
    t.comment(
      `Java: 300 transactions sent in ${summary.sentMs} ms, every check-back answered ${summary.elapsedMs} ms after the first send`,
    );

    const seen: MessageExt[] = [];
    const consumer = new PushConsumer({
      consumerGroup: 'rw_tx_cg',
      namesrvAddr: cluster.namesrv,
      consumeFromWhere: 'first',
    });
    consumer.subscribe(topic);
    await consumer.start((msgs) => {
      seen.push(...msgs);
      return 'CONSUME_SUCCESS';
    });
    t.teardown(() => consumer.shutdown());
    await until(() => seen.length >= 150, '150 consumed', 60_000);
    const seqs = (body: string) =>
      seen
        .filter((m) => String(m.body) === body)
        .map((m) => Number(m.properties.seq))
        .sort((a, b) => a - b);
    t.same(
      seqs('commit'),
      Array.from({ length: COUNT }, (_, i) => i),
      'rocketwire sees every committed message once',
    );
    t.same(
      seqs('check'),
      evens.map((s) => s + 2 * COUNT),
      'and the 50 even checked ones (seq 200..298: the index in the run)',
    );
    t.same(seqs('rollback'), []);
    const c = seen.find((m) => String(m.body) === 'check')!;
    t.equal(c.properties.TRANSACTION_CHECK_TIMES, '1', 'committed at its first check');
    const max = (await brokerOffsets(cluster.namesrv, topic, 'rw_tx_cg')).reduce((a, q) => a + q.max, 0);
    t.equal(max, 150, 'the broker holds exactly 150 messages on the topic');
  });
}
