// expect: both consumers got all 4 messages
// Broadcast: with messageModel BROADCASTING every consumer of the group gets every message (no
// queue allocation); each keeps its own offsets in a local file instead of at the broker. Both run
// until SIGTERM or SIGINT, or until each has every message, then shut down cleanly.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Producer, PushConsumer } from 'rocketwire';

const namesrvAddr = process.env.NAMESRV_ADDR ?? '127.0.0.1:9876';
const topic = 'ExampleBroadcast';
const count = 4;

// A service runs until it is told to stop: SIGTERM (a process manager, Kubernetes) or SIGINT (Ctrl-C).
const stopped = new Promise((resolve) => {
  process.once('SIGTERM', resolve);
  process.once('SIGINT', resolve);
});

const producer = new Producer({ group: 'example_broadcast_pg', namesrvAddr });
await producer.start();
try {
  for (let i = 0; i < count; i++) await producer.send({ topic, body: `notice ${i}` });
} finally {
  await producer.shutdown();
}

// Two members of one group in one process: each needs its own instanceName (its own clientId), as
// two processes would have. Their offsets go to <offsetStoreDir>/<clientId>/<group>/offsets.json
// (default ~/.rocketmq_offsets); a fresh folder here, so that each run starts from the first message.
const offsetStoreDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rocketwire-example-offsets-'));
const members = [];
try {
  for (const name of ['A', 'B']) {
    const seen = new Set();
    let allSeen;
    const done = new Promise((resolve) => {
      allSeen = resolve;
    });
    const consumer = new PushConsumer({
      group: 'example_broadcast_cg',
      namesrvAddr,
      messageModel: 'BROADCASTING',
      consumeFromWhere: 'first',
      instanceName: `example-broadcast-${name}`,
      offsetStoreDir,
    });
    consumer.subscribe(topic);
    await consumer.start((msgs) => {
      for (const m of msgs) {
        console.log(`consumer ${name}: ${m.body}`);
        seen.add(m.body.toString());
      }
      if (seen.size >= count) allSeen();
      // returning nothing: consumed
    });
    members.push({ consumer, done });
  }
  if ((await until(Promise.all(members.map((m) => m.done)), 30_000, 'waiting for both consumers')) !== 'stopped') {
    console.log(`both consumers got all ${count} messages`);
  }
} finally {
  for (const m of members) await m.consumer.shutdown(); // persists each member's offsets file
  fs.rmSync(offsetStoreDir, { recursive: true, force: true });
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
