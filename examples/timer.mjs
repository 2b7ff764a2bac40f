// expect: the delayed message arrived after its delay
// Timer messages (5.x brokers): delayMs or deliverAt hold a message at the broker until its time
// (Java's setDelayTimeMs / setDeliverTimeMs). delayTimeLevel (1..18) is the older fixed-level form.
// Runs until SIGTERM or SIGINT, or until the message came, then shuts down cleanly.
import { Producer, PushConsumer } from 'rocketwire';

const namesrvAddr = process.env.NAMESRV_ADDR ?? '127.0.0.1:9876';
const topic = 'ExampleTimer';
const delayMs = 2000;

// A service runs until it is told to stop: SIGTERM (a process manager, Kubernetes) or SIGINT (Ctrl-C).
const stopped = new Promise((resolve) => {
  process.once('SIGTERM', resolve);
  process.once('SIGINT', resolve);
});

const producer = new Producer({ group: 'example_timer_pg', namesrvAddr });
await producer.start();
let sentAt;
let r;
try {
  sentAt = Date.now();
  r = await producer.send({ topic, body: 'wake me later', delayMs }); // or deliverAt: Date.now() + 2000
  console.log(`sent ${r.msgId} with delayMs ${delayMs}`);
} finally {
  await producer.shutdown();
}

// The consumer starts after the send, which created the topic, and well before the delay is over.
const consumer = new PushConsumer({ group: 'example_timer_cg', namesrvAddr, consumeFromWhere: 'first' });
consumer.subscribe(topic);
let arrived;
const delivered = new Promise((resolve) => {
  arrived = resolve;
});
await consumer.start((msgs) => {
  for (const m of msgs) if (m.msgId === r.msgId) arrived({ m, waited: Date.now() - sentAt });
});
let got;
try {
  got = await until(delivered, 30_000, 'waiting for the delayed message');
} finally {
  await consumer.shutdown();
}
if (got !== 'stopped') {
  const { m, waited } = got;
  console.log(`received "${m.body}" after ${waited} ms`);
  // Java's broker floors the time to its timerPrecisionMs (1 s by default), so allow that much.
  if (waited < delayMs - 1000) throw new Error(`delivered after ${waited} ms, before its delay`);
  console.log('the delayed message arrived after its delay');
}

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
