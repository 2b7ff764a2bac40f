// Request–reply peer of rocketwire's interop suite (5.x only): the stock Java client's replier
// (push consumer + MessageUtil.createReplyMessage + producer.send) and requester
// (DefaultMQProducer.request), printing one JSON object per line as RefClient does.
//
//   replier   --namesrv A --topic T --group G [--count N] [--timeout-ms M]
//             answers each request with body "re:" + its body; prints "started", then one
//             "replied" line per request (the request's properties, the reply's send status), and
//             exits after N replies (0: runs for timeout-ms)
//   requester --namesrv A --topic T --count N [--timeout-ms M] [--group G]
//             N sequential DefaultMQProducer.request calls with body "q<i>"; one "reply" line each
//             (round-trip latency in µs, the reply's body and properties), then a "summary" with the
//             median and p99 latency

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.utils.MessageUtil;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;

public final class ReplyClient {
    public static void main(String[] argv) {
        if (argv.length == 0) RefClient.fail("usage: ReplyClient replier|requester [options]");
        Map<String, String> o = RefClient.parse(argv);
        try {
            switch (argv[0]) {
                case "replier": replier(o); break;
                case "requester": requester(o); break;
                default: RefClient.fail("unknown command " + argv[0]);
            }
        } catch (Throwable e) {
            RefClient.fail(e.getClass().getName() + ": " + e.getMessage());
        }
        System.exit(0);
    }

    private static void replier(Map<String, String> o) throws Exception {
        String topic = RefClient.req(o, "topic");
        long count = Long.parseLong(o.getOrDefault("count", "0"));
        long timeoutMs = Long.parseLong(o.getOrDefault("timeout-ms", "60000"));
        String tag = "ref-reply-" + ProcessHandle.current().pid();
        DefaultMQProducer producer = new DefaultMQProducer(tag + "-pg", RefClient.hook(o));
        producer.setNamesrvAddr(RefClient.req(o, "namesrv"));
        producer.setInstanceName(tag);
        producer.setSendMsgTimeout(10000);
        producer.start();
        DefaultMQPushConsumer c = new DefaultMQPushConsumer(RefClient.req(o, "group"), RefClient.hook(o), new org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueAveragely());
        c.setNamesrvAddr(RefClient.req(o, "namesrv"));
        RefClient.healHeartbeatRace(c);
        c.setInstanceName(tag);
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.subscribe(topic, "*");
        AtomicLong replied = new AtomicLong();
        CountDownLatch done = new CountDownLatch(1);
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            for (MessageExt m : msgs) {
                byte[] body = ("re:" + new String(m.getBody(), StandardCharsets.UTF_8)).getBytes(StandardCharsets.UTF_8);
                RefClient.Json j = new RefClient.Json().put("type", "replied")
                    .put("requestProperties", new TreeMap<>(m.getProperties()));
                try {
                    Message reply = MessageUtil.createReplyMessage(m, body);
                    SendResult r = producer.send(reply, 10000);
                    j.put("replyTopic", reply.getTopic()).put("status", r.getSendStatus().name())
                        .put("msgId", r.getMsgId()).put("offsetMsgId", r.getOffsetMsgId());
                } catch (Exception e) {
                    j.put("error", e.getClass().getSimpleName() + ": " + e.getMessage());
                }
                RefClient.print(j);
                if (replied.incrementAndGet() == count) done.countDown();
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        c.start();
        RefClient.print(new RefClient.Json().put("type", "started").put("topic", topic));
        boolean ok = count > 0 ? done.await(timeoutMs, TimeUnit.MILLISECONDS) : RefClient.sleep(timeoutMs);
        c.shutdown();
        producer.shutdown();
        RefClient.print(new RefClient.Json().put("type", "summary").put("replied", replied.get()).put("complete", ok));
        if (!ok) System.exit(3);
    }

    private static void requester(Map<String, String> o) throws Exception {
        String topic = RefClient.req(o, "topic");
        int count = Integer.parseInt(o.getOrDefault("count", "1"));
        long timeoutMs = Long.parseLong(o.getOrDefault("timeout-ms", "10000"));
        String tag = "ref-request-" + ProcessHandle.current().pid();
        DefaultMQProducer p = new DefaultMQProducer(o.getOrDefault("group", tag + "-pg"), RefClient.hook(o));
        p.setNamesrvAddr(RefClient.req(o, "namesrv"));
        p.setInstanceName(tag);
        p.start();
        RefClient.print(new RefClient.Json().put("type", "started").put("clientId", p.buildMQClientId()));
        List<Long> micros = new ArrayList<>();
        int failed = 0;
        for (int i = 0; i < count; i++) {
            Message m = new Message(topic, ("q" + i).getBytes(StandardCharsets.UTF_8));
            long t0 = System.nanoTime();
            try {
                Message reply = p.request(m, timeoutMs);
                long us = (System.nanoTime() - t0) / 1000;
                micros.add(us);
                RefClient.print(new RefClient.Json().put("type", "reply").put("i", i).put("latencyUs", us)
                    .put("body", new String(reply.getBody(), StandardCharsets.UTF_8))
                    .put("properties", new TreeMap<>(reply.getProperties())));
            } catch (Exception e) {
                failed++;
                RefClient.print(new RefClient.Json().put("type", "error").put("i", i).put("error", e.getClass().getSimpleName() + ": " + e.getMessage()));
            }
        }
        p.shutdown();
        Collections.sort(micros);
        RefClient.Json s = new RefClient.Json().put("type", "summary").put("replies", micros.size()).put("failed", failed);
        if (!micros.isEmpty()) {
            s.put("medianUs", micros.get(micros.size() / 2))
                .put("p99Us", micros.get(Math.min(micros.size() - 1, (int) Math.ceil(micros.size() * 0.99) - 1)))
                .put("maxUs", micros.get(micros.size() - 1));
        }
        RefClient.print(s);
        if (failed > 0) System.exit(1);
    }
}
