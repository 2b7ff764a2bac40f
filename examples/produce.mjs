// expect: sent 5 messages to ExampleProduce
// Produce: a producer sends a few messages one by one, then a batch, and prints where each landed.
import { Producer } from 'rocketwire';

const namesrvAddr = process.env.NAMESRV_ADDR ?? '127.0.0.1:9876';
const topic = 'ExampleProduce';

// A service stops on SIGTERM (a process manager, Kubernetes) or SIGINT (Ctrl-C): finish the send
// in flight, then shut down (which unregisters the producer from the brokers).
let stopping = false;
for (const signal of ['SIGTERM', 'SIGINT'])
  process.once(signal, () => {
    stopping = true;
  });

const producer = new Producer({ group: 'example_produce_pg', namesrvAddr });
await producer.start(); // rejects with NameServerUnavailableError when no name server answers
try {
  let sent = 0;
  for (let i = 0; i < 3 && !stopping; i++) {
    // Consumers filter on tags; `rocketwire admin message key` finds a message by its keys.
    const r = await producer.send({ topic, body: `hello ${i}`, tags: 'TagA', keys: [`order-${i}`] });
    console.log(
      `${r.status} ${r.msgId} -> ${r.messageQueue.brokerName}/${r.messageQueue.queueId} offset ${r.queueOffset}`,
    );
    sent++;
  }
  // A batch goes to one queue in one request (same topic, no delay, no transaction).
  const batch = [
    { topic, body: 'batched 0' },
    { topic, body: 'batched 1' },
  ];
  const r = await producer.sendBatch(batch);
  console.log(`batch ${r.status} -> ${r.messageQueue.brokerName}/${r.messageQueue.queueId} offset ${r.queueOffset}`);
  sent += batch.length;
  console.log(`sent ${sent} messages to ${topic}`);
} finally {
  await producer.shutdown();
}
