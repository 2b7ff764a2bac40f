// expect: payment-7 confirmed by the check-back
// Testing your own code with rocketwire/testing: an embedded broker and the clients share one
// ManualClock, so the broker's transaction check-back (30 s after the send on Apache's broker) runs
// as soon as the test advances the clock. Runs with node:test (`node --test examples/testing.mjs`,
// or `node examples/testing.mjs`); it needs no NAMESRV_ADDR: the cluster is its own.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LocalTransactionState } from 'rocketwire';
import { startTestCluster } from 'rocketwire/testing';

// The application code under test: a payment service whose local transaction cannot tell yet
// whether the payment went through, and whose check-back looks it up.
function paymentListener(ledger) {
  return {
    executeLocalTransaction: () => LocalTransactionState.UNKNOW,
    checkLocalTransaction: (msg) =>
      ledger.has(String(msg.body)) ? LocalTransactionState.COMMIT_MESSAGE : LocalTransactionState.ROLLBACK_MESSAGE,
  };
}

test('a payment left unknown is confirmed by the check-back', async () => {
  const cluster = await startTestCluster();
  try {
    await paymentFlow(cluster);
  } finally {
    await cluster.close(); // every client made by the cluster, then the broker
  }
});

async function paymentFlow(cluster) {
  const ledger = new Set(['payment-7']);
  const producer = cluster.transactionProducer({ group: 'payments_pg', transactionListener: paymentListener(ledger) });
  await producer.start();
  await producer.sendMessageInTransaction({ topic: 'Payments', body: 'payment-7' });

  const confirmed = [];
  const consumer = cluster.pushConsumer({ group: 'shipping_cg', consumeFromWhere: 'first' });
  consumer.subscribe('Payments', '*');
  await consumer.start({ eachMessage: (msg) => void confirmed.push(String(msg.body)) });

  assert.deepEqual(confirmed, [], 'nothing is visible before the check-back');
  await cluster.advance('1m'); // the broker's check runs; the listener answers COMMIT_MESSAGE
  await cluster.waitFor(() => confirmed.length === 1, { what: 'the confirmed payment' });
  assert.deepEqual(confirmed, ['payment-7']);
  console.log('payment-7 confirmed by the check-back');
}
