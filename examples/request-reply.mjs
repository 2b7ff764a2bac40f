// expect: got 3 replies: re:ping 0, re:ping 1, re:ping 2
// Request–reply (Java's DefaultMQProducer.request): the requester sends a message and waits for
// the answer; a replier (a push consumer with a producer) answers with createReplyMessage, and the
// broker pushes the reply straight to the requester's connection. The replier is the service: it
// runs until SIGTERM or SIGINT, or until the requester here has its replies, then shuts down cleanly.
import { AdminClient, Producer, PushConsumer, createReplyMessage } from 'rocketwire';

const namesrvAddr = process.env.NAMESRV_ADDR ?? '127.0.0.1:9876';
const topic = 'ExampleEcho';

let stopping = false;
for (const signal of ['SIGTERM', 'SIGINT'])
  process.once(signal, () => {
    stopping = true;
  });

// The replier has to be subscribed before requests come, so the topic is created up front (as it
// would be on a real cluster) rather than by the first request.
const admin = new AdminClient({ namesrvAddr });
try {
  await admin.createOrUpdateTopic({ topic, readQueueNums: 4, writeQueueNums: 4 });
} finally {
  await admin.close();
}

const replier = new Producer({ group: 'example_echo_replier_pg', namesrvAddr });
const server = new PushConsumer({ group: 'example_echo_cg', namesrvAddr, consumeFromWhere: 'last' });
const requester = new Producer({ group: 'example_echo_requester_pg', namesrvAddr });
try {
  await replier.start();
  server.subscribe(topic);
  await server.start(async (msgs) => {
    for (const m of msgs) {
      console.log(`replier got "${m.body}" (correlation ${m.properties.CORRELATION_ID})`);
      await replier.send(createReplyMessage(m, `re:${m.body}`)); // or replier.sendReply(m, body)
    }
  });

  await requester.start();
  const replies = [];
  for (let i = 0; i < 3 && !stopping; i++) {
    // Resolves with the reply, or fails with RequestTimeoutError when none comes within 10 s.
    const reply = await requester.request({ topic, body: `ping ${i}` }, 10_000);
    replies.push(reply.body.toString());
  }
  console.log(`got ${replies.length} replies: ${replies.join(', ')}`);
} finally {
  await requester.shutdown();
  await server.shutdown();
  await replier.shutdown();
}
