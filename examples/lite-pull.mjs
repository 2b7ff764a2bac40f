// expect: polled 8 of 8 messages and committed them
// Lite pull (Java's DefaultLitePullConsumer): the application asks for messages with poll(); the
// consumer pulls ahead into a bounded cache, and commits what poll() returned. The poll loop runs
// until SIGTERM or SIGINT, or until it has every message, then shuts down cleanly.
import { Producer, LitePullConsumer } from 'rocketwire';

const namesrvAddr = process.env.NAMESRV_ADDR ?? '127.0.0.1:9876';
const topic = 'ExampleLitePull';
const count = 8;

let stopping = false;
for (const signal of ['SIGTERM', 'SIGINT'])
  process.once(signal, () => {
    stopping = true;
  });

const producer = new Producer({ group: 'example_lite_pg', namesrvAddr });
await producer.start();
try {
  for (let i = 0; i < count; i++) await producer.send({ topic, body: `item ${i}` });
} finally {
  await producer.shutdown();
}

const consumer = new LitePullConsumer({
  group: 'example_lite_cg',
  namesrvAddr,
  consumeFromWhere: 'first',
  autoCommit: false, // commit by hand below, after the work is done
});
consumer.subscribe(topic, '*'); // or consumer.assign(queues) for fixed queues without rebalance
await consumer.start();
try {
  let polled = 0;
  const deadline = Date.now() + 30_000;
  while (polled < count && !stopping) {
    if (Date.now() > deadline) throw new Error(`polled only ${polled} of ${count} messages`);
    const msgs = await consumer.poll(1000); // up to pullBatchSize of one queue, or [] after 1 s
    for (const m of msgs) console.log(`${m.brokerName}/${m.queueId}:${m.queueOffset} ${m.body}`);
    polled += msgs.length;
    await consumer.commitSync(); // what poll() returned is done: commit it
  }
  await consumer.commitSync({ persist: true }); // persist: send the offsets to the broker now
  for (const mq of consumer.assignment()) {
    const committed = await consumer.committed(mq);
    if (committed > 0) console.log(`queue ${mq.queueId} committed at ${committed}`);
  }
  console.log(`polled ${polled} of ${count} messages and committed them`);
} finally {
  await consumer.shutdown(); // persists what was committed
}
