// expect: acked 5 messages received by POP
// POP (5.x brokers): SimpleConsumer asks the broker for messages (POP_MESSAGE); the broker keeps
// them invisible to the group for a while and redelivers whatever is not acked in time. No
// rebalance and no offsets on the client. The receive loop runs until SIGTERM or SIGINT, or until
// every message is acked, then shuts down cleanly.
import { Producer, SimpleConsumer } from 'rocketwire';

const namesrvAddr = process.env.NAMESRV_ADDR ?? '127.0.0.1:9876';
const topic = 'ExamplePop';
const count = 5;

let stopping = false;
for (const signal of ['SIGTERM', 'SIGINT'])
  process.once(signal, () => {
    stopping = true;
  });

const producer = new Producer({ group: 'example_pop_pg', namesrvAddr });
await producer.start();
try {
  for (let i = 0; i < count; i++) await producer.send({ topic, body: `job ${i}` });
} finally {
  await producer.shutdown();
}

const consumer = new SimpleConsumer({
  namesrvAddr,
  group: 'example_pop_cg',
  topic,
  initMode: 'MIN', // a new group starts at the oldest message
  awaitDurationMs: 2000, // long-poll at most 2 s when nothing is there
});
await consumer.start();
try {
  let acked = 0;
  let skipped = false;
  const deadline = Date.now() + 30_000;
  while (acked < count && !stopping) {
    if (Date.now() > deadline) throw new Error(`acked only ${acked} of ${count} messages`);
    const msgs = await consumer.receive(16, 30_000); // up to 16, invisible to the group for 30 s
    for (const m of msgs) {
      if (!skipped && m.body.toString() === 'job 0') {
        // Not acked, a message comes back when its invisible time is over: here after 1 s.
        skipped = true;
        await consumer.changeInvisibleDuration(m, 1000);
        console.log(`not acked: ${m.body} (reconsumeTimes ${m.reconsumeTimes}), back in 1 s`);
        continue;
      }
      const status = await consumer.ack(m); // 'OK', or 'NO_EXIST' when its receipt handle expired
      console.log(`${m.body} from ${m.brokerName}/${m.queueId} (reconsumeTimes ${m.reconsumeTimes}): ack ${status}`);
      if (status === 'OK') acked++;
    }
  }
  console.log(`acked ${acked} messages received by POP`);
} finally {
  await consumer.shutdown();
}
