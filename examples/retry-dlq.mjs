// expect: the message went to %DLQ%example_retry_cg after 3 attempts
// Retry and DLQ: a handler that fails has its message sent back to the broker, which redelivers
// it later through %RETRY%<group>; after maxReconsumeTimes retries it goes to %DLQ%<group>, a
// topic that any other group can read. Runs until SIGTERM or SIGINT, or until it has read the
// message from the DLQ, then shuts down cleanly.
import { Producer, PushConsumer, ConsumeConcurrentlyStatus } from 'rocketwire';

const namesrvAddr = process.env.NAMESRV_ADDR ?? '127.0.0.1:9876';
const topic = 'ExampleRetry';
const group = 'example_retry_cg';
const maxReconsumeTimes = 2; // the first delivery and 2 retries, then the DLQ

// A service runs until it is told to stop: SIGTERM (a process manager, Kubernetes) or SIGINT (Ctrl-C).
const stopped = new Promise((resolve) => {
  process.once('SIGTERM', resolve);
  process.once('SIGINT', resolve);
});

const producer = new Producer({ group: 'example_retry_pg', namesrvAddr });
await producer.start();
let sent;
try {
  sent = await producer.send({ topic, body: 'cannot be processed', keys: ['poison-1'] });
} finally {
  await producer.shutdown();
}

const consumer = new PushConsumer({ group, namesrvAddr, consumeFromWhere: 'first', maxReconsumeTimes });
consumer.subscribe(topic);
let attempts = 0;
let lastAttempt;
const failedForGood = new Promise((resolve) => {
  lastAttempt = resolve;
});
await consumer.start((msgs, ctx) => {
  for (const m of msgs) {
    if (m.msgId !== sent.msgId) continue;
    attempts++;
    console.log(`attempt ${attempts}: reconsumeTimes ${m.reconsumeTimes}, topic ${m.topic}`);
    if (m.reconsumeTimes >= maxReconsumeTimes) lastAttempt();
  }
  // The next delivery waits delay level 1 (1 s); by default the broker picks 3 + reconsumeTimes
  // (10 s, 30 s, 1 min...). -1 would send the message straight to the DLQ.
  ctx.delayLevelWhenNextConsume = 1;
  return ConsumeConcurrentlyStatus.RECONSUME_LATER; // a throw does the same
});

// Read the DLQ with a group of its own. The broker creates the DLQ with its first dead letter, which
// may come just after the attempt above; until then each rebalance round (every 20 s by default,
// here every second) finds no route and tries again.
const dlqTopic = `%DLQ%${group}`;
const reader = new PushConsumer({
  group: 'example_retry_dlq_reader',
  namesrvAddr,
  consumeFromWhere: 'first',
  rebalanceIntervalMs: 1000,
});
let found;
const inDlq = new Promise((resolve) => {
  found = resolve;
});
let deadLetter = false;
try {
  if ((await until(failedForGood, 30_000, 'waiting for the retries')) !== 'stopped') {
    reader.subscribe(dlqTopic);
    await reader.start((msgs) => {
      for (const m of msgs) {
        console.log(
          `${dlqTopic}: ${m.body} (keys ${m.keys.join(' ')}, reconsumeTimes ${m.reconsumeTimes}, from ${m.properties.RETRY_TOPIC})`,
        );
        if (m.keys.includes('poison-1')) found();
      }
    });
    deadLetter = (await until(inDlq, 30_000, `waiting for the message in ${dlqTopic}`)) !== 'stopped';
  }
} finally {
  await reader.shutdown();
  await consumer.shutdown();
}
if (deadLetter) console.log(`the message went to ${dlqTopic} after ${attempts} attempts`);

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
