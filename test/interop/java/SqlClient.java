import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.MessageSelector;
import org.apache.rocketmq.client.consumer.listener.ConsumeOrderlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerOrderly;
import org.apache.rocketmq.client.exception.MQClientException;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;

/**
 * The Java side of the SQL92 interop proofs (test/interop/real-broker-sql.test.ts), one JVM per run:
 *
 *   produce --topic T --count N [--queue Q]: message i has the user property a=i, tag even/odd,
 *     body "i"; with --queue every message goes to queue Q.
 *   consume --topic T --group G --sql EXPR --sentinel N [--timeout-ms MS]: a push consumer
 *     subscribed with MessageSelector.bySql(EXPR), orderly (so messages come in queue order); one
 *     "msg" line per message, and "summary" once the message whose a = N arrived. A start the
 *     broker refuses (CHECK_CLIENT_CONFIG) is one "refused" line with the client's code and message.
 */
public final class SqlClient {
    public static void main(String[] argv) {
        Map<String, String> o = RefClient.parse(argv);
        try {
            switch (argv[0]) {
                case "produce": produce(o); break;
                case "consume": consume(o); break;
                default: RefClient.fail("unknown command " + argv[0]);
            }
        } catch (Throwable e) {
            StringBuilder where = new StringBuilder();
            for (StackTraceElement f : e.getStackTrace()) {
                if (where.length() > 600) break;
                where.append(" at ").append(f);
            }
            RefClient.fail(e.getClass().getName() + ": " + e.getMessage() + where);
        }
        System.exit(0);
    }

    private static void produce(Map<String, String> o) throws Exception {
        String topic = RefClient.req(o, "topic");
        int count = Integer.parseInt(o.getOrDefault("count", "100"));
        DefaultMQProducer p = new DefaultMQProducer(o.getOrDefault("group", "sql_producer"), RefClient.hook(o));
        p.setNamesrvAddr(RefClient.req(o, "namesrv"));
        p.setInstanceName("sql-" + ProcessHandle.current().pid());
        p.setSendMsgTimeout(10000);
        p.start();
        MessageQueue target = null;
        if (o.containsKey("queue")) {
            int q = Integer.parseInt(o.get("queue"));
            for (MessageQueue mq : p.fetchPublishMessageQueues(topic)) if (mq.getQueueId() == q) target = mq;
            if (target == null) throw new IllegalArgumentException("no queue " + q);
        }
        int sent = 0;
        for (int i = 0; i < count; i++) {
            Message m = new Message(topic, i % 2 == 0 ? "even" : "odd", Integer.toString(i).getBytes(StandardCharsets.UTF_8));
            m.putUserProperty("a", Integer.toString(i));
            SendResult r = target != null ? p.send(m, target) : p.send(m);
            if (r.getSendStatus().name().equals("SEND_OK")) sent++;
        }
        p.shutdown();
        RefClient.print(new RefClient.Json().put("type", "summary").put("sent", sent));
    }

    private static void consume(Map<String, String> o) throws Exception {
        String topic = RefClient.req(o, "topic");
        String sentinel = RefClient.req(o, "sentinel");
        long timeoutMs = Long.parseLong(o.getOrDefault("timeout-ms", "60000"));
        DefaultMQPushConsumer c = new DefaultMQPushConsumer(RefClient.req(o, "group"));
        c.setNamesrvAddr(RefClient.req(o, "namesrv"));
        RefClient.healHeartbeatRace(c);
        c.setInstanceName("sql-" + ProcessHandle.current().pid());
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.subscribe(topic, MessageSelector.bySql(RefClient.req(o, "sql")));
        CountDownLatch done = new CountDownLatch(1);
        int[] received = new int[1];
        c.registerMessageListener((MessageListenerOrderly) (List<MessageExt> msgs, org.apache.rocketmq.client.consumer.listener.ConsumeOrderlyContext ctx) -> {
            for (MessageExt m : msgs) {
                received[0]++;
                RefClient.print(new RefClient.Json().put("type", "msg").put("a", m.getUserProperty("a")).put("tags", m.getTags())
                    .put("queueId", m.getQueueId()).put("queueOffset", m.getQueueOffset()));
                if (sentinel.equals(m.getUserProperty("a"))) done.countDown();
            }
            return ConsumeOrderlyStatus.SUCCESS;
        });
        try {
            c.start();
        } catch (MQClientException e) {
            RefClient.print(new RefClient.Json().put("type", "refused").put("code", e.getResponseCode()).put("error", e.getErrorMessage()));
            return;
        }
        boolean ok = done.await(timeoutMs, TimeUnit.MILLISECONDS);
        RefClient.print(new RefClient.Json().put("type", "summary").put("received", received[0]).put("sentinelSeen", ok));
        try {
            c.shutdown();
        } catch (Throwable e) {
            RefClient.print(new RefClient.Json().put("type", "shutdownError").put("error", e.toString()));
        }
    }
}
