// expect: consumed order-commit and order-checked; order-rollback never arrived
// Transactions: a half message is stored but invisible; the local transaction then commits it,
// rolls it back, or answers UNKNOW, in which case the broker asks checkLocalTransaction later
// (every transactionCheckInterval, 30 s on Apache's broker, for half messages older than
// transactionTimeOut, 6 s). Runs until SIGTERM or SIGINT, or until both committed messages were
// consumed, then shuts down cleanly.
import { TransactionProducer, PushConsumer, LocalTransactionState } from 'rocketwire';

const namesrvAddr = process.env.NAMESRV_ADDR ?? '127.0.0.1:9876';
const topic = 'ExampleTransaction';

// A service runs until it is told to stop: SIGTERM (a process manager, Kubernetes) or SIGINT (Ctrl-C).
const stopped = new Promise((resolve) => {
  process.once('SIGTERM', resolve);
  process.once('SIGINT', resolve);
});

// What the local transaction decides for each order, and what the check-back finds out later.
const decisions = {
  'order-commit': LocalTransactionState.COMMIT_MESSAGE,
  'order-rollback': LocalTransactionState.ROLLBACK_MESSAGE,
  'order-checked': LocalTransactionState.UNKNOW, // Java's spelling
};
const tx = new TransactionProducer({
  group: 'example_tx_pg',
  namesrvAddr,
  transactionListener: {
    // Either may be async; a throw, or no answer within checkTimeoutMs, answers UNKNOW.
    executeLocalTransaction: (msg) => decisions[msg.keys[0]],
    checkLocalTransaction: async (msg) => {
      console.log(`check-back for ${msg.keys[0]}: commit`);
      return LocalTransactionState.COMMIT_MESSAGE;
    },
  },
});
await tx.start();
const consumer = new PushConsumer({ group: 'example_tx_cg', namesrvAddr, consumeFromWhere: 'first' });
const got = new Set();
try {
  for (const key of Object.keys(decisions)) {
    const r = await tx.sendMessageInTransaction({ topic, body: `${key} body`, keys: [key] });
    console.log(`${key}: half message ${r.status}, local transaction ${r.localTransactionState}`);
  }

  consumer.subscribe(topic);
  let bothSeen;
  const done = new Promise((resolve) => {
    bothSeen = resolve;
  });
  await consumer.start((msgs) => {
    for (const m of msgs) {
      console.log(`consumed ${m.keys[0]}`);
      got.add(m.keys[0]);
    }
    if (got.has('order-commit') && got.has('order-checked')) bothSeen();
  });
  // The producer must stay up until the check-back came: it is the one the broker asks.
  await until(done, 90_000, 'waiting for the committed messages');
} finally {
  await consumer.shutdown();
  await tx.shutdown();
}
if (got.has('order-rollback')) throw new Error('a rolled back message was delivered');
if (got.has('order-commit') && got.has('order-checked'))
  console.log('consumed order-commit and order-checked; order-rollback never arrived');

/**
 * Waits for `promise` or for the service to be told to stop, whichever comes first: its value, or
 * 'stopped'. Taking longer than `ms` is a failure (the timer never outlives the wait, so a stopped
 * script exits at once).
 */
function until(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out ${what}`)), ms);
  });
  return Promise.race([promise, stopped.then(() => 'stopped'), timeout]).finally(() => clearTimeout(timer));
}
