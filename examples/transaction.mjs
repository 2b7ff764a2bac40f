// expect: consumed order-commit and order-checked; order-rollback never arrived
// Transactions: a half message is stored but invisible; the local transaction then commits it,
// rolls it back, or answers UNKNOW, in which case the broker asks checkLocalTransaction later
// (every transactionCheckInterval, 30 s on Apache's broker, for half messages older than
// transactionTimeOut, 6 s).
import { TransactionProducer, PushConsumer, ConsumeConcurrentlyStatus } from 'rocketwire';

const namesrvAddr = process.env.ROCKETWIRE_NAMESRV ?? '127.0.0.1:9876';
const topic = 'ExampleTransaction';

// What the local transaction decides for each order, and what the check-back finds out later.
const decisions = { 'order-commit': 'COMMIT_MESSAGE', 'order-rollback': 'ROLLBACK_MESSAGE', 'order-checked': 'UNKNOW' };
const tx = new TransactionProducer({
  group: 'example_tx_pg',
  namesrvAddr,
  transactionListener: {
    executeLocalTransaction: (msg) => decisions[msg.keys[0]],
    checkLocalTransaction: (msg) => {
      console.log(`check-back for ${msg.keys.join(' ')}: commit`);
      return 'COMMIT_MESSAGE';
    },
  },
});
await tx.start();
for (const keys of Object.keys(decisions)) {
  const r = await tx.sendMessageInTransaction({ topic, body: `${keys} body`, keys: [keys] });
  console.log(`${keys}: half message ${r.status}, local transaction ${r.localTransactionState}`);
}

const consumer = new PushConsumer({ consumerGroup: 'example_tx_cg', namesrvAddr, consumeFromWhere: 'first' });
consumer.subscribe(topic);
const got = new Set();
let bothSeen;
const done = new Promise((resolve) => { bothSeen = resolve; });
await consumer.start((msgs) => {
  for (const m of msgs) {
    console.log(`consumed ${m.keys[0]}`);
    got.add(m.keys[0]);
  }
  if (got.has('order-commit') && got.has('order-checked')) bothSeen();
  return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
});
// The producer must stay up until the check-back came: it is the one the broker asks.
await withTimeout(done, 90_000, 'waiting for the committed messages');
await consumer.shutdown();
await tx.shutdown();
if (got.has('order-rollback')) throw new Error('a rolled back message was delivered');
console.log('consumed order-commit and order-checked; order-rollback never arrived');

function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`timed out ${what}`)), ms); });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
