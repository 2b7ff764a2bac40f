// expect: consumed 10 of 10 messages
// Consume concurrently, in the shape of a service: a push consumer takes every message of a topic,
// several handler calls at a time, commits each queue's offset as its messages are consumed, and
// runs until it is told to stop (SIGTERM from a process manager or Kubernetes, SIGINT from Ctrl-C),
// then shuts down cleanly. So that it also ends by itself, this one stops once it has every message.
import { Producer, PushConsumer } from 'rocketwire';

const namesrvAddr = process.env.NAMESRV_ADDR ?? '127.0.0.1:9876';
const topic = 'ExampleConcurrently';
const count = 10;

// A service runs until it is told to stop: SIGTERM (a process manager, Kubernetes) or SIGINT (Ctrl-C).
const stopped = new Promise((resolve) => {
  process.once('SIGTERM', resolve);
  process.once('SIGINT', resolve);
});

const producer = new Producer({ group: 'example_concurrently_pg', namesrvAddr });
await producer.start();
try {
  for (let i = 0; i < count; i++) await producer.send({ topic, body: `message ${i}`, tags: i % 2 ? 'odd' : 'even' });
} finally {
  await producer.shutdown();
}

const consumer = new PushConsumer({
  group: 'example_concurrently_cg',
  namesrvAddr,
  consumeFromWhere: 'first', // a group new to the broker starts at the oldest message
  consumeThreadMin: 4, // at most 4 handler calls at once
});
consumer.subscribe(topic, 'even || odd'); // a tag expression; '*' takes every tag

const seen = new Set();
let allSeen;
const done = new Promise((resolve) => {
  allSeen = resolve;
});
await consumer.start(async (msgs, ctx) => {
  for (const m of msgs) {
    console.log(`queue ${ctx.messageQueue.queueId} offset ${m.queueOffset} [${m.tags}] ${m.body}`);
    seen.add(m.body.toString());
  }
  if (seen.size >= count) allSeen();
  // Returning nothing acknowledges the messages; a throw (or ConsumeConcurrentlyStatus.RECONSUME_LATER)
  // has them redelivered later.
});
try {
  await until(done, 30_000, 'waiting for the messages');
} finally {
  await consumer.shutdown(); // waits for running handlers, persists the offsets, unregisters
}
console.log(`consumed ${seen.size} of ${count} messages`);

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
