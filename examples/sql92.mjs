// expect: the SQL92 filter let through 3 of 6 messages
// SQL92 filters: the broker evaluates an expression over message properties (TAGS included) and
// hands the consumer only the messages that match. The broker must run with
// enablePropertyFilter=true (`rocketwire broker --enable-property-filter`); otherwise start()
// fails with SqlFilterRefusedError. Runs until SIGTERM or SIGINT, or until the matching messages
// came, then shuts down cleanly.
import { Producer, PushConsumer } from 'rocketwire';

const namesrvAddr = process.env.NAMESRV_ADDR ?? '127.0.0.1:9876';
const topic = 'ExampleSql92';
const sql = "amount BETWEEN 100 AND 999 AND TAGS = 'paid'";

// A service runs until it is told to stop: SIGTERM (a process manager, Kubernetes) or SIGINT (Ctrl-C).
const stopped = new Promise((resolve) => {
  process.once('SIGTERM', resolve);
  process.once('SIGINT', resolve);
});

const producer = new Producer({ group: 'example_sql92_pg', namesrvAddr });
await producer.start();
const messages = [
  { amount: 50, tags: 'paid' },
  { amount: 150, tags: 'paid' },
  { amount: 500, tags: 'paid' },
  { amount: 500, tags: 'refunded' },
  { amount: 999, tags: 'paid' },
  { amount: 5000, tags: 'paid' },
];
try {
  for (const [i, m] of messages.entries()) {
    // properties: your own properties, which SQL92 expressions read (values are strings).
    await producer.send({ topic, body: `payment ${i}`, tags: m.tags, properties: { amount: String(m.amount) } });
  }
} finally {
  await producer.shutdown();
}

const consumer = new PushConsumer({ group: 'example_sql92_cg', namesrvAddr, consumeFromWhere: 'first' });
consumer.subscribe(topic, { sql }); // parsed here: a bad expression throws, naming its position
const matched = [];
let allMatched;
const done = new Promise((resolve) => {
  allMatched = resolve;
});
const expected = messages.filter((m) => m.amount >= 100 && m.amount <= 999 && m.tags === 'paid').length;
await consumer.start((msgs) => {
  for (const m of msgs) {
    // userProperties: exactly what the producer set; m.properties also has RocketMQ's own.
    console.log(`${m.body}: amount ${m.userProperties.amount}, tags ${m.tags}`);
    matched.push(m);
  }
  if (matched.length >= expected) allMatched();
});
try {
  await until(done, 30_000, 'waiting for the matching messages');
} finally {
  await consumer.shutdown();
}
console.log(`the SQL92 filter let through ${matched.length} of ${messages.length} messages`);

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
