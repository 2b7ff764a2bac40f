// expect: the delayed message arrived after its delay
// Timer messages (5.x brokers): delayMs or deliverAt hold a message at the broker until its time
// (Java's setDelayTimeMs / setDeliverTimeMs). delayTimeLevel (1..18) is the older fixed-level form.
import { Producer, PushConsumer, ConsumeConcurrentlyStatus } from 'rocketwire';

const namesrvAddr = process.env.ROCKETWIRE_NAMESRV ?? '127.0.0.1:9876';
const topic = 'ExampleTimer';
const delayMs = 2000;

const producer = new Producer({ group: 'example_timer_pg', namesrvAddr });
await producer.start();
const sentAt = Date.now();
const r = await producer.send({ topic, body: 'wake me later', delayMs }); // or deliverAt: Date.now() + 2000
console.log(`sent ${r.msgId} with delayMs ${delayMs}`);
await producer.shutdown();

// The consumer starts after the send, which created the topic, and well before the delay is over.
const consumer = new PushConsumer({ consumerGroup: 'example_timer_cg', namesrvAddr, consumeFromWhere: 'first' });
consumer.subscribe(topic);
let arrived;
const delivered = new Promise((resolve) => { arrived = resolve; });
await consumer.start((msgs) => {
  for (const m of msgs) if (m.msgId === r.msgId) arrived(m);
  return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
});

const m = await withTimeout(delivered, 30_000, 'waiting for the delayed message');
const waited = Date.now() - sentAt;
console.log(`received "${m.body}" after ${waited} ms`);
await consumer.shutdown();
// Java's broker floors the time to its timerPrecisionMs (1 s by default), so allow that much.
if (waited < delayMs - 1000) throw new Error(`delivered after ${waited} ms, before its delay`);
console.log('the delayed message arrived after its delay');

function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`timed out ${what}`)), ms); });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
