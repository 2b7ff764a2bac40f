// expect: every order's steps arrived in order (3 orders, 9 messages)
// Consume orderly: messages of one order go to one queue (a selector on the order id), and an
// orderly consumer handles each queue one call at a time, holding the queue's lock at the broker,
// so each order's steps are seen in the order they were sent. It runs until SIGTERM or SIGINT, or
// until it has every message, then shuts down cleanly.
import { Producer, PushConsumer, ConsumeOrderlyStatus, selectMessageQueueByHash } from 'rocketwire';

const namesrvAddr = process.env.NAMESRV_ADDR ?? '127.0.0.1:9876';
const topic = 'ExampleOrderly';
const orders = ['order-1', 'order-2', 'order-3'];
const steps = ['created', 'paid', 'shipped'];

// A service runs until it is told to stop: SIGTERM (a process manager, Kubernetes) or SIGINT (Ctrl-C).
const stopped = new Promise((resolve) => {
  process.once('SIGTERM', resolve);
  process.once('SIGINT', resolve);
});

const producer = new Producer({ group: 'example_orderly_pg', namesrvAddr });
await producer.start();
try {
  for (const step of steps) {
    for (const order of orders) {
      // Same arg, same queue: selectMessageQueueByHash picks queues[hash(arg) % queues.length].
      await producer.send(
        { topic, body: `${order} ${step}`, keys: [order] },
        { selector: selectMessageQueueByHash, arg: order },
      );
    }
  }
} finally {
  await producer.shutdown();
}

const consumer = new PushConsumer({
  group: 'example_orderly_cg',
  namesrvAddr,
  consumeFromWhere: 'first',
  orderly: true,
});
consumer.subscribe(topic);

const seen = new Map(orders.map((o) => [o, []]));
let received = 0;
let allSeen;
const done = new Promise((resolve) => {
  allSeen = resolve;
});
await consumer.start((msgs, ctx) => {
  for (const m of msgs) {
    const [order, step] = m.body.toString().split(' ');
    console.log(`queue ${ctx.messageQueue.queueId}: ${order} ${step}`);
    seen.get(order)?.push(step);
    received++;
  }
  if (received >= orders.length * steps.length) allSeen();
  // SUCCESS (or returning nothing) moves on; SUSPEND_CURRENT_QUEUE_A_MOMENT (or a throw) retries
  // this queue's messages after a moment, keeping their order.
  return ConsumeOrderlyStatus.SUCCESS;
});
try {
  await until(done, 30_000, 'waiting for the messages');
} finally {
  await consumer.shutdown(); // waits for the running call, persists the offsets, unlocks the queues
}

for (const [order, got] of seen) {
  if (got.join() !== steps.slice(0, got.length).join()) throw new Error(`${order} arrived as ${got.join(', ')}`);
}
console.log(`every order's steps arrived in order (${orders.length} orders, ${received} messages)`);

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
