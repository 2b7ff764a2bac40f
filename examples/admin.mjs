// expect: example_admin_cg: total lag 3 on ExampleAdmin
// Admin (Java's mqadmin / DefaultMQAdminExt): the cluster's brokers, a topic created and looked
// at, a consumer group's progress (lag per queue) and a message found by its key.
import { AdminClient, Producer, PushConsumer } from 'rocketwire';

const namesrvAddr = process.env.NAMESRV_ADDR ?? '127.0.0.1:9876';
const topic = 'ExampleAdmin';
const group = 'example_admin_cg';

const admin = new AdminClient({ namesrvAddr });
try {
  for (const b of await admin.cluster())
    console.log(`cluster ${b.clusterName}: ${b.brokerName} ${b.role} ${b.addr} ${b.version ?? '?'}`);

  // updateTopic: on every master the name server knows (clusterName or brokerAddr to narrow it).
  const on = await admin.createOrUpdateTopic({ topic, readQueueNums: 2, writeQueueNums: 2 });
  console.log(`created ${topic} on ${on.join(', ')}`);

  // Five messages, all consumed by the group; then three more that nobody consumed yet.
  const producer = new Producer({ group: 'example_admin_pg', namesrvAddr });
  await producer.start();
  try {
    for (let i = 0; i < 5; i++) await producer.send({ topic, body: `first ${i}`, keys: [`admin-key-${i}`] });
    await consumeAll(5);
    for (let i = 0; i < 3; i++) await producer.send({ topic, body: `later ${i}` });
  } finally {
    await producer.shutdown();
  }

  for (const q of await admin.topicStatus(topic))
    console.log(`${topic} ${q.brokerName}/${q.queueId}: offsets ${q.minOffset}..${q.maxOffset}`);

  // consumerProgress: what `mqadmin consumerProgress -g` prints, per queue and in total.
  const progress = await admin.consumerProgress(group, topic);
  for (const q of progress.queues) {
    console.log(
      `${q.topic} ${q.brokerName}/${q.queueId}: broker ${q.brokerOffset} consumer ${q.consumerOffset} lag ${q.lag}`,
    );
  }

  // queryMsgByKey: the broker's key index.
  for (const found of await admin.messageByKey(topic, 'admin-key-2')) {
    console.log(
      `key admin-key-2: "${found.message.body}" at ${found.brokerName}/${found.message.queueId}:${found.message.queueOffset}`,
    );
  }
  console.log(`${group}: total lag ${progress.totalLag} on ${topic}`);
} finally {
  await admin.close();
}

/** Runs the group until it consumed `n` messages, then stops it (which persists its offsets). */
async function consumeAll(n) {
  const consumer = new PushConsumer({ group, namesrvAddr, consumeFromWhere: 'first' });
  consumer.subscribe(topic);
  let count = 0;
  let allSeen;
  const done = new Promise((resolve) => {
    allSeen = resolve;
  });
  await consumer.start((msgs) => {
    count += msgs.length;
    if (count >= n) allSeen();
    // returning nothing: consumed
  });
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error('timed out waiting for the messages')), 30_000);
  });
  try {
    await Promise.race([done, timeout]).finally(() => clearTimeout(timer));
  } finally {
    await consumer.shutdown();
  }
}
